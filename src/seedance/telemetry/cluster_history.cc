#include "seedance/telemetry/cluster_history.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "seedance/core/rng.h"
#include "seedance/telemetry/parse.h"

namespace seedance::telemetry {
namespace {

// The job holding GPU `gpu` of `node` at time t, or nullptr.
const HistoryJob* Holder(const std::vector<const HistoryJob*>& on_node, int gpu, std::int64_t t) {
  for (const HistoryJob* j : on_node) {
    if (t >= j->start_ms && t < j->end_ms && std::find(j->gpus.begin(), j->gpus.end(), gpu) != j->gpus.end()) {
      return j;
    }
  }
  return nullptr;
}

std::string PodLabels(const HistoryJob& j) {
  return fmt::format("namespace=\"{}\",pod=\"{}\"", j.namespace_name, j.pod);
}

}  // namespace

std::string DcgmGpuLabels(std::string_view node, int gpu, std::string_view model) {
  return fmt::format("gpu=\"{}\",UUID=\"{}\",device=\"nvidia{}\",modelName=\"{}\",Hostname=\"{}\"", gpu,
                     HistoryGpuUuid(node, gpu), gpu, model, node);
}

std::uint64_t HistoryHash(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

double HistoryJob::gpu_hours() const {
  return static_cast<double>(gpus.size()) * static_cast<double>(end_ms - start_ms) / 3'600'000.0;
}

std::string HistoryGpuUuid(std::string_view node, int gpu) {
  const std::uint64_t h = HistoryHash(fmt::format("{}/{}", node, gpu));
  return fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", h >> 32, (h >> 16) & 0xffff, h & 0xffff,
                     static_cast<unsigned>(gpu), h & 0xffffffffffffULL);
}

std::vector<HistoryJob> GenerateHistoryJobs(const HistorySpec& spec) {
  Rng rng(spec.seed);
  std::vector<HistoryJob> jobs;
  const std::int64_t end = spec.start_ms + spec.duration_ms;
  const std::int64_t step = spec.interval_ms;
  for (const HistoryNode& node : spec.nodes) {
    std::vector<std::int64_t> free_at(static_cast<std::size_t>(node.gpus), spec.start_ms);
    for (int misses = 0; misses < 3;) {
      static constexpr int kGangs[] = {1, 1, 2, 4};
      int gang = kGangs[rng.Uniform(4)];
      gang = std::min(gang, node.gpus);
      // The gang's GPUs: the earliest free ones (ties by index).
      std::vector<int> order(static_cast<std::size_t>(node.gpus));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return free_at[static_cast<std::size_t>(a)] < free_at[static_cast<std::size_t>(b)];
      });
      order.resize(static_cast<std::size_t>(gang));
      std::sort(order.begin(), order.end());
      std::int64_t start = 0;
      for (int g : order) start = std::max(start, free_at[static_cast<std::size_t>(g)]);
      start += rng.UniformInt(0, 3) * step;
      const std::int64_t stop = start + rng.UniformInt(3, 20) * step;
      if (stop > end) {
        ++misses;
        continue;
      }
      HistoryJob j;
      j.node = node.name;
      j.model = node.model;
      j.gpus = order;
      j.start_ms = start;
      j.end_ms = stop;
      j.namespace_name = spec.namespaces[rng.Uniform(spec.namespaces.size())];
      j.util = 0.35 + 0.6 * rng.UniformDouble();
      j.fb_used_mib = std::round(8'000 + 60'000 * rng.UniformDouble());
      for (int g : order) free_at[static_cast<std::size_t>(g)] = stop;
      jobs.push_back(std::move(j));
    }
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const HistoryJob& a, const HistoryJob& b) {
    return std::tie(a.start_ms, a.node, a.gpus) < std::tie(b.start_ms, b.node, b.gpus);
  });
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].id = static_cast<std::int64_t>(i + 1);
    jobs[i].pod = fmt::format("train-{:03d}-0", jobs[i].id);
  }
  return jobs;
}

void WriteHistoryExposition(const HistorySpec& spec, const std::vector<HistoryJob>& jobs,
                            const std::function<void(std::string_view)>& emit) {
  const std::int64_t end = spec.start_ms + spec.duration_ms;
  ChunkedText text(emit);
  std::string& out = text.out();
  const auto flush = [&text](bool force) { text.Flush(force); };
  // dcgm-exporter, Kubernetes mode: one series per (GPU, holder); idle GPUs have empty pod labels.
  struct Dcgm {
    const char* name;
    const char* help;
    const char* type;
  };
  static constexpr Dcgm kDcgm[] = {
      {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "gauge"},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.", "gauge"},
      {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", "gauge"},
      {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "gauge"},
  };
  for (std::size_t m = 0; m < std::size(kDcgm); ++m) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", kDcgm[m].name, kDcgm[m].help, kDcgm[m].name, kDcgm[m].type);
    for (const HistoryNode& node : spec.nodes) {
      std::vector<const HistoryJob*> on_node;
      for (const HistoryJob& j : jobs) {
        if (j.node == node.name) on_node.push_back(&j);
      }
      for (int g = 0; g < node.gpus; ++g) {
        const std::string gpu_labels = DcgmGpuLabels(node.name, g, node.model);
        for (std::int64_t t = spec.start_ms; t < end; t += spec.interval_ms) {
          const HistoryJob* j = Holder(on_node, g, t);
          const double util = j != nullptr ? j->util : 0.0;
          double v = 0;
          switch (m) {
            case 0: v = std::round(util * 100); break;
            case 1: v = std::round(util * 1000) / 1000; break;
            case 2: v = j != nullptr ? j->fb_used_mib : 0; break;
            default: v = std::round(60 + 340 * util); break;
          }
          out += fmt::format("{}{{{},container=\"{}\",namespace=\"{}\",pod=\"{}\"}} {} {}\n", kDcgm[m].name, gpu_labels,
                             j != nullptr ? "main" : "", j != nullptr ? j->namespace_name : "",
                             j != nullptr ? j->pod : "", v, t);
          flush(false);
        }
      }
    }
  }
  // kube-state-metrics: a pod's series while it exists; at its end it is Succeeded with a
  // completion time (one more sample, then it is gone).
  auto pod_times = [&](const HistoryJob& j, bool with_end, const std::function<void(std::int64_t)>& fn) {
    for (std::int64_t t = j.start_ms; t < (with_end ? j.end_ms + 1 : j.end_ms) && t < end; t += spec.interval_ms) fn(t);
  };
  out += "# HELP kube_pod_info Information about pod.\n# TYPE kube_pod_info gauge\n";
  for (const HistoryJob& j : jobs) {
    pod_times(j, true, [&](std::int64_t t) {
      out += fmt::format("kube_pod_info{{{},node=\"{}\",created_by_kind=\"Job\",created_by_name=\"{}\"}} 1 {}\n",
                         PodLabels(j), j.node, j.pod.substr(0, j.pod.size() - 2), t);
    });
  }
  out += "# HELP kube_pod_status_phase The pods current phase.\n# TYPE kube_pod_status_phase gauge\n";
  for (const char* phase : {"Running", "Succeeded"}) {
    const bool running = std::string_view(phase) == "Running";
    for (const HistoryJob& j : jobs) {
      pod_times(j, true, [&](std::int64_t t) {
        const bool now_running = t < j.end_ms;
        out += fmt::format("kube_pod_status_phase{{{},phase=\"{}\"}} {} {}\n", PodLabels(j), phase,
                           now_running == running ? 1 : 0, t);
      });
    }
  }
  out += "# HELP kube_pod_container_resource_requests The number of requested request resource by a container.\n"
         "# TYPE kube_pod_container_resource_requests gauge\n";
  for (const HistoryJob& j : jobs) {
    pod_times(j, false, [&](std::int64_t t) {
      out += fmt::format(
          "kube_pod_container_resource_requests{{{},container=\"main\",node=\"{}\",resource=\"nvidia_com_gpu\","
          "unit=\"integer\"}} {} {}\n",
          PodLabels(j), j.node, j.gpus.size(), t);
    });
  }
  out += "# HELP kube_pod_labels Kubernetes labels converted to Prometheus labels.\n# TYPE kube_pod_labels gauge\n";
  for (const HistoryJob& j : jobs) {
    pod_times(j, true, [&](std::int64_t t) {
      out += fmt::format("kube_pod_labels{{{},label_app=\"train\",label_job_name=\"{}\"}} 1 {}\n", PodLabels(j),
                         j.pod.substr(0, j.pod.size() - 2), t);
    });
  }
  out += "# HELP kube_pod_start_time Start time in unix timestamp for a pod.\n# TYPE kube_pod_start_time gauge\n";
  for (const HistoryJob& j : jobs) {
    pod_times(j, true, [&](std::int64_t t) {
      out += fmt::format("kube_pod_start_time{{{}}} {} {}\n", PodLabels(j), j.start_ms / 1000, t);
    });
  }
  out += "# HELP kube_pod_completion_time Completion time in unix timestamp for a pod.\n"
         "# TYPE kube_pod_completion_time gauge\n";
  for (const HistoryJob& j : jobs) {
    if (j.end_ms < end) out += fmt::format("kube_pod_completion_time{{{}}} {} {}\n", PodLabels(j), j.end_ms / 1000, j.end_ms);
  }
  flush(true);
}

std::string HistoryJobsCsv(const std::vector<HistoryJob>& jobs) {
  std::string out = "job_id,pod,namespace,node,gpu_model,gpus,start,end,gpu_hours,util\n";
  for (const HistoryJob& j : jobs) {
    out += fmt::format("{},{},{},{},{},{},{},{},{:.6f},{:.3f}\n", j.id, j.pod, j.namespace_name, j.node, j.model,
                       j.gpus.size(), FormatTimestamp(j.start_ms), FormatTimestamp(j.end_ms), j.gpu_hours(), j.util);
  }
  return out;
}

}  // namespace seedance::telemetry
