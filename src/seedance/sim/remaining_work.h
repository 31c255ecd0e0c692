#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "seedance/sim/workload.h"

namespace seedance::sim {

// RemainingWorkEstimator: a job's remaining work from what a scheduler may know, learned online
// from the sizes of completed jobs (a finished job's size is known).
//
// Sizes are kept as seconds on the job's fastest GPU type (total_steps / max steps_per_s), so jobs
// of different types and step sizes share one scale. For a job that has done `attained` of that,
// the estimate is the mean residual size E[S - attained | S > attained] over the empirical
// distribution of completed jobs of its class: the quantity behind Tiresias' Gittins index
// (Gu et al., NSDI'19: priority from the distribution of job service and a job's attained service;
// SymbioticLab/Tiresias simulator, `gittins` schedule) and Helios' QSSF, which estimates a job
// from the history of the same user and job name, falling back to broader history
// (Hu et al., SC'21; S-Lab-System-Group/HeliosArtifact, framework/QSSF Service/estimators).
//
// Levels, first with at least `min_samples` completed jobs larger than `attained`:
//   1. the job's class (JobInfo::job_type), 2. its tenant (user or virtual cluster),
//   3. the user's estimate (JobInfo::user_estimate_steps) while it exceeds attained,
//   4. every completed job, 5. the prior: max(default_remaining_s, attained) - a job that has run
//   for x is expected to run about x more, the least-attained-service rule of thumb for
//   heavy-tailed sizes.
// Deterministic. Observe is O(1); the first query after new observations merges them into the
// sorted sizes (O(n + k log k) for k new), every other query is O(log n).
class RemainingWorkEstimator {
 public:
  struct Options {
    int min_samples = 3;
    double default_remaining_s = 3600;
  };
  enum class Source { kClass, kTenant, kUserEstimate, kAll, kPrior };
  struct Estimate {
    double remaining_steps = 0;
    Source source = Source::kPrior;
  };

  RemainingWorkEstimator() = default;
  explicit RemainingWorkEstimator(Options options) : options_(options) {}

  // A job completed with `total_steps` of work.
  void Observe(const JobInfo& job, double total_steps);
  // Expected remaining steps of `job` after `attained_steps`; > 0.
  Estimate EstimateRemaining(const JobInfo& job, double attained_steps) const;
  std::size_t observed() const { return all_.size(); }

 private:
  // Completed sizes of one group: sorted, with suffix sums, and new ones waiting to be merged.
  class Group {
   public:
    void Add(double size_s) { pending_.push_back(size_s); }
    std::size_t size() const { return sorted_.size() + pending_.size(); }
    // Mean residual over sizes > attained_s if at least `min` such sizes; < 0 otherwise.
    double MeanResidual(double attained_s, int min) const;

   private:
    void Merge() const;
    mutable std::vector<double> sorted_;
    mutable std::vector<double> suffix_;  // suffix_[i] = sum of sorted_[i..]; size n + 1
    mutable std::vector<double> pending_;
  };

  Options options_;
  std::map<std::string, Group> by_class_;
  std::map<std::string, Group> by_tenant_;
  Group all_;
};

std::string_view EstimateSourceName(RemainingWorkEstimator::Source source);

}  // namespace seedance::sim
