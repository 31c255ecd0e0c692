#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "seedance/core/clock.h"
#include "seedance/core/status.h"
#include "seedance/sweep/cell.h"
#include "seedance/sweep/grid.h"

namespace seedance::sweep {

// A sweep's output directory DIR (every file written atomically: temporary name, then rename):
//   DIR/plan.json             the grid and every cell's task in expansion order (what Slurm
//                             tasks run from); rewritten by each driver run
//   DIR/cells/<id>.json       one finished cell: {"cell": RunCell's result, "run": {build, host,
//                             node, slurm_job, attempt, wall_seconds}}
//   DIR/cells/<id>.error      why the cell's last run failed (removed when it succeeds)
//   DIR/slurm/attempt-K.ids   Slurm attempt K: line i is the cell of array task i
//   DIR/slurm/attempt-K.sh    its batch script; attempt-K.job its job id; DIR/slurm/logs/ the tasks' output
//   DIR/results.json, DIR/sweep_report.html   the merged outputs: a function of the grid only
//   DIR/manifest.json         how this run went: build, mode, hosts, Slurm jobs, attempts, times
// A rerun of the same grid into the same DIR runs only the cells without a valid cell file.

// The plan: the cells and what every run needs to know, identical for the driver and its tasks.
struct Plan {
  std::string build;     // the binary's version and commit: cells of another build are rerun
  std::string data_dir;  // bundled data the cells read
  nlohmann::json grid;   // {workloads, policies, seeds, values {key: [..]}, config_file}
  std::vector<CellTask> tasks;  // in expansion order
};

Result<Plan> MakePlan(const Grid& grid, const std::string& data_dir, const std::string& build);
Status WritePlan(const Plan& plan, const std::string& dir);
// Errors: kNotFound when DIR/plan.json is missing; kInvalidArgument naming the file and field.
Result<Plan> ReadPlan(const std::string& dir);

std::string CellPath(const std::string& dir, const std::string& id);

// The plan's cells without a valid cell file: missing, unreadable, for other params, or written
// by another build. In plan order.
std::vector<const CellTask*> MissingCells(const Plan& plan, const std::string& dir);

// Where and how a cell ran (DIR/cells/<id>.json "run"; never part of results.json).
struct RunInfo {
  std::string host;
  std::string node;       // Slurm node name, or empty
  std::string slurm_job;  // "<array job>_<task>", or empty
  int attempt = 0;        // Slurm attempt, 0 for local runs
};

// Runs one cell and writes DIR/cells/<id>.json atomically (or DIR/cells/<id>.error with the
// reason, returning the error).
Status RunAndStore(const Plan& plan, const CellTask& task, const std::string& dir, const RunInfo& info,
                   const Clock& clock);

// Progress lines for stderr ("sweep: 12/60 cells done ...").
using Progress = std::function<void(const std::string&)>;

// Runs `todo` on `threads` worker threads (0: all cores). Returns the failed cells' errors,
// "cell <id> (<workload> <policy> seed <s>): reason", in plan order; empty when all finished.
std::vector<std::string> RunLocal(const Plan& plan, const std::vector<const CellTask*>& todo,
                                  const std::string& dir, int threads, const RunInfo& info, const Clock& clock,
                                  const Progress& progress);

// The reason stored in DIR/cells/<id>.error, or empty.
std::string CellError(const std::string& dir, const std::string& id);

// The merged results.json of a finished sweep:
//   generated_by "seedance sweep", grid (Plan::grid), cells_total,
//   cells [RunCell's result per cell, sorted by id],
//   summary [per (workload, values) in expansion order: workload, values, policies [per policy:
//     policy, baseline, reference, seeds, total_cost_usd {mean, sd}, avg_jct_hours {mean, sd},
//     p99_jct_hours {mean, sd}, unfinished_runs], cheapest (the cheapest non-reference policy
//     that finished every job on every seed, ties by name; null when none)],
//   assumptions [text]
// Byte-identical for the same grid and build wherever its cells ran (no time, host or path).
// Errors: kFailedPrecondition naming the missing cells.
Result<nlohmann::json> MergeResults(const Plan& plan, const std::string& dir);

// sweep_report.html: one self-contained page (inline CSS and SVG) with the summary tables and,
// for the first numeric value with two or more values, mean cost against it per policy.
std::string SweepReportHtml(const nlohmann::json& results);

// Writes DIR/results.json and DIR/sweep_report.html, each atomically.
Status WriteMergedOutputs(const nlohmann::json& results, const std::string& dir);

}  // namespace seedance::sweep
