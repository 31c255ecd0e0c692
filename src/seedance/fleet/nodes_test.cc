// Cloud nodes under Karpenter in the fleet week's engine (issue 39): right-sized nodes (the shapes
// the fleet file says the cloud sells), and consolidation of underutilized nodes, Karpenter's
// (evicted pods restart from their last checkpoint) against Seedance's (checkpoint, then restart).
// Small hand-built fleets, no serving (fast).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"
#include "seedance/fleet/test_week.h"

namespace seedance::fleet {
namespace {

constexpr double kHour = 3600;
constexpr double kPrice = 2.0;  // per GPU-hour, every shape

// One on-demand H100 pool of 16 GPUs selling `shapes` (empty: nodes of 8), one Silver tenant.
FleetWeekScenario Fleet(std::vector<int> shapes, double hours) {
  FleetWeekScenario s = testing::OnePoolWeek("nodes", sim::Tier::kOnDemand, 16, kPrice, 64.0, hours);
  s.fleet.pools[0].node_gpus = std::move(shapes);
  s.owned_marginal_usd_per_gpu_hour = {0.0};
  return s;
}

// A one-pod job of `gpus` GPUs, one step per second, `hours` of work, a checkpoint every 1,000 s.
TrainingJob Job(std::int64_t id, double arrival_s, int gpus, double hours) {
  return testing::OneStepPerSecondJob(id, arrival_s, gpus, 1, hours, 1000);
}

StackConfig Without(StackConfig c) {
  c.consolidation = StackConfig::Consolidation::kNone;
  return c;
}

TEST(FleetNodesTest, ANotebookBootsAOneGpuNodeWhereTheTypeSellsOne) {
  // One notebook of one GPU, in use for an hour then closed. With Karpenter the pool boots a 1-GPU
  // node (the type sells one); without it, or where the type sells only 8-GPU nodes, an 8-GPU node.
  auto run = [](std::vector<int> shapes, const StackConfig& stack) {
    FleetWeekScenario s = Fleet(std::move(shapes), 3);
    DevPod d;
    d.id = 1;
    d.arrival_s = 0;
    d.active_s = kHour;
    d.idle_tail_s = 0;
    s.dev = {d};
    auto o = RunFleetWeek(s, stack);
    EXPECT_TRUE(o.has_value()) << stack.name;
    return o.has_value() ? *o : FleetWeekOutcome{};
  };
  for (const StackConfig& stack : {CompetentStack(), SeedanceStack()}) {
    const FleetWeekOutcome small = run({1, 8}, stack);
    EXPECT_EQ(small.nodes_booted, 1) << stack.name;
    // No GPU of the node left free but while it waits consolidateAfter, empty, at the end.
    EXPECT_NEAR(small.gpu_hours[kFree], stack.consolidate_after_s / kHour, 0.02) << stack.name;
    EXPECT_NEAR(small.gpu_hours[kDevActive], 1, 0.05) << stack.name;
    const FleetWeekOutcome only8 = run({8}, stack);
    EXPECT_NEAR(only8.gpu_hours[kFree], 7 + 8 * stack.consolidate_after_s / kHour, 0.3) << stack.name;
    EXPECT_LT(small.total_usd * 6, only8.total_usd) << stack.name;
  }
  const FleetWeekOutcome before = run({1, 8}, CompetentStackWithoutKarpenter());
  EXPECT_NEAR(before.gpu_hours[kFree], 7, 1.5);  // 8-GPU node, kept through the scale-down delay
  EXPECT_GT(before.total_usd, 6 * run({1, 8}, CompetentStack()).total_usd);
}

TEST(FleetNodesTest, AFourGpuJobTakesTheSmallestShapeThatHoldsIt) {
  FleetWeekScenario s = Fleet({1, 2, 4, 8}, 2);
  s.jobs = {Job(1, 0, 4, 1.0)};
  auto o = RunFleetWeek(s, CompetentStack());
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->jobs_finished, 1);
  EXPECT_EQ(o->nodes_booted, 1);
  EXPECT_NEAR(o->gpu_hours[kFree], 4 * CompetentStack().consolidate_after_s / kHour, 0.02);
  EXPECT_NEAR(o->gpu_hours[kTraining], 4, 0.05);
}

// Node 1: job A (4 GPUs, 6 h) and X (4 GPUs, half an hour); node 2, booted a minute later for B (4
// GPUs, 6 h). When X ends, two 8-GPU nodes are half empty and A fits beside B.
FleetWeekScenario HalfEmpty() {
  FleetWeekScenario s = Fleet({}, 3);
  s.jobs = {Job(1, 0, 4, 6.0), Job(2, 0, 4, 0.5), Job(3, 60, 4, 6.0)};
  return s;
}

TEST(FleetNodesTest, AHalfEmptyCloudNodeIsConsolidatedAndTheBillFalls) {
  const FleetWeekScenario s = HalfEmpty();
  for (const StackConfig& stack : {CompetentStack(), SeedanceStack()}) {
    auto with = RunFleetWeek(s, stack);
    auto without = RunFleetWeek(s, Without(stack));
    ASSERT_TRUE(with.has_value() && without.has_value()) << stack.name;
    EXPECT_EQ(without->consolidations, 0) << stack.name;
    EXPECT_EQ(with->consolidations, 1) << stack.name;
    EXPECT_EQ(with->consolidation_moves, 1) << stack.name;
    // Two 8-GPU nodes for 3 h without; one for most of it with (one goes when X ends: its pod
    // fits beside the other, whose node has been unchanged for consolidateAfter).
    EXPECT_NEAR(without->total_usd, 16 * kPrice * 3 - 8 * kPrice / 60, 1e-6) << stack.name;  // node 2 from 60 s
    EXPECT_LT(with->total_usd, without->total_usd - 8 * kPrice * 2) << stack.name;
    EXPECT_NEAR(with->gpu_hours[kFree], 4 * 0.6, 0.6) << stack.name;  // half of node 2 until A arrives
  }
}

TEST(FleetNodesTest, KarpenterLosesTheWorkSinceTheCheckpointSeedanceOnlyTheCheckpointAndRestore) {
  // Work done in steps of every job (one step per second each): the move costs Karpenter the
  // steps since the moved job's last checkpoint plus the restore; Seedance the checkpoint (30 s)
  // and the restore (60 s) alone.
  const FleetWeekScenario s = HalfEmpty();
  auto lost = [&](const StackConfig& stack) {
    auto with = RunFleetWeek(s, stack);
    auto without = RunFleetWeek(s, Without(stack));
    EXPECT_TRUE(with.has_value() && without.has_value());
    return with.has_value() && without.has_value() ? without->training_pflop - with->training_pflop : -1.0;
  };
  const double restore = s.fleet.restart_s, checkpoint = s.fleet.checkpoint_cost_s;
  EXPECT_NEAR(lost(SeedanceStack()), checkpoint + restore, 1e-6);
  // Karpenter's eviction: when X ends (1,980 s), node 2 has been unchanged since B started there
  // (240 s) for longer than consolidateAfter, and B fits beside A: B is evicted, 1,740 s after it
  // started, losing the 740 s since its checkpoint at 1,000 s.
  const StackConfig karpenter = CompetentStack();
  ASSERT_LE(karpenter.consolidate_after_s, 1980 - 240);
  EXPECT_NEAR(lost(karpenter), std::fmod(1980 - 240, 1000) + restore, 1e-6);
  EXPECT_GT(lost(karpenter), 2 * lost(SeedanceStack()));
}

TEST(FleetNodesTest, KarpenterHonoursDoNotDisruptAndNeverMovesNotebooksOrServing) {
  // Training marked do-not-disrupt: nothing is moved; the half-empty nodes stay.
  StackConfig dnd = CompetentStack();
  dnd.training_do_not_disrupt = true;
  auto o = RunFleetWeek(HalfEmpty(), dnd);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->consolidations, 0);
  // A notebook pins its node (do-not-disrupt) in both stacks: node 1 holds A and X, node 2 is
  // booted for the notebook; when X ends, A moves to the notebook's node, never the notebook.
  FleetWeekScenario s = Fleet({}, 3);
  s.jobs = {Job(1, 0, 4, 6.0), Job(2, 0, 4, 0.5)};
  DevPod d;
  d.id = 10;
  d.arrival_s = 60;
  d.active_s = 3 * kHour;
  s.dev = {d};
  for (const StackConfig& stack : {CompetentStack(), SeedanceStack()}) {
    auto r = RunFleetWeek(s, stack);
    ASSERT_TRUE(r.has_value()) << stack.name;
    EXPECT_EQ(r->consolidations, 1) << stack.name;
    EXPECT_EQ(r->consolidation_moves, 1) << stack.name;
    EXPECT_EQ(r->dev_cut_in_use, 0) << stack.name;
    EXPECT_NEAR(r->hourly[1][kDevActive], 1, 1e-9) << stack.name;
    EXPECT_NEAR(r->hourly[2][kDevActive], 1, 1e-9) << stack.name;
  }
}

}  // namespace
}  // namespace seedance::fleet
