#include "seedance/sched/placement_policy.h"

#include "seedance/sched/policies/policies.h"

namespace seedance::sched {

const std::vector<std::string>& PlacementPolicyNames() {
  static const std::vector<std::string> kNames = {"random",  "dotprod", "clustering", "packing",
                                                  "bestfit", "fgd",     "seedance"};
  return kNames;
}

Result<std::unique_ptr<PlacementPolicy>> MakePlacementPolicy(std::string_view name,
                                                             const PolicyContext& c) {
  using namespace internal;  // NOLINT(google-build-using-namespace)
  if (name == "random") return NewRandomPolicy(c);
  if (name == "dotprod") return NewDotProductPolicy(c);
  if (name == "clustering") return NewGpuClusteringPolicy(c);
  if (name == "packing") return NewGpuPackingPolicy(c);
  if (name == "bestfit") return NewBestFitPolicy(c);
  if (name == "fgd") return NewFgdPolicy(c);
  if (name == "seedance") return NewSeedancePolicy(c);
  if (name == "firstfit") return NewFirstFitPolicy(c);
  std::string known;
  for (const auto& n : PlacementPolicyNames()) known += n + ", ";
  return InvalidArgumentError("unknown placement policy '" + std::string(name) +
                              "' (known: " + known + "firstfit)");
}

}  // namespace seedance::sched
