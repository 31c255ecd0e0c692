// seedance bench kueue: Kueue's scheduler-performance baseline (5 cohorts x 6 ClusterQueues,
// 15,000 workloads) regenerated and decided by Seedance's admission library in Kueue's mode.
#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "common.h"
#include "seedance/core/file_util.h"
#include "seedance/sim/kueue_scenario.h"

namespace seedance::cli {
namespace {

struct BenchKueueOptions {
  double api_qps = 0;
  double api_burst = 100;
  std::string out = "seedance-kueue";
};

double ProcessCpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

int Run(const BenchKueueOptions& o) {
  if (!std::isfinite(o.api_qps) || o.api_qps < 0)
    return ReportError(InvalidArgumentError("--api-qps: must be >= 0 (0: no API rate limit)"));
  if (!std::isfinite(o.api_burst) || o.api_burst < 1)
    return ReportError(InvalidArgumentError("--api-burst: must be >= 1"));
  const sim::KueueScenarioSpec spec;
  sim::KueueRunOptions run;
  run.api_qps = o.api_qps;
  run.api_burst = o.api_burst;
  run.cpu_clock = ProcessCpuSeconds;
  auto r = sim::RunKueueScenario(spec, run);
  if (!r.has_value()) return ReportError(r.error());
  const sim::KueuePublished pub;

  std::cout << "Kueue scheduler-performance baseline: 5 cohorts x 6 CQs (nominal 20, borrowing limit 100 cpu), "
               "15,000 workloads\n";
  if (o.api_qps > 0) {
    std::cout << fmt::format("API model: admission/eviction writes limited to {} QPS, burst {} (a model of "
                             "minimalkueue's client limit, not a fit)\n",
                             o.api_qps, o.api_burst);
  } else {
    std::cout << "API model: none (writes are free; --api-qps 50 models minimalkueue's client limit)\n";
  }
  std::cout << fmt::format("{:<8} {:>6} {:>10} {:>9} {:>10} {:>10} {:>10}\n", "class", "count", "mean adm s",
                           "p99 adm s", "Kueue s", "threshold", "evictions");
  for (const auto& c : r->classes) {
    std::string kueue = "-", threshold = "-";
    for (const auto& p : pub.classes) {
      if (p.name != c.name) continue;
      kueue = fmt::format("{:.1f}", p.mean_admission_s);
      threshold = fmt::format("<= {:.0f}", p.max_mean_admission_s);
    }
    std::cout << fmt::format("{:<8} {:>6} {:>10.3f} {:>9.3f} {:>10} {:>10} {:>10}\n", c.name, c.count,
                             c.mean_admission_s, c.p99_admission_s, kueue, threshold, c.evictions);
  }
  std::cout << fmt::format("usage: {:.1f}%  (Kueue: {:.1f}%, threshold >= {:.0f}%)\n", r->usage_pct, pub.usage_pct,
                           pub.min_usage_pct);
  std::cout << fmt::format("preemptions: {}  admissions: {}  simulated end: {:.1f} s\n", r->preemptions, r->admissions,
                           r->end_s);
  const double decisions = static_cast<double>(r->admissions + r->preemptions);
  const double rate = r->cpu_seconds > 0 ? decisions / r->cpu_seconds : 0.0;
  std::cout << fmt::format("cpu_seconds: {:.3f} for {:.0f} decisions ({:.0f} decisions/s of CPU)\n", r->cpu_seconds,
                           decisions, rate);
  std::cout << fmt::format("Kueue: {} admissions in {:.1f} s wall = {:.1f}/s; that wall time is API-bound "
                           "(minimalkueue's client: 50 QPS, burst 100), so compare decisions per second, "
                           "not wall time\n",
                           pub.admissions, pub.wall_s, pub.admissions / pub.wall_s);

  nlohmann::json doc = sim::KueueResultJson(spec, run, *r);
  Status s = EnsureDirectory(o.out);
  if (s.ok()) s = WriteFileAtomically(o.out + "/kueue.json", doc.dump(2) + "\n");
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << o.out << "/kueue.json\n";
  return kExitOk;
}

}  // namespace

Action RegisterBenchKueue(CLI::App& bench) {
  auto o = std::make_shared<BenchKueueOptions>();
  CLI::App* cmd = AddCommand(
      bench, "kueue", "Regenerate Kueue's scheduler-performance baseline and decide it in Kueue's mode",
      "5 cohorts x 6 ClusterQueues, 15,000 small/medium/large workloads, as Kueue's "
      "test/performance/scheduler baseline; Kueue's published figures are printed beside ours. Kueue's 351 s "
      "wall time is bound by its 50 QPS API client: compare decisions per second, not wall time. "
      "--api-qps models that limit (a model, not a fit). kueue.json's \"timing\" block is the only part "
      "that differs between runs.",
      "seedance bench kueue --out results");
  cmd->add_option("--api-qps", o->api_qps, "admission/eviction status writes per second; 0: unlimited")
      ->capture_default_str();
  cmd->add_option("--api-burst", o->api_burst, "token-bucket burst with --api-qps")->capture_default_str();
  cmd->add_option("--out", o->out, "output directory")->capture_default_str();
  return [cmd, o]() { return cmd->parsed() ? Run(*o) : -1; };
}

}  // namespace seedance::cli
