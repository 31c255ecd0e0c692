// Fractional GPUs in the fleet week (issue 39): NVIDIA MIG profiles, notebooks that share a GPU on
// slices each billed its slice, a notebook too large for a slice on a whole GPU, no GPU
// repartitioned while a slice is in use, notebooks on owned slices of a faster type (never of
// their own type, round 4), an owned pool's free share kept for its own work, and the rule that
// keeps serving replicas on whole GPUs. Small hand-built fleets, no serving (fast).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seedance/fleet/bound.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/fractional.h"
#include "seedance/fleet/scenario.h"
#include "seedance/fleet/serving.h"
#include "seedance/fleet/test_week.h"

namespace seedance::fleet {
namespace {

constexpr double kHour = 3600;

using testing::Pool;

// GPU types, pools, one Bronze tenant "dev" with room for every notebook.
FleetWeekScenario Fleet(std::vector<std::string> types, std::vector<sim::PoolSpec> pools, double hours) {
  FleetWeekScenario s;
  s.name = s.fleet.name = "fractional";
  s.fleet.gpu_types = std::move(types);
  s.fleet.pools = std::move(pools);
  s.owned_marginal_usd_per_gpu_hour.assign(s.fleet.gpu_types.size(), 0.1);
  s.tenancy.tenants = {{.name = "dev", .cohort = "fleet", .tier = tenancy::Tier::kBronze, .quota = {{"gpu", 64.0, std::nullopt, std::nullopt}}}};
  s.tenancy.cycle_s = kStepS;
  s.horizon_s = hours * kHour;
  return s;
}

// A notebook of fleet type `type` needing `memory_gb`, in use for `active_h` hours from `arrival_s`,
// then closed at once (no idle tail, no think time).
DevPod Notebook(std::int64_t id, int type, double memory_gb, double arrival_s, double active_h) {
  return {.id = id, .tenant = 0, .arrival_s = arrival_s, .type = type, .active_s = active_h * kHour, .idle_tail_s = 0, .think_gaps = {},
          .memory_gb = memory_gb};
}

StackConfig Fractional() {
  StackConfig c = CompetentStack();
  c.fractional_gpus = true;
  return c;
}

TEST(MigProfiles, ANotebookTakesTheProfileThatPutsTheMostOfItsKindOnAGpu) {
  ASSERT_NE(NotebookProfile("A100-80G", 8), nullptr);
  EXPECT_EQ(NotebookProfile("A100-80G", 8)->name, "1g.10gb");
  EXPECT_EQ(NotebookProfile("A100-80G", 8)->instances, 7);
  EXPECT_NEAR(NotebookProfile("A100-80G", 8)->ComputeFraction(), 1.0 / 7, 1e-12);
  EXPECT_EQ(NotebookProfile("H100", 15)->name, "1g.20gb");  // 4 a GPU beats 2g.20gb's 3
  EXPECT_EQ(NotebookProfile("H100", 30)->name, "3g.40gb");
  EXPECT_EQ(NotebookProfile("A100", 8)->name, "1g.10gb");
  EXPECT_EQ(NotebookProfile("A100", 15)->name, "3g.20gb");
  EXPECT_EQ(NotebookProfile("A100-80G", 41), nullptr);  // only 4g / 7g hold it: a whole GPU
  EXPECT_EQ(NotebookProfile("L4", 8), nullptr);         // no MIG on L4
  EXPECT_EQ(NotebookProfile("A100-80G", 0), nullptr);   // unknown need: a whole GPU
  // With a compute floor (a notebook that asked for an L4, 121 TFLOPS, on an A100-80G, 312).
  EXPECT_EQ(NotebookProfile("A100-80G", 8, 121.0 / 312)->name, "3g.40gb");
  // And a bandwidth floor (an A10G's 600 GB/s on an H100's 3,350: 2/8 of its memory at least).
  EXPECT_EQ(NotebookProfile("H100", 8, 70.0 / 989, 600.0 / 3350)->name, "1g.20gb");
}

TEST(MigProfiles, AReplicaGoesOnSlicesOnlyWhenARequestIsCheaperThere) {
  const MigProfile* p = NotebookProfile("H100", 30);  // 3g.40gb, 2 a GPU, 3/7 of the SMs
  ASSERT_NE(p, nullptr);
  // Scaled by the compute fraction, two slices serve 6/7 of the whole GPU: never cheaper.
  EXPECT_FALSE(ReplicaSliceIsCheaper(*p, ScaledSliceRps(*p, 5.27), 5.27, 15.6));
  for (const MigProfile& q : MigProfiles()) EXPECT_FALSE(ReplicaSliceIsCheaper(q, ScaledSliceRps(q, 5.0), 5.0, 1.0)) << q.name;
  // A slice measured above linear (a small model that cannot fill a whole GPU) wins...
  EXPECT_TRUE(ReplicaSliceIsCheaper(*p, 3.0, 5.27, 15.6));
  // ... unless the replica does not fit its memory.
  EXPECT_FALSE(ReplicaSliceIsCheaper(*p, 3.0, 5.27, 41));
  // Llama-2-7B in FP16 with one full-context request: ~15.6 GB, more than a 1g.10gb slice.
  EXPECT_NEAR(ReplicaMemoryGb("llama-2-7b"), 15.6, 0.3);
  ServingProfile prof;
  prof.gpus = {"H100", "L4"};
  prof.tp = {1, 1};
  prof.replica_rps = {5.27, 0.09};
  int cheaper = -1;
  const std::string v = ReplicaSliceVerdict(prof, ReplicaMemoryGb("llama-2-7b"), &cheaper);
  EXPECT_EQ(cheaper, 0) << v;
  EXPECT_NE(v.find("whole GPUs"), std::string::npos) << v;
}

TEST(FleetFractionalTest, FourSmallNotebooksShareOneGpuAndEachPaysASeventh) {
  // One owned node of 8 H100s at $7 per GPU-hour and no L4 of its own; four notebooks that asked
  // for an L4 with 8 GB, in use for an hour: an H100 1g.10gb slice (141 TFLOPS FP16) has at least
  // an L4's rate (121).
  FleetWeekScenario s = Fleet({"H100", "L4"}, {Pool(0, sim::Tier::kOwned, 8, 7.0)}, 2);
  for (int i = 0; i < 4; ++i) s.dev.push_back(Notebook(i, 1, 8, 0, 1));
  auto frac = RunFleetWeek(s, Fractional());
  ASSERT_TRUE(frac.has_value()) << frac.error().message();
  // One GPU partitioned into 1g.10gb slices holds all four; each notebook pays a seventh of the
  // GPU's $7 (the rest of the bill is no pod's).
  EXPECT_EQ(frac->mig_partitions, 1);
  EXPECT_EQ(frac->dev_on_slices, 4);
  EXPECT_NEAR(frac->hourly[0][kDevActive], 4.0 / 7, 1e-9);
  EXPECT_NEAR(frac->hourly[0][kFree], 8 - 4.0 / 7, 1e-9);
  EXPECT_NEAR(frac->overhead_usd, 112 - 4 * 7.0 / 7, 1e-6);
  // Useful work: an hour on the slice counts a whole GPU-hour of the L4 it asked for (no more).
  EXPECT_NEAR(frac->dev_active_gpu_hours, 4, 1e-9);
}

// Round 4: a notebook gets a whole GPU of the type it asked for. A slice of that type would give
// it a seventh of what it asked for (and its work counts a seventh) while the owned GPU so freed
// is billed all the same: the layer alone made the base's unit cost dearer (+0.2 % on the tuning
// week). On today's main the four share one partitioned GPU.
TEST(FleetFractionalTest, ANotebookOfAnOwnedTypeTakesAWholeGpuOfIt) {
  FleetWeekScenario s = Fleet({"A100-80G"}, {Pool(0, sim::Tier::kOwned, 8, 7.0)}, 2);
  for (int i = 0; i < 4; ++i) s.dev.push_back(Notebook(i, 0, 8, 0, 1));
  auto base = RunFleetWeek(s, CompetentStack());
  auto frac = RunFleetWeek(s, Fractional());
  ASSERT_TRUE(base.has_value() && frac.has_value());
  EXPECT_EQ(frac->mig_partitions, 0);
  EXPECT_EQ(frac->dev_on_slices, 0);
  EXPECT_NEAR(frac->hourly[0][kDevActive], 4, 1e-9);
  EXPECT_NEAR(frac->dev_active_gpu_hours, base->dev_active_gpu_hours, 1e-9);
  EXPECT_NEAR(frac->total_usd, base->total_usd, 1e-6);
}

// Round 4: an owned GPU is partitioned for another type's notebook only while its pool keeps
// StackConfig::fractional_min_free_share of its GPUs free; below it the notebook boots its own
// type's cloud node (a notebook that asked for a $0.8 L4 held an owned H100 that a fine-tune or a
// Gold replica then bought on the cloud). Joining a GPU already partitioned needs no free share.
// On today's main the notebook partitions the owned pool's last free GPU.
TEST(FleetFractionalTest, AnOwnedPoolKeepsItsFreeShareForItsOwnWork) {
  FleetWeekScenario s = Fleet({"H100", "L4"}, {Pool(0, sim::Tier::kOwned, 8, 2.0), Pool(1, sim::Tier::kOnDemand, 16, 0.8)}, 3);
  s.fleet.cold_start_s = 120;
  s.fleet.scale_down_delay_s = 600;
  TrainingJob j = testing::OneStepPerSecondJob(0, 0, 7, 1, 3, 1800);  // 7 of the 8 owned H100s, 3 hours
  j.tenant = 0;
  j.steps_per_s = {1.0, 0.0};
  s.jobs.push_back(j);
  s.dev.push_back(Notebook(1, 1, 8, 600, 1));  // asked for an L4: the H100 pool is 1/8 free
  StackConfig keep = Fractional();
  keep.fractional_min_free_share = 0.25;
  auto frac = RunFleetWeek(s, keep);
  ASSERT_TRUE(frac.has_value()) << frac.error().message();
  EXPECT_EQ(frac->mig_partitions, 0);
  EXPECT_EQ(frac->nodes_booted, 1);  // an L4 node
  EXPECT_GT(frac->on_demand_usd, 0);
  // With the pool free (no training), the same notebook goes on an owned slice.
  s.jobs.clear();
  auto idle = RunFleetWeek(s, keep);
  ASSERT_TRUE(idle.has_value()) << idle.error().message();
  EXPECT_EQ(idle->mig_partitions, 1);
  EXPECT_EQ(idle->nodes_booted, 0);
}

TEST(FleetFractionalTest, ANotebookWhoseMemoryFitsNoSliceGetsAWholeGpu) {
  FleetWeekScenario s = Fleet({"A100-80G"}, {Pool(0, sim::Tier::kOwned, 8, 7.0)}, 2);
  s.dev.push_back(Notebook(0, 0, 60, 0, 1));  // 60 GB: only a 4g / 7g profile holds it
  auto frac = RunFleetWeek(s, Fractional());
  ASSERT_TRUE(frac.has_value()) << frac.error().message();
  EXPECT_EQ(frac->mig_partitions, 0);
  EXPECT_EQ(frac->dev_on_slices, 0);
  EXPECT_NEAR(frac->hourly[0][kDevActive], 1, 1e-9);
  EXPECT_NEAR(frac->overhead_usd, 112 - 7, 1e-6);  // 2 hours of 8 GPUs, one notebook-hour
  EXPECT_NEAR(frac->dev_active_gpu_hours, 1, 1e-9);
}

TEST(FleetFractionalTest, AGpuIsNeverRepartitionedWhileASliceIsInUse) {
  // One owned H100 (no L4 pool). A notebook that asked for an L4 with 8 GB (1g.10gb) is in use for
  // 2 hours from t = 0; one with 30 GB (3g.40gb) arrives at 10 min. The GPU's 1g layout has free
  // slices but none of 3g, and MIG can only be reconfigured on an empty GPU: the second waits until
  // the first is released.
  FleetWeekScenario s = Fleet({"H100", "L4"}, {Pool(0, sim::Tier::kOwned, 1, 7.0)}, 4);
  s.dev.push_back(Notebook(0, 1, 8, 0, 2));
  s.dev.push_back(Notebook(1, 1, 30, 600, 1));
  auto frac = RunFleetWeek(s, Fractional());
  ASSERT_TRUE(frac.has_value()) << frac.error().message();
  EXPECT_EQ(frac->mig_partitions, 2);  // 1g for the first, then 3g once it is empty
  EXPECT_EQ(frac->dev_on_slices, 2);
  EXPECT_NEAR(frac->hourly[0][kDevActive], 1.0 / 7, 1e-9);
  EXPECT_NEAR(frac->hourly[1][kDevActive], 1.0 / 7, 1e-9);
  EXPECT_NEAR(frac->hourly[2][kDevActive], 3.0 / 7, 1e-9);
  EXPECT_NEAR(frac->hourly[3][kDevActive], 0, 1e-9);
  // Its wait: from 10 min to the first notebook's end at 2 h.
  EXPECT_NEAR(frac->dev_wait_p90_min, 110, 1.01);
  // Two 3g notebooks share one 3g layout: no second partition.
  FleetWeekScenario two = Fleet({"H100", "L4"}, {Pool(0, sim::Tier::kOwned, 1, 7.0)}, 2);
  two.dev.push_back(Notebook(0, 1, 30, 0, 1));
  two.dev.push_back(Notebook(1, 1, 30, 600, 0.5));
  auto both = RunFleetWeek(two, Fractional());
  ASSERT_TRUE(both.has_value()) << both.error().message();
  EXPECT_EQ(both->mig_partitions, 1);
  EXPECT_NEAR(both->dev_wait_p90_min, 0, 1e-9);
}

TEST(FleetFractionalTest, SlicesPackOnOwnedGpusOfAFasterTypeBeforeACloudNodeIsBooted) {
  // Owned H100s and on-demand L4s. Two notebooks that asked for an L4 (121 TFLOPS FP16) with 8 GB:
  // an H100 1g.10gb slice has 989 / 7 = 141 TFLOPS, so Seedance runs both on one owned H100
  // (their work counts as full L4 hours: no more); the base boots an L4 node for them.
  FleetWeekScenario s = Fleet({"H100", "L4"}, {Pool(0, sim::Tier::kOwned, 8, 2.0), Pool(1, sim::Tier::kOnDemand, 16, 0.8)}, 2);
  s.fleet.cold_start_s = 120;
  s.fleet.scale_down_delay_s = 600;
  s.dev.push_back(Notebook(0, 1, 8, 0, 1));
  s.dev.push_back(Notebook(1, 1, 8, 0, 1));
  auto base = RunFleetWeek(s, CompetentStack());
  auto frac = RunFleetWeek(s, Fractional());
  ASSERT_TRUE(base.has_value()) << base.error().message();
  ASSERT_TRUE(frac.has_value()) << frac.error().message();
  EXPECT_EQ(base->nodes_booted, 1);
  EXPECT_GT(base->on_demand_usd, 0);
  EXPECT_EQ(frac->nodes_booted, 0);
  EXPECT_NEAR(frac->on_demand_usd, 0, 1e-9);
  EXPECT_EQ(frac->mig_partitions, 1);
  EXPECT_NEAR(frac->dev_active_gpu_hours, 2, 1e-9);
  EXPECT_LT(frac->total_usd, base->total_usd);
  // A 30 GB notebook that asked for an L4 needs a 3g.40gb H100 slice (it fits), still owned.
  FleetWeekScenario big = s;
  big.dev = {Notebook(0, 1, 30, 0, 1)};
  auto b = RunFleetWeek(big, Fractional());
  ASSERT_TRUE(b.has_value()) << b.error().message();
  EXPECT_EQ(b->nodes_booted, 0);
  EXPECT_NEAR(b->hourly[0][kDevActive], 3.0 / 7, 1e-9);
  // Without fractional GPUs the same stack boots the L4 node.
  StackConfig off = Fractional();
  off.fractional_gpus = false;
  auto o = RunFleetWeek(s, off);
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(o->nodes_booted, 1);
}

TEST(FleetFractionalTest, TheBoundAllowsNotebooksOnSlicesOfAnotherType) {
  // The notebooks above run on an owned H100 slice: the lower bound must not ask for L4 hours.
  EXPECT_NEAR(NotebookWorkPerGpuHour("L4", "L4"), 1, 1e-12);
  EXPECT_NEAR(NotebookWorkPerGpuHour("L4", "H100"), 7, 1e-12);         // 989 / 121 > 7: the 1/7 slice caps it
  EXPECT_NEAR(NotebookWorkPerGpuHour("H100", "L4"), 121.0 / 989, 0.01);  // no MIG on L4, slower
  EXPECT_NEAR(NotebookWorkPerGpuHour("A100-80G", "A100-80G"), 1, 1e-12);
  FleetWeekScenario s = Fleet({"H100", "L4"}, {Pool(0, sim::Tier::kOwned, 8, 2.0), Pool(1, sim::Tier::kOnDemand, 16, 0.8)}, 2);
  s.fleet.cold_start_s = 120;
  s.fleet.scale_down_delay_s = 600;
  s.dev.push_back(Notebook(0, 1, 8, 0, 1));
  s.dev.push_back(Notebook(1, 1, 8, 0, 1));
  for (const StackConfig& stack : {CompetentStack(), Fractional()}) {
    auto r = RunFleetWeek(s, stack);
    ASSERT_TRUE(r.has_value()) << r.error().message();
    auto b = FleetWeekLowerBoundUsd(s, *r);
    ASSERT_TRUE(b.has_value()) << b.error().message();
    EXPECT_LE(*b, r->total_usd + 1e-6) << stack.name;
    EXPECT_GE(*b, r->committed_usd - 1e-6) << stack.name;
  }
}

}  // namespace
}  // namespace seedance::fleet
