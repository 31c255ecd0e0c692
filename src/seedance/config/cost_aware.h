#pragma once

#include <string_view>

// The settings of the cost-aware scheduler as seedance-config.yaml gives them
// (`scheduler.cost_aware`, `scheduler.autoscaling.mode`; config/seedance_config.h parses them,
// sim/policies/seedance_cost_policy.h runs them).
namespace seedance::config {

// How held capacity follows demand (S3.4).
enum class AutoscaleMode {
  kReactive,    // HPA-like: scale up on demand, scale down after a delay
  kPredictive,  // seasonal forecast of demand: pre-warm before arrivals, release idle at once
};
std::string_view AutoscaleModeName(AutoscaleMode mode);

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
  // The spot wait priced by that value (issue 39, the frontier): a job without a deadline waits for
  // spot while the hours it has waited, at time_value_per_hour, cost less than what spot saves it
  // over the on-demand type chosen (its remaining steps x the difference in dollars per step at the
  // spot pool's expected price); it replaces spot_patience and max_spot_wait_s. At 0 $/h a job
  // waits for spot as long as spot is cheaper (SkyPilot spot-only's trade). `cost-benchmark
  // --frontier` sets it on its rows; not a seedance-config.yaml key.
  bool spot_wait_priced = false;
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

}  // namespace seedance::config
