// Simulator speed (issue 3): 100,000 jobs on a 10,000-GPU fleet, per-job scheduling decision
// time, and the LP lower bound of the default cost-benchmark workload.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "seedance/sim/gavel_protocol.h"
#include "seedance/sim/lower_bound.h"
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

void BM_Simulate100kJobs10kGpus(benchmark::State& state) {
  auto thr = GavelThroughputs::LoadFile(kData + "/gavel/gavel_isolated_throughputs.csv");
  // ~3,333 GPUs per type; arrivals at a rate that keeps the fleet busy (~600 jobs/h).
  Workload w = GenerateGavel(*thr, 600.0, 100000, true, 1);
  FleetSpec fleet = GavelFleet(3334, 3333, 3333);
  for (auto _ : state) {
    CostAwareConfig c;
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

}  // namespace
}  // namespace seedance::sim

BENCHMARK_MAIN();
