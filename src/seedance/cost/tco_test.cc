#include "seedance/cost/tco.h"

#include <gtest/gtest.h>

namespace seedance::cost {
namespace {

const gpu::GpuFacts& Row(std::string_view name) {
  return gpu::GpuAt(*gpu::ParseGpuName(name, gpu::NameMatch::kName));
}

TEST(TcoTest, DefaultsFromTheCatalog) {
  // Issue 38 changed the defaults deliberately: the type's cited purchase price (was $12,000 for
  // every GPU), $0.08/kWh and PUE 1.58 (were $0.07 and 1.45), each with its source.
  auto t = OwnedGpuTco(Row("A100-80G"), TcoInputs{});
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_DOUBLE_EQ(t->inputs.gpu_price_usd, 24875);  // DGX A100's $199,000 / 8
  EXPECT_NE(t->price_source.find("DGX A100"), std::string::npos) << t->price_source;
  EXPECT_DOUBLE_EQ(t->inputs.tflops, 312);
  EXPECT_NEAR(t->gpu_watts, 400, 1e-9);
  EXPECT_NEAR(t->depreciation, 24875.0 / 3 / 312, 1e-12);
  EXPECT_NEAR(t->power, 400.0 / 312 / 1000 * 0.5 * 8760 * 0.08, 1e-12);
  EXPECT_NEAR(t->cooling, t->power * 0.58, 1e-12);
  EXPECT_NEAR(t->usd_per_gpu_hour, t->total * 312 / 8760, 1e-12);
  EXPECT_NEAR(t->usd_per_gpu_hour, 0.9750, 0.0005);
  EXPECT_NEAR(t->power_usd_per_gpu_hour, (t->power + t->cooling) * 312 / 8760, 1e-12);
}

// An owned H100 costs about $1.5 per GPU-hour amortized (it was $0.50 at the old $12,000 default).
TEST(TcoTest, OwnedH100AtItsCitedPrice) {
  auto t = OwnedGpuTco(Row("H100"), TcoInputs{});
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_DOUBLE_EQ(t->inputs.gpu_price_usd, 39600);
  EXPECT_NEAR(t->usd_per_gpu_hour, 1.5613, 0.0005);
  EXPECT_NEAR(t->power_usd_per_gpu_hour, 0.0442, 0.0005);  // 350 W x $0.08 x PUE 1.58
  EXPECT_NE(t->price_source.find("estimate: a Thinkmate quote"), std::string::npos) << t->price_source;
  // A given price is the caller's; a type with no cited price says it uses the fallback.
  TcoInputs mine;
  mine.gpu_price_usd = 35000;
  EXPECT_EQ(OwnedGpuTco(Row("H100"), mine)->price_source, "given");
  auto t4 = OwnedGpuTco(Row("T4"), TcoInputs{});
  ASSERT_TRUE(t4.has_value());
  EXPECT_DOUBLE_EQ(t4->inputs.gpu_price_usd, kFallbackGpuPriceUsd);
  EXPECT_EQ(t4->price_source, kFallbackGpuPriceSource);
}

TEST(TcoTest, ErrorsNameTheInput) {
  TcoInputs in;
  in.watts_per_tflops = 300;
  auto t = OwnedGpuTco(Row("A100-80G"), in);
  ASSERT_FALSE(t.has_value());
  EXPECT_NE(t.error().message().find("watts_per_tflops 300 x 312 TFLOPS = 93600 W per GPU, above the A100-80G's 400 W TDP"),
            std::string::npos)
      << t.error().message();
  in = TcoInputs{};
  in.pue = 0.5;
  EXPECT_EQ(OwnedGpuTco(Row("A100-80G"), in).error().message(), "pue 0.5: must be in [1, 5]");
  in = TcoInputs{};
  in.life_years = 0;
  EXPECT_EQ(OwnedGpuTco(Row("H100"), in).error().message(), "life 0: must be > 0 years");
  EXPECT_NE(OwnedGpuTco(Row("G2"), TcoInputs{}).error().message().find("gpu: the catalog has no FP16 peak and TDP for 'G2'"),
            std::string::npos);
}

}  // namespace
}  // namespace seedance::cost
