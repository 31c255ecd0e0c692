#pragma once

// The deadline policies of `seedance bench spot`. All but `omniscient` see only an Observation
// (the job's state and the series up to now). Names are the ones written to spot.json.
//   on-demand         on-demand from the start to the end.
//   greedy            the authors' greedy (sky_spot `strawman`, sky_spot_policies.h).
//   uniform-progress  the authors' uniform progress (sky_spot `rc_cr_threshold`,
//                     sky_spot_policies.h): what their simulator runs, reproduced window by window
//                     (data/adrs_spot, issue 41).
//   greedy-paper      "Can't Be Late" S3.4 read from the paper: spot whenever available, idle
//                     otherwise, Safety Net (GreedyPolicy).
//   uniform-progress-spot-first  S5.2 read from the paper, available spot overriding the hysteresis
//                     (it then only gates on-demand -> idle); the bench's baseline before issue 41.
//   uniform-progress-hysteresis  the other reading: the hysteresis gates every exit from on-demand,
//                     to spot as well as to idle. Shown only in the reproduction of Tables 3 and 5.
//   adrs-*            the ADRS leaderboard's evolved programs (adrs_evolved.h).
//   seedance          uniform progress with the S5.4 "next spot lifetime" rules, the oracle
//                     replaced by an estimate from the past of the series, and a longer on-demand
//                     hold (SeedanceDeadlinePolicy).
//   omniscient        the offline optimum with the whole future known (omniscient.h); a labelled
//                     reference, not a competitor.

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/deadline/spot_job.h"

namespace seedance::sim::deadline {

// The Safety Net (S3.3) on the tick grid: unless the job keeps a running spot instance, it commits
// to on-demand for the rest of the job once its slack R - C falls below
// max(2d, d + tick). With 2d it can still take one more spot launch and fall back to on-demand;
// with d + tick it can idle one more tick and still switch (the paper's continuous-time rule is
// R < C + 2d; the d + tick term only matters when a tick is longer than d).
std::int64_t SafetyNetSlack(const DeadlineJob& job, std::int64_t gap_s);

// True when the Safety Net overrides `choice`: the job is not keeping a running spot instance and its
// slack R - C is below SafetyNetSlack (it must then commit to on-demand for the rest of the job).
bool SafetyNetCommits(const Observation& obs, Instance choice);

// The deadline guard checked afresh at every tick instead of the Safety Net's commitment: with slack
// s = R - C, keeping a spot instance needs s >= d + its changeover left (preempted at the next
// tick, on-demand still fits), launching spot (from idle or on-demand) s >= 2d, idling one tick
// s >= tick + d; otherwise on-demand. A job that starts with R >= C + d never misses its deadline,
// and one whose slack has run low still takes spot whenever the slack allows a launch and a return.
Instance GuardEachTick(const Observation& obs, Instance choice);

// Base of the online policies: applies the Safety Net (and Thrifty: the simulator stops a finished
// job) on top of Choose(); or, when `guard_each_tick`, GuardEachTick.
class OnlinePolicy : public DeadlinePolicy {
 public:
  explicit OnlinePolicy(bool guard_each_tick = false) : guard_each_tick_(guard_each_tick) {}
  void Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick) override;
  Instance Decide(const Observation& obs) final;

 protected:
  virtual void OnStart(const DeadlineJob& /*job*/, std::int64_t /*gap_s*/, std::int64_t /*start_tick*/) {}
  virtual Instance Choose(const Observation& obs) = 0;

 private:
  bool guard_each_tick_;
  bool committed_ = false;
};

class OnDemandPolicy : public OnlinePolicy {
 public:
  std::string_view Name() const override { return "on-demand"; }

 protected:
  Instance Choose(const Observation& obs) override;
};

class GreedyPolicy : public OnlinePolicy {
 public:
  std::string_view Name() const override { return "greedy-paper"; }

 protected:
  Instance Choose(const Observation& obs) override;
};

// Uniform progress: cp(t) = C(0) - C(t), ep(t) = C(0) t / R(0).
bool BehindSchedule(const Observation& obs, std::int64_t at_s);  // cp(t) < ep(at_s)

// Rules 1 and 3 when the job does not take spot: on-demand keeps the job until it is ahead of
// ep(t + hold) (uniform progress: hold = 2d); an idle job goes on-demand when it is behind ep(t).
Instance UniformProgressWithoutSpot(const Observation& obs, std::int64_t hold_s);

class UniformProgressPolicy : public OnlinePolicy {
 public:
  // `spot_first` (the bench's "uniform-progress"): available spot overrides the hysteresis, which
  // then only gates on-demand -> idle. false: the hysteresis also keeps a behind on-demand job off
  // spot ("uniform-progress-hysteresis", the weaker reading, kept for the reproduction).
  explicit UniformProgressPolicy(bool spot_first = true) : spot_first_(spot_first) {}
  std::string_view Name() const override { return spot_first_ ? "uniform-progress-spot-first" : "uniform-progress-hysteresis"; }

 protected:
  Instance Choose(const Observation& obs) override;

 private:
  bool spot_first_;
};

// Spot run lengths, and the lengths of the outages between them, seen in a trailing window of the
// past, kept incrementally as the job advances (each tick is read once, and never beyond now).
class SpotRunHistory {
 public:
  explicit SpotRunHistory(std::int64_t window_ticks) : window_ticks_(window_ticks) {}
  void Reset();
  // Reads every tick up to past.now() not read yet.
  void AdvanceTo(const PastView& past);
  // Completed runs (in ticks) that started inside the window, oldest first.
  const std::deque<std::pair<std::int64_t, std::int64_t>>& runs() const { return runs_; }  // (start, length)
  // Consecutive available ticks before now (0 if the run started now or spot is unavailable).
  std::int64_t current_age() const;
  // Completed outages (runs of unavailable ticks) that started inside the window, oldest first.
  const std::deque<std::pair<std::int64_t, std::int64_t>>& outages() const { return outages_; }  // (start, length)
  // Consecutive unavailable ticks up to now, now included (0 when spot is available now).
  std::int64_t outage_age() const;

 private:
  std::int64_t window_ticks_;
  std::int64_t next_ = 0;        // first tick not read yet
  std::int64_t run_start_ = -1;  // start of the open run, -1 when spot is unavailable
  bool run_start_seen_ = false;  // the open run's start was observed (not cut by the window)
  bool seen_down_ = false;       // an unavailable tick has been read
  std::int64_t down_start_ = -1;  // start of the open outage, -1 when spot is available
  bool down_start_seen_ = false;  // the open outage's start was observed (not cut by the window)
  bool seen_up_ = false;          // an available tick has been read
  std::deque<std::pair<std::int64_t, std::int64_t>> runs_;
  std::deque<std::pair<std::int64_t, std::int64_t>> outages_;
};

// Expected rest (seconds) of the outage now open in `history`, from the completed outages of its
// window that lasted longer than this one has so far. False when spot is available now or no such
// outage was seen.
bool ExpectedOutageLeft(const SpotRunHistory& history, std::int64_t gap_s, double* seconds);

// Expected benefit (spot-price seconds) of holding the spot run now open in `history` (conditioned on
// its age), against buying the same progress on-demand: k (L - d)+ - L per remaining lifetime L,
// less k d more when `extra_od_changeover` (the job leaves on-demand for it). Returns false when
// the history holds fewer than `min_runs` completed runs.
bool ExpectedSpotBenefit(const SpotRunHistory& history, const Observation& obs, bool extra_od_changeover,
                         int min_runs, double* benefit);

struct SeedanceDeadlineConfig {
  std::int64_t window_s = 7 * 24 * 3600;  // trailing window of spot history (issue 11: 7 days)
  int min_runs = 3;                       // fewer completed runs: take every available spot run
  // An on-demand job with no spot to take stays on on-demand until it is ahead of the uniform-progress
  // target ep(t + hold), hold = this many changeover delays (uniform progress: 2). Tuned on the
  // 10/26/2022 series only (docs/BENCHMARKS.md): savings plateau between 32 and 96; 48 is its middle.
  double on_demand_hold_changeovers = 48;
  // >= 0: the slack rule replaces the uniform-progress target line: an idle job with no spot to
  // take goes on-demand once its slack R - C - d is below this fraction of C, and an on-demand job
  // with no spot to take stays on on-demand (on_demand_hold_changeovers then unused). < 0: the
  // target line (uniform progress's rules 1 and 3 with the hold above).
  double wait_slack_fraction = -1;
  double wait_slack_fraction_per_hour_of_d = 0;  // the fraction grows by this per hour of d
  double wait_slack_changeovers = 0;             // the line is raised by this many changeover delays d
  // >= 0 (slack rule only): an idle job with no spot also waits, above the line or below it, while
  // the outage now open is expected to end within this many changeover delays (ExpectedOutageLeft):
  // going on-demand would cost d of slack and k d at once, and d more to come back to spot.
  double wait_outage_changeovers = -1;
  // true: GuardEachTick instead of the Safety Net's commitment to on-demand for good.
  bool guard_each_tick = false;
  // > 0: a second, shorter trailing window of spot history (the regime now). An on-demand job
  // leaves on-demand for available spot only when the spot run's expected benefit is positive in
  // both windows (the recent one judged only once it holds min_runs completed runs): a spell of
  // short runs inside a day of long ones otherwise sends the job back and forth, each round trip
  // spending 2d of slack, until the slack is too thin for spot at all. 0: the long window only.
  std::int64_t recent_window_s = 0;
};

// The single-region policy's configuration (`seedance` in `bench spot`), tuned in issue 41 on the
// even-numbered windows of the authors' sampled windows only (data/adrs_spot; the odd-numbered
// ones are the evaluation half): a 1-day window of spot history; an idle job goes on-demand once
// its slack R - C - d is below (0.08 + 0.45 x d in hours) x C + 4d, unless the outage now open is
// expected to end within 2d, and stays there while no spot is available; it leaves on-demand for
// spot only when the run pays by the last 3.5 h's runs as well as the day's (round 5); the deadline
// guard is checked every tick. docs/BENCHMARKS.md has the sweep and the procedure. The multi-region policy
// keeps the struct's defaults (issue 29).
SeedanceDeadlineConfig SingleRegionSeedanceConfig();

// Seedance's deadline policy. Uniform progress (rules 1-2, Safety Net) decides when the job must run;
// whether to take an available spot instance is decided on the expected benefit of the spot run,
// from the empirical distribution of spot run lengths in the trailing window, conditioned on the
// age of the current run: for a remaining lifetime L, a spot run saves k (L - d)+ - L against buying
// the same progress on-demand, and k (L - d)+ - L - k d when the job leaves on-demand for it (it
// must pay d again to come back): the S5.4 oracle rules L > kd/(k-1) and L > 2kd/(k-1), taken in
// expectation (with too little history: take the spot run, as spot-first uniform progress). A
// running spot instance is kept (Exploitation). An on-demand job with no spot to take leaves
// on-demand for idle only once it is ahead of ep(t + hold) (config), much later than uniform
// progress's ep(t + 2d): each idle spell that ends back on on-demand costs k d, and on the traces
// most do (spot is not back before the job falls behind again).
class SeedanceDeadlinePolicy : public OnlinePolicy {
 public:
  explicit SeedanceDeadlinePolicy(SeedanceDeadlineConfig config = SingleRegionSeedanceConfig());
  std::string_view Name() const override { return "seedance"; }

 protected:
  void OnStart(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick) override;
  Instance Choose(const Observation& obs) override;

 private:
  SeedanceDeadlineConfig config_;
  SpotRunHistory history_;
  SpotRunHistory recent_;
};

// The policy names, in table order.
const std::vector<std::string>& PolicyNames();

// Builds an online policy by name (not "omniscient", which needs the future: see omniscient.h).
Result<std::unique_ptr<DeadlinePolicy>> MakeOnlinePolicy(const std::string& name);

}  // namespace seedance::sim::deadline
