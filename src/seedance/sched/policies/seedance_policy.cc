// Seedance's packing policy: a capacity-aware fragmentation gradient. See docs/ARCHITECTURE.md,
// "Why the Seedance packer beats FGD".
#include "seedance/sched/policies/frag_gradient_policy.h"
#include "seedance/sched/policies/policies.h"
#include "seedance/sched/seedance_packing.h"

namespace seedance::sched::internal {
namespace {

// The constants and the data they were chosen on: seedance_packing.h.
class SeedancePolicy final : public FragGradientPolicy {
 public:
  SeedancePolicy(const PolicyContext& c, const SeedancePackingOptions& o)
      : FragGradientPolicy(c, o.temperature_milli), options_(o) {}
  std::string_view Name() const override { return "seedance"; }

 protected:
  double Frag(const cluster::NodeState& node) const override {
    return CapacityAwareNodeFrag(node, context_.typical, options_.reserve_factor);
  }

 private:
  SeedancePackingOptions options_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> NewSeedancePolicy(const PolicyContext& c) {
  return MakeSeedancePlacementPolicy(c, SeedancePackingOptions{});
}

}  // namespace seedance::sched::internal

namespace seedance::sched {

std::unique_ptr<PlacementPolicy> MakeSeedancePlacementPolicy(const PolicyContext& context,
                                                             const SeedancePackingOptions& options) {
  return std::make_unique<internal::SeedancePolicy>(context, options);
}

}  // namespace seedance::sched
