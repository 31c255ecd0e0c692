#pragma once

#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/fleet.h"
#include "seedance/sim/workload.h"

namespace seedance::sim {

struct LowerBoundOptions {
  double bucket_s = 6 * 3600.0;  // time resolution of capacity and deadline constraints
  double horizon_s = 0;          // 0: last arrival + 30 days
};

struct LowerBound {
  double usd = 0;
  int columns = 0;
  int rows = 0;
  int job_classes = 0;
  double seconds = 0;  // solve wall time
  std::vector<double> usd_by_pool;  // the bound's spend per pool
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
Result<LowerBound> CostLowerBound(const Workload& workload, const FleetSpec& fleet,
                                  const LowerBoundOptions& options = {});

}  // namespace seedance::sim
