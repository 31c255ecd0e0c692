#include "seedance/server/watch_transform.h"

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "seedance/server/extender_codec.h"

namespace seedance::server {
namespace {

using nlohmann::json;

// Moves `keys` of object `from` into `to` (those present); a non-object `from` is moved whole.
void Keep(json& from, json& to, std::initializer_list<std::string_view> keys) {
  for (std::string_view k : keys) {
    auto it = from.find(k);
    if (it != from.end()) to[std::string(k)] = std::move(*it);
  }
}

// Calls `slim(from[member], to[member])` on an object member; a member of another type is kept.
template <typename F>
void Member(json& from, json& to, std::string_view member, F slim) {
  auto it = from.find(member);
  if (it == from.end()) return;
  if (!it->is_object()) {
    to[std::string(member)] = std::move(*it);
    return;
  }
  json out = json::object();
  slim(*it, out);
  to[std::string(member)] = std::move(out);
}

// from[member] reduced to the entries named `keys` (a string map: labels, annotations,
// nodeSelector), left out when none is; a member that is not an object is kept as it is.
void KeepEntries(json& from, json& to, std::string_view member, std::initializer_list<std::string_view> keys) {
  Member(from, to, member, [&](json& m, json& o) { Keep(m, o, keys); });
  if (auto it = to.find(member); it != to.end() && it->is_object() && it->empty()) to.erase(it);
}

// from[member], an array, with each object element passed through `slim(element, out)` (which
// returns false to drop it); elements that are not objects, or a member that is not an array,
// are kept as they are.
template <typename F>
void EachElement(json& from, json& to, std::string_view member, F slim) {
  auto it = from.find(member);
  if (it == from.end()) return;
  if (!it->is_array()) {
    to[std::string(member)] = std::move(*it);
    return;
  }
  json list = json::array();
  for (json& e : *it) {
    if (!e.is_object()) {
      list.push_back(std::move(e));
      continue;
    }
    json kept = json::object();
    if (slim(e, kept)) list.push_back(std::move(kept));
  }
  to[std::string(member)] = std::move(list);
}

}  // namespace

void SlimPod(json& pod) {
  if (!pod.is_object()) return;
  json out = json::object();
  Member(pod, out, "metadata", [](json& m, json& o) {
    Keep(m, o, {"name", "namespace", "uid", "resourceVersion"});
    KeepEntries(m, o, "labels", {kTenantLabel, kJobLabel});
    KeepEntries(m, o, "annotations", {kGpuMilliAnnotation, kGpuModelsAnnotation});
  });
  Member(pod, out, "spec", [](json& s, json& o) {
    Keep(s, o, {"nodeName", "priority", "tolerations"});
    KeepEntries(s, o, "nodeSelector", {kGpuProductLabel});
    EachElement(s, o, "containers", [](json& c, json& kept) {
      Member(c, kept, "resources", [](json& r, json& ro) { Keep(r, ro, {"requests", "limits"}); });
      return true;
    });
  });
  Member(pod, out, "status", [](json& s, json& o) { Keep(s, o, {"phase"}); });
  pod = std::move(out);
}

void SlimNode(json& node) {
  if (!node.is_object()) return;
  json out = json::object();
  Member(node, out, "metadata", [](json& m, json& o) {
    Keep(m, o, {"name", "resourceVersion"});
    KeepEntries(m, o, "labels", {kGpuProductLabel});
  });
  Member(node, out, "spec", [](json& s, json& o) { Keep(s, o, {"unschedulable", "taints"}); });
  Member(node, out, "status", [](json& s, json& o) {
    Keep(s, o, {"allocatable", "capacity"});
    // The Ready condition (and any whose type is not a string, for ParseNode to name).
    EachElement(s, o, "conditions", [](json& c, json& kept) {
      auto type = c.find("type");
      if (type != c.end() && type->is_string() && *type != "Ready") return false;
      Keep(c, kept, {"type", "status"});
      return true;
    });
  });
  node = std::move(out);
}

}  // namespace seedance::server
