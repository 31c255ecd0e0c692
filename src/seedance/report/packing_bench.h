#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seedance/cluster/cluster.h"
#include "seedance/core/status.h"
#include "seedance/sched/packing_experiment.h"
#include "seedance/sched/published_results.h"

namespace seedance::report {

// What `seedance bench packing` (and the packing section of cost-benchmark) runs.
struct PackingBenchInput {
  std::string nodes_path;
  std::string pods_path;
  std::vector<std::string> policies;
  std::vector<std::uint64_t> seeds;
  double tune = 1.3;
  int threads = 0;  // 0: all cores
};

struct PackingBenchResult {
  PackingBenchInput input;
  std::string workload;  // pods file stem, e.g. openb_pod_list_default
  std::vector<cluster::NodeSpec> nodes;
  std::int64_t total_gpus = 0;
  std::size_t trace_pods = 0;
  std::vector<sched::PackingRunResult> runs;
  std::vector<sched::PackingSummary> summary;
  // The artifact's published numbers for this workload, when it is one of the bundled variants.
  std::vector<std::optional<sched::PublishedPacking>> published;  // parallel to summary
};

// Parses "all" or a comma list of policy names. Errors: kInvalidArgument naming the bad name.
Result<std::vector<std::string>> ParsePolicyList(const std::string& text);

// Loads the inputs (all validation happens here, before anything is written) and runs every
// (policy, seed). With `progress`, prints one line per finished policy to stderr.
// Same as LoadPackingBenchData followed by the RunPackingBench overload below.
Result<PackingBenchResult> RunPackingBench(const PackingBenchInput& input, bool progress);

// The validated trace of one packing bench, for callers that check more inputs against the
// nodes (e.g. a price table) before anything runs.
struct PackingBenchData {
  std::vector<cluster::NodeSpec> nodes;
  std::vector<cluster::PodSpec> pods;
};

// Loads input.nodes_path and input.pods_path. Errors: the trace loaders' (file:line:column and
// field), kInvalidArgument when the node list has no GPUs.
Result<PackingBenchData> LoadPackingBenchData(const PackingBenchInput& input);

// Runs every (policy, seed) of `input` on `data`. REQUIRES: `data` came from
// LoadPackingBenchData(input). Errors: the first failing run's (e.g. an unknown policy).
Result<PackingBenchResult> RunPackingBench(const PackingBenchInput& input, PackingBenchData data,
                                           bool progress);

// A plain-text table of the summary, with the published values beside ours.
std::string FormatPackingTable(const PackingBenchResult& r);

// summary.json: {"summary": [...], "runs": [...], "config": {...}}. Timing keys are named
// wall_seconds; everything else is deterministic for given inputs and seeds.
std::string PackingSummaryJson(const PackingBenchResult& r);
// One run's curve: arrived_pct, allocated_pct, unallocated_pct, frag_pct.
std::string PackingCurveCsv(const sched::PackingRunResult& run);

// Writes DIR/summary.json and DIR/curves/<policy>-seed<N>.csv, each file atomically.
Status WritePackingOutputs(const PackingBenchResult& r, const std::string& dir);

}  // namespace seedance::report
