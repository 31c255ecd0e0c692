#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "seedance/cluster/cluster.h"
#include "seedance/core/status.h"
#include "seedance/sched/frag.h"
#include "seedance/sched/placement_policy.h"

namespace seedance::sched {

// The FGD (ATC'23) packing protocol, FGD_PROTOCOL.md §2-§3: pods sorted by name and shuffled by
// the seed, inflated by sampling with replacement until the GPU request reaches `tune` x the
// cluster's GPU capacity, placed one by one with no departures; a seeded permutation of the
// nodes breaks score ties.
struct PackingWorkload {
  std::vector<cluster::PodSpec> pods;     // in arrival order
  std::vector<std::uint32_t> tie_rank;    // indexed by node (input order)
  std::vector<TypicalPod> typical;        // from the trace before inflation
};

// Builds the arrival order and tie ranks for `seed`. REQUIRES: !pods.empty(), tune > 0.
PackingWorkload PrepareFgdWorkload(const std::vector<cluster::NodeSpec>& nodes,
                                   const std::vector<cluster::PodSpec>& pods, std::uint64_t seed,
                                   double tune);

// One policy, one seed.
struct PackingRunResult {
  std::string policy;
  std::uint64_t seed = 0;
  // Index k = arrived workload k% of GPU capacity; NaN where the run has no point there.
  // Computed as the FGD artifact's merge_alloc_discrete: mean over all events whose arrived
  // percentage rounds (half to even) to k, falling back to k-1..k+1; rounded to 2 decimals.
  std::vector<double> alloc_pct;   // allocated milli-GPU, % of capacity
  std::vector<double> frag_pct;    // FGD fragmentation (sum of F(n)), % of capacity
  double unallocated_pct_at_100 = 0;  // 100 - alloc_pct[100]
  double frag_pct_at_100 = 0;
  double entropy_at_100 = 0;          // GpuFreeEntropy when arrivals first reach 100%
  std::int64_t pods_arrived = 0;
  std::int64_t pods_placed = 0;
  std::int64_t pods_failed = 0;
  std::int64_t gpu_pods_failed_by_100 = 0;
  double wall_seconds = 0;         // measured, not deterministic
  std::vector<double> decision_seconds;  // per decision, filled only when asked
};

struct PackingRunOptions {
  double tune = 1.3;
  bool record_decision_times = false;
};

// Builds the policy of one run from the run's context (e.g. a policy with non-default constants).
using PlacementPolicyFactory =
    std::function<Result<std::unique_ptr<PlacementPolicy>>(const PolicyContext&)>;

// Runs `policy` on the prepared workload. Errors: kInvalidArgument for an unknown policy.
Result<PackingRunResult> RunPacking(const std::vector<cluster::NodeSpec>& nodes,
                                    const PackingWorkload& workload, std::string_view policy,
                                    std::uint64_t seed, const PackingRunOptions& options);

// Same, with the policy built by `make`. Errors: make's.
Result<PackingRunResult> RunPacking(const std::vector<cluster::NodeSpec>& nodes,
                                    const PackingWorkload& workload,
                                    const PlacementPolicyFactory& make, std::uint64_t seed,
                                    const PackingRunOptions& options);

// Runs every (policy, seed) pair on up to `threads` threads. Results are ordered policy-major,
// then by seed, whatever the thread count. Errors: the first failing run's.
Result<std::vector<PackingRunResult>> RunPackingBenchmark(
    const std::vector<cluster::NodeSpec>& nodes, const std::vector<cluster::PodSpec>& pods,
    const std::vector<std::string>& policies, const std::vector<std::uint64_t>& seeds,
    double tune, int threads);

// Same, with each policy built by a factory (one workload per seed, shared by all factories).
Result<std::vector<PackingRunResult>> RunPackingBenchmark(
    const std::vector<cluster::NodeSpec>& nodes, const std::vector<cluster::PodSpec>& pods,
    const std::vector<PlacementPolicyFactory>& policies, const std::vector<std::uint64_t>& seeds,
    double tune, int threads);

// Summary statistics of one policy over seeds.
struct PackingSummary {
  std::string policy;
  double mean_unallocated_pct_at_100 = 0;
  double sd_unallocated_pct_at_100 = 0;  // sample standard deviation (n-1)
  double median_unallocated_pct_at_100 = 0;
  double mean_frag_pct_at_100 = 0;
  double mean_entropy_at_100 = 0;
  double wall_seconds = 0;               // sum over the policy's runs
  std::vector<double> median_alloc_pct;  // per column, median over seeds
  int runs = 0;
};

std::vector<PackingSummary> SummarizePacking(const std::vector<PackingRunResult>& runs);

}  // namespace seedance::sched
