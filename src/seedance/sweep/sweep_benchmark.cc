// Sweep speed (issue 15): one cell of the example grid (llm-finetune, one day, each policy), the
// whole 60-cell example grid on the local thread pool, and the merge of its cells.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "seedance/core/clock.h"
#include "seedance/sweep/cell.h"
#include "seedance/sweep/grid.h"
#include "seedance/sweep/sweep.h"

namespace seedance::sweep {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;
const std::string kExample = std::string(SEEDANCE_TEST_DATA_DIR) + "/../examples/sweep-grid.yaml";

Plan ExamplePlan() {
  auto g = LoadGrid(kExample);
  if (!g.has_value()) std::abort();
  auto p = MakePlan(*g, kData, "bench");
  if (!p.has_value()) std::abort();
  return *p;
}

// One cell: arg 0 = fifo, 1 = skypilot, 2 = seedance (llm-finetune, 1 day, seed 5, spot 0.3).
void BM_RunCell(benchmark::State& state) {
  const Plan plan = ExamplePlan();
  const CellTask& task = plan.tasks[static_cast<std::size_t>(state.range(0)) * 2];
  state.SetLabel(task.cell.workload + " " + task.cell.policy);
  for (auto _ : state) {
    auto r = RunCell(task, kData);
    if (!r.has_value()) state.SkipWithError(r.error().message().c_str());
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_RunCell)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

std::string Scratch(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + std::to_string(::getpid()))).string();
}

// The 60-cell example grid, every cell run and written (arg: threads), then merged.
void BM_LocalGrid(benchmark::State& state) {
  const Plan plan = ExamplePlan();
  const std::string dir = Scratch("seedance_sweep_bench_");
  SteadyClock clock;
  for (auto _ : state) {
    std::filesystem::remove_all(dir);
    if (!WritePlan(plan, dir).ok()) state.SkipWithError("cannot write the plan");
    auto errors = RunLocal(plan, MissingCells(plan, dir), dir, static_cast<int>(state.range(0)), RunInfo{}, clock,
                           nullptr);
    if (!errors.empty()) state.SkipWithError(errors.front().c_str());
    auto merged = MergeResults(plan, dir);
    if (!merged.has_value()) state.SkipWithError(merged.error().message().c_str());
  }
  std::filesystem::remove_all(dir);
  state.counters["cells"] = static_cast<double>(plan.tasks.size());
}
BENCHMARK(BM_LocalGrid)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Merging 60 finished cells (reading and checking every cell file, summary, sort).
void BM_Merge(benchmark::State& state) {
  const Plan plan = ExamplePlan();
  const std::string dir = Scratch("seedance_sweep_merge_");
  std::filesystem::remove_all(dir);
  SteadyClock clock;
  if (!WritePlan(plan, dir).ok() || !RunLocal(plan, MissingCells(plan, dir), dir, 2, RunInfo{}, clock, nullptr).empty()) {
    state.SkipWithError("cannot run the grid");
  }
  for (auto _ : state) {
    auto merged = MergeResults(plan, dir);
    benchmark::DoNotOptimize(merged);
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Merge)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace seedance::sweep

BENCHMARK_MAIN();
