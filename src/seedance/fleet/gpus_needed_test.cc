// The GPUs a stack needs for the week's SLOs and deadlines (issue 39, fleet c): the fleet scaled in
// whole nodes with the quotas, the bisection over fleet sizes, and the engine on a scaled fleet.
#include "seedance/fleet/gpus_needed.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seedance/fleet/engine.h"
#include "seedance/fleet/test_week.h"

namespace seedance::fleet {
namespace {

constexpr double kHour = 3600;

FleetWeekScenario OwnedAndCloud() {
  FleetWeekScenario s = testing::OnePoolWeek("needed", sim::Tier::kOwned, 64, 2.0, 64, 4);
  s.fleet.pools.push_back(testing::Pool(0, sim::Tier::kOnDemand, 16, 3.0));
  s.tenancy.tenants.front().quota.front().borrowing_limit = 8;
  return s;
}

TEST(GpusNeededTest, CommittedPoolsAndQuotasScaleInWholeNodesAndTheCloudStays) {
  const FleetWeekScenario s = OwnedAndCloud();
  EXPECT_EQ(CommittedGpus(s), 64);
  const FleetWeekScenario three_quarters = WithCommittedScaled(s, 12, 16);
  EXPECT_EQ(three_quarters.fleet.pools[0].max_gpus, 48);
  EXPECT_EQ(three_quarters.fleet.pools[1].max_gpus, 16);  // on-demand quota unchanged
  EXPECT_EQ(CommittedGpus(three_quarters), 48);
  EXPECT_DOUBLE_EQ(three_quarters.tenancy.tenants[0].quota[0].nominal, 48);
  EXPECT_DOUBLE_EQ(*three_quarters.tenancy.tenants[0].quota[0].borrowing_limit, 6);
  // 64 x 11/16 = 44 GPUs: 5.5 nodes, rounded to 6; never below one node.
  EXPECT_EQ(WithCommittedScaled(s, 11, 16).fleet.pools[0].max_gpus, 48);
  EXPECT_EQ(WithCommittedScaled(s, 1, 16).fleet.pools[0].max_gpus, 8);
  EXPECT_EQ(s.fleet.pools[0].max_gpus, 64);  // the original is untouched
}

FleetWeekOutcome Outcome(double attainment, int met, int gold) {
  FleetWeekOutcome o;
  o.serving_attainment = attainment;
  o.deadlines_met = met;
  o.gold_violations = gold;
  o.committed_usd = 1000;
  o.total_usd = 1200;
  return o;
}

TEST(GpusNeededTest, BisectsEachStacksNeedSideBySide) {
  const FleetWeekScenario s = OwnedAndCloud();
  const GpusNeededTarget target = GpusNeededTargetOf(Outcome(0.99, 10, 1));
  EXPECT_TRUE(MeetsTarget(Outcome(0.99, 10, 1), target));
  EXPECT_FALSE(MeetsTarget(Outcome(0.989, 12, 0), target));
  EXPECT_FALSE(MeetsTarget(Outcome(0.995, 9, 0), target));
  EXPECT_FALSE(MeetsTarget(Outcome(0.995, 12, 2), target));
  StackConfig a, b, c;
  a.name = "a";  // meets from 11/16 up
  b.name = "b";  // short on the whole fleet: never searched
  c.name = "c";  // meets everywhere: "at most" half
  int rounds = 0;
  std::vector<std::string> asked;
  auto run = [&](const std::vector<std::pair<StackConfig, int>>& runs) -> Result<std::vector<FleetWeekOutcome>> {
    ++rounds;
    std::vector<FleetWeekOutcome> out;
    for (const auto& [cfg, num] : runs) {
      asked.push_back(cfg.name + std::to_string(num));
      out.push_back(cfg.name == "a" && num < 11 ? Outcome(0.99, 9, 0) : Outcome(0.995, 11, 0));
    }
    return out;
  };
  auto got = FindGpusNeeded({a, b, c}, {Outcome(0.99, 10, 0), Outcome(0.98, 10, 0), Outcome(0.995, 12, 0)}, 1.0, s,
                            target, run);
  ASSERT_TRUE(got.has_value()) << got.error().message();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ(rounds, 3);  // a and c probe side by side: 11, then 9, then 10 and 8
  EXPECT_EQ(asked, (std::vector<std::string>{"a11", "c11", "a9", "c9", "a10", "c8"}));
  EXPECT_EQ((*got)[0].needed_num, 11);
  ASSERT_NE((*got)[0].Needed(), nullptr);
  EXPECT_EQ((*got)[0].Needed()->committed_gpus, 48);  // 44 rounded to whole nodes
  ASSERT_EQ((*got)[0].probes.size(), 4u);  // 16, 11, 10, 9: largest first
  EXPECT_EQ((*got)[0].probes.front().num, 16);
  EXPECT_FALSE((*got)[0].probes.back().meets);
  EXPECT_EQ((*got)[1].needed_num, -1);
  EXPECT_EQ((*got)[1].Needed(), nullptr);
  EXPECT_EQ((*got)[1].probes.size(), 1u);
  EXPECT_EQ((*got)[2].needed_num, kGpusNeededMinNum);
  const std::string text = GpusNeededText(*got, target, 64);
  EXPECT_NE(text.find("a: 48 of 64 committed GPUs (0.75x)"), std::string::npos) << text;
  EXPECT_NE(text.find("b: not met on the whole fleet"), std::string::npos) << text;
  EXPECT_NE(text.find("c: at most 32 of 64"), std::string::npos) << text;
  const nlohmann::json j = GpusNeededJson(*got, target, 64);
  EXPECT_EQ(j["rows"][0]["committed_gpus_needed"], 48);
  EXPECT_TRUE(j["rows"][1]["committed_gpus_needed"].is_null());
  EXPECT_TRUE(j["rows"][2]["at_most"].get<bool>());
}

// The engine runs the scaled fleet and bills it: two 8-GPU jobs with deadlines both keep them on
// four owned nodes and on two; on one node (4/16) the second starts late and misses.
TEST(GpusNeededTest, TheEngineRunsAndBillsTheScaledFleet) {
  FleetWeekScenario s = testing::OnePoolWeek("needed", sim::Tier::kOwned, 32, 2.0, 64, 6);
  for (int i = 0; i < 2; ++i) {
    TrainingJob j = testing::OneStepPerSecondJob(i + 1, 0, 8, 1, 2.0, 600);
    j.deadline_s = 3 * kHour;
    s.jobs.push_back(j);
  }
  const StackConfig stack = SeedanceStack();
  auto full = RunFleetWeek(s, stack);
  auto half = RunFleetWeek(WithCommittedScaled(s, 8, 16), stack);
  auto quarter = RunFleetWeek(WithCommittedScaled(s, 4, 16), stack);
  ASSERT_TRUE(full.has_value() && half.has_value() && quarter.has_value());
  EXPECT_EQ(full->deadlines_met, 2);
  EXPECT_EQ(half->deadlines_met, 2);
  EXPECT_EQ(quarter->deadlines_met, 1);
  EXPECT_NEAR(full->committed_usd, 32 * 2.0 * 6, 1e-6);
  EXPECT_NEAR(half->committed_usd, 16 * 2.0 * 6, 1e-6);
  EXPECT_NEAR(quarter->committed_usd, 8 * 2.0 * 6, 1e-6);
}

}  // namespace
}  // namespace seedance::fleet
