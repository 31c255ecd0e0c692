// Per-decision latency and whole-run time of every placement policy on the bundled openb default
// trace (1,213 nodes; ~10,600 placements at tune 1.3, seed 42).
//   build/ci/src/seedance/sched/placement_benchmark --benchmark_repetitions=3
// Counters: p50_us / p99_us / max_us of one Decide() call, decisions per run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "seedance/cluster/trace_loader.h"
#include "seedance/sched/packing_experiment.h"
#include "seedance/sched/placement_policy.h"

namespace seedance::sched {
namespace {

struct Trace {
  std::vector<cluster::NodeSpec> nodes;
  PackingWorkload workload;
};

const Trace& DefaultTrace() {
  static const Trace* trace = [] {
    const std::string data = SEEDANCE_TEST_DATA_DIR;
    auto nodes = cluster::LoadNodes(data + "/openb/openb_node_list_gpu_node.csv");
    auto pods = cluster::LoadPods(data + "/openb/openb_pod_list_default.csv");
    auto* t = new Trace{*nodes, PrepareFgdWorkload(*nodes, *pods, 42, 1.3)};
    return t;
  }();
  return *trace;
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
  return v[i];
}

// One full FGD-protocol run per iteration; decision latencies are measured inside the run.
void BM_PackingRun(benchmark::State& state, const std::string& policy) {
  const Trace& t = DefaultTrace();
  PackingRunOptions options;
  options.record_decision_times = true;
  std::vector<double> all;
  for (auto _ : state) {
    auto r = RunPacking(t.nodes, t.workload, policy, 42, options);
    benchmark::DoNotOptimize(r);
    all.insert(all.end(), r->decision_seconds.begin(), r->decision_seconds.end());
    state.counters["decisions"] = static_cast<double>(r->decision_seconds.size());
  }
  state.counters["p50_us"] = Percentile(all, 0.50) * 1e6;
  state.counters["p99_us"] = Percentile(all, 0.99) * 1e6;
  state.counters["max_us"] = Percentile(all, 1.0) * 1e6;
}

void RegisterAll() {
  for (const std::string& p : PlacementPolicyNames()) {
    benchmark::RegisterBenchmark(("BM_PackingRun/" + p).c_str(), BM_PackingRun, p)
        ->Unit(benchmark::kMillisecond)
        ->MeasureProcessCPUTime()
        ->UseRealTime();
  }
}

}  // namespace
}  // namespace seedance::sched

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  seedance::sched::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
