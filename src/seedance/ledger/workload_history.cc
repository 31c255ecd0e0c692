#include "seedance/ledger/workload_history.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "seedance/ledger/internal/sqlite.h"
#include "seedance/ledger/node_inventory.h"
#include "seedance/telemetry/sample.h"

namespace seedance::ledger {

using internal::Stmt;

namespace {

// What the reads gather for one pod.
struct PodAgg {
  std::string node, model;
  std::set<std::string> gpus;                           // UUID or node/index
  std::set<std::pair<std::string, std::int64_t>> gpu_steps;
  std::int64_t first_ms = INT64_MAX, last_ms = INT64_MIN;
  double usage_sum = 0, util_sum = 0;
  std::int64_t usage_n = 0, util_n = 0;
  double fb_peak = -1;
  bool sampled_outside = false;  // a sample just before or after the window: it ran past an edge
  int requested = 0;                                    // kube-state-metrics GPU request
  std::int64_t ksm_start_ms = -1, ksm_end_ms = -1;
  std::int64_t ksm_first_ms = INT64_MAX, ksm_last_ms = INT64_MIN;  // GPU request series seen
  std::string ksm_node;
  std::int64_t event_start_ms = INT64_MAX, event_end_ms = INT64_MIN;
  std::set<std::string> event_gpus;
  std::string event_node;
};

// The value of label `name` in a series key `metric{a="x",...}`, or "".
std::string KeyLabel(const std::string& key, std::string_view name) {
  for (auto& [k, v] : KeyLabels(key)) {
    if (k == name) return v;
  }
  return "";
}

}  // namespace

Result<std::vector<RanJob>> ReadRanJobs(Ledger& ledger, std::int64_t from_ms, std::int64_t to_ms,
                                        std::int64_t step_ms) {
  if (from_ms >= to_ms) return InvalidArgumentError("--from/--to: empty range");
  if (step_ms <= 0) return InvalidArgumentError("--step: must be positive");
  std::map<std::pair<std::string, std::string>, PodAgg> pods;  // (namespace, pod)

  // dcgm-exporter samples that name a pod.
  {
    Stmt st;
    SEEDANCE_RETURN_IF_ERROR(st.Prepare(ledger.db(),
        "SELECT s.metric, s.gpu_uuid, s.gpu, s.hostname, s.model, s.namespace, s.pod, x.ts_ms, x.value "
        "FROM series s JOIN samples x ON x.series_id = s.id WHERE s.field IN ('gr_engine_active', "
        "'gpu_util', 'fb_used') AND s.pod != '' AND x.ts_ms >= ? AND x.ts_ms < ? AND x.value IS NOT NULL"));
    // One step beyond each edge, to see who ran past it.
    st.Bind(1, from_ms - step_ms);
    st.Bind(2, to_ms + step_ms);
    while (true) {
      SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      if (const std::int64_t ts = st.Int(7); ts < from_ms || ts >= to_ms) {
        pods[{st.Text(5), st.Text(6)}].sampled_outside = true;
        continue;
      }
      const std::string metric = st.Text(0);
      const telemetry::FieldMapping f = telemetry::LookupField(metric);
      std::string gpu = st.Text(1);
      if (gpu.empty()) gpu = st.Text(3) + "/" + st.Text(2);
      PodAgg& p = pods[{st.Text(5), st.Text(6)}];
      const std::int64_t ts = st.Int(7);
      const double v = st.Double(8) * f.scale;
      if (p.node.empty()) p.node = st.Text(3);
      if (p.model.empty()) p.model = st.Text(4);
      p.gpus.insert(gpu);
      p.gpu_steps.insert({gpu, ts / step_ms});
      p.first_ms = std::min(p.first_ms, ts);
      p.last_ms = std::max(p.last_ms, ts);
      if (f.field == telemetry::Field::kGrEngineActive) {
        p.usage_sum += v;
        ++p.usage_n;
      } else if (f.field == telemetry::Field::kGpuUtil) {
        p.util_sum += v;
        ++p.util_n;
      } else if (f.field == telemetry::Field::kFbUsed) {
        p.fb_peak = std::max(p.fb_peak, v);
      }
    }
  }
  // kube-state-metrics: GPU requests, start and completion times, node. Read over the whole
  // ledger for the pods the window knows or that requested GPUs in it.
  {
    Stmt st;
    SEEDANCE_RETURN_IF_ERROR(st.Prepare(ledger.db(),
        "SELECT s.metric, s.key, s.namespace, s.pod, MAX(x.value), MIN(x.ts_ms), MAX(x.ts_ms) FROM series s "
        "JOIN samples x ON x.series_id = s.id WHERE s.metric IN ('kube_pod_container_resource_requests', "
        "'kube_pod_start_time', 'kube_pod_completion_time', 'kube_pod_info') AND s.pod != '' "
        "AND x.value IS NOT NULL GROUP BY s.id"));
    std::map<std::pair<std::string, std::string>, int> requests;
    while (true) {
      SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      const std::string metric = st.Text(0), key = st.Text(1);
      const std::pair<std::string, std::string> id{st.Text(2), st.Text(3)};
      const double v = st.Double(4);
      if (metric == "kube_pod_container_resource_requests") {
        if (KeyLabel(key, "resource").rfind("nvidia_com_", 0) != 0) continue;
        // One series per container: the pod's GPUs are their sum.
        requests[id] += static_cast<int>(std::llround(v));
        // A pod that only kube-state-metrics knows still ran if its request overlaps the window.
        if (st.Int(6) >= from_ms && st.Int(5) < to_ms) {
          PodAgg& p = pods[id];
          p.ksm_first_ms = std::min(p.ksm_first_ms, st.Int(5));
          p.ksm_last_ms = std::max(p.ksm_last_ms, st.Int(6));
        }
        if (const std::string node = KeyLabel(key, "node"); !node.empty()) pods[id].ksm_node = node;
        continue;
      }
      auto it = pods.find(id);
      if (it == pods.end()) continue;
      if (metric == "kube_pod_start_time") it->second.ksm_start_ms = static_cast<std::int64_t>(std::llround(v * 1000));
      if (metric == "kube_pod_completion_time") it->second.ksm_end_ms = static_cast<std::int64_t>(std::llround(v * 1000));
      if (metric == "kube_pod_info") {
        if (const std::string node = KeyLabel(key, "node"); !node.empty()) it->second.ksm_node = node;
      }
    }
    for (const auto& [id, n] : requests) {
      if (auto it = pods.find(id); it != pods.end()) it->second.requested = n;
    }
  }
  // Process/pod events.
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<ProcessEvent> events, ledger.Events(from_ms, to_ms));
  for (const ProcessEvent& e : events) {
    if (e.pod.empty()) continue;
    PodAgg& p = pods[{e.namespace_name, e.pod}];
    p.event_start_ms = std::min(p.event_start_ms, e.start_ms);
    p.event_end_ms = std::max(p.event_end_ms, e.end_ms);
    p.event_gpus.insert(e.gpu_uuid);
    if (p.event_node.empty()) p.event_node = e.node;
  }

  std::vector<RanJob> jobs;
  for (const auto& [id, p] : pods) {
    RanJob j;
    j.namespace_name = id.first;
    j.pod = id.second;
    std::vector<std::string> said;
    std::int64_t start = INT64_MAX, end = INT64_MIN;
    if (!p.gpus.empty()) {
      said.push_back("dcgm");
      start = p.first_ms / step_ms * step_ms;
      end = (p.last_ms / step_ms + 1) * step_ms;
      j.gpus = static_cast<int>(p.gpus.size());
      j.node = p.node;
    }
    if (!p.event_gpus.empty()) {
      said.push_back("events");
      if (p.gpus.empty()) {
        start = p.event_start_ms;
        end = p.event_end_ms;
        j.gpus = static_cast<int>(p.event_gpus.size());
        j.node = p.event_node;
      }
    }
    if (p.requested > 0 || p.ksm_start_ms >= 0 || p.ksm_end_ms >= 0) {
      said.push_back("kube-state-metrics");
      if (p.requested > 0) j.gpus = p.requested;
      if (start == INT64_MAX && p.ksm_first_ms != INT64_MAX) {  // only the request series: as long as it was seen
        start = p.ksm_first_ms / step_ms * step_ms;
        end = (p.ksm_last_ms / step_ms + 1) * step_ms;
      }
      if (p.ksm_start_ms >= 0) start = p.ksm_start_ms;
      if (p.ksm_end_ms >= 0) end = p.ksm_end_ms;
      if (j.node.empty()) j.node = p.ksm_node;
    }
    if (j.gpus <= 0 || start == INT64_MAX || end == INT64_MIN) continue;  // no GPU or no time: not a GPU job
    // Clipped: its run reaches past the window, or its end is not known (kube-state-metrics saw
    // it start and never complete: the end is where its samples stop).
    j.clipped = start < from_ms || end > to_ms || (p.sampled_outside && p.ksm_start_ms < 0 && p.ksm_end_ms < 0) ||
                (p.ksm_start_ms >= 0 && p.ksm_end_ms < 0);
    j.start_ms = std::max(start, from_ms);
    j.end_ms = std::min(end, to_ms);
    if (j.end_ms <= j.start_ms) continue;
    j.model_label = p.model;
    if (!p.model.empty()) {
      const std::string_view name = telemetry::CatalogModelName(p.model);
      if (!name.empty()) {
        auto g = gpu::ParseGpuName(name, gpu::NameMatch::kCanonical);
        if (g.has_value()) j.gpu = *g;
      }
    }
    j.sampled_gpu_ms = static_cast<std::int64_t>(p.gpu_steps.size()) * step_ms;
    if (p.usage_n > 0) {
      j.mean_util = p.usage_sum / static_cast<double>(p.usage_n);
    } else if (p.util_n > 0) {
      j.mean_util = p.util_sum / static_cast<double>(p.util_n);
    }
    j.peak_fb_mib = p.fb_peak;
    for (std::size_t i = 0; i < said.size(); ++i) j.evidence += (i > 0 ? "+" : "") + said[i];
    jobs.push_back(std::move(j));
  }
  std::sort(jobs.begin(), jobs.end(), [](const RanJob& a, const RanJob& b) {
    return std::tie(a.start_ms, a.namespace_name, a.pod) < std::tie(b.start_ms, b.namespace_name, b.pod);
  });
  return jobs;
}

double StepsPerSecondOn(const RanJob& job, gpu::GpuIndex other) {
  if (job.gpu == other) return 1.0;
  const gpu::GpuFacts& to = gpu::GpuAt(other);
  if (job.peak_fb_mib > 0 && to.memory_gib > 0 && job.peak_fb_mib > to.memory_gib * 1024.0) return 0.0;
  if (job.gpu >= gpu::Catalog().size()) return 0.0;
  const gpu::GpuFacts& from = gpu::GpuAt(job.gpu);
  if (from.fp16_tflops <= 0 || to.fp16_tflops <= 0) return 0.0;
  const double r = to.fp16_tflops / from.fp16_tflops;
  const double u = job.mean_util >= 0 ? std::clamp(job.mean_util, 0.0, 1.0) : 1.0;
  return 1.0 / (u / r + (1.0 - u));
}

}  // namespace seedance::ledger
