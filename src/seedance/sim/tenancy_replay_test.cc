#include "seedance/sim/tenancy_replay.h"

#include <gtest/gtest.h>

#include "seedance/sim/testing/tenancy_checks.h"

namespace seedance::sim {
namespace {

using tenancy::TenancyMode;

// Tuning data (the mechanism choices of issue 13 were made on it): Philly's first 7 days, seed 0.
TEST(TenancyReplayTest, PhillyTuningWeekMeetsIssue13) {
  auto c = RunTenancyComparison(testing::TenancySpec("philly", 7, 0), testing::AllTenancyModes());
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  testing::PrintOutcomes(*c);
  testing::ExpectGuarantees(*c);
  testing::ExpectUtilizationOverStrict(*c, 15.0);
  testing::ExpectCompensationRaisesJain(*c);
  // Checkpoint-aware victims on one node lose less work than Kueue + kube-scheduler.
  EXPECT_LE(testing::Find(*c, "seedance").work_lost_gpu_hours, testing::Find(*c, "borrowing").work_lost_gpu_hours);
}

// The default workload of cost-benchmark: three tenants on H100s; guarantees hold.
TEST(TenancyReplayTest, LlmFinetuneKeepsGoldGuarantees) {
  auto c = RunTenancyComparison(testing::TenancySpec("llm-finetune", 7, 42), testing::AllTenancyModes());
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  testing::PrintOutcomes(*c);
  testing::ExpectGuarantees(*c);
  // Idle reclaim: Seedance's busy share of the cluster is above Kueue's, which keeps idle tails.
  EXPECT_GT(testing::Find(*c, "seedance").busy_allocation_pct, testing::Find(*c, "borrowing").busy_allocation_pct + 5);
}

TEST(TenancyReplayTest, Deterministic) {
  const auto spec = testing::TenancySpec("philly", 3, 7);
  auto a = RunTenancyComparison(spec, {TenancyMode::kSeedance});
  auto b = RunTenancyComparison(spec, {TenancyMode::kSeedance});
  ASSERT_TRUE(a.has_value() && b.has_value());
  ASSERT_EQ(a->outcomes.size(), b->outcomes.size());
  for (std::size_t i = 0; i < a->outcomes.size(); ++i) {
    const auto& x = a->outcomes[i];
    const auto& y = b->outcomes[i];
    EXPECT_EQ(x.gpu_allocation_pct, y.gpu_allocation_pct);
    EXPECT_EQ(x.jain_index, y.jain_index);
    EXPECT_EQ(x.preemptions, y.preemptions);
    EXPECT_EQ(x.work_lost_gpu_hours, y.work_lost_gpu_hours);
    EXPECT_EQ(x.share_gpus, y.share_gpus);
  }
}

TEST(TenancyReplayTest, UnknownGpuQuotaIsAnError) {
  TenancyScenario s;
  s.window_s = 10;
  tenancy::TenantConfig t;
  t.name = "a";
  t.quota.push_back({"cpu", 4, std::nullopt, std::nullopt});
  s.config.tenants.push_back(t);
  auto r = RunTenancyReplay(s, TenancyMode::kSeedance);
  EXPECT_FALSE(r.has_value());
}

}  // namespace
}  // namespace seedance::sim
