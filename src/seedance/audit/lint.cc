#include "seedance/audit/lint.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace seedance::audit {
namespace {

constexpr const char* kGpu = "nvidia.com/gpu";

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool IsGpuLabel(const std::string& key) {
  const std::string k = Lower(key);
  return k.find("gpu") != std::string::npos || k.find("accelerator") != std::string::npos;
}

// A present, non-null node. yaml-cpp's operator[] on a missing key gives an undefined node
// and chaining on that throws, so every lookup goes through Child.
bool Has(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }
YAML::Node Child(const YAML::Node& n, const char* key) {
  if (Has(n) && n.IsMap()) {
    const YAML::Node c = n[key];
    if (c.IsDefined()) return c;
  }
  return YAML::Node();
}
bool IsMap(const YAML::Node& n) { return Has(n) && n.IsMap(); }
bool IsSeq(const YAML::Node& n) { return Has(n) && n.IsSequence(); }
std::string Str(const YAML::Node& n) { return Has(n) && n.IsScalar() ? n.Scalar() : std::string(); }

class PodLinter {
 public:
  PodLinter(std::string file, std::string object, std::vector<LintFinding>& out)
      : file_(std::move(file)), object_(std::move(object)), out_(out) {}

  void Lint(const YAML::Node& spec, const std::string& path) {
    if (!IsMap(spec)) return;
    if (!OnGpuNodes(spec)) return;
    for (const char* list : {"initContainers", "containers"}) {
      const YAML::Node cs = Child(spec, list);
      if (!IsSeq(cs)) continue;
      const bool init = std::string(list) == "initContainers";
      for (std::size_t i = 0; i < cs.size(); ++i) {
        LintContainer(cs[i], fmt::format("{}.{}[{}]", path, list, i), init);
      }
    }
    if (!ToleratesGpuTaint(spec)) {
      Add(spec, "missing-gpu-toleration", path + ".tolerations",
          "pod runs on GPU nodes but has no toleration for the nvidia.com/gpu taint");
    }
  }

 private:
  static bool RequestsGpu(const YAML::Node& c) {
    const YAML::Node r = Child(c, "resources");
    return Has(Child(Child(r, "requests"), kGpu)) || Has(Child(Child(r, "limits"), kGpu));
  }

  static bool OnGpuNodes(const YAML::Node& spec) {
    for (const char* list : {"initContainers", "containers"}) {
      const YAML::Node cs = Child(spec, list);
      if (!IsSeq(cs)) continue;
      for (const auto& c : cs) {
        if (RequestsGpu(c)) return true;
      }
    }
    if (const YAML::Node sel = Child(spec, "nodeSelector"); IsMap(sel)) {
      for (const auto& kv : sel) {
        if (IsGpuLabel(Str(kv.first)) || IsGpuLabel(Str(kv.second))) return true;
      }
    }
    const YAML::Node terms =
        Child(Child(Child(Child(spec, "affinity"), "nodeAffinity"),
                    "requiredDuringSchedulingIgnoredDuringExecution"),
              "nodeSelectorTerms");
    if (IsSeq(terms)) {
      for (const auto& t : terms) {
        const YAML::Node exprs = Child(t, "matchExpressions");
        if (!IsSeq(exprs)) continue;
        for (const auto& e : exprs) {
          if (IsGpuLabel(Str(Child(e, "key")))) return true;
        }
      }
    }
    return false;
  }

  static bool ToleratesGpuTaint(const YAML::Node& spec) {
    const YAML::Node tols = Child(spec, "tolerations");
    if (!IsSeq(tols)) return false;
    for (const auto& t : tols) {
      const std::string key = Str(Child(t, "key"));
      if (key == kGpu) return true;
      if (key.empty() && Str(Child(t, "operator")) == "Exists") return true;  // tolerates every taint
    }
    return false;
  }

  void LintContainer(const YAML::Node& c, const std::string& path, bool init) {
    if (!IsMap(c)) return;
    const std::string name = Str(Child(c, "name"));
    const std::string who = (init ? "init container '" : "container '") + name + "'";
    const YAML::Node res = Child(c, "resources");
    const YAML::Node req = Child(res, "requests");
    std::vector<std::string> missing;
    for (const char* r : {"cpu", "memory"}) {
      if (!Has(Child(req, r))) missing.emplace_back(r);
    }
    if (!missing.empty()) {
      const YAML::Node at = Has(req) ? req : (Has(res) ? res : c);
      std::string what = missing.size() == 2 ? "cpu and memory" : missing[0];
      Add(at, init ? "init-container-without-requests" : "container-without-requests",
          path + ".resources.requests",
          who + " on a GPU node has no " + what +
              " request, so the scheduler cannot reserve room for it beside the GPU work");
    }
    const YAML::Node req_gpu = Child(req, kGpu);
    const YAML::Node lim_gpu = Child(Child(res, "limits"), kGpu);
    if (Has(req_gpu)) {
      if (!Has(lim_gpu)) {
        Add(req_gpu, "gpu-request-without-limit", path + ".resources.limits",
            who + " requests nvidia.com/gpu without a limit (extended resources need "
                  "limits equal to requests)");
      } else if (Str(lim_gpu) != Str(req_gpu)) {
        Add(lim_gpu, "gpu-request-without-limit", path + ".resources.limits",
            who + " has nvidia.com/gpu request " + Str(req_gpu) + " but limit " +
                Str(lim_gpu) + " (they must be equal)");
      }
    }
  }

  void Add(const YAML::Node& at, const char* rule, const std::string& field, std::string msg) {
    const YAML::Mark m = at.Mark();
    out_.push_back(LintFinding{file_, m.line + 1, m.column + 1, rule, object_, field,
                               std::move(msg)});
  }

  std::string file_;
  std::string object_;
  std::vector<LintFinding>& out_;
};

void LintObject(const YAML::Node& doc, const std::string& file, std::vector<LintFinding>& out) {
  if (!IsMap(doc)) return;
  const std::string kind = Str(Child(doc, "kind"));
  if (kind == "List") {
    const YAML::Node items = Child(doc, "items");
    if (IsSeq(items)) {
      for (const auto& item : items) LintObject(item, file, out);
    }
    return;
  }
  const std::string object = kind + "/" + Str(Child(Child(doc, "metadata"), "name"));
  PodLinter linter(file, object, out);
  if (kind == "Pod") {
    linter.Lint(Child(doc, "spec"), "spec");
  } else if (kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" ||
             kind == "ReplicaSet" || kind == "Job") {
    linter.Lint(Child(Child(Child(doc, "spec"), "template"), "spec"), "spec.template.spec");
  } else if (kind == "CronJob") {
    linter.Lint(
        Child(Child(Child(Child(Child(doc, "spec"), "jobTemplate"), "spec"), "template"), "spec"),
        "spec.jobTemplate.spec.template.spec");
  }
}

}  // namespace

std::string FormatFinding(const LintFinding& f) {
  return fmt::format("{}:{}:{}: {}: {} ({}, {})", f.file, f.line, f.column, f.rule, f.message,
                     f.object, f.field);
}

Result<std::vector<LintFinding>> LintManifest(std::string_view yaml_text,
                                              const std::string& file) {
  std::vector<LintFinding> out;
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(std::string(yaml_text));
    for (const YAML::Node& d : docs) LintObject(d, file, out);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(
        fmt::format("{}:{}:{}: {}", file, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  return out;
}

Result<std::vector<LintFinding>> LintManifestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return LintManifest(ss.str(), path);
}

}  // namespace seedance::audit
