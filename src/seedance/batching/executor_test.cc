#include "seedance/batching/executor.h"

#include <gtest/gtest.h>

#include "seedance/batching/benchmark.h"
#include "seedance/batching/pareto.h"

namespace seedance::batching {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;

std::unique_ptr<ProfiledExecutor> Load(const std::string& gpu, const std::string& prec = "fp16") {
  auto g = FindGpu(gpu);
  auto m = FindModel("llama-2-7b");
  auto p = ParsePrecision(prec);
  auto e = ProfiledExecutor::Load(kData, *g, *m, *p);
  EXPECT_TRUE(e.has_value()) << e.error().ToString();
  return std::move(e).value();
}

TEST(ProfiledExecutorTest, HeldOutTokenCountsWithinTenPercentMedian) {
  for (const char* gpu : {"a100", "h100"}) {
    auto e = Load(gpu);
    ASSERT_EQ(e->linear_curve().xs().size(), 259u) << gpu;
    const double err = LinearHoldoutError(e->linear_curve(), 4);
    EXPECT_LT(err, 0.10) << gpu;
  }
}

TEST(ProfiledExecutorTest, MatchesDerivedAnchors) {
  auto a = Load("a100");
  // ANCHORS.md section 5: A100 linear+norm per layer 0.29 ms @1 token, 4.17 @2048, 8.17 @4096.
  EXPECT_NEAR(a->LinearMs(1), 0.29, 0.02);
  EXPECT_NEAR(a->LinearMs(2048), 4.17, 0.1);
  EXPECT_NEAR(a->LinearMs(4096), 8.17, 0.15);
  // Decode attention B=128, kv=1664: 1.75 ms/layer measured; the fit is within 15 %.
  EXPECT_NEAR(a->DecodeAttentionMs(128, 128.0 * 1664), 1.75, 0.26);
  EXPECT_LT(a->decode_fit_error(), 0.15);
  EXPECT_LT(a->prefill_fit_error(), 0.10);
  auto h = Load("h100");
  EXPECT_LT(h->DecodeStepSeconds(64, 1024), a->DecodeStepSeconds(64, 1024));
}

TEST(ProfiledExecutorTest, PrecisionScalesSpeedAndMemory) {
  auto fp16 = Load("h100");
  auto fp8 = Load("h100", "fp8");
  auto int4 = Load("h100", "int4");
  EXPECT_LT(fp8->DecodeStepSeconds(8, 512), fp16->DecodeStepSeconds(8, 512));
  EXPECT_LT(int4->DecodeStepSeconds(1, 128), fp8->DecodeStepSeconds(1, 128));
  BatchShape prefill;
  prefill.prefills.push_back({4096, 0});
  EXPECT_LT(fp8->Step(prefill).seconds, 0.7 * fp16->Step(prefill).seconds);
  EXPECT_GT(int4->Step(prefill).seconds, fp16->Step(prefill).seconds);  // dequantisation
  auto g = FindGpu("a100");
  EXPECT_EQ(FactorsFor(Precision::kFp8, *g).compute_time_ratio, 1.0);  // no FP8 cores
  EXPECT_LT(FactorsFor(Precision::kFp8, *g).affinity, FactorsFor(Precision::kInt8, *g).affinity);
  EXPECT_GT(FactorsFor(Precision::kInt8, *g).fallback_share, 0);
}

TEST(ModelTest, VidurPlannerGivesAbout29FourKRequestsOnA100) {
  auto g = FindGpu("a100");
  auto m = FindModel("llama-2-7b");
  EXPECT_EQ(VidurMaxBatch(*g, *m, 4096), 29);
  EXPECT_DOUBLE_EQ(KvBytesPerToken(*m), 524288.0);  // 0.5 MiB per token in FP16
}

TEST(ModelTest, UnknownNamesAreInvalidArgument) {
  EXPECT_EQ(FindGpu("b200").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FindModel("llama-3-70b").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePrecision("fp4").error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ParsePrecision("fp4").error().message().find("fp16, fp8, int8, int4"), std::string::npos);
}

TEST(ParetoTest, SeedTableLoadsAndChoosesBatchFour) {
  auto pts = LoadSeedBatchTable(kData + "/batching/seed_batch_table.csv");
  ASSERT_TRUE(pts.has_value()) << pts.error().ToString();
  ASSERT_EQ(pts->size(), 3u);
  // Seed defaults: 4 GiB memory cap, 50 ms latency SLO -> batch 8 (58.4 ms, 4.1 GiB) is out.
  const int k = ChooseBatch(*pts, 4.0 * (1 << 30), 0.050);
  ASSERT_GE(k, 0);
  EXPECT_EQ((*pts)[static_cast<std::size_t>(k)].batch, 4);
  EXPECT_FALSE((*pts)[2].feasible);
  for (const auto& p : *pts) EXPECT_TRUE(p.on_front);  // each trades throughput for latency
  auto fit = FitMemoryModel(*pts);
  ASSERT_TRUE(fit.has_value());
  EXPECT_NEAR((*fit)[1] / (1 << 30), 0.33, 0.02);  // alpha ~ 0.33 GiB per request
}

TEST(ParetoTest, ExecutorFrontGrowsThroughputWithBatch) {
  auto e = Load("a100");
  auto pts = ExecutorBatchPoints(*e, 1200, 256);
  const int k = ChooseBatch(pts, 72.0 * (1 << 30), 0.1);
  ASSERT_GT(k, 16);
  EXPECT_GT(pts[static_cast<std::size_t>(k)].throughput, 4 * pts[0].throughput);
  EXPECT_LE(pts[static_cast<std::size_t>(k)].latency_s, 0.1);
}

}  // namespace
}  // namespace seedance::batching

namespace seedance::batching {
namespace {

TEST(ProfileSplitTest, TruthAndPredictorAreFittedOnDifferentPointsAndDisagreeALittle) {
  auto g = FindGpu("a100");
  auto m = FindModel("llama-2-7b");
  auto even = ProfiledExecutor::Load(kData, *g, *m, Precision::kFp16, ProfileSplit::kEven);
  auto odd = ProfiledExecutor::Load(kData, *g, *m, Precision::kFp16, ProfileSplit::kOdd);
  ASSERT_TRUE(even.has_value() && odd.has_value());
  BatchShape s;
  s.decodes = 64;
  s.decode_kv_sum = 64 * 1200;
  s.prefills.push_back(PrefillChunk{1000, 0});
  const double a = (*even)->Step(s).seconds, b = (*odd)->Step(s).seconds;
  EXPECT_NE(a, b);
  EXPECT_NEAR(a / b, 1.0, 0.1);  // same hardware, different samples
}

TEST(KvReadFactorTest, LowBitReadsCostTheirBytesPlusDequantization) {
  EXPECT_DOUBLE_EQ(KvReadFactor(16), 1.0);
  EXPECT_DOUBLE_EQ(KvReadFactor(8), 0.6);
  EXPECT_DOUBLE_EQ(KvReadFactor(4), 0.5);
  EXPECT_GT(KvReadFactor(6), KvReadFactor(4));
}

}  // namespace
}  // namespace seedance::batching

namespace seedance::batching {
namespace {

// L4 and A10G have no profile: the A100's, scaled by the catalog's bandwidth (weight-read bound
// small steps, decode attention) and FP16 peak (large prefills). A lone decode step is weight-read
// bound, so it slows by about the bandwidth ratio; a 2,048-token prefill by about the FP16 ratio.
TEST(ProfiledExecutorTest, DerivedGpusScaleTheA100ByTheRoofline) {
  auto a100 = Load("a100");
  for (const char* gpu : {"l4", "a10g"}) {
    auto g = FindGpu(gpu);
    ASSERT_TRUE(g.has_value());
    EXPECT_TRUE(g->derived());
    EXPECT_EQ(g->profile, "a100");
    auto e = Load(gpu);
    const double bw = a100->gpu().dram_bytes_per_s / g->dram_bytes_per_s;
    const double fl = a100->gpu().fp16_flops / g->fp16_flops;
    EXPECT_NEAR(e->LinearMs(1) / a100->LinearMs(1), bw, 1e-9) << gpu;
    const double big = e->LinearMs(4096) / a100->LinearMs(4096);
    EXPECT_GT(big, std::min(bw, fl) - 1e-9) << gpu;
    EXPECT_LT(big, std::max(bw, fl) + 1e-9) << gpu;
    EXPECT_GT(e->DecodeStepSeconds(1, 512), 2 * a100->DecodeStepSeconds(1, 512)) << gpu;
  }
  EXPECT_FALSE(FindGpu("a100")->derived());
}

}  // namespace
}  // namespace seedance::batching
