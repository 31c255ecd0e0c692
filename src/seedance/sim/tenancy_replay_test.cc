#include "seedance/sim/tenancy_replay.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace seedance::sim {
namespace {

using tenancy::TenancyMode;

ScenarioSpec Spec(const std::string& workload, double days) {
  ScenarioSpec spec;
  spec.workload = workload;
  spec.duration_s = days * 86400;
  spec.seed = 0;
  spec.data_dir = SEEDANCE_TEST_DATA_DIR;
  return spec;
}

void Print(const TenancyComparison& c) {
  for (const auto& a : c.scenario.assumptions) std::printf("  # %s\n", a.c_str());
  for (const auto& o : c.outcomes) {
    std::printf("%-26s alloc %5.1f%% busy %5.1f%% jain %.3f gold %d/%d lowerpre %d preempt %d reclaim %d lost %.1f GPUh unstarted %d\n",
                o.mode.c_str(), o.gpu_allocation_pct, o.busy_allocation_pct, o.jain_index, o.gold_guarantee_violations,
                o.gold_guarantee_checks, o.gold_preempted_by_lower, o.preemptions, o.idle_reclaims, o.work_lost_gpu_hours,
                o.unstarted);
  }
}

TEST(TenancyReplayTest, PhillyVirtualClusters) {
  auto c = RunTenancyComparison(Spec("philly", 7), {TenancyMode::kStrict, TenancyMode::kBorrowing, TenancyMode::kSeedance});
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  Print(*c);
}

}  // namespace
}  // namespace seedance::sim
