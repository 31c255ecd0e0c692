#include "seedance/sim/engine.h"

#include <gtest/gtest.h>

#include "seedance/sim/testing/jobs.h"

#include <cmath>
#include <string>

#include "seedance/sim/gavel_protocol.h"
#include "seedance/sim/lower_bound.h"
#include "seedance/sim/policies/gavel_policies.h"
#include "seedance/sim/policies/seedance_cost_policy.h"
#include "seedance/sim/scenarios.h"
#include "seedance/sim/workloads.h"

namespace seedance::sim {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;

using testing::Job;

// A workload of one single-GPU job of `steps` at 1 step/s on a V100, arriving at 0.
Workload OneV100Job(double steps) {
  Workload w;
  w.name = "w";
  w.gpu_types = {"V100"};
  w.jobs.push_back(Job(0, 0, steps, {1.0}));
  return w;
}

FleetSpec OneTypeFleet(Tier tier, int gpus, double price) {
  FleetSpec f;
  f.name = "test";
  f.gpu_types = {"V100"};
  PoolSpec p;
  p.type = 0;
  p.tier = tier;
  p.max_gpus = gpus;
  p.usd_per_gpu_hour = price;
  f.pools.push_back(p);
  f.cold_start_s = 0;
  f.restart_s = 0;
  f.scale_down_delay_s = 0;
  return f;
}

// One V100 on-demand GPU at $3/h and one spot GPU at $1/h that follows `series` (ticks of
// gap_s; empty: always there).
FleetSpec OnDemandAndSpot(std::vector<int> series, double gap_s = 360) {
  FleetSpec f = OneTypeFleet(Tier::kOnDemand, 1, 3.0);
  PoolSpec spot;
  spot.type = 0;
  spot.tier = Tier::kSpot;
  spot.max_gpus = 1;
  spot.usd_per_gpu_hour = 1.0;
  if (!series.empty()) spot.spot = SpotSeries(gap_s, std::move(series), 1);
  f.pools.push_back(spot);
  return f;
}

// One on-demand GPU of a slow cheap type (K80, $1/h) and one of a fast dear type (V100, $3/h),
// and a job of 36,000 steps at 1 and 2 steps/s: $10 in 10 h or $15 in 5 h.
FleetSpec SlowAndFastFleet(Workload* w) {
  w->name = "w";
  w->gpu_types = {"K80", "V100"};
  w->jobs.push_back(Job(0, 0, 36000, {1.0, 2.0}));
  FleetSpec f;
  f.name = "two";
  f.gpu_types = w->gpu_types;
  for (int t = 0; t < 2; ++t) {
    PoolSpec p;
    p.type = t;
    p.tier = Tier::kOnDemand;
    p.max_gpus = 1;
    p.usd_per_gpu_hour = t == 0 ? 1.0 : 3.0;
    f.pools.push_back(p);
  }
  f.cold_start_s = 0;
  f.restart_s = 0;
  return f;
}

// One 4 h job on OnDemandAndSpot(series) under Seedance with reactive scaling, no wait for spot,
// and the given warm-up and cooldown.
SimResult RunOneSpotJob(const std::vector<int>& series, double warmup_s, double cooldown_s) {
  Workload w = OneV100Job(4 * 3600);
  config::CostAwareConfig c;
  c.autoscale = AutoscaleMode::kReactive;
  c.spot_patience = 0;
  c.warmup_window_s = warmup_s;
  c.spot_return_cooldown_s = cooldown_s;
  SeedanceCostPolicy pol(c);
  auto r = Simulate(w, OnDemandAndSpot(series), pol, SimOptions{});
  EXPECT_TRUE(r.has_value());
  return r.has_value() ? *r : SimResult{};
}

TEST(Engine, OwnedJobRunsToCompletionAndIsBilledByUse) {
  Workload w = OneV100Job(3600);  // one hour of work
  FleetSpec f = OneTypeFleet(Tier::kOwned, 2, 2.0);
  FifoOnDemandPolicy fifo;  // on-demand only... owned counts as not-spot
  auto r = Simulate(w, f, fifo, SimOptions{});
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->jobs.size(), 1u);
  EXPECT_NEAR(r->jobs[0].finish_s, 3600, 1e-6);
  EXPECT_NEAR(r->total_cost_usd, 2.0, 1e-6);  // 1 GPU-hour at $2
  EXPECT_NEAR(r->AvgJctHours(), 1.0, 1e-9);
}

TEST(Engine, OnDemandBillsFromRequestIncludingColdStartAndScaleDownDelay) {
  Workload w = OneV100Job(3600);
  FleetSpec f = OneTypeFleet(Tier::kOnDemand, 4, 3.6);
  f.cold_start_s = 360;        // one round
  f.scale_down_delay_s = 720;  // two rounds
  f.usd_per_core_s = 0;
  f.usd_per_gib_s = 0;
  FifoOnDemandPolicy fifo;
  auto r = Simulate(w, f, fifo, SimOptions{});
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->jobs[0].finish_s, 360 + 3600, 1e-6);  // waits for the boot
  // Held from t=0 through the job's end plus the scale-down delay: 0.1 + 1 + 0.2 h at $3.6.
  EXPECT_NEAR(r->total_cost_usd, 3.6 * (0.1 + 1.0 + 0.2), 1e-6);
  EXPECT_GT(r->idle_held_usd, 0);
}

// A GPU that finishes booting mid-round takes its job at once (a pod binds when its node is
// ready), not at the next scheduling round.
TEST(Engine, JobStartsWhenItsGpuIsReadyMidRound) {
  Workload w = OneV100Job(3600);
  FleetSpec f = OneTypeFleet(Tier::kOnDemand, 4, 3.6);
  f.cold_start_s = 180;  // half a round
  f.usd_per_core_s = 0;
  f.usd_per_gib_s = 0;
  FifoOnDemandPolicy fifo;
  auto r = Simulate(w, f, fifo, SimOptions{});
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->jobs[0].first_start_s, 180, 1e-6);
  EXPECT_NEAR(r->jobs[0].finish_s, 180 + 3600, 1e-6);
  // Gavel's rounds start jobs only at round boundaries.
  SimOptions gavel;
  gavel.gavel_rounds = true;
  auto g = Simulate(w, f, fifo, gavel);
  ASSERT_TRUE(g.has_value());
  EXPECT_NEAR(g->jobs[0].first_start_s, 360, 1e-6);
}

TEST(Engine, SpotInterruptionLosesWorkSinceTheLastCheckpoint) {
  Workload w = OneV100Job(7200);  // two hours
  // Available for 1 h, then gone for 1 h, repeating.
  std::vector<int> series(12, 1);
  series.resize(24, 0);
  FleetSpec f = OnDemandAndSpot(series, 300);
  config::CostAwareConfig c;
  c.spot_patience = 0;
  c.autoscale = AutoscaleMode::kReactive;
  SeedanceCostPolicy pol(c);
  auto r = Simulate(w, f, pol, SimOptions{});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->spot_interruptions, 1);
  EXPECT_EQ(r->jobs[0].preemptions, 1);
  EXPECT_GT(r->jobs[0].finish_s, 7200);  // lost work and restart cost time
  EXPECT_LT(r->useful_gpu_seconds, r->busy_gpu_seconds);
  // Conservation: pool costs add up to the GPU bill.
  double sum = 0;
  for (double c2 : r->cost_by_pool_usd) sum += c2;
  EXPECT_NEAR(sum, r->gpu_cost_usd, 1e-9);
}

// The spot wait priced by the job's time value (issue 39's frontier: CostAwareConfig::
// spot_wait_priced). Spot ($1/h) appears 2 h in; on-demand costs $3/h; the job has 4 h of work, so
// spot saves it about $8. At $0 an hour of its time it waits for spot; at $1,000 it starts on
// on-demand in the first round; at $10 it waits while the wait costs less than the saving it
// expects (a round more: with no run yet, the job's remaining work is the estimator's guess).
TEST(Engine, TheSpotWaitIsPricedByTheJobsTimeValue) {
  std::vector<int> series(20, 0);
  series.resize(200, 1);
  const auto run = [&](double value) {
    config::CostAwareConfig c;
    c.autoscale = AutoscaleMode::kReactive;
    c.spot_wait_priced = true;
    c.time_value_per_hour = value;
    SeedanceCostPolicy pol(c);
    auto r = Simulate(OneV100Job(4 * 3600), OnDemandAndSpot(series), pol, SimOptions{});
    EXPECT_TRUE(r.has_value());
    return r.has_value() ? *r : SimResult{};
  };
  const SimResult patient = run(0), some = run(10), none = run(1000);
  EXPECT_GE(patient.jobs[0].first_start_s, 2 * 3600 - 1e-6);
  EXPECT_LE(none.jobs[0].first_start_s, 360 + 1e-6);  // the first scheduling round
  EXPECT_GT(some.jobs[0].first_start_s, none.jobs[0].first_start_s);
  EXPECT_LT(some.jobs[0].first_start_s, 3600);
  EXPECT_LT(patient.total_cost_usd, none.total_cost_usd);
  EXPECT_GT(patient.AvgJctHours(), none.AvgJctHours());
}

TEST(Engine, DeterministicForASeed) {
  auto thr = GavelThroughputs::LoadFile(kData + "/gavel/gavel_isolated_throughputs.csv");
  ASSERT_TRUE(thr.has_value());
  Workload w = GenerateGavel(*thr, 6.0, 300, true, 3);
  GavelFifoPolicy a(false, false), b(false, false);
  SimOptions o;
  o.seed = 9;
  auto ra = Simulate(w, GavelFleet(8, 8, 8), a, o);
  auto rb = Simulate(w, GavelFleet(8, 8, 8), b, o);
  ASSERT_TRUE(ra.has_value() && rb.has_value());
  ASSERT_EQ(ra->jobs.size(), rb->jobs.size());
  for (std::size_t i = 0; i < ra->jobs.size(); ++i) EXPECT_EQ(ra->jobs[i].finish_s, rb->jobs[i].finish_s);
  EXPECT_EQ(ra->total_cost_usd, rb->total_cost_usd);
}

TEST(Engine, RejectsMismatchedFleet) {
  Workload w;
  w.name = "w";
  w.gpu_types = {"A100"};
  w.jobs.push_back(Job(0, 0, 10, {1.0}));
  FifoOnDemandPolicy fifo;
  auto r = Simulate(w, OneTypeFleet(Tier::kOwned, 1, 1), fifo, SimOptions{});
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("different GPU types"), std::string::npos);
}

// Gavel reproduction (ANCHORS.md, Gavel section): continuous-single, seed 0, 36/36/36, jobs
// 4000..4999, Gavel's own job stream. Published avg JCT (hours) at 2.0 jobs/h: FIFO 18.32,
// Gavel-LAS 16.95. Tolerance 10%.
TEST(GavelFaithful, Rate2MatchesPublishedTable) {
  auto thr = GavelThroughputs::LoadFile(kData + "/gavel/gavel_isolated_throughputs.csv");
  ASSERT_TRUE(thr.has_value());
  const std::string peer = kData + "/gavel_peer/jobs_seed0_rate2.csv";
  auto fifo = RunGavelCell("fifo", GavelTrace::kContinuousSingle, 2.0, 0, *thr, peer);
  ASSERT_TRUE(fifo.has_value()) << fifo.error().ToString();
  EXPECT_NEAR(fifo->avg_jct_hours, 18.32, 0.10 * 18.32);
  // Gavel's own run on this machine (data/gavel_peer): 66,322.73 s = 18.42 h over jobs 4000..4999.
  EXPECT_NEAR(fifo->avg_jct_hours, 66322.73 / 3600, 0.02 * 18.42);
  auto las = RunGavelCell("gavel-las", GavelTrace::kContinuousSingle, 2.0, 0, *thr, peer);
  ASSERT_TRUE(las.has_value());
  EXPECT_NEAR(las->avg_jct_hours, 16.95, 0.10 * 16.95);
  EXPECT_LT(las->avg_jct_hours, fifo->avg_jct_hours);
}

TEST(LowerBound, NeverAbovePolicyCosts) {
  ScenarioSpec spec;
  spec.workload = "llm-finetune";
  spec.duration_s = 2 * 86400;
  spec.data_dir = kData;
  auto r = RunCostScenario(spec, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_GT(r->bound.usd, 0);
  for (const auto& p : r->policies) EXPECT_LE(r->bound.usd, p.result.total_cost_usd) << p.name;
  // The bound at the best baseline's JCT holds for it and any policy at least as fast, on the
  // same horizon it is never below the plain bound.
  ASSERT_FALSE(r->best_baseline.empty());
  ASSERT_NE(r->BoundAtBestBaseline(), nullptr);
  ASSERT_GE(r->service_bounds.size(), 1u);
  for (const auto& sb : r->service_bounds) {
    EXPECT_GE(sb.bound.usd, r->bound.usd) << sb.policy;
    for (const auto& p : r->policies) {
      if (p.result.unfinished == 0 && p.result.AvgJctHours() * 3600.0 <= sb.bound.max_avg_jct_s) {
        EXPECT_LE(sb.bound.usd, p.result.total_cost_usd) << p.name;
      }
    }
  }
  // And at every policy's own JCT, the bound is below what that policy paid.
  Workload w;
  FleetSpec f;
  std::vector<std::string> notes;
  ASSERT_TRUE(BuildScenario(spec, &w, &f, &notes).ok());
  for (const auto& p : r->policies) {
    if (p.name.rfind("seedance-", 0) == 0) continue;  // as fast as seedance; one slow LP is enough
    LowerBoundOptions o;
    o.horizon_s = r->bound_horizon_s;
    o.max_avg_jct_s = p.result.AvgJctHours() * 3600.0;
    auto b = CostLowerBound(w, f, o);
    ASSERT_TRUE(b.has_value()) << p.name << ": " << b.error().ToString();
    EXPECT_LE(b->usd, p.result.total_cost_usd) << p.name;
    EXPECT_GT(b->usd, 0) << p.name;
    std::printf("%-18s avg JCT %6.2f h  cost $%9.2f  bound at its JCT $%9.2f (%d columns, %.2f s)\n", p.name.c_str(),
                p.result.AvgJctHours(), p.result.total_cost_usd, b->usd, b->columns, b->seconds);
  }
}

// The service-level bound on one job with a slow cheap type (1 step/s, $1/h) and a fast dear one
// (2 steps/s, $3/h): 36,000 steps cost $10 in 10 h or $15 in 5 h.
TEST(LowerBound, AverageJctBudgetForcesTheFastType) {
  Workload w;
  FleetSpec f = SlowAndFastFleet(&w);
  LowerBoundOptions o;
  o.horizon_s = 48 * 3600.0;
  auto any = CostLowerBound(w, f, o);
  ASSERT_TRUE(any.has_value()) << any.error().ToString();
  EXPECT_NEAR(any->usd, 10.0, 1e-6);
  o.max_avg_jct_s = 10 * 3600.0;  // the slow type alone meets it: no change
  auto lax = CostLowerBound(w, f, o);
  ASSERT_TRUE(lax.has_value()) << lax.error().ToString();
  EXPECT_NEAR(lax->usd, 10.0, 1e-6);
  o.max_avg_jct_s = 5 * 3600.0;  // only the fast type finishes in 5 h
  auto tight = CostLowerBound(w, f, o);
  ASSERT_TRUE(tight.has_value()) << tight.error().ToString();
  EXPECT_GT(tight->usd, 10.5);
  EXPECT_LE(tight->usd, 15.0 + 1e-6);
  o.max_avg_jct_s = 4 * 3600.0;  // faster than the fastest type: no schedule exists
  EXPECT_FALSE(CostLowerBound(w, f, o).has_value());
}

// openb's pods sit mostly in the last 30 of its 149 days: replayed whole by default; the one
// pod deleted when created carries no work and is skipped with a note.
TEST(CostScenario, OpenbReplaysTheWholeTraceByDefault) {
  ScenarioSpec spec;
  spec.workload = "openb";
  spec.data_dir = kData;
  Workload w;
  FleetSpec f;
  std::vector<std::string> notes;
  ASSERT_TRUE(BuildScenario(spec, &w, &f, &notes).ok());
  EXPECT_EQ(w.jobs.size(), 7063u);
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes[0].rfind("1 openb pods deleted when created", 0), 0u) << notes[0];
  spec.duration_s = 7 * 86400.0;
  notes.clear();
  ASSERT_TRUE(BuildScenario(spec, &w, &f, &notes).ok());
  EXPECT_LT(w.jobs.size(), 10u);
}

// Issue 3, "Savings" on the bundled llm-finetune workload: Seedance >= 30% below FIFO on-demand
// with average JCT no worse than Gavel-LAS.
TEST(CostScenario, SeedanceSavesOnLlmFinetune) {
  ScenarioSpec spec;
  spec.workload = "llm-finetune";
  spec.data_dir = kData;
  auto r = RunCostScenario(spec, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  const SimResult* fifo = nullptr;
  const SimResult* las = nullptr;
  const SimResult* sd = nullptr;
  for (const auto& p : r->policies) {
    if (p.name == "fifo") fifo = &p.result;
    if (p.name == "gavel-las") las = &p.result;
    if (p.name == "seedance") sd = &p.result;
  }
  ASSERT_TRUE(fifo && las && sd);
  EXPECT_LE(sd->total_cost_usd, 0.70 * fifo->total_cost_usd);
  EXPECT_LE(sd->AvgJctHours(), las->AvgJctHours());
  EXPECT_EQ(sd->unfinished, 0);
}

}  // namespace
}  // namespace seedance::sim

namespace seedance::sim {
namespace {
// The LP bound on instances whose optimum is known: 10 GPU-hours of work, on-demand $3/h and
// spot $1/h; with spot always there the bound is $10, with no spot capacity $30; with spot for
// only part of the time it is in between.
TEST(LowerBound, KnownOptimaOnTinyFleets) {
  Workload w = OneV100Job(36000);
  FleetSpec f = OnDemandAndSpot({});
  LowerBoundOptions o;
  o.horizon_s = 48 * 3600.0;
  auto always = CostLowerBound(w, f, o);
  ASSERT_TRUE(always.has_value()) << always.error().ToString();
  EXPECT_NEAR(always->usd, 10.0, 1e-6);
  f.pools[1].spot = SpotSeries(3600, std::vector<int>(48, 0), 1);
  auto never = CostLowerBound(w, f, o);
  ASSERT_TRUE(never.has_value());
  EXPECT_NEAR(never->usd, 30.0, 1e-6);
  // Spot for the first 4 hours only: 4 h at $1 + 6 h at $3 (buckets of 6 h: 4/6 of the first
  // bucket is available on average).
  std::vector<int> early(48, 0);
  for (int h = 0; h < 4; ++h) early[static_cast<std::size_t>(h)] = 1;
  f.pools[1].spot = SpotSeries(3600, early, 1);
  auto part = CostLowerBound(w, f, o);
  ASSERT_TRUE(part.has_value());
  EXPECT_NEAR(part->usd, 4 * 1.0 + 6 * 3.0, 1e-6);
}
}  // namespace
}  // namespace seedance::sim

#include "seedance/sim/event_queue.h"
namespace seedance::sim {
namespace {
TEST(EventQueue, OrdersByTimeThenPriorityThenSequence) {
  EventQueue q;
  q.Push(10, EventKind::kTick, 1);
  q.Push(10, EventKind::kArrival, 2);
  q.Push(5, EventKind::kRoundEnd, 3);
  q.Push(10, EventKind::kArrival, 4);
  q.Push(10, EventKind::kRoundEnd, 5);
  std::vector<std::size_t> order;
  while (!q.empty()) order.push_back(q.Pop().index);
  EXPECT_EQ(order, (std::vector<std::size_t>{3, 2, 4, 5, 1}));
}
}  // namespace
}  // namespace seedance::sim

namespace seedance::sim {
namespace {
// S3.1 warmup_window: a job placed on on-demand is not moved to spot before its warm-up ends.
TEST(SeedancePolicy, WarmupWindowDelaysTheMoveToSpot) {
  std::vector<int> series(200, 1);
  series[0] = 0;  // no spot in the first round: the job starts on on-demand
  const double cooldown = config::CostAwareConfig{}.spot_return_cooldown_s;
  EXPECT_GT(RunOneSpotJob(series, 0, cooldown).cost_by_pool_usd[1], 0.0);  // moves to spot once it has room
  EXPECT_EQ(RunOneSpotJob(series, 10 * 3600.0, cooldown).cost_by_pool_usd[1], 0.0);  // still warming up at the end
}

// spot_return_cooldown: after an interruption the job finishes on on-demand instead of flapping
// back to spot (and being interrupted again) when spot returns.
TEST(SeedancePolicy, SpotReturnCooldownStopsFlapping) {
  std::vector<int> series(200, 1);
  for (int k : {3, 4, 12, 13}) series[static_cast<std::size_t>(k)] = 0;  // two outages
  SimResult flap = RunOneSpotJob(series, 0, 0);
  SimResult stay = RunOneSpotJob(series, 0, config::CostAwareConfig{}.spot_return_cooldown_s);
  EXPECT_EQ(flap.spot_interruptions, 2);  // back on spot after the first outage, hit again
  EXPECT_EQ(stay.spot_interruptions, 1);
  EXPECT_GT(stay.cost_by_pool_usd[0], flap.cost_by_pool_usd[0]);  // it stayed on on-demand
}

// time_value_per_hour: 0 buys the cheapest steps (the slow type here, $1/h at 1 step/s against
// $3/h at 2 steps/s); valuing the job's time at $5/h makes the fast type the better buy.
TEST(SeedancePolicy, TimeValueTradesCostForJct) {
  Workload w;
  FleetSpec f = SlowAndFastFleet(&w);
  auto run = [&](double value) {
    config::CostAwareConfig c;
    c.min_speed_ratio = 0.1;
    c.time_value_per_hour = value;
    SeedanceCostPolicy pol(c);
    auto r = Simulate(w, f, pol, SimOptions{});
    EXPECT_TRUE(r.has_value());
    return *r;
  };
  SimResult cheap = run(0);
  SimResult fast = run(5);
  EXPECT_GT(cheap.cost_by_pool_usd[0], 0.0);
  EXPECT_EQ(cheap.cost_by_pool_usd[1], 0.0);
  EXPECT_EQ(fast.cost_by_pool_usd[0], 0.0);
  EXPECT_GT(fast.cost_by_pool_usd[1], 0.0);
  EXPECT_LT(cheap.total_cost_usd, fast.total_cost_usd);
  EXPECT_LT(fast.AvgJctHours(), cheap.AvgJctHours());
}

// max_step_price_ratio: a second job arrives while the cheap type (K80, $1 per 3,600 steps) is
// busy. With the limit at 1.0 it queues for the K80 instead of buying dearer steps on the idle
// V100 ($1.50 per 3,600 steps); without a limit it starts on the V100 at once.
TEST(SeedancePolicy, MaxStepPriceRatioQueuesForTheCheapType) {
  Workload w;
  FleetSpec f = SlowAndFastFleet(&w);
  w.jobs.push_back(Job(1, 60, 36000, {1.0, 2.0}));
  auto run = [&](double ratio) {
    config::CostAwareConfig c;
    c.min_speed_ratio = 0.1;
    c.max_step_price_ratio = ratio;
    SeedanceCostPolicy pol(c);
    auto r = Simulate(w, f, pol, SimOptions{});
    EXPECT_TRUE(r.has_value());
    return r.has_value() ? *r : SimResult{};
  };
  SimResult queue = run(1.0);
  SimResult spill = run(0);
  EXPECT_EQ(queue.cost_by_pool_usd[1], 0.0);
  EXPECT_GT(spill.cost_by_pool_usd[1], 0.0);
  EXPECT_LT(queue.total_cost_usd, spill.total_cost_usd);
  EXPECT_GT(queue.AvgJctHours(), spill.AvgJctHours());
}

// migrate_after_queue: one spot GPU appears while job 0 runs on on-demand and job 1 waits. Moves
// taken first hand it to job 0 (a restart, and more moves after); taken after the queue, job 1
// starts on spot and nobody moves.
TEST(SeedancePolicy, MigrateAfterQueueLeavesSpotToWaitingJobs) {
  std::vector<int> series(200, 1);
  series[0] = 0;  // no spot in the first round: job 0 starts on on-demand
  Workload w = OneV100Job(4 * 3600);
  w.jobs.push_back(Job(1, 100, 4 * 3600, {1.0}));
  FleetSpec f = OnDemandAndSpot(series);
  f.pools[0].max_gpus = 2;
  auto run = [&](bool after_queue) {
    config::CostAwareConfig c;
    c.spot_patience = 0;
    c.warmup_window_s = 0;
    c.migrate_after_queue = after_queue;
    SeedanceCostPolicy pol(c);
    std::vector<std::string> moves;
    SimOptions o;
    o.on_decision = [&](const Decision& d) {
      if (d.job_id >= 0 && d.action != DecisionAction::kFinish) {
        moves.push_back(std::string(DecisionActionName(d.action)) + " " + std::to_string(d.job_id) + " " +
                        std::to_string(d.pool));
      }
    };
    auto r = Simulate(w, f, pol, o);
    EXPECT_TRUE(r.has_value());
    return moves;
  };
  std::vector<std::string> first = run(false);
  EXPECT_NE(std::find(first.begin(), first.end(), "migrate 0 1"), first.end());
  EXPECT_EQ(run(true), (std::vector<std::string>{"start 0 0", "start 1 1"}));
}
}  // namespace
}  // namespace seedance::sim
