// The extender's requests (ExtenderArgs, ExtenderPreemptionArgs, ExtenderBindingArgs) and the
// v1.Pod / v1.Node lists of the state endpoints, read from their HTTP bodies.

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seedance/server/extender_codec.h"
#include "seedance/server/extender_codec_internal.h"

namespace seedance::server {

using namespace codec_internal;  // NOLINT(google-build-using-namespace): the codec's own helpers

namespace {

// The NodeNames member of an ExtenderArgs body, read without a DOM: kube-scheduler sends every
// feasible node's name (all of them with percentageOfNodesToScore: 100), and nlohmann's DOM
// lexes them a character at a time and allocates a node per name. Returns the names and the
// byte range of the member's value, or nullopt when the body is anything but plain (a string with
// an escape or a byte outside printable ASCII, a repeated key, NodeNames not an array of strings,
// anything unexpected): the caller then parses the whole body with nlohmann, so errors and edge
// cases stay exactly the DOM's. The rest of the body is validated by nlohmann either way.
// Whatever the body, the NodeNames elements are counted as they are read and the scan stops past
// `max_names` (too_many set, no name kept): a 65 MB body of 6M names must not become 6M strings.
struct PlainNodeNames {
  std::vector<std::string> names;
  std::size_t begin = 0, end = 0;
  bool too_many = false;
  // Every name is a Kubernetes name (IsKubernetesName with kMaxNameBytes), judged while scanning;
  // when false the caller checks each one for the error.
  bool names_valid = true;
};

// Where the contents of a plain JSON string starting at b[i] (just past its opening quote) end:
// the position of the closing quote, or npos when there is none or the contents hold an escape, a
// control byte or a byte past 0x7e. `slash_or_space`: whether they hold '/' or ' ' (which a plain
// string may hold and a Kubernetes name may not). Eight bytes at a time (FirstSpecialByte): the
// byte-at-a-time loop this replaces was most of the parse of a request of 5,000 names
// (extender_benchmark BM_ServedPair, perf of scripts/bench-server.sh).
std::size_t PlainStringEnd(std::string_view b, std::size_t i, bool* slash_or_space) {
  *slash_or_space = false;
  for (std::size_t k = i;; ++k) {
    k = FirstSpecialByte(b, k, /*name_bytes=*/true);
    if (k >= b.size()) return std::string_view::npos;
    if (b[k] == '"') return k;
    if (b[k] != '/' && b[k] != ' ') return std::string_view::npos;
    *slash_or_space = true;
  }
}

std::optional<PlainNodeNames> ScanPlainNodeNames(std::string_view b, std::size_t max_names) {
  const std::size_t n = b.size();
  std::size_t i = 0;
  // Inlined: it runs twice per name, and a call cost more than the usual answer (no whitespace).
  auto ws = [&]() __attribute__((always_inline)) {
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) ++i;
  };
  // A string of printable ASCII without escapes.
  bool slash_or_space = false;
  auto plain = [&](std::string_view* out) {
    if (i >= n || b[i] != '"') return false;
    const std::size_t start = i + 1;
    const std::size_t end = PlainStringEnd(b, start, &slash_or_space);
    if (end == std::string_view::npos) return false;
    *out = b.substr(start, end - start);
    i = end + 1;
    return true;
  };
  // Skips one value of any kind: strings (escape-aware) and nesting; scalars up to a delimiter.
  auto skip = [&] {
    const std::size_t start = i;
    int depth = 0;
    while (i < n) {
      const char c = b[i];
      if (c == '"') {
        for (++i; i < n && b[i] != '"'; i += b[i] == '\\' ? std::size_t{2} : std::size_t{1}) {
        }
        if (i >= n) return false;
        ++i;
        if (depth == 0) return true;
      } else if (c == '{' || c == '[') {
        ++depth;
        ++i;
      } else if (c == '}' || c == ']') {
        if (depth == 0) return i > start;
        ++i;
        if (--depth == 0) return true;
      } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
        return i > start;
      } else {
        ++i;
      }
    }
    return false;
  };
  std::optional<PlainNodeNames> found;
  ws();
  if (i >= n || b[i] != '{') return std::nullopt;
  ++i;
  ws();
  while (true) {
    std::string_view key;
    if (!plain(&key)) return std::nullopt;
    ws();
    if (i >= n || b[i] != ':') return std::nullopt;
    ++i;
    ws();
    if (EqualsNoCase(key, "NodeNames")) {
      if (found.has_value() || i >= n || b[i] != '[') return std::nullopt;
      PlainNodeNames f;
      f.begin = i++;
      // A guess that holds for names of 5 bytes or more ("a.b-c",): one allocation, no moves.
      f.names.reserve(std::min(n / 8, max_names));
      ws();
      if (i < n && b[i] == ']') {
        ++i;
      } else {
        bool all_plain = true;  // else the names are counted, not kept, and the DOM reads them
        std::size_t count = 0;
        while (true) {
          if (++count > max_names) {
            PlainNodeNames refused;
            refused.too_many = true;
            return refused;
          }
          std::string_view name;
          const std::size_t at = i;
          if (all_plain && plain(&name)) {
            f.names.emplace_back(name);
            if (slash_or_space || name.size() > kMaxNameBytes) f.names_valid = false;
          } else {
            i = at;
            if (all_plain) std::vector<std::string>().swap(f.names);
            all_plain = false;
            if (!skip()) return std::nullopt;
          }
          ws();
          if (i < n && b[i] == ',') {
            ++i;
            ws();
            continue;
          }
          if (i < n && b[i] == ']') {
            ++i;
            break;
          }
          return std::nullopt;
        }
        if (!all_plain) return std::nullopt;
      }
      f.end = i;
      found = std::move(f);
    } else if (!skip()) {
      return std::nullopt;
    }
    ws();
    if (i < n && b[i] == ',') {
      ++i;
      ws();
      continue;
    }
    if (i < n && b[i] == '}') break;
    return std::nullopt;
  }
  ++i;
  ws();
  if (i != n) return std::nullopt;
  return found;
}

// ParseExtenderArgs on the DOM; `plain_names`: NodeNames already read (its member is null in
// `body`), `names_valid`: every one of them already known to be a Kubernetes name.
Status TooManyCandidates(const char* field, const ExtenderLimits& limits) {
  std::string m = std::string(field) + ": more than " + std::to_string(limits.max_candidates) + " candidates";
  if (!limits.cap_reason.empty()) m += " (" + limits.cap_reason + ")";
  return Status(StatusCode::kResourceExhausted, std::move(m));
}

Status FullNodesOff(const char* field, const ExtenderLimits& limits) {
  return FieldError(field, limits.full_nodes_off.empty() ? std::string("full-node mode is off") : limits.full_nodes_off);
}

Result<ExtenderArgs> ParseExtenderArgsDom(std::string_view body, std::optional<std::vector<std::string>> plain_names,
                                          bool names_valid, const ExtenderLimits& limits) {
  SEEDANCE_ASSIGN_OR_RETURN(json doc, ParseBody(body, limits.max_values));
  ExtenderArgs a;
  const json* pod = FindNoCase(doc, "Pod");
  if (pod == nullptr || pod->is_null()) return FieldError("Pod", "required");
  SEEDANCE_ASSIGN_OR_RETURN(a.pod, ParsePod(*pod, "Pod"));
  if (const json* nodes = FindNoCase(doc, "Nodes"); nodes != nullptr && !nodes->is_null()) {
    if (!limits.full_nodes) return FullNodesOff("Nodes", limits);
    if (!nodes->is_object()) return FieldError("Nodes", "expected a v1.NodeList object");
    if (const json* items = Find(*nodes, "items"); items != nullptr && items->is_array() &&
                                                   items->size() > limits.max_candidates) {
      return TooManyCandidates("Nodes.items", limits);
    }
    SEEDANCE_ASSIGN_OR_RETURN(auto items, ParseNodeItems(*nodes, "Nodes", &a.raw_nodes));
    a.nodes = std::move(items);
  }
  std::optional<std::vector<std::string>> names = std::move(plain_names);
  if (const json* dom = FindNoCase(doc, "NodeNames"); !names.has_value() && dom != nullptr && !dom->is_null()) {
    if (dom->is_array() && dom->size() > limits.max_candidates) return TooManyCandidates("NodeNames", limits);
    SEEDANCE_ASSIGN_OR_RETURN(names, StringArray(*dom, "NodeNames"));
    names_valid = false;
  }
  if (names.has_value()) {
    std::vector<std::string>& list = *names;
    for (std::size_t i = 0; !names_valid && i < list.size(); ++i) {
      // The path is built only for a bad name: a request carries up to thousands of names.
      if (!IsKubernetesName(list[i], kMaxNameBytes)) {
        SEEDANCE_RETURN_IF_ERROR(CheckName(Index("NodeNames", i), list[i], kMaxNameBytes));
      }
    }
    a.node_names = std::move(list);
  }
  if (!a.nodes.has_value() && !a.node_names.has_value()) {
    return FieldError("NodeNames", "either Nodes or NodeNames is required");
  }
  return a;
}

}  // namespace

Result<ExtenderArgs> ParseExtenderArgs(std::string_view body, const ExtenderLimits& limits) {
  if (auto plain = ScanPlainNodeNames(body, limits.max_candidates); plain.has_value()) {
    if (plain->too_many) return TooManyCandidates("NodeNames", limits);
    std::string rest;
    rest.reserve(body.size() - (plain->end - plain->begin) + 4);
    rest.append(body.substr(0, plain->begin));
    rest += "null";
    rest.append(body.substr(plain->end));
    return ParseExtenderArgsDom(rest, std::move(plain->names), plain->names_valid, limits);
  }
  return ParseExtenderArgsDom(body, std::nullopt, false, limits);
}

Result<ExtenderPreemptionArgs> ParseExtenderPreemptionArgs(std::string_view body, const ExtenderLimits& limits) {
  SEEDANCE_ASSIGN_OR_RETURN(json doc, ParseBody(body, limits.max_values));
  ExtenderPreemptionArgs a;
  const json* pod = FindNoCase(doc, "Pod");
  if (pod == nullptr || pod->is_null()) return FieldError("Pod", "required");
  SEEDANCE_ASSIGN_OR_RETURN(a.pod, ParsePod(*pod, "Pod"));
  // Meta victims (node-cache mode) first; else full victims' pods' UIDs.
  for (const char* key : {"NodeNameToMetaVictims", "NodeNameToVictims"}) {
    const json* m = FindNoCase(doc, key);
    if (m == nullptr || m->is_null()) continue;
    if (!m->is_object()) return FieldError(key, "expected an object keyed by node name");
    if (m->size() > limits.max_candidates) return TooManyCandidates(key, limits);
    if (!limits.full_nodes && std::string_view(key) == "NodeNameToVictims") return FullNodesOff(key, limits);
    for (auto it = m->begin(); it != m->end(); ++it) {
      SEEDANCE_RETURN_IF_ERROR(CheckName(key, it.key(), kMaxNameBytes));
      const std::string np = Join(key, it.key());
      if (!it->is_object()) return FieldError(np, "expected a victims object");
      std::vector<std::string> uids;
      if (const json* pods = FindNoCase(*it, "Pods"); pods != nullptr && !pods->is_null()) {
        const std::string pp = Join(np, "Pods");
        if (!pods->is_array()) return FieldError(pp, "expected an array");
        for (std::size_t i = 0; i < pods->size(); ++i) {
          const json& v = (*pods)[i];
          const std::string vp = Index(pp, i);
          if (!v.is_object()) return FieldError(vp, "expected an object");
          std::string uid;
          if (const json* u = FindNoCase(v, "UID");
              u != nullptr && std::string_view(key) == "NodeNameToMetaVictims") {
            if (!u->is_string()) return FieldError(Join(vp, "UID"), "expected a string");
            uid = u->get<std::string>();
            SEEDANCE_RETURN_IF_ERROR(CheckName(Join(vp, "UID"), uid, kMaxUidBytes, true));
          } else {
            SEEDANCE_ASSIGN_OR_RETURN(K8sPod vpod, ParsePod(v, vp));
            uid = vpod.uid;
          }
          uids.push_back(std::move(uid));
        }
      }
      std::int64_t pdb = 0;
      if (const json* n = FindNoCase(*it, "NumPDBViolations"); n != nullptr && !n->is_null()) {
        if (!n->is_number_integer()) return FieldError(Join(np, "NumPDBViolations"), "expected an integer");
        pdb = n->get<std::int64_t>();
      }
      a.victims.emplace(it.key(), std::move(uids));
      a.pdb_violations.emplace(it.key(), pdb);
    }
    break;
  }
  return a;
}

Result<ExtenderBindingArgs> ParseExtenderBindingArgs(std::string_view body) {
  SEEDANCE_ASSIGN_OR_RETURN(json doc, ParseBody(body));
  ExtenderBindingArgs a;
  const std::pair<const char*, std::string*> fields[] = {{"PodName", &a.pod_name},
                                                         {"PodNamespace", &a.pod_namespace},
                                                         {"PodUID", &a.pod_uid},
                                                         {"Node", &a.node}};
  for (const auto& [key, out] : fields) {
    const json* v = FindNoCase(doc, key);
    if (v == nullptr || v->is_null()) continue;
    if (!v->is_string()) return FieldError(key, "expected a string");
    *out = v->get<std::string>();
  }
  SEEDANCE_RETURN_IF_ERROR(CheckName("PodName", a.pod_name, kMaxNameBytes));
  SEEDANCE_RETURN_IF_ERROR(CheckName("PodNamespace", a.pod_namespace, kMaxNamespaceBytes));
  SEEDANCE_RETURN_IF_ERROR(CheckName("PodUID", a.pod_uid, kMaxUidBytes, true));
  SEEDANCE_RETURN_IF_ERROR(CheckName("Node", a.node, kMaxNameBytes));
  if (a.pod_name.empty()) return FieldError("PodName", "required");
  if (a.node.empty()) return FieldError("Node", "required");
  if (a.pod_namespace.empty()) a.pod_namespace = "default";
  return a;
}

Result<std::vector<K8sPod>> ParsePodOrList(std::string_view body) {
  SEEDANCE_ASSIGN_OR_RETURN(json doc, ParseBody(body));
  std::vector<K8sPod> out;
  if (const json* items = Find(doc, "items"); items != nullptr) {
    if (!items->is_array()) return FieldError("items", "expected an array of v1.Pod");
    for (std::size_t i = 0; i < items->size(); ++i) {
      SEEDANCE_ASSIGN_OR_RETURN(K8sPod p, ParsePod((*items)[i], Index("items", i)));
      out.push_back(std::move(p));
    }
    return out;
  }
  SEEDANCE_ASSIGN_OR_RETURN(K8sPod p, ParsePod(doc, ""));
  out.push_back(std::move(p));
  return out;
}

Result<std::vector<K8sNode>> ParseNodeOrList(std::string_view body) {
  SEEDANCE_ASSIGN_OR_RETURN(json doc, ParseBody(body));
  if (Find(doc, "items") != nullptr) return ParseNodeItems(doc, "", nullptr);
  SEEDANCE_ASSIGN_OR_RETURN(K8sNode n, ParseNode(doc, ""));
  std::vector<K8sNode> out;
  out.push_back(std::move(n));
  return out;
}

}  // namespace seedance::server
