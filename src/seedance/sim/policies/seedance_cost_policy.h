#pragma once

#include <map>
#include <string>

#include "seedance/sim/engine.h"
#include "seedance/sim/remaining_work.h"

namespace seedance::sim {

// Settings of the cost-aware scheduler (S3.1, seedance-config.yaml `scheduler.cost_aware`).
struct CostAwareConfig {
  bool enabled = true;
  bool spot_fallback = true;       // spot unavailable or interrupted -> on-demand
  double max_price_ratio = 0.65;   // use spot only while spot <= ratio x on-demand; in (0, 1]
  double warmup_window_s = 300;    // a job placed less than this ago is not moved to spot
  // Beyond the seed: the slowest type we accept, as a share of the job's fastest type's speed
  // (keeps JCT in check when a slow type is cheapest per step). Defaults of this struct were tuned
  // on llm-finetune seeds 0-4 and philly only (docs/BENCHMARKS.md "Tuning").
  double min_speed_ratio = 0.4;
  // When no type at least min_speed_ratio as fast has room, a job that never ran may start on a
  // type at least this share of its fastest instead of queueing (0: any type).
  double overflow_speed_ratio = 1.0;
  // A job starts only on a type whose dollars per step are at most this multiple of the cheapest
  // on-demand type at least min_speed_ratio as fast, whether or not that one has room now; a
  // dearer type that has room is passed over and the job queues (0: no limit).
  double max_step_price_ratio = 1.0;
  // Beyond the seed: a job without a deadline waits for spot capacity up to this multiple of its
  // remaining run time (on its fastest type) before it falls back to on-demand (0 = never
  // waits). Trades JCT slack for the spot discount, the way Uniform Progress spends slack.
  double spot_patience = 0.25;
  double max_spot_wait_s = 4 * 3600.0;  // absolute cap on that wait
  // A job running on on-demand moves to spot when spot has room and its remaining run time is at
  // least this many restart costs (the saving pays for the move).
  double migrate_min_restarts = 10;
  // Moves of running jobs take only the room left after waiting jobs are placed (false: running
  // jobs move first, in the queue's order).
  bool migrate_after_queue = true;
  // What an hour of a job's completion time is worth, in USD: the type is the one with the lowest
  // (price x GPUs + time_value_per_hour) / speed, so 0 buys the cheapest steps and a large value
  // the fastest. For a budget on average JCT this is the exact per-job trade (the job's length
  // cancels), so sweeping it traces the cost/JCT frontier.
  double time_value_per_hour = 0;
  // A job interrupted on spot is not moved back from on-demand to spot for this long: on the
  // bundled series spot returns in short, flapping windows (median 20 min on AWS p3), and every
  // round trip pays two cold starts and a restart. A day, not a week: long Philly jobs (hundreds of
  // hours) otherwise stay on on-demand after one interruption.
  double spot_return_cooldown_s = 86400.0;
  // Spot interruption rate before and while history builds up: the trailing window's drops count
  // with one more drop per this many seconds, (observed + prior) / (drops + 1). An assumption, not
  // a measurement (docs/ARCHITECTURE.md).
  double spot_mtbf_prior_s = 6 * 3600.0;
  double short_job_s = 900;        // S3.2: expected duration below this -> spot
  double deadline_margin_s = 1800; // switch to on-demand when slack falls below this
  // Reactive by default: the seasonal forecaster of kPredictive pre-warms and releases idle GPUs at
  // once, and pays more in cold starts than it saves on every bundled trace (docs/BENCHMARKS.md).
  AutoscaleMode autoscale = AutoscaleMode::kReactive;
};

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
  explicit SeedanceCostPolicy(CostAwareConfig config, bool oracle = false) : config_(config), oracle_(oracle) {}
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

  CostAwareConfig config_;
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
