#include "seedance/kube/packed_json.h"

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace seedance::kube {
namespace {

using nlohmann::json;

json RoundTrip(KeyTable& t, const json& v) {
  auto back = t.Unpack(t.Pack(v));
  EXPECT_TRUE(back.has_value()) << v.dump();
  return back.has_value() ? *back : json("unpack failed");
}

TEST(PackedJson, EveryKindOfValueRoundTrips) {
  KeyTable t;
  const std::string long_text(300, 'x');
  const json values[] = {
      nullptr,
      true,
      false,
      0,
      -1,
      std::numeric_limits<std::int64_t>::min(),
      std::numeric_limits<std::int64_t>::max(),
      std::numeric_limits<std::uint64_t>::max(),
      0.1,
      -2.5e300,
      "",
      std::string(127, 'a'),
      std::string(128, 'b'),
      long_text,
      std::string("nul\0inside", 10),
      json::array(),
      json::object(),
      json::binary({1, 2, 3}, 7),
      json::binary({4}),
      json::parse(R"({"metadata":{"name":"p","labels":{"a":"1","b":""}},"spec":{"containers":[{"resources":
                  {"requests":{"cpu":"8","nvidia.com/gpu":"1"}}}],"priority":-7,"weight":1.5},"status":null})"),
      json::parse(R"([[[]],{"":{"":0}},[1,"2",3.0,true,null]])"),
  };
  for (const json& v : values) {
    const json back = RoundTrip(t, v);
    EXPECT_EQ(back, v) << v.dump();
    EXPECT_EQ(back.type(), v.type()) << v.dump();
  }
}

TEST(PackedJson, KeysAreWrittenOnceInTheTable) {
  KeyTable t;
  const json pod = json::parse(R"({"metadata":{"name":"trainer-1","namespace":"team-a","resourceVersion":"1001",
    "uid":"5f0c2a9e-0000-4000-8000-100000000001"},"spec":{"nodeName":"gpu-node-1"},"status":{"phase":"Running"}})");
  const std::string packed = t.Pack(pod);
  EXPECT_EQ(t.size(), 9u);  // metadata name namespace resourceVersion uid spec nodeName status phase
  // Each key one byte, each value its bytes and one: 95 bytes for 186 of JSON text.
  EXPECT_LT(packed.size(), pod.dump().size() * 11 / 20) << packed.size() << " vs " << pod.dump().size();
  EXPECT_EQ(t.Pack(pod), packed);  // the same bytes again, no new keys
  EXPECT_EQ(t.size(), 9u);
}

TEST(PackedJson, TheTableIsBounded) {
  KeyTable t;
  json many = json::object();
  for (std::size_t i = 0; i < KeyTable::kMaxKeys + 50; ++i) many["k" + std::to_string(i)] = i;
  many[std::string(KeyTable::kMaxKeyBytes + 1, 'L')] = "long keys are written inline";
  EXPECT_EQ(RoundTrip(t, many), many);
  EXPECT_EQ(t.size(), KeyTable::kMaxKeys);
  const json more = {{"fresh", 1}, {"k0", 2}};
  EXPECT_EQ(RoundTrip(t, more), more);  // past the bound: inline keys still round-trip
  EXPECT_EQ(t.size(), KeyTable::kMaxKeys);
}

TEST(PackedJson, MalformedBytesAreAnErrorNotACrash) {
  KeyTable t;
  const std::string packed = t.Pack(json::parse(R"({"a":[1,"two",{"b":3.5}]})"));
  for (std::size_t n = 0; n < packed.size(); ++n) {
    EXPECT_FALSE(t.Unpack(packed.substr(0, n)).has_value()) << "truncated at " << n;
  }
  EXPECT_FALSE(t.Unpack(packed + "x").has_value());  // trailing bytes
  EXPECT_FALSE(t.Unpack(std::string(1, '\x0a')).has_value());  // unknown tag
  KeyTable other;  // key indices this table never wrote
  EXPECT_FALSE(other.Unpack(packed).has_value());
}

}  // namespace
}  // namespace seedance::kube
