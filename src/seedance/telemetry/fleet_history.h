#pragma once

// A fleet's history with its real shape (issue 38, `seedance generate telemetry --fleet F`): the
// nodes of a fleet file's node pools, and on them what a shared ML platform runs in a day:
//   - batch: single-pod Jobs and multi-pod PyTorchJob gangs (8 GPUs a pod), arriving at random
//     and queued FIFO per GPU type when the GPUs are busy (kube_pod_created before
//     kube_pod_start_time), all pods of a gang placed at once;
//   - services: Deployments (ReplicaSet pods) whose replicas follow the hour of the day;
//   - notebooks: Kubeflow-style StatefulSet pods, one session each, busy in stretches and idle
//     between them;
// placed like kube-scheduler's default profile would with a preferred node affinity for spot
// (the 30 % that tolerate it), then owned, then on-demand nodes (best fit on the node), so that no node holds more GPUs than it has
// at any time. It is written as dcgm-exporter and kube-state-metrics v2 series (real names and
// label casing, millisecond timestamps) with its truth: one row per job, gang, service replica
// and notebook session. Deterministic for a spec. The pools come from a fleet file (sim, cost):
// apps/cli/generate.cc turns it into a FleetHistorySpec, this module knows only nodes.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::telemetry {

struct FleetHistoryPool {
  std::string name;                 // the node pool's name
  std::string gpu_type;             // canonical catalog name
  std::string model;                // dcgm-exporter's modelName for it
  std::vector<std::string> nodes;   // node names (unique over the fleet)
  int gpus_per_node = 8;
  std::vector<std::pair<std::string, std::string>> labels;  // node labels as Kubernetes spells them
  bool committed = false;           // owned or reserved: placed first
  bool spot = false;                // placed last, only for work that tolerates spot
};

// A pool of `nodes` 8-GPU nodes named <name>-0, <name>-1, ... (tests and small examples).
FleetHistoryPool NumberedPool(const std::string& name, const std::string& gpu_type, const std::string& model, int nodes,
                              bool committed, bool spot);

struct FleetHistorySpec {
  std::vector<FleetHistoryPool> pools;
  std::vector<std::string> teams = {"team-a", "team-b", "team-c"};
  std::int64_t start_ms = 1795910400000;  // 2026-11-29T00:00:00Z; a multiple of interval_ms
  std::int64_t duration_ms = 86'400'000;
  std::int64_t interval_ms = 60'000;
  double load = 0.9;                      // batch GPU demand / committed + on-demand GPUs of its types
  std::uint64_t seed = 1;
};

struct FleetPod {
  std::string name, node;
  std::vector<int> gpus;              // indices on the node
  std::int64_t created_ms = 0, start_ms = 0, end_ms = 0;  // end may be past the window (still running)
  double util = 0;                    // GR_ENGINE_ACTIVE while running (batch, services)
  std::vector<std::pair<std::int64_t, std::int64_t>> busy;  // notebooks: busy stretches; else empty
  double fb_used_mib = 0;
};

// One row of the truth: a job, a gang, a service replica or a notebook session.
struct FleetWorkload {
  std::int64_t id = 0;
  std::string kind;          // batch | service | notebook
  std::string namespace_name;
  std::string owner_kind;    // Job, PyTorchJob, Deployment, StatefulSet
  std::string owner;         // the Job / PyTorchJob / Deployment / StatefulSet name
  std::string gpu_type;
  int gpus_per_pod = 1;
  bool tolerates_spot = false;
  std::int64_t submit_ms = 0, duration_ms = 0;
  std::vector<FleetPod> pods;  // placed pods (a service row has exactly one)
  // What `export workload` writes as the pod column: <OwnerKind>/<owner> for a gang of 2 or more
  // pods, else the pod's name.
  std::string row_name() const;
  int gpus() const { return gpus_per_pod * static_cast<int>(pods.size()); }
  std::int64_t start_ms() const;
  std::int64_t end_ms() const;
};

struct FleetHistory {
  std::vector<FleetWorkload> rows;  // placed ones, by (start, namespace, row name)
  int never_started = 0;            // submitted, still queued at the window's end (not written)
};

// Generates the history. Errors: kInvalidArgument when the spec has no pools, no teams, or a
// non-positive interval or duration.
Result<FleetHistory> GenerateFleetHistory(const FleetHistorySpec& spec);

// Writes it as Prometheus text 0.0.4 with ms timestamps, family by family; `emit` receives
// complete lines in chunks.
void WriteFleetHistoryExposition(const FleetHistorySpec& spec, const FleetHistory& history,
                                 const std::function<void(std::string_view)>& emit);

// The truth as CSV: id,kind,namespace,pod,owner_kind,owner,gpu_type,gpus,pods,submit,start,end,
// clipped,nodes,spot,busy_s (times RFC 3339; end and busy clipped to the window; nodes ';'-joined).
std::string FleetHistoryTruthCsv(const FleetHistorySpec& spec, const FleetHistory& history);

// Sizes for the summary line.
struct FleetHistoryStats {
  int pods = 0, batch = 0, gangs = 0, service_replicas = 0, deployments = 0, notebooks = 0, nodes = 0, gpus = 0;
  double gpu_hours = 0;             // inside the window
  std::int64_t max_queue_ms = 0;
  double mean_queue_s = 0;          // over the batch rows
};
FleetHistoryStats FleetHistoryStatsOf(const FleetHistorySpec& spec, const FleetHistory& history);

}  // namespace seedance::telemetry
