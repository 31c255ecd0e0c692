#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/report/packing_bench.h"
#include "seedance/sched/seedance_packing.h"

namespace seedance::report {

// The packing experiment over the tuning / held-out split of sched::SeedancePackingSplit(): every
// bundled openb variant, each with the split's seeds of the asked part(s).

struct PackingSplitBenchInput {
  std::vector<sched::PackingSplitPart> parts;  // which parts to run (one or both)
  std::vector<std::string> policies;
  std::string openb_dir;  // holds openb_node_list_gpu_node.csv and the pod lists
  int threads = 0;        // 0: all cores
};

// One (variant, part) cell group: the bench of that variant on the part's seeds.
struct PackingSplitRow {
  std::string variant;  // e.g. "default"
  sched::PackingSplitPart part = sched::PackingSplitPart::kHeldOut;
  PackingBenchResult bench;
};

// Runs every (variant, part) of the split with its seeds; rows in the split's variant order,
// tuning before held-out within a variant; a variant with no seeds in a part has no row.
// Errors: the loaders' (a missing pod list names its file), an unknown policy's.
Result<std::vector<PackingSplitRow>> RunPackingSplitBench(const PackingSplitBenchInput& input,
                                                          bool progress);

// A table with one row per (variant, part): the part, its seeds, each policy's mean unallocated
// GPU % at 100% arrived, and, when fgd and seedance both ran, seedance − fgd and the seeds on
// which seedance is below fgd.
std::string FormatPackingSplitTable(const std::vector<PackingSplitRow>& rows);

// summary.json of a split run: {"split": {...}, "rows": [{variant, split, seeds, policies}]}.
std::string PackingSplitJson(const std::vector<PackingSplitRow>& rows);

// Writes DIR/summary.json (PackingSplitJson) and, per row, DIR/<variant>-<part>/ as
// WritePackingOutputs does.
Status WritePackingSplitOutputs(const std::vector<PackingSplitRow>& rows, const std::string& dir);

// Seeds (of `row`) on which policy `a` leaves strictly less unallocated than `b`, and how many
// seeds both ran.
struct PackingSeedWins {
  int wins = 0;
  int seeds = 0;
};
PackingSeedWins CountSeedWins(const PackingBenchResult& bench, const std::string& a,
                              const std::string& b);

// The grid search that chose SeedancePackingOptions: every (reserve_factor, temperature) on the
// tuning part of the split only, scored by the mean unallocated GPU % over all tuning cells.
struct PackingGridInput {
  std::vector<double> reserve_factors;
  std::vector<double> temperatures_gpu;  // in GPUs (1.2 = 1,200 milli-GPU)
  std::string openb_dir;
  int threads = 0;
};

struct PackingGridPoint {
  sched::SeedancePackingOptions options;
  std::vector<double> per_variant;  // mean over tuning seeds, parallel to PackingGridResult::variants
  double mean = 0;                  // over all tuning cells
};

struct PackingGridResult {
  std::vector<std::string> variants;   // the tuning variants
  std::vector<std::uint64_t> seeds;    // the tuning seeds
  std::vector<double> fgd_per_variant; // FGD on the same cells, for reference
  double fgd_mean = 0;
  std::vector<PackingGridPoint> points;  // reserve-factor-major, in input order
  std::size_t best = 0;  // lowest mean; ties go to the earlier point
};

// Errors: kInvalidArgument for an empty grid or invalid options; the loaders'.
Result<PackingGridResult> RunPackingTuningGrid(const PackingGridInput& input, bool progress);

// The grid as a table (rows reserve factor, columns temperature, cells the tuning mean), the
// best point with its per-variant means beside FGD's, and the shipped constants.
std::string FormatPackingGrid(const PackingGridResult& r);

}  // namespace seedance::report
