// Fragmentation gradient descent (FGD, Weng et al., USENIX ATC'23), re-implemented from the paper
// and the protocol facts read from the authors' simulator (FGD_PROTOCOL.md §6.6): place the pod
// where the expected fragmentation of the node grows least, scored as
// int(100 * sigmoid((F(n) - F(n')) / 1000)).
#include <cmath>

#include "seedance/sched/policies/policies.h"
#include "seedance/sched/scoring_policy.h"

namespace seedance::sched::internal {
namespace {

using cluster::ClusterState;
using cluster::NodeId;
using cluster::NodeState;
using cluster::PodSpec;

class FgdPolicy final : public ScoringPlacementPolicy {
 public:
  explicit FgdPolicy(const PolicyContext& c) : ScoringPlacementPolicy(c, /*memoize=*/true) {}
  std::string_view Name() const override { return "fgd"; }

 protected:
  NodeScore Score(const ClusterState& cluster, NodeId id, const PodSpec& pod) const override {
    const NodeState& n = cluster.node(id);
    const double before = NodeFrag(n, context_.typical);
    NodeScore best;
    bool have = false;
    ForEachGpuChoice(n, pod, [&](const cluster::GpuAssignment& g, const NodeState& after) {
      const double delta = (before - NodeFrag(after, context_.typical)) / 1000.0;
      const double score = std::trunc(100.0 / (1.0 + std::exp(-delta)));
      if (!have || score > best.primary) {  // strict: the lowest GPU index wins ties
        have = true;
        best.primary = score;
        best.gpus = g;
      }
    });
    return best;
  }
};

}  // namespace

std::unique_ptr<PlacementPolicy> NewFgdPolicy(const PolicyContext& c) {
  return std::make_unique<FgdPolicy>(c);
}

}  // namespace seedance::sched::internal
