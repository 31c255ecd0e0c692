// Ledger speed: SQLite charge inserts, and the in-memory attribution engine at fleet scale.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "seedance/core/rng.h"
#include "seedance/ledger/ledger.h"
#include "seedance/ledger/step_allocator.h"

namespace seedance::ledger {
namespace {

// Charges per second into a fresh SQLite ledger (WAL, synchronous=FULL, committed every 50,000
// rows and at the end). Each node interval carries 8 charges.
void BM_LedgerInsertCharges(benchmark::State& state) {
  std::string dir = std::filesystem::temp_directory_path().string() + "/seedance_bench_" +
                    std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::int64_t charges = 0;
  int run = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::string path = dir + "/insert" + std::to_string(run++) + ".db";
    auto l = Ledger::Open(path);
    std::vector<WorkloadDims> workloads(64);
    for (std::size_t i = 0; i < workloads.size(); ++i) {
      workloads[i].name = "pod-" + std::to_string(i);
      workloads[i].namespace_name = "ns-" + std::to_string(i % 8);
      workloads[i].tenant = "tenant-" + std::to_string(i % 4);
    }
    std::vector<ChargeRecord> cs(8);
    state.ResumeTiming();
    for (int t = 0; t < 2500; ++t) {
      for (int node = 0; node < 10; ++node) {
        NodeBill bill{t * 60'000LL, (t + 1) * 60'000LL, "node-" + std::to_string(node),
                      MicroUsd(8 * 1000)};
        for (std::size_t k = 0; k < cs.size(); ++k) {
          cs[k] = {bill.start_ms, bill.end_ms, bill.node, ChargeKind::kWorkload,
                   workloads[(static_cast<std::size_t>(node) * 8 + k) % 64], MicroUsd(1000), 60'000};
        }
        (void)(*l)->RecordNodeInterval(bill, cs);
        charges += static_cast<std::int64_t>(cs.size());
      }
    }
    (void)(*l)->Flush();
    state.PauseTiming();
    l->reset();
    for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(path + s);
    state.ResumeTiming();
  }
  state.SetItemsProcessed(charges);
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_LedgerInsertCharges)->Unit(benchmark::kMillisecond)->Iterations(3);

// Attribution of `days` x 1,000 GPUs (125 nodes of 8) at 1-minute resolution: every GPU-minute
// goes through StepAllocator (group, price, split with largest remainder) and the charges are
// summed by tenant. Items = GPU-minutes.
void BM_AttributeFleet(benchmark::State& state) {
  const std::int64_t days = state.range(0);
  const int kNodes = 125, kGpusPerNode = 8;
  const std::int64_t minutes = days * 24 * 60;
  std::vector<std::int64_t> tenant_of(1 + 400);
  for (std::size_t w = 1; w < tenant_of.size(); ++w) tenant_of[w] = static_cast<std::int64_t>(w % 16);
  std::int64_t gpu_minutes = 0;
  for (auto _ : state) {
    Rng rng(1);
    StepAllocator alloc(60'000, IdleShare::kByUsage, 20'000, {});
    std::vector<std::int64_t> by_tenant(16, 0);
    std::int64_t idle = 0, overhead = 0;
    // Holders change every hour; usage jitters every minute.
    std::vector<GpuStep> steps(static_cast<std::size_t>(kNodes * kGpusPerNode));
    for (std::int64_t m = 0; m < minutes; ++m) {
      for (std::size_t g = 0; g < steps.size(); ++g) {
        GpuStep& s = steps[g];
        if (m % 60 == 0) {
          s.node = static_cast<std::uint32_t>(g / kGpusPerNode);
          s.workload = rng.Bernoulli(0.2) ? kNoWorkload : static_cast<std::uint32_t>(1 + rng.Uniform(400));
          s.request_milli = s.workload == kNoWorkload ? 0 : 1000;
          s.price_micro_per_hour = 2'990'000;
        }
        s.start_ms = m * 60'000;
        s.usage_milli = s.workload == kNoWorkload ? 0 : static_cast<std::int64_t>(rng.Uniform(1001));
      }
      alloc.Run(steps, [&](const NodeInterval&, std::span<const Charge> cs) {
        for (const Charge& c : cs) {
          if (c.workload != kNoWorkload) {
            by_tenant[static_cast<std::size_t>(tenant_of[c.workload])] += c.cost.raw();
          } else if (c.kind == ChargeKind::kIdle) {
            idle += c.cost.raw();
          } else {
            overhead += c.cost.raw();
          }
        }
      });
      gpu_minutes += static_cast<std::int64_t>(steps.size());
    }
    benchmark::DoNotOptimize(by_tenant.data());
    benchmark::DoNotOptimize(idle + overhead);
  }
  state.SetItemsProcessed(gpu_minutes);
}
BENCHMARK(BM_AttributeFleet)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace seedance::ledger

// The 30-day case (43.2 million GPU-minutes, a few seconds) runs only with
// SEEDANCE_BENCH_LARGE=1, so that the ctest smoke pass stays short.
int main(int argc, char** argv) {
  if (const char* large = std::getenv("SEEDANCE_BENCH_LARGE"); large != nullptr && large[0] == '1') {
    benchmark::RegisterBenchmark("BM_AttributeFleet", seedance::ledger::BM_AttributeFleet)
        ->Arg(30)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(1);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
