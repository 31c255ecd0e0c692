// The headline claims on the bundled traces at equal KV precision, vLLM and Seedance at the best
// knobs of their sweep on each trace's tuning half (TunedKnobTable), a noisy ground truth and a
// predictor fitted on other profile points (slow: rate sweeps). Capacities are measured on each
// Azure trace's held-out half; arxiv (Poisson arrivals) runs at the conversation trace's knobs.
#include <gtest/gtest.h>

#include "seedance/batching/benchmark.h"

namespace seedance::batching {
namespace {

const PolicyResult& Find(const std::vector<PolicyResult>& v, const std::string& n) {
  for (const auto& p : v) {
    if (p.name == n) return p;
  }
  ADD_FAILURE() << "no policy " << n;
  static const PolicyResult kNone;
  return kNone;
}

double Capacity(const BatchingResults& r, const std::string& n) {
  for (std::size_t k = 0; k < r.policies.size() && k < r.capacity_rps.size(); ++k) {
    if (r.policies[k].name == n) return r.capacity_rps[k];
  }
  ADD_FAILURE() << "no capacity for " << n;
  return 0;
}

BatchingConfig Config(const std::string& trace, TracePart part = TracePart::kHeldOut) {
  BatchingConfig c;
  c.data_dir = SEEDANCE_TEST_DATA_DIR;
  c.trace_path = trace;
  c.trace_part = part;
  c.sweep = true;
  c.usd_per_gpu_hour = 1.79;
  return c;
}

// Conversation, held-out half (knobs chosen on its first half).
TEST(BatchingScenarioTest, ConversationTraceAtEqualPrecision) {
  BatchingConfig c = Config("conv");
  auto r = RunBatching(c, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  const PolicyResult& vllm = Find(r->policies, "vllm");
  const PolicyResult& sd = Find(r->policies, "seedance");
  const PolicyResult& st = Find(r->policies, "static");
  EXPECT_NEAR(vllm.slo_attainment, 0.9, 0.01);
  EXPECT_EQ(vllm.rejected_context, 524);  // counted, never dropped (1,612 in the whole trace)
  EXPECT_GE(sd.goodput_rps, 1.05 * vllm.goodput_rps);
  EXPECT_GE(sd.goodput_rps, 3 * st.goodput_rps);
  EXPECT_EQ(sd.lowbit_kv_token_share, 0.0);  // the headline policy is lossless
  // Sustained rate at >= 90 % attainment (the 1.3x is out of reach at equal precision:
  // docs/BENCHMARKS.md shows the saturation bound; this pins what is reached).
  EXPECT_GE(Capacity(*r, "seedance"), 1.12 * Capacity(*r, "vllm"));  // measured 1.16x
  EXPECT_GT(Capacity(*r, "seedance-kvtiers"), Capacity(*r, "seedance"));
  // Multi-tenant mix: guaranteed >= 99 % while best-effort progresses.
  const PolicyResult& mix = Find(r->mix, "seedance");
  EXPECT_GE(mix.per_class[0].attainment, 0.99);
  EXPECT_EQ(mix.per_class[2].finished, mix.per_class[2].requests);
}

TEST(BatchingScenarioTest, Fp8KvForBoth) {
  BatchingConfig c = Config("conv");
  c.kv_bits = 8;
  c.multi_tenant = false;
  c.policies = {"vllm", "seedance"};
  auto r = RunBatching(c, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_GE(Capacity(*r, "seedance"), 1.15 * Capacity(*r, "vllm"));  // measured 1.23x
}

// The code trace's held-out half, at the knobs of the sweep on its first half.
TEST(BatchingScenarioTest, HeldOutCodeTrace) {
  BatchingConfig c = Config("code");
  c.multi_tenant = false;
  c.policies = {"vllm", "seedance"};
  auto r = RunBatching(c, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_GE(Capacity(*r, "seedance"), 1.40 * Capacity(*r, "vllm"));  // measured 1.62x (FP8 1.74x)
}

TEST(BatchingScenarioTest, HeldOutArxivTrace) {
  BatchingConfig c = Config("arxiv", TracePart::kAll);  // never tuned on: all of it
  c.multi_tenant = false;
  c.policies = {"vllm", "seedance"};
  auto r = RunBatching(c, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  // Measured 1.07x: below the 1.15x (prefill-heavy lengths leave little to reorder;
  // docs/BENCHMARKS.md). Pinned so that a regression shows.
  EXPECT_GE(Capacity(*r, "seedance"), 1.03 * Capacity(*r, "vllm"));
}

}  // namespace
}  // namespace seedance::batching
