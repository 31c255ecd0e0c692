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

}  // namespace
}  // namespace seedance::fleet
