#pragma once

// Greedy and Uniform Progress as their authors wrote them: the rules of the "Can't Be Late" authors'
// simulator (sky_spot, as vendored in UCB-ADRS/ADRS-Leaderboard; data/adrs_spot/SOURCE.md), not
// the paper's prose. Where they differ from the paper (policies.h's OnlinePolicy):
//  - Safety nets on the tick grid: with R the time to the deadline rounded down to whole ticks and
//    C the work left, a job that is idle or on on-demand goes on-demand once C + 2d, rounded up
//    to whole ticks, reaches R; once C + d does, it goes on-demand unless it holds a spot instance
//    whose changeover is served.
//  - The "strong guarantee", applied by the simulator on top of every strategy: once C + d (whole
//    ticks) reaches R, on-demand, unless the job held a served spot instance during the last tick;
//    then spot, which becomes idle for this tick when that instance was just preempted.
//  - Spot requested while none is available becomes idle.
//  - Uniform progress (the authors' `rc_cr_threshold`): idle or spot when ahead of ep(t); behind
//    it, spot if available, else on-demand. A job on on-demand stays there while no spot is
//    available (it never goes idle from on-demand), and leaves for available spot only once
//    cp(t) > ep(t + 2d).
// Their simulator also bills every tick held in full (DeadlineJob::whole_tick_billing).

#include <cstdint>
#include <string_view>

#include "seedance/sim/deadline/spot_job.h"

namespace seedance::sim::deadline {

// The on-demand price of the authors' simulator, USD per hour (sky_spot utils.py: $3.06, the
// p3.2xlarge price, for every trace; the leaderboard's multi-region harness too).
inline constexpr double kSkySpotOdUsd = 3.06;

// floor((R(0) - t) / tick): whole ticks to the deadline (negative past it).
std::int64_t SkySpotTicksLeft(const Observation& obs);
// ceil((C(t) + extra_s) / tick).
std::int64_t SkySpotTicksNeeded(const Observation& obs, std::int64_t extra_s);

// Base of the policies run under the sky_spot simulator's rules: the strong guarantee and the
// availability check on top of Choose().
class SkySpotPolicy : public DeadlinePolicy {
 public:
  void Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick) override;
  Instance Decide(const Observation& obs) final;

 protected:
  virtual void OnStart(const DeadlineJob& /*job*/, std::int64_t /*gap_s*/) {}
  virtual Instance Choose(const Observation& obs) = 0;
};

// The authors' greedy (sky_spot `strawman`).
class AuthorsGreedyPolicy : public SkySpotPolicy {
 public:
  std::string_view Name() const override { return "greedy"; }

 protected:
  Instance Choose(const Observation& obs) override;
};

// The authors' uniform progress (sky_spot `rc_cr_threshold`).
class AuthorsUniformProgressPolicy : public SkySpotPolicy {
 public:
  std::string_view Name() const override { return "uniform-progress"; }

 protected:
  Instance Choose(const Observation& obs) override;
};

// The two safety nets shared by greedy and uniform progress, applied to `request`.
Instance SkySpotSafetyNets(const Observation& obs, Instance request);

}  // namespace seedance::sim::deadline
