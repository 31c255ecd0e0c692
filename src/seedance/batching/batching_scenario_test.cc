// The headline claims on the bundled Azure conversation trace (slow: a rate sweep).
#include <gtest/gtest.h>

#include "seedance/batching/benchmark.h"

namespace seedance::batching {
namespace {

TEST(BatchingScenarioTest, SeedanceAgainstBaselinesAtVllmNinetyPercentRate) {
  BatchingConfig c;
  c.data_dir = SEEDANCE_TEST_DATA_DIR;
  c.sweep = true;
  c.usd_per_gpu_hour = 1.79;
  auto r = RunBatching(c, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  auto find = [&](const std::vector<PolicyResult>& v, const std::string& n) {
    for (const auto& p : v) {
      if (p.name == n) return p;
    }
    ADD_FAILURE() << n;
    return PolicyResult{};
  };
  const PolicyResult vllm = find(r->policies, "vllm");
  const PolicyResult sd = find(r->policies, "seedance");
  const PolicyResult st = find(r->policies, "static");
  EXPECT_NEAR(vllm.slo_attainment, 0.9, 0.01);
  EXPECT_EQ(vllm.rejected_context, 1612);  // counted, never dropped
  // Goodput at vLLM's 90 % rate cannot exceed 1/0.9 x vLLM's; require most of that.
  EXPECT_GE(sd.goodput_rps, 1.08 * vllm.goodput_rps);
  EXPECT_GE(sd.goodput_rps, 3 * st.goodput_rps);
  // DistServe goodput (max rate at >= 90 % attainment): >= 1.3x vLLM.
  ASSERT_EQ(r->capacity_rps.size(), 5u);
  EXPECT_GE(r->capacity_rps[4], 1.3 * r->capacity_rps[3]);
  // Multi-tenant mix: guaranteed >= 99 % while best-effort progresses.
  const PolicyResult mix = find(r->mix, "seedance");
  EXPECT_GE(mix.per_class[0].attainment, 0.99);
  EXPECT_EQ(mix.per_class[2].finished, mix.per_class[2].requests);
  EXPECT_GT(mix.per_class[2].attainment, 0.5);
}

}  // namespace
}  // namespace seedance::batching
