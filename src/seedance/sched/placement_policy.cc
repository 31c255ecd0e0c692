#include "seedance/sched/placement_policy.h"

#include <algorithm>
#include <numeric>

#include "seedance/sched/policies/policies.h"

namespace seedance::sched {

const std::vector<std::string>& PlacementPolicyNames() {
  static const std::vector<std::string> kNames = {"random",  "dotprod", "clustering", "packing",
                                                  "bestfit", "fgd",     "seedance"};
  return kNames;
}

PolicyContext NameOrderPolicyContext(const std::vector<cluster::NodeSpec>& nodes,
                                     const std::vector<cluster::PodSpec>& known_pods) {
  PolicyContext context;
  context.tie_rank.assign(nodes.size(), 0);
  std::vector<std::size_t> by_name(nodes.size());
  std::iota(by_name.begin(), by_name.end(), std::size_t{0});
  std::stable_sort(by_name.begin(), by_name.end(),
                   [&](std::size_t a, std::size_t b) { return nodes[a].name < nodes[b].name; });
  for (std::size_t i = 0; i < by_name.size(); ++i) {
    context.tie_rank[by_name[i]] = static_cast<std::uint32_t>(i);
  }
  if (known_pods.empty()) {
    cluster::PodSpec one;
    one.num_gpu = 1;
    one.gpu_milli = cluster::kMilliPerGpu;
    context.typical = ComputeTypicalPods({one});
  } else {
    context.typical = ComputeTypicalPods(known_pods);
  }
  return context;
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
  if (name == "least-allocated") return NewLeastAllocatedPolicy(c);
  if (name == "most-allocated") return NewMostAllocatedPolicy(c);
  std::string known;
  for (const auto& n : PlacementPolicyNames()) known += n + ", ";
  return InvalidArgumentError("unknown placement policy '" + std::string(name) +
                              "' (known: " + known + "firstfit, least-allocated, most-allocated)");
}

}  // namespace seedance::sched
