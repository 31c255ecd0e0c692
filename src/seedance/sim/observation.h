#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "seedance/sim/capacity.h"
#include "seedance/sim/engine.h"

namespace seedance::sim {

// The engine's record of one active job. Only the observation layer turns it into what a policy
// sees (JobView); `spec` (the true size) and `remaining` stay here.
struct ActiveJob {
  const JobSpec* spec = nullptr;
  std::size_t result_index = 0;
  double remaining = 0;
  double attained = 0;      // steps of progress kept (what a policy sees)
  int pool = -1;            // pool of the last round it ran
  bool running = false;     // ran through the end of the last round (not interrupted)
  bool ever_ran = false;
  bool needs_restart = false;
  double since_ckpt_s = 0;  // run time since the last checkpoint (spot)
  int preemptions = 0;
  double interrupted_at_s = -1;  // last spot interruption, -1: none
  double ran_s = 0;
  std::vector<double> service_s_by_pool;
};

// SpotWatch: trailing statistics of one spot pool's capacity, fed tick by tick up to the present
// (never a tick that starts after `now`). Amortized O(1) per tick.
class SpotWatch {
 public:
  SpotWatch() = default;
  SpotWatch(const SpotSeries* series, int max_gpus, double window_s);

  // Takes in every tick that started at or before `now`.
  void AdvanceTo(double now);
  SpotHistory history() const;

 private:
  struct Tick {
    std::int64_t k;
    int gpus;
    bool drop;
  };
  int GpusAt(std::int64_t k) const;

  const SpotSeries* series_ = nullptr;
  int max_gpus_ = 0;
  std::int64_t window_ticks_ = 0;
  std::int64_t next_ = 0;  // next tick to take in
  std::deque<Tick> ticks_;
  int drops_ = 0;
  std::int64_t available_ = 0;
  std::int64_t gpu_sum_ = 0;
};

// Observer: builds what a policy sees (SimView) from the engine's state, and the oracle channel
// for reference policies.
class Observer {
 public:
  Observer(const FleetSpec& fleet, const SimOptions& options);

  // Rebuilds `view` for time t from the active jobs (by id) and the capacity.
  void Build(double t, const std::vector<ActiveJob>& active, Capacity& capacity, SimView* view);
  // The oracle channel: true remaining work (parallel to `active`) and whole-series MTBFs.
  OracleView BuildOracle(const std::vector<ActiveJob>& active) const;

 private:
  const FleetSpec& fleet_;
  double round_s_;
  std::vector<SpotWatch> watch_;  // by pool
};

}  // namespace seedance::sim
