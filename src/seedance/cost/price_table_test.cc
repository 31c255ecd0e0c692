#include "seedance/cost/price_table.h"

#include <gtest/gtest.h>

#include <string>

namespace seedance::cost {
namespace {

Result<PriceTable> Parse(const std::string& text) {
  auto t = CsvTable::Parse("prices.csv", text);
  if (!t.has_value()) return t.error();
  return PriceTable::FromCsv(*t);
}

cluster::GpuModelIndex Model(std::string_view name) { return *cluster::ParseGpuModel(name); }

TEST(PriceTableTest, LoadsTheBundledTableWithEveryOpenbModel) {
  auto t = PriceTable::LoadFile(std::string(SEEDANCE_TEST_DATA_DIR) + "/prices/gpu_prices.csv");
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  for (const char* m : {"G2", "G3", "T4", "P100", "V100M16", "V100M32", "A10"}) {
    const GpuPrice* p = t->Find(Model(m));
    ASSERT_NE(p, nullptr) << m;
    EXPECT_GT(p->usd_per_gpu_hour.raw(), 0) << m;
    EXPECT_FALSE(p->source.empty()) << m;
  }
  // The undisclosed Alibaba types are assumptions and say so.
  for (const char* m : {"G2", "G3"}) {
    EXPECT_EQ(t->Find(Model(m))->basis, PriceBasis::kProxy) << m;
    EXPECT_FALSE(t->Find(Model(m))->note.empty()) << m;
  }
  // Gavel's motivation prices.
  EXPECT_EQ(t->Find(Model("K80"))->usd_per_gpu_hour, MicroUsd(520'000));
  EXPECT_EQ(t->Find(Model("P100"))->usd_per_gpu_hour, MicroUsd(1'680'000));
  EXPECT_EQ(t->Find(Model("V100"))->usd_per_gpu_hour, MicroUsd(2'850'000));
  // The one quoted spot price (RunPod A100 80 GB); the others have none.
  EXPECT_EQ(t->Find(Model("A100-80G"))->spot_usd_per_gpu_hour, MicroUsd(1'190'000));
  EXPECT_EQ(t->Find(Model("H100"))->spot_usd_per_gpu_hour.raw(), 0);
}

TEST(PriceTableTest, OptionalColumnsDefault) {
  auto t = Parse("gpu_model,usd_per_gpu_hour_on_demand\nT4,0.35\n");
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  ASSERT_EQ(t->prices().size(), 1u);
  EXPECT_EQ(t->prices()[0].basis, PriceBasis::kQuoted);
  EXPECT_EQ(t->prices()[0].usd_per_gpu_hour, MicroUsd(350'000));
  EXPECT_EQ(t->prices()[0].spot_usd_per_gpu_hour.raw(), 0);
  EXPECT_EQ(t->Find(Model("A10")), nullptr);
  EXPECT_EQ(t->name(), "prices.csv");
}

struct BadTable {
  std::string text;
  StatusCode code;
  std::string message;
};

class PriceTableBadInputTest : public testing::TestWithParam<BadTable> {};

TEST_P(PriceTableBadInputTest, NamesFileLineColumnAndField) {
  auto t = Parse(GetParam().text);
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code(), GetParam().code);
  EXPECT_EQ(t.error().message().substr(0, GetParam().message.size()), GetParam().message);
}

const char kHead[] = "gpu_model,usd_per_gpu_hour_on_demand,basis\n";

INSTANTIATE_TEST_SUITE_P(
    Rows, PriceTableBadInputTest,
    testing::Values(
        BadTable{std::string(kHead) + "T4,0.35,quoted\nB200,5,quoted\n",
                 StatusCode::kInvalidArgument,
                 "prices.csv:3:1: field 'gpu_model': unknown GPU model 'B200' (known: G2"},
        BadTable{std::string(kHead) + "T4,abc,quoted\n", StatusCode::kInvalidArgument,
                 "prices.csv:2:4: field 'usd_per_gpu_hour_on_demand': expected a non-negative"},
        BadTable{std::string(kHead) + "T4,-1,quoted\n", StatusCode::kInvalidArgument,
                 "prices.csv:2:4: field 'usd_per_gpu_hour_on_demand': expected"},
        BadTable{std::string(kHead) + "T4,0,quoted\n", StatusCode::kInvalidArgument,
                 "prices.csv:2:4: field 'usd_per_gpu_hour_on_demand': the price must be positive"},
        BadTable{std::string(kHead) + "T4,0.35,guess\n", StatusCode::kInvalidArgument,
                 "prices.csv:2:9: field 'basis': expected quoted or proxy, got 'guess'"},
        BadTable{std::string(kHead) + "T4,0.35,quoted\nT4,0.36,quoted\n",
                 StatusCode::kInvalidArgument,
                 "prices.csv:3:1: field 'gpu_model': GPU model 'T4' is priced twice"},
        BadTable{"gpu_model,price\nT4,0.35\n", StatusCode::kInvalidArgument,
                 "prices.csv:1: missing column 'usd_per_gpu_hour_on_demand'"},
        BadTable{std::string(kHead), StatusCode::kInvalidArgument,
                 "prices.csv: the price table has no rows"},
        BadTable{"gpu_model,usd_per_gpu_hour_on_demand,usd_per_gpu_hour_spot\nT4,0.35,x\n",
                 StatusCode::kInvalidArgument,
                 "prices.csv:2:9: field 'usd_per_gpu_hour_spot': expected a non-negative"},
        BadTable{std::string(kHead) + "T4,0.35\n", StatusCode::kInvalidArgument,
                 "prices.csv:2: expected 3 fields, got 2"}));

TEST(PriceTableTest, MissingFileIsNotFound) {
  auto t = PriceTable::LoadFile("/nonexistent/prices.csv");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace seedance::cost
