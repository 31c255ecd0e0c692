#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "seedance/sim/scenarios.h"

namespace seedance::report {

// Rendering of a cost scenario (seedance cost-benchmark, issue 3): the per-policy table for
// stdout, the results.json fields and the HTML section with the cost-by-policy chart (with the
// LP lower bound) and utilization over time. Deterministic apart from keys named wall_seconds /
// solve_seconds.
std::string ScenarioTable(const sim::ScenarioResult& r);

// JSON: workload {name, jobs, arrival_window_s, fleet, pools, notes}, policies [{name,
// description, total_cost_usd, gpu_cost_usd, cold_start_idle_usd, idle_held_usd,
// cost_per_useful_gpu_hour_usd, avg_jct_hours, p99_jct_hours, deadline_misses,
// spot_interruptions, gpu_utilization, unfinished_jobs, savings_vs_fifo_pct,
// over_lower_bound_pct, cost_by_pool_usd {pool: usd}, wall_seconds}], lower_bound_usd,
// lower_bound {columns, job_classes, solve_seconds}.
nlohmann::json ScenarioJson(const sim::ScenarioResult& r);

// An HTML <section> (no page wrapper).
std::string ScenarioHtmlSection(const sim::ScenarioResult& r);

}  // namespace seedance::report
