#pragma once

// `seedance bench spot`: single jobs with a deadline on one spot market, the setting of "Can't Be
// Late" (Wu et al., NSDI'24), with the policies of sim/deadline/policies.h. Each (trace, job
// length, deadline, changeover delay) is sampled at seeded random start points; every policy runs
// the same start points. Costs are summed over the samples. Also: externally chosen windows
// (RunSpotWindows) and one job across several regions' spot pools (RunMultiRegionBench).

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/deadline/spot_job.h"

namespace seedance::sim {

struct SpotBenchOptions {
  std::vector<double> job_hours = {12, 24, 48};
  std::vector<double> job_fractions = {0.5, 0.7, 0.8, 0.9};  // C(0) / R(0)
  std::vector<double> changeover_hours = {0.02, 0.2};
  int samples = 8;          // start points per (zone, setting) on the 2023 series
  std::uint64_t seed = 1;
  int threads = 2;
  // The 2023 V100 bench: AWS p3.2xlarge on-demand and the spot price in the spot-traces
  // preemption files (constant $0.918 in us-west-2b), k = 3.33.
  double od_usd_per_hour = 3.06;
  double spot_usd_per_hour = 0.918;
  bool reproduce = true;    // the paper's settings (Table 3, Table 5)
  int reproduction_samples = 30;   // per (type, zone) pair (the paper: 300; the test runs 300)
  bool table3_whole_series = false;  // sample Table 3 over all 27 days, not the paper's first 1781 ticks
  int ml_samples = 40;             // Table 5 start points on the preemption trace
};

// One (trace, setting, policy), summed over the samples. Field names are spot.json's.
struct SpotBenchRow {
  std::string trace;
  std::string set;  // "2023-v100" (bench) or "paper-table3"
  double job_hours = 0;
  double deadline_hours = 0;
  double changeover_hours = 0;
  std::string policy;
  double cost_usd = 0;
  double on_demand_usd = 0;
  double savings_pct = 0;
  int deadline_misses = 0;
  int samples = 0;
  double od_compute_hours = 0;    // mean per job
  double spot_compute_hours = 0;  // mean per job
  int window = -1;                // `--windows`: 0-based data row of the windows file; -1 otherwise
};

// The paper's figures beside ours.
struct ReproductionRow {
  std::string table;   // "3" or "5-tight" / "5-loose"
  std::string policy;
  double od_hours = 0, od_hours_sd = 0, spot_hours = 0, spot_hours_sd = 0;
  double savings_pct = 0;
  double published_od_hours = -1, published_spot_hours = -1, published_savings_pct = -1;  // -1: none
  int samples = 0;
  int deadline_misses = 0;
};

struct SpotBenchReport {
  std::vector<SpotBenchRow> results;
  std::vector<ReproductionRow> reproduction;
};

// Reads data_dir/spot_traces/. Errors name the file or the option.
Result<SpotBenchReport> RunSpotDeadlineBench(const std::string& data_dir, const SpotBenchOptions& o);

// The paper's settings only (Table 3 on the 2-week 10/26/2022 series; Table 5's ML workload on the
// us-west-2b preemption series). Appends Table 3's per-pair rows to `results` when not null.
Result<std::vector<ReproductionRow>> ReproduceCantBeLate(const std::string& data_dir, const SpotBenchOptions& o,
                                                         std::vector<SpotBenchRow>* results);

// `bench spot --windows FILE`: externally chosen sample runs, one per CSV row, with the header
//   trace,start_tick,job_hours,deadline_hours,changeover_hours
// trace: a spot-traces JSON file (1 = available); a bare file name (no '/') is looked up in
// DATA_DIR/spot_traces/, any other relative path is relative to the CSV file's directory.
// start_tick: series tick at which the job starts (an integer >= 0; the window start_tick ..
// start_tick + ceil(deadline / gap) must lie inside the series). 0 < job_hours <= 1e5,
// 0 <= changeover_hours <= 1e5, job_hours + changeover_hours <= deadline_hours <= 1e5. Errors: "file:line:column: field 'name': ...".
struct SpotWindow {
  std::string trace_path;  // resolved
  std::string trace;       // as written in the CSV (the results' `trace`)
  std::int64_t start_tick = 0;
  double job_hours = 0, deadline_hours = 0, changeover_hours = 0;
};
Result<std::vector<SpotWindow>> LoadSpotWindows(const std::string& csv_path, const std::string& data_dir);
// The same for CSV text already read: `name` appears in errors and its folder resolves relative
// trace paths (the fuzz harness tests/fuzz/spot_windows_fuzz.cc).
Result<std::vector<SpotWindow>> ParseSpotWindows(const std::string& name, std::string text, const std::string& data_dir);

// Runs every policy of deadline::PolicyNames() (omniscient included) on each window, at the prices of
// `o` (k = od / spot). One row per (window, policy), `window` set, set = "windows", samples = 1.
Result<std::vector<SpotBenchRow>> RunSpotWindows(const std::string& csv_path, const std::string& data_dir,
                                                 const SpotBenchOptions& o);

// `bench spot --multi-region`: one job that may use the spot pool of any region of a set (the 2023
// p3.2xlarge series, one per zone), on-demand anywhere, moving between regions at the cost of a
// changeover (sim/deadline/multi_region.h). Defaults: the ADRS / Frontier-CS multi-region setting
// (24 h job, 36 h deadline, d = 0.2 h). Each set is sampled at seeded start points; sample j's home
// region (where single-region policies run and round robin starts) is region j mod R.
struct MultiRegionBenchOptions {
  std::vector<std::vector<std::string>> region_sets;  // zone names; empty: DefaultRegionSets()
  double job_hours = 24, deadline_hours = 36, changeover_hours = 0.2;
  int samples = 8;
  std::uint64_t seed = 1;
  int threads = 2;
  double od_usd_per_hour = 3.06;
  double spot_usd_per_hour = 0.918;
};
const std::vector<std::vector<std::string>>& DefaultRegionSets();

struct MultiRegionRow {
  std::string regions;  // zone names joined by '+'
  double job_hours = 0, deadline_hours = 0, changeover_hours = 0;
  std::string policy;
  double cost_usd = 0, on_demand_usd = 0, savings_pct = 0;
  int deadline_misses = 0;
  int samples = 0;
  double od_compute_hours = 0, spot_compute_hours = 0;  // mean per job
  double region_moves = 0;                              // mean per job
};
Result<std::vector<MultiRegionRow>> RunMultiRegionBench(const std::string& data_dir, const MultiRegionBenchOptions& o);

// One policy's outcome on each of `starts` (same order), for tests and the bench.
struct SampleOutcome {
  double cost_usd = 0;
  std::int64_t od_compute_s = 0;
  std::int64_t spot_compute_s = 0;
  bool met_deadline = false;
};
std::vector<SampleOutcome> RunPolicyOnStarts(const deadline::SpotTrace& trace, const std::vector<std::int64_t>& starts,
                                             const deadline::DeadlineJob& job, const std::string& policy,
                                             double spot_usd_per_hour, double od_usd_per_hour, int threads);

}  // namespace seedance::sim
