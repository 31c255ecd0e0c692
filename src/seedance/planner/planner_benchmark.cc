// The allocation ILP's speed (issue 16, claim 4: 32 req/s with slice factor 8 in <= 1 s; CBC
// through PuLP did not finish in 10 min there). Mélange's Arena x early tables input.
#include <benchmark/benchmark.h>

#include <string>

#include "seedance/planner/melange.h"

namespace seedance::planner {
namespace {

void BM_SolveArena(benchmark::State& state) {
  auto c = LoadMelangeConfig(std::string(SEEDANCE_TEST_DATA_DIR) + "/melange/arena_early_tables_1rps.json");
  if (!c.has_value()) {
    state.SkipWithError(c.error().ToString().c_str());
    return;
  }
  c->total_request_rate = static_cast<double>(state.range(0));
  c->slice_factor = static_cast<int>(state.range(1));
  for (std::size_t g = 0; g < c->gpus.size(); ++g) {
    if (c->gpus[g] == "H100") c->cost[g] = 6.234;  // the protocol's 4.2 setting
  }
  const AllocationProblem p = ToProblem(*c);
  for (auto _ : state) {
    auto a = SolveAllocation(p);
    benchmark::DoNotOptimize(a);
  }
  auto a = SolveAllocation(p);
  if (!a.has_value()) {
    state.SkipWithError(a.error().ToString().c_str());
    return;
  }
  state.SetLabel("$" + std::to_string(a->usd_per_hour) + "/h");
}
BENCHMARK(BM_SolveArena)->Args({32, 8})->Args({16, 8})->Args({32, 1})->Args({32, 32})->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace seedance::planner

BENCHMARK_MAIN();
