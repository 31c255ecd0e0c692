#pragma once

// Trace-time replay: a pod trace played in the order of its own clock (creation_time,
// deletion_time), one decision per arrival, with departures freeing capacity, by a placement
// policy with the context `seedance server` builds from its node list (NameOrderPolicyContext).
// This is what a real control plane sees when the trace's pods are created and deleted at their
// times and the server (fed by its watch) answers kube-scheduler: tests/k8s `controlplane parity`
// plays the event list this returns and checks every pod lands on the same node.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "seedance/cluster/cluster.h"
#include "seedance/core/status.h"

namespace seedance::sched {

// One step of the replay, in the order it was played.
struct TraceReplayEvent {
  enum class Kind { kCreate, kDelete };
  Kind kind = Kind::kCreate;
  std::size_t pod = 0;  // index into the trace's pods
  std::string node;     // create: where it was placed ("" = unschedulable); delete: the node freed
};

struct TraceReplayOptions {
  std::string policy = "seedance";  // a MakePlacementPolicy name
  std::uint64_t seed = 0;           // the policy's Rng is Rng(seed).Fork(1), as the server's
};

// Plays `pods` against `nodes`. Event order: by time; at one time deletions first (a pod that
// left at t frees its capacity before arrivals at t), then creations, each group in trace order.
// A pod whose deletion_s <= creation_s is deleted right after the creations at its creation
// time. A pod that could not be placed has no delete event (it never held capacity; a real
// cluster's harness deletes it at once so that it is never retried). Placement is the policy's
// Decide then ClusterState::Bind with the GPUs it chose, as the extender's prioritize and bind.
// Errors: kInvalidArgument for an unknown policy.
Result<std::vector<TraceReplayEvent>> ReplayTrace(const std::vector<cluster::NodeSpec>& nodes,
                                                  const std::vector<cluster::PodSpec>& pods,
                                                  const TraceReplayOptions& options);

}  // namespace seedance::sched
