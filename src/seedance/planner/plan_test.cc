#include "seedance/planner/plan.h"

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <fstream>

#include <gtest/gtest.h>

#include "seedance/core/file_util.h"
#include "seedance/planner/capacity.h"

namespace seedance::planner {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;

std::string TempDir(const std::string& name) {
  const auto d = std::filesystem::temp_directory_path() / ("seedance_plan_test_" + name);
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

// A small lengths-only trace: 40 short and 10 medium requests.
std::string SmallTrace(const std::string& dir) {
  std::string text = "num_prefill_tokens,num_decode_tokens\n";
  for (int i = 0; i < 40; ++i) text += "80,60\n";
  for (int i = 0; i < 10; ++i) text += "900,200\n";
  const std::string path = dir + "/small.csv";
  EXPECT_TRUE(WriteFileAtomically(path, text).ok());
  return path;
}

PlanConfig SmallConfig(const std::string& dir) {
  PlanConfig c;
  c.data_dir = kData;
  c.trace = SmallTrace(dir);
  c.gpus = {"l4", "a100"};
  c.rate_rps = 2;
  c.verify_s = 200;
  c.probe.requests = 60;
  c.probe.min_probe_s = 30;
  c.probe.bisect_steps = 3;
  c.cache_dir = dir + "/cache";
  return c;
}

TEST(CapacityTest, FasterGpuSustainsMoreAndTheCacheIsReused) {
  EngineOptions o;
  o.data_dir = kData;
  auto a100 = MakeEngine(o, "a100");
  auto l4 = MakeEngine(o, "l4");
  ASSERT_TRUE(a100.has_value()) << a100.error().ToString();
  ASSERT_TRUE(l4.has_value()) << l4.error().ToString();
  ProbeOptions p;
  p.requests = 60;
  p.min_probe_s = 30;
  p.bisect_steps = 3;
  auto ca = MeasureBucket(**a100, 250, 100, p);
  auto cl = MeasureBucket(**l4, 250, 100, p);
  ASSERT_TRUE(ca.has_value() && cl.has_value());
  EXPECT_GT(cl->capacity_rps, 0);
  EXPECT_GT(ca->capacity_rps, 2 * cl->capacity_rps);  // 6.8x the bandwidth, 2.6x the FP16 peak
  // A TPOT SLO below a lone request's step time: ineligible, with the time it got.
  EngineOptions tight = o;
  tight.slo_tpot_s = 0.005;
  auto t = MakeEngine(tight, "l4");
  ASSERT_TRUE(t.has_value());
  auto none = MeasureBucket(**t, 250, 100, p);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->capacity_rps, 0);
  EXPECT_GT(none->lone_tpot_s, 0.005);
  // The cache: a second profile reads the file the first wrote and measures nothing.
  const std::string dir = TempDir("cache");
  const BucketGrid grid = MelangeGrid(4096);
  std::vector<bool> needed(static_cast<std::size_t>(grid.buckets()), false);
  needed[static_cast<std::size_t>(grid.BucketOf(80, 60))] = true;
  auto first = ProfileCapacity(**a100, grid, needed, p, dir, nullptr);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(std::filesystem::exists(dir + "/" + CacheFileName(**a100, grid, p)));
  std::ostringstream log;
  auto second = ProfileCapacity(**a100, grid, needed, p, dir, &log);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(log.str(), "");
  const auto b = static_cast<std::size_t>(grid.BucketOf(80, 60));
  EXPECT_EQ(first->buckets[b].capacity_rps, second->buckets[b].capacity_rps);
  EXPECT_GT(first->buckets[b].capacity_rps, 0);
}

TEST(PlanTest, SmallTracePlanIsVerifiedAndDeterministic) {
  const std::string dir = TempDir("small");
  PlanConfig c = SmallConfig(dir);
  auto r = Plan(c, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_FALSE(r->mix.empty());
  EXPECT_TRUE(r->verified_run);
  EXPECT_GE(r->verified.slo_attainment, c.target_attainment);
  EXPECT_GT(r->verified.servable, 0);
  EXPECT_LE(r->usd_per_hour, r->single[static_cast<std::size_t>(r->best_single)].usd_per_hour + 1e-9);
  EXPECT_GE(r->mean_rate.usd_per_hour, r->lower_bound_usd_per_hour - 1e-9);
  auto again = Plan(c, nullptr);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(PlanJson(*r), PlanJson(*again));
  const std::string json = PlanJson(*r);
  for (const char* key : {"\"mix\"", "\"usd_per_hour\"", "\"best_single\"", "\"saving_pct\"", "\"verified_slo_attainment\"",
                          "\"held_out_slo_attainment_by_router\"", "\"output-oracle\""}) {
    EXPECT_NE(json.find(key), std::string::npos) << key;
  }
}

// The plan sees only the tuning half (even rows of a lengths-only trace): 25 of the 50 rows.
// Mélange's output-length oracle router is kept as an option and checked on the held-out half too.
TEST(PlanTest, TuningHalfOnlyAndBothRouters) {
  const std::string dir = TempDir("routers");
  PlanConfig c = SmallConfig(dir);
  c.router = kRouterOutputOracle;
  auto r = Plan(c, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->workload.total, 25);
  EXPECT_EQ(r->other_router, kRouterInput);
  EXPECT_GE(r->verified.slo_attainment, c.target_attainment);
  c.router = "by-magic";
  r = Plan(c, nullptr);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("--router 'by-magic'"), std::string::npos) << r.error().message();
}

// No held-out leak: a request size that only the held-out rows (odd) have is not in the plan's
// histogram, so the fleet has no route for it and the held-out attainment shows the miss.
TEST(PlanTest, HeldOutOnlySizesAreNotPlannedFor) {
  const std::string dir = TempDir("leak");
  std::string text = "num_prefill_tokens,num_decode_tokens\n";
  for (int i = 0; i < 50; ++i) text += (i % 2 == 1 && i % 5 == 0) ? "900,200\n" : "80,60\n";  // 5 odd rows
  ASSERT_TRUE(WriteFileAtomically(dir + "/leak.csv", text).ok());
  PlanConfig c = SmallConfig(dir);
  c.trace = dir + "/leak.csv";
  auto r = Plan(c, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  const int big = r->workload.grid.BucketOf(900, 200);
  ASSERT_GE(big, 0);
  EXPECT_EQ(r->workload.requests[static_cast<std::size_t>(big)], 0);
  EXPECT_EQ(r->workload.total, 25);
  EXPECT_LT(r->verified.slo_attainment, 0.95);  // about 1 in 5 held-out draws has no planned route
  EXPECT_GT(r->verified.slo_attainment, 0.5);
}

TEST(PlanTest, BadInputIsNamed) {
  const std::string dir = TempDir("bad");
  PlanConfig c = SmallConfig(dir);
  c.slo_tpot_s = 0.002;  // no GPU decodes a 7B model in 2 ms per token
  auto r = Plan(c, nullptr);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.error().message().find("infeasible SLO"), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find("(SLO 2 ms)"), std::string::npos) << r.error().message();
  c = SmallConfig(dir);
  c.gpus = {"l4", "b300"};
  r = Plan(c, nullptr);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("unknown gpu 'b300'"), std::string::npos) << r.error().message();
  c = SmallConfig(dir);
  ASSERT_TRUE(WriteFileAtomically(dir + "/empty.csv", "num_prefill_tokens,num_decode_tokens\n").ok());
  c.trace = dir + "/empty.csv";
  r = Plan(c, nullptr);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("empty.csv"), std::string::npos) << r.error().message();
}

// A day: resizing every period never costs more than holding the peak fleet all day (the peak
// plan is one of the period plans), and the cold starts are billed.
TEST(PlanTest, RateCurveResizesTheFleet) {
  const std::string dir = TempDir("curve");
  PlanConfig c = SmallConfig(dir);
  c.rate_rps = 0;
  ASSERT_TRUE(WriteFileAtomically(dir + "/curve.csv", "start_s,rate_rps\n0,0.5\n21600,4\n43200,1\n").ok());
  c.rate_curve = dir + "/curve.csv";
  auto r = Plan(c, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_TRUE(r->has_day);
  EXPECT_EQ(r->rate_rps, 4);  // the main plan is the peak's
  ASSERT_EQ(r->day.periods.size(), 3u);
  EXPECT_EQ(r->day.periods[2].end_s, 86400);
  EXPECT_LE(r->day.autoscaled_usd, r->day.static_peak_usd + 1e-9);
  EXPECT_GT(r->day.boot_usd, 0);
  EXPECT_LT(r->day.periods[0].usd_per_hour, r->day.periods[1].usd_per_hour);
}

TEST(PlanTest, MelangeConfigAsAPlan) {
  auto r = PlanMelange(kData + "/melange/repo_example_config.json");
  ASSERT_TRUE(r.has_value());
  EXPECT_NEAR(r->usd_per_hour, 6.70, 1e-9);
  EXPECT_NEAR(r->saving_pct, 100 * (1 - 6.70 / 7.34), 1e-9);
  const std::string json = PlanJson(*r);
  EXPECT_NE(json.find("\"verified_slo_attainment\": null"), std::string::npos);
}

}  // namespace
}  // namespace seedance::planner
