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
  // Issue 38: one GPU-name parser everywhere: the fleet file's and telemetry's spellings work.
  EXPECT_EQ(FindGpu("a100-80g")->name, "a100");
  EXPECT_EQ(FindGpu("A100-80G")->name, "a100");
  EXPECT_EQ(FindGpu("NVIDIA H100 80GB HBM3")->name, "h100");
  EXPECT_NE(FindGpu("V100").error().message().find("the V100, which the batching engine has no profile for"),
            std::string::npos);
  EXPECT_EQ(FindModel("llama-3-405b").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePrecision("fp4").error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ParsePrecision("fp4").error().message().find("fp16, fp8, int8, int4"), std::string::npos);
}

std::unique_ptr<ProfiledExecutor> LoadModel(const std::string& gpu, const std::string& model, int tp) {
  auto g = FindGpu(gpu);
  auto m = FindModel(model);
  EXPECT_TRUE(m.has_value());
  m->tensor_parallel = tp;
  auto e = ProfiledExecutor::Load(kData, *g, *m, Precision::kFp16);
  EXPECT_TRUE(e.has_value()) << e.error().ToString();
  return e.has_value() ? std::move(e).value() : nullptr;
}

// The bundled models: context from the model, the default TP degree from memory (weights + a
// quarter of the memory for KV), explicit degrees checked against the profiles.
TEST(ModelTest, BundledModelsAndTheirTensorParallelDegree) {
  EXPECT_NE(FindModel("mistral-7b").error().message().find("llama-2-7b, llama-2-70b, codellama-34b, phi-2, llama-3-8b"),
            std::string::npos);
  EXPECT_EQ(FindModel("llama-3-8b")->max_context, 8192);
  auto a100 = FindGpu("a100"), l4 = FindGpu("l4");
  const double u = 0.9;
  auto tp = [&](const GpuSpec& g, const char* name) { return DefaultTensorParallel(g, *FindModel(name), u); };
  EXPECT_EQ(*tp(*a100, "llama-2-7b"), 1);
  EXPECT_EQ(*tp(*l4, "llama-2-7b"), 1);
  EXPECT_EQ(*tp(*a100, "phi-2"), 1);
  EXPECT_EQ(*tp(*a100, "codellama-34b"), 2);  // 67 GB of weights leave < a quarter of 80 GiB
  EXPECT_EQ(*tp(*a100, "llama-2-70b"), 4);    // 138 GB: TP 2 leaves 17 GB, TP 4 leaves 171 GB
  auto no = tp(*l4, "llama-2-70b");
  ASSERT_FALSE(no.has_value());
  EXPECT_EQ(no.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(no.error().message().find("l4 has no interconnect profile: TP 1 only"), std::string::npos);
  EXPECT_EQ(FindModel("phi-2")->max_context, 2048);
  EXPECT_EQ(FindModel("codellama-34b")->max_context, 16384);
  // Explicit degrees: TP 2 holds Llama-2-70B (weights + one 4k sequence), TP 3 is not profiled.
  EXPECT_TRUE(CheckTensorParallel(*a100, *FindModel("llama-2-70b"), 2, u).ok());
  EXPECT_EQ(CheckTensorParallel(*a100, *FindModel("llama-2-70b"), 1, u).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(CheckTensorParallel(*a100, *FindModel("llama-2-70b"), 3, u).message(),
            "--tp 3: llama-2-70b is profiled at TP 1, 2, 4, 8 only");
  EXPECT_EQ(CheckTensorParallel(*a100, *FindModel("llama-2-7b"), 2, u).code(), StatusCode::kInvalidArgument);
  // KV blocks of a replica count all its GPUs' memory.
  auto m70 = *FindModel("llama-2-70b");
  m70.tensor_parallel = 4;
  const auto blocks4 = KvBlocksFor(*a100, m70, PrecisionFactors{}, u, 16);
  m70.tensor_parallel = 2;
  const auto blocks2 = KvBlocksFor(*a100, m70, PrecisionFactors{}, u, 16);
  EXPECT_GT(blocks4, 8 * blocks2);
}

// Tensor parallelism in the step time: the per-rank GEMMs of the profile's TP rows, two
// all-reduces per layer from the DGX NCCL profile, attention scaled per rank.
TEST(ProfiledExecutorTest, TensorParallelStepTimes) {
  auto tp2 = LoadModel("a100", "llama-2-70b", 2);
  auto tp4 = LoadModel("a100", "llama-2-70b", 4);
  auto h4 = LoadModel("h100", "llama-2-70b", 4);
  auto l7 = LoadModel("a100", "llama-2-7b", 1);
  ASSERT_TRUE(tp2 && tp4 && h4 && l7);
  // Vidur's anchor: a100_dgx all-reduce of 4 MiB over 2 GPUs 0.063 ms (256 tokens x 8192 x 2 bytes).
  EXPECT_NEAR(tp2->AllReduceMs(256), 0.063, 0.01);
  EXPECT_GT(tp4->AllReduceMs(4096), tp4->AllReduceMs(256));
  EXPECT_EQ(l7->AllReduceMs(256), 0.0);
  // More ranks: less GEMM time per rank, so faster steps; H100 faster than A100.
  EXPECT_LT(tp4->LinearMs(2048), 0.7 * tp2->LinearMs(2048));
  EXPECT_LT(tp4->DecodeStepSeconds(32, 1024), tp2->DecodeStepSeconds(32, 1024));
  EXPECT_LT(h4->DecodeStepSeconds(32, 1024), tp4->DecodeStepSeconds(32, 1024));
  // 80 layers of a 70B model at TP 4 against 32 layers of the 7B at TP 1: slower per step.
  EXPECT_GT(tp4->DecodeStepSeconds(1, 512), l7->DecodeStepSeconds(1, 512));
  // GQA (8 KV heads) per TP 4 rank reads 2 x 128 of KV per token against the 7B's 32 x 128.
  const double kv_term70 = tp4->DecodeAttentionMs(64, 64.0 * 2048) - tp4->DecodeAttentionMs(64, 0);
  const double kv_term7 = l7->DecodeAttentionMs(64, 64.0 * 2048) - l7->DecodeAttentionMs(64, 0);
  EXPECT_NEAR(kv_term70 / kv_term7, 2.0 / 32.0, 1e-9);
  // phi-2 has no post-attention norm: its profile lacks that column and still loads.
  auto phi = LoadModel("h100", "phi-2", 1);
  ASSERT_TRUE(phi);
  EXPECT_LT(phi->DecodeStepSeconds(8, 512), LoadModel("h100", "llama-2-7b", 1)->DecodeStepSeconds(8, 512));
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
