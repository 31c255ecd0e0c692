#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/core/units.h"
#include "seedance/cost/fleet_cost.h"
#include "seedance/cost/price_table.h"
#include "seedance/report/packing_bench.h"

namespace seedance::report {

// `seedance cost-benchmark`: runs the packing policies on a workload and turns the GPUs they
// leave unallocated into money. Later issues add workloads and sections to the same command.

// Returns the values `--workload` accepts, in help order.
const std::vector<std::string>& CostBenchmarkWorkloads();

// What to run. Empty paths and lists take the workload's bundled defaults (see RunCostBenchmark).
struct CostBenchmarkInput {
  std::string workload = "openb";
  std::string nodes_path;             // default: DataDir()/openb/openb_node_list_gpu_node.csv
  std::string pods_path;              // default: DataDir()/openb/openb_pod_list_default.csv
  std::string prices_path;            // default: cost::BundledPriceTablePath()
  std::vector<std::string> policies;  // default: every sched::PlacementPolicyNames() policy
  std::vector<std::uint64_t> seeds = {42, 43, 44, 45, 46, 47, 48, 49, 50, 51};
  int threads = 0;  // 0: all cores
};

// One policy's stranded capacity and its price, measured at 100% arrived workload (the FGD
// protocol's metric point) and read as a steady state over a month.
struct PolicyCost {
  std::string policy;
  double mean_unallocated_pct = 0;  // mean over seeds, % of the fleet's GPU capacity
  double unallocated_gpus = 0;      // mean_unallocated_pct / 100 x fleet GPUs (milli-GPU sums)
  double stranded_gpu_hours_per_month = 0;  // unallocated_gpus x cost::kHoursPerMonth
  Money stranded_usd_per_month;             // cost::StrandedUsdPerMonth of the fleet
};

// Everything the outputs are rendered from.
// Invariants: costs is parallel to packing.summary (same policies, same order); best < size.
struct CostBenchmarkResult {
  CostBenchmarkInput input;  // with the defaults filled in
  PackingBenchResult packing;
  cost::PriceTable prices;
  cost::FleetCost fleet;
  std::vector<PolicyCost> costs;
  std::size_t best = 0;  // the least stranded cost; ties go to the smaller policy name
};

// Returns the monthly saving of `policy` over `baseline`: positive when `policy` strands less.
inline Money SavingPerMonth(const PolicyCost& policy, const PolicyCost& baseline) {
  return baseline.stranded_usd_per_month - policy.stranded_usd_per_month;
}

// Returns the named policy's cost, or nullptr when it was not run.
const PolicyCost* FindPolicyCost(const CostBenchmarkResult& r, std::string_view policy);

// The report's one-sentence result: how many fewer GPUs `subject` strands than `reference`
// and what that is worth per month (negative values: it strands more).
struct CostHeadline {
  std::string subject;    // a policy name, e.g. "seedance"
  std::string reference;  // e.g. "fgd"
  double fewer_gpus = 0;
  Money saving_per_month;
  // "Seedance strands 27.3 fewer GPUs than FGD = $48,961/month", or "... 3.1 more GPUs than
  // FGD = $5,563/month more".
  std::string text;
};

// Returns the headline: Seedance against FGD when both ran; otherwise the best policy against
// FGD, else against BestFit, else against the worst policy. std::nullopt with fewer than two
// policies.
std::optional<CostHeadline> MakeHeadline(const CostBenchmarkResult& r);

// Validates every input (workload name, policies, seeds, price table, trace, a price for each
// GPU model of the fleet) before running anything, then runs every (policy, seed) and prices
// the result. With `progress`, writes progress lines to stderr. Errors: kInvalidArgument or
// kNotFound naming the file, line and field of the bad input; kInvalidArgument for a trace
// without any GPU request or when a run never reaches 100% arrived workload.
Result<CostBenchmarkResult> RunCostBenchmark(const CostBenchmarkInput& input, bool progress);

// Returns the plain-text table for stdout: one line per policy with unallocated %, the
// published FGD-artifact value beside it, unallocated GPUs, stranded GPU-hours and dollars per
// month and the savings against BestFit and FGD; then the headline.
std::string FormatCostTable(const CostBenchmarkResult& r);

// Returns results.json:
//   generated_by   "seedance cost-benchmark" (no version, no date)
//   workload       name, trace, nodes_file, pods_file (file names only), trace_pods, protocol,
//                  tune, seeds
//   fleet          nodes, gpus, gpus_by_model {model: gpus}, price_table, prices [per model:
//                  gpus, nodes, usd_per_gpu_hour, usd_per_month, basis, source, note],
//                  price_assumptions [one line per proxy-priced model],
//                  share_of_cost_on_assumed_prices, usd_per_hour, usd_per_month,
//                  average_usd_per_gpu_hour, hours_per_month, stranded_cost_method
//   packing        [per policy: policy, mean_/sd_unallocated_gpu_pct_at_100,
//                  published_mean_/published_sd_unallocated_gpu_pct_at_100 (when published),
//                  unallocated_gpus, stranded_gpu_hours_per_month, stranded_usd_per_month,
//                  savings_per_month_vs {other policy: {gpus, usd_per_month}}, runs,
//                  wall_seconds]
//   best_policy    the policy with the least stranded cost
//   headline       MakeHeadline's text (with two or more policies)
// Dollar amounts are exact micro-dollar values written as USD numbers. Keys named wall_seconds
// hold measured times; every other byte is a function of the inputs and seeds.
std::string CostResultsJson(const CostBenchmarkResult& r);

// Returns cost_optimization_report.html: one self-contained page (inline CSS and SVG, no
// script, no external reference) with the headline, the cost table, the unallocated-GPU curves
// of every policy and the price assumptions. Deterministic: holds no timing.
std::string CostReportHtml(const CostBenchmarkResult& r);
// The same content as one <section> (under an <h2>) for a larger page, and the stylesheet the
// page needs for it.
std::string CostReportSection(const CostBenchmarkResult& r);
std::string CostReportCss();

// Renders both outputs, then writes DIR/results.json and DIR/cost_optimization_report.html
// (creating DIR), each atomically. Errors: kUnavailable when DIR or a file cannot be written.
Status WriteCostBenchmarkOutputs(const CostBenchmarkResult& r, const std::string& dir);

}  // namespace seedance::report
