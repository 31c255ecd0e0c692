#pragma once

#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/fleet.h"
#include "seedance/sim/workload.h"

namespace seedance::sim {

struct LowerBoundOptions {
  double bucket_s = 6 * 3600.0;  // time resolution of capacity and deadline constraints
  double horizon_s = 0;          // 0: last arrival + 30 days
  // > 0: the bound holds for schedules whose average JCT is at most this many seconds (a service
  // level, e.g. the baseline's); work may then also run after the horizon, in one open-ended
  // bucket without capacity limits but with the delay it implies.
  double max_avg_jct_s = 0;
};

struct LowerBound {
  double usd = 0;
  int columns = 0;
  int rows = 0;
  int job_classes = 0;
  double seconds = 0;  // solve wall time
  std::vector<double> usd_by_pool;  // the bound's spend per pool
  double bucket_s = 0;              // the time resolution used
  double max_avg_jct_s = 0;         // the service level it holds for (0: any)
};

// The cost lower bound (S2.5): an LP relaxation, solved with GLPK, of the cheapest way to do
// every job's work on the fleet's pools. Jobs with the same throughput vector, gang size,
// arrival bucket and deadline bucket form a class; x[class, pool, bucket] = GPU-seconds.
//   min  sum price(pool) x
//   s.t. sum_{pool,bucket} x * thr(type)/gpus = class work             (all work is done)
//        sum_class x[., pool, b] <= capacity(pool, b) * bucket length  (owned/quota/spot series)
//        sum_pool x[c, ., b] / gpus <= jobs(c) * bucket length          (a job runs at most
//                                                                         one GPU-gang at a time)
//        x = 0 outside [arrival bucket, deadline bucket]
// It ignores queueing, cold starts, checkpoints and interruptions, so no policy can beat it.
//
// With max_avg_jct_s, classes are also split by run time (bins of ratio 1.5) and one row caps
// the sum of the jobs' completion-time lower bounds at N x max_avg_jct_s. A job j that arrives at
// a_j and needs W_j steps at most s_j steps/s finishes at C_j >= M_j + W_j / (2 s_j), where M_j,
// the mean time of its work, is at least sum_b f_jb max(a_j, start_b) (f_jb: share of its work in
// bucket b); and C_j - a_j >= W_j / s_j. Per class, with W_max and a_max its largest work and
// latest arrival, sum_j f_jb (start_b - a_j) >= S_cb (start_b - a_max) / W_max (S_cb: the class's
// steps in b), so the class's JCT sum y_c satisfies
//        y_c >= sum_j W_j / s_j
//        y_c >= sum_j W_j / (2 s_j) + sum_b S_cb max(0, start_b - a_max) / W_max
//        sum_c y_c <= N max_avg_jct_s
// Each inequality holds for every schedule, so the LP stays a lower bound for any schedule that
// meets the service level.
Result<LowerBound> CostLowerBound(const Workload& workload, const FleetSpec& fleet,
                                  const LowerBoundOptions& options = {});

}  // namespace seedance::sim
