#include "seedance/core/json_depth.h"

#include <gtest/gtest.h>

#include <string>

namespace seedance {
namespace {

std::string Nest(int levels, char open = '[', char close = ']') {
  return std::string(static_cast<std::size_t>(levels), open) + std::string(static_cast<std::size_t>(levels), close);
}

TEST(JsonDepthTest, AcceptsUpToTheLimit) {
  EXPECT_TRUE(CheckJsonDepth(Nest(64)).ok());
  EXPECT_TRUE(CheckJsonDepth(R"({"a":{"b":[1,2,{"c":null}]}})").ok());
  EXPECT_TRUE(CheckJsonDepth("").ok());
  EXPECT_TRUE(CheckJsonDepth("42").ok());
}

TEST(JsonDepthTest, RefusesOneLevelTooManyNamingThePath) {
  const Status s = CheckJsonDepth(Nest(65));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("JSON nests deeper than 64 levels"), std::string::npos) << s.message();
  // The path: the 65th bracket is the first element of 64 nested arrays.
  std::string want;
  for (int i = 0; i < 64; ++i) want += "[0]";
  EXPECT_EQ(s.message(), want + ": JSON nests deeper than 64 levels");
}

TEST(JsonDepthTest, PathNamesObjectKeysAndIndices) {
  const Status s = CheckJsonDepth(R"({"Nodes":{"items":[{},{"metadata":{"x":[[[1]]]}}]}})", 5);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "Nodes.items[1].metadata.x: JSON nests deeper than 5 levels");
  const Status top = CheckJsonDepth("[]", 0);
  EXPECT_EQ(top.message(), "body: JSON nests deeper than 0 levels");
}

TEST(JsonDepthTest, BracketsInStringsDoNotCount) {
  const std::string deep_text = "{\"k\":\"" + Nest(1000) + "\\\"[[[[\\\\\",\"m\":[]}";
  EXPECT_TRUE(CheckJsonDepth(deep_text, 2).ok());
  // An escaped backslash before the quote ends the string: the brackets after it count.
  EXPECT_FALSE(CheckJsonDepth("[\"\\\\\",[[]]]", 2).ok());
  // An escaped quote does not end it.
  EXPECT_TRUE(CheckJsonDepth("[\"\\\"[[[[\"]", 1).ok());
  // Keys with brackets.
  const Status s = CheckJsonDepth(R"({"a[{":{"b}":[[]]}})", 3);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "a[{.b}[0]: JSON nests deeper than 3 levels");
}

TEST(JsonDepthTest, MalformedTextIsScannedWithoutHarm) {
  EXPECT_TRUE(CheckJsonDepth("]]]}}}\"unterminated").ok());
  EXPECT_TRUE(CheckJsonDepth("{\"").ok());
  EXPECT_TRUE(CheckJsonDepth("{\"a").ok());
  EXPECT_FALSE(CheckJsonDepth(std::string(200'000, '[')).ok());
}

TEST(JsonDepthTest, ValuesAreBounded) {
  EXPECT_TRUE(CheckJsonDepth("[1,2,3]", 64, 3).ok());  // one array, two separators
  const Status s = CheckJsonDepth("[1,2,3,4]", 64, 3);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "body: JSON has more than 3 values");
  EXPECT_FALSE(CheckJsonDepth("[{},{}]", 64, 3).ok());
  EXPECT_TRUE(CheckJsonDepth("[\"{},{},{}\"]", 64, 1).ok());  // inside a string: not values
}

TEST(JsonDepthTest, LinesAreScannedAsOneText) {
  EXPECT_TRUE(CheckJsonDepth("{\"a\":[1]}\n{\"b\":[2]}\n", 2).ok());
  EXPECT_FALSE(CheckJsonDepth("{\"a\":[1]}\n{\"b\":[[2]]}\n", 2).ok());
}

}  // namespace
}  // namespace seedance
