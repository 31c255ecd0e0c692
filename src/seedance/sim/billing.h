#pragma once

#include <vector>

#include "seedance/sim/capacity.h"
#include "seedance/sim/engine.h"

namespace seedance::sim {

// Billing: what the fleet costs. Held cloud GPUs are billed per second from the request (their
// cold-start idle host cost on top, S3.4); committed pools (reserved, owned at TCO) for every GPU
// over every second of the run, used or not; other owned GPUs by use (Gavel's accounting); each billed interval goes to the
// ledger observer (SimOptions::on_pool_interval) with the jobs that held the pool's GPUs; the
// utilization series is kept in buckets.
class Billing {
 public:
  Billing(const FleetSpec& fleet, const SimOptions& options, SimResult* result);

  // Bills held cloud GPUs and committed pools over [t0, t1] at their pool's price.
  void BillHeld(const Capacity& capacity, double t0, double t1);
  // A job held `gpu_s` GPU-seconds of pool p in the current round.
  void AddUse(std::size_t p, std::int64_t job_id, const std::string& tenant, double gpu_s);
  // Starts a new round: the jobs holding each pool are listed afresh.
  void ClearUses();
  // Owned capacity over [t0, t1] with `busy_gpu_s` of it used.
  void AddOwnedRound(double owned_gpus, double t0, double t1, double busy_gpu_s);
  // Writes the utilization series into the result.
  void Finish();

 private:
  void AddUtil(double t0, double t1, double held, double busy);

  const FleetSpec& fleet_;
  const SimOptions& options_;
  SimResult* res_;
  std::vector<std::vector<PoolUse>> pool_uses_;
  std::vector<double> util_held_, util_busy_;
};

}  // namespace seedance::sim
