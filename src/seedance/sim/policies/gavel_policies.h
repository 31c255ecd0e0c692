#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "seedance/sim/engine.h"
#include "seedance/sim/remaining_work.h"

namespace seedance::sim {

// GavelRoundPolicy: Gavel's round-based mechanism (OSDI'20, stanford-futuredata/gavel
// scheduler.py), reimplemented: a policy computes an allocation X[job][pool] (share of time);
// every round, priorities = X / share of the pool's time the job received since the last reset,
// and per pool (in a fixed order) jobs are taken by (priority, deficit, allocation) descending,
// each job at most once per round. Allocations are recomputed when a job arrived or finished
// and at least `min_reset_s` (Gavel: 1,920 s) passed since the last reset.
class GavelRoundPolicy : public JobPolicy {
 public:
  void OnArrival(const JobInfo& job, double now) override;
  void OnCompletion(const JobInfo& job, double total_steps, double now) override;
  double CheckpointInterval(const JobView& job, const SimView& view) const override;
  void OnExecuted(std::int64_t job_id, int pool, double seconds) override;
  std::vector<Assignment> Schedule(const SimView& view, Rng& rng) override;

  double min_reset_s = 1920;
  // Cloud fleets: `gavel-las` runs on owned/on-demand capacity only.
  bool exclude_spot = false;
  // `gavel-las-spot`, `gavel-cost[-slo]`: spot pools are worker types like any other (their
  // capacity now enters the allocation) and recover the way SkyPilot managed jobs do
  // (skypilot_policy.h): a job whose allocation puts it on a spot pool that has no room this round
  // runs on the on-demand pool of the same type instead (any_of spot/on-demand); its type never
  // changes.
  bool spot_recovery = false;
  // On spot, a checkpoint every this many seconds (the user's fixed choice, as for skypilot).
  double spot_checkpoint_interval_s = 1800;

 protected:
  using Allocation = std::map<std::int64_t, std::vector<double>>;  // job -> share per pool
  // Computes a new allocation for the active jobs of `view`.
  virtual Allocation ComputeAllocation(const SimView& view, Rng& rng) = 0;
  // Gavel shuffles the worker-type order every round for policies that are not
  // heterogeneity-aware ("Perf") ones.
  virtual bool shuffle_pool_order() const { return false; }
  // FIFO policies never run a job with zero priority.
  virtual bool skip_zero_priority() const { return false; }

 private:
  void ResetTimeRunSoFar(double now, std::size_t n_pools);

  Allocation allocation_;
  std::map<std::int64_t, std::vector<double>> job_time_;  // since reset, per pool
  std::map<std::int64_t, std::vector<double>> deficit_;
  std::vector<double> pool_time_;
  double last_reset_ = 0;
  bool reset_once_ = false;
  bool need_update_ = false;
  double round_s_ = 360;
};

// Gavel's `fifo` (heterogeneity-agnostic). With `gavel_compat` it copies the original's
// worker-type choice (the loop variable left on the last name of the sorted available types; the
// random draw only decides which type leaves the list when its count reaches exactly 0), which is
// what Gavel's published FIFO numbers come from; without it the type is drawn uniformly among
// those with room, as the original intends. `perf` = Gavel-FIFO: fastest free type, recomputed.
class GavelFifoPolicy : public GavelRoundPolicy {
 public:
  GavelFifoPolicy(bool perf, bool gavel_compat) : perf_(perf), gavel_compat_(gavel_compat) {}
  std::string_view name() const override { return perf_ ? "gavel-fifo" : "fifo"; }

 protected:
  Allocation ComputeAllocation(const SimView& view, Rng& rng) override;
  bool shuffle_pool_order() const override { return !perf_; }
  bool skip_zero_priority() const override { return true; }

 private:
  bool perf_;
  bool gavel_compat_;
  std::map<std::int64_t, int> assigned_;  // job -> pool (base mode keeps it across calls)
};

// Gavel's `max_min_fairness_perf` (Gavel-LAS): max-min of throughput normalized by the job's
// throughput on an equal share of every type, weighted by scale factor and priority, as an LP
// (GLPK). The optimal face is not a point; after the max-min value t* we maximize the total
// normalized throughput with every job kept at >= t*, which picks a deterministic, efficient
// point of that face. `agnostic` = plain LAS (all throughputs treated as equal).
class GavelLasPolicy : public GavelRoundPolicy {
 public:
  explicit GavelLasPolicy(bool agnostic = false) : agnostic_(agnostic) {}
  std::string_view name() const override { return agnostic_ ? "las" : "gavel-las"; }

 protected:
  Allocation ComputeAllocation(const SimView& view, Rng& rng) override;
  bool shuffle_pool_order() const override { return agnostic_; }

 private:
  bool agnostic_;
};


// Gavel's cost policies, `max_sum_throughput_normalized_by_cost_perf` and
// `max_sum_throughput_normalized_by_cost_perf_SLOs`, reimplemented from their formulation in
// stanford-futuredata/gavel, scheduler/policies/max_sum_throughput.py
// (ThroughputNormalizedByCostSumWithPerfSLOs) with the base constraints of
// scheduler/policies/policy.py (Policy.get_base_constraints) and the SLO inputs of
// scheduler/scheduler.py (_get_allocation_state), commit c4fa40097339e9608ab71fd64c8bdea96a5e4a4c.
// The LP (GLPK here, cvxpy/ECOS there), over X[job][worker type] >= 0:
//   maximize   sum_j sum_k throughput[j][k] / cost[k] * X[j][k]
//   subject to sum_k X[j][k] <= 1                                  (each job)
//              sum_j scale_factor[j] * X[j][k] <= workers[k]        (each worker type)
//              sum_k throughput[j][k] * X[j][k] >= steps_left[j] / time_left[j]   (SLO jobs)
// and, as in Gavel, when the SLO rows make it infeasible it is solved again without them.
// Throughputs are the job's whole-gang steps/s, not normalized (Gavel computes a normalizer and
// does not use it), and the cost is one worker's price, not the gang's.
struct GavelCostProblem {
  std::vector<std::vector<double>> throughput;  // [job][type]; 0 = cannot run there
  std::vector<int> scale_factor;                // [job]: GPUs of the gang
  std::vector<double> workers;                  // [type]: GPUs available
  std::vector<double> cost;                     // [type]: $ per GPU-hour, > 0
  // [job]: required steps/s (steps left / seconds to the deadline); <= 0 or absent: no SLO row.
  std::vector<double> min_throughput;
};
struct GavelCostSolution {
  std::vector<std::vector<double>> x;  // [job][type], clipped to [0, 1] as Gavel does
  double objective = 0;
  bool slos_dropped = false;  // the SLO rows made it infeasible; solved without them
};
// Solves `problem`; an empty `x` when there are no jobs. Errors: kInternal when GLPK fails.
Result<GavelCostSolution> SolveGavelCost(const GavelCostProblem& problem);

// GavelCostPolicy: the LP above on Gavel's round mechanism, the pools as worker types at their
// prices (committed pools, paid already, at 1% of the cheapest pay-as-you-go price so they fill
// first). `slos`: deadline jobs carry SLO rows, time left = deadline - now (Gavel's SLO minus the
// time since start); Gavel takes the steps left from the job's declared step count, which no
// policy here may read (the information contract), so they come from the online estimator every
// Seedance policy uses (remaining_work.h: completed jobs of the class, the tenant, the user's
// estimate, then a prior). A deadline already passed gives no row (Gavel's would be negative).
class GavelCostPolicy : public GavelRoundPolicy {
 public:
  explicit GavelCostPolicy(bool slos = false) : slos_(slos) {}
  std::string_view name() const override { return slos_ ? "gavel-cost-slo" : "gavel-cost"; }
  void OnCompletion(const JobInfo& job, double total_steps, double now) override;

 protected:
  Allocation ComputeAllocation(const SimView& view, Rng& rng) override;

 private:
  bool slos_;
  RemainingWorkEstimator estimator_;
};

}  // namespace seedance::sim
