#include "seedance/cost/fleet_cost.h"

#include <gtest/gtest.h>

#include <string>

namespace seedance::cost {
namespace {

cluster::NodeSpec Node(std::string_view model, int gpus) {
  cluster::NodeSpec n;
  n.name = "n";
  n.gpu_count = gpus;
  n.model = model.empty() ? cluster::kNoGpuModel : *cluster::ParseGpuModel(model);
  return n;
}

PriceTable Prices() {
  auto csv = CsvTable::Parse("p.csv",
                             "gpu_model,usd_per_gpu_hour_on_demand,basis\n"
                             "T4,0.35,quoted\nG2,2.85,proxy\nA10,0.75,quoted\n");
  return *PriceTable::FromCsv(*csv);
}

TEST(FleetCostTest, SumsExactlyAndOrdersByGpuCount) {
  auto f = PriceFleet({Node("T4", 2), Node("G2", 8), Node("", 0), Node("T4", 4)}, Prices());
  ASSERT_TRUE(f.has_value()) << f.error().ToString();
  EXPECT_EQ(f->nodes, 4);
  EXPECT_EQ(f->gpus, 14);
  ASSERT_EQ(f->models.size(), 2u);
  EXPECT_EQ(cluster::GpuModelName(f->models[0].price.model), "G2");  // 8 GPUs before T4's 6
  EXPECT_EQ(f->models[1].nodes, 2);
  // 8 x 2.85 + 6 x 0.35 = 22.80 + 2.10
  EXPECT_EQ(f->usd_per_hour, MicroUsd(24'900'000));
  EXPECT_EQ(f->usd_per_month(), MicroUsd(24'900'000 * kHoursPerMonth));
  EXPECT_EQ(f->average_usd_per_gpu_hour(), MicroUsd(1'778'571));  // 24.9 / 14
  EXPECT_DOUBLE_EQ(f->proxy_share(), 22.8 / 24.9);
}

TEST(FleetCostTest, StrandedCostIsTheUnallocatedShareOfTheMonthlyBill) {
  auto f = PriceFleet({Node("T4", 2), Node("G2", 8)}, Prices());
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(StrandedUsdPerMonth(*f, 0), MicroUsd(0));
  EXPECT_EQ(StrandedUsdPerMonth(*f, 1), f->usd_per_month());
  // 10% of (8 x 2.85 + 2 x 0.35) x 730 = 0.1 x 23.5 x 730 = 1715.5
  EXPECT_EQ(StrandedUsdPerMonth(*f, 0.1), Usd(1715) + MicroUsd(500'000));
}

TEST(FleetCostTest, AModelWithoutAPriceIsAnError) {
  auto f = PriceFleet({Node("T4", 2), Node("P100", 2)}, Prices());
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(f.error().message(),
            "p.csv: no price for GPU model 'P100' (2 GPUs of the fleet); add a row gpu_model=P100");
}

TEST(FleetCostTest, AFleetWithoutGpusIsAnError) {
  auto f = PriceFleet({Node("", 0)}, Prices());
  ASSERT_FALSE(f.has_value());
  EXPECT_EQ(f.error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace seedance::cost
