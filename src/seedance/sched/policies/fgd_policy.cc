// Fragmentation gradient descent (FGD, Weng et al., USENIX ATC'23), re-implemented from the paper
// and the protocol facts read from the authors' simulator (FGD_PROTOCOL.md §6.6): place the pod
// where the node's expected fragmentation (NodeFrag) grows least, scored as
// int(100 * sigmoid((F(n) - F(n')) / 1000)).
#include "seedance/sched/policies/frag_gradient_policy.h"
#include "seedance/sched/policies/policies.h"

namespace seedance::sched::internal {
namespace {

class FgdPolicy final : public FragGradientPolicy {
 public:
  explicit FgdPolicy(const PolicyContext& c) : FragGradientPolicy(c, /*temperature_milli=*/1000) {}
  std::string_view Name() const override { return "fgd"; }

 protected:
  double Frag(const cluster::NodeState& node) const override {
    return NodeFrag(node, context_.typical);
  }
};

}  // namespace

std::unique_ptr<PlacementPolicy> NewFgdPolicy(const PolicyContext& c) {
  return std::make_unique<FgdPolicy>(c);
}

}  // namespace seedance::sched::internal
