#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"

// The GPUs a stack needs to meet the week's SLOs and deadlines (issue 39, the owned fleet c with a
// standing backlog, where the bill is the committed fleet whatever runs): the smallest fleet, every
// committed pool scaled alike in whole nodes, on which the stack still does what the base does on
// the whole fleet -- the serving SLO attainment, the deadlines met and no more Gold guarantees
// broken. The backlog's other work is best effort and not part of the need.
namespace seedance::fleet {

// The fleet sizes tried, in sixteenths of every committed pool (16 = the whole fleet). The search
// stops at half: a stack that meets the target there is reported as "half or fewer".
inline constexpr int kGpusNeededDen = 16;
inline constexpr int kGpusNeededMinNum = 8;

// `s` with every committed pool's GPUs at num / den of its count, rounded to whole nodes of
// kGpusPerNode (at least one node), and every tenant's quota (nominal, borrowing and lending
// limits) scaled alike, so that each tenant keeps its share of the smaller fleet. Cloud pools and
// the work are unchanged. REQUIRES: 0 < num <= den.
FleetWeekScenario WithCommittedScaled(const FleetWeekScenario& s, int num, int den);

// What the base does on the whole fleet, summed over the set's weeks.
struct GpusNeededTarget {
  double serving_attainment = 1;  // tokens within SLO over tokens demanded
  int deadlines_met = 0;
  int gold_violations = 0;        // at most this many
};
GpusNeededTarget GpusNeededTargetOf(const FleetWeekOutcome& base_sum);
bool MeetsTarget(const FleetWeekOutcome& sum, const GpusNeededTarget& t);

// One fleet size tried for one stack (its weeks summed; $ per week).
struct GpusNeededProbe {
  int num = kGpusNeededDen;   // sixteenths of the committed fleet
  int committed_gpus = 0;
  double committed_usd_per_week = 0;
  double total_usd_per_week = 0;
  double serving_attainment = 0;
  int deadlines_met = 0;
  int gold_violations = 0;
  bool meets = false;
};

struct GpusNeeded {
  std::string stack;
  std::vector<GpusNeededProbe> probes;  // by fleet size, largest first (the whole fleet included)
  // The smallest size tried that meets the target (every larger size tried meets it too: the
  // bisection only moves down past sizes that do); -1 when the whole fleet does not.
  int needed_num = -1;
  const GpusNeededProbe* Needed() const;  // nullptr when needed_num < 0
};

// Runs a set's weeks with each (stack, fleet size in sixteenths) and returns, for each, the weeks'
// outcomes summed (the comparison runs them on its threads).
using GpusNeededRunner =
    std::function<Result<std::vector<FleetWeekOutcome>>(const std::vector<std::pair<StackConfig, int>>& runs)>;

// Bisects each stack's need between kGpusNeededMinNum and the whole fleet, the stacks' probes run
// side by side (one call of `run` per round: three rounds). `full` is each stack's outcome on the
// whole fleet (summed weeks; not run again), `weeks` how many weeks they sum. The search assumes
// more GPUs never do worse; every size tried is kept in `probes`, so the report shows where that
// fails.
Result<std::vector<GpusNeeded>> FindGpusNeeded(const std::vector<StackConfig>& stacks,
                                               const std::vector<FleetWeekOutcome>& full, double weeks,
                                               const FleetWeekScenario& any_week, const GpusNeededTarget& target,
                                               const GpusNeededRunner& run);

// The committed GPUs of a scenario (owned and reserved pools).
int CommittedGpus(const FleetWeekScenario& s);

// results.json's "gpus_needed" and the text and HTML report's lines for it.
nlohmann::json GpusNeededJson(const std::vector<GpusNeeded>& rows, const GpusNeededTarget& target, int committed_gpus_full);
std::string GpusNeededText(const std::vector<GpusNeeded>& rows, const GpusNeededTarget& target, int committed_gpus_full);
std::string GpusNeededHtml(const std::vector<GpusNeeded>& rows, const GpusNeededTarget& target, int committed_gpus_full);

}  // namespace seedance::fleet
