#include "seedance/telemetry/testing/exposition_generator.h"

#include <cstdio>

#include "seedance/core/rng.h"

namespace seedance::telemetry::testing {
namespace {

constexpr int kMetrics = 5;
struct MetricSpec {
  const char* name;
  const char* type;
  const char* help;
};
constexpr MetricSpec kMetricSpecs[kMetrics] = {
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active."},
    {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %)."},
    {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB)."},
    {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W)."},
    {"DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active."},
};

struct GpuState {
  std::string pod;
  std::string ns;
  std::string container;
  double util = 0.0;
  double mem = 0.0;
  std::int64_t until_ms = 0;
};

}  // namespace

std::string GeneratedGpuUuid(int node, int gpu) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "GPU-%08x-5c1e-4d2a-9b7f-%012x", 0x1000 + node, 0x100 + gpu);
  return buf;
}

std::int64_t SamplesPerScrape(const StreamSpec& spec) {
  return static_cast<std::int64_t>(spec.nodes) * spec.gpus_per_node * kMetrics;
}

void GenerateDcgmStream(const StreamSpec& spec, const std::function<void(std::string_view)>& emit) {
  Rng rng(spec.seed);
  int n_gpus = spec.nodes * spec.gpus_per_node;
  std::vector<GpuState> gpus(static_cast<std::size_t>(n_gpus));
  std::vector<std::string> uuids;
  for (int i = 0; i < n_gpus; ++i) {
    uuids.push_back(GeneratedGpuUuid(i / spec.gpus_per_node, i % spec.gpus_per_node));
  }
  std::string text;
  char line[512];
  std::int64_t pod_seq = 0;
  for (std::int64_t t = spec.start_ms; t < spec.start_ms + spec.duration_ms; t += spec.interval_ms) {
    for (auto& g : gpus) {
      if (t < g.until_ms) continue;
      // A new holder for 1-6 hours; one GPU in five stays idle.
      g.until_ms = t + (1 + static_cast<std::int64_t>(rng.Uniform(6))) * 3600 * 1000;
      if (rng.Bernoulli(0.2)) {
        g.pod.clear();
        g.ns.clear();
        g.container.clear();
        g.util = 0.0;
        g.mem = 0.0;
      } else {
        g.ns = spec.namespaces[rng.Uniform(spec.namespaces.size())];
        g.pod = "job-" + std::to_string(pod_seq++) + "-0";
        g.container = "main";
        g.util = 0.15 + 0.8 * rng.UniformDouble();
        g.mem = 8000 + 70000 * rng.UniformDouble();
      }
    }
    text.clear();
    for (int m = 0; m < kMetrics; ++m) {
      const MetricSpec& ms = kMetricSpecs[m];
      text += "# HELP ";
      text += ms.name;
      text += ' ';
      text += ms.help;
      text += "\n# TYPE ";
      text += ms.name;
      text += ' ';
      text += ms.type;
      text += '\n';
      for (int i = 0; i < n_gpus; ++i) {
        const GpuState& g = gpus[static_cast<std::size_t>(i)];
        double jitter = 0.9 + 0.2 * rng.UniformDouble();
        double util = std::min(1.0, g.util * jitter);
        double value = 0.0;
        switch (m) {
          case 0: value = util; break;
          case 1: value = std::min(100.0, util * 100.0 + 3.0); break;
          case 2: value = g.mem; break;
          case 3: value = 70.0 + 600.0 * util; break;
          default: value = util * 0.6; break;
        }
        int node = i / spec.gpus_per_node;
        int n = std::snprintf(
            line, sizeof(line),
            "%s{gpu=\"%d\",UUID=\"%s\",device=\"nvidia%d\",modelName=\"%s\",Hostname=\"gpu-node-%d\","
            "DCGM_FI_DRIVER_VERSION=\"550.54.15\",container=\"%s\",namespace=\"%s\",pod=\"%s\"} "
            "%.6f",
            ms.name, i % spec.gpus_per_node, uuids[static_cast<std::size_t>(i)].c_str(),
            i % spec.gpus_per_node, spec.model.c_str(), node, g.container.c_str(), g.ns.c_str(),
            g.pod.c_str(), value);
        text.append(line, static_cast<std::size_t>(n));
        if (spec.timestamps) {
          text += ' ';
          text += std::to_string(t);
        }
        text += '\n';
      }
    }
    emit(text);
  }
}

}  // namespace seedance::telemetry::testing
