// Unit tests of the simulator's parts: Capacity, Billing and the observation layer.
#include <gtest/gtest.h>

#include <vector>

#include "seedance/sim/billing.h"
#include "seedance/sim/capacity.h"
#include "seedance/sim/observation.h"
#include "seedance/sim/policies/seedance_cost_policy.h"

namespace seedance::sim {
namespace {

FleetSpec Fleet(Tier tier, int max_gpus, std::vector<int> series = {}) {
  FleetSpec f;
  f.name = "units";
  f.gpu_types = {"V100"};
  f.cold_start_s = 100;
  f.scale_down_delay_s = 600;
  PoolSpec p;
  p.type = 0;
  p.tier = tier;
  p.max_gpus = max_gpus;
  p.usd_per_gpu_hour = 3.6;
  if (!series.empty()) p.spot = SpotSeries(360, std::move(series), 1);
  f.pools.push_back(p);
  return f;
}

TEST(Capacity, ReactiveProvisionsWithAColdStartAndReleasesAfterTheDelay) {
  FleetSpec f = Fleet(Tier::kOnDemand, 8);
  std::vector<Decision> log;
  Capacity c(f, AutoscaleMode::kReactive, 360, [&log](const Decision& d) { log.push_back(d); });
  c.Autoscale({2}, 0);
  EXPECT_EQ(c.held(0), 2);
  EXPECT_EQ(c.Ready(0, 50), 0);
  EXPECT_EQ(c.Ready(0, 100), 2);
  c.Autoscale({0}, 200);
  EXPECT_EQ(c.held(0), 2);  // below demand for less than the delay
  c.Autoscale({0}, 800);
  EXPECT_EQ(c.held(0), 0);
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0].action, DecisionAction::kProvision);
  EXPECT_EQ(log[0].gpus, 2);
  EXPECT_EQ(log[1].action, DecisionAction::kRelease);
  EXPECT_EQ(log[1].time_s, 800);
  EXPECT_EQ(log[1].job_id, -1);
}

TEST(Capacity, SpotFollowsTheSeriesAndInterruptsTheLatestJobsFirst) {
  FleetSpec f = Fleet(Tier::kSpot, 4, {3, 1, 3});
  Capacity c(f, AutoscaleMode::kReactive, 360, nullptr);
  EXPECT_EQ(c.CapacityAt(0, 0), 3);
  EXPECT_EQ(c.CapacityAt(0, 400), 1);
  c.Autoscale({5}, 0);
  EXPECT_EQ(c.held(0), 3);  // capped at what spot has now
  c.AddInUse(0, 3);
  const double inf = std::numeric_limits<double>::infinity();
  // Jobs 1 (1 GPU) and 2 (2 GPUs); the drop to 1 at t=360 takes job 2's GPUs.
  auto stop = c.Interruptions({SpotRun{0, 1, 1, inf}, SpotRun{0, 2, 2, inf}}, 0, 360);
  EXPECT_EQ(stop[0], inf);
  EXPECT_EQ(stop[1], 360);
  // A job that finishes before the drop gives its GPUs back: the one left fits the new capacity.
  stop = c.Interruptions({SpotRun{0, 1, 1, inf}, SpotRun{0, 2, 2, 300}}, 0, 360);
  EXPECT_EQ(stop[0], inf);
  EXPECT_EQ(stop[1], inf);
  // Between rounds held spot above the series shrinks.
  c.ClearInUse();
  c.Autoscale({3}, 400);
  EXPECT_EQ(c.held(0), 1);
}

// Issue 29: GPUs of runs that completed before a drop were counted as in use, so the drop took
// more jobs than it had to. 8 spot GPUs, four 2-GPU jobs; capacity 8 -> 6 at t=120 -> 3 at t=240.
// Job 2 is done at 100 and job 4 at 200: at 120 the 6 GPUs still running fit; at 240 the 4 still
// running exceed 3, so the newest of them (job 3) alone is interrupted. (Counting finished GPUs
// interrupted job 4 at 120 and jobs 3 and 1 at 240.)
TEST(Capacity, FinishedRunsGiveTheirSpotGpusBackBeforeADrop) {
  FleetSpec f = Fleet(Tier::kSpot, 8);
  f.pools[0].spot = SpotSeries(120, {8, 6, 3, 3}, 1);
  Capacity c(f, AutoscaleMode::kReactive, 360, nullptr);
  c.Autoscale({8}, 0);
  ASSERT_EQ(c.held(0), 8);
  c.AddInUse(0, 8);
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<SpotRun> runs = {SpotRun{0, 1, 2, inf}, SpotRun{0, 2, 2, 100},
                                     SpotRun{0, 3, 2, inf}, SpotRun{0, 4, 2, 200}};
  const std::vector<double> stop = c.Interruptions(runs, 0, 360);
  EXPECT_EQ(stop, (std::vector<double>{inf, inf, 240, inf}));
}

TEST(Billing, BillsHeldGpusPerSecondWithIdleAndColdStartShares) {
  FleetSpec f = Fleet(Tier::kOnDemand, 8);
  SimOptions o;
  SimResult r;
  r.cost_by_pool_usd.assign(1, 0);
  std::vector<PoolInterval> intervals;
  o.on_pool_interval = [&intervals](const PoolInterval& iv) { intervals.push_back(iv); };
  Capacity c(f, AutoscaleMode::kReactive, 360, nullptr);
  Billing b(f, o, &r);
  c.Autoscale({2}, 0);
  c.AddInUse(0, 1);
  b.AddUse(0, 7, "alice", 1000);
  b.BillHeld(c, 0, 1000);
  EXPECT_DOUBLE_EQ(r.gpu_cost_usd, 2 * 1000 * 3.6 / 3600);
  EXPECT_DOUBLE_EQ(r.idle_held_usd, 1 * 1000 * 3.6 / 3600);
  EXPECT_DOUBLE_EQ(r.cold_start_idle_usd, f.ColdStartIdleUsd(2 * 100));
  EXPECT_DOUBLE_EQ(r.held_gpu_seconds, 2000);
  ASSERT_EQ(intervals.size(), 1u);
  EXPECT_EQ(intervals[0].uses.size(), 1u);
  EXPECT_EQ(intervals[0].uses[0].tenant, "alice");
  b.Finish();
  ASSERT_EQ(r.utilization.size(), 1u);
  EXPECT_NEAR(r.utilization[0].held_gpus, 2000.0 / 3600, 1e-12);
}

TEST(SpotWatch, TrailingWindowStatisticsFromThePastOnly) {
  const std::vector<int> v{4, 2, 4, 1, 1, 3, 0, 0};
  SpotSeries s(100, v, 1);
  SpotWatch w(&s, 8, 300);
  w.AdvanceTo(0);
  EXPECT_EQ(w.history().observed_s, 100);
  EXPECT_EQ(w.history().drops, 0);
  w.AdvanceTo(350);  // ticks 1..3 (2, 4, 1) in the window: drops at ticks 1 and 3
  SpotHistory h = w.history();
  EXPECT_TRUE(h.tracked);
  EXPECT_EQ(h.observed_s, 300);
  EXPECT_EQ(h.drops, 2);
  EXPECT_DOUBLE_EQ(h.MeanTimeBetweenDrops(), 150);
  EXPECT_DOUBLE_EQ(h.mean_gpus, 7.0 / 3);
  // Another future gives the same statistics now.
  std::vector<int> other = v;
  other[4] = other[5] = other[6] = other[7] = 9;
  SpotSeries s2(100, other, 1);
  SpotWatch w2(&s2, 8, 300);
  w2.AdvanceTo(350);
  EXPECT_EQ(w2.history().drops, h.drops);
  EXPECT_EQ(w2.history().mean_gpus, h.mean_gpus);
  // A jump far ahead keeps only the window; availability counts ticks with a GPU.
  w.AdvanceTo(799);  // ticks 5..7: 3, 0, 0
  EXPECT_EQ(w.history().drops, 1);
  EXPECT_DOUBLE_EQ(w.history().Availability(), 1.0 / 3);
}

TEST(Observer, ViewsCarryAttainedWorkAndTheTrailingSpotStatistics) {
  FleetSpec f = Fleet(Tier::kSpot, 4, {3, 1, 3});
  SimOptions o;
  Observer obs(f, o);
  Capacity c(f, AutoscaleMode::kReactive, 360, nullptr);
  JobSpec spec;
  spec.id = 5;
  spec.total_steps = 100;
  spec.steps_per_s = {1};
  ActiveJob a;
  a.spec = &spec;
  a.attained = 40;
  a.remaining = 60;
  a.service_s_by_pool = {12};
  const std::vector<ActiveJob> active{a};
  SimView v;
  obs.Build(400, active, c, &v);
  ASSERT_EQ(v.jobs.size(), 1u);
  EXPECT_EQ(v.jobs[0].attained_steps, 40);
  EXPECT_EQ(v.jobs[0].service_s_by_pool[0], 12);
  EXPECT_EQ(v.pools[0].capacity, 1);
  EXPECT_EQ(v.pools[0].spot.drops, 1);
  OracleView oracle = obs.BuildOracle(active);
  EXPECT_EQ(oracle.remaining_steps[0], 60);
  EXPECT_EQ(oracle.spot_mtbf_s[0], f.pools[0].spot.MeanTimeBetweenDrops());
}

TEST(DecisionLog, StartsStopsAndPoolChangesInOrder) {
  // One 1-GPU job of 1,000 steps on spot that drops to 0 at t=360 and returns at 720; the
  // on-demand-only FIFO logs provision + start, then release after the scale-down delay.
  Workload w;
  w.name = "w";
  w.gpu_types = {"V100"};
  JobSpec j;
  j.id = 0;
  j.job_type = "t";
  j.total_steps = 1000;
  j.steps_per_s = {1.0};
  w.jobs.push_back(j);
  FleetSpec f = Fleet(Tier::kOnDemand, 1);
  std::vector<Decision> log;
  SimOptions o;
  o.on_decision = [&log](const Decision& d) { log.push_back(d); };
  FifoOnDemandPolicy fifo;
  ASSERT_TRUE(Simulate(w, f, fifo, o).has_value());
  // The completion is logged as an outcome (issue 29), at 1,100 s: 100 s cold start + 1,000 steps.
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].action, DecisionAction::kProvision);
  EXPECT_EQ(log[1].action, DecisionAction::kStart);
  EXPECT_EQ(log[1].job_id, 0);
  EXPECT_EQ(log[2].action, DecisionAction::kFinish);
  EXPECT_EQ(log[2].job_id, 0);
  EXPECT_EQ(log[2].time_s, 1100);
  EXPECT_EQ(log[2].pool, 0);
  EXPECT_EQ(log[3].action, DecisionAction::kRelease);
  // On spot: the drop at 360 interrupts the job (an outcome, not a stop decision); it starts
  // again when spot returns and its finish is logged.
  f = Fleet(Tier::kSpot, 1, {1, 0, 1, 1, 1, 1});
  log.clear();
  config::CostAwareConfig c;
  SeedanceCostPolicy seed(c);
  auto r = Simulate(w, f, seed, o);
  ASSERT_TRUE(r.has_value());
  std::vector<std::string> jobs;
  for (const auto& d : log) {
    if (d.job_id >= 0) jobs.push_back(std::string(DecisionActionName(d.action)) + "@" + std::to_string(static_cast<int>(d.time_s)));
  }
  EXPECT_EQ(jobs, (std::vector<std::string>{"start@0", "interrupt@360", "start@720", "finish@1915"}));
  EXPECT_EQ(r->spot_interruptions, 1);
}

}  // namespace
}  // namespace seedance::sim
