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
#include "seedance/report/packing_split.h"
#include "seedance/cluster/trace_loader.h"
#include "seedance/core/file_util.h"
#include "seedance/sched/packing_experiment.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/sched/trace_replay.h"

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
  std::string split;  // empty: one trace (--pods) on --seeds
  bool tuning_grid = false;
  std::string replay;  // non-empty: trace-time replay, event CSV written here
};

using namespace seedance::report;  // NOLINT

// Prints the table of `result` (or its error), writes its files under `out`, and says where.
template <class T, class Format, class Write>
int PrintAndWrite(const Result<T>& result, Format format, Write write, const std::string& out,
                  const std::string& files) {
  if (!result.has_value()) return ReportError(result.error());
  std::cout << format(*result);
  Status s = write(*result, out);
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << out << "/summary.json and " << out << "/" << files << "\n";
  return kExitOk;
}

int RunTuningGrid(const BenchPackingOptions& o) {
  PackingGridInput in;
  in.reserve_factors = {0.40, 0.50, 0.55, 0.60, 0.70, 0.80, 0.90, 1.00};
  in.temperatures_gpu = {0.8, 1.0, 1.2, 1.4, 1.6};
  in.openb_dir = BundledData("openb");
  in.threads = o.threads;
  auto grid = RunPackingTuningGrid(in, /*progress=*/true);
  if (!grid.has_value()) return ReportError(grid.error());
  std::cout << FormatPackingGrid(*grid);
  return kExitOk;
}

int RunSplit(const BenchPackingOptions& o, const std::vector<std::string>& policies) {
  PackingSplitBenchInput in;
  if (o.split == "tuning" || o.split == "all") in.parts.push_back(sched::PackingSplitPart::kTuning);
  if (o.split == "held-out" || o.split == "all") {
    in.parts.push_back(sched::PackingSplitPart::kHeldOut);
  }
  if (in.parts.empty()) {
    return ReportError(InvalidArgumentError("--split must be tuning, held-out or all, got '" +
                                            o.split + "'"));
  }
  in.policies = policies;
  in.openb_dir = BundledData("openb");
  in.threads = o.threads;
  return PrintAndWrite(RunPackingSplitBench(in, /*progress=*/true), FormatPackingSplitTable,
                       WritePackingSplitOutputs, o.out, "<variant>-<split>/");
}

// --replay: the trace played on its own clock (sched::ReplayTrace) with one policy and one seed;
// writes `event,pod,node` rows in play order (create: the node, "" = unschedulable; delete: the
// node freed), the order and placements tests/k8s `controlplane parity` checks a real control
// plane against.
int RunReplay(const BenchPackingOptions& o) {
  auto policies = ParsePolicyList(o.policies);
  if (!policies.has_value()) return ReportError(policies.error());
  if (policies->size() != 1) {
    return ReportError(InvalidArgumentError("--policies: with --replay name one policy (e.g. seedance), got '" +
                                            o.policies + "'"));
  }
  auto seeds = ParseSeedList(o.seeds, "--seeds");
  if (!seeds.has_value()) return ReportError(seeds.error());
  if (seeds->size() != 1) {
    return ReportError(InvalidArgumentError("--seeds: with --replay give one seed (the server's server.seed), got '" +
                                            o.seeds + "'"));
  }
  const std::string nodes_path = o.nodes.empty() ? BundledData("openb/openb_node_list_gpu_node.csv") : o.nodes;
  const std::string pods_path = o.pods.empty() ? BundledData("openb/openb_pod_list_default.csv") : o.pods;
  auto nodes = cluster::LoadNodes(nodes_path);
  if (!nodes.has_value()) return ReportError(nodes.error());
  auto pods = cluster::LoadPods(pods_path);
  if (!pods.has_value()) return ReportError(pods.error());
  auto events = sched::ReplayTrace(*nodes, *pods, {policies->front(), seeds->front()});
  if (!events.has_value()) return ReportError(events.error());
  std::string csv = "event,pod,node\n";
  std::int64_t placed = 0;
  std::int64_t unschedulable = 0;
  std::int64_t deleted = 0;
  for (const auto& e : *events) {
    const bool create = e.kind == sched::TraceReplayEvent::Kind::kCreate;
    csv += fmt::format("{},{},{}\n", create ? "create" : "delete", (*pods)[e.pod].name, e.node);
    if (!create) {
      ++deleted;
    } else if (e.node.empty()) {
      ++unschedulable;
    } else {
      ++placed;
    }
  }
  Status s = WriteFileAtomically(o.replay, csv);
  if (!s.ok()) return ReportError(s);
  fmt::print("replay: {} on {} nodes, policy {} seed {}: {} pods, {} placed, {} unschedulable, {} deleted; wrote {}\n",
             pods_path, nodes->size(), policies->front(), seeds->front(), pods->size(), placed, unschedulable,
             deleted, o.replay);
  return kExitOk;
}

int RunBenchPacking(const BenchPackingOptions& o) {
  if (o.tuning_grid) return RunTuningGrid(o);
  if (!o.replay.empty()) return RunReplay(o);
  if (!o.split.empty()) {
    auto policies = ParsePolicyList(o.policies);
    if (!policies.has_value()) return ReportError(policies.error());
    return RunSplit(o, *policies);
  }
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
  return PrintAndWrite(RunPackingBench(in, /*progress=*/true), FormatPackingTable,
                       WritePackingOutputs, o.out, "curves/*.csv");
}

}  // namespace

Action RegisterBenchPacking(CLI::App& bench) {
  auto opts = std::make_shared<BenchPackingOptions>();
  CLI::App* cmd = AddCommand(
      bench, "packing", "Reproduce FGD's (ATC'23) GPU packing experiment on the openb trace",
      "Shuffle by seed, inflate to --tune x GPU capacity, place pods one by one, and compare the "
      "unallocated GPU % when the arrived workload is 100% of GPU capacity. Each row says whether "
      "its seeds are in-sample (tuning: Seedance's constants were chosen on them) or held out; "
      "--split runs the split over all bundled variants.",
      "seedance bench packing --seeds 42-51 --policies fgd,seedance");
  CLI::Option* nodes =
      cmd->add_option("--nodes", opts->nodes, "node list CSV (default: bundled openb GPU nodes)");
  CLI::Option* pods =
      cmd->add_option("--pods", opts->pods, "pod list CSV (default: bundled openb default trace)");
  cmd->add_option("--policies", opts->policies,
                  "all, or a comma list of: random,dotprod,clustering,packing,bestfit,fgd,"
                  "seedance,firstfit")
      ->capture_default_str();
  CLI::Option* seeds =
      cmd->add_option("--seeds", opts->seeds, "seeds: 42-51, 42,45 or 42")->capture_default_str();
  CLI::Option* tune =
      cmd->add_option("--tune", opts->tune, "inflate the workload to this multiple of GPU capacity")
          ->capture_default_str();
  CLI::Option* split =
      cmd->add_option("--split", opts->split,
                      "run every bundled openb variant on the seeds of one part of the split "
                      "Seedance's packer was tuned on: tuning (in-sample), held-out, or all; "
                      "one row per variant and part")
          ->excludes(nodes)
          ->excludes(pods)
          ->excludes(seeds)
          ->excludes(tune);
  cmd->add_flag("--tuning-grid", opts->tuning_grid,
                "re-run the reserve factor x temperature grid of the Seedance packer on the "
                "tuning part of the split only, and print the grid and its best point")
      ->excludes(split)
      ->excludes(nodes)
      ->excludes(pods)
      ->excludes(seeds)
      ->excludes(tune);
  cmd->add_option("--replay", opts->replay,
                  "instead of the FGD protocol, play the pod list on its own clock (creation_time, "
                  "deletion_time) with one --policies policy and one --seeds seed, on the policy "
                  "context `seedance server` builds (ties by node name), and write event,pod,node "
                  "rows in play order to this CSV (docs/KUBERNETES.md, parity)")
      ->excludes(split)
      ->excludes(tune);
  cmd->add_option("--out", opts->out, "output directory")->capture_default_str();
  cmd->add_option("--threads", opts->threads, "worker threads (default: all cores)");
  return [cmd, opts]() { return cmd->parsed() ? RunBenchPacking(*opts) : -1; };
}

}  // namespace seedance::cli
