#pragma once

// What the extender codec's files share (extender_codec.cc: the v1.Pod and v1.Node readers and
// these helpers; extender_codec_requests.cc: the requests), and nothing else includes.

#include <cstddef>
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
Status CheckName(const std::string& path, std::string_view name, std::size_t max, bool slash_ok = false);

}  // namespace seedance::server::codec_internal
