#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <vector>

#include "seedance/sim/engine.h"
#include "seedance/sim/fleet.h"

namespace seedance::sim {

// A pool's GPUs that can start a job within the current round.
struct UsableGpus {
  int ready = 0;                // usable now
  std::vector<double> boot_at;  // ascending: when each still-booting GPU becomes usable
  std::size_t next_boot = 0;

  int Left() const { return ready + static_cast<int>(boot_at.size() - next_boot); }
  // Takes `gang` GPUs (Left() >= gang), ready ones first; returns when the last one is usable.
  double Take(int gang, double now);
};

// One job running on a spot pool in the current round, for Capacity::Interruptions.
struct SpotRun {
  int pool = 0;
  std::int64_t job_id = 0;
  int gpus = 0;
  double completes_at = 0;  // when it finishes its work in this round; infinity if it does not
};

// Capacity: the engine's GPUs per pool. Provisioning with a cold start, the autoscaler (reactive:
// release after scale_down_delay_s below demand; predictive: seasonal forecast), spot capacity from
// the availability series, and interruptions when spot capacity drops inside a round. Emits
// provision / release decisions.
class Capacity {
 public:
  Capacity(const FleetSpec& fleet, AutoscaleMode mode, double round_s,
           std::function<void(const Decision&)> on_decision);

  // GPUs obtainable from pool p at time t (quota, or the spot series now).
  int CapacityAt(std::size_t p, double t) const;
  int held(std::size_t p) const { return pools_[p].held; }
  int in_use(std::size_t p) const { return pools_[p].in_use; }
  // GPUs of pool p provisioned and booted by t (drops booted GPUs from the booting list).
  int Ready(std::size_t p, double t);
  // Booting GPUs of pool p: ready times, ascending.
  const std::deque<double>& booting(std::size_t p) const { return pools_[p].booting; }
  bool AnyCloudHeld() const;
  double OwnedGpus() const;  // owned and reserved GPUs (always held)

  // Follows `demand` (GPUs per pool) at time t; spot held above the series' capacity is dropped.
  void Autoscale(const std::vector<int>& demand, double t);
  // GPUs of pool p that can start a job in [t, t + round_s): ready ones and, unless
  // `ready_only`, those that finish booting before the round ends.
  UsableGpus Usable(std::size_t p, double t, bool ready_only);
  void ClearInUse();
  // The end of the run: every cloud GPU still held is released at t.
  void ReleaseAll(double t);
  void AddInUse(std::size_t p, int gpus) { pools_[p].in_use += gpus; }

  // When spot capacity drops in (t, round_end] below what runs there, the latest-started (highest
  // id) jobs lose their GPUs first. Returns each run's stop time (infinity: not interrupted).
  std::vector<double> Interruptions(const std::vector<SpotRun>& runs, double t, double round_end) const;

 private:
  struct PoolState {
    int held = 0;
    std::deque<double> booting;  // ready times of GPUs still booting, ascending
    double below_since = -1;     // reactive: since when demand < held
    int in_use = 0;              // GPUs running jobs in the current round
    std::map<std::int64_t, int> demand_by_round;  // predictive: round index -> demand
  };
  void Acquire(std::size_t p, int n, double t);
  void Release(std::size_t p, int n, double t);
  void Emit(double t, DecisionAction action, std::size_t p, int gpus) const;

  const FleetSpec& fleet_;
  AutoscaleMode mode_;
  double round_s_;
  std::function<void(const Decision&)> on_decision_;
  std::vector<PoolState> pools_;
};

}  // namespace seedance::sim
