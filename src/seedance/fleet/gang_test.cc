// Multi-node gangs in the fleet week's engine (issue 38, "the user's week"): a gang of several
// pods runs all or nothing on nodes of one pool (pods share a node where they fit), in every stack; it waits until
// enough nodes are free, holds them all, ends and is preempted as one; a gang wider than the fleet
// is counted, never lost. Small hand-built fleets, no serving (fast).
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "seedance/fleet/engine.h"
#include "seedance/fleet/engine_internal.h"
#include "seedance/fleet/scenario.h"
#include "seedance/fleet/test_week.h"

namespace seedance::fleet {
namespace {

constexpr double kHour = 3600;

// One GPU type (H100), one pool of `gpus` GPUs (nodes of 8), one Silver tenant with room for all.
FleetWeekScenario Fleet(sim::Tier tier, int gpus, double hours) {
  FleetWeekScenario s = testing::OnePoolWeek("gang", tier, gpus, tier == sim::Tier::kOwned ? 1.0 : 2.0, 128.0, hours);
  s.owned_marginal_usd_per_gpu_hour = {0.1};
  return s;
}

// A job of `gpus` GPUs in `pods` pods, one step per second on H100, `hours` of work.
TrainingJob Job(std::int64_t id, double arrival_s, int gpus, int pods, double hours) {
  return testing::OneStepPerSecondJob(id, arrival_s, gpus, pods, hours, 600);
}

std::vector<StackConfig> EveryStack() {
  return {StandardStack("least-allocated"), StandardStack("most-allocated"), CompetentStack(), SeedanceStack()};
}

TEST(FleetGangTest, AGangOfFourPodsOfEightRunsOnFourNodesOnlyWhenAllAreFreeAndEndsAsOne) {
  // Four owned nodes. An 8-GPU job holds one of them for the first hour; the 32-GPU gang (4 x 8)
  // arrives a minute later and must wait for all four nodes, then holds all 32 GPUs for an hour.
  FleetWeekScenario s = Fleet(sim::Tier::kOwned, 32, 4);
  s.jobs = {Job(1, 0, 8, 1, 1.0), Job(2, 60, 32, 4, 1.0)};
  for (const StackConfig& stack : EveryStack()) {
    auto o = RunFleetWeek(s, stack);
    ASSERT_TRUE(o.has_value()) << stack.name << ": " << o.error().message();
    EXPECT_EQ(o->jobs, 2) << stack.name;
    EXPECT_EQ(o->jobs_finished, 2) << stack.name;
    EXPECT_EQ(o->gangs, 1) << stack.name;
    EXPECT_EQ(o->gangs_run, 1) << stack.name;
    EXPECT_EQ(o->gangs_finished, 1) << stack.name;
    EXPECT_EQ(o->jobs_never_fit, 0) << stack.name;
    ASSERT_EQ(o->hourly.size(), 4u) << stack.name;
    // Hour 0: only the 8-GPU job runs although 24 GPUs (three nodes) are free: the gang waits.
    EXPECT_NEAR(o->hourly[0][kTraining], 8, 1e-9) << stack.name;
    EXPECT_NEAR(o->hourly[0][kFree], 24, 1e-9) << stack.name;
    // Hour 1: the gang holds all four nodes; hour 2: it has ended, every pod at once.
    EXPECT_NEAR(o->hourly[1][kTraining], 32, 1e-9) << stack.name;
    EXPECT_NEAR(o->hourly[2][kTraining], 0, 1e-9) << stack.name;
    EXPECT_NEAR(o->hourly[2][kFree], 32, 1e-9) << stack.name;
    // JCT: the blocker 1 h; the gang 59 min of waiting + 1 h.
    EXPECT_NEAR(o->jct_mean_h, (1.0 + (2 * kHour - 60) / kHour) / 2, 1e-9) << stack.name;
  }
}

TEST(FleetGangTest, ASpotDropOfOneNodePreemptsTheWholeGangWhichRunsAgainWhenFourNodesAreBack) {
  // Four spot nodes, then three for hour 2, then four again: the node taken back stops the gang,
  // and its three other pods are released with it (a gang runs whole or not at all).
  FleetWeekScenario s = Fleet(sim::Tier::kSpot, 32, 8);
  s.fleet.pools[0].spot = sim::SpotSeries(kHour, {4, 4, 3, 4, 4, 4, 4, 4}, 8);
  s.jobs = {Job(1, 0, 32, 4, 3.0)};
  for (const StackConfig& stack : EveryStack()) {
    auto o = RunFleetWeek(s, stack);
    ASSERT_TRUE(o.has_value()) << stack.name << ": " << o.error().message();
    EXPECT_EQ(o->spot_preemptions, 1) << stack.name;
    EXPECT_NEAR(o->hourly[1][kTraining], 32, 1e-9) << stack.name;
    EXPECT_NEAR(o->hourly[2][kTraining], 0, 1e-9) << stack.name;  // no pod of the gang runs on the three left
    EXPECT_GT(o->hourly[3][kTraining], 0) << stack.name;          // four nodes again: it runs again
    EXPECT_EQ(o->gangs_run, 1) << stack.name;
    EXPECT_EQ(o->jobs_finished, 1) << stack.name;
  }
}

TEST(FleetGangTest, AGangWiderThanTheFleetIsCountedNotLost) {
  // 32 owned GPUs: a 40-GPU gang (5 x 8) and a pod wider than a node (16 GPUs in one pod) can never
  // run; they are counted (jobs, jobs_never_fit) and the 8-GPU job beside them runs as usual.
  FleetWeekScenario s = Fleet(sim::Tier::kOwned, 32, 3);
  s.jobs = {Job(1, 0, 8, 1, 1.0), Job(2, 0, 40, 5, 1.0), Job(3, 60, 16, 1, 1.0)};
  for (const StackConfig& stack : EveryStack()) {
    auto o = RunFleetWeek(s, stack);
    ASSERT_TRUE(o.has_value()) << stack.name << ": " << o.error().message();
    EXPECT_EQ(o->jobs, 3) << stack.name;
    EXPECT_EQ(o->jobs_never_fit, 2) << stack.name;
    EXPECT_EQ(o->jobs_finished, 1) << stack.name;
    EXPECT_EQ(o->gangs, 1) << stack.name;
    EXPECT_EQ(o->gangs_run, 0) << stack.name;
  }
  // On 48 on-demand GPUs (six nodes of quota) the 40-GPU gang fits: the autoscaler boots five nodes.
  FleetWeekScenario cloud = Fleet(sim::Tier::kOnDemand, 48, 3);
  cloud.jobs = {Job(2, 0, 40, 5, 1.0)};
  for (const StackConfig& stack : EveryStack()) {
    auto o = RunFleetWeek(cloud, stack);
    ASSERT_TRUE(o.has_value()) << stack.name << ": " << o.error().message();
    EXPECT_EQ(o->jobs_never_fit, 0) << stack.name;
    EXPECT_EQ(o->jobs_finished, 1) << stack.name;
    EXPECT_EQ(o->nodes_booted, 5) << stack.name;
  }
}

TEST(FleetGangTest, PodsSmallerThanANodeShareNodesAsKubeSchedulerWouldPlaceThem) {
  // A JobSet of 4 pods x 1 GPU on one owned node of 8 GPUs: the pods share it (a gang has no
  // spreading rule); 4 pods x 2 GPUs on on-demand capacity: the autoscaler boots one node for all.
  FleetWeekScenario owned = Fleet(sim::Tier::kOwned, 8, 2);
  owned.jobs = {Job(1, 0, 4, 4, 1.0)};
  FleetWeekScenario cloud = Fleet(sim::Tier::kOnDemand, 16, 2);
  cloud.jobs = {Job(1, 0, 8, 4, 1.0)};
  for (const StackConfig& stack : EveryStack()) {
    auto o = RunFleetWeek(owned, stack);
    ASSERT_TRUE(o.has_value()) << stack.name << ": " << o.error().message();
    EXPECT_EQ(o->jobs_never_fit, 0) << stack.name;
    EXPECT_EQ(o->gangs_run, 1) << stack.name;
    EXPECT_EQ(o->jobs_finished, 1) << stack.name;
    EXPECT_NEAR(o->hourly[0][kTraining], 4, 1e-9) << stack.name;
    auto c = RunFleetWeek(cloud, stack);
    ASSERT_TRUE(c.has_value()) << stack.name << ": " << c.error().message();
    EXPECT_EQ(c->nodes_booted, 1) << stack.name;
    EXPECT_EQ(c->jobs_finished, 1) << stack.name;
  }
}

// The engine's id index (issue 39: Engine::Running's lookups): a dense table for dense ids, the
// map for sparse ones (an imported week keeps its scheduler's ids), the same answers either way.
TEST(FleetEngineIdIndexTest, DenseAndSparseIdsFindTheirIndexAndAMissingIdThrows) {
  detail::IdIndex dense, sparse;
  for (std::int64_t id = 100; id < 200; ++id) dense.Add(id, static_cast<std::size_t>(id - 100));
  sparse.Add(7, 0);
  sparse.Add(9'000'000'000, 1);
  dense.Seal();
  sparse.Seal();
  EXPECT_EQ(dense.at(100), 0u);
  EXPECT_EQ(dense.at(199), 99u);
  EXPECT_EQ(sparse.at(7), 0u);
  EXPECT_EQ(sparse.at(9'000'000'000), 1u);
  EXPECT_THROW(dense.at(99), std::out_of_range);
  EXPECT_THROW(dense.at(200), std::out_of_range);
  EXPECT_THROW(sparse.at(8), std::out_of_range);
  detail::IdIndex extremes;  // ids at both ends of int64: the map, no overflow
  extremes.Add(std::numeric_limits<std::int64_t>::min(), 0);
  extremes.Add(std::numeric_limits<std::int64_t>::max(), 1);
  extremes.Seal();
  EXPECT_EQ(extremes.at(std::numeric_limits<std::int64_t>::max()), 1u);
  EXPECT_THROW(extremes.at(0), std::out_of_range);
}

// A week whose job ids are sparse (as an imported history's) runs as a dense one does.
TEST(FleetGangTest, SparseJobIdsRunAsDenseOnes) {
  FleetWeekScenario dense = Fleet(sim::Tier::kOwned, 16, 4);
  dense.jobs = {Job(1, 0, 8, 1, 1.0), Job(2, 60, 16, 2, 1.0)};
  FleetWeekScenario sparse = dense;
  sparse.jobs[0].id = 1'000;
  sparse.jobs[1].id = 5'000'000;
  for (const StackConfig& stack : EveryStack()) {
    auto a = RunFleetWeek(dense, stack);
    auto b = RunFleetWeek(sparse, stack);
    ASSERT_TRUE(a.has_value() && b.has_value()) << stack.name;
    EXPECT_EQ(a->total_usd, b->total_usd) << stack.name;
    EXPECT_EQ(a->jobs_finished, 2) << stack.name;
    EXPECT_EQ(b->jobs_finished, 2) << stack.name;
    EXPECT_EQ(a->jct_mean_h, b->jct_mean_h) << stack.name;
  }
}

}  // namespace
}  // namespace seedance::fleet
