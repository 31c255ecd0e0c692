#include "seedance/server/extender_codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <cctype>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

#include "seedance/cluster/gpu_model.h"
#include "seedance/core/json_depth.h"
#include "seedance/gpu/catalog.h"
#include "seedance/server/k8s_quantity.h"

namespace seedance::server {
namespace {

using nlohmann::json;

Status FieldError(const std::string& path, std::string_view reason) {
  std::string m = path.empty() ? std::string("body") : path;
  m += ": ";
  m += reason;
  return InvalidArgumentError(std::move(m));
}

std::string Join(const std::string& path, std::string_view key) {
  std::string out = path;
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

std::string Index(const std::string& path, std::size_t i) {
  std::string out = path;
  out += '[';
  out += std::to_string(i);
  out += ']';
  return out;
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// Go's encoding/json: an exact key match wins, else the first case-insensitive one.
const json* FindNoCase(const json& obj, std::string_view key) {
  if (auto it = obj.find(std::string(key)); it != obj.end()) return &*it;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (EqualsNoCase(it.key(), key)) return &*it;
  }
  return nullptr;
}

// Exact (lowerCamel) lookup inside Kubernetes objects; null counts as absent.
const json* Find(const json& obj, std::string_view key) {
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

Result<json> ParseBody(std::string_view body, std::size_t max_values = static_cast<std::size_t>(-1)) {
  // Before any DOM: nlohmann copies, dumps and compares recursively (a Node of 200,000 levels,
  // echoed back in full-node mode, overflowed the stack).
  SEEDANCE_RETURN_IF_ERROR(CheckJsonDepth(body, kMaxJsonDepth, max_values));
  json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return FieldError("", "malformed JSON");
  if (!doc.is_object()) return FieldError("", "expected a JSON object");
  return doc;
}

Result<std::string> GetString(const json& obj, std::string_view key, const std::string& path) {
  const json* v = Find(obj, key);
  if (v == nullptr) return std::string();
  if (!v->is_string()) return FieldError(Join(path, key), "expected a string");
  return v->get<std::string>();
}

Result<std::map<std::string, std::string>> GetStringMap(const json& obj, std::string_view key,
                                                        const std::string& path) {
  std::map<std::string, std::string> out;
  const json* v = Find(obj, key);
  if (v == nullptr) return out;
  const std::string p = Join(path, key);
  if (!v->is_object()) return FieldError(p, "expected an object of strings");
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it->is_string()) return FieldError(Join(p, it.key()), "expected a string");
    out.emplace(it.key(), it->get<std::string>());
  }
  return out;
}

// A resource list (requests/limits/allocatable): name -> quantity string (or a JSON number,
// which Go's resource.Quantity also accepts).
Result<std::map<std::string, K8sQuantity>> GetResources(const json& obj, std::string_view key,
                                                        const std::string& path) {
  std::map<std::string, K8sQuantity> out;
  const json* v = Find(obj, key);
  if (v == nullptr) return out;
  const std::string p = Join(path, key);
  if (!v->is_object()) return FieldError(p, "expected an object of quantities");
  for (auto it = v->begin(); it != v->end(); ++it) {
    const std::string fp = Join(p, it.key());
    std::string text;
    if (it->is_string()) {
      text = it->get<std::string>();
    } else if (it->is_number_integer()) {
      text = it->dump();
    } else {
      return FieldError(fp, "expected a quantity string");
    }
    auto q = ParseK8sQuantity(text);
    if (!q.has_value()) return FieldError(fp, q.error().message());
    if (q->mantissa < 0) return FieldError(fp, "negative quantity");
    out.emplace(it.key(), *q);
  }
  return out;
}

Result<std::int64_t> Scaled(const std::map<std::string, K8sQuantity>& r, const std::string& name,
                            const std::string& path, int scale10) {
  auto it = r.find(name);
  if (it == r.end()) return std::int64_t{0};
  auto v = it->second.CeilScaled(scale10);
  if (!v.has_value()) return FieldError(Join(path, name), v.error().message());
  return *v;
}

Result<std::int64_t> MemMiB(const std::map<std::string, K8sQuantity>& r, const std::string& path) {
  auto it = r.find("memory");
  if (it == r.end()) return std::int64_t{0};
  auto v = it->second.CeilMebibytes();
  if (!v.has_value()) return FieldError(Join(path, "memory"), v.error().message());
  return *v;
}

// Whole GPUs: an integer.
Result<std::int64_t> Gpus(const std::map<std::string, K8sQuantity>& r, const std::string& path) {
  auto it = r.find(std::string(kGpuResource));
  if (it == r.end()) return std::int64_t{0};
  auto milli = it->second.CeilScaled(3);
  if (!milli.has_value() || *milli % 1000 != 0) {
    return FieldError(Join(path, kGpuResource), "nvidia.com/gpu must be a whole number");
  }
  return *milli / 1000;
}

Result<const json*> ObjectAt(const json& obj, std::string_view key, const std::string& path) {
  const json* v = Find(obj, key);
  if (v == nullptr) return static_cast<const json*>(nullptr);
  if (!v->is_object()) return FieldError(Join(path, key), "expected an object");
  return v;
}

// An array of objects of string fields (taints, tolerations), at most kMaxTaints.
Result<std::vector<std::map<std::string, std::string>>> StringRecords(const json& obj, std::string_view key,
                                                                     const std::string& path,
                                                                     std::initializer_list<std::string_view> fields) {
  std::vector<std::map<std::string, std::string>> out;
  const json* v = Find(obj, key);
  if (v == nullptr) return out;
  const std::string p = Join(path, key);
  if (!v->is_array()) return FieldError(p, "expected an array");
  if (v->size() > kMaxTaints) return FieldError(p, "more than " + std::to_string(kMaxTaints) + " entries");
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& e = (*v)[i];
    const std::string ip = Index(p, i);
    if (!e.is_object()) return FieldError(ip, "expected an object");
    std::map<std::string, std::string> r;
    for (std::string_view f : fields) {
      SEEDANCE_ASSIGN_OR_RETURN(std::string s, GetString(e, f, ip));
      if (s.size() > 317) return FieldError(Join(ip, f), "over 317 bytes (a qualified key's limit)");
      r.emplace(std::string(f), std::move(s));
    }
    out.push_back(std::move(r));
  }
  return out;
}

Result<std::vector<std::string>> StringArray(const json& v, const std::string& path) {
  std::vector<std::string> out;
  if (!v.is_array()) return FieldError(path, "expected an array of strings");
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) return FieldError(Index(path, i), "expected a string");
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

Result<std::vector<K8sNode>> ParseNodeItems(const json& list, const std::string& path,
                                            std::vector<json>* raw) {
  std::vector<K8sNode> out;
  const json* items = Find(list, "items");
  if (items == nullptr) return out;
  const std::string p = Join(path, "items");
  if (!items->is_array()) return FieldError(p, "expected an array of v1.Node");
  out.reserve(items->size());
  for (std::size_t i = 0; i < items->size(); ++i) {
    SEEDANCE_ASSIGN_OR_RETURN(K8sNode n, ParseNode((*items)[i], Index(p, i)));
    out.push_back(std::move(n));
    if (raw != nullptr) raw->push_back((*items)[i]);
  }
  return out;
}

// Kubernetes' own limits (apimachinery validation): object names are DNS subdomains of at most
// 253 bytes (namespaces: labels of 63), label keys "prefix/name" with a prefix of at most 253 and
// a name of at most 63 bytes, label values at most 63 bytes, annotations at most 256 KiB in all.
// Names are also checked for what would make them unreachable or unprintable: no '/', no
// whitespace or control bytes (a node "a/b" could not be named in DELETE /v1/nodes/{name}).
constexpr std::size_t kMaxNameBytes = 253;
constexpr std::size_t kMaxNamespaceBytes = 63;
constexpr std::size_t kMaxUidBytes = 128;
constexpr std::size_t kMaxLabelValueBytes = 63;
constexpr std::size_t kMaxLabelNameBytes = 63;
constexpr std::size_t kMaxAnnotationBytes = 256u << 10;

bool IsKubernetesName(std::string_view name, std::size_t max, bool slash_ok = false) {
  if (name.size() > max) return false;
  return std::none_of(name.begin(), name.end(), [slash_ok](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (c == '/' && !slash_ok) || u <= 0x20 || u == 0x7f;
  });
}

Status CheckName(const std::string& path, std::string_view name, std::size_t max, bool slash_ok = false) {
  if (name.size() > max) {
    return FieldError(path, "is " + std::to_string(name.size()) + " bytes, over Kubernetes' limit of " +
                                std::to_string(max));
  }
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if ((c == '/' && !slash_ok) || u <= 0x20 || u == 0x7f) {
      return FieldError(path, "must not contain '/', whitespace or control characters (a Kubernetes name)");
    }
  }
  return Status::Ok();
}

Status CheckLabels(const std::map<std::string, std::string>& labels, const std::string& path) {
  for (const auto& [k, v] : labels) {
    const std::size_t slash = k.rfind('/');
    const std::string_view prefix = slash == std::string::npos ? std::string_view() : std::string_view(k).substr(0, slash);
    const std::string_view name = slash == std::string::npos ? std::string_view(k) : std::string_view(k).substr(slash + 1);
    if (name.empty() || name.size() > kMaxLabelNameBytes || prefix.size() > kMaxNameBytes) {
      return FieldError(Join(path, k.substr(0, 64)), "label key: a name of 1..63 bytes after an optional prefix of at most 253");
    }
    if (v.size() > kMaxLabelValueBytes) {
      return FieldError(Join(path, k), "label value is " + std::to_string(v.size()) + " bytes, over Kubernetes' limit of 63");
    }
  }
  return Status::Ok();
}

Status CheckAnnotations(const std::map<std::string, std::string>& annotations, const std::string& path) {
  std::size_t total = 0;
  for (const auto& [k, v] : annotations) total += k.size() + v.size();
  if (total > kMaxAnnotationBytes) {
    return FieldError(path, "annotations total " + std::to_string(total) + " bytes, over Kubernetes' limit of 262144");
  }
  return Status::Ok();
}

}  // namespace

std::string K8sPod::tenant() const {
  auto it = labels.find(std::string(kTenantLabel));
  return it != labels.end() && !it->second.empty() ? it->second : namespace_name;
}

std::string K8sPod::job() const {
  auto it = labels.find(std::string(kJobLabel));
  return it != labels.end() && !it->second.empty() ? it->second : name;
}

bool K8sToleration::Tolerates(const K8sTaint& taint) const {
  if (!effect.empty() && effect != taint.effect) return false;
  if (!key.empty() && key != taint.key) return false;
  if (op == "Exists") return true;
  return (op.empty() || op == "Equal") && value == taint.value;
}

std::string ScheduleBlock(const NodeConditions& c, const std::vector<K8sToleration>& tolerations) {
  auto tolerated = [&](const K8sTaint& t) {
    return std::any_of(tolerations.begin(), tolerations.end(), [&](const K8sToleration& x) { return x.Tolerates(t); });
  };
  if (c.unschedulable && !tolerated({"node.kubernetes.io/unschedulable", "", "NoSchedule"})) {
    return "node: cordoned (spec.unschedulable)";
  }
  if (!c.ready.empty() && c.ready != "True") {
    const char* key = c.ready == "False" ? "node.kubernetes.io/not-ready" : "node.kubernetes.io/unreachable";
    if (!tolerated({key, "", "NoSchedule"})) return "node: Ready condition is " + c.ready.substr(0, 64);
  }
  for (const K8sTaint& t : c.taints) {
    if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
    if (!tolerated(t)) {
      return "taint: " + t.key.substr(0, 128) + (t.value.empty() ? "" : "=" + t.value.substr(0, 64)) + ":" + t.effect +
             " not tolerated";
    }
  }
  return "";
}

const std::vector<std::string>& ExtenderArgs::Candidates(std::vector<std::string>* scratch) const {
  if (!nodes.has_value() && node_names.has_value()) return *node_names;
  scratch->clear();
  if (nodes.has_value()) {
    for (const auto& n : *nodes) scratch->push_back(n.name);
  }
  return *scratch;
}

Result<K8sPod> ParsePod(const json& pod, const std::string& path) {
  if (!pod.is_object()) return FieldError(path, "expected a v1.Pod object");
  K8sPod p;
  SEEDANCE_ASSIGN_OR_RETURN(const json* meta, ObjectAt(pod, "metadata", path));
  if (meta != nullptr) {
    const std::string mp = Join(path, "metadata");
    SEEDANCE_ASSIGN_OR_RETURN(p.name, GetString(*meta, "name", mp));
    SEEDANCE_ASSIGN_OR_RETURN(p.namespace_name, GetString(*meta, "namespace", mp));
    SEEDANCE_ASSIGN_OR_RETURN(p.uid, GetString(*meta, "uid", mp));
    SEEDANCE_ASSIGN_OR_RETURN(p.labels, GetStringMap(*meta, "labels", mp));
    SEEDANCE_ASSIGN_OR_RETURN(p.annotations, GetStringMap(*meta, "annotations", mp));
  }
  if (p.name.empty()) return FieldError(Join(path, "metadata.name"), "required");
  SEEDANCE_RETURN_IF_ERROR(CheckName(Join(path, "metadata.name"), p.name, kMaxNameBytes));
  SEEDANCE_RETURN_IF_ERROR(CheckName(Join(path, "metadata.namespace"), p.namespace_name, kMaxNamespaceBytes));
  SEEDANCE_RETURN_IF_ERROR(CheckName(Join(path, "metadata.uid"), p.uid, kMaxUidBytes, true));
  SEEDANCE_RETURN_IF_ERROR(CheckLabels(p.labels, Join(path, "metadata.labels")));
  SEEDANCE_RETURN_IF_ERROR(CheckAnnotations(p.annotations, Join(path, "metadata.annotations")));
  if (p.namespace_name.empty()) p.namespace_name = "default";
  if (p.uid.empty()) p.uid = p.key();  // pods posted by hand may omit it
  std::int64_t cpu = 0, mem = 0, gpus = 0;
  SEEDANCE_ASSIGN_OR_RETURN(const json* spec, ObjectAt(pod, "spec", path));
  if (spec != nullptr) {
    const std::string sp = Join(path, "spec");
    SEEDANCE_ASSIGN_OR_RETURN(p.node_name, GetString(*spec, "nodeName", sp));
    SEEDANCE_RETURN_IF_ERROR(CheckName(Join(sp, "nodeName"), p.node_name, kMaxNameBytes));
    SEEDANCE_ASSIGN_OR_RETURN(auto tols, StringRecords(*spec, "tolerations", sp, {"key", "operator", "value", "effect"}));
    for (std::size_t i = 0; i < tols.size(); ++i) {
      auto& t = tols[i];
      K8sToleration tol{std::move(t["key"]), std::move(t["operator"]), std::move(t["value"]), std::move(t["effect"])};
      if (!tol.op.empty() && tol.op != "Equal" && tol.op != "Exists") {
        return FieldError(Join(Index(Join(sp, "tolerations"), i), "operator"), "expected Equal or Exists");
      }
      p.tolerations.push_back(std::move(tol));
    }
    if (const json* prio = Find(*spec, "priority"); prio != nullptr) {
      if (!prio->is_number_integer()) return FieldError(Join(sp, "priority"), "expected an integer");
      const auto v = prio->get<std::int64_t>();
      if (v < INT32_MIN || v > INT32_MAX) return FieldError(Join(sp, "priority"), "out of int32 range");
      p.priority = static_cast<std::int32_t>(v);
    }
    if (const json* cs = Find(*spec, "containers"); cs != nullptr) {
      const std::string cp = Join(sp, "containers");
      if (!cs->is_array()) return FieldError(cp, "expected an array");
      for (std::size_t i = 0; i < cs->size(); ++i) {
        const json& c = (*cs)[i];
        const std::string ci = Index(cp, i);
        if (!c.is_object()) return FieldError(ci, "expected a v1.Container object");
        SEEDANCE_ASSIGN_OR_RETURN(const json* res, ObjectAt(c, "resources", ci));
        if (res == nullptr) continue;
        const std::string rp = Join(ci, "resources");
        SEEDANCE_ASSIGN_OR_RETURN(auto req, GetResources(*res, "requests", rp));
        SEEDANCE_ASSIGN_OR_RETURN(auto lim, GetResources(*res, "limits", rp));
        for (auto& [k, v] : lim) req.emplace(k, v);  // a limit stands for a missing request
        const std::string qp = Join(rp, "requests");
        SEEDANCE_ASSIGN_OR_RETURN(std::int64_t c_cpu, Scaled(req, "cpu", qp, 3));
        SEEDANCE_ASSIGN_OR_RETURN(std::int64_t c_mem, MemMiB(req, qp));
        SEEDANCE_ASSIGN_OR_RETURN(std::int64_t c_gpu, Gpus(req, qp));
        cpu += c_cpu;
        mem += c_mem;
        gpus += c_gpu;
      }
    }
    SEEDANCE_ASSIGN_OR_RETURN(auto selector, GetStringMap(*spec, "nodeSelector", sp));
    if (auto it = selector.find(std::string(kGpuProductLabel)); it != selector.end()) {
      auto m = gpu::ParseGpuName(it->second, gpu::NameMatch::kProduct);
      if (!m.has_value()) return FieldError(Join(Join(sp, "nodeSelector"), kGpuProductLabel), m.error().message());
      p.spec.allowed_models.Add(*m);
    }
  }
  if (gpus > cluster::kMaxGpusPerNode) {
    return FieldError(Join(path, "spec.containers"), "more nvidia.com/gpu than any node holds (16)");
  }
  p.spec.num_gpu = static_cast<int>(gpus);
  p.spec.gpu_milli = gpus > 0 ? cluster::kMilliPerGpu : 0;
  const std::string ap = Join(path, "metadata.annotations");
  if (auto it = p.annotations.find(std::string(kGpuMilliAnnotation)); it != p.annotations.end()) {
    auto q = ParseK8sQuantity(it->second);
    std::int64_t milli = -1;
    if (q.has_value() && q->exp10 >= 0 && q->exp2 == 0) {
      auto v = q->CeilScaled(0);
      if (v.has_value()) milli = *v;
    }
    if (milli < 1 || milli > cluster::kMilliPerGpu) {
      return FieldError(Join(ap, kGpuMilliAnnotation), "expected an integer 1..1000");
    }
    if (p.spec.num_gpu == 0) p.spec.num_gpu = 1;
    p.spec.gpu_milli = static_cast<std::int32_t>(milli);
  }
  if (auto it = p.annotations.find(std::string(kGpuModelsAnnotation)); it != p.annotations.end()) {
    auto set = cluster::ParseGpuModelSet(it->second);
    if (!set.has_value()) return FieldError(Join(ap, kGpuModelsAnnotation), set.error().message());
    cluster::GpuModelSet both;
    for (int m = 0; m < 32; ++m) {
      if ((set->mask() & (1u << m)) == 0) continue;
      const auto idx = static_cast<cluster::GpuModelIndex>(m);
      if (p.spec.allowed_models.any() || p.spec.allowed_models.Accepts(idx)) both.Add(idx);
    }
    if (!set->any() && both.any()) {
      return FieldError(Join(ap, kGpuModelsAnnotation), "no model also matches the nodeSelector");
    }
    p.spec.allowed_models = both;
  }
  SEEDANCE_ASSIGN_OR_RETURN(const json* status, ObjectAt(pod, "status", path));
  if (status != nullptr) {
    SEEDANCE_ASSIGN_OR_RETURN(p.phase, GetString(*status, "phase", Join(path, "status")));
  }
  p.spec.name = p.key();
  p.spec.cpu = MilliCpu::FromRaw(cpu);
  p.spec.memory = Mebibytes::FromRaw(mem);
  return p;
}

Result<K8sNode> ParseNode(const json& node, const std::string& path) {
  if (!node.is_object()) return FieldError(path, "expected a v1.Node object");
  K8sNode n;
  SEEDANCE_ASSIGN_OR_RETURN(const json* meta, ObjectAt(node, "metadata", path));
  if (meta != nullptr) {
    const std::string mp = Join(path, "metadata");
    SEEDANCE_ASSIGN_OR_RETURN(n.name, GetString(*meta, "name", mp));
    SEEDANCE_ASSIGN_OR_RETURN(n.labels, GetStringMap(*meta, "labels", mp));
  }
  if (n.name.empty()) return FieldError(Join(path, "metadata.name"), "required");
  SEEDANCE_RETURN_IF_ERROR(CheckName(Join(path, "metadata.name"), n.name, kMaxNameBytes));
  SEEDANCE_RETURN_IF_ERROR(CheckLabels(n.labels, Join(path, "metadata.labels")));
  n.spec.name = n.name;
  SEEDANCE_ASSIGN_OR_RETURN(const json* nspec, ObjectAt(node, "spec", path));
  if (nspec != nullptr) {
    const std::string np = Join(path, "spec");
    if (const json* u = Find(*nspec, "unschedulable"); u != nullptr) {
      if (!u->is_boolean()) return FieldError(Join(np, "unschedulable"), "expected a boolean");
      n.conditions.unschedulable = u->get<bool>();
    }
    SEEDANCE_ASSIGN_OR_RETURN(auto taints, StringRecords(*nspec, "taints", np, {"key", "value", "effect"}));
    for (auto& t : taints) n.conditions.taints.push_back({std::move(t["key"]), std::move(t["value"]), std::move(t["effect"])});
  }
  SEEDANCE_ASSIGN_OR_RETURN(const json* status, ObjectAt(node, "status", path));
  if (status != nullptr) {
    const std::string sp = Join(path, "status");
    SEEDANCE_ASSIGN_OR_RETURN(auto conds, StringRecords(*status, "conditions", sp, {"type", "status"}));
    for (auto& c : conds) {
      if (c["type"] == "Ready") n.conditions.ready = std::move(c["status"]);
    }
    const char* key = Find(*status, "allocatable") != nullptr ? "allocatable" : "capacity";
    SEEDANCE_ASSIGN_OR_RETURN(auto res, GetResources(*status, key, sp));
    const std::string rp = Join(sp, key);
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t cpu, Scaled(res, "cpu", rp, 3));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t mem, MemMiB(res, rp));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t gpus, Gpus(res, rp));
    if (gpus > cluster::kMaxGpusPerNode) {
      return FieldError(Join(rp, kGpuResource), "more than 16 GPUs per node");
    }
    n.spec.cpu = MilliCpu::FromRaw(cpu);
    n.spec.memory = Mebibytes::FromRaw(mem);
    n.spec.gpu_count = static_cast<int>(gpus);
  }
  if (auto it = n.labels.find(std::string(kGpuProductLabel)); it != n.labels.end()) {
    auto m = gpu::ParseGpuName(it->second, gpu::NameMatch::kProduct);
    if (!m.has_value()) {
      return FieldError(Join(Join(path, "metadata.labels"), kGpuProductLabel), m.error().message());
    }
    n.spec.model = *m;
  } else if (n.spec.gpu_count > 0) {
    return FieldError(Join(Join(path, "metadata.labels"), kGpuProductLabel),
                      "required on a node with nvidia.com/gpu");
  }
  return n;
}

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
};

std::optional<PlainNodeNames> ScanPlainNodeNames(std::string_view b, std::size_t max_names) {
  const std::size_t n = b.size();
  std::size_t i = 0;
  auto ws = [&] {
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) ++i;
  };
  // A string of printable ASCII without escapes.
  auto plain = [&](std::string_view* out) {
    if (i >= n || b[i] != '"') return false;
    const std::size_t start = ++i;
    for (; i < n && b[i] != '"'; ++i) {
      const auto c = static_cast<unsigned char>(b[i]);
      if (c == '\\' || c < 0x20 || c >= 0x7f) return false;
    }
    if (i >= n) return false;
    *out = b.substr(start, i - start);
    ++i;
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
      f.names.reserve(std::min(n / 16, max_names));
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
// `body`).
Status TooManyCandidates(const char* field, const ExtenderLimits& limits) {
  std::string m = std::string(field) + ": more than " + std::to_string(limits.max_candidates) + " candidates";
  if (!limits.cap_reason.empty()) m += " (" + limits.cap_reason + ")";
  return Status(StatusCode::kResourceExhausted, std::move(m));
}

Status FullNodesOff(const char* field, const ExtenderLimits& limits) {
  return FieldError(field, limits.full_nodes_off.empty() ? std::string("full-node mode is off") : limits.full_nodes_off);
}

Result<ExtenderArgs> ParseExtenderArgsDom(std::string_view body, std::optional<std::vector<std::string>> plain_names,
                                          const ExtenderLimits& limits) {
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
  }
  if (names.has_value()) {
    std::vector<std::string>& list = *names;
    for (std::size_t i = 0; i < list.size(); ++i) {
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
    return ParseExtenderArgsDom(rest, std::move(plain->names), limits);
  }
  return ParseExtenderArgsDom(body, std::nullopt, limits);
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

namespace {

// A JSON string literal for `s`: printable ASCII is copied as it is (node names, reasons); anything
// else goes through nlohmann's escaping, invalid UTF-8 replaced as ReplyJson does.
// Whether `s` is written as is between quotes (printable ASCII, no quote, no backslash).
bool PlainJsonString(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
}

// Appends the pieces to `out` through one pointer into space reserved once: the writers below
// append a few short pieces per node name, and std::string's per-append bookkeeping (a size
// check, a length, a terminator) was most of their cost (extender_benchmark BM_CodecOnly).
class PieceWriter {
 public:
  PieceWriter(std::string& out, std::size_t extra) : out_(out), at_(out.size()) { out_.resize(at_ + extra); }
  ~PieceWriter() { out_.resize(at_); }
  PieceWriter(const PieceWriter&) = delete;
  PieceWriter& operator=(const PieceWriter&) = delete;
  void Put(std::string_view s) {
    std::memcpy(out_.data() + at_, s.data(), s.size());
    at_ += s.size();
  }
  void Put(char c) { out_[at_++] = c; }

 private:
  std::string& out_;
  std::size_t at_;
};

void AppendJsonString(std::string& out, std::string_view s) {
  if (PlainJsonString(s)) {
    out += '"';
    out += s;
    out += '"';
    return;
  }
  out += json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

void AppendJsonStringMap(std::string& out, const std::map<std::string, std::string>& m) {
  out += '{';
  bool first = true;
  for (const auto& [k, v] : m) {
    if (!first) out += ',';
    first = false;
    AppendJsonString(out, k);
    out += ':';
    AppendJsonString(out, v);
  }
  out += '}';
}

}  // namespace

// Written directly, not through a DOM: a filter over thousands of nodes answers thousands of names,
// and the DOM's allocations were most of the answer's cost (extender_benchmark). Keys in the order
// nlohmann's object writes them (sorted), so both encoders give the same bytes.
std::string DumpFilterResult(const FilterResult& r) {
  std::string out;
  out.reserve(64 + r.node_names.size() * 24 + (r.failed.size() + r.failed_unresolvable.size()) * 64);
  out += "{\"Error\":";
  AppendJsonString(out, r.error);
  out += ",\"FailedAndUnresolvableNodes\":";
  AppendJsonStringMap(out, r.failed_unresolvable);
  out += ",\"FailedNodes\":";
  AppendJsonStringMap(out, r.failed);
  if (r.nodes.has_value()) {
    out += ",\"NodeNames\":null,\"Nodes\":{\"items\":[";
    for (std::size_t i = 0; i < r.nodes->size(); ++i) {
      if (i > 0) out += ',';
      out += (*r.nodes)[i].dump(-1, ' ', false, json::error_handler_t::replace);
    }
    out += "],\"metadata\":{}}}";
  } else {
    out += ",\"NodeNames\":[";
    const auto plain = std::find_if_not(r.node_names.begin(), r.node_names.end(), PlainJsonString);
    std::size_t bytes = 0;
    for (auto it = r.node_names.begin(); it != plain; ++it) bytes += it->size() + 3;  // "name",
    {
      PieceWriter w(out, bytes);
      for (auto it = r.node_names.begin(); it != plain; ++it) {
        if (it != r.node_names.begin()) w.Put(',');
        w.Put('"');
        w.Put(*it);
        w.Put('"');
      }
    }
    for (auto it = plain; it != r.node_names.end(); ++it) {
      if (it != r.node_names.begin()) out += ',';
      AppendJsonString(out, *it);
    }
    out += "],\"Nodes\":null}";
  }
  return out;
}

std::string DumpHostPriorityList(const std::vector<HostPriority>& list) {
  std::string out;
  out.reserve(2 + list.size() * 40);
  out += '[';
  const auto plain = std::find_if_not(list.begin(), list.end(), [](const HostPriority& h) { return PlainJsonString(h.host); });
  constexpr std::string_view kHost = "{\"Host\":\"", kScore = "\",\"Score\":";
  std::size_t bytes = 0;
  for (auto it = list.begin(); it != plain; ++it) bytes += kHost.size() + it->host.size() + kScore.size() + 24;
  {
    PieceWriter w(out, bytes);
    for (auto it = list.begin(); it != plain; ++it) {
      if (it != list.begin()) w.Put(',');
      w.Put(kHost);
      w.Put(it->host);
      w.Put(kScore);
      const fmt::format_int score(it->score);
      w.Put(std::string_view(score.data(), score.size()));
      w.Put('}');
    }
  }
  for (auto it = plain; it != list.end(); ++it) {
    if (it != list.begin()) out += ',';
    out += "{\"Host\":";
    AppendJsonString(out, it->host);
    out += ",\"Score\":";
    out += fmt::format_int(it->score).str();
    out += '}';
  }
  out += ']';
  return out;
}

json EncodeFilterResult(const FilterResult& r) { return json::parse(DumpFilterResult(r)); }

json EncodeHostPriorityList(const std::vector<HostPriority>& list) { return json::parse(DumpHostPriorityList(list)); }

json EncodePreemptionResult(const std::map<std::string, MetaVictims>& victims) {
  json m = json::object();
  for (const auto& [node, v] : victims) {
    json pods = json::array();
    for (const auto& uid : v.uids) pods.push_back(json{{"UID", uid}});
    m[node] = json{{"Pods", std::move(pods)}, {"NumPDBViolations", v.num_pdb_violations}};
  }
  return json{{"NodeNameToMetaVictims", std::move(m)}};
}

json EncodeBindingResult(std::string_view error) { return json{{"Error", std::string(error)}}; }

std::string FieldOf(const Status& status) {
  const std::string& m = status.message();
  const auto pos = m.find(": ");
  if (pos == std::string::npos) return "";
  std::string field = m.substr(0, pos);
  return field == "body" ? std::string() : field;
}

std::string ReasonOf(const Status& status) {
  const std::string& m = status.message();
  const auto pos = m.find(": ");
  return pos == std::string::npos ? m : m.substr(pos + 2);
}

}  // namespace seedance::server
