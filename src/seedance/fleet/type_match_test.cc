// Seedance's type matching on committed GPUs (issue 39, fleet c; StackConfig::match_types): a
// job yields room on a committed type to a waiting job that is relatively faster there (speed on
// that type / speed on the committed type with the most GPUs), within fair sharing. Small
// hand-built owned fleets, no serving, no notebooks (fast).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "seedance/fleet/comparison.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"

namespace seedance::fleet {
namespace {

constexpr double kHour = 3600;

// Owned 8 H100 (one node) and 16 A100-80G (two nodes: the reference type). Tenants in one cohort:
// research (Silver, fine-tunes) and philly (Bronze) with the given nominal quotas, and an idle
// tenant whose quota the others borrow.
FleetWeekScenario Fleet(double research_nominal, double philly_nominal) {
  FleetWeekScenario s;
  s.name = "type match test";
  s.fleet.name = "type-match";
  s.fleet.gpu_types = {"H100", "A100-80G"};
  for (int type : {0, 1}) {
    sim::PoolSpec p;
    p.type = type;
    p.tier = sim::Tier::kOwned;
    p.max_gpus = type == 0 ? 8 : 16;
    p.usd_per_gpu_hour = 1.0;
    p.committed = true;
    s.fleet.pools.push_back(p);
  }
  s.owned_marginal_usd_per_gpu_hour = {0.1, 0.1};
  for (const auto& [name, tier, nominal] : std::vector<std::tuple<std::string, tenancy::Tier, double>>{
           {"research", tenancy::Tier::kSilver, research_nominal},
           {"philly", tenancy::Tier::kBronze, philly_nominal},
           {"idle", tenancy::Tier::kBronze, 40.0}}) {
    tenancy::TenantConfig t;
    t.name = name;
    t.cohort = "fleet";
    t.tier = tier;
    t.quota.push_back({"gpu", nominal, std::nullopt, std::nullopt});
    s.tenancy.tenants.push_back(t);
  }
  s.tenancy.cycle_s = kStepS;
  s.horizon_s = 6 * kHour;
  return s;
}

// The scenario's two kinds, per GPU on H100 and A100-80G: a fine-tune 2.78x as fast on an H100
// (dense compute), a Philly job 1.64x (memory bandwidth); one PFLOP per GPU-second on an A100.
TrainingJob Job(std::int64_t id, int tenant, double arrival_s, int gpus, bool finetune) {
  TrainingJob j;
  j.id = id;
  j.name = (finetune ? "ft-" : "philly-") + std::to_string(id);
  j.kind = finetune ? "llm-finetune" : "philly";
  j.tenant = tenant;
  j.arrival_s = arrival_s;
  j.gpus = gpus;
  j.steps_per_s = {finetune ? 2.78 : 1.64, 1.0};
  j.total_steps = 100 * kHour;  // longer than the horizon: the work done is the rate
  j.pflop_per_step = gpus;
  j.checkpoint_s = 600;
  return j;
}

// 24 one-GPU Philly jobs fill both types at t = 0 (the H100 first: it is faster for them too);
// an 8-GPU fine-tune arrives at 10 min and fits nowhere.
void FillThenGang(FleetWeekScenario* s) {
  std::int64_t id = 1;
  for (int k = 0; k < 24; ++k) s->jobs.push_back(Job(id++, 1, 0, 1, false));
  s->jobs.push_back(Job(id++, 0, 600, 8, true));
}

StackConfig WithoutMatching() {
  StackConfig c = SeedanceStack();
  c.match_types = false;
  return c;
}

TEST(FleetTypeMatchTest, AFineTuneTakesTheH100sFromPhillyJobsThatMoveToTheA100s) {
  // research borrows (8 GPUs on a nominal 4: no reclaim), philly borrows far more (24 on 4).
  FleetWeekScenario s = Fleet(4, 4);
  FillThenGang(&s);
  auto with = RunFleetWeek(s, SeedanceStack());
  auto without = RunFleetWeek(s, WithoutMatching());
  auto base = RunFleetWeek(s, CompetentStack());
  ASSERT_TRUE(with.has_value() && without.has_value() && base.has_value());
  // Without the rule the gang waits all along; with it the eight Philly jobs on the H100 node go
  // back to their queue from a checkpoint and the fine-tune runs there.
  EXPECT_EQ(without->match_requeues, 0);
  EXPECT_EQ(base->match_requeues, 0);
  EXPECT_EQ(with->match_requeues, 8);
  // GPU-seconds of work per second: 8 x 1.64 + 16 x 1 = 29.1 before, 8 x 2.78 + 16 x 1 = 38.2 after.
  const double before = (8 * 1.64 + 16) * s.horizon_s;
  EXPECT_NEAR(without->training_pflop, before, 0.01 * before);
  EXPECT_NEAR(base->training_pflop, before, 0.01 * before);
  EXPECT_GT(with->training_pflop, 1.25 * without->training_pflop);
  EXPECT_EQ(with->gpu_hours[kFree], without->gpu_hours[kFree]);  // no GPU left idle for it
}

TEST(FleetTypeMatchTest, NoJobYieldsToATenantAboveItsFairShare) {
  // The same fleet with philly within its nominal quota (24 GPUs on 40) and research far beyond
  // its own (8 on 4): taking the H100s from philly would hand research more than fair sharing.
  FleetWeekScenario s = Fleet(4, 40);
  FillThenGang(&s);
  auto with = RunFleetWeek(s, SeedanceStack());
  auto without = RunFleetWeek(s, WithoutMatching());
  ASSERT_TRUE(with.has_value() && without.has_value());
  EXPECT_EQ(with->match_requeues, 0);
  EXPECT_DOUBLE_EQ(with->training_pflop, without->training_pflop);
}

TEST(FleetTypeMatchTest, JobsWithADeadlineNeverYield) {
  FleetWeekScenario s = Fleet(4, 4);
  FillThenGang(&s);
  for (TrainingJob& j : s.jobs) {
    if (j.kind == "philly") j.deadline_s = 48 * kHour;
  }
  auto with = RunFleetWeek(s, SeedanceStack());
  auto without = RunFleetWeek(s, WithoutMatching());
  ASSERT_TRUE(with.has_value() && without.has_value());
  EXPECT_EQ(with->match_requeues, 0);
  EXPECT_DOUBLE_EQ(with->training_pflop, without->training_pflop);
}

// Useful work per $ on the owned fleet c counts tokens served within SLO beside training PFLOP,
// weighted by the base's bill for each kind (issue 39).
TEST(FleetUsefulWorkTest, TokensWithinSloCountBesideTrainingWeightedByTheBasesBill) {
  FleetWeekOutcome base, x;
  base.total_usd = x.total_usd = 100;
  base.training_usd = 75;
  base.serving_usd = 25;
  base.dev_usd = 40;  // notebooks are left out of the weights
  base.training_pflop = 1000;
  base.serving_mtok_in_slo = 50;
  x.training_pflop = 1300;       // 1.3x the PFLOP per $
  x.serving_mtok_in_slo = 45;    // 0.9x the tokens within SLO per $
  const UsefulWorkRatios u = UsefulWorkPerUsd(x, base);
  EXPECT_DOUBLE_EQ(u.pflop, 1.3);
  EXPECT_DOUBLE_EQ(u.mtok, 0.9);
  EXPECT_DOUBLE_EQ(u.training_weight, 0.75);
  EXPECT_DOUBLE_EQ(u.combined, 0.75 * 1.3 + 0.25 * 0.9);
  // A dearer bill for the same work lowers every ratio alike.
  x.total_usd = 200;
  EXPECT_DOUBLE_EQ(UsefulWorkPerUsd(x, base).combined, (0.75 * 1.3 + 0.25 * 0.9) / 2);
}

// A job with a deadline and no estimate of its work (issue 39, fleet b): free owned L4s have room,
// but an L4 runs it 6x slower than an H100 (below migrate_min_speed of its fastest type), so
// Seedance starts it on an on-demand H100 and meets its 5-hour deadline (3 hours of work there,
// 18 on the L4); the competent base takes the owned L4 first and misses it.
TEST(FleetTypeMatchTest, ADeadlineJobStartsOnATypeFastEnoughForItNotOnAFreeSlowOne) {
  FleetWeekScenario s = Fleet(40.0, 40.0);
  s.fleet.gpu_types = {"H100", "L4"};
  s.fleet.pools[0].tier = sim::Tier::kOnDemand;
  s.fleet.pools[0].committed = false;
  s.fleet.pools[0].usd_per_gpu_hour = 4.0;
  s.horizon_s = 24 * kHour;
  TrainingJob j = Job(1, 0, 0, 1, true);
  j.steps_per_s = {6.0, 1.0};
  j.total_steps = 3 * kHour * 6.0;
  j.deadline_s = 5 * kHour;
  s.jobs.push_back(j);
  auto base = RunFleetWeek(s, CompetentStack());
  auto seedance = RunFleetWeek(s, SeedanceStack());
  ASSERT_TRUE(base.has_value()) << base.error().message();
  ASSERT_TRUE(seedance.has_value()) << seedance.error().message();
  EXPECT_EQ(base->deadlines, 1);
  EXPECT_EQ(base->deadlines_met, 0);
  EXPECT_EQ(seedance->deadlines_met, 1);
  EXPECT_GT(seedance->on_demand_usd, 0);
}

}  // namespace
}  // namespace seedance::fleet
