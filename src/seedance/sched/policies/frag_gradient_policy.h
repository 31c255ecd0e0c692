#pragma once

#include <cmath>

#include "seedance/sched/scoring_policy.h"

namespace seedance::sched::internal {

// A fragmentation-gradient policy (FGD's form): the score of placing a pod on a node is
// int(100 * sigmoid(-(Frag(after) - Frag(before)) / temperature)), maximized over the GPU choices
// ForEachGpuChoice weighs (the lowest GPU index wins ties). Subclasses define Frag.
class FragGradientPolicy : public ScoringPlacementPolicy {
 protected:
  // `temperature_milli`: the fragmentation growth (milli-GPU) that moves the sigmoid by one unit.
  FragGradientPolicy(const PolicyContext& c, double temperature_milli)
      : ScoringPlacementPolicy(c, /*memoize=*/true), temperature_milli_(temperature_milli) {}

  // Returns the node's expected fragmentation, milli-GPU. Must depend on the node state only.
  virtual double Frag(const cluster::NodeState& node) const = 0;

  NodeScore Score(const cluster::ClusterState& cluster, cluster::NodeId id,
                  const cluster::PodSpec& pod) const final {
    const cluster::NodeState& n = cluster.node(id);
    const double before = Frag(n);
    NodeScore best;
    bool have = false;
    ForEachGpuChoice(n, pod, [&](const cluster::GpuAssignment& g, const cluster::NodeState& after) {
      const double growth = Frag(after) - before;
      const double score = std::trunc(100.0 / (1.0 + std::exp(growth / temperature_milli_)));
      if (!have || score > best.primary) {
        have = true;
        best.primary = score;
        best.gpus = g;
      }
    });
    return best;
  }

 private:
  double temperature_milli_;
};

}  // namespace seedance::sched::internal
