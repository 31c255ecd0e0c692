#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::audit {

// One finding of the Kubernetes manifest lint (S7.6).
struct LintFinding {
  std::string file;
  int line = 0;    // 1-based
  int column = 0;  // 1-based
  std::string rule;    // "init-container-without-requests", ...
  std::string object;  // "Deployment/trainer"
  std::string field;   // "spec.template.spec.initContainers[0].resources.requests"
  std::string message;
};

// "file:line:col: rule: message (object, field)".
std::string FormatFinding(const LintFinding& f);

// Lints every document of a (multi-document) manifest. Workloads: Pod, Deployment, StatefulSet,
// DaemonSet, ReplicaSet, Job, CronJob, List items. A pod runs on GPU nodes when a container asks
// for nvidia.com/gpu (requests or limits) or its nodeSelector / node affinity names a GPU label.
// Rules, for pods on GPU nodes:
//   init-container-without-requests  an init container without resources.requests cpu/memory
//   container-without-requests       a container without resources.requests cpu/memory
//   gpu-request-without-limit        nvidia.com/gpu in requests but not in limits (or unequal)
//   missing-gpu-toleration           no toleration for the nvidia.com/gpu taint
// Findings are in document order. Errors: kInvalidArgument "file:line:col: ..." for YAML syntax.
Result<std::vector<LintFinding>> LintManifest(std::string_view yaml_text, const std::string& file);
// Reads and lints `path`. Errors: kNotFound (cannot read), as LintManifest.
Result<std::vector<LintFinding>> LintManifestFile(const std::string& path);

}  // namespace seedance::audit
