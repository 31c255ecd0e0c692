#pragma once

// dcgm-exporter samples of Slurm nodes for the controller's GPU telemetry tests: what the exporter
// writes outside Kubernetes (no pod labels; Hostname = the Slurm node's name, gpu = the device
// index Slurm gives in `scontrol show job -d`), one scrape per interval with timestamps, as the
// ledger ingests them (telemetry::InputFormat::kDcgm).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace seedance::slurm::testing {

struct DcgmGpu {
  std::string node;
  int index = 0;
  std::string model = "NVIDIA H100 80GB HBM3";
  // Utilisation (GR_ENGINE_ACTIVE ratio) at time t_ms.
  std::function<double(std::int64_t)> util = [](std::int64_t) { return 0.0; };
  std::string uuid() const { return fmt::format("GPU-{}-{:02d}-5eed-slurm", node, index); }
};

// Scrapes at from_ms, from_ms + interval, ... < to_ms of every GPU: GR_ENGINE_ACTIVE, GPU_UTIL and
// FB_USED (busy GPUs hold memory).
inline std::string DcgmScrapes(const std::vector<DcgmGpu>& gpus, std::int64_t from_ms, std::int64_t to_ms,
                               std::int64_t interval_ms) {
  std::string out;
  for (std::int64_t t = from_ms; t < to_ms; t += interval_ms) {
    for (const auto& g : gpus) {
      const std::string labels = fmt::format(
          "gpu=\"{}\",UUID=\"{}\",device=\"nvidia{}\",modelName=\"{}\",Hostname=\"{}\",DCGM_FI_DRIVER_VERSION=\"550.54.15\"",
          g.index, g.uuid(), g.index, g.model, g.node);
      const double u = g.util(t);
      out += fmt::format("DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{}}} {:.3f} {}\n", labels, u, t);
      out += fmt::format("DCGM_FI_DEV_GPU_UTIL{{{}}} {} {}\n", labels, static_cast<int>(u * 100 + 0.5), t);
      out += fmt::format("DCGM_FI_DEV_FB_USED{{{}}} {} {}\n", labels, u > 0 ? 40000 : 0, t);
    }
  }
  return out;
}

}  // namespace seedance::slurm::testing
