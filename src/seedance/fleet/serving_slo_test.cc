// Issue 39 item 1: Seedance's serving SLO attainment at least the competent base's on every set.
// On fleet a week 1 (2026-12-07) Seedance served 99.35 % against the base's 99.53 %: its planner's
// forecaster was tuned to serve at least KEDA cron + HPA's share on the tuning week with every
// replica a node cold start late, but in the fleet most replicas land on a node already up and only
// load the model (60 s), where KEDA's HPA catches a burst within a minute and Seedance's forecast-led
// setting (reactive target 1.25-2) does not. The planner is now tuned on both paths.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include <fmt/format.h>

#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"
#include "seedance/fleet/tuning_weeks.h"

namespace seedance::fleet {
namespace {

// The tuning set (fleet a, week 1, seeds 0-4; nothing held out is read): the mean attainment over
// the five weeks, Seedance against the competent base, with the planner tuned on both paths and on
// the cold path only (as before).
TEST(FleetServingSloTest, SeedanceServesAtLeastTheBaseOnTheTuningWeeks) {
  StackConfig cold_only = SeedanceStack();
  cold_only.serving_warm_path = false;
  double base = 0, ours = 0, before = 0;
  ASSERT_EQ(TuningWeeks().size(), 5u);
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const FleetWeekScenario* s = &TuningWeeks()[seed];
    auto b = RunFleetWeek(*s, CompetentStack());
    auto o = RunFleetWeek(*s, SeedanceStack());
    auto c = RunFleetWeek(*s, cold_only);
    ASSERT_TRUE(b.has_value() && o.has_value() && c.has_value());
    std::cout << fmt::format("seed {}: base {:.4f} ({}), Seedance {:.4f} ({}), cold path only {:.4f}; Seedance ${:.0f}, cold path only ${:.0f}\n",
                             seed, b->serving_attainment, fmt::join(b->serving_attainment_by_deployment, ", "),
                             o->serving_attainment, fmt::join(o->serving_attainment_by_deployment, ", "),
                             c->serving_attainment, o->total_usd, c->total_usd);
    base += b->serving_attainment / 5;
    ours += o->serving_attainment / 5;
    before += c->serving_attainment / 5;
    // The tuning rule: on the tuning week the planner serves at least KEDA's share on both paths.
    for (const auto& d : s->serving) {
      const std::string keda = d.spec.name + "|vllm|predictive|single", planner = d.spec.name + "|seedance|predictive|mix";
      ASSERT_TRUE(s->tuned->by_key.count(keda) && s->tuned->by_key.count(planner) && s->tuned->warm_share.count(keda) &&
                  s->tuned->warm_share.count(planner));
      EXPECT_GE(s->tuned->by_key.at(planner).second, s->tuned->by_key.at(keda).second) << d.spec.name << " seed " << seed;
      EXPECT_GE(s->tuned->warm_share.at(planner), s->tuned->warm_share.at(keda)) << d.spec.name << " seed " << seed;
    }
  }
  std::cout << fmt::format("mean over seeds 0-4: base {:.4f}, Seedance {:.4f}, cold path only {:.4f}\n", base, ours, before);
  EXPECT_GE(ours, base);
  EXPECT_LT(before, base);  // what the warm path fixes
}

// Issue 39 item 2: the batching layer alone made the competent base dearer (unit cost 1.006 on
// the tuning week, +0.4 % held out): at the knobs the batching sweep chose per trace Seedance's
// engine serves fewer req/s a replica within SLO than vLLM on every type (H100: chat 5.27 against
// 5.37, code 11.56 against 12.39; the code trace's knobs cap it at 32 sequences, a third of vLLM's
// req/s in the shortest bucket; on L4 and A10G some buckets not at all), so the same KEDA cron +
// HPA ran more replicas. Seedance's batching now runs, per deployment and type, the engine that
// serves more of the mix: never fewer req/s a replica than vLLM at its tuned knobs.
TEST(FleetServingSloTest, SeedancesBatchingServesAtLeastVllmPerReplicaOnEveryType) {
  const FleetWeekScenario& s = TuningWeeks().front();
  ASSERT_FALSE(s.serving.empty());
  for (const ServingDeployment& d : s.serving) {
    ASSERT_EQ(d.seedance.gpus, d.vllm.gpus);
    for (std::size_t k = 0; k < d.vllm.gpus.size(); ++k) {
      std::cout << fmt::format("{} on {}: vllm {:.2f} req/s a replica, seedance's batching {:.2f}\n", d.spec.name,
                               d.vllm.gpus[k], d.vllm.replica_rps[k], d.seedance.replica_rps[k]);
      EXPECT_GE(d.seedance.replica_rps[k], d.vllm.replica_rps[k]) << d.spec.name << " on " << d.vllm.gpus[k];
    }
  }
}

}  // namespace
}  // namespace seedance::fleet
