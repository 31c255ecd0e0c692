#include "seedance/ledger/workload_history.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <cctype>

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
  // The history's shape.
  std::set<std::int64_t> busy_steps;                    // steps a GPU of it was busy (> 0.05)
  std::int64_t created_ms = -1;                         // kube_pod_created
  std::string owner_kind, owner_name;                   // kube_pod_owner (the controller first)
  bool owner_is_controller = false;
  std::string info_kind, info_name;                     // kube_pod_info created_by_*
  std::vector<std::pair<std::string, std::string>> labels;  // kube_pod_labels label_*
};

constexpr double kBusyUtil = 0.05;  // a GPU is busy in a step when its utilization is above this

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
        if (v > kBusyUtil) p.busy_steps.insert(ts / step_ms);
      } else if (f.field == telemetry::Field::kGpuUtil) {
        p.util_sum += v;
        ++p.util_n;
        if (v > kBusyUtil) p.busy_steps.insert(ts / step_ms);
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
        "'kube_pod_start_time', 'kube_pod_completion_time', 'kube_pod_info', 'kube_pod_created', 'kube_pod_owner', "
        "'kube_pod_labels') AND s.pod != '' "
        "AND x.value IS NOT NULL GROUP BY s.id"));
    // (namespace, pod) -> container -> GPUs: one series per container and node label (a pod
    // pending with node="" then bound is two series of one request), so the largest per container.
    std::map<std::pair<std::string, std::string>, std::map<std::string, int>> requests;
    while (true) {
      SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      const std::string metric = st.Text(0), key = st.Text(1);
      const std::pair<std::string, std::string> id{st.Text(2), st.Text(3)};
      const double v = st.Double(4);
      if (metric == "kube_pod_container_resource_requests") {
        if (KeyLabel(key, "resource").rfind("nvidia_com_", 0) != 0) continue;
        // The pod's GPUs are the sum over its containers.
        int& r = requests[id][KeyLabel(key, "container")];
        r = std::max(r, static_cast<int>(std::llround(v)));
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
      PodAgg& p = it->second;
      if (metric == "kube_pod_created") p.created_ms = static_cast<std::int64_t>(std::llround(v * 1000));
      if (metric == "kube_pod_info") {
        for (const auto& [k, val] : KeyLabels(key)) {
          if (k == "node" && !val.empty()) p.ksm_node = val;
          if (k == "created_by_kind") p.info_kind = val;
          if (k == "created_by_name") p.info_name = val;
        }
      }
      if (metric == "kube_pod_owner") {
        const bool controller = KeyLabel(key, "owner_is_controller") == "true";
        const std::string kind = KeyLabel(key, "owner_kind");
        if (!kind.empty() && kind != "<none>" && (p.owner_kind.empty() || (controller && !p.owner_is_controller))) {
          p.owner_kind = kind;
          p.owner_name = KeyLabel(key, "owner_name");
          p.owner_is_controller = controller;
        }
      }
      if (metric == "kube_pod_labels") {
        for (auto& [k, val] : KeyLabels(key)) {
          if (k.starts_with("label_")) p.labels.emplace_back(std::move(k), std::move(val));
        }
      }
    }
    for (const auto& [id, by_container] : requests) {
      int n = 0;
      for (const auto& [container, gpus] : by_container) n += gpus;
      if (auto it = pods.find(id); it != pods.end()) it->second.requested = n;
    }
  }
  // The owners' and nodes' series: a replica set's deployment, a Job's creation, node labels.
  std::map<std::pair<std::string, std::string>, std::string> deployment_of;  // (ns, replicaset)
  std::map<std::pair<std::string, std::string>, std::int64_t> job_created;   // (ns, job) -> ms
  std::map<std::string, std::map<std::string, std::string>> node_labels;
  {
    Stmt st;
    SEEDANCE_RETURN_IF_ERROR(st.Prepare(ledger.db(),
        "SELECT s.metric, s.key, MIN(x.value) FROM series s JOIN samples x ON x.series_id = s.id WHERE s.metric IN "
        "('kube_replicaset_owner', 'kube_job_created', 'kube_node_labels') AND x.value IS NOT NULL GROUP BY s.id"));
    while (true) {
      SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      const std::string metric = st.Text(0);
      std::map<std::string, std::string> l;
      for (auto& [k, v] : KeyLabels(st.Text(1))) l[k] = std::move(v);
      if (metric == "kube_replicaset_owner" && l["owner_kind"] == "Deployment") {
        deployment_of[{l["namespace"], l["replicaset"]}] = l["owner_name"];
      } else if (metric == "kube_job_created") {
        job_created[{l["namespace"], l["job_name"]}] = static_cast<std::int64_t>(std::llround(st.Double(2) * 1000));
      } else if (metric == "kube_node_labels") {
        auto& labels = node_labels[l["node"]];
        for (auto& [k, v] : l) {
          if (k.starts_with("label_")) labels[k] = v;
        }
      }
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
    // The shape: owner (kube_pod_owner, else kube_pod_info's created_by), kind, submit, spot, busy.
    j.owner_kind = p.owner_kind.empty() ? p.info_kind : p.owner_kind;
    j.owner_name = p.owner_kind.empty() ? p.info_name : p.owner_name;
    if (j.owner_kind == "<none>") j.owner_kind.clear();
    j.kind = JobKindOf(j.owner_kind, p.labels);
    if (j.owner_kind == "ReplicaSet") {
      if (auto d = deployment_of.find({id.first, j.owner_name}); d != deployment_of.end()) {
        j.owner_kind = "Deployment";
        j.owner_name = d->second;
      }
    }
    j.submit_ms = p.created_ms;
    if (j.owner_kind == "Job") {
      if (auto c = job_created.find({id.first, j.owner_name}); c != job_created.end()) {
        j.submit_ms = j.submit_ms < 0 ? c->second : std::min(j.submit_ms, c->second);
      }
    }
    if (j.submit_ms >= 0) j.submit_ms = std::min(j.submit_ms, start);  // never after its start
    j.member_pods = {j.pod};
    if (!j.node.empty()) j.nodes = {j.node};
    if (auto n = node_labels.find(j.node); n != node_labels.end()) j.spot = IsSpotNode(n->second);
    if (p.usage_n + p.util_n > 0) {
      std::int64_t busy = 0;
      for (std::int64_t s : p.busy_steps) {
        const std::int64_t lo = std::max(s * step_ms, j.start_ms), hi = std::min((s + 1) * step_ms, j.end_ms);
        busy += std::max<std::int64_t>(0, hi - lo);
      }
      j.busy_ms = busy;
    }
    j.clipped_pods = j.clipped ? 1 : 0;
    jobs.push_back(std::move(j));
  }
  std::sort(jobs.begin(), jobs.end(), [](const RanJob& a, const RanJob& b) {
    return std::tie(a.start_ms, a.namespace_name, a.pod) < std::tie(b.start_ms, b.namespace_name, b.pod);
  });
  return jobs;
}

bool IsGangOwnerKind(std::string_view kind) {
  for (std::string_view k : {"Job", "JobSet", "PyTorchJob", "RayJob", "MPIJob", "TFJob", "XGBoostJob", "PaddleJob", "MXJob"}) {
    if (kind == k) return true;
  }
  return false;
}

std::string JobKindOf(std::string_view owner_kind, const std::vector<std::pair<std::string, std::string>>& labels) {
  if (owner_kind == "ReplicaSet" || owner_kind == "Deployment") return "service";
  if (owner_kind == "StatefulSet") return "notebook";
  for (const auto& [k, v] : labels) {
    if ((k == "label_app" && v == "jupyterhub") || (k == "label_component" && v == "singleuser-server") ||
        (k == "label_notebook_name" && !v.empty())) {
      return "notebook";
    }
  }
  return "batch";
}

namespace {
bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}
}  // namespace

bool IsSpotNode(const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : labels) {
    // kube-state-metrics sanitizes `.`, `/` and `-` to `_`; some versions also snake-case.
    if ((EqualsNoCase(k, "label_karpenter_sh_capacity_type") || EqualsNoCase(k, "label_eks_amazonaws_com_capacityType") ||
         EqualsNoCase(k, "label_eks_amazonaws_com_capacity_type")) &&
        EqualsNoCase(v, "spot")) {
      return true;
    }
    if (EqualsNoCase(k, "label_cloud_google_com_gke_spot") && EqualsNoCase(v, "true")) return true;
  }
  return false;
}

std::vector<RanJob> ShapeJobs(std::vector<RanJob> pods) {
  std::vector<RanJob> out;
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> gang;  // (ns, kind, name) -> out index
  std::sort(pods.begin(), pods.end(), [](const RanJob& a, const RanJob& b) {
    return std::tie(a.start_ms, a.namespace_name, a.pod) < std::tie(b.start_ms, b.namespace_name, b.pod);
  });
  for (RanJob& p : pods) {
    if (p.gpus_by_node.empty() && !p.node.empty()) p.gpus_by_node = {{p.node, p.gpus}};
    if (p.kind != "batch" || !IsGangOwnerKind(p.owner_kind) || p.owner_name.empty()) {
      out.push_back(std::move(p));
      continue;
    }
    const auto key = std::make_tuple(p.namespace_name, p.owner_kind, p.owner_name);
    auto it = gang.find(key);
    if (it == gang.end()) {
      gang.emplace(key, out.size());  // a one-pod Job keeps its pod's name
      out.push_back(std::move(p));
      continue;
    }
    RanJob& g = out[it->second];
    g.pod = g.owner_kind + "/" + g.owner_name;
    const double gw = static_cast<double>(g.gpus) * static_cast<double>(g.end_ms - g.start_ms);
    const double pw = static_cast<double>(p.gpus) * static_cast<double>(p.end_ms - p.start_ms);
    if (g.mean_util >= 0 && p.mean_util >= 0 && gw + pw > 0) {
      g.mean_util = (g.mean_util * gw + p.mean_util * pw) / (gw + pw);
    } else if (g.mean_util < 0) {
      g.mean_util = p.mean_util;
    }
    g.peak_fb_mib = std::max(g.peak_fb_mib, p.peak_fb_mib);
    g.gpus += p.gpus;
    g.pods += p.pods;
    g.start_ms = std::min(g.start_ms, p.start_ms);
    g.end_ms = std::max(g.end_ms, p.end_ms);
    if (p.submit_ms >= 0) g.submit_ms = g.submit_ms < 0 ? p.submit_ms : std::min(g.submit_ms, p.submit_ms);
    g.sampled_gpu_ms += p.sampled_gpu_ms;
    g.clipped = g.clipped || p.clipped;
    g.clipped_pods += p.clipped_pods;
    g.spot = g.spot || p.spot;
    g.busy_ms = std::max(g.busy_ms, p.busy_ms);
    if (g.gpu == 0xff) {
      g.gpu = p.gpu;
      g.model_label = p.model_label;
    }
    g.member_pods.insert(g.member_pods.end(), p.member_pods.begin(), p.member_pods.end());
    g.gpus_by_node.insert(g.gpus_by_node.end(), p.gpus_by_node.begin(), p.gpus_by_node.end());
    for (std::string& n : p.nodes) {
      if (std::find(g.nodes.begin(), g.nodes.end(), n) == g.nodes.end()) g.nodes.push_back(std::move(n));
    }
    if (g.evidence.find(p.evidence) == std::string::npos) g.evidence += "+" + p.evidence;
  }
  for (RanJob& j : out) std::sort(j.nodes.begin(), j.nodes.end());
  std::sort(out.begin(), out.end(), [](const RanJob& a, const RanJob& b) {
    return std::tie(a.start_ms, a.namespace_name, a.pod) < std::tie(b.start_ms, b.namespace_name, b.pod);
  });
  return out;
}

std::vector<ServiceReplicas> ServiceReplicasOverTime(const std::vector<RanJob>& jobs, std::int64_t to_ms) {
  // (ns, deployment) -> time -> replicas delta; the type and GPUs of its first replica.
  std::map<std::pair<std::string, std::string>, std::map<std::int64_t, int>> deltas;
  std::map<std::pair<std::string, std::string>, const RanJob*> first;
  for (const RanJob& j : jobs) {
    if (j.kind != "service") continue;
    const std::pair<std::string, std::string> key{j.namespace_name, j.owner_name.empty() ? j.pod : j.owner_name};
    first.emplace(key, &j);
    auto& d = deltas[key];
    d[j.start_ms] += 1;
    if (j.end_ms < to_ms) d[j.end_ms] -= 1;
  }
  std::vector<ServiceReplicas> out;
  for (const auto& [key, d] : deltas) {
    const RanJob& f = *first[key];
    int replicas = 0;
    for (const auto& [t, delta] : d) {
      if (delta == 0) continue;
      replicas += delta;
      out.push_back({key.first, key.second, f.gpu < gpu::Catalog().size() ? std::string(gpu::GpuAt(f.gpu).name) : f.model_label,
                     f.gpus, t, replicas});
    }
  }
  return out;
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

Result<std::vector<NodeUpTime>> NodeUpTimes(Ledger& ledger, std::int64_t from_ms, std::int64_t to_ms) {
  SEEDANCE_ASSIGN_OR_RETURN(const std::vector<NodeTotal> totals, NodeTotals(ledger, from_ms, to_ms));
  std::map<std::string, NodeUpTime> by;
  for (const NodeTotal& t : totals) {
    NodeUpTime& n = by[t.node];
    n.node = t.node;
    n.bill = t.bill;
    n.idle = t.idle;
  }
  internal::Stmt b;
  SEEDANCE_RETURN_IF_ERROR(b.Prepare(ledger.db(), "SELECT n.name, MIN(b.start_ms), MAX(b.end_ms), SUM(b.end_ms-b.start_ms) "
                                                  "FROM bills b JOIN nodes n ON n.id=b.node_id "
                                                  "WHERE b.start_ms>=?1 AND b.start_ms<?2 GROUP BY 1"));
  b.Bind(1, from_ms);
  b.Bind(2, to_ms);
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, b.Step());
    if (!row) break;
    NodeUpTime& n = by[b.Text(0)];
    n.node = b.Text(0);
    n.first_ms = b.Int(1);
    n.last_ms = b.Int(2);
    n.up_ms = b.Int(3);
  }
  internal::Stmt c;
  SEEDANCE_RETURN_IF_ERROR(c.Prepare(ledger.db(), "SELECT n.name, SUM(c.gpu_ms) FROM charges c JOIN nodes n ON n.id=c.node_id "
                                                  "WHERE c.start_ms>=?1 AND c.start_ms<?2 GROUP BY 1"));
  c.Bind(1, from_ms);
  c.Bind(2, to_ms);
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, c.Step());
    if (!row) break;
    NodeUpTime& n = by[c.Text(0)];
    if (n.up_ms > 0) n.gpus = static_cast<int>(std::llround(static_cast<double>(c.Int(1)) / static_cast<double>(n.up_ms)));
  }
  std::vector<NodeUpTime> out;
  for (auto& [name, n] : by) out.push_back(std::move(n));
  return out;
}

}  // namespace seedance::ledger
