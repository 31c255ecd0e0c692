// The time-aware lower bound (issue 39 item 2): its tightenings on small constructed weeks (fast).
#include <gtest/gtest.h>

#include "seedance/fleet/bound.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"
#include "seedance/fleet/test_week.h"

namespace seedance::fleet {
namespace {

constexpr double kHour = 3600;

// `hours` of an on-demand H100 pool of 16 GPUs at $4 and a spot pool of 12 at $1 (no availability
// series: the pool's 12 GPUs are there all along), one Silver tenant, an 8-GPU and a 4-GPU job
// arriving at 0 with an hour of work each (8 + 4 GPU-hours).
FleetWeekScenario SpotWeek(double hours) {
  FleetWeekScenario s = testing::OnePoolWeek("spot", sim::Tier::kOnDemand, 16, 4.0, 64.0, hours);
  sim::PoolSpec spot = s.fleet.pools[0];
  spot.tier = sim::Tier::kSpot;
  spot.max_gpus = 12;
  spot.usd_per_gpu_hour = 1.0;
  spot.committed = false;
  s.fleet.pools.push_back(spot);
  s.jobs = {testing::OneStepPerSecondJob(1, 0, 8, 1, 1.0, 600), testing::OneStepPerSecondJob(2, 0, 4, 1, 1.0, 600)};
  return s;
}

// Spot in whole nodes (2026-12-07): the engine holds spot nodes of 8 GPUs only while nodes x 8 <=
// the GPUs available, so of 12 spot GPUs a stack holds at most 8. The 12 GPU-hours of the hour
// then cost 8 on spot ($8) and 4 on-demand ($16): $24. The bound before counted all 12 spot GPUs
// and said $12; it fails here if the spot capacity is not rounded down to whole nodes.
TEST(FleetWeekBoundTighteningTest, SpotIsHeldInWholeNodes) {
  const FleetWeekScenario s = SpotWeek(1);
  EXPECT_EQ(BoundPoolGpusAt(s.fleet.pools[1], 0), 8);
  EXPECT_EQ(BoundPoolGpusAt(s.fleet.pools[0], 0), 16);
  FleetWeekOutcome out;
  out.training_pflop = 2 * kHour;  // both jobs' whole work
  auto b = FleetWeekLowerBoundUsd(s, out);
  ASSERT_TRUE(b.has_value()) << b.error().message();
  EXPECT_NEAR(*b, 8.0 + 16.0, 1e-6);
}

// The same week, long enough for the engine to finish both jobs: no stack pays less than the
// bound for what it did (the rounding is the engine's rule, so no stack holds the 12).
TEST(FleetWeekBoundTighteningTest, NoStackPaysLessOnTheSpotWeek) {
  const FleetWeekScenario s = SpotWeek(4);
  for (const StackConfig& stack : {StandardStack("most-allocated"), CompetentStack(), SeedanceStack()}) {
    auto r = RunFleetWeek(s, stack);
    ASSERT_TRUE(r.has_value()) << stack.name;
    EXPECT_GT(r->training_pflop, 0) << stack.name;
    auto b = FleetWeekLowerBoundUsd(s, *r);
    ASSERT_TRUE(b.has_value()) << stack.name << ": " << b.error().message();
    EXPECT_LE(*b, r->total_usd + 1e-6) << stack.name;
  }
}

// The useful-work bound (round 7): 8 owned GPUs at $2 an hour for 4 hours ($64) and 8 on-demand at
// `cloud_usd`, two 8-GPU jobs longer than the week at 450 PFLOP a GPU-hour. Owned alone: 14,400
// PFLOP for $64, 225 PFLOP per $; renting the cloud too doubles the work for 8 x 4 x cloud_usd more.
FleetWeekScenario OwnedWithCloud(double cloud_usd) {
  FleetWeekScenario s = testing::OnePoolWeek("owned", sim::Tier::kOwned, 8, 2.0, 64.0, 4);
  s.fleet.pools.push_back(testing::Pool(0, sim::Tier::kOnDemand, 8, cloud_usd));
  s.jobs = {testing::OneStepPerSecondJob(1, 0, 8, 1, 100.0, 600), testing::OneStepPerSecondJob(2, 0, 8, 1, 100.0, 600)};
  return s;
}

TEST(FleetWeekUsefulWorkBoundTest, TheCloudCountsOnlyWhereItRaisesTheWorkPerDollar) {
  const FleetWeekOutcome nothing_imposed;  // no serving, no deadlines
  // At $1 a GPU-hour the cloud adds 14,400 PFLOP for $32: 28,800 for $96, 300 per $.
  const FleetWeekScenario cheap = OwnedWithCloud(1.0);
  auto b = FleetWeekUsefulWorkUpperBound({&cheap}, {&nothing_imposed});
  ASSERT_TRUE(b.has_value()) << b.error().message();
  EXPECT_NEAR(b->PflopPerUsd(), 300.0, 1e-6);
  EXPECT_NEAR(b->cloud_usd, 32.0, 1e-6);
  EXPECT_NEAR(b->committed_usd, 64.0, 1e-6);
  // At $4 it would be 28,800 for $192 (150 per $): the bound keeps to the owned GPUs, 225 per $,
  // found on the third solve (r = 0, then 150, then 225, which no longer rises).
  const FleetWeekScenario dear = OwnedWithCloud(4.0);
  b = FleetWeekUsefulWorkUpperBound({&dear}, {&nothing_imposed});
  ASSERT_TRUE(b.has_value()) << b.error().message();
  EXPECT_NEAR(b->PflopPerUsd(), 225.0, 1e-6);
  EXPECT_NEAR(b->cloud_usd, 0.0, 1e-6);
  EXPECT_EQ(b->iterations, 3);
  // Two weeks at once: the set's ratio of sums, (28,800 + 14,400) / (96 + 64) = 270 per $ (the
  // dear week keeps off the cloud at that ratio, the cheap one rents it).
  b = FleetWeekUsefulWorkUpperBound({&cheap, &dear}, {&nothing_imposed, &nothing_imposed});
  ASSERT_TRUE(b.has_value()) << b.error().message();
  EXPECT_NEAR(b->PflopPerUsd(), 270.0, 1e-6);
}

// No stack the engine runs does more PFLOP per $ than the bound on those weeks, each with its own
// serving and deadlines imposed (none here).
TEST(FleetWeekUsefulWorkBoundTest, NoStackDoesMoreWorkPerDollar) {
  for (double cloud_usd : {1.0, 4.0}) {
    const FleetWeekScenario s = OwnedWithCloud(cloud_usd);
    for (const StackConfig& stack : {StandardStack("most-allocated"), CompetentStack(), SeedanceStack()}) {
      auto r = RunFleetWeek(s, stack);
      ASSERT_TRUE(r.has_value()) << stack.name;
      EXPECT_GT(r->training_pflop, 0) << stack.name;
      auto b = FleetWeekUsefulWorkUpperBound({&s}, {&*r});
      ASSERT_TRUE(b.has_value()) << stack.name << ": " << b.error().message();
      EXPECT_LE(r->training_pflop / r->total_usd, b->PflopPerUsd() * (1 + 1e-9)) << stack.name << " at $" << cloud_usd;
    }
  }
}

}  // namespace
}  // namespace seedance::fleet
