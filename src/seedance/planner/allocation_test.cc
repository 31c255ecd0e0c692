#include "seedance/planner/allocation.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "seedance/planner/melange.h"

namespace seedance::planner {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;

int CountOf(const MelangeConfig& c, const Allocation& a, const std::string& gpu) {
  for (std::size_t g = 0; g < c.gpus.size(); ++g) {
    if (c.gpus[g] == gpu) return a.count[g];
  }
  return -1;
}

// Mélange's repository example (config/example.json): its README's answer, 3 x A10G + 1 x
// A100-80GB at $6.70/h; the A10G-only load is exactly 12.0 (the epsilon trap).
TEST(MelangeReproductionTest, RepositoryExample) {
  auto c = LoadMelangeConfig(kData + "/melange/repo_example_config.json");
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  const AllocationProblem p = ToProblem(*c);
  auto a = SolveAllocation(p);
  ASSERT_TRUE(a.has_value()) << a.error().ToString();
  EXPECT_EQ(CountOf(*c, *a, "A10G"), 3);
  EXPECT_EQ(CountOf(*c, *a, "A100-80GB"), 1);
  EXPECT_NEAR(a->usd_per_hour, 6.70, 1e-9);
  const auto single = SingleTypeBaselines(p);
  ASSERT_EQ(c->gpus[1], "A10G");  // gpu_info keys in sorted order
  EXPECT_EQ(single[1].count, 12);  // A10G: load 12.0 exactly -> 12, not 13
  EXPECT_NEAR(single[1].usd_per_hour, 12.12, 1e-9);
  EXPECT_EQ(single[0].count, 2);
  EXPECT_NEAR(BestSingle(single)->usd_per_hour, 7.34, 1e-9);
}

// The Arena point at 1 req/s, TPOT 120 ms (MELANGE_PROTOCOL 4.3): L4 + A10G, $1.71/h, and the
// figure's baseline ratios 4.40 (H100 at $7.5164) / 2.15 / 1.18 / 1.23.
TEST(MelangeReproductionTest, ArenaOneRequestPerSecond) {
  auto c = LoadMelangeConfig(kData + "/melange/arena_early_tables_1rps.json");
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  const AllocationProblem p = ToProblem(*c);
  auto a = SolveAllocation(p);
  ASSERT_TRUE(a.has_value()) << a.error().ToString();
  EXPECT_EQ(CountOf(*c, *a, "L4"), 1);
  EXPECT_EQ(CountOf(*c, *a, "A10G"), 1);
  EXPECT_EQ(CountOf(*c, *a, "A100"), 0);
  EXPECT_EQ(CountOf(*c, *a, "H100"), 0);
  EXPECT_NEAR(a->usd_per_hour, 1.71, 1e-9);
  for (const SingleType& s : SingleTypeBaselines(p)) {
    const double ratio = s.usd_per_hour / a->usd_per_hour;
    const std::string& g = c->gpus[static_cast<std::size_t>(s.option)];
    const double expected = g == "H100" ? 4.40 : g == "A100" ? 2.15 : g == "A10G" ? 1.18 : 1.23;
    EXPECT_NEAR(ratio, expected, 0.005) << g;
  }
}

// MELANGE_PROTOCOL 4.2: Arena x early tables, H100 at $6.234, F = 1, rates 1..32: the same
// cost as the independent CBC reference at every rate (allocations may tie), and F = 8 (the
// aggregated slices) never costs more than F = 1.
TEST(MelangeReproductionTest, ArenaEarlyTablesSection42) {
  auto base = LoadMelangeConfig(kData + "/melange/arena_early_tables_1rps.json");
  ASSERT_TRUE(base.has_value()) << base.error().ToString();
  std::ifstream in(kData + "/melange/arena_early_tables_reference_points.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto ref = nlohmann::json::parse(ss.str());
  ASSERT_EQ(ref.size(), 6u);
  for (const auto& point : ref) {
    MelangeConfig c = *base;
    c.total_request_rate = point["rate"].get<double>();
    for (std::size_t g = 0; g < c.gpus.size(); ++g) {
      if (c.gpus[g] == "H100") c.cost[g] = 6.234;
    }
    auto a = SolveAllocation(ToProblem(c));
    ASSERT_TRUE(a.has_value()) << a.error().ToString();
    EXPECT_NEAR(a->usd_per_hour, point["melange"]["cost"].get<double>(), 1e-6) << "rate " << c.total_request_rate;
    const auto single = SingleTypeBaselines(ToProblem(c));
    for (const SingleType& s : single) {
      const std::string& g = c.gpus[static_cast<std::size_t>(s.option)];
      EXPECT_EQ(s.count, point["single"][g][g].get<int>()) << g << " at rate " << c.total_request_rate;
    }
    c.slice_factor = 8;
    auto a8 = SolveAllocation(ToProblem(c));
    ASSERT_TRUE(a8.has_value());
    EXPECT_LE(a8->usd_per_hour, a->usd_per_hour + 1e-9);
    EXPECT_GE(a8->usd_per_hour, FluidLowerBound(ToProblem(c)) - 1e-9);
  }
}

TEST(AllocationTest, SlicesCoverEveryBucketAndLoadsFitCounts) {
  auto c = LoadMelangeConfig(kData + "/melange/arena_early_tables_1rps.json");
  ASSERT_TRUE(c.has_value());
  c->total_request_rate = 32;
  c->slice_factor = 8;
  const AllocationProblem p = ToProblem(*c);
  auto a = SolveAllocation(p);
  ASSERT_TRUE(a.has_value());
  for (std::size_t b = 0; b < p.rate.size(); ++b) {
    if (p.rate[b] <= 0) continue;
    int sum = 0;
    for (int s : a->slices[b]) sum += s;
    EXPECT_EQ(sum, 8);
  }
  for (std::size_t g = 0; g < p.gpus.size(); ++g) EXPECT_LE(a->load[g], a->count[g] + 1e-6);
}

TEST(AllocationTest, UnservableBucketIsNamedWithItsRate) {
  AllocationProblem p;
  p.rate = {1.0, 0.5};
  p.bucket_names = {"in (0,25] out (0,25]", "in (2000,4096] out (1000,2000]"};
  p.gpus.push_back(GpuOption{"L4", 0.7, false, {10.0, 0.0}, -1});
  auto a = SolveAllocation(p);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(a.error().ToString().find("in (2000,4096] out (1000,2000] (0.5 req/s)"), std::string::npos)
      << a.error().ToString();
}

TEST(AllocationTest, SpotReserveSurvivesLosingAnySpotPool) {
  AllocationProblem p;
  p.rate = {10.0};
  p.gpus.push_back(GpuOption{"A10G", 1.0, false, {2.0}, -1});
  p.gpus.push_back(GpuOption{"A10G", 0.45, true, {2.0}, -1});
  p.gpus.push_back(GpuOption{"L4", 0.2, true, {1.0}, -1});
  auto a = SolveAllocation(p);
  ASSERT_TRUE(a.has_value()) << a.error().ToString();
  // Without spot: 5 x $1.00. With spot the fleet minus any one spot pool still carries 5 GPUs
  // of A10G load.
  EXPECT_LT(a->usd_per_hour, 5.0);
  const double cap_od = a->count[0] * 2.0, cap_a10g = a->count[1] * 2.0, cap_l4 = a->count[2] * 1.0;
  EXPECT_GE(cap_od + cap_l4, 10.0 - 1e-6);
  EXPECT_GE(cap_od + cap_a10g, 10.0 - 1e-6);
  ASSERT_EQ(a->failover.size(), 2u);
}

TEST(MelangeConfigTest, ErrorsNameTheField) {
  auto bad = ParseMelangeConfig("x.json", R"({"gpu_info": {"A10G": {"cost": 1.01, "tputs": [[2, -1]]}},
      "workload_distribution": [[0.5, 0.5]], "total_request_rate": 3})");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().ToString().find("x.json: gpu_info.A10G.tputs[0][1]"), std::string::npos) << bad.error().ToString();
  auto ragged = ParseMelangeConfig("x.json", R"({"gpu_info": {"A10G": {"cost": 1.01, "tputs": [[2, 1]]}},
      "workload_distribution": [[0.5, 0.4]], "total_request_rate": 3})");
  ASSERT_FALSE(ragged.has_value());
  EXPECT_NE(ragged.error().ToString().find("sum to 0.9"), std::string::npos) << ragged.error().ToString();
  EXPECT_FALSE(ParseMelangeConfig("x.json", "{").has_value());
  auto missing = ParseMelangeConfig("x.json", R"({"gpu_info": {}})");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().ToString().find("workload_distribution: missing"), std::string::npos);
}

}  // namespace
}  // namespace seedance::planner
