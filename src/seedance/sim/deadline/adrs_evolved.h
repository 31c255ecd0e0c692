#pragma once

// The evolved programs of the ADRS leaderboard's single-region "cant_be_late" problem
// (UCB-ADRS/ADRS-Leaderboard, solutions/cant_be_late/*; data/adrs_spot/SOURCE.md), reimplemented
// from their published logic as baselines of `bench spot`. Each runs under the authors'
// simulator rules (SkySpotPolicy: the strong guarantee on top). Names and published scores:
//   adrs-gepa          GEPA's "improved_evolve_strategy": on-demand once the slack R - C - d is
//                      gone; spot whenever available; without spot, on-demand stays on on-demand,
//                      and an idle (or preempted) job goes on-demand once slack / C < 0.2.
//   adrs-openevolve    OpenEvolve's "adaptive_regime_v4": a one-hour window of availability (share
//                      and longest run) picks a scarce or rich regime, which sets how early the job
//                      seals itself on on-demand, how long it waits idle and when it leaves
//                      on-demand (dwell, debounce, run length).
//   adrs-shinkaevolve  ShinkaEvolve's "adaptive_brake_strategy": a risk score from two moving
//                      averages of availability (trend and its change), the flip rate and the
//                      longest run of the last 60 ticks sets a safety cushion above the 2d line;
//                      inside it the job takes spot only when risk < (position in cushion)^2.
//   adrs-levi          LEVI's "LEVI_single": on-demand inside d + one tick of the deadline (a held
//                      spot instance kept); spot whenever available; without spot, on-demand stays,
//                      and an idle job waits while R > C + d + 2 ticks + 10% of C.
// All read only the availability seen since the job started (as in the leaderboard's harness).

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "seedance/sim/deadline/sky_spot_policies.h"

namespace seedance::sim::deadline {

class AdrsGepaPolicy : public SkySpotPolicy {
 public:
  std::string_view Name() const override { return "adrs-gepa"; }

 protected:
  Instance Choose(const Observation& obs) override;
};

class AdrsLeviPolicy : public SkySpotPolicy {
 public:
  std::string_view Name() const override { return "adrs-levi"; }

 protected:
  Instance Choose(const Observation& obs) override;
};

class AdrsOpenEvolvePolicy : public SkySpotPolicy {
 public:
  std::string_view Name() const override { return "adrs-openevolve"; }

 protected:
  void OnStart(const DeadlineJob& job, std::int64_t gap_s) override;
  Instance Choose(const Observation& obs) override;

 private:
  std::deque<bool> history_;
  std::size_t window_ = 10;
  std::optional<std::int64_t> od_entry_tick_;
  bool sealed_ = false;
  std::int64_t spot_streak_ = 0;
};

class AdrsShinkaEvolvePolicy : public SkySpotPolicy {
 public:
  std::string_view Name() const override { return "adrs-shinkaevolve"; }

 protected:
  void OnStart(const DeadlineJob& job, std::int64_t gap_s) override;
  Instance Choose(const Observation& obs) override;

 private:
  std::deque<bool> history_;
  bool started_ = false;
  double ema_short_ = 0, ema_long_ = 0, prev_trend_ = 0;
  std::int64_t od_dwell_ticks_ = 0;
};

// The evolved programs' names, in table order, and each one's published leaderboard figure on the
// leaderboard's own setting (results/cant_be_late/<framework>/results.json: score, mean cost in
// USD over its 1,080 runs); LEVI has no published figure in the repository (score < 0).
struct AdrsPublished {
  std::string policy;
  std::string framework;
  double score = -1;
  double avg_cost_usd = -1;
};
const std::vector<AdrsPublished>& AdrsEvolvedPrograms();

}  // namespace seedance::sim::deadline
