// Seedance's packing policy. See docs/ARCHITECTURE.md ("Why the Seedance packer beats FGD").
#include <cmath>

#include "seedance/sched/policies/policies.h"
#include "seedance/sched/scoring_policy.h"

namespace seedance::sched::internal {
namespace {

using cluster::ClusterState;
using cluster::NodeId;
using cluster::NodeState;
using cluster::PodSpec;

class SeedancePolicy final : public ScoringPlacementPolicy {
 public:
  explicit SeedancePolicy(const PolicyContext& c) : ScoringPlacementPolicy(c, /*memoize=*/true) {}
  std::string_view Name() const override { return "seedance"; }

 protected:
  NodeScore Score(const ClusterState& cluster, NodeId id, const PodSpec& pod) const override {
    const NodeState& n = cluster.node(id);
    const double before = NodeFrag(n, context_.typical);
    NodeScore best;
    bool have = false;
    ForEachGpuChoice(n, pod, [&](const cluster::GpuAssignment& g, const NodeState& after) {
      const double growth = NodeFrag(after, context_.typical) - before;
      NodeScore s;
      s.primary = -growth;
      s.secondary = -static_cast<double>(after.TotalGpuIdle());
      s.gpus = g;
      if (!have || s.primary > best.primary ||
          (s.primary == best.primary && s.secondary > best.secondary)) {
        have = true;
        best = s;
      }
    });
    return best;
  }
};

}  // namespace

std::unique_ptr<PlacementPolicy> NewSeedancePolicy(const PolicyContext& c) {
  return std::make_unique<SeedancePolicy>(c);
}

}  // namespace seedance::sched::internal
