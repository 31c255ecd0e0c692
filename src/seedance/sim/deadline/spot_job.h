#pragma once

// One deadline job on one spot market, in the model of "Can't Be Late" (Wu et al., NSDI'24, S3):
// the job is idle, on a spot instance or on an on-demand instance; every switch into a spot or
// on-demand instance (a relaunch after a preemption included) costs a changeover delay d, billed at
// the new instance's price, during which no progress is made; going idle is free. Spot costs 1 per
// second, on-demand k per second, billed per second. Time advances in the series' ticks; spot
// availability is constant within a tick and a preemption is seen at the start of the next tick
// (the job then is idle at that decision point). Everything is in integer seconds, so a run is
// exactly reproducible.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::sim::deadline {

enum class Instance : std::uint8_t { kIdle, kSpot, kOnDemand };
const char* InstanceName(Instance i);

// Availability of one spot instance type in one zone: available[i] == 1 when a spot instance can
// be held during tick i (time [i * gap_s, (i + 1) * gap_s)). Series tick 0 is simulation time 0.
struct SpotTrace {
  std::string name;
  std::int64_t gap_s = 0;
  std::vector<std::uint8_t> available;

  std::int64_t ticks() const { return static_cast<std::int64_t>(available.size()); }
  // Ticks outside the series count as unavailable.
  bool At(std::int64_t tick) const {
    return tick >= 0 && tick < ticks() && available[static_cast<std::size_t>(tick)] != 0;
  }
};

// Loads a skypilot-org/spot-traces JSON file (1 = available, the public files' encoding; see
// data/spot_traces/SOURCE.md). `min_instances` > 1 reads a multi-node file as "all N available".
// Errors name the file and the field.
Result<SpotTrace> LoadSpotTrace(const std::string& path, const std::string& name, int min_instances = 1);

struct DeadlineJob {
  std::int64_t compute_s = 0;     // C(0): work on one instance
  std::int64_t deadline_s = 0;    // R(0): time from the start to the deadline
  std::int64_t changeover_s = 0;  // d
  double od_price = 3.0;          // k: on-demand price / spot price (> 1)
  // Billing of a tick an instance is held in: false, per second (a job that ends mid-tick pays to
  // its end); true, the whole tick (the authors' sky_spot simulator, which bills every tick held in
  // full, the last one included: data/adrs_spot/SOURCE.md).
  bool whole_tick_billing = false;
};

// Read-only window on the series up to the current tick: what a scheduler could have recorded.
class PastView {
 public:
  PastView(const SpotTrace* trace, std::int64_t now) : trace_(trace), now_(now) {}
  std::int64_t now() const { return now_; }
  // REQUIRES: tick <= now() (aborts otherwise: reading the future is a contract violation).
  bool At(std::int64_t tick) const;

 private:
  const SpotTrace* trace_;
  std::int64_t now_;
};

// The job's own state at one decision point (a tick boundary), as every policy sees it.
struct JobView {
  const DeadlineJob* job = nullptr;
  std::int64_t gap_s = 0;
  std::int64_t start_tick = 0;           // series tick at which the job started
  std::int64_t now_tick = 0;             // series tick of this decision
  std::int64_t elapsed_s = 0;            // t
  std::int64_t remaining_compute_s = 0;  // C(t)
  std::int64_t remaining_time_s = 0;     // R(t)
  Instance current = Instance::kIdle;    // after any preemption seen at this tick
  std::int64_t changeover_left_s = 0;    // of the current instance
  // What the job held during the last tick, before any preemption seen at this tick, and the
  // changeover it still had to serve at the end of that tick (the sky_spot simulator's
  // `last_cluster_type` and `remaining_restart_overhead`; policies.h's authors' rules read them).
  Instance previous = Instance::kIdle;
  std::int64_t previous_changeover_left_s = 0;
};

// What a policy sees at one decision point: the job, and the spot market.
struct Observation : JobView {
  bool spot_available = false;  // now
  PastView past{nullptr, 0};    // the series up to now_tick
};

// A deadline policy: one decision per tick. Decide may return kSpot only when spot_available.
class DeadlinePolicy {
 public:
  virtual ~DeadlinePolicy() = default;
  virtual std::string_view Name() const = 0;
  // Called before the first decision of each job; resets any per-job state.
  virtual void Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick) = 0;
  virtual Instance Decide(const Observation& obs) = 0;
};

struct JobOutcome {
  double cost = 0;                    // spot_billed_s + k * od_billed_s (spot-price seconds)
  std::int64_t spot_billed_s = 0;     // changeovers included
  std::int64_t od_billed_s = 0;
  std::int64_t spot_compute_s = 0;    // progress made on spot
  std::int64_t od_compute_s = 0;
  std::int64_t finish_s = -1;         // time of completion from the start; -1 = never
  int changeovers = 0;
  int preemptions = 0;
  int invalid_requests = 0;           // spot asked for while unavailable (treated as idle)
  bool met_deadline = false;
  std::vector<Instance> decisions;    // one per tick, as returned by the policy

  double CostUsd(double spot_usd_per_hour, double od_usd_per_hour) const {
    return (static_cast<double>(spot_billed_s) * spot_usd_per_hour +
            static_cast<double>(od_billed_s) * od_usd_per_hour) / 3600.0;
  }
};

// Runs `job` from series tick `start_tick` under `policy`. The run stops when the job is done, or
// (a miss) when the job cannot finish any more by the deadline plus C(0) + d.
JobOutcome SimulateJob(const SpotTrace& trace, std::int64_t start_tick, const DeadlineJob& job,
                       DeadlinePolicy& policy);

// The tick-level dynamics shared by the simulator and the omniscient planner: holding `inst`
// (with `changeover_left` seconds of changeover still to serve) for one tick of `gap_s` with
// `remaining` compute left. Per-second billing: a job that ends mid-tick pays only to its end.
struct TickStep {
  std::int64_t used_s = 0;    // of the tick, until the job ends (changeover and progress)
  std::int64_t billed_s = 0;  // used_s, or the whole tick under whole-tick billing
  std::int64_t progress_s = 0;
  std::int64_t changeover_left_s = 0;
};
TickStep StepTick(Instance inst, std::int64_t changeover_left, std::int64_t remaining, std::int64_t gap_s,
                  bool whole_tick_billing = false);

// One job under way in a simulator (SimulateJob, and SimulateMultiRegionJob, which adds where a
// spot instance runs): what it holds, the changeover still to serve, the compute left, and the
// outcome so far.
class JobRun {
 public:
  JobRun(const DeadlineJob& job, std::int64_t gap_s);
  // Whether tick i (from the start) is still simulated: work is left and the job can still finish
  // by the deadline plus C(0) + d.
  bool Running(std::int64_t i) const { return left_ > 0 && i < max_ticks_; }
  Instance held() const { return held_; }
  // The spot instance held was lost at this tick boundary: the job is idle.
  void Preempt();
  // The job's state at tick i of a run started at series tick `start_tick`.
  void Observe(JobView& view, std::int64_t start_tick, std::int64_t i) const;
  // Holds `want` for tick i: a changeover when it is another instance than the one held, or when
  // `relaunch` (a spot instance moved to another region).
  void Hold(Instance want, bool relaunch, std::int64_t i);
  JobOutcome& outcome() { return out_; }
  // Prices the run and says whether it met the deadline.
  JobOutcome Finish();

 private:
  const DeadlineJob* job_;
  std::int64_t gap_s_;
  std::int64_t max_ticks_;
  Instance held_ = Instance::kIdle;
  std::int64_t changeover_left_ = 0;
  Instance previous_ = Instance::kIdle;  // held during the last tick
  std::int64_t previous_changeover_left_ = 0;
  std::int64_t left_;
  JobOutcome out_;
};

// Books one tick held on `inst` into `out` (billed and compute seconds by instance kind; the finish
// time when the tick ends the job, `tick_start_s` being the tick's offset from the start).
void RecordTick(Instance inst, const TickStep& step, std::int64_t remaining_after, std::int64_t tick_start_s,
                JobOutcome& out);
// Prices a finished run (spot-price seconds) and says whether it met `job`'s deadline.
void FinishOutcome(const DeadlineJob& job, JobOutcome& out);

}  // namespace seedance::sim::deadline
