// seedance cost-benchmark: the product's main command. Runs every packing policy on a workload
// and prices the GPUs each leaves unallocated; prints a table and writes results.json and
// cost_optimization_report.html.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "seedance/report/cost_benchmark.h"

namespace seedance::cli {
namespace {

struct CostBenchmarkOptions {
  std::string workload = "openb";
  std::string nodes;
  std::string pods;
  std::string prices;
  std::string seeds = "42-51";
  std::string out = "seedance-report";
  int threads = 0;
};

int RunCostBenchmarkCommand(const CostBenchmarkOptions& o) {
  report::CostBenchmarkInput in;
  in.workload = o.workload;
  in.nodes_path = o.nodes;
  in.pods_path = o.pods;
  in.prices_path = o.prices;
  in.threads = o.threads;
  auto seeds = ParseSeedList(o.seeds, "--seeds");
  if (!seeds.has_value()) return ReportError(seeds.error());
  in.seeds = *seeds;
  auto result = report::RunCostBenchmark(in, /*progress=*/true);
  if (!result.has_value()) return ReportError(result.error());
  std::cout << report::FormatCostTable(*result);
  Status s = report::WriteCostBenchmarkOutputs(*result, o.out);
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << o.out << "/cost_optimization_report.html and " << o.out
            << "/results.json\n";
  return kExitOk;
}

std::string WorkloadList() {
  std::string list;
  for (const auto& w : report::CostBenchmarkWorkloads()) list += (list.empty() ? "" : ", ") + w;
  return list;
}

}  // namespace

Action RegisterCostBenchmark(CLI::App& app) {
  auto opts = std::make_shared<CostBenchmarkOptions>();
  CLI::App* cmd = app.add_subcommand(
      "cost-benchmark",
      "Run every placement policy on a workload and price the GPUs each leaves unallocated: "
      "stranded GPU-hours and dollars per month, a table on stdout, and "
      "cost_optimization_report.html + results.json in --out.");
  cmd->footer(
      "The default is the bundled openb trace (openb_pod_list_default) on its GPU-node fleet "
      "(1,213 nodes, 6,212 GPUs), placed with the FGD (ATC'23) packing protocol. Prices come "
      "from data/prices/gpu_prices.csv (see data/prices/SOURCE.md; G2/G3 are undisclosed types "
      "priced by assumption). Bad input exits with code 2 and names file:line:column and field; "
      "nothing is written then.");
  cmd->add_option("--workload", opts->workload,
                  "workload to run (accepted: " + WorkloadList() + ")")
      ->capture_default_str();
  cmd->add_option("--nodes", opts->nodes,
                  "node list CSV: sn,cpu_milli,memory_mib,gpu,model (default: the workload's)");
  cmd->add_option("--pods", opts->pods,
                  "pod list CSV in the openb format (default: the workload's trace)");
  cmd->add_option("--prices", opts->prices,
                  "GPU price CSV: gpu_model,usd_per_gpu_hour_on_demand[,basis,source,note] "
                  "(default: the bundled data/prices/gpu_prices.csv)");
  cmd->add_option("--seeds", opts->seeds, "seeds: 42-51, 42,45 or 42")->capture_default_str();
  cmd->add_option("--out", opts->out, "output directory (created if missing)")
      ->capture_default_str();
  cmd->add_option("--threads", opts->threads, "worker threads (default: all cores)");
  return [cmd, opts]() { return cmd->parsed() ? RunCostBenchmarkCommand(*opts) : -1; };
}

}  // namespace seedance::cli
