#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "seedance/sim/tenancy_replay.h"

// Shared checks of issue 13's "what must show" for the tenancy replays (tuning and held-out tests).
namespace seedance::sim::testing {

inline ScenarioSpec TenancySpec(const std::string& workload, double days, std::uint64_t seed) {
  ScenarioSpec spec;
  spec.workload = workload;
  spec.duration_s = days * 86400;
  spec.seed = seed;
  spec.data_dir = SEEDANCE_TEST_DATA_DIR;
  return spec;
}

inline std::vector<tenancy::TenancyMode> AllTenancyModes() {
  return {tenancy::TenancyMode::kStrict, tenancy::TenancyMode::kBorrowing, tenancy::TenancyMode::kSeedance};
}

// The same with Kueue's Fair Sharing rows (each strategy list): `cost-benchmark --tenancy all`.
inline std::vector<tenancy::TenancyMode> AllTenancyModesWithKueue() {
  using tenancy::TenancyMode;
  return {TenancyMode::kStrict, TenancyMode::kBorrowing, TenancyMode::kFairSharing, TenancyMode::kFairSharingFinal,
          TenancyMode::kFairSharingInitial, TenancyMode::kSeedance};
}

inline const TenancyOutcome& Find(const TenancyComparison& c, const std::string& mode) {
  for (const auto& o : c.outcomes)
    if (o.mode == mode) return o;
  ADD_FAILURE() << "no mode " << mode;
  return c.outcomes.front();
}

// One line per mode, for the test log.
inline void PrintOutcomes(const TenancyComparison& c) {
  for (const auto& o : c.outcomes) {
    std::printf("  %-26s alloc %5.1f%% busy %5.1f%% jain %.3f gold %d/%d by-lower %d preempt %d reclaim %d lost %.1f GPU-h "
                "unstarted %d\n",
                o.mode.c_str(), o.gpu_allocation_pct, o.busy_allocation_pct, o.jain_index, o.gold_guarantee_violations,
                o.gold_guarantee_checks, o.gold_preempted_by_lower, o.preemptions, o.idle_reclaims, o.work_lost_gpu_hours,
                o.unstarted);
  }
}

// Guarantee 1: Seedance starts every Gold workload that fits its tenant's unborrowed guaranteed
// quota within one cycle; no mode lets a lower tier preempt Gold.
inline void ExpectGuarantees(const TenancyComparison& c) {
  const auto& s = Find(c, "seedance");
  EXPECT_GT(s.gold_guarantee_checks, 0);
  EXPECT_EQ(s.gold_guarantee_violations, 0);
  for (const auto& o : c.outcomes) EXPECT_EQ(o.gold_preempted_by_lower, 0) << o.mode;
}

// Item 2: borrowing and Seedance allocate at least `pp` percentage points more than strict.
inline void ExpectUtilizationOverStrict(const TenancyComparison& c, double pp) {
  const double strict = Find(c, "strict").gpu_allocation_pct;
  EXPECT_GE(Find(c, "borrowing").gpu_allocation_pct, strict + pp);
  EXPECT_GE(Find(c, "seedance").gpu_allocation_pct, strict + pp);
}

// Item 3: Jain's index with compensation above the same mode without it.
inline void ExpectCompensationRaisesJain(const TenancyComparison& c) {
  EXPECT_GT(Find(c, "seedance").jain_index, Find(c, "seedance-no-compensation").jain_index);
}

}  // namespace seedance::sim::testing
