#pragma once

// What the extender codec's files share (extender_codec.cc: the v1.Pod and v1.Node readers and
// these helpers; extender_codec_requests.cc: the requests), and nothing else includes.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/core/status.h"
#include "seedance/server/extender_codec.h"

namespace seedance::server::codec_internal {

using nlohmann::json;

// kInvalidArgument "<path>: <reason>" ("body" for the empty path).
Status FieldError(const std::string& path, std::string_view reason);
// "<path>.<key>" and "<path>[<i>]".
std::string Join(const std::string& path, std::string_view key);
std::string Index(const std::string& path, std::size_t i);

bool EqualsNoCase(std::string_view a, std::string_view b);
// Go's encoding/json: an exact key match wins, else the first case-insensitive one.
const json* FindNoCase(const json& obj, std::string_view key);
// Exact (lowerCamel) lookup inside Kubernetes objects; null counts as absent.
const json* Find(const json& obj, std::string_view key);

// A body's DOM: a JSON object nesting at most kMaxJsonDepth levels and holding at most
// `max_values` values (both checked before the DOM is built).
Result<json> ParseBody(std::string_view body, std::size_t max_values = static_cast<std::size_t>(-1));

Result<std::vector<std::string>> StringArray(const json& v, const std::string& path);
// A v1.NodeList's items; `raw` (may be null) gets each item's JSON.
Result<std::vector<K8sNode>> ParseNodeItems(const json& list, const std::string& path, std::vector<json>* raw);

// Kubernetes' own limits (apimachinery validation): object names are DNS subdomains of at most
// 253 bytes (namespaces: labels of 63), label keys "prefix/name" with a prefix of at most 253 and
// a name of at most 63 bytes, label values at most 63 bytes, annotations at most 256 KiB in all.
// Names are also checked for what would make them unreachable or unprintable: no '/', no
// whitespace or control bytes (a node "a/b" could not be named in DELETE /v1/nodes/{name}).
inline constexpr std::size_t kMaxNameBytes = 253;
inline constexpr std::size_t kMaxNamespaceBytes = 63;
inline constexpr std::size_t kMaxUidBytes = 128;
inline constexpr std::size_t kMaxLabelValueBytes = 63;
inline constexpr std::size_t kMaxLabelNameBytes = 63;
inline constexpr std::size_t kMaxAnnotationBytes = 256u << 10;

bool IsKubernetesName(std::string_view name, std::size_t max, bool slash_ok = false);

// Eight bytes at a time (SWAR), for the strings of thousands of node names per request: the high
// bit of each byte of the result is set where the word `w` (8 bytes read little-endian) holds a
// byte a plain JSON string cannot hold as it is (a quote, a backslash, a control byte, a byte past
// 0x7e) or, with `name_bytes`, one a Kubernetes name may not hold ('/', ' '). Only the lowest set
// byte is exact (a borrow can mark bytes after it): callers take the first one and look again.
inline std::uint64_t SpecialBytes(std::uint64_t w, bool name_bytes) {
  static_assert(std::endian::native == std::endian::little, "the lowest byte is the first one");
  constexpr std::uint64_t kOnes = 0x0101010101010101u, kHigh = 0x8080808080808080u;
  const auto zero = [](std::uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  const auto below = [&](std::uint64_t bound) { return (w - kOnes * bound) & ~w & kHigh; };
  std::uint64_t m = zero(w ^ (kOnes * '"')) | zero(w ^ (kOnes * '\\')) | zero(w ^ (kOnes * 0x7f)) | (w & kHigh) |
                    below(name_bytes ? 0x21 : 0x20);
  if (name_bytes) m |= zero(w ^ (kOnes * '/'));
  return m;
}

// The position of the first byte of s[from..] that SpecialBytes marks (exactly), or s.size().
inline std::size_t FirstSpecialByte(std::string_view s, std::size_t from, bool name_bytes) {
  std::size_t k = from;
  for (; k + 8 <= s.size(); k += 8) {
    std::uint64_t w = 0;
    std::memcpy(&w, s.data() + k, 8);
    if (const std::uint64_t m = SpecialBytes(w, name_bytes); m != 0) return k + static_cast<std::size_t>(std::countr_zero(m) / 8);
  }
  for (; k < s.size(); ++k) {
    const auto u = static_cast<unsigned char>(s[k]);
    if (u == '"' || u == '\\' || u < 0x20 || u >= 0x7f || (name_bytes && (u == '/' || u == ' '))) return k;
  }
  return s.size();
}
Status CheckName(const std::string& path, std::string_view name, std::size_t max, bool slash_ok = false);

}  // namespace seedance::server::codec_internal
