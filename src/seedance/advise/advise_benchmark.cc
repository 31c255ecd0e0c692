// Advisor speed: the fleet rules over a ledger of 30 days x 1,000 GPUs (125 nodes of 8): hourly
// charge lines as attribution leaves them, the jobs' hourly evidence, then FleetInputsFromLedger
// (SQLite read and aggregation) and FleetFindings (rules and the 10,000-sample Monte Carlo).
// The telemetry -> charges attribution every ledger command runs first is measured by
// ledger_benchmark (BM_AttributeFleet).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "seedance/advise/fleet.h"
#include "seedance/core/rng.h"
#include "seedance/cost/price_table.h"

namespace seedance::advise {
namespace {

void BM_AdviseFleet(benchmark::State& state) {
  const std::int64_t days = state.range(0);
  const int kNodes = 125, kGpus = 8;
  const std::int64_t hours = days * 24;
  const std::int64_t kHour = 3'600'000, t0 = 1795910400000;
  const std::string dir = std::filesystem::temp_directory_path().string() + "/seedance_advise_bench_" +
                          std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/fleet.db";
  auto l = ledger::Ledger::Open(path);
  if (!l.has_value()) {
    state.SkipWithError("cannot open the ledger");
    return;
  }
  (*l)->set_source("telemetry");
  ledger::TelemetryAttribution t;
  Rng rng(7);
  const std::int64_t price = 2'990'000;  // H100 $/GPU-hour in micro-USD
  std::int64_t job_seq = 0;
  // Each node: four 2-GPU jobs, each replaced every 6 hours; one job in ten runs at low activity,
  // one in twenty of the GPU pairs is idle.
  std::vector<std::int64_t> job_of(static_cast<std::size_t>(kNodes * 4), -1);
  std::vector<double> act_of(job_of.size());
  std::vector<ledger::ChargeRecord> cs;
  for (std::int64_t h = 0; h < hours; ++h) {
    for (int n = 0; n < kNodes; ++n) {
      cs.clear();
      ledger::NodeBill bill{t0 + h * kHour, t0 + (h + 1) * kHour, "node-" + std::to_string(n),
                            MicroUsd(price * kGpus)};
      for (int k = 0; k < 4; ++k) {
        std::size_t slot = static_cast<std::size_t>(n * 4 + k);
        if (h % 6 == 0) {
          job_of[slot] = rng.Bernoulli(0.05) ? -1 : job_seq++;
          act_of[slot] = rng.Bernoulli(0.1) ? 0.1 * rng.UniformDouble() : 0.5 + 0.45 * rng.UniformDouble();
        }
        ledger::ChargeRecord c;
        c.start_ms = bill.start_ms;
        c.end_ms = bill.end_ms;
        c.node = bill.node;
        c.cost = MicroUsd(2 * price);
        c.gpu_ms = 2 * kHour;
        if (job_of[slot] < 0) {
          c.kind = ledger::ChargeKind::kIdle;
        } else {
          std::string job = "job-" + std::to_string(job_of[slot]);
          c.workload.name = job + "-0";
          c.workload.job = job;
          c.workload.namespace_name = "ns-" + std::to_string(job_of[slot] % 40);
          c.workload.tenant = "tenant-" + std::to_string(job_of[slot] % 10);
          ledger::JobEvidence& ev = t.evidence[{job, bill.start_ms}];
          ev.job = job;
          ev.hour_ms = bill.start_ms;
          ev.model = "NVIDIA H100 80GB HBM3";
          ev.gpus = 2;
          ev.gpu_hours = 2;
          ev.mean_utilization = act_of[slot];
          ev.peak_memory_mib = 20000 + 50000 * act_of[slot];
        }
        cs.push_back(c);
      }
      // Idle lines of one node interval merge into one (the ledger's key has no workload).
      std::vector<ledger::ChargeRecord> merged;
      for (const auto& c : cs) {
        if (c.kind == ledger::ChargeKind::kIdle && !merged.empty() && merged.back().kind == c.kind) {
          merged.back().cost += c.cost;
          merged.back().gpu_ms += c.gpu_ms;
        } else if (c.kind == ledger::ChargeKind::kIdle) {
          merged.insert(merged.begin(), c);
        } else {
          merged.push_back(c);
        }
      }
      if (!(*l)->RecordNodeInterval(bill, merged).ok()) {
        state.SkipWithError("record failed");
        return;
      }
    }
  }
  if (!(*l)->Flush().ok()) {
    state.SkipWithError("flush failed");
    return;
  }
  auto prices = cost::PriceTable::LoadFile(cost::BundledPriceTablePath());
  if (!prices.has_value()) {
    state.SkipWithError("no price table");
    return;
  }
  ledger::LedgerConfig config;
  std::size_t findings = 0;
  for (auto _ : state) {
    auto in = FleetInputsFromLedger(**l, t, config, t0, t0 + hours * kHour);
    auto f = FleetFindings(*in, *prices, config, FleetRules{});
    findings = f->size();
    benchmark::DoNotOptimize(f);
  }
  state.counters["findings"] = static_cast<double>(findings);
  state.counters["jobs"] = static_cast<double>(job_seq);
  state.counters["charge_hours"] = static_cast<double>(hours * kNodes);
  l->reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_AdviseFleet)->Arg(1)->Arg(30)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace seedance::advise

BENCHMARK_MAIN();
