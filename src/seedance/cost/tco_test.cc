#include "seedance/cost/tco.h"

#include <gtest/gtest.h>

namespace seedance::cost {
namespace {

const gpu::GpuFacts& Row(std::string_view name) {
  return gpu::GpuAt(*gpu::ParseGpuName(name, gpu::NameMatch::kName));
}

TEST(TcoTest, DefaultsFromTheCatalog) {
  auto t = OwnedGpuTco(Row("A100-80G"), TcoInputs{});
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_DOUBLE_EQ(t->inputs.tflops, 312);
  EXPECT_NEAR(t->gpu_watts, 400, 1e-9);
  EXPECT_NEAR(t->depreciation, 12000.0 / 3 / 312, 1e-12);
  EXPECT_NEAR(t->power, 400.0 / 312 / 1000 * 0.5 * 8760 * 0.07, 1e-12);
  EXPECT_NEAR(t->cooling, t->power * 0.45, 1e-12);
  EXPECT_NEAR(t->total, 13.48, 0.005);  // `seedance catalog` prints total 13.48
  // Per GPU-hour: the $12,000 over 3 years alone is $0.4566; power and cooling add 0.0203.
  EXPECT_NEAR(t->usd_per_gpu_hour, t->total * 312 / 8760, 1e-12);
  EXPECT_NEAR(t->usd_per_gpu_hour, 0.4801, 0.0005);
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
