// Held out: Seedance's defaults were tuned on llm-finetune workload seeds 0-4 and on philly
// (docs/BENCHMARKS.md, "Tuning"). This test runs the defaults on data they were not tuned on,
// llm-finetune seeds 5-9 and the gavel workload, and holds them to the headline rule (issue 29):
// Seedance is no dearer than the best baseline (the cheapest baseline that finished every job) on
// each held-out workload, or README.md says where it loses and why, with a marker this test reads:
// `<!-- held-out-loss: WORKLOAD -->` on the line that gives the reason. A marker for a workload
// where Seedance no longer loses fails too (a stale statement). Seedance must also finish every
// job, miss no more deadlines than the best baseline and keep its average JCT within 1.25x the best
// baseline's. Labelled slow: six cost-benchmark runs (about a minute of CPU).
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "seedance/sim/scenarios.h"
#include "seedance/sim/seed_split.h"

namespace seedance::sim {
namespace {

struct HeldOut {
  double seedance_usd = 0;  // means over the seeds
  double best_usd = 0;
  double seedance_jct_h = 0;
  double best_jct_h = 0;
};

HeldOut Measure(const std::string& workload, const std::vector<std::uint64_t>& seeds) {
  ScenarioSpec spec;
  spec.workload = workload;
  if (workload == "llm-finetune") {
    // Gavel-LAS solves an LP per round over the whole queue; on some llm-finetune instances its
    // on-demand queue grows long enough to take many minutes. Both Gavel-LAS rows cost 1.6-2.2x
    // SkyPilot on the tuning seeds (docs/BENCHMARKS.md), so they cannot be the best baseline there;
    // every other baseline runs, Gavel's cost policies (the Gavel rows on spot) included.
    spec.only_policies = {"fifo",        "skypilot",       "skypilot-fastest", "skypilot-any-of", "skypilot-spot-only",
                          "gavel-cost", "gavel-cost-slo", "seedance"};
  }
  spec.data_dir = SEEDANCE_TEST_DATA_DIR;
  auto sweep = RunCostScenarioSeeds(spec, seeds, nullptr);
  EXPECT_TRUE(sweep.has_value()) << (sweep.has_value() ? "" : sweep.error().ToString());
  if (!sweep.has_value()) return {};
  HeldOut h;
  for (const auto& run : sweep->runs) {
    const PolicyOutcome* seedance = run.Find("seedance");
    EXPECT_NE(seedance, nullptr);
    EXPECT_FALSE(run.best_baseline.empty()) << workload << " seed " << run.seed;
    const PolicyOutcome* best = run.Find(run.best_baseline);
    if (seedance == nullptr || best == nullptr) return {};
    EXPECT_EQ(seedance->result.unfinished, 0) << workload << " seed " << run.seed;
    EXPECT_LE(seedance->result.deadline_misses, best->result.deadline_misses) << workload << " seed " << run.seed;
    std::printf("%s seed %llu: seedance $%.0f / %.2f h; best baseline %s $%.0f / %.2f h\n", workload.c_str(),
                static_cast<unsigned long long>(run.seed), seedance->result.total_cost_usd,
                seedance->result.AvgJctHours(), best->name.c_str(), best->result.total_cost_usd,
                best->result.AvgJctHours());
    h.seedance_usd += seedance->result.total_cost_usd;
    h.best_usd += best->result.total_cost_usd;
    h.seedance_jct_h += seedance->result.AvgJctHours();
    h.best_jct_h += best->result.AvgJctHours();
  }
  // Every policy's mean ± sd: the held-out table in README.md and docs/BENCHMARKS.md.
  for (const auto& ps : sweep->policies) {
    std::printf("%s held out | %s | $%.0f ± %.0f / %.2f h\n", workload.c_str(), ps.name.c_str(),
                ps.total_cost_usd.mean, ps.total_cost_usd.sd, ps.avg_jct_hours.mean);
  }
  const auto n = static_cast<double>(sweep->runs.size());
  h.seedance_usd /= n;
  h.best_usd /= n;
  h.seedance_jct_h /= n;
  h.best_jct_h /= n;
  std::printf("%s held out: seedance $%.0f / %.2f h, best baseline $%.0f / %.2f h (%+.2f%% cost)\n",
              workload.c_str(), h.seedance_usd, h.seedance_jct_h, h.best_usd, h.best_jct_h,
              100.0 * (h.seedance_usd / h.best_usd - 1.0));
  return h;
}

// The README line that carries `<!-- held-out-loss: WORKLOAD -->`, or "" if none.
std::string LossStatement(const std::string& workload) {
  std::ifstream in(std::string(SEEDANCE_TEST_DATA_DIR) + "/../README.md");
  EXPECT_TRUE(in.good()) << "README.md not found next to data/";
  const std::string marker = "<!-- held-out-loss: " + workload + " -->";
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(marker) != std::string::npos) return line;
  }
  return "";
}

void CheckHeadline(const std::string& workload, const HeldOut& h) {
  ASSERT_GT(h.best_usd, 0);
  EXPECT_LE(h.seedance_jct_h, h.best_jct_h * 1.25) << workload;
  const bool loses = h.seedance_usd > h.best_usd;
  const std::string statement = LossStatement(workload);
  if (loses) {
    // The line must say more than the marker: where it loses and why.
    EXPECT_GT(statement.size(), std::string("<!-- held-out-loss:  -->").size() + workload.size() + 60)
        << "Seedance costs $" << h.seedance_usd << " against the best baseline's $" << h.best_usd << " on held-out "
        << workload << " and README.md does not say where it loses and why (marker <!-- held-out-loss: " << workload
        << " -->)";
  } else {
    EXPECT_TRUE(statement.empty()) << "README.md states a held-out loss on " << workload
                                   << " that the data no longer shows: " << statement;
  }
}

TEST(HeldOut, LlmFinetuneSeeds5To9NoDearerThanTheBestBaselineOrTheReadmeSaysWhy) {
  const HeldOut h = Measure("llm-finetune", HeldOutSeeds("llm-finetune"));  // 5-9
  RecordProperty("held_out_cost_vs_best_pct", std::to_string(100.0 * (h.seedance_usd / h.best_usd - 1.0)));
  CheckHeadline("llm-finetune", h);
}

TEST(HeldOut, GavelNoDearerThanTheBestBaselineOrTheReadmeSaysWhy) {
  const HeldOut h = Measure("gavel", HeldOutSeeds("gavel"));  // 42
  RecordProperty("held_out_cost_vs_best_pct", std::to_string(100.0 * (h.seedance_usd / h.best_usd - 1.0)));
  CheckHeadline("gavel", h);
}

}  // namespace
}  // namespace seedance::sim
