#include "seedance/sweep/sweep.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "seedance/core/file_util.h"
#include "seedance/sweep/sweep_testing.h"

namespace seedance::sweep {
namespace {

using testing::Slurp;

class SweepTest : public testing::SmallGridTest {
 protected:
  // Runs every missing cell locally and returns results.json's bytes.
  std::string RunAll(const std::string& dir, int threads) {
    EXPECT_TRUE(WritePlan(plan_, dir).ok());
    SteadyClock clock;
    RunInfo info;
    info.host = "test";
    auto errors = RunLocal(plan_, MissingCells(plan_, dir), dir, threads, info, clock, nullptr);
    EXPECT_TRUE(errors.empty()) << errors.front();
    auto merged = MergeResults(plan_, dir);
    EXPECT_TRUE(merged.has_value()) << merged.error().message();
    EXPECT_TRUE(WriteMergedOutputs(*merged, dir).ok());
    return Slurp(dir + "/results.json");
  }
};

TEST_F(SweepTest, ResultsDoNotDependOnThreadsOrWhereCellsRan) {
  const std::string one = RunAll(Dir("one"), 1);
  const std::string two = RunAll(Dir("two"), 3);
  ASSERT_FALSE(one.empty());
  EXPECT_EQ(one, two);
  EXPECT_EQ(Slurp(Dir("one") + "/sweep_report.html"), Slurp(Dir("two") + "/sweep_report.html"));
  EXPECT_EQ(one.find("test-build"), std::string::npos);  // no build, host or path in results
  EXPECT_EQ(one.find(root_.string()), std::string::npos);
  auto j = nlohmann::json::parse(one);
  ASSERT_EQ(j["cells"].size(), 8u);
  for (std::size_t i = 1; i < j["cells"].size(); ++i) {
    EXPECT_LT(j["cells"][i - 1]["id"].get<std::string>(), j["cells"][i]["id"].get<std::string>());
  }
  EXPECT_EQ(j["summary"].size(), 2u);  // two quotas
  // The quota is a real what-if: it changes what the same policy pays or waits.
  const auto& q8 = j["summary"][0]["policies"][0];
  const auto& q24 = j["summary"][1]["policies"][0];
  EXPECT_EQ(j["summary"][0]["values"]["on_demand_quota"], 8);
  EXPECT_NE(q8["avg_jct_hours"]["mean"].get<double>(), q24["avg_jct_hours"]["mean"].get<double>());
}

TEST_F(SweepTest, RerunRunsOnlyMissingOrInvalidCells) {
  const std::string dir = Dir("rerun");
  const std::string first = RunAll(dir, 2);
  EXPECT_TRUE(MissingCells(plan_, dir).empty());
  const std::string a = plan_.tasks[1].cell.id, b = plan_.tasks[4].cell.id, c = plan_.tasks[6].cell.id;
  std::filesystem::remove(CellPath(dir, a));
  { std::ofstream(CellPath(dir, b)) << "{\"cell\": {\"id\": \""; }  // a torn file (not ours: ours are atomic)
  // A cell written by another build is not reused.
  auto j = nlohmann::json::parse(Slurp(CellPath(dir, c)));
  j["run"]["build"] = "older-build";
  ASSERT_TRUE(WriteFileAtomically(CellPath(dir, c), j.dump()).ok());
  auto missing = MissingCells(plan_, dir);
  ASSERT_EQ(missing.size(), 3u);
  EXPECT_EQ(missing[0]->cell.id, a);
  EXPECT_EQ(missing[1]->cell.id, b);
  EXPECT_EQ(missing[2]->cell.id, c);
  auto merged = MergeResults(plan_, dir);
  ASSERT_FALSE(merged.has_value());
  EXPECT_NE(merged.error().message().find("3 of 8 cells are not finished"), std::string::npos);
  SteadyClock clock;
  EXPECT_TRUE(RunLocal(plan_, missing, dir, 2, RunInfo{}, clock, nullptr).empty());
  EXPECT_TRUE(MissingCells(plan_, dir).empty());
  auto again = MergeResults(plan_, dir);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->dump(2) + "\n", first);
}

TEST_F(SweepTest, PlanRoundTripsAndRejectsEditedCells) {
  const std::string dir = Dir("plan");
  ASSERT_TRUE(WritePlan(plan_, dir).ok());
  auto back = ReadPlan(dir);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  ASSERT_EQ(back->tasks.size(), plan_.tasks.size());
  for (std::size_t i = 0; i < back->tasks.size(); ++i) {
    EXPECT_EQ(TaskJson(back->tasks[i]), TaskJson(plan_.tasks[i]));
  }
  auto j = nlohmann::json::parse(Slurp(dir + "/plan.json"));
  j["cells"][3]["params"]["seed"] = 99;
  ASSERT_TRUE(WriteFileAtomically(dir + "/plan.json", j.dump()).ok());
  auto bad = ReadPlan(dir);
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("plan.json: cells[3]: field 'id'"), std::string::npos) << bad.error().message();
}

TEST_F(SweepTest, AFailingCellLeavesItsReasonAndNoResult) {
  const std::string dir = Dir("fail");
  ASSERT_TRUE(WritePlan(plan_, dir).ok());
  Plan broken = plan_;
  broken.data_dir = Dir("no-data-here");
  SteadyClock clock;
  auto errors = RunLocal(broken, {&broken.tasks[0]}, dir, 1, RunInfo{}, clock, nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("cell " + plan_.tasks[0].cell.id + " (llm-finetune fifo seed 0"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(CellPath(dir, plan_.tasks[0].cell.id)));
  EXPECT_FALSE(CellError(dir, plan_.tasks[0].cell.id).empty());
  // Once it succeeds, the reason is gone.
  EXPECT_TRUE(RunAndStore(plan_, plan_.tasks[0], dir, RunInfo{}, clock).ok());
  EXPECT_TRUE(CellError(dir, plan_.tasks[0].cell.id).empty());
}

}  // namespace
}  // namespace seedance::sweep
