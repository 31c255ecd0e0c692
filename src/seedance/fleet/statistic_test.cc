// Issue 38, "no silent wrong answer, round 2": the fleet week's totals and charts use one statistic,
// labelled. A set of two weeks whose bills are $300 and $500 (the base) and $100 and $300
// (Seedance): the text table, the report's table and results.json's usd_per_week all show the mean
// per week ($400, $200), each says so, and results.json's total_usd is the sum, labelled as one.
// (It was "total $407,378", the sum of five seeds, beside charts of their mean.)
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "seedance/fleet/comparison.h"

namespace seedance::fleet {
namespace {

StackResult TwoWeeks(const std::string& name, double first_usd, double second_usd) {
  StackResult r;
  r.config.name = name;
  r.seeds.resize(2);
  r.seeds[0].total_usd = first_usd;
  r.seeds[1].total_usd = second_usd;
  r.sum.total_usd = first_usd + second_usd;
  r.sum.idle_gpu_hours = 2 * 30.0;  // 30 GPU-hours idle each week
  r.sum.hourly.assign(24, {});       // the charts' profile (a mean over the weeks already)
  for (std::size_t h = 0; h < r.sum.hourly.size(); ++h) r.sum.hourly[h][0] = static_cast<double>(h % 5);
  return r;
}

TEST(FleetWeekStatisticTest, MoneyIsTheMeanPerWeekEverywhereAndSaysSo) {
  SetResult set;
  set.set.name = "held out: two weeks";
  set.standard = {TwoWeeks("standard", 300, 500)};
  set.seedance = TwoWeeks("seedance", 100, 300);
  set.bound_usd = 160;  // over the two weeks: $80 per week
  set.bound_index = 0.2;
  FleetWeekComparison c;
  c.sets = {set};

  const std::string table = FleetWeekTable(c);
  EXPECT_NE(table.find("$ and GPU-hours: mean per week of the set's 2 weeks"), std::string::npos) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex("\n  standard \\[base\\] +400 "))) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex("\n  seedance \\(every layer\\) +200 "))) << table;
  EXPECT_NE(table.find("idle compute (free GPUs on held nodes + idle notebooks): 30 -> 30 GPU-h"), std::string::npos)
      << table;
  EXPECT_NE(table.find("$80 per week"), std::string::npos) << table;

  const std::string html = FleetWeekHtml(c);
  EXPECT_NE(html.find("mean per week of the set's 2 week(s), as in the charts"), std::string::npos);
  EXPECT_NE(html.find("<td>standard [base]</td><td>400</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>seedance (every layer)</td><td>200</td>"), std::string::npos) << html;

  const auto json = nlohmann::json::parse(FleetWeekJson(c));
  const auto& s = json["sets"][0];
  EXPECT_NE(s["statistic"].get<std::string>().find("usd_per_week and the report: their mean per week"),
            std::string::npos);
  EXPECT_DOUBLE_EQ(s["standard"]["usd_per_week"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(s["standard"]["total_usd"].get<double>(), 800.0);
  EXPECT_DOUBLE_EQ(s["seedance"]["usd_per_week"].get<double>(), 200.0);
  EXPECT_EQ(s["seedance"]["weeks"].get<int>(), 2);
}

// An owned set with a backlog (round 7) shows its useful-work bound and the GPUs each stack needs,
// in the table, results.json and the report. The base: 1,000 PFLOP for $800 (1.25 per $); Seedance
// 1,200 for $400 (3 per $); the bound 4 per $ (3.2x the base's: Seedance at 75 % of it).
TEST(FleetWeekStatisticTest, AnOwnedSetShowsItsUsefulWorkBoundAndTheGpusNeeded) {
  SetResult set;
  set.set.name = "held out: owned";
  set.set.owned_backlog = true;
  set.standard = {TwoWeeks("standard", 300, 500)};
  set.standard[0].sum.training_pflop = 1000;
  set.seedance = TwoWeeks("seedance", 100, 300);
  set.seedance.sum.training_pflop = 1200;
  set.work_bound.pflop = 2000;
  set.work_bound.committed_usd = 450;
  set.work_bound.cloud_usd = 50;
  set.committed_gpus = 64;
  set.gpus_needed_target = {0.99, 10, 0};
  GpusNeeded base, ours;
  base.stack = "standard";
  base.needed_num = 16;
  base.probes = {{16, 64, 400, 400, 0.99, 10, 0, true}};
  ours.stack = "seedance";
  ours.needed_num = 12;
  ours.probes = {{16, 64, 400, 200, 0.995, 12, 0, true}, {12, 48, 300, 150, 0.995, 10, 0, true}};
  set.gpus_needed = {base, ours};
  FleetWeekComparison c;
  c.sets = {set};

  const std::string table = FleetWeekTable(c);
  EXPECT_NE(table.find("4.0 PFLOP per $, 3.200x the base's (cloud $25 a week); Seedance reaches 75.0 % of it"),
            std::string::npos) << table;
  EXPECT_NE(table.find("seedance: 48 of 64 committed GPUs (0.75x)"), std::string::npos) << table;
  const auto json = nlohmann::json::parse(FleetWeekJson(c));
  const auto& s = json["sets"][0];
  EXPECT_DOUBLE_EQ(s["useful_work"]["bound_pflop_per_usd"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(s["useful_work"]["bound_ratio"].get<double>(), 3.2);
  EXPECT_DOUBLE_EQ(s["useful_work"]["seedance_share_of_bound"].get<double>(), 0.75);
  EXPECT_EQ(s["gpus_needed"]["rows"][1]["committed_gpus_needed"].get<int>(), 48);
  const std::string html = FleetWeekHtml(c);
  EXPECT_NE(html.find("Upper bound on useful work per $"), std::string::npos);
  EXPECT_NE(html.find("GPUs needed for the week's SLOs and deadlines"), std::string::npos);
  // A set without the flag shows neither.
  set.set.owned_backlog = false;
  set.gpus_needed.clear();
  c.sets = {set};
  EXPECT_EQ(FleetWeekTable(c).find("upper bound on useful work"), std::string::npos);
  EXPECT_FALSE(nlohmann::json::parse(FleetWeekJson(c))["sets"][0].contains("gpus_needed"));
}

}  // namespace
}  // namespace seedance::fleet
