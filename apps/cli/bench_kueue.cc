// seedance bench kueue: Kueue's scheduler-performance baseline (5 cohorts x 6 ClusterQueues,
// 15,000 workloads) regenerated and decided by Seedance's admission library in Kueue's mode.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "common.h"
#include "kueue_online.h"
#include "seedance/core/file_util.h"
#include "seedance/server/http_server.h"
#include "seedance/sim/kueue_scenario.h"

#include <chrono>
#include <fstream>
#include <thread>

namespace seedance::cli {
namespace {

struct BenchKueueOptions {
  std::string mode = "kueue";
  double api_qps = 0;
  double api_burst = 100;
  std::string out = "seedance-kueue";
  bool online = false;
  double speedup = 1;
};

// Runs the scenario against `seedance server` started in this process on a loopback port.
int RunOnline(const BenchKueueOptions& o) {
  const sim::KueueScenarioSpec spec;
  Status s = EnsureDirectory(o.out);
  if (s.ok()) s = WriteFileAtomically(o.out + "/kueue-server-config.yaml", KueueServerConfigYaml(spec));
  if (!s.ok()) return ReportError(s);
  server::ServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.config_path = o.out + "/kueue-server-config.yaml";
  options.db = o.out + "/kueue-ledger.db";
  // A fresh ledger per run: the server restores live workloads from it (issue 26), and a run
  // that was interrupted would leave its workloads there.
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(options.db + suffix);
  auto created = server::HttpServer::Create(options, /*now_ms=*/nullptr);  // the server's wall clock
  if (!created.has_value()) return ReportError(created.error());
  std::unique_ptr<server::HttpServer> srv = std::move(*created);
  Status run_status;
  std::thread serve([&] { run_status = srv->Run(); });
  for (int i = 0; i < 1000 && !srv->running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  KueueOnlineOptions client;
  client.port = srv->port();
  client.speedup = o.speedup;
  std::cerr << fmt::format("bench kueue --online: 15,000 workloads through http://127.0.0.1:{}/v1/workloads "
                           "at {}x Kueue's schedule (about {:.0f} s)...\n",
                           client.port, o.speedup, 80.0 / o.speedup);
  auto r = RunKueueOnline(spec, client);
  srv->Stop();
  serve.join();
  if (!r.has_value()) return ReportError(r.error());
  if (!run_status.ok()) return ReportError(run_status);
  const sim::KueuePublished pub;
  std::cout << "Kueue scheduler-performance baseline, ONLINE: every decision through seedance server's HTTP API "
               "(/v1/workloads, loopback), workloads created and finished in wall time\n";
  std::cout << fmt::format("schedule: {}x Kueue's (creation intervals and runtimes divided by {}); admission times "
                           "below are in scenario seconds\n",
                           o.speedup, o.speedup);
  std::cout << fmt::format("{:<8} {:>6} {:>10} {:>9} {:>10} {:>10}\n", "class", "count", "mean adm s", "p99 adm s",
                           "Kueue s", "evictions");
  for (const auto& c : r->classes) {
    std::string kueue = "-";
    for (const auto& p : pub.classes)
      if (p.name == c.name) kueue = fmt::format("{:.1f}", p.mean_admission_s);
    std::cout << fmt::format("{:<8} {:>6} {:>10.3f} {:>9.3f} {:>10} {:>10}\n", c.name, c.count, c.mean_admission_s,
                             c.p99_admission_s, kueue, c.evictions);
  }
  std::cout << fmt::format("wall: {:.1f} s for {} admissions ({:.1f} admissions/s); Kueue: {} in {:.1f} s "
                           "({:.1f}/s, bound by its 50 QPS API client)\n",
                           r->wall_s, r->admissions, static_cast<double>(r->admissions) / r->wall_s, pub.admissions,
                           pub.wall_s, pub.admissions / pub.wall_s);
  // No schedule can end before the last creation plus its runtime, nor before the whole work
  // (cpu x runtime) has run on the 30 queues' nominal quota.
  double last_end_s = 0, work = 0;
  for (const auto& c : spec.classes) {
    last_end_s = std::max(last_end_s, (c.count_per_cq * c.interval_ms + c.runtime_ms) / 1000.0);
    work += c.count_per_cq * spec.cohorts * spec.queues_per_cohort * c.request_cpu * c.runtime_ms / 1000.0;
  }
  const double floor_s = std::max(last_end_s, work / (spec.nominal_cpu * spec.cohorts * spec.queues_per_cohort));
  std::cout << fmt::format("floor: no schedule ends before {:.1f} s of scenario time (max of the last creation + "
                           "runtime, {:.1f} s, and all work on the nominal quota at 100%); {:.1f} s of wall at {}x\n",
                           floor_s, last_end_s, floor_s / o.speedup, o.speedup);
  std::cout << fmt::format("requests: {} (p50 {:.2f} ms, p99 {:.2f} ms round trip)  preemptions: {}  usage: {:.1f}% "
                           "(Kueue {:.1f}%)\n",
                           r->requests, r->request_p50_ms, r->request_p99_ms, r->preemptions, r->usage_pct,
                           pub.usage_pct);
  s = WriteFileAtomically(o.out + "/kueue-online.json", KueueOnlineJson(client, *r).dump(2) + "\n");
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << o.out << "/kueue-online.json\n";
  return kExitOk;
}

double ProcessCpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

int Run(const BenchKueueOptions& o) {
  if (o.online) {
    if (o.mode != "kueue") return ReportError(InvalidArgumentError("--mode: --online runs the server's kueue mode only"));
    return RunOnline(o);
  }
  if (!std::isfinite(o.api_qps) || o.api_qps < 0)
    return ReportError(InvalidArgumentError("--api-qps: must be >= 0 (0: no API rate limit)"));
  if (!std::isfinite(o.api_burst) || o.api_burst < 1)
    return ReportError(InvalidArgumentError("--api-burst: must be >= 1"));
  const sim::KueueScenarioSpec spec;
  sim::KueueRunOptions run;
  const auto mode = tenancy::ParseTenancyMode(o.mode);
  if (!mode.has_value() || (*mode != tenancy::TenancyMode::kKueue && !tenancy::IsFairSharing(*mode))) {
    return ReportError(InvalidArgumentError("--mode: unknown mode '" + o.mode +
                                            "' (accepted: kueue, fair-sharing, fair-sharing-ltefs, fair-sharing-ltis)"));
  }
  run.mode = *mode;
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
      "seedance bench kueue --out results\n  seedance bench kueue --online --out results");
  cmd->add_option("--mode", o->mode,
                  "admission: kueue (the test's configuration) or Kueue Fair Sharing: fair-sharing, fair-sharing-ltefs, "
                  "fair-sharing-ltis (offline only)")
      ->capture_default_str();
  cmd->add_option("--api-qps", o->api_qps, "admission/eviction status writes per second; 0: unlimited")
      ->capture_default_str();
  cmd->add_option("--api-burst", o->api_burst, "token-bucket burst with --api-qps")->capture_default_str();
  cmd->add_option("--out", o->out, "output directory")->capture_default_str();
  cmd->add_flag("--online", o->online,
                "push the workloads through seedance server's HTTP API (started in-process on loopback) in wall "
                "time instead of simulating");
  cmd->add_option("--speedup", o->speedup, "with --online: divide Kueue's creation intervals and runtimes by this")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1000.0));
  return [cmd, o]() { return cmd->parsed() ? Run(*o) : -1; };
}

}  // namespace seedance::cli
