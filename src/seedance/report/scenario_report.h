#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "seedance/sim/scenarios.h"

namespace seedance::report {

// How results.json's best_baseline is chosen (sim::BestBaseline), in words.
extern const char* const kBestBaselineRule;

// Rendering of a cost scenario (seedance cost-benchmark, issue 3): the per-policy table for
// stdout, the results.json fields and the HTML section with the cost-by-policy chart (with the
// LP lower bound) and utilization over time. Deterministic apart from keys named wall_seconds /
// solve_seconds.
std::string ScenarioTable(const sim::ScenarioResult& r);

// JSON: workload {name, jobs, arrival_window_s, fleet, pools, notes}, policies [{name,
// description, total_cost_usd, gpu_cost_usd, cold_start_idle_usd, idle_held_usd,
// cost_per_useful_gpu_hour_usd, avg_jct_hours, p99_jct_hours, deadline_misses,
// spot_interruptions, gpu_utilization, unfinished_jobs, savings_vs_fifo_pct,
// over_lower_bound_pct, cost_by_pool_usd {pool: usd}, wall_seconds, baseline, reference, role,
// savings_vs_best_baseline_pct, avg_jct_no_worse_than_best_baseline, gap_closed (non-baseline
// rows: (best - cost) / (best - bound at best's JCT))}], seed, best_baseline {name,
// total_cost_usd, avg_jct_hours, rule} or null, bound_at_best_baseline_usd or null, assumptions
// [text], lower_bound_usd, lower_bound {..., solve_seconds}, lower_bounds_at_service_level [...].
nlohmann::json ScenarioJson(const sim::ScenarioResult& r);

// An HTML <section> (no page wrapper).
std::string ScenarioHtmlSection(const sim::ScenarioResult& r);

// With r.as_run (`cost-benchmark --as-run`) the table, results.json (top-level as_run {label, role,
// source, total_cost_usd, usd_by_tier {owned, reserved, on_demand, spot}, committed_idle_usd,
// period_hours, jobs, avg_jct_hours, p99_jct_hours, cost_per_useful_gpu_hour_usd, assumption}, and
// savings_vs_as_run_pct on every policy) and the HTML section carry the row "as run (what you
// paid)", labelled as a baseline row, not a policy.
// "owned $a + reserved $b + on-demand $c + spot $d (committed GPUs idle: $e)", to the cent.
std::string AsRunSplit(const sim::AsRunCost& c);

// `--seeds` with more than one seed: the table of mean +- sd per policy, results.json (seeds,
// per_seed [ScenarioJson of each], summary {policies [{name, baseline, reference, role,
// total_cost_usd {mean, sd}, avg_jct_hours, p99_jct_hours, unfinished_runs, savings_vs_fifo_pct,
// savings_vs_best_baseline_pct, gap_closed}], lower_bound_usd, bound_at_best_baseline_usd,
// best_baseline}, plus top-level policies / best_baseline / bound_at_best_baseline_usd from the
// means so that readers of the single-seed format find them) and the report section. A non-empty
// `label` (SeedSetLabel: "held out: seeds 5-9") heads the table and the section.
std::string SweepTable(const sim::SeedSweep& s, const std::string& label = {});
nlohmann::json SweepJson(const sim::SeedSweep& s);
std::string SweepHtmlSection(const sim::SeedSweep& s, const std::string& label = {});

}  // namespace seedance::report
