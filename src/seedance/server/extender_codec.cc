#include "seedance/server/extender_codec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

#include "seedance/cluster/gpu_model.h"
#include "seedance/core/json_depth.h"
#include "seedance/gpu/catalog.h"
#include "seedance/server/extender_codec_internal.h"
#include "seedance/server/k8s_quantity.h"

// The v1.Pod and v1.Node readers and the helpers the codec's files share (extender_codec_internal.h);
// the extender requests are read in extender_codec_requests.cc, the answers written in
// extender_codec_answers.cc.

namespace seedance::server {
namespace codec_internal {

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

Result<json> ParseBody(std::string_view body, std::size_t max_values) {
  // Before any DOM: nlohmann copies, dumps and compares recursively (a Node of 200,000 levels,
  // echoed back in full-node mode, overflowed the stack).
  SEEDANCE_RETURN_IF_ERROR(CheckJsonDepth(body, kMaxJsonDepth, max_values));
  json doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return FieldError("", "malformed JSON");
  if (!doc.is_object()) return FieldError("", "expected a JSON object");
  return doc;
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

bool IsKubernetesName(std::string_view name, std::size_t max, bool slash_ok) {
  if (name.size() > max) return false;
  return std::none_of(name.begin(), name.end(), [slash_ok](char c) {
    const auto u = static_cast<unsigned char>(c);
    return (c == '/' && !slash_ok) || u <= 0x20 || u == 0x7f;
  });
}

Status CheckName(const std::string& path, std::string_view name, std::size_t max, bool slash_ok) {
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

}  // namespace codec_internal

using namespace codec_internal;  // NOLINT(google-build-using-namespace): the codec's own helpers

namespace {

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


}  // namespace seedance::server
