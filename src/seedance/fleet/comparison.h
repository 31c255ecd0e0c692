#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/fleet/bound.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/gpus_needed.h"

// `seedance cost-benchmark --workload fleet-week`: the standard stack (two kube-scheduler
// scorings) against Seedance on sets of weeks, with a waterfall that switches each Seedance layer
// on alone over the standard stack, then all together.
namespace seedance::fleet {

// One set of weeks: a fleet shape, a week and seeds, labelled held out or tuning.
struct WeekSet {
  std::string name;        // "held-out: week 2, seeds 5-9, fleet a"
  bool held_out = true;
  std::string shape = "a";
  int week = 1;            // 0 = week 1, 1 = week 2
  std::vector<std::uint64_t> seeds;
  bool levers = false;     // run the waterfall's one-layer rows on this set
  std::string fleet_file;  // "" = the shape's bundled file
  std::string history_dir; // "" = the bundled work; else the user's week (history.h), one run
  // An owned fleet with a standing backlog (fleet c): the committed GPUs each headline stack needs
  // (gpus_needed.h) and the useful-work bound (bound.h) are computed for it.
  bool owned_backlog = false;
};

// The default sets: the headline (fleet a, week 2, seeds 5-9, with the waterfall), fleet b
// (week 2, seeds 5-9) and other seeds of week 1 (seeds 5-9); `with_tuning` adds the tuning set
// (fleet a, week 1, seeds 0-4, with the waterfall). `fleet_file` non-empty: one set on that fleet
// (week 2, seeds 5-9, with the waterfall) instead of fleet b. `history_dir` non-empty (with a
// `fleet_file`): the user's own week on that fleet (one run, with the waterfall) instead.
// `with_owned` adds the owned fleet c with its training backlog (held out; about 25 s of CPU a
// week, so not in the default comparison).
std::vector<WeekSet> DefaultWeekSets(bool with_tuning, const std::string& fleet_file,
                                     const std::string& history_dir = "", bool with_owned = false);

// One stack over a set: each seed's outcome and their sum (money, work, GPU-hours added; SLO
// shares from the summed counts; JCT and waits as means over the seeds).
struct StackResult {
  StackConfig config;
  std::string lever;       // the waterfall's lever name ("" for the standard and Seedance rows)
  std::vector<FleetWeekOutcome> seeds;
  FleetWeekOutcome sum;
  // Unit cost against the set's base (the cheaper standard row): sum over training, serving and
  // notebooks of this stack's $ per unit x the base's units, over the base's $. 1 = the same.
  double unit_cost_index = 1;
};

// The frontier (issue 39): Seedance's patience for slower owned GPUs (StackConfig::
// migrate_min_speed: how much slower a committed type a running cloud job may move to) swept on
// the sets with the waterfall; a lower value waits on slower owned GPUs for a cheaper week.
inline constexpr double kFrontierMigrateMinSpeed[] = {0.8, 0.6, 0.4, 0.25, 0.0};
struct FrontierPoint {
  double knob = 0;          // migrate_min_speed
  double usd_per_week = 0;  // mean per week of the set's weeks
  double jct_mean_h = 0;    // finished jobs, over the set's weeks
  double unit_cost_index = 1;
};
// A baseline's point against Seedance's curve (report::CurveUsdAt): below it when cheaper than the
// curve at its JCT; left of it (`curve_usd` +infinity) when faster than every point of the curve.
struct FrontierBaseline {
  std::string stack;
  double usd_per_week = 0, jct_mean_h = 0, curve_usd = 0;
  bool below = false, left_of_curve = false;
};

struct SetResult {
  WeekSet set;
  std::vector<StackResult> standard;   // least-allocated, most-allocated (issue 30's), competent
  int base = 0;                         // index into standard: the headline base (the competent stack)
  int shipped_base = 0;                 // index into standard: issue 30's base (the cheaper scoring)
  StackResult seedance;
  std::vector<StackResult> levers;      // one layer on over the base, in waterfall order
  std::vector<std::string> assumptions;
  double committed_share = 0;           // committed $ / base $: a floor no stack can cut in a week
  double bound_usd = 0;                 // FleetWeekLowerBoundUsd for the base's work, summed over seeds
  double bound_index = 1;               // bound_usd / base $
  std::string bound_error;              // non-empty: the bound's LP failed (bound_usd is not set)
  BoundDecomposition bound_decomposition;  // the bound's solutions, summed over seeds (round 5)
  // What makes the set's unit costs a weak comparison: a stack that served under 95 % within SLO,
  // finished under 80 % of its training jobs, or broke a Gold guarantee (the fleet is too small for
  // the week's work). One sentence each; printed above the set's figures.
  std::vector<std::string> warnings;
  double max_cpu_seconds = 0;           // the slowest single week
  std::vector<FrontierPoint> frontier;  // sets with the waterfall: Seedance across kFrontierMigrateMinSpeed
  // Sets with owned_backlog: the base's and Seedance's committed GPUs needed for the base's SLO and
  // deadlines on the whole fleet (issue 39, fleet c).
  std::vector<GpusNeeded> gpus_needed;
  GpusNeededTarget gpus_needed_target;
  int committed_gpus = 0;
  // Sets with owned_backlog: the most training PFLOP per $ any stack keeping the base's SLO and
  // deadlines can reach (FleetWeekUsefulWorkUpperBound), or why it was not computed.
  UsefulWorkBound work_bound;
  std::string work_bound_error;
};

// Every standard row of the set against its frontier (empty without one).
std::vector<FrontierBaseline> FrontierBaselines(const SetResult& r);

struct FleetWeekComparison {
  std::vector<SetResult> sets;          // the first held-out set is the headline
  std::string predictive_note;          // whether the forecaster beat the reactive one, held out
};

struct FleetWeekRunOptions {
  std::string data_dir;
  std::string cache_dir;
  std::vector<WeekSet> sets;
  std::ostream* profile_progress = nullptr;  // serving profiles measured (FleetWeekOptions::progress)
  // Weeks run side by side on this many threads (0: the machine's cores); the results are the same
  // whatever the count.
  unsigned threads = 0;
};

// The waterfall's levers in order, each a change to a StackConfig.
struct Lever {
  std::string name;
  std::function<void(StackConfig*)> apply;
};
const std::vector<Lever>& WaterfallLevers();

// Runs every set. `progress` gets one line per week run (may be empty).
Result<FleetWeekComparison> RunFleetWeekComparison(const FleetWeekRunOptions& options,
                                                   const std::function<void(const std::string&)>& progress);

// The idle culler's timeout (or Seedance's idle grace) tuned on weeks: every value of `grid` run
// on each week with `stack` (its idle_cull_s, or idle_grace_s with `grace`, set to the value); the
// chosen one is the cheapest (total $ over the weeks) whose notebook sessions cut while in use
// are at most kMaxCutInUseShare of the sessions (the shortest value on a tie).
inline constexpr double kMaxCutInUseShare = 0.01;
inline constexpr double kIdleTimeoutGrid[] = {900, 1800, 3600, 7200, 14400};
struct IdleTimeoutRow {
  double timeout_s = 0;
  double total_usd = 0;
  int cut_in_use = 0, sessions = 0;
};
struct IdleTimeoutTuning {
  std::vector<IdleTimeoutRow> rows;
  double chosen_s = 0;   // 0: no value met the rule
};
Result<IdleTimeoutTuning> TuneIdleTimeout(const std::vector<const FleetWeekScenario*>& weeks, const StackConfig& stack,
                                          bool grace);

// The weeks' outcomes added as a set's row is (money, work, GPU-hours summed; SLO shares from the
// summed counts; JCT and waits as means).
FleetWeekOutcome SumOutcomes(const std::vector<FleetWeekOutcome>& weeks);

// Unit cost index of `x` against `base` (see StackResult).
double UnitCostIndex(const FleetWeekOutcome& x, const FleetWeekOutcome& base);

// Useful work per $ of the whole bill, `x` against `base` (issue 39, the owned fleet c): training
// PFLOP done per $ and million tokens served within both SLOs per $, each as a ratio to the base's,
// and one index combining them, weighted by the base's bill split between its training and its
// serving (training_usd, serving_usd), as the unit cost weighs each kind by the base's basket.
// Notebook hours are left out (not work a backlog can absorb). 0 where the base did none.
struct UsefulWorkRatios {
  double pflop = 0, mtok = 0;   // x's units per $ over the base's
  double training_weight = 0;   // the base's training $ / (training $ + serving $)
  double combined = 0;          // training_weight x pflop + (1 - training_weight) x mtok
};
UsefulWorkRatios UsefulWorkPerUsd(const FleetWeekOutcome& x, const FleetWeekOutcome& base);

// Text table, results.json's `fleet_week` object and the report's HTML section.
std::string FleetWeekTable(const FleetWeekComparison& c);
std::string FleetWeekJson(const FleetWeekComparison& c);   // a JSON object
std::string FleetWeekHtml(const FleetWeekComparison& c);   // a <section>

}  // namespace seedance::fleet
