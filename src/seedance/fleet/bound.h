#pragma once

#include <array>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"

namespace seedance::fleet {

// The time-aware lower bound (issue 39) on the week's bill for `outputs`' useful work (its
// training PFLOP, its requests served within SLO per deployment and Mélange bucket, its notebook
// hours in use) and its deadlines met, on the scenario's fleet: the committed pools' bill (paid
// whatever runs) plus a fluid LP over periods of kBoundPeriodS. Every constraint holds for every
// schedule any stack can run on the scenario (so the bound stays a bound); each is one line of
// FleetWeekBoundConstraints(), and why it holds:
//  - pools: in each period every pool offers at most its GPU-hours (owned and reserved: their
//    GPUs, fixed; on-demand: its quota; spot: its availability series over the period, in whole
//    8-GPU nodes), at its lowest price in the period (committed: 0, their bill is added whole). No
//    stack can hold more GPUs than a pool has or pay less than its cheapest price; the engine holds
//    spot nodes of kGpusPerNode only while nodes x kGpusPerNode <= the GPUs available (2026-12-07).
//  - training by class (jobs whose PFLOP per GPU-hour agree within kBoundRateStep on each type, at
//    the class's highest rate there): the work done in a period is at most what its GPU-hours do
//    at the class's rates (a job of the class never runs faster than them); in a period a class
//    holds at most the GPUs of its jobs present, each job's own GPU count from its arrival on (a
//    gang never runs wider than its request, nor before it arrives); by the end of a period a
//    class has done at most, per job arrived, the smaller of its whole work and its GPUs times its
//    best rate since its arrival (no job progresses faster than its own gang at its fastest type);
//    together the classes do the outputs' PFLOP.
//  - deadlines: every stack must meet at least the base's count (issue 39). For each job whose
//    deadline falls in the week, met_j in [0, 1] is the share of its work done by its deadline:
//    at most its own GPUs times its best rate over [arrival, deadline] (a job due sooner than it
//    can run is never met), and done inside the periods holding [arrival, deadline] on its class's
//    GPU-hours there, so for each such window the class's work in it is at least the met shares'
//    work of the class's deadline jobs whose windows lie inside it. A job that meets its deadline
//    has met_j = 1, so sum met_j >= deadlines met (the linear relaxation of "count met >= the
//    base's"). (Per-job GPU-hour columns in every period of the window gave the same bound on
//    fleet a week 2 seed 5 at twice the LP time.)
//  - serving: each bucket's requests within SLO at the faster of vLLM's and Seedance's measured
//    capacity per GPU on each type (a mix that routes each bucket to its best type is covered),
//    and in each period no more requests than were demanded in it; the largest buckets holding
//    kBoundServingShare of the requests (the rest left out: less work, still a bound);
//  - notebooks: per type asked for, a unit of work is an hour in use of a GPU of that type; by
//    the end of a period at most the in-use hours of the sessions begun by then, each at most the
//    time since it began (a session counts at most one unit an hour). Any type T may supply it:
//    one GPU-hour of T does at most NotebookWorkPerGpuHour(asked, T) units: 1 on the asked type
//    (a MIG slice counts its compute fraction and costs that fraction), on another type its FP16
//    rate over the asked type's, capped at one over T's smallest MIG slice fraction (1/7: a
//    slice counts at most one unit an hour; 1 without MIG). Valid for whole GPUs and slices alike.
// Relaxed, so never above what a stack pays for the same work and deadlines: no cold start (a
// long-lived node amortizes its boot, so no per-work floor holds), no burst headroom, no 8-GPU
// nodes, no gang placement, no integral replicas, perfect foresight within the rules above.
// Errors: kInternal when the LP fails (the fleet cannot hold the work).
inline constexpr double kBoundPeriodS = 3600;
inline constexpr double kBoundServingShare = 0.95;
inline constexpr double kBoundRateStep = 0.05;  // training classes: rates within 5 %
// The GPUs of a pool a stack can hold at time t (spot: whole kGpusPerNode nodes within the
// availability series, as the engine holds them; otherwise the pool's GPUs).
double BoundPoolGpusAt(const sim::PoolSpec& pool, double t);
// The constraints the LP imposes, one short line each (results.json's lower_bound_time_aware).
const std::vector<std::string>& FleetWeekBoundConstraints();
// The bound's solution decomposed (issue 39, round 5): per fleet GPU type, the GPU-hours its LP
// gives training, serving and notebooks, and the GPU-hours and $ it takes from each kind of pool
// (0 committed: owned and reserved, 1 on-demand, 2 spot; committed pools at 0 $, their bill is
// committed_usd). Sums over weeks with Add.
struct BoundDecomposition {
  std::vector<std::string> gpu_types;
  std::vector<std::array<double, 3>> gpu_hours_by_use, pool_gpu_hours, pool_usd;
  double committed_usd = 0;
  void Add(const BoundDecomposition& o);
};
// `by` (optional): the solution's decomposition.
Result<double> FleetWeekLowerBoundUsd(const FleetWeekScenario& scenario, const FleetWeekOutcome& outputs,
                                      BoundDecomposition* by = nullptr);

// The useful-work bound on an owned fleet (issue 39, fleet c, round 7): the most training PFLOP per
// $ of the whole bill any stack can reach on a set of weeks while it serves at least the base's
// requests within SLO (per deployment and bucket) and meets at least the base's deadlines, each week
// with the lower bound's LP and its constraints (the same relaxations: fluid, no nodes or gangs,
// foresight), the training work maximized instead of the bill minimized, notebooks left out (their
// GPUs free for training: looser, still a bound). The set's PFLOP / $ is maximized exactly (a
// ratio of sums, by Dinkelbach's method: a few LP solves per week). No stack that keeps the
// base's SLO and deadlines does more training per $ of its bill on these weeks.
inline constexpr int kUsefulWorkBoundIterations = 8;
struct UsefulWorkBound {
  double pflop = 0;          // summed over the weeks
  double cloud_usd = 0;      // the cloud bill of that solution, summed
  double committed_usd = 0;  // the committed bill, summed
  int iterations = 0;        // LP solves per week
  double PflopPerUsd() const { return committed_usd + cloud_usd > 0 ? pflop / (committed_usd + cloud_usd) : 0.0; }
};
// `base[i]`: the base's outcome on weeks[i] (its serving and deadlines are imposed). Errors:
// kInternal when an LP fails.
Result<UsefulWorkBound> FleetWeekUsefulWorkUpperBound(const std::vector<const FleetWeekScenario*>& weeks,
                                                      const std::vector<const FleetWeekOutcome*>& base);

}  // namespace seedance::fleet
