// The fleet week's decomposition of the bill by GPU type, tier and use (issue 39, round 5: fleet
// a's dollars above the bound): the cloud bill and GPU-hours by type, tier and use, and the owned
// GPU-hours free while training runs on the cloud; a small hand-built fleet (fast).
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "seedance/fleet/decomposition.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"
#include "seedance/fleet/test_week.h"

namespace seedance::fleet {
namespace {

constexpr double kHour = 3600;
constexpr double kOnDemandPrice = 3.0;

// One owned H100 node (8 GPUs) and an on-demand H100 pool of 16 GPUs in nodes of 8. A 4-GPU job
// takes half the owned node for 3 hours; an 8-GPU job (one pod) arriving with it fits no owned
// node, so it runs an hour on an on-demand node beside the 4 owned GPUs left free.
FleetWeekScenario HalfEmptyOwnedNodeBesideTheCloud() {
  FleetWeekScenario s = testing::OnePoolWeek("decomposition", sim::Tier::kOwned, 8, 1.0, 64.0, 4);
  sim::PoolSpec od = s.fleet.pools[0];
  od.tier = sim::Tier::kOnDemand;
  od.max_gpus = 16;
  od.usd_per_gpu_hour = kOnDemandPrice;
  od.committed = false;
  s.fleet.pools.push_back(od);
  s.owned_marginal_usd_per_gpu_hour = {0.0};
  s.jobs = {testing::OneStepPerSecondJob(1, 0, 4, 1, 3, 600), testing::OneStepPerSecondJob(2, 0, 8, 1, 1, 600)};
  return s;
}

TEST(FleetDecompositionTest, TheCloudBillAndTheOwnedRoomBesideItAreSplitByTypeTierAndUse) {
  const FleetWeekScenario s = HalfEmptyOwnedNodeBesideTheCloud();
  for (const StackConfig& stack : {CompetentStack(), SeedanceStack()}) {
    auto o = RunFleetWeek(s, stack);
    ASSERT_TRUE(o.has_value()) << stack.name;
    ASSERT_EQ(o->gpu_types, s.fleet.gpu_types);
    ASSERT_EQ(o->cloud_gpu_hours_by_type.size(), 1u);
    const auto& od = o->cloud_gpu_hours_by_type[0][0];
    // The bill's cloud part, split by type and tier, adds up to the bill's on-demand and spot.
    EXPECT_NEAR(o->cloud_usd_by_type[0][0], o->on_demand_usd, 1e-9) << stack.name;
    EXPECT_EQ(o->cloud_usd_by_type[0][1], 0) << stack.name;
    double held = 0;
    for (double h : od) held += h;
    EXPECT_NEAR(held * kOnDemandPrice, o->on_demand_usd, 1e-6) << stack.name;
    // The 8-GPU job's hour on the cloud, its node's boot, and no cloud GPU left free but after it.
    EXPECT_NEAR(od[kTraining], 8.0, 8 * kStepS / kHour + 1e-9) << stack.name;
    EXPECT_NEAR(od[kBooting], 8 * s.fleet.cold_start_s / kHour, 1e-6) << stack.name;
    EXPECT_EQ(od[kServing] + od[kDevActive] + od[kDevIdle], 0) << stack.name;
    // Owned: 4 GPUs free the whole run but while the 4-GPU job ran; of those, the hour the cloud
    // job ran (and not the boot before it, when no training ran on the cloud).
    EXPECT_NEAR(o->owned_free_gpu_hours_by_type[0], 8 * 4 - 4 * 3, 4 * 2 * kStepS / kHour) << stack.name;
    EXPECT_NEAR(o->owned_free_while_cloud_training_gpu_hours_by_type[0], 4 * 1.0, 4 * 2 * kStepS / kHour) << stack.name;
    // results.json's row carries it under the type's name.
    const nlohmann::json j = DecompositionJson(*o);
    EXPECT_NEAR(j["by_type"]["H100"]["on_demand"]["gpu_hours"][UseName(kTraining)].get<double>(), od[kTraining], 1e-12);
    EXPECT_NEAR(j["by_type"]["H100"]["owned_free_while_cloud_training_gpu_hours"].get<double>(),
                o->owned_free_while_cloud_training_gpu_hours_by_type[0], 1e-12);
    // ... with the committed training GPU-hours by kind (the 4-GPU job's 3 hours on the owned node).
    const std::string kind = s.jobs[0].kind;
    const std::size_t k = static_cast<std::size_t>(TrainingKindIndex(kind));
    EXPECT_NEAR(o->committed_training_gpu_hours_by_type[0][k], 4 * 3.0, 4 * 2 * kStepS / kHour) << stack.name;
    EXPECT_NEAR(j["by_type"]["H100"]["committed_training_gpu_hours_by_kind"][kTrainingKinds[k]].get<double>(),
                o->committed_training_gpu_hours_by_type[0][k], 1e-12);
    // Summed over weeks like every GPU-hour of the set.
    FleetWeekOutcome sum;
    AddDecomposition(*o, &sum);
    AddDecomposition(*o, &sum);
    EXPECT_NEAR(sum.cloud_usd_by_type[0][0], 2 * o->cloud_usd_by_type[0][0], 1e-9);
    EXPECT_NEAR(sum.owned_free_while_cloud_training_gpu_hours_by_type[0],
                2 * o->owned_free_while_cloud_training_gpu_hours_by_type[0], 1e-9);
  }
}

TEST(FleetDecompositionTest, TheBoundsSolutionIsSplitByTypeUseAndPool) {
  // The same week for the bound (fluid: no nodes, no gangs): the 20 GPU-hours of work fit the owned
  // node's 32, so it buys nothing on the cloud, where both stacks rent an 8-GPU node for an hour.
  const FleetWeekScenario s = HalfEmptyOwnedNodeBesideTheCloud();
  auto base = RunFleetWeek(s, CompetentStack());
  ASSERT_TRUE(base.has_value());
  EXPECT_GT(base->on_demand_usd, 8 * kOnDemandPrice);
  BoundDecomposition by;
  auto bound = FleetWeekLowerBoundUsd(s, *base, &by);
  ASSERT_TRUE(bound.has_value()) << bound.error().message();
  ASSERT_EQ(by.gpu_types, s.fleet.gpu_types);
  EXPECT_NEAR(by.committed_usd, 8 * 4 * 1.0, 1e-9);
  EXPECT_NEAR(by.committed_usd + by.pool_usd[0][0] + by.pool_usd[0][1] + by.pool_usd[0][2], *bound, 1e-6);
  EXPECT_EQ(by.pool_usd[0][1], 0);                                   // no on-demand hour
  EXPECT_GE(by.gpu_hours_by_use[0][0], base->training_pflop / 3600 - 1e-6);  // 1 PFLOP a GPU-second
  EXPECT_LE(by.gpu_hours_by_use[0][0], by.pool_gpu_hours[0][0] + 1e-6);    // every hour from the owned pool
  EXPECT_EQ(by.gpu_hours_by_use[0][1] + by.gpu_hours_by_use[0][2], 0);
  const nlohmann::json j = BoundDecompositionJson(by);
  EXPECT_NEAR(j["by_type"]["H100"]["gpu_hours"]["training"].get<double>(), by.gpu_hours_by_use[0][0], 1e-12);
  // The report's table: each column's bill per week (two weeks summed, shown per week), the cloud
  // dollars with their GPU-hours by use, and the bound's column beside them.
  FleetWeekOutcome twice;
  twice.gpu_types = base->gpu_types;
  AddDecomposition(*base, &twice);
  AddDecomposition(*base, &twice);
  twice.total_usd = 2 * base->total_usd;
  twice.committed_usd = 2 * base->committed_usd;
  const std::string html = DecompositionHtml(twice, 2, *base, 1, &by, 1);
  EXPECT_NE(html.find("<td>H100 cloud, on-demand</td><td>" + fmt::format("${:.0f}", base->cloud_usd_by_type[0][0])), std::string::npos) << html;
  EXPECT_NE(html.find(fmt::format("training {:.0f}", base->cloud_gpu_hours_by_type[0][0][kTraining])), std::string::npos) << html;
  EXPECT_NE(html.find(fmt::format("<td>the whole bill</td><td>${0:.0f}</td><td>${0:.0f}</td><td>${1:.0f}</td>", base->total_usd, *bound)),
            std::string::npos)
      << html;
  EXPECT_EQ(DecompositionHtml(*base, 1, *base, 1, nullptr, 1).find("lower bound"), std::string::npos);
  BoundDecomposition two;
  two.Add(by);
  two.Add(by);
  EXPECT_NEAR(two.gpu_hours_by_use[0][0], 2 * by.gpu_hours_by_use[0][0], 1e-9);
}

}  // namespace
}  // namespace seedance::fleet
