#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/rng.h"
#include "seedance/core/status.h"
#include "seedance/sim/fleet.h"
#include "seedance/sim/workload.h"

namespace seedance::sim {

// The information contract (docs/ARCHITECTURE.md "What a policy sees"): a policy sees what a
// real scheduler could know at that instant. Jobs: what was submitted (JobInfo: no true size),
// attained service and the engine's own record of where and how long each ran. Pools: the public
// part (PoolInfo: no availability series), capacity now and statistics of spot capacity over a
// trailing window of the past. True sizes and future series stay in the engine; only a policy
// whose is_oracle() is true gets them, through the separate OracleView channel. The contract is in
// the types: every view holds VALUE copies (JobInfo, PoolInfo, FleetInfo, the service vector),
// never a pointer into the engine's JobSpec / PoolSpec / FleetSpec, so no cast can reach a true
// size or a future series.

// Trailing statistics of one spot pool's capacity, over the ticks of its series that started in
// the last SimOptions::spot_history_window_s (computed incrementally by the observation layer).
struct SpotHistory {
  bool tracked = false;     // a spot pool with an availability series
  double observed_s = 0;    // span of the window observed so far (ticks x gap)
  int drops = 0;            // capacity drops within it
  double available_s = 0;   // of which seconds with at least one GPU available
  double mean_gpus = 0;     // time-average capacity over it

  // Mean time between drops over the window; infinity when none was observed.
  double MeanTimeBetweenDrops() const;
  // Share of the window with at least one GPU available; 1 when nothing was observed yet.
  double Availability() const;
};

// What a policy sees of one active (arrived, unfinished) job.
struct JobView {
  JobInfo info;               // a copy of what was submitted (never the engine's JobSpec)
  double attained_steps = 0;  // progress kept so far (steps)
  std::vector<double> service_s_by_pool;  // seconds it held GPUs of each pool (a copy)
  int pool = -1;              // pool it ran on last round, -1 if none
  bool running = false;       // holds GPUs now: ran to the end of the last round, not interrupted
  bool ever_ran = false;
  int preemptions = 0;        // spot interruptions so far
  double interrupted_at_s = -1;  // when the last one happened, -1: never
  double ran_s = 0;           // seconds it has run (any pool)
};

// What a policy sees of one pool.
struct PoolView {
  PoolInfo info;      // a copy of the public part (never the PoolSpec with its series)
  int held = 0;       // GPUs provisioned (billed); owned: max_gpus
  int ready = 0;      // of which usable now
  int capacity = 0;   // GPUs obtainable now (quota, or spot availability now)
  SpotHistory spot;   // tier kSpot: the past window; untracked otherwise
};

class SimView {
 public:
  double now = 0;
  double round_s = 360;
  FleetInfo fleet;              // a copy of the public part (never the FleetSpec with its pools)
  std::vector<JobView> jobs;   // active jobs, by id
  std::vector<PoolView> pools;  // by pool index
};

// The oracle channel: what no online scheduler knows. Passed only to a policy whose is_oracle()
// is true (the `seedance-oracle` reference row), before each Schedule call.
struct OracleView {
  std::vector<double> remaining_steps;  // parallel to SimView::jobs: true remaining work
  std::vector<double> spot_mtbf_s;      // by pool: whole-series mean time between drops (inf: none)
};

// A policy's wish for the next round: run `job_id` on pool `pool`. Order matters: when a pool has
// fewer ready GPUs than asked for, earlier entries win.
struct Assignment {
  std::int64_t job_id = 0;
  int pool = 0;
};

// JobPolicy: decides every round which jobs run where. Implementations keep their own state
// (allocations, priorities) and get the executed time back after each round.
class JobPolicy {
 public:
  virtual ~JobPolicy() = default;
  virtual std::string_view name() const = 0;
  virtual std::vector<Assignment> Schedule(const SimView& view, Rng& rng) = 0;
  virtual void OnArrival(const JobInfo& /*job*/, double /*now*/) {}
  // A job finished; a real system learns its final size then (what estimators learn from).
  virtual void OnCompletion(const JobInfo& /*job*/, double /*total_steps*/, double /*now*/) {}
  // The job ran `seconds` on `pool` during the round that just ended.
  virtual void OnExecuted(std::int64_t /*job_id*/, int /*pool*/, double /*seconds*/) {}
  // Checkpoint interval for a job on spot (S3.3); infinity: never checkpoint.
  virtual double CheckpointInterval(const JobView& /*job*/, const SimView& /*view*/) const;
  virtual AutoscaleMode autoscale() const { return AutoscaleMode::kReactive; }
  // Reference policies only: true makes the engine call ObserveOracle before every Schedule.
  virtual bool is_oracle() const { return false; }
  virtual void ObserveOracle(const OracleView& /*oracle*/) {}
};

// The decision log (SimOptions::on_decision): what the engine did, as an operator would see it,
// and the outcomes that were nobody's decision: kFinish (a job completed its work) and kInterrupt
// (spot capacity took a running job's GPUs).
enum class DecisionAction { kStart, kStop, kMigrate, kProvision, kRelease, kFinish, kInterrupt };
std::string_view DecisionActionName(DecisionAction action);
struct Decision {
  double time_s = 0;
  std::int64_t job_id = -1;  // -1 for provision/release
  DecisionAction action = DecisionAction::kStart;
  int pool = 0;
  int gpus = 0;              // GPUs started, stopped, moved, provisioned, released, freed by a
                             // finish or taken by an interruption
};

// One pool's bill for one interval and who held its GPUs: what the cost ledger records
// (ledger::RecordAllocatedInterval splits it into workload, idle and overhead charges).
struct PoolUse {
  std::int64_t job_id = 0;
  std::string tenant;
  double gpu_seconds = 0;  // GPU time the job held in the interval
};
struct PoolInterval {
  int pool = 0;
  double start_s = 0;
  double end_s = 0;
  int held_gpus = 0;
  double usd_per_gpu_hour = 0;  // the mean price over the interval (a spot price series integrated)
  std::vector<PoolUse> uses;
};

struct SimOptions {
  double round_s = 360;
  // Gavel's simulator ends a round when the last scheduled job's steps are done (rounds can be
  // shorter than round_s) and counts whole steps per round; on for the Gavel reproduction.
  bool gavel_rounds = false;
  // Stop once these jobs (ids [first, last)) are done; -1: run until every job is done.
  std::int64_t measure_first = -1;
  std::int64_t measure_last = -1;
  std::uint64_t seed = 0;
  double utilization_bucket_s = 3600;  // resolution of the utilization series
  double max_sim_s = 3650.0 * 24 * 3600;  // safety stop (10 years)
  // Called for every billed interval of an on-demand or spot pool (not owned pools).
  std::function<void(const PoolInterval&)> on_pool_interval;
  // Called for every decision, in time order: start (a job that was not running gets GPUs; at the
  // round's start), stop (a running job is left out of a round, or spot takes its GPUs; at that
  // instant), migrate (a running job moves pool), provision / release (a pool's held count grows
  // or shrinks), and the outcomes: finish (a job completed its work; at that instant, on the pool
  // it ran on) and interrupt (spot took its GPUs; at that instant). Within a round the outcomes
  // come after its start / stop / migrate lines, ordered by time.
  std::function<void(const Decision&)> on_decision;
  // Trailing window of the spot statistics policies see (PoolView::spot).
  double spot_history_window_s = 7 * 86400.0;
};

struct JobResult {
  std::int64_t id = 0;
  double arrival_s = 0;
  double first_start_s = -1;
  double finish_s = -1;   // -1: not finished when the simulation stopped
  double deadline_s = kNoDeadline;
  double cost_usd = 0;    // GPU time it used, at the pool's price
  double gpu_seconds = 0;
  double useful_gpu_seconds = 0;  // GPU time whose progress was kept
  int preemptions = 0;
  bool deadline_missed = false;
  std::string tenant;
};

struct UtilizationPoint {
  double t_s = 0;
  double held_gpus = 0;  // average over the bucket
  double busy_gpus = 0;
};

struct SimResult {
  std::string policy;
  std::vector<JobResult> jobs;  // by id, all arrived jobs
  double total_cost_usd = 0;    // GPUs held (per second) + owned GPUs used + cold-start idle
  double gpu_cost_usd = 0;
  double cold_start_idle_usd = 0;
  double idle_held_usd = 0;     // held but not running any job
  std::vector<double> cost_by_pool_usd;
  std::vector<double> gpu_seconds_by_pool;
  double busy_gpu_seconds = 0;
  double held_gpu_seconds = 0;
  double useful_gpu_seconds = 0;
  int spot_interruptions = 0;
  int deadline_misses = 0;
  int unfinished = 0;
  double makespan_s = 0;
  std::vector<UtilizationPoint> utilization;
  std::int64_t rounds = 0;
  std::int64_t decisions = 0;
  double wall_seconds = 0;

  double AvgJctHours(std::int64_t first = -1, std::int64_t last = -1) const;
  double P99JctHours() const;
  double Utilization() const;
};

// Runs `policy` on `workload` over `fleet`. Deterministic for a given options.seed.
// Errors: kInvalidArgument if the workload and fleet GPU types differ or either is invalid.
Result<SimResult> Simulate(const Workload& workload, const FleetSpec& fleet, JobPolicy& policy,
                           const SimOptions& options);

}  // namespace seedance::sim
