#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/scenarios.h"

namespace seedance::sweep {

// A what-if grid (`seedance sweep --grid FILE`): workloads x config values x policies x seeds,
// every combination one cell, each cell one run of the cost scenario's simulator for one policy
// (what `seedance cost-benchmark` runs per (workload, policy, seed), without the LP bound).
//
// The grid file is YAML:
//   workloads: [llm-finetune, gavel, my-jobs.csv]   # bundled names or a jobs CSV (relative to the file)
//   policies: [fifo, gavel-las, seedance]           # names of sim::ScenarioPolicies
//   seeds: [0, 1, 2]                                # workload and simulation seeds
//   values:                                         # optional: one axis per key, the cells take every combination
//     duration: [1d, 2d]                            # arrival window (a duration)
//     on_demand_quota: [12, 24]                     # GPUs per on-demand pool (integer >= 1)
//     spot_price_ratio: [0.3, 0.37]                 # spot price / on-demand, (0, 1]
//     scheduler.cost_aware.max_price_ratio: [0.6, 0.9]   # any numeric/boolean/word key of seedance-config.yaml's scheduler: section
//   config: seedance-config.yaml                    # optional base config the values override
//   fleet: fleet.yaml                               # optional fleet file (docs/FLEET_FILE.md) every cell
//                                                   # runs on; default: each workload's bundled fleet
// Unknown keys, bad values, duplicates and empty lists are errors naming file, line and key.

// One axis of `values`: its key and the values in the order written (JSON scalars: integer,
// floating point, boolean or string).
struct GridAxis {
  std::string key;
  std::vector<nlohmann::json> values;
  int line = 0;  // of the key in the grid file, 1-based
};

struct Grid {
  std::string path;                     // the grid file as given
  std::vector<std::string> workloads;   // as written
  std::vector<std::string> workload_paths;  // parallel: the bundled name, or the CSV's resolved path
  std::vector<std::string> policies;
  std::vector<std::uint64_t> seeds;
  std::vector<GridAxis> axes;           // sorted by key
  std::string config_path;              // resolved base config path, or empty
  std::string config_text;              // its content
  std::string fleet_path;               // resolved fleet file path, or empty (the bundled fleets)
  std::string fleet_name;               // its `name` (part of every cell's params)
};

// One cell: what it runs. `Params()` is the cell's identity; its id is a hash of it, so a cell
// keeps its id when the grid grows or is reordered.
struct Cell {
  std::string id;           // CellId(Params())
  std::size_t index = 0;    // position in ExpandGrid's order
  std::string workload;     // as written in the grid
  std::string workload_path;
  std::string policy;
  std::uint64_t seed = 0;
  nlohmann::json values = nlohmann::json::object();  // {key: value}
  std::string fleet;        // the fleet file's name; empty: the bundled fleets

  // {"policy", "seed", "values", "workload"} and "fleet" when a fleet file is given: no paths, so
  // the id does not depend on where the grid lives.
  nlohmann::json Params() const;
};

// 16 lower-case hex digits: FNV-1a (64 bit) of params.dump() (keys sorted, so canonical).
std::string CellId(const nlohmann::json& params);

// The `values` keys of the scenario itself (the rest are scheduler.* keys of seedance-config.yaml).
const std::vector<std::string>& ScenarioValueKeys();

// Reads and validates a grid file. Errors: kNotFound when it cannot be read; kInvalidArgument
// "FILE:LINE: key 'K': reason" for unknown keys, bad or duplicate values, unknown workloads or
// policies (a policy must exist in every cell's roster, e.g. seedance-predictive only where the
// autoscaler is reactive).
Result<Grid> LoadGrid(const std::string& path);
// The same from text; relative workload and config paths resolve against `base_dir`.
Result<Grid> ParseGrid(const std::string& name, const std::string& text, const std::string& base_dir);

// Every cell: for each workload, each combination of the axes (the last key varies fastest),
// each policy, each seed. Ids are unique (ParseGrid rejects duplicate values).
std::vector<Cell> ExpandGrid(const Grid& grid);

// Everything a cell's run needs, without the grid (DIR/plan.json holds one per cell, so Slurm
// tasks run from it): the cell, its scenario inputs with the values applied, and the
// seedance-config YAML with the scheduler.* values merged over the base config.
struct CellTask {
  Cell cell;
  double duration_s = 0;       // 0: the workload's default
  int on_demand_quota = 0;     // 0: the workload's default
  double spot_price_ratio = 0; // 0: the fleet's spot prices
  std::string fleet_path;      // the grid's fleet file, or empty
  std::string config_yaml;     // parsed by config::ParseSimConfig when the cell runs
};
Result<CellTask> TaskOf(const Grid& grid, const Cell& cell);

// The scenario of `task` (bundled data under `data_dir`). Errors: kInvalidArgument from the config.
Result<sim::ScenarioSpec> ScenarioOf(const CellTask& task, const std::string& data_dir);

}  // namespace seedance::sweep
