// Per-decision latency and whole-run time of every placement policy on the bundled openb default
// trace (1,213 nodes; ~10,600 placements at tune 1.3, seed 42).
//   build/ci/src/seedance/sched/placement_benchmark --benchmark_repetitions=3
// Counters: p50_us / p99_us / max_us of one Decide() call, decisions per run.
// BM_FindVictimsForFit*: one victim search (sched/victims.h) on a synthetic full cluster of 8-GPU
// nodes; time per call is the benchmark's own (take the median of --benchmark_repetitions).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <string>
#include <vector>

#include "seedance/cluster/trace_loader.h"
#include "seedance/sched/packing_experiment.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/sched/victims.h"

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

// A full cluster of `nodes` 8-GPU nodes, seeded. Plain: each node holds one pod that may not be
// preempted (2 or 3 GPUs) and 1- or 2-GPU candidates on the rest (~4 per node). Crowded: each node
// holds 12 candidates, four 1-GPU pods and eight 500-milli share pods two to a GPU (the largest
// node the exact search takes).
struct VictimCase {
  cluster::ClusterState state{{}};
  std::vector<PreemptionCandidate> candidates;
};

VictimCase MakeVictimCase(int nodes, bool crowded) {
  Rng rng(7);
  std::vector<cluster::NodeSpec> specs;
  for (int i = 0; i < nodes; ++i) {
    specs.push_back({"n" + std::to_string(i), Millicores(96000), MiB(786432), 8,
                     *cluster::ParseGpuModel("V100M32")});
  }
  VictimCase c{cluster::ClusterState(specs), {}};
  std::int64_t next_id = 0;
  const auto bind = [&](int node, int gpus, std::int32_t milli, int first_gpu, bool candidate) {
    cluster::PodSpec pod;
    pod.cpu = Millicores(4000);
    pod.memory = MiB(16384);
    pod.num_gpu = gpus;
    pod.gpu_milli = milli;
    cluster::GpuAssignment g;
    for (int k = 0; k < gpus; ++k) g.gpus[g.count++] = static_cast<std::uint8_t>(first_gpu + k);
    const cluster::NodeId id(static_cast<std::uint32_t>(node));
    c.state.Bind(pod, id, g);
    if (candidate) {
      const double cost = static_cast<double>(rng.UniformInt(0, 3600));  // GPU-seconds lost
      c.candidates.push_back({next_id++, id, pod, g, cost});
    }
  };
  for (int n = 0; n < nodes; ++n) {
    if (crowded) {
      for (int gpu = 0; gpu < 4; ++gpu) bind(n, 1, cluster::kMilliPerGpu, gpu, true);
      for (int gpu = 4; gpu < 8; ++gpu) {
        bind(n, 1, 500, gpu, true);
        bind(n, 1, 500, gpu, true);
      }
      continue;
    }
    int gpu = static_cast<int>(rng.UniformInt(2, 3));
    bind(n, gpu, cluster::kMilliPerGpu, 0, false);
    while (gpu < 8) {
      const int size = gpu < 7 && rng.Bernoulli(0.5) ? 2 : 1;
      bind(n, size, cluster::kMilliPerGpu, gpu, true);
      gpu += size;
    }
  }
  return c;
}

// True if the quota-only baseline, taking candidates cheapest first, frees a node for `pod`.
bool QuotaOnlyFreesFit(const VictimCase& c, const cluster::PodSpec& pod) {
  std::vector<PreemptionCandidate> by_cost = c.candidates;
  std::sort(by_cost.begin(), by_cost.end(), [](const auto& a, const auto& b) {
    return a.cost != b.cost ? a.cost < b.cost : a.id < b.id;
  });
  const std::vector<std::int64_t> ids = QuotaOnlyVictims(pod, by_cost);
  cluster::ClusterState after = c.state;
  for (const PreemptionCandidate& v : by_cost) {
    if (std::find(ids.begin(), ids.end(), v.id) != ids.end()) after.Unbind(v.pod, v.node, v.gpus);
  }
  for (std::uint32_t n = 0; n < after.size(); ++n) {
    if (after.CanPlace(cluster::NodeId(n), pod)) return true;
  }
  return false;
}

// A 4-GPU preemptor (plain) or a 6-GPU one (crowded) on a cluster where nothing fits.
void BM_FindVictimsForFit(benchmark::State& state, bool crowded) {
  const VictimCase c = MakeVictimCase(static_cast<int>(state.range(0)), crowded);
  cluster::PodSpec pod;
  pod.cpu = Millicores(8000);
  pod.memory = MiB(65536);
  pod.num_gpu = crowded ? 6 : 4;
  pod.gpu_milli = cluster::kMilliPerGpu;
  pod.qos = cluster::Qos::kGuaranteed;
  std::size_t victims = 0;
  for (auto _ : state) {
    auto set = FindVictimsForFit(c.state, pod, c.candidates);
    benchmark::DoNotOptimize(set);
    victims = set ? set->victims.size() : 0;
  }
  state.counters["candidates"] = static_cast<double>(c.candidates.size());
  state.counters["victims"] = static_cast<double>(victims);
  state.counters["quota_only_frees_fit"] = QuotaOnlyFreesFit(c, pod) ? 1 : 0;
}

void RegisterAll() {
  benchmark::RegisterBenchmark("BM_FindVictimsForFit", BM_FindVictimsForFit, false)
      ->Arg(100)
      ->Arg(1000)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_FindVictimsForFit_Crowded", BM_FindVictimsForFit, true)
      ->Arg(100)
      ->Unit(benchmark::kMicrosecond);
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
