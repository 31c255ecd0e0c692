// The headline on held-out data (issue 29): which set's figures land in the headline, and that
// tuning seeds are never labelled held out.
#include "seedance/report/seed_split_report.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace seedance::report {
namespace {

sim::PolicyOutcome Outcome(const std::string& name, double cost, bool baseline) {
  sim::PolicyOutcome p;
  p.name = name;
  p.description = name + " policy";
  p.baseline = baseline;
  p.result.total_cost_usd = cost;
  sim::JobResult j;
  j.finish_s = 2 * 3600.0;
  p.result.jobs.push_back(j);
  return p;
}

// A set whose every seed costs the same: seedance `seedance_usd`, the best baseline `best_usd`;
// gavel-las-spot only when `with_gavel`.
SeedSetRun Set(sim::SeedSet set, std::vector<std::uint64_t> seeds, double seedance_usd, double best_usd,
               bool with_gavel) {
  SeedSetRun run;
  run.set = set;
  run.sweep.seeds = seeds;
  std::vector<sim::PolicyOutcome> policies = {Outcome("skypilot", best_usd, true), Outcome("seedance", seedance_usd, false)};
  if (with_gavel) policies.push_back(Outcome("gavel-las-spot", 3 * best_usd, true));
  for (std::uint64_t seed : seeds) {
    sim::ScenarioResult r;
    r.workload = "llm-finetune";
    r.fleet = "f";
    r.jobs = 1;
    r.seed = seed;
    r.policies = policies;
    r.best_baseline = "skypilot";
    run.sweep.runs.push_back(r);
  }
  for (const auto& p : policies) {
    sim::SeedSweep::PolicySummary s;
    s.name = p.name;
    s.description = p.description;
    s.baseline = p.baseline;
    s.total_cost_usd = {p.result.total_cost_usd, 0};
    s.avg_jct_hours = {2, 0};
    run.sweep.policies.push_back(s);
  }
  run.sweep.best_baseline = "skypilot";
  if (!with_gavel && set == sim::SeedSet::kHeldOut) run.left_out = {{"gavel-las-spot", "too slow here"}};
  return run;
}

TEST(SeedSetReport, HeadlineFiguresComeFromTheHeldOutSeedsOnly) {
  const SeedSetRun held = Set(sim::SeedSet::kHeldOut, {5, 6}, 1111, 1234, false);
  const SeedSetRun tuning = Set(sim::SeedSet::kTuning, {0, 1}, 2222, 2345, true);
  const std::string table = SeedSetTable(held, &tuning);
  EXPECT_EQ(table.rfind("Headline, held out: seeds 5,6", 0), 0u) << table;
  const auto row = table.find("\nseedance ");
  ASSERT_NE(row, std::string::npos) << table;
  const std::string seedance_row = table.substr(row + 1, table.find('\n', row + 1) - row - 1);
  // The headline column holds the held-out figure, the tuning one stands to its right.
  ASSERT_NE(seedance_row.find("$1111"), std::string::npos) << seedance_row;
  ASSERT_NE(seedance_row.find("$2222"), std::string::npos) << seedance_row;
  EXPECT_LT(seedance_row.find("$1111"), seedance_row.find("$2222")) << seedance_row;
  EXPECT_NE(seedance_row.find("-10.0% vs best"), std::string::npos) << seedance_row;  // 1111 vs 1234
  // A policy the held-out set left out says so, with its reason under the table.
  EXPECT_NE(table.find("not run held out (below)"), std::string::npos) << table;
  EXPECT_NE(table.find("gavel-las-spot not run (held out: seeds 5,6): too slow here"), std::string::npos) << table;

  nlohmann::json j = {{"seeds", held.sweep.seeds}};
  AddSeedSetJson(held, &tuning, &j);
  EXPECT_EQ(j["headline_set"], "held_out");
  EXPECT_EQ(j["held_out"]["seeds"], nlohmann::json({5, 6}));
  EXPECT_EQ(j["held_out"]["headline"], true);
  EXPECT_EQ(j["held_out"]["label"], "held out: seeds 5,6");
  EXPECT_EQ(j["held_out"]["best_baseline"]["name"], "skypilot");
  EXPECT_EQ(j["held_out"]["not_run"][0]["policy"], "gavel-las-spot");
  EXPECT_FALSE(j["held_out"].contains("per_seed"));
  EXPECT_EQ(j["tuning"]["seeds"], nlohmann::json({0, 1}));
  EXPECT_EQ(j["tuning"]["headline"], false);
  EXPECT_EQ(j["tuning"]["label"], "tuning: seeds 0,1");
  EXPECT_EQ(j["tuning"]["per_seed"].size(), 2u);
  EXPECT_EQ(j["tuning"]["per_seed"][1]["seed"], 1);
  for (const auto& p : j["held_out"]["policies"]) {
    if (p["name"] == "seedance") {
      EXPECT_DOUBLE_EQ(p["total_cost_usd"].get<double>(), 1111);
    }
  }
  for (const auto& p : j["tuning"]["policies"]) {
    if (p["name"] == "seedance") {
      EXPECT_DOUBLE_EQ(p["total_cost_usd"].get<double>(), 2222);
    }
  }

  const std::string html = SeedSetHtmlSection(held, &tuning);
  EXPECT_NE(html.find("<h2>Headline: held out: seeds 5,6 (llm-finetune)</h2>"), std::string::npos) << html;
  EXPECT_NE(html.find("<th class=\"tuning\">tuning: seeds 0,1</th>"), std::string::npos) << html;
  EXPECT_EQ(html.find("held out: seeds 0"), std::string::npos) << html;
  EXPECT_NE(html.find("<strong>$1111 ± 0 / 2.00 h"), std::string::npos) << html;
}

TEST(SeedSetReport, TuningSeedsAloneAreLabelledTuningNeverHeldOut) {
  const SeedSetRun tuning = Set(sim::SeedSet::kTuning, {0, 1, 2, 3, 4}, 2222, 2345, true);
  const std::string table = SeedSetTable(tuning, nullptr);
  EXPECT_EQ(table.rfind("Headline, tuning: seeds 0-4 (in-sample", 0), 0u) << table;
  EXPECT_EQ(table.find("held out"), std::string::npos) << table;
  const std::string html = SeedSetHtmlSection(tuning, nullptr);
  EXPECT_EQ(html.find("held out"), std::string::npos) << html;
  nlohmann::json j = nlohmann::json::object();
  AddSeedSetJson(tuning, nullptr, &j);
  EXPECT_EQ(j["headline_set"], "tuning");
  EXPECT_TRUE(j["held_out"].is_null());
  EXPECT_EQ(j["tuning"]["seeds"], nlohmann::json({0, 1, 2, 3, 4}));
  EXPECT_EQ(j["tuning"]["headline"], true);
}

TEST(SeedSetReport, HeldOutAloneSaysHowToAddTheTuningSet) {
  const SeedSetRun held = Set(sim::SeedSet::kHeldOut, {5, 6, 7, 8, 9}, 1111, 1234, false);
  EXPECT_NE(SeedSetTable(held, nullptr).find("tuning: seeds 0-4 not run (add --with-tuning"), std::string::npos);
  nlohmann::json j = nlohmann::json::object();
  AddSeedSetJson(held, nullptr, &j);
  EXPECT_TRUE(j["tuning"].is_null());
  EXPECT_EQ(j["held_out"]["seeds"], nlohmann::json({5, 6, 7, 8, 9}));
  EXPECT_EQ(SeedSetLabel(Set(sim::SeedSet::kOutside, {42}, 1, 1, true)), "outside the tuning / held-out split: seed 42");
}

}  // namespace
}  // namespace seedance::report
