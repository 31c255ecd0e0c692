#pragma once

// The multi-region rules of the ADRS leaderboard's "cant_be_late_multi" problem (its copy of the
// authors' sky_spot simulator, `MultiTraceEnv` and `MultiRegionStrategy`; data/adrs_spot/SOURCE.md),
// reimplemented as a second multi-region simulator beside multi_region.h's, so that the
// leaderboard's programs and Seedance run under the rules the leaderboard scored them by:
//  - The job points at one region at a time (region 0 at the start). A strategy may point it at
//    another region and read that region's availability now, as often as it likes, for free.
//  - Each tick: the instance held during the last tick is billed for the whole tick and makes
//    progress (after any changeover still to serve); a spot instance is preempted when the region
//    pointed at has no spot now. The strategy then decides; the simulator's strong guarantee
//    (sky_spot_policies.h) overrides it, and spot asked for where the region pointed at has none
//    becomes idle.
//  - A changeover d starts whenever the instance asked for differs from the one still held (a
//    preempted spot instance counts as none). Moving a live spot instance to another region is
//    spot -> spot: no changeover (the leaderboard's migration overhead is 0).
//  - Prices: on-demand $3.06/h; every spot tick of the job is billed at the spot price of the region
//    pointed at when the job ends, at that region's window's first tick (the environment's cost
//    map is the current region's, and it reads a trace's first price).
// Traces: 1 = available (data/spot_traces), the windows of data/adrs_spot/multi_region_windows.csv.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/deadline/multi_region.h"
#include "seedance/sim/deadline/sky_spot_policies.h"
#include "seedance/sim/deadline/spot_job.h"

namespace seedance::sim::deadline {

// What a strategy sees and may do at one decision point of the leaderboard's harness.
class SkySpotMultiEnv {
 public:
  SkySpotMultiEnv(const std::vector<SpotTrace>* regions, std::int64_t tick, const std::vector<double>* spot_usd = nullptr)
      : regions_(regions), spot_usd_(spot_usd), tick_(tick) {}
  int regions() const { return static_cast<int>(regions_->size()); }
  int region() const { return region_; }
  void SwitchRegion(int r);
  // Spot in the region pointed at, now (a free probe).
  bool SpotAvailable() const;
  // Region r's spot price, USD per hour (the harness's cost map); 0 when none was given.
  double SpotUsd(int r) const;
  // Every region's series up to now (what a scheduler that probes every region each tick records).
  PastView Past(int r) const;
  std::int64_t tick() const { return tick_; }
  void SetTick(std::int64_t tick) { tick_ = tick; }

 private:
  const std::vector<SpotTrace>* regions_;
  const std::vector<double>* spot_usd_;
  std::int64_t tick_;
  int region_ = 0;
};

struct SkySpotMultiState {
  const DeadlineJob* job = nullptr;
  std::int64_t gap_s = 0;
  std::int64_t start_tick = 0;
  std::int64_t elapsed_s = 0;
  std::int64_t remaining_compute_s = 0;
  std::int64_t changeover_left_s = 0;  // the simulator's remaining restart overhead
  Instance last = Instance::kIdle;     // held during the last tick (before any preemption)
  bool has_spot = false;               // in the region pointed at when the tick began
};

class SkySpotMultiPolicy {
 public:
  virtual ~SkySpotMultiPolicy() = default;
  virtual std::string_view Name() const = 0;
  virtual void Start(const DeadlineJob& job, std::int64_t gap_s, int regions) = 0;
  virtual Instance Step(const SkySpotMultiState& s, SkySpotMultiEnv& env) = 0;
};

struct SkySpotMultiOutcome {
  std::int64_t spot_ticks = 0, od_ticks = 0;
  int end_region = 0;
  std::int64_t finish_s = -1;
  bool met_deadline = false;
  double cost_usd = 0;
};

// REQUIRES: regions non-empty, one gap, spot_usd one price per region.
SkySpotMultiOutcome SimulateSkySpotMultiJob(const std::vector<SpotTrace>& regions,
                                            const std::vector<double>& spot_usd, std::int64_t start_tick,
                                            const DeadlineJob& job, SkySpotMultiPolicy& policy);

// "adrs-multi-baseline": the problem's starting program (initial_program.py), the leaderboard's
// baseline: on-demand once C + d (whole ticks) reaches the time left unless on a served spot
// instance, and once C + 2d does unless on spot with spot now; otherwise spot when the region
// pointed at has it, else point at the next region and idle.
// "adrs-multi-gepa": GEPA's evolved program ("cost_deadline_balancer_v4_scan"): with slack = time
// left - work left - changeover left and oh = d: slack <= 0 -> on-demand (and stay on it oh);
// spot here -> spot (on-demand kept while that stay lasts and slack < oh / 2); else probe the other
// regions, those last seen with spot first (most recent first), then the unseen, then by share of
// probes with spot and time since the last probe, and take spot in the first with it (same stay
// rule); none: on-demand stays on on-demand; otherwise idle while slack > 2 oh for at most
// min(5, slack / oh) idle ticks in a row, then on-demand (stay oh / 2).
// "seedance-multi-region": SeedanceMultiRegionPolicy (multi_region.h, its issue-29 configuration),
// reading every region's availability now and in the past, and each region's spot price (the
// harness's cost map); its spot region is pointed at.
std::unique_ptr<SkySpotMultiPolicy> MakeSkySpotMultiPolicy(const std::string& name);
const std::vector<std::string>& SkySpotMultiPolicyNames();

}  // namespace seedance::sim::deadline
