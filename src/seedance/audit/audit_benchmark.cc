// Auditing a fleet: 10,000 GPUs x 72 h of 1-minute samples (4,320 per GPU, 12 fields), the
// issue's speed target (<= 10 s). Generating 43 M samples takes longer than auditing them, so
// 512 distinct GPU series are generated and copied round-robin into the fleet: every GPU owns
// its own arrays (~2.4 GB in all at 10,000 GPUs), the audit reads them all from memory.
#include <benchmark/benchmark.h>

#include "seedance/audit/audit.h"
#include "seedance/audit/synthetic.h"

namespace seedance::audit {
namespace {

constexpr std::int64_t kNow = 1'790'000'000;

std::vector<NodeTelemetry> MakeFleet(int gpus_total) {
  Rng rng(11);
  constexpr int kPool = 512, kGpusPerNode = 8;
  std::vector<GpuSeries> pool;
  for (int i = 0; i < kPool / kGpusPerNode; ++i) {
    SyntheticNode n;
    n.host = "pool-" + std::to_string(i);
    NodeTelemetry t = GenerateNodeTelemetry(n, kNow - 72 * 3600, kNow, 60, rng);
    for (auto& g : t.gpus) pool.push_back(std::move(g));
  }
  std::vector<NodeTelemetry> fleet;
  for (int k = 0; k < gpus_total; k += kGpusPerNode) {
    NodeTelemetry t;
    t.host = "node-" + std::to_string(k / kGpusPerNode);
    for (int j = 0; j < kGpusPerNode && k + j < gpus_total; ++j) {
      t.gpus.push_back(pool[static_cast<std::size_t>(k + j) % pool.size()]);
      t.gpus.back().uuid = "GPU-" + std::to_string(k + j);
    }
    fleet.push_back(std::move(t));
  }
  return fleet;
}

void BM_AuditFleet72h(benchmark::State& state) {
  const auto fleet = MakeFleet(static_cast<int>(state.range(0)));
  const AuditConfig config;
  for (auto _ : state) {
    auto a = AuditFleet(fleet, config, kNow);
    benchmark::DoNotOptimize(a);
  }
  state.counters["gpus"] = static_cast<double>(state.range(0));
  state.counters["samples"] = static_cast<double>(state.range(0)) * 4320;
}
BENCHMARK(BM_AuditFleet72h)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace seedance::audit

BENCHMARK_MAIN();
