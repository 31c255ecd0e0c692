#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace seedance::advise::testing {

// A dcgm-exporter stream (Kubernetes mode: pod/namespace/container labels) of a fleet where every
// GPU is held by a job that uses it well (GR_ENGINE_ACTIVE 0.6-0.9, memory 50-75 GiB of 80 on
// H100, no input wait): the clean stream, where an advisor must find nothing. Waste is planted
// under flags, each with known parameters (the truth a test checks the advisor against):
//   idle_namespace: namespace `sandbox` holds node 0's GPUs 0-1 at activity 0.01 (2 GPUs idle);
//   input_bound:    job `etl-train` (namespace team-a) holds node 1's GPUs 0-3 and waits on its
//                   input `stall` of the time: activity 0.8 x (1 - stall), and its container's
//                   cAdvisor PSI counter container_pressure_io_waiting_seconds_total grows by
//                   `stall` seconds per second;
//   oversized:      job `small-ft` (namespace team-b) holds node 2's GPU 0 at activity 0.08 with
//                   a 12,000 MiB peak (it fits a 24 GB GPU without slowing down).
//   spot_eligible:  job `batch-train` (namespace research) holds node 3's GPUs 0-1 at activity
//                   0.75 and its pod carries the annotations seedance.io/checkpoint-interval=30m and
//                   seedance.io/deadline-slack=24h (every pod's kube_pod_annotations series is
//                   exported, as kube-state-metrics does; only this one has them).
//   unit_cost_outlier: job `slow-eval` (namespace team-b) holds node 3's GPU 2 at activity 0.34
//                   with a 60 GiB peak: no cheaper GPU holds it at its speed and one GPU cannot
//                   consolidate, but its $ per useful GPU-hour is over 2x the fleet median.
// Every clean job's container also exports the PSI counter (growing by 0.02 s/s: a healthy
// pipeline). Samples every `interval_ms` (timestamps in ms). Deterministic for a seed.
struct WasteStreamSpec {
  int nodes = 4;
  int gpus_per_node = 8;
  std::int64_t start_ms = 1795910400000;  // 2026-11-29T00:00:00Z
  std::int64_t duration_ms = 24LL * 3600 * 1000;
  std::int64_t interval_ms = 60'000;
  std::uint64_t seed = 1;
  std::string model = "NVIDIA H100 80GB HBM3";
  bool idle_namespace = false;
  bool input_bound = false;
  double stall = 0.45;
  bool oversized = false;
  bool spot_eligible = false;
  bool unit_cost_outlier = false;
};

// Calls `emit` once per scrape with its text (complete lines), in time order.
void GenerateWasteStream(const WasteStreamSpec& spec,
                         const std::function<void(std::string_view)>& emit);

}  // namespace seedance::advise::testing
