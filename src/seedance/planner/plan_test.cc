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

// Three Vidur models, one needing tensor parallelism: each planned on A100 and H100 at its
// default TP degree and verified by replay at its SLOs. 2,500-token prompts exceed phi-2's
// 2,048-token context: counted in the workload, the replay and plan.json, never dropped silently.
TEST(PlanTest, ThreeModelsOneWithTensorParallelismVerifiedByReplay) {
  const std::string dir = TempDir("models");
  std::string text = "num_prefill_tokens,num_decode_tokens\n";
  for (int i = 0; i < 40; ++i) text += "80,60\n";
  for (int i = 0; i < 10; ++i) text += "900,200\n";
  for (int i = 0; i < 4; ++i) text += "2500,100\n";
  ASSERT_TRUE(WriteFileAtomically(dir + "/models.csv", text).ok());
  for (const auto& [model, tp] : {std::pair<std::string, int>{"phi-2", 1}, {"codellama-34b", 2}, {"llama-2-70b", 4}}) {
    PlanConfig c = SmallConfig(dir);
    c.trace = dir + "/models.csv";
    c.gpus = {"a100", "h100"};
    c.model = model;
    c.slo_ttft_s = 5;
    auto r = Plan(c, nullptr);
    ASSERT_TRUE(r.has_value()) << model << ": " << r.error().ToString();
    EXPECT_EQ(r->tp, (std::vector<int>{tp, tp})) << model;
    ASSERT_FALSE(r->mix.empty());
    for (const MixEntry& m : r->mix) EXPECT_EQ(m.tp, tp) << model;
    EXPECT_TRUE(r->verified_run);
    EXPECT_GE(r->verified.slo_attainment, c.target_attainment) << model;
    EXPECT_GT(r->verified.met, 0) << model;
    // Every held-out request is either servable or counted as over the context.
    EXPECT_EQ(r->verified.servable + r->verified.over_context, r->verified.requests) << model;
    const std::string json = PlanJson(*r);
    for (const std::string& key : {std::string("\"tensor_parallel\": ") + std::to_string(tp),
                                   std::string("\"gpus_per_replica\": ") + std::to_string(tp),
                                   std::string("\"model\": \"") + model + "\"", std::string("\"weights\""),
                                   std::string("\"max_num_batched_tokens\""), std::string("\"held_out_over_context\"")}) {
      EXPECT_NE(json.find(key), std::string::npos) << model << " lacks " << key << "\n" << json;
    }
    if (model == "phi-2") {
      EXPECT_EQ(r->max_context, 2048);
      EXPECT_EQ(r->workload.over_context, 2);  // the even rows of the four 2,500-token prompts
      EXPECT_GT(r->verified.over_context, 0);
    } else {
      EXPECT_EQ(r->workload.over_context, 0);
      EXPECT_EQ(r->verified.over_context, 0);
    }
  }
}

// --profile: the same profiles from a directory in Vidur's layout give the same plan; a profile
// of another model under the model's name is an error naming the file, line and column.
TEST(PlanTest, ProfileDirectoryInVidursLayout) {
  namespace fs = std::filesystem;
  const std::string dir = TempDir("profile");
  const std::string root = dir + "/compute";
  for (const char* gpu : {"a100", "h100"}) {
    fs::create_directories(root + "/" + gpu + "/microsoft/phi-2");
    fs::copy_file(kData + "/vidur_profiles/compute/" + gpu + "/microsoft/phi-2/mlp.csv",
                  root + "/" + gpu + "/microsoft/phi-2/mlp.csv");
  }
  PlanConfig c = SmallConfig(dir);
  c.gpus = {"a100", "h100"};
  c.model = "phi-2";
  auto bundled = Plan(c, nullptr);
  c.profile_dir = root;
  c.cache_dir = dir + "/cache2";
  auto own = Plan(c, nullptr);
  ASSERT_TRUE(bundled.has_value() && own.has_value()) << own.error().ToString();
  EXPECT_EQ(bundled->usd_per_hour, own->usd_per_hour);
  EXPECT_EQ(bundled->verified.met, own->verified.met);
  // A tree with the H100 profile only: the default GPU types shrink to H100 (L4 and A10G are timed
  // from the A100 profile), and the assumptions say why.
  const std::string h100_only = dir + "/h100_only";
  fs::create_directories(h100_only + "/h100/microsoft/phi-2");
  fs::copy_file(root + "/h100/microsoft/phi-2/mlp.csv", h100_only + "/h100/microsoft/phi-2/mlp.csv");
  PlanConfig h = c;
  h.gpus = {};
  h.profile_dir = h100_only;
  h.cache_dir = dir + "/cache3";
  auto only = Plan(h, nullptr);
  ASSERT_TRUE(only.has_value()) << only.error().ToString();
  EXPECT_EQ(only->gpu_names, std::vector<std::string>{"H100"});
  EXPECT_NE(PlanJson(*only).find("a100 (no profile of phi-2 on a100"), std::string::npos);
  // phi-2's numbers filed as Llama-2-7B's.
  fs::create_directories(root + "/a100/meta-llama/Llama-2-7b-hf");
  fs::copy_file(root + "/a100/microsoft/phi-2/mlp.csv", root + "/a100/meta-llama/Llama-2-7b-hf/mlp.csv");
  c.model = "llama-2-7b";
  c.gpus = {"a100"};
  auto wrong = Plan(c, nullptr);
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.error().message().find("Llama-2-7b-hf/mlp.csv:2:"), std::string::npos) << wrong.error().message();
  EXPECT_NE(wrong.error().message().find("field 'n_embd': is 2560, but llama-2-7b has 4096"), std::string::npos)
      << wrong.error().message();
  c.profile_dir = dir + "/nowhere";
  auto missing = Plan(c, nullptr);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().message().find("--profile " + dir + "/nowhere: not a directory"), std::string::npos);
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
