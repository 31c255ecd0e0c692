// The knob grid, the rule that picks a sweep's best point, and the one table of chosen knobs
// (issue 29: vLLM at its best, per trace and KV precision, never at the grid's edge).
#include <algorithm>
#include <set>
#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "seedance/batching/benchmark.h"
#include "seedance/batching/model.h"

namespace seedance::batching {
namespace {

bool SameKnobs(const EngineKnobs& a, const EngineKnobs& b) {
  return a.max_num_batched_tokens == b.max_num_batched_tokens && a.max_num_seqs == b.max_num_seqs &&
         a.chunked_prefill == b.chunked_prefill && a.preemption == b.preemption;
}

bool InGrid(const EngineKnobs& k, const std::vector<EngineKnobs>& grid) {
  return std::any_of(grid.begin(), grid.end(), [&](const EngineKnobs& g) { return SameKnobs(g, k); });
}

TEST(KnobGridTest, SpansTheIssuesRangeAndOnlyWhatVllmAccepts) {
  const std::vector<EngineKnobs> grid = KnobGrid(4096);
  std::set<int> tokens, seqs;
  for (const EngineKnobs& k : grid) {
    tokens.insert(k.max_num_batched_tokens);
    seqs.insert(k.max_num_seqs);
    EXPECT_GE(k.max_num_batched_tokens, k.max_num_seqs) << k.ToString();
    if (!k.chunked_prefill) {
      EXPECT_GE(k.max_num_batched_tokens, 4096) << k.ToString();
    }
    EXPECT_EQ(k.preemption, PreemptionMode::kRecompute) << k.ToString();  // vLLM V1
  }
  EXPECT_EQ(tokens, (std::set<int>{128, 256, 512, 1024, 2048, 4096, 8192}));
  EXPECT_EQ(seqs, (std::set<int>{16, 32, 64, 128, 256, 512}));
  // 39 chunked settings (7 x 6 less 128/256, 128/512, 256/512) + 2 x 6 whole-prompt ones.
  EXPECT_EQ(grid.size(), 51u);
  EXPECT_TRUE(InGrid(EngineKnobs{8192, 512, false, PreemptionMode::kRecompute}, grid));
  EXPECT_FALSE(InGrid(EngineKnobs{2048, 256, false, PreemptionMode::kRecompute}, grid));
}

TEST(KnobGridTest, EdgesAreTheExtremeBudgetsAndCaps) {
  const std::vector<EngineKnobs> grid = KnobGrid(4096);
  EXPECT_TRUE(AtGridEdge(EngineKnobs{128, 64, true, PreemptionMode::kRecompute}, grid));
  EXPECT_TRUE(AtGridEdge(EngineKnobs{8192, 256, true, PreemptionMode::kRecompute}, grid));
  EXPECT_TRUE(AtGridEdge(EngineKnobs{1024, 16, true, PreemptionMode::kRecompute}, grid));
  EXPECT_FALSE(AtGridEdge(EngineKnobs{1024, 32, true, PreemptionMode::kRecompute}, grid));
  EXPECT_TRUE(AtGridEdge(EngineKnobs{1024, 512, true, PreemptionMode::kRecompute}, grid));
  EXPECT_FALSE(AtGridEdge(EngineKnobs{256, 64, true, PreemptionMode::kRecompute}, grid));
  EXPECT_FALSE(AtGridEdge(EngineKnobs{4096, 256, false, PreemptionMode::kRecompute}, grid));
}

TEST(BestKnobPointTest, TopWinsUnlessATieIsNearerStock) {
  const std::vector<EngineKnobs> grid = KnobGrid(4096);
  std::vector<KnobPoint> sweep = {
      {"vllm", EngineKnobs{256, 64, true, PreemptionMode::kRecompute}, 6.00},
      {"vllm", EngineKnobs{1024, 256, true, PreemptionMode::kRecompute}, 5.96},   // within 1 %: nearer 2048/256, wins
      {"vllm", EngineKnobs{2048, 256, true, PreemptionMode::kRecompute}, 5.80},   // stock, but 3.3 % below the top
      {"seedance", EngineKnobs{256, 32, true, PreemptionMode::kRecompute}, 7.00},
      {"seedance", EngineKnobs{2048, 256, true, PreemptionMode::kRecompute}, 6.50},
  };
  const KnobPoint* v = BestKnobPoint(sweep, "vllm", grid);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->knobs.max_num_batched_tokens, 1024);
  const KnobPoint* s = BestKnobPoint(sweep, "seedance", grid);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->knobs.max_num_batched_tokens, 256);  // 7 % ahead: no tie
  EXPECT_EQ(BestKnobPoint(sweep, "vllm-swap", grid), nullptr);
  // A higher point on the grid's edge is not chosen while an inside point exists.
  sweep.push_back({"seedance", EngineKnobs{2048, 16, true, PreemptionMode::kRecompute}, 9.00});
  EXPECT_EQ(BestKnobPoint(sweep, "seedance", grid)->knobs.max_num_batched_tokens, 256);
  EXPECT_EQ(BestKnobPoint({sweep.back()}, "seedance", grid)->knobs.max_num_seqs, 16);  // edge only
  // Equal distance from stock: the higher capacity.
  sweep = {{"vllm", EngineKnobs{1024, 256, true, PreemptionMode::kRecompute}, 5.95}, {"vllm", EngineKnobs{4096, 256, true, PreemptionMode::kRecompute}, 5.99}};
  EXPECT_EQ(BestKnobPoint(sweep, "vllm", grid)->knobs.max_num_batched_tokens, 4096);
}

// The issue's "What must show 2": every chosen setting lies inside the grid, not at its edge, and
// vLLM's headline uses recompute preemption; each (trace, precision) has one entry whose origin
// is the sweep on that trace's tuning half at that precision.
TEST(TunedKnobTableTest, EveryEntryIsInsideTheGridAndNamesItsSweep) {
  const std::vector<EngineKnobs> grid = KnobGrid(4096);
  std::set<std::pair<std::string, int>> keys;
  for (const TunedKnobs& t : TunedKnobTable()) {
    const std::string what = fmt::format("{} kv{}", t.trace, t.kv_bits);
    EXPECT_TRUE(keys.insert({std::string(t.trace), t.kv_bits}).second) << "duplicate " << what;
    for (const EngineKnobs& k : {t.vllm, t.seedance}) {
      EXPECT_TRUE(InGrid(k, grid)) << what << ": [" << k.ToString() << "] is not a grid point";
      EXPECT_FALSE(AtGridEdge(k, grid)) << what << ": [" << k.ToString() << "] is at the grid's edge";
    }
    EXPECT_EQ(t.vllm.preemption, PreemptionMode::kRecompute) << what;
    const std::string origin(t.origin);
    EXPECT_NE(origin.find(fmt::format("--trace {} --trace-part tuning --kv-dtype {} --sweep-knobs",
                                      t.trace, t.kv_bits == 8 ? "fp8" : "fp16")),
              std::string::npos)
        << what << ": " << origin;
  }
  EXPECT_EQ(keys, (std::set<std::pair<std::string, int>>{{"code", 8}, {"code", 16}, {"conv", 8}, {"conv", 16}}));
}

TEST(TunedKnobTableTest, LookupFallsBackToTheTuningTrace) {
  EXPECT_EQ(TunedKnobsFor("code", 8).trace, "code");
  EXPECT_EQ(TunedKnobsFor("code", 8).kv_bits, 8);
  EXPECT_EQ(TunedKnobsFor("arxiv", 16).trace, "conv");
  EXPECT_EQ(TunedKnobsFor("", 8).trace, "conv");
  EXPECT_EQ(TunedKnobsFor("", 8).kv_bits, 8);
  const std::string data = SEEDANCE_TEST_DATA_DIR;
  EXPECT_EQ(BundledTraceName(data, ""), "conv");
  EXPECT_EQ(BundledTraceName(data, "code"), "code");
  EXPECT_EQ(BundledTraceName(data, ResolveTracePath(data, "code")), "code");
  EXPECT_EQ(BundledTraceName(data, "/tmp/mine.csv"), "");
}

// `seedance batching` runs each policy at its table entry for the trace and KV precision.
TEST(TunedKnobTableTest, PrepareSettingsUsesTheEntryOfTheTraceAndPrecision) {
  BatchingConfig c;
  c.data_dir = SEEDANCE_TEST_DATA_DIR;
  auto gpu = FindGpu(c.gpu);
  auto model = FindModel(c.model);
  ASSERT_TRUE(gpu.has_value() && model.has_value());
  auto exec = ProfiledExecutor::Load(c.data_dir, *gpu, *model, Precision::kFp16);
  ASSERT_TRUE(exec.has_value()) << exec.error().ToString();
  for (const TunedKnobs& t : TunedKnobTable()) {
    c.trace_path = ResolveTracePath(c.data_dir, std::string(t.trace));
    c.kv_bits = t.kv_bits;
    const PolicySettings s = PrepareSettings(c, *gpu, *model, **exec);
    EXPECT_EQ(s.vllm.max_num_batched_tokens, t.vllm.max_num_batched_tokens) << t.trace << t.kv_bits;
    EXPECT_EQ(s.vllm.max_num_seqs, t.vllm.max_num_seqs) << t.trace << t.kv_bits;
    EXPECT_EQ(s.vllm.preemption, PreemptionMode::kRecompute);
    EXPECT_EQ(s.seedance.max_num_batched_tokens, t.seedance.max_num_batched_tokens) << t.trace << t.kv_bits;
    EXPECT_EQ(s.seedance.max_num_seqs, t.seedance.max_num_seqs) << t.trace << t.kv_bits;
  }
}

}  // namespace
}  // namespace seedance::batching
