// seedance bench packing: the FGD (ATC'23) packing experiment for every placement policy.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "seedance/report/packing_bench.h"
#include "seedance/cluster/trace_loader.h"
#include "seedance/core/file_util.h"
#include "seedance/sched/packing_experiment.h"
#include "seedance/sched/placement_policy.h"

namespace seedance::cli {
namespace {

struct BenchPackingOptions {
  std::string nodes;
  std::string pods;
  std::string policies = "all";
  std::string seeds = "42-51";
  double tune = 1.3;
  std::string out = "seedance-packing";
  int threads = 0;
};

using namespace seedance::report;  // NOLINT

int RunBenchPacking(const BenchPackingOptions& o) {
  PackingBenchInput in;
  in.nodes_path = o.nodes.empty() ? BundledData("openb/openb_node_list_gpu_node.csv") : o.nodes;
  in.pods_path = o.pods.empty() ? BundledData("openb/openb_pod_list_default.csv") : o.pods;
  in.tune = o.tune;
  in.threads = o.threads;
  auto seeds = ParseSeedList(o.seeds, "--seeds");
  if (!seeds.has_value()) return ReportError(seeds.error());
  in.seeds = *seeds;
  auto policies = ParsePolicyList(o.policies);
  if (!policies.has_value()) return ReportError(policies.error());
  in.policies = *policies;
  if (!(o.tune > 0 && o.tune <= 10)) {
    return ReportError(InvalidArgumentError("--tune must be in (0, 10], got " +
                                            fmt::format("{}", o.tune)));
  }
  auto result = RunPackingBench(in, /*progress=*/true);
  if (!result.has_value()) return ReportError(result.error());
  std::cout << FormatPackingTable(*result);
  Status s = WritePackingOutputs(*result, o.out);
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << o.out << "/summary.json and " << o.out << "/curves/*.csv\n";
  return kExitOk;
}

}  // namespace

Action RegisterBenchPacking(CLI::App& bench) {
  auto opts = std::make_shared<BenchPackingOptions>();
  CLI::App* cmd = AddCommand(
      bench, "packing", "Reproduce FGD's (ATC'23) GPU packing experiment on the openb trace",
      "Shuffle by seed, inflate to --tune x GPU capacity, place pods one by one, and compare the "
      "unallocated GPU % when the arrived workload is 100% of GPU capacity.",
      "seedance bench packing --seeds 42-51 --policies fgd,seedance");
  cmd->add_option("--nodes", opts->nodes, "node list CSV (default: bundled openb GPU nodes)");
  cmd->add_option("--pods", opts->pods, "pod list CSV (default: bundled openb default trace)");
  cmd->add_option("--policies", opts->policies,
                  "all, or a comma list of: random,dotprod,clustering,packing,bestfit,fgd,"
                  "seedance,firstfit")
      ->capture_default_str();
  cmd->add_option("--seeds", opts->seeds, "seeds: 42-51, 42,45 or 42")->capture_default_str();
  cmd->add_option("--tune", opts->tune, "inflate the workload to this multiple of GPU capacity")
      ->capture_default_str();
  cmd->add_option("--out", opts->out, "output directory")->capture_default_str();
  cmd->add_option("--threads", opts->threads, "worker threads (default: all cores)");
  return [cmd, opts]() { return cmd->parsed() ? RunBenchPacking(*opts) : -1; };
}

}  // namespace seedance::cli
