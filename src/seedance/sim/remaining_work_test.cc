#include "seedance/sim/remaining_work.h"

#include <gtest/gtest.h>

namespace seedance::sim {
namespace {

JobInfo Info(const std::string& type, const std::string& tenant = "", double speed = 2.0) {
  JobInfo j;
  j.job_type = type;
  j.tenant = tenant;
  j.steps_per_s = {speed / 2, speed};
  return j;
}

using Source = RemainingWorkEstimator::Source;

TEST(RemainingWork, PriorWithoutHistoryIsTheDefaultOrTheAttainedService) {
  RemainingWorkEstimator est;
  auto e = est.EstimateRemaining(Info("a"), 0);
  EXPECT_EQ(e.source, Source::kPrior);
  EXPECT_DOUBLE_EQ(e.remaining_steps, 3600 * 2.0);  // one hour on the fastest type (2 steps/s)
  // A job that has already run two hours is expected to run about as long again.
  EXPECT_DOUBLE_EQ(est.EstimateRemaining(Info("a"), 7200 * 2.0).remaining_steps, 7200 * 2.0);
}

TEST(RemainingWork, UserEstimateBeatsTheGlobalHistoryButNotTheClass) {
  RemainingWorkEstimator est;
  for (double s : {100.0, 200.0, 300.0}) est.Observe(Info("other"), s * 2.0);
  JobInfo j = Info("a");
  j.user_estimate_steps = 5000;
  auto e = est.EstimateRemaining(j, 1000);
  EXPECT_EQ(e.source, Source::kUserEstimate);
  EXPECT_DOUBLE_EQ(e.remaining_steps, 4000);
  // Past the user's estimate it falls through to every completed job: none is that long -> prior.
  EXPECT_EQ(est.EstimateRemaining(j, 6000).source, Source::kPrior);
  for (double s : {10.0, 20.0, 30.0}) est.Observe(Info("a"), s * 2.0);
  EXPECT_EQ(est.EstimateRemaining(j, 0).source, Source::kClass);
}

TEST(RemainingWork, MeanResidualOverLargerCompletedJobsOfTheClass) {
  RemainingWorkEstimator est;
  // Sizes 100, 200, 400, 800 s on the fastest type.
  for (double s : {400.0, 100.0, 800.0, 200.0}) est.Observe(Info("a"), s * 2.0);
  auto e = est.EstimateRemaining(Info("a"), 0);
  EXPECT_EQ(e.source, Source::kClass);
  EXPECT_DOUBLE_EQ(e.remaining_steps, (100 + 200 + 400 + 800) / 4.0 * 2.0);
  // After 150 s: E[S - 150 | S > 150] over {200, 400, 800} = 466.67 - 150.
  EXPECT_NEAR(est.EstimateRemaining(Info("a"), 150 * 2.0).remaining_steps, (1400.0 / 3 - 150) * 2.0, 1e-9);
  // After 300 s only two larger jobs remain (< min_samples 3): the whole history answers, same sizes.
  EXPECT_EQ(est.EstimateRemaining(Info("a"), 300 * 2.0).source, Source::kPrior);
}

TEST(RemainingWork, FallsBackFromClassToTenantToAll) {
  RemainingWorkEstimator est;
  for (double s : {10.0, 20.0, 30.0}) est.Observe(Info("x", "alice"), s * 2.0);
  for (double s : {1000.0, 2000.0, 3000.0}) est.Observe(Info("y", "bob"), s * 2.0);
  EXPECT_EQ(est.EstimateRemaining(Info("new", "alice"), 0).source, Source::kTenant);
  EXPECT_DOUBLE_EQ(est.EstimateRemaining(Info("new", "alice"), 0).remaining_steps, 20 * 2.0);
  auto all = est.EstimateRemaining(Info("new", "carol"), 0);
  EXPECT_EQ(all.source, Source::kAll);
  EXPECT_DOUBLE_EQ(all.remaining_steps, (60.0 + 6000.0) / 6 * 2.0);
  // Sizes are learned in fastest-type seconds: a class seen at one speed transfers to another.
  EXPECT_DOUBLE_EQ(est.EstimateRemaining(Info("x", "alice", 4.0), 0).remaining_steps, 20 * 4.0);
}

TEST(RemainingWork, DeterministicAndIndependentOfObservationOrder) {
  RemainingWorkEstimator a, b;
  std::vector<double> sizes{5, 3, 9, 1, 7, 2, 8};
  for (double s : sizes) a.Observe(Info("c"), s);
  (void)a.EstimateRemaining(Info("c"), 0);  // merges half-way
  for (auto it = sizes.rbegin(); it != sizes.rend(); ++it) b.Observe(Info("c"), *it);
  for (double att : {0.0, 1.5, 3.0, 4.0}) {
    EXPECT_DOUBLE_EQ(a.EstimateRemaining(Info("c"), att).remaining_steps,
                     b.EstimateRemaining(Info("c"), att).remaining_steps);
  }
  EXPECT_EQ(a.observed(), sizes.size());
}

}  // namespace
}  // namespace seedance::sim
