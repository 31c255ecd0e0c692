#pragma once

// The kube-scheduler extender wire format (docs/PROTOCOLS.md section 5): a pure codec, no HTTP, no
// state (fuzzable). Requests are parsed case-insensitively at the top level (Go decodes that
// way: `Pod`/`pod`, `NodeNames`/`nodenames`); embedded v1.Pod and v1.Node objects are read with
// their lowerCamel tags. Responses are emitted in PascalCase exactly as Go encodes them.
//
// What is read of a v1.Pod: metadata.{name,namespace,uid,labels,annotations},
// spec.containers[].resources.{requests,limits} (cpu, memory, nvidia.com/gpu; a limit stands
// for a missing request, as in Kubernetes), spec.nodeSelector["nvidia.com/gpu.product"],
// spec.priority, spec.nodeName, spec.tolerations[].{key,operator,value,effect}, status.phase.
// Annotations:
//   seedance.io/gpu-milli: "1".."1000", the share of each GPU the pod needs (openb-style GPU
//     sharing); a pod with it and no nvidia.com/gpu request asks for one shared GPU.
//   seedance.io/gpu-models: "V100M16|V100M32", the catalog models the pod accepts.
// Label seedance.io/tenant names the pod's tenant (else its namespace); label
// seedance.io/job its job (the breaker's job scope; else the pod name).
// What is read of a v1.Node: metadata.{name,labels}, status.allocatable (else
// status.capacity): cpu, memory, nvidia.com/gpu; the GPU model from the label
// nvidia.com/gpu.product (gpu::ParseGpuName, product strings as the GPU operator writes them);
// spec.unschedulable, spec.taints[].{key,value,effect}, status.conditions[type=Ready].status
// (NodeConditions; ScheduleBlock says whether a pod may get a new placement there).
//
// Errors are kInvalidArgument with the message "<json path>: <reason>"; FieldOf() and
// ReasonOf() split it for the HTTP reply {"error","field"}.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/cluster/cluster.h"
#include "seedance/core/status.h"

namespace seedance::server {

inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";
inline constexpr std::string_view kGpuProductLabel = "nvidia.com/gpu.product";
inline constexpr std::string_view kGpuMilliAnnotation = "seedance.io/gpu-milli";
inline constexpr std::string_view kGpuModelsAnnotation = "seedance.io/gpu-models";
inline constexpr std::string_view kTenantLabel = "seedance.io/tenant";
inline constexpr std::string_view kJobLabel = "seedance.io/job";

// Kubernetes' taints and tolerations (core/v1). Effects: NoSchedule, PreferNoSchedule, NoExecute.
struct K8sTaint {
  std::string key, value, effect;
  bool operator==(const K8sTaint&) const = default;
};
struct K8sToleration {
  std::string key, op, value, effect;  // op: "Equal" (also when empty) or "Exists"
  bool Tolerates(const K8sTaint& taint) const;  // Kubernetes' ToleratesTaint
};
inline constexpr std::size_t kMaxTaints = 1024;  // per node / tolerations per pod; more is refused

struct K8sPod {
  std::string name, namespace_name, uid;
  std::map<std::string, std::string> labels, annotations;
  std::string node_name;  // spec.nodeName ("" = not bound)
  std::string phase;      // status.phase
  std::int32_t priority = 0;
  std::vector<K8sToleration> tolerations;  // spec.tolerations
  cluster::PodSpec spec;  // name = "<namespace>/<name>"; qos left to the caller

  std::string key() const { return namespace_name + "/" + name; }
  std::string tenant() const;  // label seedance.io/tenant, else the namespace
  std::string job() const;     // label seedance.io/job, else the pod name
};

// What decides whether a node takes new pods (not what it holds: bound pods keep their GPUs).
struct NodeConditions {
  bool unschedulable = false;  // spec.unschedulable (kubectl cordon)
  std::string ready;           // status of the Ready condition; "" when the node reports none
  std::vector<K8sTaint> taints;
  bool operator==(const NodeConditions&) const = default;
};

struct K8sNode {
  std::string name;
  std::map<std::string, std::string> labels;
  cluster::NodeSpec spec;
  NodeConditions conditions;
};

// Why `pod` may get no new placement on a node with `c` ("" when it may), as kube-scheduler's
// NodeUnschedulable and TaintToleration plugins judge it, plus the Ready condition:
//   "node: cordoned (spec.unschedulable)"        unless the pod tolerates
//                                                node.kubernetes.io/unschedulable:NoSchedule;
//   "node: Ready condition is False|Unknown"     unless it tolerates node.kubernetes.io/not-ready
//                                                (False) / unreachable (Unknown), effect NoSchedule;
//   "taint: k=v:NoSchedule not tolerated"        the first NoSchedule/NoExecute taint not tolerated.
// A node without a Ready condition (POST /v1/nodes without status.conditions) counts as ready.
std::string ScheduleBlock(const NodeConditions& c, const std::vector<K8sToleration>& tolerations);

struct ExtenderArgs {
  K8sPod pod;
  // Full-node mode (nodeCacheCapable: false): the NodeList's items, parsed and raw (echoed back
  // in the filter result). nullopt when Nodes is null or absent.
  std::optional<std::vector<K8sNode>> nodes;
  std::vector<nlohmann::json> raw_nodes;
  std::optional<std::vector<std::string>> node_names;
  // The candidates, by name, in request order (Nodes' items, else NodeNames).
  // NodeNames itself, or the names of Nodes written into `scratch`.
  const std::vector<std::string>& Candidates(std::vector<std::string>* scratch) const;
};

struct ExtenderPreemptionArgs {
  K8sPod pod;
  // Candidate node -> UIDs of the victims kube-scheduler proposes (NodeNameToMetaVictims, or
  // NodeNameToVictims' pods' metadata.uid).
  std::map<std::string, std::vector<std::string>> victims;
  std::map<std::string, std::int64_t> pdb_violations;
};

struct ExtenderBindingArgs {
  std::string pod_name, pod_namespace, pod_uid, node;
};

// What one anonymous request may make the decoder build (issue 40). The defaults accept
// everything (tests, fuzzing); the server passes its own (extender.h: Extender::RequestLimits).
struct ExtenderLimits {
  // Candidates (NodeNames, or Nodes' items) per request: past it the request is refused with
  // kResourceExhausted "NodeNames: more than N candidates (<cap_reason>)", counted while reading
  // so that no per-name structure is built past the cap.
  std::size_t max_candidates = static_cast<std::size_t>(-1);
  std::string cap_reason;
  // Full-node mode (Nodes / NodeNameToVictims, kube-scheduler's nodeCacheCapable: false). When
  // false such a request is refused with kInvalidArgument "Nodes: <full_nodes_off>".
  bool full_nodes = true;
  std::string full_nodes_off;
  // JSON values (core's CheckJsonDepth) of the part of the body read into a DOM.
  std::size_t max_values = static_cast<std::size_t>(-1);
};

// Request decoders. `body` is the raw HTTP body. Every one refuses JSON nesting deeper than
// core's kMaxJsonDepth (64) before it builds a DOM: "<path>: JSON nests deeper than 64 levels".
Result<ExtenderArgs> ParseExtenderArgs(std::string_view body, const ExtenderLimits& limits = {});
Result<ExtenderPreemptionArgs> ParseExtenderPreemptionArgs(std::string_view body, const ExtenderLimits& limits = {});
Result<ExtenderBindingArgs> ParseExtenderBindingArgs(std::string_view body);

// One v1.Pod / v1.Node object (path = its JSON path in the request, for errors).
Result<K8sPod> ParsePod(const nlohmann::json& pod, const std::string& path);
Result<K8sNode> ParseNode(const nlohmann::json& node, const std::string& path);
// A v1.Pod or v1.PodList (kind or "items"); likewise nodes.
Result<std::vector<K8sPod>> ParsePodOrList(std::string_view body);
Result<std::vector<K8sNode>> ParseNodeOrList(std::string_view body);

// Responses.
struct FilterResult {
  std::vector<std::string> node_names;          // passed (node-cache mode)
  std::optional<std::vector<nlohmann::json>> nodes;  // passed (full-node mode)
  std::map<std::string, std::string> failed;
  std::map<std::string, std::string> failed_unresolvable;
  std::string error;
};
struct HostPriority {
  std::string host;
  std::int64_t score = 0;
};
struct MetaVictims {
  std::vector<std::string> uids;
  std::int64_t num_pdb_violations = 0;
};

// The answers' JSON text (what the server sends), and the same as a DOM (tests, embedding code).
std::string DumpFilterResult(const FilterResult& r);
std::string DumpHostPriorityList(const std::vector<HostPriority>& list);
nlohmann::json EncodeFilterResult(const FilterResult& r);
nlohmann::json EncodeHostPriorityList(const std::vector<HostPriority>& list);
nlohmann::json EncodePreemptionResult(const std::map<std::string, MetaVictims>& victims);
nlohmann::json EncodeBindingResult(std::string_view error);

// "<path>: <reason>" helpers.
std::string FieldOf(const Status& status);
std::string ReasonOf(const Status& status);

}  // namespace seedance::server
