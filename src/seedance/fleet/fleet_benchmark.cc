// One week of the fleet week per stack (issue 30: the whole week must simulate in <= 60 s on 2
// cores). The scenario (jobs, notebooks, demand, serving profiles from the cache) is built once
// outside the timed loop; its build time is reported as a counter. SEEDANCE_BENCH_SMOKE (ctest's
// smoke pass): one day instead of seven.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <iostream>

#include "seedance/core/file_util.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"

namespace {

using seedance::fleet::FleetWeekScenario;

double g_build_s = 0;

const FleetWeekScenario& Scenario() {
  static const FleetWeekScenario s = [] {
    seedance::fleet::FleetWeekOptions o;
    o.data_dir = seedance::DataDir();
    // The capacity profile cache `seedance plan` and `cost-benchmark` use ($SEEDANCE_CACHE_DIR, else
    // ~/.cache/seedance/plan): a cold cache profiles the serving engines first (minutes).
    const char* cache = std::getenv("SEEDANCE_CACHE_DIR");
    const char* home = std::getenv("HOME");
    o.cache_dir = cache != nullptr && *cache != '\0' ? cache
                  : home != nullptr                 ? std::string(home) + "/.cache/seedance/plan"
                                                    : ".seedance-cache/plan";
    o.shape = "a";
    o.week = 1;
    o.seed = 5;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = seedance::fleet::BuildFleetWeek(o);
    g_build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.has_value()) {
      std::cerr << r.error().message() << "\n";
      std::exit(1);
    }
    FleetWeekScenario out = *r;
    if (std::getenv("SEEDANCE_BENCH_SMOKE") != nullptr) out.horizon_s = 86400;
    return out;
  }();
  return s;
}

void Run(benchmark::State& state, const seedance::fleet::StackConfig& stack) {
  const FleetWeekScenario& s = Scenario();
  double usd = 0;
  for (auto _ : state) {
    auto r = seedance::fleet::RunFleetWeek(s, stack);
    if (!r.has_value()) {
      state.SkipWithError(r.error().message().c_str());
      return;
    }
    // No benchmark::DoNotOptimize(usd): Debian's Google Benchmark 1.7 passes a non-const double
    // through an "+m,r" asm operand that GCC 12 miscompiles at -O2 (the counter read 7e-310); the
    // bill is used below, so the run cannot be optimized away.
    usd = r->total_usd;
  }
  state.counters["week_usd"] = usd;
  state.counters["jobs"] = static_cast<double>(s.jobs.size());
  state.counters["scenario_build_s"] = g_build_s;
}

void BM_FleetWeekStandard(benchmark::State& state) { Run(state, seedance::fleet::StandardStack("least-allocated")); }
void BM_FleetWeekSeedance(benchmark::State& state) { Run(state, seedance::fleet::SeedanceStack()); }

BENCHMARK(BM_FleetWeekStandard)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_FleetWeekSeedance)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
