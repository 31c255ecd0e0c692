// The serving what-if runs the batching engine's rate sweep six times (~12 s): label slow.
#include <gtest/gtest.h>

#include "seedance/advise/serving.h"
#include "seedance/core/file_util.h"

namespace seedance::advise {
namespace {

TEST(AdviseServingTest, WhatIfMeasuresEachKnobAndPricesTheSavings) {
  ServingDeployment d;
  d.data_dir = DataDir();
  d.seeds = {42};
  auto w = RunServingWhatIf(d, nullptr);
  ASSERT_TRUE(w.has_value()) << w.error().message();
  ASSERT_EQ(w->points.size(), 6u);  // as deployed, gpu h100, kv fp8, batch caps 64 / 128 / 512
  EXPECT_GT(w->demand_rps, 0);
  const ServingPoint& base = w->points[0];
  ASSERT_GT(base.capacity_rps[0], 0);
  EXPECT_NEAR(base.usd_per_month[0], w->demand_rps / base.capacity_rps[0] * base.usd_per_gpu_hour * kHoursPerMonth,
              1e-6);
  EXPECT_EQ(w->points[1].change, "gpu h100");
  EXPECT_GT(w->points[1].capacity_rps[0], base.capacity_rps[0]);  // H100 serves more per GPU
  EXPECT_EQ(w->points[2].change, "kv fp8");
  EXPECT_GE(w->points[2].capacity_rps[0], base.capacity_rps[0]);  // more KV room, no slower reads
  auto f = ServingFindings(*w, "conv", "seedance advise --serving conv");
  for (const Finding& x : f) {
    EXPECT_GT(x.usd_per_month, 0);
    EXPECT_EQ(x.kind, "serving");
  }
  // A smaller batch cap than the swept best cannot be free: 64 sequences sustain less.
  EXPECT_LT(w->points[3].capacity_rps[0], base.capacity_rps[0] * 1.001);
}

}  // namespace
}  // namespace seedance::advise
