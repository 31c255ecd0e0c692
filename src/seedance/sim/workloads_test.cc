#include "seedance/sim/workloads.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "seedance/core/file_util.h"

namespace seedance::sim {
namespace {

std::string WriteOpenbPods(const std::string& name, const std::string& rows) {
  const std::string path = testing::TempDir() + "/" + name;
  const std::string head =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
      "deletion_time,scheduled_time\n";
  EXPECT_TRUE(WriteFileAtomically(path, head + rows).ok());
  return path;
}

// openb speeds (docs/WORKLOADS.md): a pod's recorded run time is its run time on the types it
// names (at their mean speed), else on a V100-class GPU; each type runs at its catalog speed.
TEST(OpenbSpeeds, RecordedRunTimeIsOnTheNamedTypesElseAV100) {
  const std::string path = WriteOpenbPods(
      "openb_speeds.csv",
      "any,1000,1024,1,1000,,LS,Running,0,1000,0\n"
      "t4,1000,1024,1,1000,T4,LS,Running,10,1010,10\n"
      "mixed,1000,1024,2,1000,V100M16|T4,LS,Running,20,1020,20\n");
  const std::vector<std::string> types{"G2", "T4", "P100", "V100M16", "A10"};
  auto w = LoadOpenbJobs(path, types);
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  ASSERT_EQ(w->jobs.size(), 3u);
  const JobSpec& any = w->jobs[0];
  EXPECT_DOUBLE_EQ(any.total_steps, 1000.0);  // V100-seconds: measured on the reference
  const std::vector<double> speeds{1.0, 0.52, 0.943, 1.0, 1.0};
  EXPECT_EQ(any.steps_per_s, speeds);
  // Named T4: 1,000 s on a T4 is 520 V100-seconds, and the T4 needs its 1,000 s again.
  const JobSpec& t4 = w->jobs[1];
  EXPECT_DOUBLE_EQ(t4.total_steps, 520.0);
  EXPECT_EQ(t4.steps_per_s, (std::vector<double>{0, 0.52, 0, 0, 0}));
  EXPECT_DOUBLE_EQ(t4.total_steps / t4.steps_per_s[1], 1000.0);
  const JobSpec& mixed = w->jobs[2];
  EXPECT_DOUBLE_EQ(mixed.total_steps, 1000.0 * (1.0 + 0.52) / 2);
}

TEST(OpenbSpeeds, ATypeWithoutACatalogSpeedIsAnError) {
  const std::string path =
      WriteOpenbPods("openb_no_speed.csv", "any,1000,1024,1,1000,,LS,Running,0,1000,0\n");
  auto w = LoadOpenbJobs(path, {"T4", "H100"});
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().message(),
            "openb: GPU type 'H100' has no relative training speed in the GPU catalog");
  EXPECT_FALSE(LoadOpenbJobs(path, {"T4", "B200"}).has_value());
}

TEST(OpenbSpeeds, TheNoteStatesTheAssumptionAndEachSpeed) {
  const std::string note = OpenbSpeedNote({"G2", "T4", "P100", "A10"});
  EXPECT_EQ(note.rfind("openb assumes: a pod's recorded run time (deletion - creation) is on a "
                       "V100-class GPU",
                       0),
            0u)
      << note;
  for (const char* part : {"G2 1.00 (assumed)", "T4 0.52 (FP16 tensor ratio)", "P100 0.94 (Gavel)",
                           "A10 1.00 (FP16 tensor ratio)", "docs/WORKLOADS.md"}) {
    EXPECT_NE(note.find(part), std::string::npos) << part << " in " << note;
  }
}

// Issue 29: an llm-finetune deadline is set from the submitter's estimate, drawn independently of
// the true size, so it does not reveal the size. Before, every deadline was exactly
// arrival + max(6 h, 3x the true run time on the fastest type), and within a template the deadline
// tracked the size (correlation of the logs 0.69 on the full fine-tunes of seeds 0-4).
TEST(LlmFinetune, DeadlinesDoNotRevealTheTrueSize) {
  std::vector<double> log_size;
  std::vector<double> log_slack;
  int with_deadline = 0;
  int exact = 0;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const Workload w = GenerateLlmFinetune(1200, 7 * 86400.0, seed);
    for (const JobSpec& j : w.jobs) {
      if (!std::isfinite(j.deadline_s)) continue;
      ++with_deadline;
      const double best = *std::max_element(j.steps_per_s.begin(), j.steps_per_s.end());
      const double from_truth = std::max(6 * 3600.0, 3.0 * j.total_steps / best);
      const double slack = j.deadline_s - j.arrival_s;
      EXPECT_GE(slack, 6 * 3600.0 - 1e-6) << j.id;
      EXPECT_GT(slack, j.total_steps / best) << "job " << j.id << " cannot meet its deadline";
      if (from_truth > 6 * 3600.0 + 1 && std::abs(slack - from_truth) < 1e-6) ++exact;
      if (j.job_type.rfind("full", 0) == 0) {  // full-7b, full-13b: runs long enough to clear the floor
        log_size.push_back(std::log(j.total_steps));
        log_slack.push_back(std::log(slack));
      }
    }
  }
  EXPECT_GT(with_deadline, 1000);
  EXPECT_EQ(exact, 0) << "deadlines computed from the true size";
  ASSERT_GT(log_size.size(), 100u);
  const auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  const double ms = mean(log_size);
  const double md = mean(log_slack);
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t k = 0; k < log_size.size(); ++k) {
    sxy += (log_size[k] - ms) * (log_slack[k] - md);
    sxx += (log_size[k] - ms) * (log_size[k] - ms);
    syy += (log_slack[k] - md) * (log_slack[k] - md);
  }
  const double r = sxy / std::sqrt(sxx * syy);
  EXPECT_LT(std::abs(r), 0.15) << "correlation of log size and log deadline slack: " << r;
}

}  // namespace
}  // namespace seedance::sim
