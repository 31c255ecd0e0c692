#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/cluster/cluster.h"
#include "seedance/core/rng.h"
#include "seedance/core/status.h"
#include "seedance/sched/frag.h"

namespace seedance::sched {

// The outcome of one placement decision: a value, not an error (Ray's SchedulingResult).
struct PlacementDecision {
  enum class Kind { kPlaced, kUnschedulable };
  Kind kind = Kind::kUnschedulable;
  cluster::NodeId node;
  cluster::GpuAssignment gpus;

  bool placed() const { return kind == Kind::kPlaced; }
  static PlacementDecision Unschedulable() { return {}; }
  static PlacementDecision Placed(cluster::NodeId n, cluster::GpuAssignment g) {
    return {Kind::kPlaced, n, g};
  }
};

// What every policy may know besides the cluster: a fixed per-run tie-break order over nodes
// (lower rank wins a tie; the FGD artifact's random node-name prefix) and the workload's typical
// pods (FGD's task-size distribution).
struct PolicyContext {
  std::vector<std::uint32_t> tie_rank;  // indexed by NodeId; a permutation
  std::vector<TypicalPod> typical;
};

// PlacementPolicy: picks a node and GPUs for one pod. Policies read the cluster and return a
// decision; they never change it (the caller binds).
// Thread-safety: Decide may fill internal memo caches keyed by node version, so one instance
// must not be used from two threads at once. Create one instance per run.
class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  // A short lower-case name ("fgd"), stable: reports and summary.json use it.
  virtual std::string_view Name() const = 0;
  // Returns where `pod` goes, or Unschedulable when no node fits. `rng` is the policy's own
  // stream; only randomized policies draw from it.
  virtual PlacementDecision Decide(const cluster::ClusterState& cluster,
                                   const cluster::PodSpec& pod, Rng& rng) const = 0;
};

// The context of a policy that knows only the cluster, as `seedance server` builds it whenever
// its node set changes: tie ranks by node name (ascending name wins a tie) and the typical pods
// of `known_pods` (the pods bound or pending at that moment; none: one 1-GPU pod). The
// trace-time replay (trace_replay.h) uses it with no known pods, as a server that learned its
// nodes before the first pod.
PolicyContext NameOrderPolicyContext(const std::vector<cluster::NodeSpec>& nodes,
                                     const std::vector<cluster::PodSpec>& known_pods);

// The policy names MakePlacementPolicy accepts, in report order.
const std::vector<std::string>& PlacementPolicyNames();

// Returns the named policy, or kInvalidArgument listing the valid names.
Result<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(std::string_view name,
                                                             const PolicyContext& context);

}  // namespace seedance::sched
