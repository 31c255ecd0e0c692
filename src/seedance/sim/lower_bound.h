#pragma once

#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/fleet.h"
#include "seedance/sim/workload.h"

namespace seedance::sim {

struct LowerBoundOptions {
  double bucket_s = 6 * 3600.0;  // coarsest time resolution of capacity and arrival constraints
  double horizon_s = 0;          // every job finishes by then; 0: last arrival + 30 days
  // > 0: the bound holds for schedules whose average JCT is at most this many seconds (a service
  // level, e.g. the best baseline's) and that finish every job within the same horizon.
  double max_avg_jct_s = 0;
};

struct LowerBound {
  double usd = 0;
  int columns = 0;
  int rows = 0;
  int job_classes = 0;  // job groups of the LP (see below)
  double seconds = 0;   // build + solve wall time
  std::vector<double> usd_by_pool;  // the bound's spend per pool
  double bucket_s = 0;              // the time resolution used
  double horizon_s = 0;             // every job is done by then
  double max_avg_jct_s = 0;         // the service level it holds for (0: any)
  double speed_grid = 1.0;          // ratio of the grid relative speeds were rounded up to (1: exact)
  // With a service level: the bound without it on the same horizon was larger, and was kept.
  bool plain_kept = false;
};

// The cost lower bound (S2.5): an LP relaxation, solved with GLPK, of the cheapest way to do every
// job's work on the fleet's pools by horizon H. It holds for every schedule that finishes every
// job by H and meets every deadline (the scenario sets H to the latest makespan of its policies).
//
// Units. Job j arrives at a_j, must be done by d_j = min(deadline, H), and needs T_j seconds on
// its fastest type ("work"); on type t it does r_j(t) = speed(t) / best speed <= 1 of work per
// second of its gang. Time is cut into K equal buckets [s_k, e_k) of H. Jobs with the same gang
// size and relative-speed vector form a group g (across arrivals and deadlines); when a workload
// has many distinct vectors, r is first rounded UP to a geometric grid (ratio 1.05, 1.1, ...),
// which only lets work run faster and so keeps the bound valid. x[g,p,k] = GPU-seconds of group
// g on pool p in bucket k; U_gk = sum_p r_g(type p) x[g,p,k] / gpus_g is the group's work in k.
//   min  sum price(p) x
//   (1) sum_g x[g,p,k] <= integral of the pool's GPUs over bucket k   (quota; spot series)
//   (2) sum_p x[g,p,k] / gpus_g <= sum_j |[s_k, e_k) ^ [a_j, d_j)|      (a job runs one gang at a
//                                                                      time, only while active)
//   (3) D_g(k) <= sum_{k' <= k} U_gk' <= A_g(k),  sum_k U_gk = sum_j T_j
//       A_g(k) = sum_j min(T_j, (e_k - a_j)+)      (work cannot start before arrival; a job does
//                                                   at most one second of work per second)
//       D_g(k) = sum_j (T_j - (d_j - e_k)+)+       (what is left at e_k must fit before d_j)
// Every row of (2) and (3) is a sum over the group's jobs of a per-job fact, so each holds for
// every such schedule (with r rounded up, scale each x by r / r_rounded: the work per bucket is
// the true one, (1) and (2) still hold and the cost is no higher); the optimum is a lower bound.
//
// With max_avg_jct_s, the buckets are finer (never coarser than the plain LP's) and rows bound
// the sum of JCTs. Jobs are put in bins n by T_j (ratio 1.25, across the speed groups); V_nk, the
// work of bin n's jobs in bucket k, meets bin n's envelopes (3), and sum_n V_nk = sum_g U_gk. A
// job's work is done at rate <= 1, so C_j >= M_j + T_j / 2, where M_j is the mean time of its
// work and M_j >= a_j; as the mean time of work in bucket k is >= s_k, over bin n
//   sum_j (C_j - a_j) >= sum_j T_j / 2 + sum_j (T_j / T_max)(M_j - a_j)       (M_j - a_j >= 0)
//                     >= sum_j T_j / 2 + (sum_k s_k V_nk - sum_j T_j a_j) / T_max
// with T_max the bin's largest T_j; and C_j - a_j >= T_j. So the bin's JCT sum y_n obeys
//   (4) y_n >= sum_j T_j,  y_n >= sum_j T_j / 2 + (sum_k s_k V_nk - sum_j T_j a_j) / T_max
//   (5) sum_n y_n <= N max_avg_jct_s
// And as a job runs one gang at a time, its JCT is at least the gang-seconds it runs (on a slow
// type, more than T_j):
//   (6) sum_{g,p,k} x[g,p,k] / gpus_g <= N max_avg_jct_s
// Every schedule that meets the service level on this horizon gives a feasible point of these
// rows at its own cost, so the service LP is a lower bound for such schedules; so is the plain
// LP (it has fewer rows). The reported value is the larger of the two, so the bound at a service
// level is never below the plain bound on the same horizon.
// A spot pool with a price series costs, in bucket k, the lowest price in force during it.
// Committed pools (reserved, owned at TCO) cost nothing per GPU-second in the LP (they are paid
// already); their whole bill from the first arrival to the last, which every schedule pays, is
// added to the optimum.
// It ignores queueing, cold starts, checkpoints and interruptions, so no policy can beat it.
Result<LowerBound> CostLowerBound(const Workload& workload, const FleetSpec& fleet,
                                  const LowerBoundOptions& options = {});

}  // namespace seedance::sim
