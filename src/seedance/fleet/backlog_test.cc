// Useful work per dollar on a committed fleet with a standing backlog (issue 39 item 1, fleet c):
// where training's GPU-hours go (by type and job kind, work lost to moves), a job that can wait
// takes the committed type where it has the comparative advantage, and backlog work does not rent
// cloud GPUs dearer per PFLOP than the committed ones. Small hand-built fleets, no serving (fast).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"

namespace seedance::fleet {
namespace {

constexpr double kHour = 3600;
constexpr int kH100 = 0, kA100 = 1;

// Owned H100 and A100-80G nodes (the A100-80G the reference type: it has the most GPUs) and an
// on-demand H100 pool; tenants research (Silver: fine-tunes) and philly (Bronze), each able to
// hold the whole fleet.
struct BacklogFleet {
  FleetWeekScenario s;
  BacklogFleet(int owned_h100, int owned_a100, int on_demand_h100, double on_demand_usd) {
    s.name = "backlog test";
    s.fleet.name = "backlog";
    s.fleet.gpu_types = {"H100", "A100-80G"};
    auto pool = [&](int type, sim::Tier tier, int gpus, double usd) {
      if (gpus <= 0) return;
      sim::PoolSpec p;
      p.type = type;
      p.tier = tier;
      p.max_gpus = gpus;
      p.usd_per_gpu_hour = usd;
      p.committed = tier == sim::Tier::kOwned;
      s.fleet.pools.push_back(p);
    };
    pool(kH100, sim::Tier::kOwned, owned_h100, 1.0);
    pool(kA100, sim::Tier::kOwned, owned_a100, 1.0);
    pool(kH100, sim::Tier::kOnDemand, on_demand_h100, on_demand_usd);
    s.owned_marginal_usd_per_gpu_hour = {0.1, 0.1};
    for (const auto& [name, tier] : {std::pair<const char*, tenancy::Tier>{"research", tenancy::Tier::kSilver},
                                     std::pair<const char*, tenancy::Tier>{"philly", tenancy::Tier::kBronze}}) {
      tenancy::TenantConfig t;
      t.name = name;
      t.cohort = "fleet";
      t.tier = tier;
      t.quota.push_back({"gpu", 64.0, std::nullopt, std::nullopt});
      s.tenancy.tenants.push_back(t);
    }
    s.tenancy.cycle_s = kStepS;
    s.horizon_s = 4 * kHour;
  }
  // A fine-tune (research) runs 2.78x as fast on an H100 as on an A100-80G, a Philly job 1.64x;
  // one PFLOP per GPU-second on an A100-80G; `hours` of work on an A100-80G.
  void Job(double arrival_s, int gpus, bool finetune, double hours) {
    TrainingJob j;
    j.id = static_cast<std::int64_t>(s.jobs.size()) + 1;
    j.name = (finetune ? "ft-" : "philly-") + std::to_string(j.id);
    j.kind = finetune ? "llm-finetune" : "philly";
    j.tenant = finetune ? 0 : 1;
    j.arrival_s = arrival_s;
    j.gpus = gpus;
    j.steps_per_s = {finetune ? 2.78 : 1.64, 1.0};
    j.total_steps = hours * kHour;
    j.pflop_per_step = gpus;
    j.checkpoint_s = 600;
    s.jobs.push_back(j);
  }
};

// The decomposition adds up: training GPU-hours by type and kind are the training GPU-hours, and
// the PFLOP done by type less the work lost is the training PFLOP (no job overshoots here).
TEST(FleetBacklogTest, TheTrainingDecompositionAddsUp) {
  BacklogFleet f(8, 16, 0, 0);
  f.Job(0, 8, true, 100);    // the H100 node all along
  f.Job(0, 8, false, 100);   // an A100-80G node
  f.Job(0, 4, false, 100);
  for (const StackConfig& c : {CompetentStack(), SeedanceStack()}) {
    auto r = RunFleetWeek(f.s, c);
    ASSERT_TRUE(r.has_value());
    double gpu_h = 0, pflop = 0;
    for (const auto& by_kind : r->training_gpu_hours_by_type) {
      for (double x : by_kind) gpu_h += x;
    }
    for (const auto& by_kind : r->training_pflop_by_type) {
      for (double x : by_kind) pflop += x;
    }
    EXPECT_NEAR(gpu_h, r->gpu_hours[kTraining], 1e-9 * gpu_h) << c.name;
    EXPECT_NEAR(pflop - r->training_lost_pflop, r->training_pflop, 1e-9 * pflop) << c.name;
    EXPECT_GT(r->training_gpu_hours_by_type[kH100][0], 0) << c.name;
    EXPECT_EQ(r->training_gpu_hours_by_type[kH100][1], 0) << c.name;
    EXPECT_NEAR(r->committed_training_gpu_hours_by_type[kA100][1], 12 * 4, 12 * kStepS / kHour) << c.name;
  }
}

// Under a standing backlog (more training waiting than the committed GPUs hold), a Philly job
// that can wait takes an A100-80G hole, not the H100 hole, while fine-tune gangs wait for the
// H100 node (the fine-tune's advantage there is 2.78 against 1.64). Before, it took the H100 hole
// (the fastest type with room, as Kueue's flavor order does), and when the H100 node's fine-tune
// ended it had to be moved off (a checkpoint and a restore) for a gang.
TEST(FleetBacklogTest, AJobThatCanWaitTakesTheTypeWhereItHasTheAdvantage) {
  BacklogFleet f(8, 16, 0, 0);
  f.Job(0, 7, true, 2.78);      // the H100 node, one GPU left, for an hour
  f.Job(0, 7, false, 100);      // an A100-80G node, one GPU left
  f.Job(0, 8, false, 100);      // the other A100-80G node
  for (int k = 0; k < 3; ++k) f.Job(600, 8, true, 100);  // fine-tune gangs: 24 GPUs waiting on 24
  f.Job(1200, 1, false, 100);   // a one-GPU Philly job: a hole on each type
  auto r = RunFleetWeek(f.s, SeedanceStack());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->training_gpu_hours_by_type[kH100][1], 0);  // no Philly GPU-hour on the H100
  EXPECT_EQ(r->defrag_moves + r->match_requeues, 0);      // nothing moved for the gang
  // The gang ran on the H100 node from the first job's end: 8 x 2.78 A100-equivalents for the
  // last 3 hours.
  EXPECT_NEAR(r->training_pflop_by_type[kH100][0], (7 * 2.78 * 1 + 8 * 2.78 * 3) * kHour, 0.02 * 8 * 2.78 * 3 * kHour);
  // With no fine-tune waiting (and no backlog), the Philly job takes the faster H100 hole as before.
  BacklogFleet alone(8, 16, 0, 0);
  alone.Job(0, 7, true, 2.78);
  alone.Job(0, 7, false, 100);
  alone.Job(0, 8, false, 100);
  alone.Job(1200, 1, false, 100);
  auto a = RunFleetWeek(alone.s, SeedanceStack());
  ASSERT_TRUE(a.has_value());
  EXPECT_GT(a->training_gpu_hours_by_type[kH100][1], 0);
}

// Round 5 (issue 39, fleet c): a Philly job that took an H100 hole while no fine-tune waited gives
// the GPUs back once fine-tunes wait under a standing backlog, even where the node cannot be
// emptied (a Philly gang's pods pin it here; on fleet c, Gold jobs): each 2-GPU fine-tune takes the
// room of two Philly jobs, which go back to their queue (the A100-80Gs are full). Before, the
// fine-tunes waited for the Philly jobs to end, a hundred hours on.
TEST(FleetBacklogTest, PhillyJobsOnAnH100GiveTheirRoomToWaitingFineTunesUnderABacklog) {
  auto week = [](bool backlog) {
    BacklogFleet f(8, 16, 0, 0);
    auto a100_only = [&](double at) {  // 8 GPUs, A100-80G only
      f.Job(at, 8, true, 100);
      f.s.jobs.back().steps_per_s = {0.0, 1.0};
      f.s.jobs.back().kind = "other";
    };
    a100_only(0);
    a100_only(0);                      // the A100-80Gs full
    f.Job(600, 2, false, 100);         // a Philly gang of two one-GPU pods: the H100 node stays
    f.s.jobs.back().pods = 2;
    for (int k = 0; k < 6; ++k) f.Job(600, 1, false, 100);  // the H100 node's other GPUs
    for (int k = 0; k < 3; ++k) f.Job(1800, 2, true, 100);  // fine-tunes wait: 6 GPUs
    if (backlog) {
      for (int k = 0; k < 3; ++k) a100_only(1800);          // 30 GPUs waiting on 24
    }
    auto r = RunFleetWeek(f.s, SeedanceStack());
    EXPECT_TRUE(r.has_value());
    return r.has_value() ? *r : FleetWeekOutcome{};
  };
  const FleetWeekOutcome with = week(true);
  EXPECT_EQ(with.match_requeues, 6);
  // Three fine-tunes on the H100 node from about half an hour in: 6 GPUs for 3.5 hours.
  EXPECT_NEAR(with.training_gpu_hours_by_type[kH100][0], 6 * 3.5, 0.5);
  EXPECT_NEAR(with.training_gpu_hours_by_type[kH100][1], 8 * (0.5 - 1.0 / 6) + 2 * 3.5, 0.5);  // from 10 min in
  // Without the backlog, the fastest type with room goes to whoever comes first: nobody yields.
  const FleetWeekOutcome without = week(false);
  EXPECT_EQ(without.match_requeues, 0);
  EXPECT_EQ(without.training_gpu_hours_by_type[kH100][0], 0);
}

// A standing backlog on the committed GPUs (more training waiting than they hold): work that can
// wait does not rent cloud GPUs dearer per PFLOP than the committed ones (they stay busy anyway;
// the cloud only adds work at its price), and so does backlog work where the cloud is cheaper per
// PFLOP. A job with a deadline rented the cloud before round 7; it now takes the committed room of
// a job without one (below).
TEST(FleetBacklogTest, BacklogWorkRentsNoCloudDearerPerPflopThanTheCommittedGpus) {
  auto run = [](double on_demand_usd, bool deadline, bool rule, bool deadline_room) {
    BacklogFleet f(0, 8, 16, on_demand_usd);
    f.Job(0, 8, false, 100);                                   // fills the committed node
    for (int k = 0; k < 3; ++k) f.Job(1800, 8, false, 100);    // 24 GPUs waiting on 8 committed
    if (deadline) {
      f.Job(1800, 8, false, 1);
      f.s.jobs.back().deadline_s = 3 * kHour;
    }
    StackConfig c = SeedanceStack();
    c.backlog_waits_for_committed = rule;
    c.deadline_takes_backlog_room = deadline_room;
    auto r = RunFleetWeek(f.s, c);
    EXPECT_TRUE(r.has_value());
    return r.has_value() ? *r : FleetWeekOutcome{};
  };
  // $10 per on-demand H100 hour: 80 $/h for 8 x 1.64 PFLOP/s, 6.1x the committed GPUs' $ per PFLOP.
  const FleetWeekOutcome dear = run(10.0, false, true, true);
  EXPECT_EQ(dear.on_demand_usd, 0);
  EXPECT_GT(run(10.0, false, false, true).on_demand_usd, 0);  // without the rule: two on-demand nodes
  // Before round 7 the deadline job rented (one 8-GPU node for about 0.6 h); the others still wait.
  const FleetWeekOutcome rented = run(10.0, true, true, false);
  EXPECT_GT(rented.on_demand_usd, 0);
  EXPECT_LT(rented.training_gpu_hours_by_type[kH100][1], 8 * 1.0);
  EXPECT_EQ(rented.deadlines_met, 1);
  // $0.1 an hour: cheaper per PFLOP than the committed GPUs: the backlog rents it.
  EXPECT_GT(run(0.1, false, true, true).on_demand_usd, 0);
}

// Round 7 (issue 39, fleet c): under the backlog a job with a deadline takes the committed node of
// a running job without one (of no higher tier; it goes back to its queue from a checkpoint) rather
// than rent an on-demand H100 dearer per PFLOP: the deadline is met on the A100-80G (an hour of
// work there, due 2.5 hours after it arrives) and the cloud bill is 0. Not Gold work, not another
// job with a deadline, and not where the cloud is cheaper per PFLOP than the committed GPUs.
TEST(FleetBacklogTest, AJobWithADeadlineTakesBacklogRoomInsteadOfRentingTheCloud) {
  auto run = [](double on_demand_usd, bool holder_has_deadline, bool rule) {
    BacklogFleet f(0, 8, 16, on_demand_usd);
    f.Job(0, 8, false, 100);  // fills the committed node
    if (holder_has_deadline) f.s.jobs.back().deadline_s = 200 * kHour;
    for (int k = 0; k < 3; ++k) f.Job(1800, 8, false, 100);  // 24 GPUs waiting on 8 committed
    f.Job(1800, 8, true, 1.0);  // a fine-tune with an hour of A100-80G work (0.36 h on an H100), due at 3 h
    f.s.jobs.back().deadline_s = 3 * kHour;
    StackConfig c = SeedanceStack();
    c.deadline_takes_backlog_room = rule;
    auto r = RunFleetWeek(f.s, c);
    EXPECT_TRUE(r.has_value());
    return r.has_value() ? *r : FleetWeekOutcome{};
  };
  const FleetWeekOutcome took = run(10.0, false, true);
  EXPECT_EQ(took.on_demand_usd, 0);
  EXPECT_EQ(took.deadlines_met, 1);
  EXPECT_EQ(took.match_requeues, 1);
  EXPECT_NEAR(took.committed_training_gpu_hours_by_type[kA100][0], 8 * 1.0, 8 * 0.1);  // the fine-tune on the A100-80G
  const FleetWeekOutcome rented = run(10.0, false, false);  // the rule off: it rents an H100 node
  EXPECT_GT(rented.on_demand_usd, 0);
  EXPECT_EQ(rented.match_requeues, 0);
  EXPECT_EQ(rented.deadlines_met, 1);
  // A holder with a deadline of its own keeps its room; a cheap cloud is rented as before.
  EXPECT_GT(run(10.0, true, true).on_demand_usd, 0);
  EXPECT_EQ(run(10.0, true, true).match_requeues, 0);
  EXPECT_GT(run(0.1, false, true).on_demand_usd, 0);
}

// Kueue's WorkloadPriorityClass for work with a deadline (issue 39, both stacks): on a tenant whose
// quota holds one job at a time, a job with a deadline that arrives behind two without is admitted
// first (Kueue orders its queue by priority, and withinClusterQueue LowerPriority may evict the
// running job for it) and meets its deadline; at its tier's priority it waits its turn and misses.
TEST(FleetBacklogTest, AWorkloadPriorityClassPutsWorkWithADeadlineFirstInItsQueue) {
  auto run = [](StackConfig c, bool priority_class) {
    BacklogFleet f(0, 16, 0, 0);
    for (auto& t : f.s.tenancy.tenants) t.quota.front() = {"gpu", 8.0, 0.0, std::nullopt};  // one 8-GPU job each, no borrowing
    f.Job(0, 8, false, 1.0);
    f.Job(60, 8, false, 1.0);
    f.Job(120, 8, false, 1.0);
    f.s.jobs.back().deadline_s = 120 + 1.5 * kHour;
    c.deadline_priority_class = priority_class;
    auto r = RunFleetWeek(f.s, c);
    EXPECT_TRUE(r.has_value());
    return r.has_value() ? *r : FleetWeekOutcome{};
  };
  for (const StackConfig& c : {CompetentStack(), SeedanceStack()}) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(run(c, true).deadlines_met, 1);
    EXPECT_EQ(run(c, false).deadlines_met, 0);  // Seedance's own form: 8 GPUs wait on 16, no backlog
    EXPECT_EQ(run(c, true).deadlines, 1);
  }
}

// Seedance's form (deadline_priority_under_backlog): the same queue on one owned node, where 16
// GPUs wait on 8 when the job with a deadline arrives: a standing backlog, so it goes first.
TEST(FleetBacklogTest, SeedancePutsWorkWithADeadlineFirstOnceABacklogStands) {
  auto run = [](bool under_backlog) {
    BacklogFleet f(0, 8, 0, 0);
    f.Job(0, 8, false, 1.0);
    f.Job(60, 8, false, 1.0);
    f.Job(90, 8, false, 1.0);
    f.Job(120, 8, false, 1.0);
    f.s.jobs.back().deadline_s = 120 + 1.5 * kHour;
    StackConfig c = SeedanceStack();
    c.deadline_priority_under_backlog = under_backlog;
    auto r = RunFleetWeek(f.s, c);
    EXPECT_TRUE(r.has_value());
    return r.has_value() ? *r : FleetWeekOutcome{};
  };
  EXPECT_TRUE(SeedanceStack().deadline_priority_under_backlog);
  EXPECT_EQ(run(true).deadlines_met, 1);
  EXPECT_EQ(run(false).deadlines_met, 0);
}

}  // namespace
}  // namespace seedance::fleet
