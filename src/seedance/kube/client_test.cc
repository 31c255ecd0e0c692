#include "seedance/kube/client.h"

#include <gtest/gtest.h>

#include <string>

namespace seedance::kube {
namespace {

// Issue 40: the API server's answers and watch events are depth-checked before nlohmann builds
// (and later copies) a DOM; a too-deep one is refused like malformed JSON.
TEST(ParsePeerJsonTest, RefusesDeepNestingLikeMalformedJson) {
  const auto ok = ParsePeerJson(R"({"type":"ADDED","object":{"metadata":{"name":"n"}}})");
  EXPECT_EQ(ok.dump(), R"({"object":{"metadata":{"name":"n"}},"type":"ADDED"})");
  const std::string deep = R"({"type":"ADDED","object":{"x":)" + std::string(200'000, '[') +
                           std::string(200'000, ']') + "}}";
  EXPECT_TRUE(ParsePeerJson(deep).is_discarded());
  EXPECT_TRUE(ParsePeerJson("{not json").is_discarded());
}

}  // namespace
}  // namespace seedance::kube
