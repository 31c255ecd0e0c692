// The cost lower bound at a service level (issue 11, "bounds that agree"): on the same horizon it
// is never below the plain bound, it binds when the level is tight, and both solve fast.
#include "seedance/sim/lower_bound.h"

#include <gtest/gtest.h>

#include "seedance/sim/testing/jobs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "seedance/core/rng.h"
#include "seedance/sim/scenarios.h"
#include "seedance/sim/workloads.h"

namespace seedance::sim {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;

using testing::Job;

// One on-demand GPU each of a slow cheap type (K80, 1 step/s, $1/h) and a fast dear one (V100,
// 2 steps/s, $3/h).
FleetSpec SlowAndFast(int gpus = 1) {
  FleetSpec f;
  f.name = "test";
  f.gpu_types = {"K80", "V100"};
  for (int t = 0; t < 2; ++t) {
    PoolSpec p;
    p.type = t;
    p.max_gpus = gpus;
    p.usd_per_gpu_hour = t == 0 ? 1.0 : 3.0;
    f.pools.push_back(p);
  }
  return f;
}

Workload OneJob(double steps) {
  Workload w;
  w.name = "w";
  w.gpu_types = {"K80", "V100"};
  w.jobs.push_back(Job(0, 0, steps, {1.0, 2.0}));
  return w;
}

// One job of 36,000 steps: $10 on the K80 in 10 h, $15 on the V100 in 5 h. At an average JCT of
// 5 h (the V100 from arrival to the end) the only schedule costs $15: the bound must lie in
// (10, 15]; a level it cannot reach (4 h) has no schedule; a lax one (10 h) changes nothing.
TEST(ServiceBound, KnownOptimaOfOneJob) {
  Workload w = OneJob(36000);
  FleetSpec f = SlowAndFast();
  LowerBoundOptions o;
  o.horizon_s = 48 * 3600.0;
  auto plain = CostLowerBound(w, f, o);
  ASSERT_TRUE(plain.has_value()) << plain.error().ToString();
  EXPECT_NEAR(plain->usd, 10.0, 1e-6);
  o.max_avg_jct_s = 10 * 3600.0;
  auto lax = CostLowerBound(w, f, o);
  ASSERT_TRUE(lax.has_value());
  EXPECT_NEAR(lax->usd, 10.0, 1e-6);
  double previous = lax->usd;
  for (double hours : {9.0, 8.0, 7.0, 6.0, 5.0}) {  // tighter levels never lower the bound
    o.max_avg_jct_s = hours * 3600.0;
    auto b = CostLowerBound(w, f, o);
    ASSERT_TRUE(b.has_value()) << hours << ": " << b.error().ToString();
    EXPECT_GE(b->usd, previous - 1e-6) << hours;
    // The true optimum at this level: a share s of the work on the V100 with 10 - 5 s <= hours.
    const double s = (10.0 - hours) / 5.0;
    EXPECT_LE(b->usd, 10.0 + 5.0 * s + 1e-6) << hours;
    previous = b->usd;
  }
  EXPECT_GT(previous, 12.0);  // at 5 h most of the work must run on the V100
  o.max_avg_jct_s = 4 * 3600.0;
  EXPECT_FALSE(CostLowerBound(w, f, o).has_value());
}

// Two jobs of 36,000 steps at 0, one K80 and one V100; job 0 is due in 5 h. The cheapest schedule
// runs job 0 on the V100 ($15) and job 1 on the K80 ($10): $25, average JCT 7.5 h. The LP groups
// both jobs (same speeds), so it only knows that 5 h of work (in V100 hours) is done by 5 h: the
// K80 does 2.5 of them ($5), the V100 the rest ($7.5), the K80 the other 5 after ($10): $22.5.
// At a level of 7.5 h the bound stays within [22.5, 25]; at 5 h (both done in 5 h) no schedule
// exists, as only the V100 is fast enough and it runs one job at a time, but the relaxation only
// has to stay below the true optimum where one exists.
TEST(ServiceBound, TwoJobsAndADeadline) {
  Workload w = OneJob(36000);
  w.jobs.push_back(Job(1, 0, 36000, {1.0, 2.0}));
  w.jobs[0].deadline_s = 5 * 3600.0;
  FleetSpec f = SlowAndFast();
  LowerBoundOptions o;
  o.horizon_s = 24 * 3600.0;
  o.bucket_s = 3600.0;
  auto plain = CostLowerBound(w, f, o);
  ASSERT_TRUE(plain.has_value()) << plain.error().ToString();
  EXPECT_NEAR(plain->usd, 22.5, 1e-6);
  o.max_avg_jct_s = 7.5 * 3600.0;
  auto sl = CostLowerBound(w, f, o);
  ASSERT_TRUE(sl.has_value()) << sl.error().ToString();
  EXPECT_GE(sl->usd, plain->usd - 1e-9);
  EXPECT_LE(sl->usd, 25.0 + 1e-6);
}

// Random small workloads on a fleet with a spot pool: at every level the service bound is never
// below the plain one on the same horizon, and it never rises as the level relaxes.
TEST(ServiceBound, NeverBelowThePlainBoundAndMonotone) {
  Rng rng(11);
  for (int trial = 0; trial < 4; ++trial) {
    Workload w;
    w.name = "random";
    w.gpu_types = {"K80", "V100"};
    const int n = 5 + static_cast<int>(rng.UniformDouble() * 20);
    for (int i = 0; i < n; ++i) {
      const double v100 = 1.0 + rng.UniformDouble() * 3;
      w.jobs.push_back(Job(i, rng.UniformDouble() * 12 * 3600, 3600 * (1 + rng.UniformDouble() * 8) * v100,
                           {rng.Bernoulli(0.8) ? v100 / (1.5 + rng.UniformDouble() * 2) : 0.0, v100}));
    }
    std::sort(w.jobs.begin(), w.jobs.end(), [](const JobSpec& a, const JobSpec& b) { return a.arrival_s < b.arrival_s; });
    for (int i = 0; i < n; ++i) w.jobs[static_cast<std::size_t>(i)].id = i;
    FleetSpec f = SlowAndFast(4);
    PoolSpec spot = f.pools[1];
    spot.tier = Tier::kSpot;
    spot.usd_per_gpu_hour = 1.1;
    std::vector<int> series;
    for (int k = 0; k < 100; ++k) series.push_back(k % 7 < 3 ? 2 : 0);
    spot.spot = SpotSeries(1800, series, 1);
    f.pools.push_back(spot);
    LowerBoundOptions o;
    o.horizon_s = 48 * 3600.0;
    auto plain = CostLowerBound(w, f, o);
    ASSERT_TRUE(plain.has_value()) << plain.error().ToString();
    double previous = 1e300;
    for (double hours : {6.0, 8.0, 12.0, 24.0, 100.0}) {
      o.max_avg_jct_s = hours * 3600.0;
      auto b = CostLowerBound(w, f, o);
      if (!b.has_value()) continue;  // no schedule that fast
      EXPECT_GE(b->usd, plain->usd - 1e-9) << trial << " " << hours;
      EXPECT_LE(b->usd, previous + 1e-6 * previous) << trial << " " << hours;
      previous = b->usd;
    }
    EXPECT_NEAR(previous, plain->usd, 1e-6 * plain->usd) << trial;  // 100 h binds nothing
  }
}

// Many distinct speed vectors are rounded up to a grid: the bound can only fall, and stays close.
TEST(ServiceBound, SpeedGridOnlyLowersTheBound) {
  Rng rng(5);
  Workload w;
  w.name = "distinct";
  w.gpu_types = {"K80", "V100"};
  for (int i = 0; i < 200; ++i) {
    w.jobs.push_back(Job(i, i * 600.0, 7200 * 2, {0.5 + rng.UniformDouble(), 2.0}));
  }
  FleetSpec f = SlowAndFast(64);  // room for every job at once: no queueing
  LowerBoundOptions o;
  o.horizon_s = 96 * 3600.0;
  auto b = CostLowerBound(w, f, o);
  ASSERT_TRUE(b.has_value()) << b.error().ToString();
  EXPECT_GT(b->speed_grid, 1.0);
  EXPECT_LE(b->job_classes, 48);
  // The exact optimum: each job on the cheaper of 4 h / s of K80 at $1/h (speed s) or 2 h of
  // V100 at $3/h.
  double exact = 0;
  for (const auto& j : w.jobs) exact += std::min(j.total_steps / j.steps_per_s[0] / 3600.0, 6.0);
  EXPECT_LE(b->usd, exact + 1e-6);
  EXPECT_GE(b->usd, exact / 1.05 - 1e-6);
}

// The case the review found: a 240-job jobs CSV where the service-level bound came out at $33.2k
// against the plain $71.8k after 66 s of GLPK. Here: 240 jobs of Gavel's generator (multi-GPU mix,
// seed 240) written with JobsToCsv and read back as a user file. On the same horizon the bound at
// a service level may no longer fall below the plain bound. The time ceiling is a regression guard
// against the 66 s solve, not a speed measurement (about 1.5 s plain and 4-6 s per level on 2
// shared cores; a 5 s ceiling failed under load): 30 s, 2x under the regression.
TEST(ServiceBound, UserCsvOf240JobsAgreesAndSolvesFast) {
  const std::string path = (std::filesystem::path(::testing::TempDir()) / "jobs240.csv").string();
  {
    std::ofstream out(path);
    auto thr = GavelThroughputs::LoadFile(kData + "/gavel/gavel_isolated_throughputs.csv");
    ASSERT_TRUE(thr.has_value());
    out << JobsToCsv(GenerateGavel(*thr, 2.0, 240, true, 240));
  }
  ScenarioSpec spec;
  spec.workload = path;
  spec.data_dir = kData;
  Workload w;
  FleetSpec f;
  std::vector<std::string> notes;
  ASSERT_TRUE(BuildScenario(spec, &w, &f, &notes).ok());
  ASSERT_EQ(w.jobs.size(), 240u);
  LowerBoundOptions o;
  o.horizon_s = w.jobs.back().arrival_s + 10 * 86400.0;
  auto plain = CostLowerBound(w, f, o);
  ASSERT_TRUE(plain.has_value()) << plain.error().ToString();
  EXPECT_LT(plain->seconds, 30.0);
  // Levels at 1.2, 2 and 4 times the mean run time on the fastest type (below it no schedule exists).
  double mean_run = 0;
  for (const auto& j : w.jobs) mean_run += j.total_steps / *std::max_element(j.steps_per_s.begin(), j.steps_per_s.end());
  mean_run /= static_cast<double>(w.jobs.size());
  for (double factor : {1.2, 2.0, 4.0}) {
    const double hours = factor * mean_run / 3600.0;
    o.max_avg_jct_s = hours * 3600.0;
    auto sl = CostLowerBound(w, f, o);
    ASSERT_TRUE(sl.has_value()) << hours << ": " << sl.error().ToString();
    EXPECT_GE(sl->usd, plain->usd) << hours;
    EXPECT_LT(sl->seconds, 30.0) << hours;
    std::printf("240 jobs: plain $%.0f (%.2f s), at %.1f h $%.0f (%d columns, %.2f s)\n", plain->usd, plain->seconds,
                hours, sl->usd, sl->columns, sl->seconds);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace seedance::sim
