#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "seedance/sim/tenancy_replay.h"

namespace seedance::report {

// The tenancy section of `cost-benchmark` (issue 13): the modes side by side.

// Plain-text table: one line per mode (allocation, Jain's index, Gold guarantee, preemptions,
// lost work), then per tenant of each mode, then the assumptions.
std::string TenancyTable(const sim::TenancyComparison& c);

// results.json key `tenancy`: one object per mode
//   {mode, gpu_allocation_pct, busy_allocation_pct, jain_index, gold_guarantee_checks,
//    gold_guarantee_violations, gold_preempted_by_lower, preemptions, idle_reclaims,
//    work_lost_gpu_hours, unstarted, per_tenant: [{tenant, tier, nominal_gpus, jobs, wait_p50_h,
//    wait_p99_h, guaranteed_share_honoured_pct, borrowed_gpu_hours, preemptions, cost_usd,
//    held_gpu_hours, fair_gpu_hours}]}
// and key `tenancy_scenario`: {workload, gpu_type, gpus, nodes, window_days, usd_per_gpu_hour,
// assumptions[]}. Deterministic.
nlohmann::json TenancyJson(const sim::TenancyComparison& c);
nlohmann::json TenancyScenarioJson(const sim::TenancyComparison& c);

// <section> for the HTML report: the comparison table, per-tenant tables, a chart of each
// tenant's GPUs over time under each mode, and the assumptions.
std::string TenancyHtmlSection(const sim::TenancyComparison& c);

}  // namespace seedance::report
