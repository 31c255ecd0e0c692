#pragma once

#include <map>
#include <string>

#include "seedance/config/cost_aware.h"
#include "seedance/sim/engine.h"
#include "seedance/sim/remaining_work.h"

namespace seedance::sim {

// SeedanceCostPolicy: cost-aware heterogeneous scheduling (S2.4, S3.1-S3.4).
// - Order: deadline-critical jobs first (least slack), then shortest remaining time (on the
//   job's fastest type) with aging, ties by id.
// - Type: the cheapest expected dollars per step among types at least min_speed_ratio as fast as
//   the job's fastest, counting spot's checkpoint and interruption overhead.
// - Tier (S3.2): critical -> on-demand; expected duration < short_job_s -> spot; otherwise the
//   cheaper in expectation; spot only while its price <= max_price_ratio x on-demand.
// - Checkpoints every Young/Daly interval sqrt(2 C MTBF) from the pool's interruption series.
// - Deadlines: a job whose slack on on-demand falls below deadline_margin_s moves to on-demand
//   and stays there (the "Can't Be Late" safety rule).
// - Non-preemptive otherwise: a running job keeps its pool (no time-slicing churn).
//
// Information (docs/ARCHITECTURE.md "What a policy sees"): remaining work comes from the online
// RemainingWorkEstimator (completed jobs of the same class, attained service), spot interruption
// rates from the trailing spot statistics of PoolView, with a prior of one drop per
// spot_mtbf_prior_s. With `oracle` (the `seedance-oracle` reference row) the same policy reads the
// true remaining work and the whole series' mean time between drops from the OracleView channel
// instead: a bound on what knowing the future is worth, not an online scheduler.
class SeedanceCostPolicy : public JobPolicy {
 public:
  explicit SeedanceCostPolicy(config::CostAwareConfig config, bool oracle = false) : config_(config), oracle_(oracle) {}
  std::string_view name() const override { return oracle_ ? "seedance-oracle" : "seedance"; }
  std::vector<Assignment> Schedule(const SimView& view, Rng& rng) override;
  double CheckpointInterval(const JobView& job, const SimView& view) const override;
  AutoscaleMode autoscale() const override { return config_.autoscale; }
  void OnCompletion(const JobInfo& job, double total_steps, double now) override;
  bool is_oracle() const override { return oracle_; }
  void ObserveOracle(const OracleView& oracle) override { oracle_view_ = oracle; }

 private:
  int BestMove(const SimView& view, const JobView& jv, std::size_t cur_p, double remaining,
               const std::vector<int>& left) const;
  double Score(const SimView& view, std::size_t pool, const JobInfo& s, double remaining) const;
  // Expected remaining steps of view.jobs[index].
  double Remaining(const SimView& view, std::size_t index) const;
  // Mean time between spot drops of pool p (infinity: not a spot pool with a series).
  double SpotMtbf(const SimView& view, std::size_t p) const;
  double EffectivePrice(const SimView& view, std::size_t p, double expected_s) const;

  config::CostAwareConfig config_;
  bool oracle_ = false;
  OracleView oracle_view_;
  RemainingWorkEstimator estimator_;
  std::map<std::int64_t, bool> pinned_on_demand_;
  std::map<std::int64_t, double> placed_at_;  // when the job was last placed on a new pool
};

// On-demand-only baseline policies for cloud fleets: FIFO heterogeneity-agnostic (random type
// among those with room, on-demand tier only), as most clusters run.
class FifoOnDemandPolicy : public JobPolicy {
 public:
  std::string_view name() const override { return "fifo"; }
  std::vector<Assignment> Schedule(const SimView& view, Rng& rng) override;
  void OnCompletion(const JobInfo& job, double total_steps, double now) override;

 private:
  std::map<std::int64_t, int> pool_of_;
};

}  // namespace seedance::sim
