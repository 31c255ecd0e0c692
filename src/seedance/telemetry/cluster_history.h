#pragma once

// A synthetic GPU cluster whose history is known (issue 28): jobs (pods) with a GPU type, a gang
// of GPUs on one node, start and end, written as what Prometheus would hold for it: dcgm-exporter
// series per GPU (the holder's pod/namespace/container labels, empty when idle) and
// kube-state-metrics series per pod (info, phase, GPU requests, labels, start and completion
// time), every sample with its millisecond timestamp. The truth (jobs and GPU-hours) comes with
// it, so that every reader (ingest of the text, a real Prometheus scraping it, the workload
// export) can be checked against it. `seedance generate telemetry` writes it; the bundled example
// (examples/telemetry/) is its output. Deterministic for a spec.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace seedance::telemetry {

struct HistoryNode {
  std::string name;
  std::string model;  // as dcgm-exporter's modelName
  int gpus = 4;
};

struct HistorySpec {
  std::vector<HistoryNode> nodes = {{"gpu-node-a100-0", "NVIDIA A100-SXM4-80GB", 4},
                                    {"gpu-node-h100-0", "NVIDIA H100 80GB HBM3", 4}};
  std::vector<std::string> namespaces = {"team-a", "team-b", "research"};
  std::int64_t start_ms = 1795910400000;  // 2026-11-29T00:00:00Z; a multiple of interval_ms
  std::int64_t duration_ms = 3'600'000;
  std::int64_t interval_ms = 60'000;      // the scrape interval; job times are multiples of it
  std::uint64_t seed = 1;
};

// One job as it ran: `gpus` GPUs (their indices on `node`) held over [start, end).
struct HistoryJob {
  std::int64_t id = 0;  // 1, 2, ... in start order
  std::string pod, namespace_name, node, model;
  std::vector<int> gpus;
  std::int64_t start_ms = 0, end_ms = 0;
  double util = 0;      // GR_ENGINE_ACTIVE ratio while it runs
  double fb_used_mib = 0;
  double gpu_hours() const;
};

// The jobs of `spec`: per node, gangs of 1, 2 or 4 GPUs (no more than the node has) placed on its
// earliest-free GPUs with a gap of 0..3 intervals, lasting 3..20 intervals, all inside the window.
std::vector<HistoryJob> GenerateHistoryJobs(const HistorySpec& spec);

// Writes the series of `jobs` over the spec's window as Prometheus text (0.0.4, ms timestamps),
// metric family by family (# HELP, # TYPE), each series' samples in time order. `emit` receives
// complete lines in chunks.
void WriteHistoryExposition(const HistorySpec& spec, const std::vector<HistoryJob>& jobs,
                            const std::function<void(std::string_view)>& emit);

// The truth as CSV: job_id,pod,namespace,node,gpu_model,gpus,start,end,gpu_hours,util (times in
// RFC 3339).
std::string HistoryJobsCsv(const std::vector<HistoryJob>& jobs);

// The UUID the generator gives GPU `gpu` of node `node` (stable across runs).
std::string HistoryGpuUuid(std::string_view node, int gpu);

// dcgm-exporter's labels of GPU `gpu` of `node` (gpu, UUID, device, modelName, Hostname).
std::string DcgmGpuLabels(std::string_view node, int gpu, std::string_view model);

// Shared by the generators (this one and fleet_history.h): FNV-1a of `s`, for stable names.
std::uint64_t HistoryHash(std::string_view s);

// Text collected and handed to `emit` in chunks of about 64 KiB of complete lines.
class ChunkedText {
 public:
  explicit ChunkedText(const std::function<void(std::string_view)>& emit) : emit_(emit) {}
  std::string& out() { return out_; }
  // Hands the text over when it is large, or now when `force`.
  void Flush(bool force) {
    if (force || out_.size() > (1u << 16)) {
      if (!out_.empty()) emit_(out_);
      out_.clear();
    }
  }

 private:
  const std::function<void(std::string_view)>& emit_;
  std::string out_;
};

}  // namespace seedance::telemetry
