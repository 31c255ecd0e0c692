#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace seedance::telemetry::testing {

// A synthetic but realistic dcgm-exporter stream: `nodes` x `gpus_per_node` GPUs scraped every
// `interval_ms` for `duration_ms`, in Kubernetes mode (pod/namespace/container labels; idle GPUs
// get empty ones), with the exporter's label casing (UUID, modelName, Hostname) and HELP/TYPE
// lines repeated per scrape, as a recorder of /metrics would store it. Pods change every few
// hours; utilization and memory follow the pod. Deterministic for a seed.
struct StreamSpec {
  int nodes = 8;
  int gpus_per_node = 8;
  std::int64_t start_ms = 1795910400000;  // 2026-11-29T00:00:00Z
  std::int64_t duration_ms = 24LL * 3600 * 1000;
  std::int64_t interval_ms = 60'000;
  std::uint64_t seed = 1;
  bool timestamps = true;       // write the (ms) timestamp on each sample
  std::string model = "NVIDIA H100 80GB HBM3";
  std::vector<std::string> namespaces = {"team-a", "team-b", "research", "kube-system"};
};

// Calls `emit` once per scrape with its text (complete lines), in time order.
void GenerateDcgmStream(const StreamSpec& spec, const std::function<void(std::string_view)>& emit);

// Returns the GPU UUID the generator gives GPU `gpu` of node `node`.
std::string GeneratedGpuUuid(int node, int gpu);

// Number of samples one scrape holds (metrics x GPUs).
std::int64_t SamplesPerScrape(const StreamSpec& spec);

}  // namespace seedance::telemetry::testing
