// The extender codec's fast paths against slow references, on random inputs (fixed seeds):
//   - the answers' writers (DumpFilterResult, DumpHostPriorityList) against the same answer built
//     as an nlohmann DOM and dumped, byte for byte (what kube-scheduler decodes);
//   - the NodeNames scanner of ParseExtenderArgs against nlohmann's DOM path, forced by an escaped
//     key in the same body: the same names, or the same error (code and message).

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/server/extender_codec.h"

namespace seedance::server {
namespace {

using nlohmann::json;

// A string of `kind`: 0 a plain name, 1 with '/' or ' ', 2 with a quote, backslash or control
// byte, 3 with UTF-8 beyond ASCII, 4 with invalid UTF-8 (only where `invalid_ok`), 5 over 253 bytes.
std::string RandomString(std::mt19937_64& rng, bool invalid_ok) {
  static const std::string kPlain = "abcdefghijklmnopqrstuvwxyz0123456789.-";
  std::uniform_int_distribution<std::size_t> len(0, 40);
  std::string s;
  const std::size_t n = len(rng);
  for (std::size_t i = 0; i < n; ++i) s += kPlain[rng() % kPlain.size()];
  const int kind = static_cast<int>(rng() % (invalid_ok ? 6 : 5));
  const std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
  switch (kind) {
    case 1: s.insert(at, 1, rng() % 2 ? '/' : ' '); break;
    case 2: {
      static const std::string kOdd = std::string("\"\\\x01\x1f\x7f\t\n", 7);
      s.insert(at, 1, kOdd[rng() % kOdd.size()]);
      break;
    }
    case 3: s.insert(at, rng() % 2 ? "\xc3\xa9" : "\xe6\x97\xa5\xf0\x9f\x9a\x80"); break;
    case 4:
      if (invalid_ok) s.insert(at, rng() % 2 ? "\xff" : "\xc3");
      else s += "x";
      break;
    case 5: s.append(254 + rng() % 40, 'n'); break;
    default: break;
  }
  return s;
}

// A JSON string literal for the bytes of `s` (invalid UTF-8 left as it is), some printable
// characters escaped as \u00XX.
std::string Literal(const std::string& s, std::mt19937_64& rng) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || (u < 0x7f && rng() % 16 == 0)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string OracleFilter(const FilterResult& r) {
  json j = json::object();
  j["Error"] = r.error;
  j["FailedAndUnresolvableNodes"] = r.failed_unresolvable;
  j["FailedNodes"] = r.failed;
  if (r.nodes.has_value()) {
    j["NodeNames"] = nullptr;
    j["Nodes"] = json{{"items", json(*r.nodes)}, {"metadata", json::object()}};
  } else {
    j["NodeNames"] = r.node_names;
    j["Nodes"] = nullptr;
  }
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string OraclePriorities(const std::vector<HostPriority>& list) {
  json j = json::array();
  for (const auto& h : list) j.push_back(json{{"Host", h.host}, {"Score", h.score}});
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

TEST(ExtenderCodecOracle, WritersMatchNlohmannOnRandomAnswers) {
  std::mt19937_64 rng(20261206);
  for (int round = 0; round < 400; ++round) {
    FilterResult r;
    const std::size_t names = rng() % 60;
    for (std::size_t i = 0; i < names; ++i) r.node_names.push_back(RandomString(rng, true));
    for (std::size_t i = rng() % 4; i > 0; --i) r.failed[RandomString(rng, true)] = RandomString(rng, true);
    for (std::size_t i = rng() % 4; i > 0; --i) r.failed_unresolvable[RandomString(rng, true)] = RandomString(rng, true);
    if (rng() % 3 == 0) r.error = RandomString(rng, true);
    if (rng() % 5 == 0) {
      r.nodes.emplace();
      for (std::size_t i = rng() % 3; i > 0; --i) {
        r.nodes->push_back(json{{"metadata", {{"name", RandomString(rng, true)}}}, {"status", {{"n", rng() % 9}}}});
      }
    }
    ASSERT_EQ(DumpFilterResult(r), OracleFilter(r)) << "round " << round;

    std::vector<HostPriority> list;
    for (std::size_t i = rng() % 60; i > 0; --i) {
      const std::int64_t score = rng() % 4 == 0 ? static_cast<std::int64_t>(rng()) : static_cast<std::int64_t>(rng() % 11);
      list.push_back(HostPriority{RandomString(rng, true), score});
    }
    ASSERT_EQ(DumpHostPriorityList(list), OraclePriorities(list)) << "round " << round;
  }
}

// One ExtenderArgs body: members in a random order and key case, random whitespace, NodeNames
// with random elements (sometimes a non-string, sometimes repeated, null or absent).
std::string RandomArgsBody(std::mt19937_64& rng, bool invalid_ok, bool dom) {
  auto ws = [&] {
    static const char* kWs[] = {"", "", "", " ", "\n  ", "\t", "\r\n"};
    return std::string(kWs[rng() % 7]);
  };
  static const char* kKeys[] = {"NodeNames", "nodenames", "NODENAMES", "nodeNames"};
  std::vector<std::string> members;
  members.push_back(ws() + "\"Pod\"" + ws() + ":" + ws() +
                    R"({"metadata":{"name":"p","namespace":"ml","uid":"u-1"},"spec":{"containers":[{"resources":)"
                    R"({"requests":{"nvidia.com/gpu":"1"}}}]}})");
  if (rng() % 4 == 0) members.push_back(ws() + "\"Nodes\"" + ws() + ":" + ws() + "null");
  const int lists = rng() % 10 == 0 ? 2 : (rng() % 12 == 0 ? 0 : 1);
  for (int l = 0; l < lists; ++l) {
    std::string v;
    if (rng() % 15 == 0) {
      v = "null";
    } else {
      v = "[" + ws();
      const std::size_t n = rng() % 12;
      for (std::size_t i = 0; i < n; ++i) {
        if (i > 0) v += ws() + "," + ws();
        const auto pick = rng() % 40;
        v += pick == 0 ? "17" : pick == 1 ? "null" : pick == 2 ? R"({"a":"b"})" : Literal(RandomString(rng, invalid_ok), rng);
      }
      v += ws() + "]";
    }
    members.push_back(ws() + "\"" + kKeys[rng() % 4] + "\"" + ws() + ":" + ws() + v + ws());
  }
  std::shuffle(members.begin(), members.end(), rng);
  if (dom) members.push_back(R"("\u0078":0)");  // an escaped key: the scanner leaves the body to the DOM
  std::string body = ws() + "{";
  for (std::size_t i = 0; i < members.size(); ++i) body += (i > 0 ? "," : "") + members[i];
  return body + "}" + ws();
}

void ExpectSameArgs(const std::string& fast_body, const std::string& dom_body, const ExtenderLimits& limits) {
  const auto fast = ParseExtenderArgs(fast_body, limits);
  const auto dom = ParseExtenderArgs(dom_body, limits);
  ASSERT_EQ(fast.has_value(), dom.has_value())
      << fast_body << "\n" << (fast.has_value() ? dom.error().message() : fast.error().message());
  if (!fast.has_value()) {
    EXPECT_EQ(fast.error().code(), dom.error().code()) << fast_body;
    EXPECT_EQ(fast.error().message(), dom.error().message()) << fast_body;
    return;
  }
  EXPECT_EQ(fast->node_names, dom->node_names) << fast_body;
  EXPECT_EQ(fast->pod.key(), dom->pod.key()) << fast_body;
  EXPECT_EQ(fast->pod.uid, dom->pod.uid) << fast_body;
  EXPECT_EQ(fast->nodes.has_value(), dom->nodes.has_value()) << fast_body;
}

TEST(ExtenderCodecOracle, NodeNamesScannerMatchesTheDomOnRandomBodies) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 3000; ++round) {
    // A cap on candidates only with valid UTF-8: the scanner counts names before the DOM sees the
    // body, so a malformed body over the cap is refused as too large (413), not as malformed.
    const bool capped = rng() % 3 == 0;
    ExtenderLimits limits;
    if (capped) limits.max_candidates = rng() % 8;
    std::mt19937_64 twin = rng;  // the same body twice, once with the escaped key
    const std::string fast_body = RandomArgsBody(rng, !capped, false);
    const std::string dom_body = RandomArgsBody(twin, !capped, true);
    ASSERT_NO_FATAL_FAILURE(ExpectSameArgs(fast_body, dom_body, limits)) << "round " << round;
  }
}

// Every special byte at every position of names of 0..24 bytes (the scanner reads 8 at a time).
TEST(ExtenderCodecOracle, NodeNamesScannerFindsSpecialBytesAtEveryOffset) {
  std::mt19937_64 rng(1);
  const std::string odd[] = {"/", " ", "\\\"", "\\\\", "\\u0041", "\xc3\xa9", "\x7f", "\\n"};
  for (std::size_t len = 0; len <= 24; ++len) {
    for (std::size_t at = 0; at <= len; ++at) {
      for (const std::string& o : odd) {
        std::string name(len, 'a');
        name.insert(at, o);
        const std::string list = R"(["node-1",")" + name + R"(","node-2"])";
        const std::string pod = R"("Pod":{"metadata":{"name":"p"}})";
        ASSERT_NO_FATAL_FAILURE(ExpectSameArgs("{" + pod + ",\"NodeNames\":" + list + "}",
                                               "{" + pod + ",\"NodeNames\":" + list + R"(,"\u0078":0})", {}))
            << "len " << len << " at " << at << " " << o;
      }
    }
  }
  const auto ok = ParseExtenderArgs(R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["abcdefgh/","x"]})");
  ASSERT_FALSE(ok.has_value());
  EXPECT_EQ(ok.error().message(),
            "NodeNames[0]: must not contain '/', whitespace or control characters (a Kubernetes name)");
}

}  // namespace
}  // namespace seedance::server
