// Simulator speed (issue 3): 100,000 jobs on a 10,000-GPU fleet, per-job scheduling decision
// time, and the LP lower bounds (plain and at a service level) of the cost-benchmark workloads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "seedance/sim/gavel_protocol.h"
#include "seedance/sim/lower_bound.h"
#include "seedance/sim/policies/gavel_policies.h"
#include "seedance/sim/policies/seedance_cost_policy.h"
#include "seedance/sim/scenarios.h"
#include "seedance/sim/workloads.h"

namespace seedance::sim {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;

// Times every Schedule() call of the wrapped policy and reports decisions (jobs considered).
class TimedPolicy : public JobPolicy {
 public:
  explicit TimedPolicy(JobPolicy& inner) : inner_(inner) {}
  std::string_view name() const override { return inner_.name(); }
  std::vector<Assignment> Schedule(const SimView& view, Rng& rng) override {
    auto t0 = std::chrono::steady_clock::now();
    auto out = inner_.Schedule(view, rng);
    double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    if (!view.jobs.empty()) per_job_ns.push_back(ns / static_cast<double>(view.jobs.size()));
    active_sum += static_cast<std::int64_t>(view.jobs.size());
    return out;
  }
  void OnCompletion(const JobInfo& j, double steps, double now) override { inner_.OnCompletion(j, steps, now); }
  AutoscaleMode autoscale() const override { return inner_.autoscale(); }
  bool is_oracle() const override { return inner_.is_oracle(); }
  void ObserveOracle(const OracleView& o) override { inner_.ObserveOracle(o); }
  double CheckpointInterval(const JobView& j, const SimView& v) const override { return inner_.CheckpointInterval(j, v); }
  std::vector<double> per_job_ns;
  std::int64_t active_sum = 0;

 private:
  JobPolicy& inner_;
};

// ctest's smoke pass (SEEDANCE_BENCH_SMOKE=1, set by seedance_cc_benchmark) runs the same code at
// 1/100 of the scale: the full run takes ~100 s of CPU per argument and is for docs/BENCHMARKS.md.
bool Smoke() { return std::getenv("SEEDANCE_BENCH_SMOKE") != nullptr; }

void BM_Simulate100kJobs10kGpus(benchmark::State& state) {
  auto thr = GavelThroughputs::LoadFile(kData + "/gavel/gavel_isolated_throughputs.csv");
  // ~3,333 GPUs per type; arrivals at a rate that keeps the fleet busy (~600 jobs/h).
  const int scale = Smoke() ? 100 : 1;
  Workload w = GenerateGavel(*thr, 600.0 / scale, 100000 / scale, true, 1);
  FleetSpec fleet = GavelFleet(3334 / scale, 3333 / scale, 3333 / scale);
  for (auto _ : state) {
    config::CostAwareConfig c;
    c.autoscale = AutoscaleMode::kReactive;
    SeedanceCostPolicy inner(c, state.range(0) == 1);
    TimedPolicy pol(inner);
    SimOptions o;
    auto r = Simulate(w, fleet, pol, o);
    benchmark::DoNotOptimize(r);
    std::sort(pol.per_job_ns.begin(), pol.per_job_ns.end());
    state.counters["jobs"] = static_cast<double>(r->jobs.size());
    state.counters["rounds"] = static_cast<double>(r->rounds);
    state.counters["avg_active"] = static_cast<double>(pol.active_sum) / static_cast<double>(r->rounds);
    state.counters["decision_p50_us"] = pol.per_job_ns[pol.per_job_ns.size() / 2] / 1000.0;
    state.counters["decision_p99_us"] = pol.per_job_ns[pol.per_job_ns.size() * 99 / 100] / 1000.0;
  }
}
BENCHMARK(BM_Simulate100kJobs10kGpus)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->Iterations(1);

void BM_LowerBoundDefaultWorkload(benchmark::State& state) {
  ScenarioSpec spec;
  spec.data_dir = kData;
  Workload w;
  FleetSpec f;
  std::vector<std::string> notes;
  (void)BuildScenario(spec, &w, &f, &notes);
  for (auto _ : state) {
    auto lb = CostLowerBound(w, f);
    benchmark::DoNotOptimize(lb);
    state.counters["columns"] = lb->columns;
  }
}
BENCHMARK(BM_LowerBoundDefaultWorkload)->Unit(benchmark::kMillisecond);

// The scenario's two bounds on each bundled workload and on a 1,000-job user CSV (Gavel's
// generator, multi-GPU mix, written with JobsToCsv and read back): the plain bound over Gavel-LAS's
// makespan and the bound at Gavel-LAS's average JCT on the same horizon, as cost-benchmark solves
// them (Gavel-LAS runs once, untimed).
struct BoundCase {
  Workload w;
  FleetSpec f;
  LowerBoundOptions plain, service;
};

const BoundCase& Case(const std::string& workload) {
  static std::map<std::string, BoundCase> cases;
  auto it = cases.find(workload);
  if (it != cases.end()) return it->second;
  ScenarioSpec spec;
  spec.data_dir = kData;
  spec.workload = workload;
  if (workload == "user-csv-1000") {
    auto thr = GavelThroughputs::LoadFile(kData + "/gavel/gavel_isolated_throughputs.csv");
    const std::string path = (std::filesystem::temp_directory_path() / "seedance_bench_jobs1000.csv").string();
    std::ofstream(path) << JobsToCsv(GenerateGavel(*thr, 6.0, 1000, true, 3));
    spec.workload = path;
  }
  BoundCase c;
  std::vector<std::string> notes;
  (void)BuildScenario(spec, &c.w, &c.f, &notes);
  GavelLasPolicy las(false);
  las.exclude_spot = true;
  SimOptions opt;
  opt.round_s = 360;
  auto r = Simulate(c.w, c.f, las, opt);
  c.plain.horizon_s = std::max(r->makespan_s, c.w.jobs.back().arrival_s + c.plain.bucket_s);
  c.service = c.plain;
  c.service.max_avg_jct_s = r->AvgJctHours() * 3600.0;
  return cases.emplace(workload, std::move(c)).first->second;
}

void BM_LowerBound(benchmark::State& state, const std::string& workload, bool service) {
  const BoundCase& c = Case(workload);
  for (auto _ : state) {
    auto lb = CostLowerBound(c.w, c.f, service ? c.service : c.plain);
    benchmark::DoNotOptimize(lb);
    state.counters["usd"] = lb->usd;
    state.counters["columns"] = lb->columns;
    state.counters["jobs"] = static_cast<double>(c.w.jobs.size());
  }
}
BENCHMARK_CAPTURE(BM_LowerBound, llm_finetune_plain, std::string("llm-finetune"), false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LowerBound, llm_finetune_at_las_jct, std::string("llm-finetune"), true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LowerBound, philly_plain, std::string("philly"), false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LowerBound, philly_at_las_jct, std::string("philly"), true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LowerBound, gavel_plain, std::string("gavel"), false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LowerBound, gavel_at_las_jct, std::string("gavel"), true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LowerBound, openb_plain, std::string("openb"), false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LowerBound, openb_at_las_jct, std::string("openb"), true)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LowerBound, user_csv_1000_plain, std::string("user-csv-1000"), false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_LowerBound, user_csv_1000_at_las_jct, std::string("user-csv-1000"), true)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace seedance::sim

BENCHMARK_MAIN();
