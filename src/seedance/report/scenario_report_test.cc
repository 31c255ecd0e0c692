// The cost scenario's outputs (issue 11): the best baseline and its rule, savings against FIFO and
// the best baseline, the gap closed, reference rows and the assumptions beside each figure.
#include "seedance/report/scenario_report.h"

#include <gtest/gtest.h>

#include <string>

namespace seedance::report {
namespace {

sim::PolicyOutcome Policy(const std::string& name, double cost, double jct_h, bool baseline = false,
                          bool reference = false, int unfinished = 0) {
  sim::PolicyOutcome p;
  p.name = name;
  p.description = name + " policy";
  p.baseline = baseline;
  p.reference = reference;
  p.result.total_cost_usd = cost;
  p.result.unfinished = unfinished;
  sim::JobResult j;
  j.finish_s = jct_h * 3600.0;
  p.result.jobs.push_back(j);
  return p;
}

sim::ScenarioResult Scenario() {
  sim::ScenarioResult r;
  r.workload = "w";
  r.fleet = "f";
  r.jobs = 1;
  r.seed = 3;
  r.policies = {Policy("fifo", 1000, 10, true), Policy("gavel-las", 900, 8, true),
                Policy("cheap-but-unfinished", 100, 1, true, false, 2), Policy("seedance", 700, 7),
                Policy("seedance-oracle", 600, 7, false, true)};
  r.bound.usd = 400;
  r.bound_horizon_s = 100 * 3600.0;
  r.best_baseline = r.policies[static_cast<std::size_t>(sim::BestBaseline(r.policies))].name;
  sim::LowerBound at;
  at.usd = 500;
  at.max_avg_jct_s = 8 * 3600.0;
  r.service_bounds.push_back({r.best_baseline, at});
  r.assumptions.push_back({sim::Assumption::kCosts | sim::Assumption::kCharts, "speeds from a table"});
  r.assumptions.push_back({sim::Assumption::kBounds, "bounds ignore queueing"});
  return r;
}

TEST(BestBaseline, CheapestFinishedBaselineNeverAReference) {
  sim::ScenarioResult r = Scenario();
  EXPECT_EQ(r.best_baseline, "gavel-las");  // the unfinished one and the reference are skipped
  // Ties: lower average JCT, then the smaller name.
  std::vector<sim::PolicyOutcome> tie = {Policy("b", 500, 5, true), Policy("a", 500, 5, true),
                                         Policy("c", 500, 4, true), Policy("ref", 1, 1, false, true)};
  EXPECT_EQ(sim::BestBaseline(tie), 2);
  tie[2].result.jobs[0].finish_s = 5 * 3600.0;
  EXPECT_EQ(sim::BestBaseline(tie), 1);
  std::vector<sim::PolicyOutcome> none = {Policy("x", 5, 5, false), Policy("y", 5, 5, true, false, 1)};
  EXPECT_EQ(sim::BestBaseline(none), -1);
}

TEST(BestBaseline, ACheaperButSlowerBaselineIsNotTheBestAtAServiceLevel) {
  // skypilot-like: cheapest, but slower than seedance (7 h); gavel-las is the cheapest at <= 7 h.
  std::vector<sim::PolicyOutcome> p = {Policy("fifo", 1000, 10, true), Policy("slow-cheap", 300, 9, true),
                                       Policy("fast", 900, 6, true), Policy("faster", 950, 5, true)};
  EXPECT_EQ(sim::BestBaseline(p), 1);          // any JCT: the cheapest
  EXPECT_EQ(sim::BestBaseline(p, 7.0), 2);     // at seedance's 7 h: the cheapest that fast
  EXPECT_EQ(sim::BestBaseline(p, 5.0), 3);     // exactly as fast counts
  EXPECT_EQ(sim::BestBaseline(p, 4.0), 3);     // none that fast: the fastest
}

TEST(ScenarioJson, BestBaselineSavingsAndGapClosed) {
  const nlohmann::json j = ScenarioJson(Scenario());
  EXPECT_EQ(j["best_baseline"]["name"], "gavel-las");
  EXPECT_DOUBLE_EQ(j["best_baseline"]["total_cost_usd"].get<double>(), 900);
  EXPECT_DOUBLE_EQ(j["best_baseline"]["avg_jct_hours"].get<double>(), 8);
  EXPECT_DOUBLE_EQ(j["bound_at_best_baseline_usd"].get<double>(), 500);
  EXPECT_EQ(j["seed"], 3);
  const auto& sd = j["policies"][3];
  ASSERT_EQ(sd["name"], "seedance");
  EXPECT_NEAR(sd["savings_vs_fifo_pct"].get<double>(), 30.0, 1e-9);
  EXPECT_NEAR(sd["savings_vs_best_baseline_pct"].get<double>(), 100.0 * 200 / 900, 1e-3);
  EXPECT_NEAR(sd["gap_closed"].get<double>(), 0.5, 1e-9);  // (900 - 700) / (900 - 500)
  EXPECT_TRUE(sd["avg_jct_no_worse_than_best_baseline"].get<bool>());
  EXPECT_FALSE(j["policies"][1].contains("gap_closed"));  // a baseline
  EXPECT_EQ(j["policies"][4]["role"], "reference (knows the future)");
  EXPECT_TRUE(j["policies"][4]["reference"].get<bool>());
  EXPECT_EQ(j["policies"][1]["role"], "best baseline");
  EXPECT_EQ(j["assumptions"].size(), 2u);
}

TEST(ScenarioJson, NoBestBaselineIsNull) {
  sim::ScenarioResult r = Scenario();
  r.best_baseline.clear();
  r.service_bounds.clear();
  const nlohmann::json j = ScenarioJson(r);
  EXPECT_TRUE(j["best_baseline"].is_null());
  EXPECT_TRUE(j["bound_at_best_baseline_usd"].is_null());
}

TEST(ScenarioTable, HeadlineUsesTheBestBaselineAndLabelsReferences) {
  const std::string t = ScenarioTable(Scenario());
  EXPECT_NE(t.find("than the best baseline (gavel-las, $900.00)"), std::string::npos) << t;
  EXPECT_NE(t.find("closes 50% of the gap"), std::string::npos) << t;
  EXPECT_NE(t.find("30.0% cheaper than fifo on-demand"), std::string::npos) << t;
  EXPECT_NE(t.find("reference (knows the future)"), std::string::npos) << t;
  EXPECT_NE(t.find("assumes: speeds from a table"), std::string::npos) << t;
}

// Issue 38: "closes -118% of the gap" was printed for a policy dearer than the best baseline.
TEST(ScenarioTable, GapClosureOnlyWhenMeaningful) {
  sim::ScenarioResult r = Scenario();
  r.policies[3].result.total_cost_usd = 1100;  // seedance dearer than gavel-las ($900)
  const std::string t = ScenarioTable(r);
  EXPECT_EQ(t.find("of the gap"), std::string::npos) << t;
  EXPECT_FALSE(ScenarioJson(r)["policies"][3].contains("gap_closed"));
  r.policies[3].result.total_cost_usd = 400;  // below the bound at the best baseline's JCT ($500)
  EXPECT_EQ(ScenarioTable(r).find("of the gap"), std::string::npos);
}

// Issue 38: a policy is not called cheaper than as run by less than the replay's gap.
TEST(ScenarioTable, SavingSmallerThanTheBacktestErrorIsWithinIt) {
  sim::ScenarioResult r = Scenario();
  sim::AsRunBaseline a;
  a.cost.total_usd = 720;
  a.result.total_cost_usd = 720;
  a.window_start_s = 0;
  a.window_end_s = 3600;
  sim::AsRunBaseline::Replayed rep;
  rep.gap_pct = -4.0;
  a.replayed = rep;
  r.as_run = a;
  const std::string t = ScenarioTable(r);  // seedance $700: 2.8% below $720, inside the 4% error
  EXPECT_NE(t.find("within the backtest's error"), std::string::npos) << t;
  EXPECT_EQ(t.find("cheaper than what you paid as run"), std::string::npos) << t;
  EXPECT_NE(t.find("2.8% apart, within the backtest's error, from what you paid as run"), std::string::npos) << t;
  r.as_run->replayed->gap_pct = 1.0;
  EXPECT_NE(ScenarioTable(r).find("cheaper than what you paid as run"), std::string::npos);
}

TEST(ScenarioHtml, EverySectionCarriesItsAssumptions) {
  const std::string h = ScenarioHtmlSection(Scenario());
  EXPECT_NE(h.find("the best baseline, gavel-las"), std::string::npos);
  EXPECT_NE(h.find("Against FIFO on on-demand"), std::string::npos);
  EXPECT_NE(h.find("Assumes: speeds from a table."), std::string::npos);
  EXPECT_NE(h.find("Assumes: bounds ignore queueing."), std::string::npos);
  EXPECT_NE(h.find("seedance-oracle (reference)"), std::string::npos);
}

TEST(Sweep, MeanSdAndSummaryJson) {
  const sim::MeanSd m = sim::MeanAndSd({1, 2, 3});
  EXPECT_DOUBLE_EQ(m.mean, 2);
  EXPECT_DOUBLE_EQ(m.sd, 1);
  EXPECT_DOUBLE_EQ(sim::MeanAndSd({5}).sd, 0);
  sim::SeedSweep s;
  s.seeds = {0, 1};
  s.runs = {Scenario(), Scenario()};
  s.runs[1].seed = 4;
  sim::SeedSweep::PolicySummary fifo, sd;
  fifo.name = "fifo";
  fifo.baseline = true;
  fifo.total_cost_usd = {1000, 10};
  fifo.avg_jct_hours = {10, 1};
  sd.name = "seedance";
  sd.total_cost_usd = {700, 20};
  sd.avg_jct_hours = {7, 1};
  s.policies = {fifo, sd};
  s.best_baseline = "fifo";
  s.lower_bound_usd = {400, 0};
  s.bound_at_best_baseline_usd = {500, 0};
  const nlohmann::json j = SweepJson(s);
  EXPECT_EQ(j["seeds"].size(), 2u);
  EXPECT_EQ(j["per_seed"].size(), 2u);
  EXPECT_EQ(j["per_seed"][1]["seed"], 4);
  EXPECT_EQ(j["best_baseline"]["name"], "fifo");
  EXPECT_DOUBLE_EQ(j["summary"]["policies"][1]["total_cost_usd"]["sd"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(j["policies"][1]["total_cost_usd"].get<double>(), 700);
  EXPECT_NEAR(j["policies"][1]["gap_closed"].get<double>(), 0.6, 1e-9);  // (1000 - 700) / (1000 - 500)
  const std::string t = SweepTable(s);
  EXPECT_NE(t.find("700.00 ± 20.00"), std::string::npos) << t;
  EXPECT_NE(t.find("=> Over 2 workload seeds"), std::string::npos) << t;
}

}  // namespace
}  // namespace seedance::report
