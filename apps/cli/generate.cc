// seedance generate telemetry: writes the synthetic cluster history of telemetry/cluster_history.h
// (dcgm-exporter and kube-state-metrics series with ms timestamps) and its truth (the jobs as they
// ran, with GPU-hours), for trying ingest, attribute, advise and export workload without a
// cluster. The bundled examples/telemetry/ files are its output with the defaults.
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "seedance/core/duration.h"
#include "seedance/core/file_util.h"
#include "seedance/telemetry/cluster_history.h"
#include "seedance/telemetry/parse.h"

namespace seedance::cli {
namespace {

struct GenerateOptions {
  std::string out, truth;
  std::string start = "2026-11-29T00:00:00Z";
  std::string duration = "1h";
  std::string interval = "60s";
  std::uint64_t seed = 1;
};

Result<std::int64_t> PositiveMs(const std::string& flag, const std::string& text) {
  auto d = ParseDurationSeconds(text);
  if (!d.has_value()) return InvalidArgumentError(flag + ": " + d.error().message());
  const auto ms = static_cast<std::int64_t>(std::llround(*d * 1000.0));
  if (ms <= 0) return InvalidArgumentError(flag + ": must be positive");
  return ms;
}

Status RunGenerate(const GenerateOptions& o) {
  telemetry::HistorySpec spec;
  auto start = telemetry::ParseTimestamp(o.start);
  if (!start.has_value()) return InvalidArgumentError("--start: " + start.error().message());
  SEEDANCE_ASSIGN_OR_RETURN(spec.duration_ms, PositiveMs("--duration", o.duration));
  SEEDANCE_ASSIGN_OR_RETURN(spec.interval_ms, PositiveMs("--interval", o.interval));
  if (*start % spec.interval_ms != 0) {
    return InvalidArgumentError(fmt::format("--start: must be a multiple of --interval ({} ms)", spec.interval_ms));
  }
  if (spec.duration_ms % spec.interval_ms != 0) return InvalidArgumentError("--duration: must be a multiple of --interval");
  if (spec.duration_ms / spec.interval_ms > 100'000) {
    return InvalidArgumentError("--duration: more than 100,000 intervals; raise --interval");
  }
  spec.start_ms = *start;
  spec.seed = o.seed;
  const auto jobs = telemetry::GenerateHistoryJobs(spec);
  std::string text;
  telemetry::WriteHistoryExposition(spec, jobs, [&](std::string_view chunk) { text += chunk; });
  SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(o.out, text));
  double gpu_hours = 0;
  for (const auto& j : jobs) gpu_hours += j.gpu_hours();
  if (!o.truth.empty()) SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(o.truth, telemetry::HistoryJobsCsv(jobs)));
  std::cout << fmt::format("{}: {} jobs on {} nodes, {:.4f} GPU-hours held, {} .. {} every {} s\n", o.out, jobs.size(),
                           spec.nodes.size(), gpu_hours, telemetry::FormatTimestamp(spec.start_ms),
                           telemetry::FormatTimestamp(spec.start_ms + spec.duration_ms), static_cast<double>(spec.interval_ms) / 1000.0);
  return Status::Ok();
}

}  // namespace

Action RegisterGenerate(CLI::App& app) {
  auto o = std::make_shared<GenerateOptions>();
  CLI::App* gen = AddCommand(app, "generate", "Write example inputs whose truth is known",
                             "Subcommands write synthetic inputs for trying the other commands without a cluster.",
                             "seedance generate telemetry --out stream.prom --truth jobs.csv");
  gen->require_subcommand(1);
  CLI::App* cmd = AddCommand(
      *gen, "telemetry", "A GPU cluster's dcgm-exporter and kube-state-metrics history, and its jobs",
      "Two nodes (4 A100-SXM4-80GB, 4 H100 80GB HBM3) running pods of 1, 2 or 4 GPUs in namespaces "
      "team-a, team-b and research, as Prometheus text with millisecond timestamps, one sample per "
      "series per --interval: dcgm-exporter's GPU_UTIL, GR_ENGINE_ACTIVE, FB_USED and POWER_USAGE "
      "(labels gpu, UUID, modelName, Hostname, pod, namespace, container; empty pod labels on idle "
      "GPUs) and kube-state-metrics' kube_pod_info, kube_pod_status_phase, "
      "kube_pod_container_resource_requests (nvidia_com_gpu), kube_pod_labels, kube_pod_start_time and "
      "kube_pod_completion_time (docs/TELEMETRY.md). --truth writes the jobs as they ran "
      "(job_id,pod,namespace,node,gpu_model,gpus,start,end,gpu_hours,util). Deterministic for a seed.",
      "seedance generate telemetry --out stream.prom --truth jobs.csv --duration 6h\n"
      "  seedance ingest --format prom stream.prom --db ledger.db && seedance attribute --db ledger.db --by namespace");
  cmd->add_option("--out", o->out, "the Prometheus text file to write")->required();
  cmd->add_option("--truth", o->truth, "also write the jobs as they ran (CSV)");
  cmd->add_option("--start", o->start, "first sample time: RFC 3339 or Unix seconds")->capture_default_str();
  cmd->add_option("--duration", o->duration, "length of the history")->capture_default_str();
  cmd->add_option("--interval", o->interval, "scrape interval (job times are multiples of it)")->capture_default_str();
  cmd->add_option("--seed", o->seed, "random seed")->capture_default_str();
  return [cmd, o]() {
    if (!cmd->parsed()) return -1;
    Status s = RunGenerate(*o);
    return s.ok() ? kExitOk : ReportError(s);
  };
}

}  // namespace seedance::cli
