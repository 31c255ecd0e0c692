#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "seedance/core/status.h"
#include "seedance/sweep/grid.h"

namespace seedance::sweep {

// One cell's run: the cost scenario's workload and fleet (sim::BuildScenario) with the cell's
// values, simulated under its one policy (sim::ScenarioPolicies, sim::Simulate). No LP bound:
// a cell is one policy, and the bound belongs to a whole roster.

// A cell task as DIR/plan.json stores it, and back. Errors: kInvalidArgument naming `where` and
// the field.
nlohmann::json TaskJson(const CellTask& task);
Result<CellTask> TaskFromJson(const nlohmann::json& j, const std::string& where);

// Runs the cell and returns its result:
//   {"id", "params": Cell::Params(), "scenario": {workload, fleet, jobs, arrival_window_hours,
//    pools [name], policy_description, baseline, reference},
//    "metrics": {total_cost_usd, gpu_cost_usd, cold_start_idle_usd, idle_held_usd,
//    avg_jct_hours, p99_jct_hours, makespan_hours, gpu_utilization, spot_interruptions,
//    deadline_misses, unfinished_jobs}}
// A pure function of the task and the bundled data: no time, host or path in it.
Result<nlohmann::json> RunCell(const CellTask& task, const std::string& data_dir);

}  // namespace seedance::sweep
