#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "seedance/sched/placement_policy.h"

namespace seedance::sched {

// A node's score under a scoring policy: compared lexicographically (primary, then secondary),
// then by the context's tie rank (lower wins), so the winner is unique.
struct NodeScore {
  double primary = 0;
  double secondary = 0;
  cluster::GpuAssignment gpus;
};

// Base for the "filter every node, score the feasible ones, take the maximum" policies of
// kube-scheduler (percentageOfNodesToScore = 100). Subclasses implement Score.
// Like kube-scheduler, a single feasible node is taken without scoring.
class ScoringPlacementPolicy : public PlacementPolicy {
 public:
  // With `memoize`, scores are cached per (pod shape, node) and reused until the node changes
  // (ClusterState::version). Valid only for Score functions of the node state and pod shape
  // (cpu, memory, GPU count, milli-GPU, allowed models) alone.
  explicit ScoringPlacementPolicy(const PolicyContext& context, bool memoize = false)
      : context_(context), memoize_(memoize) {}
  PlacementDecision Decide(const cluster::ClusterState& cluster, const cluster::PodSpec& pod,
                           Rng& rng) const override;

 protected:
  // Returns the score of placing `pod` on `node` with its GPU choice. REQUIRES: Fits().
  virtual NodeScore Score(const cluster::ClusterState& cluster, cluster::NodeId node,
                          const cluster::PodSpec& pod) const = 0;
  // The GPUs taken when a node is chosen without scoring (single feasible node).
  virtual cluster::GpuAssignment DefaultGpus(const cluster::ClusterState& cluster,
                                             cluster::NodeId node,
                                             const cluster::PodSpec& pod) const;

  const PolicyContext& context_;

 private:
  struct MemoCell {
    std::uint64_t version_plus_one = 0;  // 0: empty
    NodeScore score;
  };
  using ShapeKey = std::tuple<std::int64_t, std::int64_t, int, std::int32_t, std::uint32_t>;
  std::vector<MemoCell>& MemoFor(const cluster::PodSpec& pod, std::size_t nodes) const;

  bool memoize_;
  mutable std::map<ShapeKey, std::size_t> shape_ids_;
  mutable std::vector<std::vector<MemoCell>> memo_;
};

}  // namespace seedance::sched
