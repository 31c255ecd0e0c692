#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "seedance/sim/scenarios.h"
#include "seedance/sim/seed_split.h"

namespace seedance::report {

// `seedance cost-benchmark`'s headline on held-out data (issue 29): the workload seeds of a run
// split into the held-out set (sim::ClassifySeed) and the tuning set, each summarized on its own.
// The headline is the held-out set whenever the run has held-out seeds; the tuning set stands
// beside it, labelled, and is never shown as held out.
struct SeedSetRun {
  sim::SeedSet set = sim::SeedSet::kOutside;
  sim::SeedSweep sweep;                      // the set's seeds, runs and means (sweep.seeds non-empty)
  std::vector<sim::LeftOutPolicy> left_out;  // policies not run on these seeds, and why
};

// "held out: seeds 5-9", "tuning: seed 42", "outside the tuning / held-out split: seed 42".
std::string SeedSetLabel(const SeedSetRun& run);

// The headline table: one row per policy (the headline's order, then policies only `tuning` ran),
// with the headline set's mean cost ± sd / average JCT and its saving against that set's best
// baseline, and the tuning set's figures beside it when `tuning` is not null (else a line saying
// how to add them, for a workload that has tuning seeds). A policy a set left out says why.
// Text for stdout, and an HTML <section> that the report puts first.
std::string SeedSetTable(const SeedSetRun& headline, const SeedSetRun* tuning);
std::string SeedSetHtmlSection(const SeedSetRun& headline, const SeedSetRun* tuning);

// Adds to results.json: headline_set (SeedSetKey of the headline), and the blocks held_out and
// tuning (null when that set was not run), plus outside_split when the headline is outside the
// split. Each block: {label, seeds, headline (bool), policies, best_baseline,
// baseline_at_seedance_jct, lower_bound_usd, bound_at_best_baseline_usd, summary, not_run
// [{policy, reason}]} as SweepJson writes them for the set's seeds; the non-headline block also
// holds per_seed (the headline's runs are the top-level per_seed, or the top-level keys for one
// seed). The top-level keys stay the headline set's, so earlier readers get held-out figures.
void AddSeedSetJson(const SeedSetRun& headline, const SeedSetRun* tuning, nlohmann::json* results);

}  // namespace seedance::report
