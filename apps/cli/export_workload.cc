// seedance export workload: the jobs that ran in a ledger's window (Kubernetes pods from
// dcgm-exporter samples, kube-state-metrics and pod events; ledger/workload_history.h) as the
// jobs CSV cost-benchmark reads, with each job's speed on every --types GPU by the stated rule
// (ledger::StepsPerSecondOn), and the as-run baseline: each job as it ran, priced.
#include <fstream>
#include <iostream>
#include <sstream>
#include <memory>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "ledger_prepare.h"
#include "seedance/core/file_util.h"
#include "seedance/gpu/catalog.h"
#include "seedance/ledger/focus.h"
#include "seedance/ledger/workload_history.h"
#include "seedance/sim/workloads.h"
#include "seedance/slurm/slurm_json.h"
#include "seedance/telemetry/parse.h"

namespace seedance::cli {
namespace {

struct ExportWorkloadOptions {
  LedgerOptions ledger;
  std::string sacct;
  std::string out, as_run, types;
};

// Slurm accounting (`sacct --json`, 22.05's data_parser v0.0.38) as jobs: account for namespace,
// job-<id>[-<start>] for pod (one per incarnation), its GPUs (gres gpu:<type>) on its first node,
// start and end clipped to [from, to). Records that never ran or hold no GPU are left out;
// a running one ends at `to`.
Result<std::vector<ledger::RanJob>> JobsFromSacct(const std::string& path, std::int64_t& from_ms, std::int64_t& to_ms,
                                                  int& left_out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("--sacct " + path + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  auto records = slurm::ParseSacctJson(text.str());
  if (!records.has_value()) return InvalidArgumentError("--sacct " + path + ": " + records.error().message());
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  std::vector<ledger::RanJob> jobs;
  std::map<std::int64_t, int> incarnations;
  for (const slurm::AcctRecord& r : *records) {
    if (r.start_s <= 0 || r.gpus <= 0 || r.node.empty()) {
      ++left_out;
      continue;
    }
    ledger::RanJob j;
    j.namespace_name = r.account.empty() ? "(no account)" : r.account;
    j.pod = fmt::format("job-{}", r.job_id);
    if (incarnations[r.job_id]++ > 0) j.pod += fmt::format("-{}", r.start_s);
    j.node = r.node;
    auto g = gpu::ParseGpuName(r.gpu_type, gpu::NameMatch::kProduct);
    if (!g.has_value()) {
      return InvalidArgumentError(fmt::format("--sacct {}: job {}: GPU type '{}': {}", path, r.job_id, r.gpu_type,
                                              g.error().message()));
    }
    j.gpu = *g;
    j.model_label = std::string(gpu::GpuAt(*g).name);
    j.gpus = r.gpus;
    j.start_ms = r.start_s * 1000;
    j.end_ms = r.end_s > 0 ? r.end_s * 1000 : INT64_MAX;
    j.evidence = "sacct";
    lo = std::min(lo, j.start_ms);
    if (r.end_s > 0) hi = std::max(hi, j.end_ms);
    jobs.push_back(std::move(j));
  }
  if (from_ms == INT64_MIN) from_ms = lo;
  if (to_ms == INT64_MAX) to_ms = hi;
  std::vector<ledger::RanJob> kept;
  for (ledger::RanJob& j : jobs) {
    if (j.end_ms <= from_ms || j.start_ms >= to_ms) {
      ++left_out;
      continue;
    }
    j.clipped = j.start_ms < from_ms || j.end_ms > to_ms;
    j.start_ms = std::max(j.start_ms, from_ms);
    j.end_ms = std::min(j.end_ms, to_ms);
    kept.push_back(std::move(j));
  }
  std::sort(kept.begin(), kept.end(), [](const ledger::RanJob& a, const ledger::RanJob& b) {
    return std::tie(a.start_ms, a.namespace_name, a.pod) < std::tie(b.start_ms, b.namespace_name, b.pod);
  });
  return kept;
}

Result<std::int64_t> OptionalTime(const std::string& flag, const std::string& text, std::int64_t absent) {
  if (text.empty()) return absent;
  auto t = telemetry::ParseTimestamp(text);
  if (!t.has_value()) return InvalidArgumentError(flag + ": " + t.error().message());
  return *t;
}

// The default pricer: what the ledger charges per GPU-hour for the job's model (the config's
// override, else the price table). A fleet file's pricer (owned, reserved, spot) replaces it here.
ledger::AsRunPricer PriceTablePricer(const Prepared& p) {
  return [&p](const ledger::RanJob& j) -> Result<ledger::AsRunPrice> {
    const ledger::GpuPricer pricer(p.config, &p.catalog);
    const std::int64_t micro_per_hour = pricer.MicroUsdPerHour(j.model_label);
    if (micro_per_hour < 0) {
      return InvalidArgumentError(fmt::format("job {}/{}: GPU model '{}' has no price (add it to --prices or "
                                              "prices_usd_per_gpu_hour in --config)",
                                              j.namespace_name, j.pod, j.model_label));
    }
    const double gpu_ms = static_cast<double>(j.gpus) * static_cast<double>(j.end_ms - j.start_ms);
    return ledger::AsRunPrice{
        MicroUsd(micro_per_hour),
        MicroUsd(static_cast<std::int64_t>(std::llround(gpu_ms * static_cast<double>(micro_per_hour) / 3.6e6)))};
  };
}

Status RunExportWorkload(const ExportWorkloadOptions& o) {
  if (o.sacct.empty() == o.ledger.db.empty()) return InvalidArgumentError("--db/--sacct: give exactly one source");
  Prepared p;
  std::vector<ledger::RanJob> jobs;
  int left_out = 0;
  if (!o.sacct.empty()) {
    if (!o.ledger.config.empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(p.config, ledger::LedgerConfig::LoadFile(o.ledger.config));
    }
    SEEDANCE_ASSIGN_OR_RETURN(p.catalog, cost::PriceTable::LoadFile(o.ledger.prices.empty() ? cost::BundledPriceTablePath()
                                                                                            : o.ledger.prices));
    SEEDANCE_ASSIGN_OR_RETURN(p.from_ms, OptionalTime("--from", o.ledger.from, INT64_MIN));
    SEEDANCE_ASSIGN_OR_RETURN(p.to_ms, OptionalTime("--to", o.ledger.to, INT64_MAX));
    if (p.from_ms >= p.to_ms) return InvalidArgumentError("--from must be before --to");
    SEEDANCE_ASSIGN_OR_RETURN(jobs, JobsFromSacct(o.sacct, p.from_ms, p.to_ms, left_out));
  } else {
    SEEDANCE_ASSIGN_OR_RETURN(p, Prepare(o.ledger));
    SEEDANCE_ASSIGN_OR_RETURN(jobs, ledger::ReadRanJobs(*p.ledger, p.from_ms, p.to_ms, p.config.step_ms));
  }
  if (jobs.empty()) {
    return InvalidArgumentError(fmt::format("--from/--to: no job (pod with GPUs) in {} .. {}",
                                            telemetry::FormatTimestamp(p.from_ms), telemetry::FormatTimestamp(p.to_ms)));
  }
  // GPU types: --types (any spelling the GPU-name parser knows), else those the jobs ran on.
  std::vector<gpu::GpuIndex> types;
  auto add_type = [&](gpu::GpuIndex g) {
    if (std::find(types.begin(), types.end(), g) == types.end()) types.push_back(g);
  };
  for (const ledger::RanJob& j : jobs) {
    if (j.gpu == cluster::kNoGpuModel) {
      return InvalidArgumentError(fmt::format("job {}/{}: GPU model '{}' is not one the GPU-name parser knows",
                                              j.namespace_name, j.pod, j.model_label.empty() ? "(no modelName label)" : j.model_label));
    }
  }
  if (!o.types.empty()) {
    for (const std::string& t : SplitCommaList(o.types)) {
      auto g = gpu::ParseGpuName(t, gpu::NameMatch::kProduct);
      if (!g.has_value()) return InvalidArgumentError("--types: " + g.error().message());
      add_type(*g);
    }
  }
  for (const ledger::RanJob& j : jobs) add_type(j.gpu);

  sim::Workload w;
  w.name = "history";
  for (gpu::GpuIndex g : types) w.gpu_types.emplace_back(gpu::GpuAt(g).name);
  const ledger::AsRunPricer price = PriceTablePricer(p);
  std::string as_run =
      "job_id,namespace,pod,node,gpu_type,gpus,start,end,gpu_hours,mean_util,usd_per_gpu_hour,cost_usd,evidence,clipped\n";
  Money total;
  double gpu_hours = 0;
  int clipped = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const ledger::RanJob& j = jobs[i];
    sim::JobSpec s;
    s.id = static_cast<std::int64_t>(i + 1);
    s.arrival_s = static_cast<double>(j.start_ms - p.from_ms) / 1000.0;
    s.job_type = j.namespace_name + "/" + j.pod;
    s.gpus = j.gpus;
    s.total_steps = static_cast<double>(j.end_ms - j.start_ms) / 1000.0;  // 1 step/s where it ran
    for (gpu::GpuIndex g : types) s.steps_per_s.push_back(ledger::StepsPerSecondOn(j, g));
    s.tenant = j.namespace_name;
    w.jobs.push_back(std::move(s));
    SEEDANCE_ASSIGN_OR_RETURN(const ledger::AsRunPrice priced, price(j));
    const Money cost = priced.cost;
    total += cost;
    gpu_hours += j.gpu_hours();
    clipped += j.clipped ? 1 : 0;
    const double hours = j.gpu_hours();
    as_run += fmt::format("{},{},{},{},{},{},{},{},{:.6f},{},{},{},{},{}\n", i + 1, j.namespace_name, j.pod, j.node,
                          gpu::GpuAt(j.gpu).name, j.gpus, telemetry::FormatTimestamp(j.start_ms),
                          telemetry::FormatTimestamp(j.end_ms), hours,
                          j.mean_util >= 0 ? fmt::format("{:.3f}", j.mean_util) : std::string(),
                          ledger::DecimalUsd(priced.usd_per_gpu_hour),
                          ledger::DecimalUsd(cost), j.evidence, j.clipped ? "yes" : "no");
  }
  SEEDANCE_RETURN_IF_ERROR(w.Validate());
  SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(o.out, sim::JobsToCsv(w)));
  if (!o.as_run.empty()) SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(o.as_run, as_run));
  std::cout << fmt::format(
      "{}: {} jobs ({} clipped at {} .. {}{}), {:.4f} GPU-hours on {}; speeds: 1 step/s where a job ran, "
      "elsewhere 1 / (u / r + 1 - u) with u its mean utilization (1 when unknown) and r the FP16-peak ratio "
      "(0 if its memory does not fit)\n",
      o.out, jobs.size(), clipped, telemetry::FormatTimestamp(p.from_ms), telemetry::FormatTimestamp(p.to_ms),
      left_out > 0 ? fmt::format("; {} records left out: never ran, no GPU or outside the window", left_out) : "",
      gpu_hours, fmt::join(w.gpu_types, ", "));
  if (p.ledger == nullptr) {
    std::cout << fmt::format("as run: ${} (each job's GPU-hours at its type's price{})\n", ledger::DecimalUsd(total),
                             o.as_run.empty() ? "" : ", " + o.as_run);
    return Status::Ok();
  }
  // What the ledger charged the same pods, beside the bill, so the baseline can be checked.
  SEEDANCE_ASSIGN_OR_RETURN(ledger::AttributionReport report,
                            p.ledger->Attribute(ledger::Dimension::kWorkload, p.from_ms, p.to_ms, false));
  std::set<std::string> pods;
  for (const ledger::RanJob& j : jobs) pods.insert(j.pod);
  Money charged;
  for (const ledger::AttributionRow& r : report.rows) {
    if (pods.count(r.key)) charged += r.cost;
  }
  std::cout << fmt::format("as run: ${} (each job's GPU-hours at its type's price{}); the ledger charged these jobs "
                           "${} of a bill ${} (idle ${}, overhead ${})\n",
                           ledger::DecimalUsd(total), o.as_run.empty() ? "" : ", " + o.as_run,
                           ledger::DecimalUsd(charged), ledger::DecimalUsd(report.reconciliation.bill),
                           ledger::DecimalUsd(report.reconciliation.idle), ledger::DecimalUsd(report.reconciliation.overhead));
  return Status::Ok();
}

}  // namespace

Action RegisterExportWorkload(CLI::App& exp) {
  auto o = std::make_shared<ExportWorkloadOptions>();
  CLI::App* cmd = AddCommand(
      exp, "workload", "Write the jobs that ran as cost-benchmark's jobs CSV, and the as-run cost",
      "A job is a Kubernetes pod that held GPUs in the window: from dcgm-exporter samples naming it "
      "(GPUs, model, utilization, peak memory, first and last sample), kube-state-metrics "
      "(kube_pod_container_resource_requests nvidia_com_gpu, kube_pod_start_time, "
      "kube_pod_completion_time, kube_pod_info) and pod events; kube-state-metrics' GPU count and "
      "times win. Jobs running at the window's edges are clipped to it and counted. The jobs CSV "
      "(docs/WORKLOADS.md) gives each job 1 step per second on the type it ran on for its run time; "
      "on another --types GPU its busy share u (mean GR_ENGINE_ACTIVE, else GPU_UTIL) runs r = FP16 "
      "peak ratio faster and the rest does not: 1 / (u / r + 1 - u) steps/s, 0 when its peak memory "
      "does not fit. --as-run writes each job as it ran (type, GPUs, times, GPU-hours) priced at "
      "what the ledger charges per GPU-hour (--config prices, else --prices); the summary puts its "
      "total beside what the ledger charged the same pods and the bill. --sacct FILE reads Slurm "
      "accounting instead of a ledger (account as namespace, job-<id> as pod, gres gpu:<type>; "
      "records that never ran are counted and left out).",
      "seedance export workload --db ledger.db --out jobs.csv --as-run as-run.csv --types H100,A100-80G,L4");
  cmd->add_option("--db,--ledger", o->ledger.db, "ledger file (SQLite) to read the jobs from");
  cmd->add_option("--sacct", o->sacct, "read the jobs from this `sacct --json` output (Slurm 22.05 and later) instead");
  AddLedgerOptionsWithoutDb(cmd, o->ledger);
  cmd->add_option("--out", o->out, "jobs CSV to write (atomically)")->required();
  cmd->add_option("--as-run", o->as_run, "as-run baseline CSV to write");
  cmd->add_option("--types", o->types,
                  "GPU types of the speed columns, any spelling the GPU-name parser knows (default: those the jobs ran on)");
  return [cmd, o]() {
    if (!cmd->parsed()) return -1;
    Status s = RunExportWorkload(*o);
    return s.ok() ? kExitOk : ReportError(s);
  };
}

}  // namespace seedance::cli
