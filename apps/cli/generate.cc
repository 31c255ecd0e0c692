// seedance generate telemetry: writes the synthetic cluster history of telemetry/cluster_history.h
// (dcgm-exporter and kube-state-metrics series with ms timestamps) and its truth (the jobs as they
// ran, with GPU-hours), for trying ingest, attribute, advise and export workload without a
// cluster. The bundled examples/telemetry/ files are its output with the defaults. With --fleet F
// it writes a fleet's history with its real shape instead (telemetry/fleet_history.h): the nodes of
// the fleet file's node pools, gangs, services, notebooks and queueing, and their truth.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "seedance/core/duration.h"
#include "seedance/core/file_util.h"
#include "seedance/cost/node_pool.h"
#include "seedance/gpu/catalog.h"
#include "seedance/sim/fleet_file.h"
#include "seedance/telemetry/cluster_history.h"
#include "seedance/telemetry/fleet_history.h"
#include "seedance/telemetry/parse.h"

namespace seedance::cli {
namespace {

struct GenerateOptions {
  std::string out, truth;
  std::string start = "2026-11-29T00:00:00Z";
  std::string duration;  // 1h, 24h with --fleet
  std::string interval = "60s";
  std::uint64_t seed = 1;
  std::string fleet;     // a fleet file with node_pools: its history with gangs, services, notebooks
  double load = 0.9;
};

Result<std::int64_t> PositiveMs(const std::string& flag, const std::string& text) {
  auto d = ParseDurationSeconds(text);
  if (!d.has_value()) return InvalidArgumentError(flag + ": " + d.error().message());
  const auto ms = static_cast<std::int64_t>(std::llround(*d * 1000.0));
  if (ms <= 0) return InvalidArgumentError(flag + ": must be positive");
  return ms;
}

// dcgm-exporter's modelName for a catalog type (what the GPU-name parser reads back as it).
Result<std::string> DcgmModelName(const std::string& type) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"H100", "NVIDIA H100 80GB HBM3"}, {"A100-80G", "NVIDIA A100-SXM4-80GB"}, {"A100", "NVIDIA A100-SXM4-40GB"},
      {"H200", "NVIDIA H200"},           {"L4", "NVIDIA L4"},                    {"L40S", "NVIDIA L40S"},
      {"A10G", "NVIDIA A10G"},           {"T4", "Tesla T4"}};
  std::string name = "NVIDIA " + type;
  for (const auto& [t, n] : kNames) {
    if (type == t) name = n;
  }
  if (telemetry::CatalogModelName(name) != type) {
    return InvalidArgumentError(fmt::format("GPU type {}: no dcgm-exporter modelName the GPU-name parser reads back as it", type));
  }
  return name;
}

// The i-th node name a shell pattern allows: the first `*` is the zero-padded index, other `*`
// nothing, `?` a '0', `[...]` its first character.
Result<std::string> NodeNameFromPattern(const std::string& pattern, int i, const std::string& pool) {
  std::string out;
  bool star = false;
  for (std::size_t k = 0; k < pattern.size(); ++k) {
    const char c = pattern[k];
    if (c == '*') {
      if (!star) out += fmt::format("{:03d}", i);
      star = true;
    } else if (c == '?') {
      out += '0';
    } else if (c == '[') {
      const std::size_t close = pattern.find(']', k + 1);
      if (close == std::string::npos || close == k + 1 || pattern[k + 1] == '!' || pattern[k + 1] == '^') {
        return InvalidArgumentError(fmt::format("node pool '{}': node_name '{}': cannot name nodes by this pattern", pool, pattern));
      }
      out += pattern[k + 1];
      k = close;
    } else if (c != '\\') {
      out += c;
    }
  }
  if (!star) out += fmt::format("-{:03d}", i);
  return out;
}

// The history spec of a fleet file: per node pool, the GPUs its kind has of its type in gpus[]
// (owned count, reserved count, on-demand quota, spot max_gpus; 32 for a spot pool without one),
// shared by the pools of the same type and kind, on 8-GPU nodes named by the pool's node_name
// pattern (else <pool>-NNN) and labelled with its labels (and karpenter.sh/capacity-type for
// on-demand and spot pools that do not say). Every node is checked to land in its own pool.
Result<telemetry::FleetHistorySpec> SpecOfFleet(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(sim::FleetFile f, sim::LoadFleetFile(path));
  if (f.node_pools.empty()) {
    return InvalidArgumentError("--fleet " + path + ": no node_pools: the history's nodes are named and labelled by them "
                                "(docs/FLEET_FILE.md \"Node pools\")");
  }
  telemetry::FleetHistorySpec spec;
  std::map<std::pair<std::string, cost::PoolKind>, int> sharing;
  for (const sim::FleetFileNodePool& np : f.node_pools) ++sharing[{np.type, np.kind}];
  std::vector<cost::NodePool> pools;
  std::set<std::string> names;
  for (const sim::FleetFileNodePool& np : f.node_pools) {
    const std::string where = fmt::format("--fleet {}:{}: node pool '{}'", path, np.line, np.name);
    if (np.match.labels.empty() && np.match.node_name.empty()) {
      return InvalidArgumentError(where + ": matched by Slurm partition only; the generator writes Kubernetes nodes");
    }
    int gpus = 0;
    for (const sim::FleetFileGpu& g : f.gpus) {
      if (g.type != np.type) continue;
      switch (np.kind) {
        case cost::PoolKind::kOwned: gpus = g.owned; break;
        case cost::PoolKind::kReserved: gpus = g.reserved; break;
        case cost::PoolKind::kOnDemand: gpus = g.on_demand_quota; break;
        case cost::PoolKind::kSpot:
          for (const sim::FleetFileSpot& sp : g.spot) gpus += sp.max_gpus;
          if (gpus == 0) gpus = 32;
          break;
      }
    }
    gpus /= sharing[{np.type, np.kind}];
    if (gpus <= 0) {
      return InvalidArgumentError(fmt::format("{}: gpus[] gives no {} GPUs of {} to put on its nodes", where,
                                              cost::PoolKindName(np.kind), np.type));
    }
    telemetry::FleetHistoryPool p;
    p.name = np.name;
    p.gpu_type = np.type;
    SEEDANCE_ASSIGN_OR_RETURN(p.model, DcgmModelName(np.type));
    p.gpus_per_node = std::min(8, gpus);
    p.committed = cost::IsCommitted(np.kind);
    p.spot = np.kind == cost::PoolKind::kSpot;
    bool says_capacity = false;
    for (const auto& [k, v] : np.match.labels) {
      // A key written as kube-state-metrics spells it (label_...) is that label already sanitized.
      p.labels.emplace_back(k.starts_with("label_") ? k.substr(6) : k, v == "*" ? "true" : v);
      const std::string sk = cost::SanitizeLabelName(k);
      says_capacity = says_capacity || sk == "karpenter_sh_capacity_type" || sk == "eks_amazonaws_com_capacityType" ||
                      sk == "cloud_google_com_gke_spot";
    }
    if (!says_capacity && np.kind == cost::PoolKind::kSpot) p.labels.emplace_back("karpenter.sh/capacity-type", "spot");
    if (!says_capacity && np.kind == cost::PoolKind::kOnDemand) {
      p.labels.emplace_back("karpenter.sh/capacity-type", "on-demand");
    }
    const int nodes = (gpus + p.gpus_per_node - 1) / p.gpus_per_node;
    for (int i = 0; i < nodes; ++i) {
      std::string name = fmt::format("{}-{:03d}", np.name, i);
      if (!np.match.node_name.empty()) {
        SEEDANCE_ASSIGN_OR_RETURN(name, NodeNameFromPattern(np.match.node_name, i, np.name));
      }
      if (!names.insert(name).second) return InvalidArgumentError(fmt::format("{}: node name {} is taken by another pool", where, name));
      p.nodes.push_back(std::move(name));
    }
    cost::NodePool cp;
    cp.name = np.name;
    cp.match = np.match;
    pools.push_back(std::move(cp));
    spec.pools.push_back(std::move(p));
  }
  for (std::size_t k = 0; k < spec.pools.size(); ++k) {
    cost::NodeFacts facts;
    for (const auto& [key, v] : spec.pools[k].labels) facts.labels[key] = v;
    for (const std::string& n : spec.pools[k].nodes) {
      facts.name = n;
      SEEDANCE_ASSIGN_OR_RETURN(const cost::NodePool* got, cost::FindNodePool(pools, facts, path));
      if (got != &pools[k]) {
        return InvalidArgumentError(fmt::format("--fleet {}: node {} made for node pool '{}' matches '{}' first: make "
                                                "the pools' match criteria tell them apart",
                                                path, n, pools[k].name, got->name));
      }
    }
  }
  return spec;
}

Status RunFleetHistory(const GenerateOptions& o, std::int64_t start_ms, std::int64_t duration_ms, std::int64_t interval_ms) {
  SEEDANCE_ASSIGN_OR_RETURN(telemetry::FleetHistorySpec spec, SpecOfFleet(o.fleet));
  spec.start_ms = start_ms;
  spec.duration_ms = duration_ms;
  spec.interval_ms = interval_ms;
  spec.seed = o.seed;
  if (!(o.load > 0 && o.load <= 2)) return InvalidArgumentError(fmt::format("--load: {} is outside (0, 2]", o.load));
  spec.load = o.load;
  SEEDANCE_ASSIGN_OR_RETURN(telemetry::FleetHistory h, telemetry::GenerateFleetHistory(spec));
  std::string text;
  telemetry::WriteFleetHistoryExposition(spec, h, [&](std::string_view chunk) { text += chunk; });
  const std::string truth = o.truth.empty() ? std::string() : telemetry::FleetHistoryTruthCsv(spec, h);
  SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(o.out, text));
  if (!o.truth.empty()) SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(o.truth, truth));
  const telemetry::FleetHistoryStats s = telemetry::FleetHistoryStatsOf(spec, h);
  std::cout << fmt::format(
      "{}: {} pods on {} nodes ({} GPUs, {} pools): {} batch jobs ({} gangs), {} service replicas of {} deployments, "
      "{} notebook sessions ({} jobs still queued at the end, not written); {:.1f} GPU-hours held; queueing mean {:.0f} s, "
      "max {:.0f} s; {} .. {} every {} s\n",
      o.out, s.pods, s.nodes, s.gpus, spec.pools.size(), s.batch, s.gangs, s.service_replicas, s.deployments, s.notebooks,
      h.never_started, s.gpu_hours, s.mean_queue_s, static_cast<double>(s.max_queue_ms) / 1000.0,
      telemetry::FormatTimestamp(spec.start_ms), telemetry::FormatTimestamp(spec.start_ms + spec.duration_ms),
      static_cast<double>(spec.interval_ms) / 1000.0);
  return Status::Ok();
}

Status RunGenerate(const GenerateOptions& o) {
  telemetry::HistorySpec spec;
  auto start = telemetry::ParseTimestamp(o.start);
  if (!start.has_value()) return InvalidArgumentError("--start: " + start.error().message());
  SEEDANCE_ASSIGN_OR_RETURN(spec.duration_ms,
                            PositiveMs("--duration", o.duration.empty() ? (o.fleet.empty() ? "1h" : "24h") : o.duration));
  SEEDANCE_ASSIGN_OR_RETURN(spec.interval_ms, PositiveMs("--interval", o.interval));
  if (*start % spec.interval_ms != 0) {
    return InvalidArgumentError(fmt::format("--start: must be a multiple of --interval ({} ms)", spec.interval_ms));
  }
  if (spec.duration_ms % spec.interval_ms != 0) return InvalidArgumentError("--duration: must be a multiple of --interval");
  if (spec.duration_ms / spec.interval_ms > 100'000) {
    return InvalidArgumentError("--duration: more than 100,000 intervals; raise --interval");
  }
  if (!o.fleet.empty()) return RunFleetHistory(o, *start, spec.duration_ms, spec.interval_ms);
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
      "(job_id,pod,namespace,node,gpu_model,gpus,start,end,gpu_hours,util). Deterministic for a seed. "
      "--fleet FILE writes a fleet's history with its real shape instead (docs/TELEMETRY.md): 8-GPU nodes for "
      "each of the file's node_pools (as many as gpus[] gives its kind: owned / reserved count, on-demand quota, "
      "spot max_gpus), named by its node_name pattern and labelled by its labels (kube_node_labels; spot and "
      "on-demand pools get karpenter.sh/capacity-type), and on them single-pod Jobs and multi-pod PyTorchJob gangs "
      "arriving at random (--load x the committed and on-demand GPUs of their type), queued FIFO per GPU type "
      "while the GPUs are busy (kube_pod_created before kube_pod_start_time), Deployments whose replicas follow "
      "the hour of the day, and notebook sessions (StatefulSet pods) with long idle stretches; no node ever holds "
      "more GPUs than it has. It adds kube_pod_created, kube_pod_owner, kube_job_created, kube_replicaset_owner, "
      "kube_deployment_spec_replicas and kube_node_labels (not POWER_USAGE nor kube_pod_status_phase), and "
      "--truth writes one row per job, gang, service replica and notebook session "
      "(id,kind,namespace,pod,owner_kind,owner,gpu_type,gpus,pods,submit,start,end,clipped,nodes,spot,busy_s).",
      "seedance generate telemetry --out stream.prom --truth jobs.csv --duration 6h && seedance ingest --format prom stream.prom --db ledger.db\n"
      "  seedance generate telemetry --fleet examples/fleets/owned-heavy.yaml --duration 24h --interval 5m --out day.prom --truth truth.csv");
  cmd->add_option("--out", o->out, "the Prometheus text file to write")->required();
  cmd->add_option("--truth", o->truth, "also write the jobs as they ran (CSV)");
  cmd->add_option("--start", o->start, "first sample time: RFC 3339 or Unix seconds")->capture_default_str();
  cmd->add_option("--duration", o->duration, "length of the history (default 1h; 24h with --fleet)");
  cmd->add_option("--interval", o->interval, "scrape interval (job times are multiples of it)")->capture_default_str();
  cmd->add_option("--seed", o->seed, "random seed")->capture_default_str();
  cmd->add_option("--fleet", o->fleet, "a fleet file with node_pools: its history with gangs, services, notebooks and queueing");
  cmd->add_option("--load", o->load, "with --fleet: batch GPU demand over the committed and on-demand GPUs of its types")
      ->capture_default_str();
  return [cmd, o]() {
    if (!cmd->parsed()) return -1;
    Status s = RunGenerate(*o);
    return s.ok() ? kExitOk : ReportError(s);
  };
}

}  // namespace seedance::cli
