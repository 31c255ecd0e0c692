#pragma once

#include <memory>

#include "seedance/sched/placement_policy.h"

// Constructors of the built-in placement policies; use MakePlacementPolicy() instead.
namespace seedance::sched::internal {

std::unique_ptr<PlacementPolicy> NewRandomPolicy(const PolicyContext& c);
std::unique_ptr<PlacementPolicy> NewDotProductPolicy(const PolicyContext& c);
std::unique_ptr<PlacementPolicy> NewGpuClusteringPolicy(const PolicyContext& c);
std::unique_ptr<PlacementPolicy> NewGpuPackingPolicy(const PolicyContext& c);
std::unique_ptr<PlacementPolicy> NewBestFitPolicy(const PolicyContext& c);
std::unique_ptr<PlacementPolicy> NewFgdPolicy(const PolicyContext& c);
std::unique_ptr<PlacementPolicy> NewSeedancePolicy(const PolicyContext& c);
std::unique_ptr<PlacementPolicy> NewFirstFitPolicy(const PolicyContext& c);
// kube-scheduler's NodeResourcesFit strategies (kube_fit_policies.cc).
std::unique_ptr<PlacementPolicy> NewLeastAllocatedPolicy(const PolicyContext& c);
std::unique_ptr<PlacementPolicy> NewMostAllocatedPolicy(const PolicyContext& c);

// Normalization constants of the FGD artifact (MaxSpecCpu, MaxSpecGpu).
inline constexpr double kMaxSpecCpu = 128000.0;
inline constexpr double kMaxSpecGpu = 8000.0;

}  // namespace seedance::sched::internal
