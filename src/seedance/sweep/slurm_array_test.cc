#include "seedance/sweep/slurm_array.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "seedance/core/file_util.h"
#include "seedance/sweep/sweep_testing.h"

namespace seedance::sweep {
namespace {

// Plays slurmctld: sbatch queues an array; the first squeue shows it (task 0 held for BeginTime,
// as a requeued task is); the second runs every task that is not killed (each one
// RunSlurmTask, as the batch script would) and shows the queue empty.
class FakeSlurm : public CommandRunner {
 public:
  explicit FakeSlurm(std::string dir) : dir_(std::move(dir)) {}

  Result<CommandResult> Run(const std::vector<std::string>& argv) override {
    calls.push_back(argv);
    const std::string& cmd = argv.at(0);
    if (cmd == "sbatch") {
      if (fail_sbatch) return CommandResult{1, "", "sbatch: error: invalid partition specified: nope\n"};
      ++submissions;
      const std::string script = argv.back();
      attempt_ = std::stoi(script.substr(script.rfind("attempt-") + 8));
      for (const auto& a : argv) {
        if (a.rfind("--array=0-", 0) == 0) tasks_ = std::stoul(a.substr(10)) + 1;
      }
      polls_ = 0;
      return CommandResult{0, std::to_string(100 + submissions) + ";fleet\n", ""};
    }
    if (cmd == "squeue") {
      const std::string job = std::to_string(100 + submissions);
      if (std::find(argv.begin(), argv.end(), "-r") == argv.end()) {  // is an earlier array still queued?
        return CommandResult{0, argv.at(3) == old_job && old_job_polls-- > 0 ? old_job + "\n" : "", ""};
      }
      if (argv.at(4) == old_job) return CommandResult{0, old_job_polls-- > 0 ? old_job + "_0|RUNNING|None\n" : "", ""};
      if (++polls_ == 1) {
        std::string out;
        for (std::size_t i = 0; i < tasks_; ++i) {
          out += job + "_" + std::to_string(i) + (i == 0 ? "|PENDING|BeginTime\n" : "|RUNNING|None\n");
        }
        return CommandResult{0, out, ""};
      }
      SteadyClock clock;
      for (std::size_t i = 0; i < tasks_; ++i) {
        if (killed.count({submissions, i})) continue;
        RunInfo info{"fake-host", "n" + std::to_string(1 + i % 3), job + "_" + std::to_string(i), attempt_};
        Status s = RunSlurmTask(dir_, attempt_, i, info, clock);
        EXPECT_TRUE(s.ok()) << s.message();
      }
      return CommandResult{0, "", ""};
    }
    if (cmd == "scontrol") return CommandResult{0, "", ""};
    return UnavailableError(cmd + ": not a Slurm command");
  }

  std::vector<std::vector<std::string>> calls;
  std::set<std::pair<int, std::size_t>> killed;  // (submission, array index) that never finish
  int submissions = 0;
  bool fail_sbatch = false;
  std::string old_job = "none";  // an array of an earlier run, queued for old_job_polls more polls
  int old_job_polls = 0;

 private:
  std::string dir_;
  int attempt_ = 0;
  std::size_t tasks_ = 0;
  int polls_ = 0;
};

class CountingSleeper : public Sleeper {
 public:
  void Sleep(double seconds) override {
    ++sleeps;
    slept += seconds;
  }
  int sleeps = 0;
  double slept = 0;
};

using testing::Slurp;

class SlurmArrayTest : public testing::SmallGridTest {
 protected:
  void SetUp() override {
    testing::SmallGridTest::SetUp();
    dir_ = Dir("slurm");
    ASSERT_TRUE(WritePlan(plan_, dir_).ok());
    options_.exe = "/opt/seedance/bin/seedance";
    options_.partition = "gpu";
    options_.array_limit = 2;
  }
  std::vector<std::vector<std::string>> Sbatches(const FakeSlurm& f) {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : f.calls) {
      if (c[0] == "sbatch") out.push_back(c);
    }
    return out;
  }

  std::string dir_;
  SlurmOptions options_;
};

TEST_F(SlurmArrayTest, SubmitsOneCpuTaskPerCellAndNoGpus) {
  const auto cmd = SbatchCommand(options_, "/out", 3, 60);
  const std::vector<std::string> want = {"sbatch", "--parsable", "--job-name=seedance-sweep", "--array=0-59%2",
                                         "--cpus-per-task=1", "--requeue", "--output=/out/slurm/logs/%A_%a.out",
                                         "--partition=gpu", "/out/slurm/attempt-3.sh"};
  EXPECT_EQ(cmd, want);
}

TEST_F(SlurmArrayTest, AKilledTaskIsResubmittedAloneAndResultsMatchTheLocalRun) {
  FakeSlurm slurm(dir_);
  slurm.killed = {{1, 3}};
  CountingSleeper sleeper;
  std::vector<std::string> lines;
  auto report = RunOnSlurm(plan_, dir_, MissingCells(plan_, dir_), options_, slurm, sleeper,
                           [&lines](const std::string& l) { lines.push_back(l); });
  ASSERT_TRUE(report.has_value()) << report.error().message();
  EXPECT_TRUE(report->missing.empty());
  ASSERT_EQ(report->attempts.size(), 2u);
  EXPECT_EQ(report->attempts[0].cells, 8u);
  EXPECT_EQ(report->attempts[0].finished, 7u);
  EXPECT_EQ(report->attempts[0].released, 1u);  // the BeginTime-held task
  EXPECT_EQ(report->attempts[1].cells, 1u);
  EXPECT_EQ(report->attempts[1].attempt, 2);
  const auto subs = Sbatches(slurm);
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[1][3], "--array=0-0%2");
  // The resubmitted array holds exactly the killed task's cell.
  const std::string killed_cell = Slurp(dir_ + "/slurm/attempt-1.ids").substr(3 * 17, 16);
  EXPECT_EQ(Slurp(dir_ + "/slurm/attempt-2.ids"), killed_cell + "\n");
  EXPECT_NE(Slurp(dir_ + "/slurm/attempt-2.sh").find("'/opt/seedance/bin/seedance' sweep --run-task --out '" + dir_ +
                                                      "' --attempt 2 --index \"$SLURM_ARRAY_TASK_ID\""),
            std::string::npos);
  std::vector<std::vector<std::string>> updates;
  for (const auto& c : slurm.calls) {
    if (c[0] == "scontrol") updates.push_back(c);
  }
  // Once per array: in this fake, task 0 of both is held for BeginTime.
  EXPECT_EQ(updates, (std::vector<std::vector<std::string>>{{"scontrol", "update", "jobid=101_0", "StartTime=now"},
                                                            {"scontrol", "update", "jobid=102_0", "StartTime=now"}}));
  EXPECT_GT(sleeper.sleeps, 0);
  EXPECT_FALSE(lines.empty());
  // Merged results equal a local run's, byte for byte.
  auto slurm_results = MergeResults(plan_, dir_);
  ASSERT_TRUE(slurm_results.has_value()) << slurm_results.error().message();
  const std::string local = Dir("local");
  ASSERT_TRUE(WritePlan(plan_, local).ok());
  SteadyClock clock;
  ASSERT_TRUE(RunLocal(plan_, MissingCells(plan_, local), local, 2, RunInfo{}, clock, nullptr).empty());
  auto local_results = MergeResults(plan_, local);
  ASSERT_TRUE(local_results.has_value());
  EXPECT_EQ(slurm_results->dump(2), local_results->dump(2));
  // Where cells ran is in the cell files' run part, not in the results.
  auto cell = nlohmann::json::parse(Slurp(CellPath(dir_, killed_cell)));
  EXPECT_EQ(cell["run"]["attempt"], 2);
  EXPECT_EQ(cell["run"]["slurm_job"], "102_0");
}

TEST_F(SlurmArrayTest, GivingUpListsTheMissingCellsAndARerunRunsOnlyThose) {
  FakeSlurm slurm(dir_);
  slurm.killed = {{1, 5}, {1, 6}};
  CountingSleeper sleeper;
  options_.max_attempts = 1;
  auto report = RunOnSlurm(plan_, dir_, MissingCells(plan_, dir_), options_, slurm, sleeper, nullptr);
  ASSERT_TRUE(report.has_value());
  ASSERT_EQ(report->missing.size(), 2u);
  EXPECT_FALSE(MergeResults(plan_, dir_).has_value());
  // The rerun (a new driver run) submits attempt 2 with the two missing cells only.
  auto todo = MissingCells(plan_, dir_);
  ASSERT_EQ(todo.size(), 2u);
  EXPECT_EQ(todo[0]->cell.id, report->missing[0]);
  auto rerun = RunOnSlurm(plan_, dir_, todo, options_, slurm, sleeper, nullptr);
  ASSERT_TRUE(rerun.has_value());
  EXPECT_TRUE(rerun->missing.empty());
  ASSERT_EQ(rerun->attempts.size(), 1u);
  EXPECT_EQ(rerun->attempts[0].attempt, 2);
  EXPECT_EQ(rerun->attempts[0].cells, 2u);
  EXPECT_TRUE(MergeResults(plan_, dir_).has_value());
}

TEST_F(SlurmArrayTest, WaitsForAnArrayAnEarlierRunLeftQueued) {
  ASSERT_TRUE(EnsureDirectory(dir_ + "/slurm").ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/slurm/attempt-1.ids", "x\n").ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/slurm/attempt-1.job", "77\n").ok());
  FakeSlurm slurm(dir_);
  slurm.old_job = "77";
  slurm.old_job_polls = 3;
  CountingSleeper sleeper;
  std::vector<std::string> lines;
  auto report = RunOnSlurm(plan_, dir_, MissingCells(plan_, dir_), options_, slurm, sleeper,
                           [&lines](const std::string& l) { lines.push_back(l); });
  ASSERT_TRUE(report.has_value()) << report.error().message();
  EXPECT_TRUE(report->missing.empty());
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("array job 77 of an earlier run into this directory is still queued"),
            std::string::npos);
  // Submitted only after job 77 left the queue, as attempt 2.
  std::size_t first_sbatch = 0, last_old = 0;
  for (std::size_t i = 0; i < slurm.calls.size(); ++i) {
    if (slurm.calls[i][0] == "sbatch" && first_sbatch == 0) first_sbatch = i;
    if (slurm.calls[i][0] == "squeue" && std::find(slurm.calls[i].begin(), slurm.calls[i].end(), "77") !=
                                             slurm.calls[i].end()) {
      last_old = i;
    }
  }
  EXPECT_LT(last_old, first_sbatch);
  EXPECT_EQ(report->attempts.at(0).attempt, 2);
}

TEST_F(SlurmArrayTest, SbatchFailureIsReportedWithItsMessage) {
  FakeSlurm slurm(dir_);
  slurm.fail_sbatch = true;
  CountingSleeper sleeper;
  auto report = RunOnSlurm(plan_, dir_, MissingCells(plan_, dir_), options_, slurm, sleeper, nullptr);
  ASSERT_FALSE(report.has_value());
  EXPECT_EQ(report.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(report.error().message().find("invalid partition specified: nope"), std::string::npos);
}

TEST_F(SlurmArrayTest, TaskWithABadIndexOrAttemptFails) {
  SteadyClock clock;
  EXPECT_FALSE(RunSlurmTask(dir_, 7, 0, RunInfo{}, clock).ok());
  ASSERT_TRUE(EnsureDirectory(dir_ + "/slurm").ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/slurm/attempt-1.ids", plan_.tasks[0].cell.id + "\n").ok());
  Status s = RunSlurmTask(dir_, 1, 1, RunInfo{}, clock);
  EXPECT_NE(s.message().find("no line 2 (the attempt has 1 cells)"), std::string::npos) << s.message();
  EXPECT_TRUE(RunSlurmTask(dir_, 1, 0, RunInfo{}, clock).ok());
  EXPECT_TRUE(std::filesystem::exists(CellPath(dir_, plan_.tasks[0].cell.id)));
}

TEST(ProcessRunnerTest, CollectsOutputAndExitCode) {
  ProcessRunner r;
  auto ok = r.Run({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->exit_code, 3);
  EXPECT_EQ(ok->out, "out\n");
  EXPECT_EQ(ok->err, "err\n");
  EXPECT_FALSE(r.Run({"/nonexistent/seedance-no-such-command"}).has_value());
}

}  // namespace
}  // namespace seedance::sweep
