#pragma once

// The extender's decision core: cluster state learned online and the decisions kube-scheduler
// asks for, on the same pipeline as the simulator (admission by tenancy -> node by
// sched::PlacementPolicy). No HTTP here: extender_service.cc maps routes onto it.
//
// Per candidate node, filter applies the rules in this order; the first that fails names the
// node's reason ("<rule>: <detail>"):
//   unknown node            -> FailedAndUnresolvableNodes ("unknown node: ...")
//   node conditions         -> FailedAndUnresolvableNodes ("node: cordoned (spec.unschedulable)",
//                              "node: Ready condition is False", "taint: k=v:NoSchedule not
//                              tolerated": ScheduleBlock in extender_codec.h); they bar new pods
//                              only: pods bound there keep their GPUs and quota
//   audit (removed/pending) -> FailedAndUnresolvableNodes ("audit: node removed (<reason>)")
//   tier (observation)      -> FailedAndUnresolvableNodes ("tier: node in observation admits
//                              Bronze only (<reason>)")
//   breaker                 -> FailedAndUnresolvableNodes ("breaker: <reason>; POST
//                              /v1/breaker/reset")
//   capacity (node smaller than the request, or GPU model not accepted)
//                           -> FailedAndUnresolvableNodes ("fit: ...")
//   quota                   -> FailedNodes ("quota: tenant t would use 9/8 gpu ...")
//   fit (free capacity)     -> FailedNodes ("fit: needs 2 GPU, 1 free")
// The last two go to FailedAndUnresolvableNodes instead where no pod of lower priority than the
// pod's is bound on the node: kube-scheduler's DefaultPreemption evicts only such pods, so its dry
// run there could not make room (it skips unresolvable nodes).
// Tenants: a pod's tenant is its label seedance.io/tenant, else its namespace; a tenant the
// config does not name falls back to the config's tenant "default" when there is one, else it
// has no quota and tier Silver. Tier -> pod QoS: Gold guaranteed, Silver burstable, Bronze
// best-effort (nodes in observation admit best-effort only).
//
// Prioritize runs the configured policy (ServerConfig::placement_policy) on the cluster with
// every node that fails the rules masked out: the node it picks scores 10, other feasible
// nodes 1..9 by how tightly the pod fills them, times the node's grade weight (capped at 9),
// infeasible ones 0. With server.extender_decide_at_filter, filter makes that pick among the
// nodes that pass and answers only it (reserved as prioritize reserves): kube-scheduler, left
// with one feasible node, neither scores nor calls prioritize. The policy's Rng is Rng(config.seed).Fork(1), as in `bench packing`, drawn
// in request order. Bind uses the GPUs the policy chose when it binds to the picked node.
//
// Config reload: tenants, quotas, policy and seed may change; bound pods stay bound (usage is
// recounted against the new quotas; pods of tenants no longer named count for no tenant).
//
// Thread-safe: filters (and prioritize's rules) share a reader lock; changes and prioritize's
// pick take it exclusively.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/cluster/cluster.h"
#include "seedance/core/rng.h"
#include "seedance/core/status.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/server/app.h"
#include "seedance/server/extender_codec.h"
#include "seedance/tenancy/quota.h"

namespace seedance::server {

struct ExtenderOptions {
  // The policy context; nullopt: tie ranks by node name, typical pods from the pods seen when
  // the node set last changed. Tests replaying `bench packing` pass the packing run's context
  // (its tie_rank is indexed by node in the order nodes were first posted).
  std::optional<sched::PolicyContext> context;
  std::size_t decision_pods = 10'000;  // pods whose recent decisions GET /v1/decisions keeps
  std::size_t decisions_per_pod = 16;
  // Per filter decision, the first this many failed nodes keep their reason (all are counted by
  // rule in "failed_by_rule"): bounds the log at ~10,000 pods x 16 decisions.
  std::size_t reasons_per_decision = 64;
  std::size_t seen_pods = 100'000;  // pods filtered but not bound yet, remembered for bind
  // Byte caps; nullopt: the config's server.limits (decision_log_bytes, seen_pod_bytes).
  std::optional<std::size_t> decision_log_bytes;
  std::optional<std::size_t> seen_pod_bytes;
  // With the cluster watch (WatchConfirmsBinds), a pod Seedance places (prioritize's pick, the
  // bind verb) holds its quota and GPUs as an assumed pod until the watch shows it bound, or
  // this long (kube-scheduler's assumed pods, scheduler-plugins' CapacityScheduling Reserve).
  std::int64_t reservation_ms = 30'000;
};

class Extender {
 public:
  Extender(App& app, ExtenderOptions options = {});
  ~Extender();

  FilterResult Filter(const ExtenderArgs& args);
  std::vector<HostPriority> Prioritize(const ExtenderArgs& args);
  // The same, moving the request's NodeNames into the answer instead of copying them (the
  // server's handlers: thousands of names per request).
  FilterResult Filter(ExtenderArgs&& args);
  std::vector<HostPriority> Prioritize(ExtenderArgs&& args);
  std::map<std::string, MetaVictims> Preempt(const ExtenderPreemptionArgs& args);
  // Errors: kNotFound (pod or node unknown), kFailedPrecondition (does not fit).
  Status Bind(const ExtenderBindingArgs& args);

  // Adds or updates nodes (POST /v1/nodes; full-node requests never store nodes). Errors: none today.
  Status UpsertNodes(const std::vector<K8sNode>& nodes);
  // Forgets a node; pods bound there are released. Errors: kNotFound.
  Status DeleteNode(const std::string& name);
  // Pods with spec.nodeName are bound there, Succeeded/Failed ones released, others remembered
  // for bind. Errors: kNotFound (unknown node), kFailedPrecondition (does not fit); the
  // message starts with the field ("items[3].spec.nodeName: ...").
  Status UpsertPods(const std::vector<K8sPod>& pods);
  // Releases the pod "<namespace>/<name>". Errors: kNotFound.
  Status DeletePod(const std::string& key);

  // {"pod":key,"bound_to":node,"decisions":[{"verb","time_ms","candidates", filter: "passed",
  // "failed_by_rule":{"fit":3,...},"reasons":{node:reason},"reasons_omitted" (and "chosen",
  // "policy" when it decided: server.extender_decide_at_filter); prioritize:
  // "chosen","score","policy"; bind: "chosen","error"}...]};
  // kNotFound when the pod has no recorded decision.
  Result<nlohmann::json> Decisions(const std::string& pod_key) const;

  Status CheckConfig(const ServerConfig& config) const;
  void ApplyConfig(const std::shared_ptr<const ServerConfig>& config);

  // --- the cluster watch (cluster_watch.h): the API server's state replaces ours ---
  // Called by the cluster watch: from now on prioritize reserves its pick and bind's placement is
  // assumed until the watch (UpsertPods / ReplacePods with spec.nodeName) confirms it; a relist or
  // resync that does not show an assumed pod yet keeps it; ExtenderOptions::reservation_ms
  // after the placement an unconfirmed one is released. Without the watch, nothing confirms a
  // bind, so nothing is assumed: bind binds, prioritize reserves nothing.
  void WatchConfirmsBinds();
  // The node table becomes exactly `nodes`: others are removed and their pods released.
  Status ReplaceNodes(const std::vector<K8sNode>& nodes);
  // The bound pods become exactly those of `pods` with spec.nodeName that are not Succeeded or
  // Failed (bound by any scheduler), plus the assumed ones not expired and not shown ended (the
  // list may lag Seedance's placements); every other bound pod is released; pods without a node are
  // remembered for bind. Returns the pods that could not be bound (node unknown yet, or no fit)
  // with their errors, for the caller to retry when nodes arrive.
  std::vector<std::pair<K8sPod, Status>> ReplacePods(const std::vector<K8sPod>& pods);
  // The state, for /v1/cluster and tests: {"nodes":{name:{"cpu_m","memory_mi","gpus",
  // "gpu_model","gpu_milli_used"}},"pods":{"<ns>/<name>":{"node","uid","gpu_milli",
  // "assumed": true while a placement waits for the watch}},
  // "quota":{tenant:{resource:usage in milli-units}}}.
  nlohmann::json Snapshot() const;

  std::size_t num_nodes() const;
  std::size_t num_bound() const;
  // The node a pod is bound to ("" when not bound), for tests.
  std::string BoundNode(const std::string& pod_key) const;

 private:
  // `take`: the candidates' names, moved into the answer (null: copied).
  FilterResult RunFilter(const ExtenderArgs& args, std::vector<std::string>* take);
  std::vector<HostPriority> RunPrioritize(const ExtenderArgs& args, std::vector<std::string>* take);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::server

namespace seedance::server {
// MakeExtenderService (app.h) with options (e.g. the packing run's policy context).
std::unique_ptr<Service> MakeExtenderService(App& app, ExtenderOptions options);
}  // namespace seedance::server
