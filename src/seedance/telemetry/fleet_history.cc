#include "seedance/telemetry/fleet_history.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <numbers>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "seedance/core/rng.h"
#include "seedance/gpu/catalog.h"
#include "seedance/telemetry/cluster_history.h"
#include "seedance/telemetry/parse.h"

namespace seedance::telemetry {
namespace {

constexpr std::int64_t kHourMs = 3'600'000;

std::string Hex(std::string_view seed, int digits) {
  const std::string h = fmt::format("{:016x}", HistoryHash(seed));  // the low digits: every input byte reaches them
  return h.substr(h.size() - static_cast<std::size_t>(digits));
}

double Fp16(const std::string& type) {
  auto g = gpu::ParseGpuName(type, gpu::NameMatch::kCanonical);
  return g.has_value() ? gpu::GpuAt(*g).fp16_tflops : 0.0;
}

// A duration between lo and hi, log-uniform, rounded up to the step.
std::int64_t LogUniformMs(Rng& rng, double lo_ms, double hi_ms, std::int64_t step) {
  const double ms = lo_ms * std::exp(rng.UniformDouble() * std::log(hi_ms / lo_ms));
  return std::max<std::int64_t>(step, (static_cast<std::int64_t>(ms) + step - 1) / step * step);
}

struct NodeState {
  std::string name;
  std::size_t pool = 0;
  std::vector<int> holder;  // per GPU: -1 free, else the running pod's slot
  int free = 0;
};

struct Deployment {
  std::string name, replicaset, gpu_type;
  int gpus = 1, min_replicas = 1, max_replicas = 1;
  std::vector<std::size_t> running;  // rows (service replicas) running, oldest first
  int desired = 0;
};

// The deployment's replicas at time t: lowest at 04:00, highest at 16:00 (UTC), changed hourly.
int DesiredReplicas(const Deployment& d, std::int64_t t_ms) {
  const double hour = static_cast<double>((t_ms / kHourMs) % 24);
  const double shape = 0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * (hour - 4.0) / 24.0);
  return d.min_replicas + static_cast<int>(std::lround(shape * (d.max_replicas - d.min_replicas)));
}

class Placer {
 public:
  Placer(const FleetHistorySpec& spec) : spec_(spec) {
    for (std::size_t p = 0; p < spec.pools.size(); ++p) {
      for (const std::string& n : spec.pools[p].nodes) {
        NodeState s;
        s.name = n;
        s.pool = p;
        s.holder.assign(static_cast<std::size_t>(spec.pools[p].gpus_per_node), -1);
        s.free = spec.pools[p].gpus_per_node;
        nodes_.push_back(std::move(s));
      }
    }
  }

  // Places `count` pods of `gpus` GPUs of `type` all at once (best fit on spot nodes when allowed,
  // then committed, then on-demand), marking them held by slots first_slot, first_slot + 1, ...
  // Returns (node index, GPU indices) per pod, or empty when they do not all fit.
  std::vector<std::pair<std::size_t, std::vector<int>>> Place(const std::string& type, int gpus, int count,
                                                              bool spot_ok, int first_slot) {
    std::vector<std::pair<std::size_t, std::vector<int>>> out;
    for (int k = 0; k < count; ++k) {
      std::size_t best = nodes_.size();
      std::tuple<int, int> best_key{INT32_MAX, INT32_MAX};
      for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const FleetHistoryPool& pool = spec_.pools[nodes_[i].pool];
        if (pool.gpu_type != type || nodes_[i].free < gpus || (pool.spot && !spot_ok)) continue;
        // Work that tolerates spot prefers it (a preferred node affinity, as cost-minded teams set it).
        const int tier = pool.spot ? 0 : (pool.committed ? 1 : 2);
        const std::tuple<int, int> key{tier, nodes_[i].free};
        if (key < best_key) {
          best_key = key;
          best = i;
        }
      }
      if (best == nodes_.size()) {
        for (auto& [n, g] : out) Release(n, g);
        return {};
      }
      std::vector<int> held;
      NodeState& n = nodes_[best];
      for (std::size_t g = 0; g < n.holder.size() && static_cast<int>(held.size()) < gpus; ++g) {
        if (n.holder[g] < 0) {
          n.holder[g] = first_slot + k;
          held.push_back(static_cast<int>(g));
        }
      }
      n.free -= gpus;
      out.emplace_back(best, std::move(held));
    }
    return out;
  }

  void Release(std::size_t node, const std::vector<int>& gpus) {
    for (int g : gpus) nodes_[node].holder[static_cast<std::size_t>(g)] = -1;
    nodes_[node].free += static_cast<int>(gpus.size());
  }
  const std::string& NodeName(std::size_t i) const { return nodes_[i].name; }

 private:
  const FleetHistorySpec& spec_;
  std::vector<NodeState> nodes_;
};

}  // namespace

FleetHistoryPool NumberedPool(const std::string& name, const std::string& gpu_type, const std::string& model, int nodes,
                              bool committed, bool spot) {
  FleetHistoryPool p;
  p.name = name;
  p.gpu_type = gpu_type;
  p.model = model;
  p.committed = committed;
  p.spot = spot;
  for (int i = 0; i < nodes; ++i) p.nodes.push_back(fmt::format("{}-{}", name, i));
  return p;
}

std::string FleetWorkload::row_name() const {
  if (pods.size() >= 2) return owner_kind + "/" + owner;
  return pods.empty() ? owner : pods.front().name;
}
std::int64_t FleetWorkload::start_ms() const {
  std::int64_t s = INT64_MAX;
  for (const FleetPod& p : pods) s = std::min(s, p.start_ms);
  return s;
}
std::int64_t FleetWorkload::end_ms() const {
  std::int64_t e = INT64_MIN;
  for (const FleetPod& p : pods) e = std::max(e, p.end_ms);
  return e;
}

Result<FleetHistory> GenerateFleetHistory(const FleetHistorySpec& spec) {
  if (spec.pools.empty()) return InvalidArgumentError("the fleet has no node pools to put nodes in");
  if (spec.teams.empty()) return InvalidArgumentError("no team namespaces to put work in");
  if (spec.interval_ms <= 0 || spec.duration_ms <= 0) return InvalidArgumentError("the interval and duration must be positive");
  const std::int64_t step = spec.interval_ms;
  const std::int64_t end = spec.start_ms + spec.duration_ms;
  Rng rng(spec.seed);
  // Types: services on the type with the lowest FP16 peak; batch on the others (all when only one);
  // notebooks on the batch type with the lowest peak.
  std::map<std::string, int> capacity;  // committed + on-demand GPUs per type
  std::set<std::string> types;
  for (const FleetHistoryPool& p : spec.pools) {
    types.insert(p.gpu_type);
    if (!p.spot) capacity[p.gpu_type] += p.gpus_per_node * static_cast<int>(p.nodes.size());
  }
  std::vector<std::string> by_peak(types.begin(), types.end());
  std::stable_sort(by_peak.begin(), by_peak.end(), [](const std::string& a, const std::string& b) { return Fp16(a) < Fp16(b); });
  const std::string service_type = by_peak.front();
  std::vector<std::string> batch_types(by_peak.size() > 1 ? by_peak.begin() + 1 : by_peak.begin(), by_peak.end());
  const std::string notebook_type = batch_types.front();
  const std::string big_type = batch_types.back();

  FleetHistory h;
  std::vector<FleetWorkload> pending_batch;  // generated, by submit
  // Batch: Poisson arrivals per type at load x capacity / mean GPU-hours of a job (below: 20 %
  // PyTorchJob gangs of 2..4 pods x 8 GPUs for 1..6 h, log-uniform, mean 66.9 GPU-h; 80 % Jobs of
  // 1, 1, 2, 4 or 8 GPUs for 10 min..4 h, mean 3.86 GPU-h).
  std::int64_t next_id = 1;
  for (const std::string& type : batch_types) {
    const double mean_gpu_h = 0.2 * 24.0 * (5.0 / std::log(6.0)) + 0.8 * 3.2 * (230.0 / 60.0 / std::log(24.0));
    const double per_hour = spec.load * static_cast<double>(capacity[type]) / mean_gpu_h;
    if (per_hour <= 0) continue;
    double t = static_cast<double>(spec.start_ms) + rng.Exponential(per_hour) * static_cast<double>(kHourMs);
    while (t < static_cast<double>(end)) {
      FleetWorkload w;
      w.kind = "batch";
      w.gpu_type = type;
      w.namespace_name = spec.teams[rng.Uniform(spec.teams.size())];
      w.submit_ms = static_cast<std::int64_t>(t) / step * step;
      w.tolerates_spot = rng.Bernoulli(0.3);
      const std::int64_t id = next_id++;
      if (rng.Bernoulli(0.2)) {
        w.owner_kind = "PyTorchJob";
        w.owner = fmt::format("ptj-{:04d}", id);
        w.gpus_per_pod = 8;
        const int n = static_cast<int>(rng.UniformInt(2, 4));
        for (int k = 0; k < n; ++k) {
          FleetPod p;
          p.name = k == 0 ? w.owner + "-master-0" : fmt::format("{}-worker-{}", w.owner, k - 1);
          w.pods.push_back(std::move(p));
        }
        w.duration_ms = LogUniformMs(rng, 3.6e6, 6 * 3.6e6, step);
      } else {
        static constexpr int kGpus[] = {1, 1, 2, 4, 8};
        w.owner_kind = "Job";
        w.owner = fmt::format("train-{:04d}", id);
        w.gpus_per_pod = kGpus[rng.Uniform(5)];
        FleetPod p;
        p.name = w.owner + "-" + Hex(w.owner, 5);
        w.pods.push_back(std::move(p));
        w.duration_ms = LogUniformMs(rng, 6e5, 4 * 3.6e6, step);
      }
      const double util = 0.35 + 0.6 * rng.UniformDouble();
      for (FleetPod& p : w.pods) {
        p.util = std::round(util * 1000) / 1000;
        p.fb_used_mib = std::round(8'000 + 60'000 * rng.UniformDouble());
      }
      pending_batch.push_back(std::move(w));
      t += rng.Exponential(per_hour) * static_cast<double>(kHourMs);
    }
  }
  std::stable_sort(pending_batch.begin(), pending_batch.end(),
                   [](const FleetWorkload& a, const FleetWorkload& b) { return a.submit_ms < b.submit_ms; });
  // Notebooks: about 3 sessions every 4 hours, 1 GPU, 30 min..5 h, busy 10..40 min, idle 20..120 min.
  std::vector<FleetWorkload> pending_nb;
  const int notebooks = std::max(2, static_cast<int>(spec.duration_ms * 3 / (4 * kHourMs)));
  for (int k = 0; k < notebooks; ++k) {
    FleetWorkload w;
    w.kind = "notebook";
    w.gpu_type = notebook_type;
    w.namespace_name = spec.teams[rng.Uniform(spec.teams.size())];
    w.owner_kind = "StatefulSet";
    w.owner = fmt::format("user{:02d}-nb{}", rng.UniformInt(1, 24), k);
    w.submit_ms = spec.start_ms + static_cast<std::int64_t>(rng.UniformDouble() * 0.8 * static_cast<double>(spec.duration_ms)) / step * step;
    w.duration_ms = LogUniformMs(rng, 1.8e6, 5 * 3.6e6, step);
    FleetPod p;
    p.name = w.owner + "-0";
    p.util = std::round((0.3 + 0.4 * rng.UniformDouble()) * 1000) / 1000;
    p.fb_used_mib = std::round(4'000 + 30'000 * rng.UniformDouble());
    // Busy stretches as offsets from its start (set at placement).
    for (std::int64_t o = 0; o < w.duration_ms;) {
      const std::int64_t busy = LogUniformMs(rng, 10.0 * 60'000, 40.0 * 60'000, step);
      p.busy.emplace_back(o, std::min(o + busy, w.duration_ms));
      o += busy + LogUniformMs(rng, 20.0 * 60'000, 120.0 * 60'000, step);
    }
    w.pods.push_back(std::move(p));
    pending_nb.push_back(std::move(w));
  }
  std::stable_sort(pending_nb.begin(), pending_nb.end(),
                   [](const FleetWorkload& a, const FleetWorkload& b) { return a.submit_ms < b.submit_ms; });
  // Services: two 1-GPU deployments on the service type (up to half and a quarter of it), one of
  // 4-GPU replicas on the biggest batch type when there is one.
  std::vector<Deployment> deployments;
  const int cs = std::max(1, capacity[service_type]);
  const auto add_deployment = [&](const std::string& name, const std::string& type, int gpus, int max_replicas) {
    Deployment d;
    d.name = name;
    d.replicaset = name + "-" + Hex(name, 6);
    d.gpu_type = type;
    d.gpus = gpus;
    d.max_replicas = std::max(1, max_replicas);
    d.min_replicas = std::max(1, d.max_replicas / 4);
    deployments.push_back(std::move(d));
  };
  add_deployment("llm-chat", service_type, 1, cs / 2);
  add_deployment("embed", service_type, 1, cs / 4);
  if (by_peak.size() > 1) add_deployment("llm-70b", big_type, 4, 2);

  // The clock: releases, service targets, arrivals, then placement (services, notebooks, batch FIFO
  // per type: a head that does not fit blocks its type).
  Placer placer(spec);
  struct Running {
    std::size_t row, pod, node;
  };
  std::vector<Running> running;
  std::vector<std::size_t> queue;  // rows waiting, in submit order
  std::size_t next_batch = 0, next_nb = 0;
  std::vector<FleetWorkload>& rows = h.rows;
  int replica_counter = 0;
  for (std::int64_t t = spec.start_ms; t < end; t += step) {
    for (std::size_t i = 0; i < running.size();) {
      FleetPod& p = rows[running[i].row].pods[running[i].pod];
      if (p.end_ms <= t) {
        placer.Release(running[i].node, p.gpus);
        running[i] = running.back();
        running.pop_back();
      } else {
        ++i;
      }
    }
    for (Deployment& d : deployments) {
      d.running.erase(std::remove_if(d.running.begin(), d.running.end(),
                                     [&](std::size_t r) { return rows[r].pods[0].end_ms <= t; }),
                      d.running.end());
      if (t == spec.start_ms || (t - spec.start_ms) % kHourMs == 0) d.desired = DesiredReplicas(d, t);
      // Scale down: the newest replicas end now; queued ones are withdrawn first.
      int have = static_cast<int>(d.running.size());
      for (auto it = queue.begin(); it != queue.end();) {
        if (rows[*it].kind == "service" && rows[*it].owner == d.name && have >= d.desired) {
          it = queue.erase(it);
        } else {
          if (rows[*it].kind == "service" && rows[*it].owner == d.name) ++have;
          ++it;
        }
      }
      while (static_cast<int>(d.running.size()) > d.desired) {
        FleetPod& p = rows[d.running.back()].pods[0];
        p.end_ms = t;
        for (std::size_t i = 0; i < running.size(); ++i) {
          if (running[i].row == d.running.back()) {
            placer.Release(running[i].node, p.gpus);
            running[i] = running.back();
            running.pop_back();
            break;
          }
        }
        d.running.pop_back();
      }
      for (; have < d.desired; ++have) {
        FleetWorkload w;
        w.kind = "service";
        w.namespace_name = "serving";
        w.owner_kind = "Deployment";
        w.owner = d.name;
        w.gpu_type = d.gpu_type;
        w.gpus_per_pod = d.gpus;
        w.submit_ms = t;
        w.duration_ms = INT64_MAX / 4;  // until scaled down
        FleetPod p;
        p.name = d.replicaset + "-" + Hex(fmt::format("{}/{}", d.replicaset, replica_counter++), 5);
        p.util = std::round((0.2 + 0.4 * rng.UniformDouble()) * 1000) / 1000;
        p.fb_used_mib = std::round(12'000 + 8'000 * rng.UniformDouble());
        w.pods.push_back(std::move(p));
        rows.push_back(std::move(w));
        queue.push_back(rows.size() - 1);
      }
    }
    for (; next_nb < pending_nb.size() && pending_nb[next_nb].submit_ms <= t; ++next_nb) {
      rows.push_back(std::move(pending_nb[next_nb]));
      queue.push_back(rows.size() - 1);
    }
    for (; next_batch < pending_batch.size() && pending_batch[next_batch].submit_ms <= t; ++next_batch) {
      rows.push_back(std::move(pending_batch[next_batch]));
      queue.push_back(rows.size() - 1);
    }
    std::set<std::string> blocked;
    for (int pass = 0; pass < 2; ++pass) {  // services and notebooks first, then batch
      for (auto it = queue.begin(); it != queue.end();) {
        FleetWorkload& w = rows[*it];
        if ((w.kind == "batch") != (pass == 1) || blocked.count(w.gpu_type)) {
          ++it;
          continue;
        }
        const int slot = static_cast<int>(*it) * 16;
        auto placed = placer.Place(w.gpu_type, w.gpus_per_pod, static_cast<int>(w.pods.size()),
                                   w.kind == "batch" && w.tolerates_spot, slot);
        if (placed.empty()) {
          if (w.kind == "batch") blocked.insert(w.gpu_type);
          ++it;
          continue;
        }
        for (std::size_t k = 0; k < placed.size(); ++k) {
          FleetPod& p = w.pods[k];
          p.node = placer.NodeName(placed[k].first);
          p.gpus = placed[k].second;
          p.created_ms = w.submit_ms;
          p.start_ms = t;
          p.end_ms = w.duration_ms >= INT64_MAX / 4 ? INT64_MAX / 4 : t + w.duration_ms;
          for (auto& [a, b] : p.busy) {
            a += t;
            b += t;
          }
          running.push_back({*it, k, placed[k].first});
        }
        if (w.kind == "service") {
          for (Deployment& d : deployments) {
            if (d.name == w.owner) d.running.push_back(*it);
          }
        }
        it = queue.erase(it);
      }
    }
  }
  h.never_started = 0;
  std::vector<FleetWorkload> placed;
  for (FleetWorkload& w : rows) {
    if (w.pods.empty() || w.pods.front().node.empty()) {
      h.never_started += w.kind == "service" ? 0 : 1;  // a queued replica is withdrawn, not lost
      continue;
    }
    placed.push_back(std::move(w));
  }
  std::sort(placed.begin(), placed.end(), [](const FleetWorkload& a, const FleetWorkload& b) {
    return std::make_tuple(a.start_ms(), a.namespace_name, a.row_name()) <
           std::make_tuple(b.start_ms(), b.namespace_name, b.row_name());
  });
  for (std::size_t i = 0; i < placed.size(); ++i) placed[i].id = static_cast<std::int64_t>(i + 1);
  h.rows = std::move(placed);
  return h;
}

namespace {

// kube-state-metrics' label name for a Kubernetes label: `label_` + the key with every character
// outside [a-zA-Z0-9_] as `_`.
std::string KsmLabelName(std::string_view key) {
  std::string out = "label_";
  for (char c : key) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += keep ? c : '_';
  }
  return out;
}

double PodUtilAt(const FleetPod& p, std::int64_t t) {
  if (p.busy.empty()) return p.util;
  for (const auto& [a, b] : p.busy) {
    if (t >= a && t < b) return p.util;
  }
  return 0.0;
}

// The pod's labels as kube_pod_labels writes them.
std::string PodLabelSet(const FleetWorkload& w, const FleetPod& p) {
  if (w.kind == "notebook") {
    return fmt::format("label_app=\"notebook\",label_notebook_name=\"{}\",label_statefulset_kubernetes_io_pod_name=\"{}\"",
                       w.owner, p.name);
  }
  if (w.kind == "service") {
    const std::string rs = p.name.substr(0, p.name.rfind('-'));
    return fmt::format("label_app=\"{}\",label_pod_template_hash=\"{}\"", w.owner, rs.substr(rs.rfind('-') + 1));
  }
  if (w.owner_kind == "PyTorchJob") {
    return fmt::format("label_training_kubeflow_org_job_name=\"{}\",label_training_kubeflow_org_replica_type=\"{}\"",
                       w.owner, p.name.find("-master-") != std::string::npos ? "master" : "worker");
  }
  return fmt::format("label_batch_kubernetes_io_job_name=\"{}\",label_job_name=\"{}\"", w.owner, w.owner);
}

// The controlling owner of a pod: a Deployment's pods are owned by its ReplicaSet.
std::pair<std::string, std::string> PodOwner(const FleetWorkload& w, const FleetPod& p) {
  if (w.kind == "service") return {"ReplicaSet", p.name.substr(0, p.name.rfind('-'))};
  return {w.owner_kind, w.owner};
}

}  // namespace

void WriteFleetHistoryExposition(const FleetHistorySpec& spec, const FleetHistory& history,
                                 const std::function<void(std::string_view)>& emit) {
  const std::int64_t end = spec.start_ms + spec.duration_ms;
  const std::int64_t step = spec.interval_ms;
  ChunkedText text(emit);
  std::string& out = text.out();
  const auto flush = [&text](bool force) { text.Flush(force); };
  // Who holds each GPU when: node -> GPU -> (start, end, row, pod), by start.
  struct Hold {
    std::int64_t start, end;
    const FleetWorkload* w;
    const FleetPod* p;
  };
  std::map<std::string, std::vector<std::vector<Hold>>> holds;
  std::map<std::string, const FleetHistoryPool*> pool_of;
  for (const FleetHistoryPool& pool : spec.pools) {
    for (const std::string& n : pool.nodes) {
      holds[n].resize(static_cast<std::size_t>(pool.gpus_per_node));
      pool_of[n] = &pool;
    }
  }
  for (const FleetWorkload& w : history.rows) {
    for (const FleetPod& p : w.pods) {
      for (int g : p.gpus) holds[p.node][static_cast<std::size_t>(g)].push_back({p.start_ms, p.end_ms, &w, &p});
    }
  }
  for (auto& [n, gpus] : holds) {
    for (auto& v : gpus) std::sort(v.begin(), v.end(), [](const Hold& a, const Hold& b) { return a.start < b.start; });
  }
  struct Dcgm {
    const char* name;
    const char* help;
  };
  static constexpr Dcgm kDcgm[] = {
      {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %)."},
      {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active."},
      {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB)."},
  };
  for (std::size_t m = 0; m < std::size(kDcgm); ++m) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", kDcgm[m].name, kDcgm[m].help, kDcgm[m].name);
    for (const FleetHistoryPool& pool : spec.pools) {
      for (const std::string& node : pool.nodes) {
        for (int g = 0; g < pool.gpus_per_node; ++g) {
          const std::string gpu_labels = DcgmGpuLabels(node, g, pool.model);
          const auto& hs = holds[node][static_cast<std::size_t>(g)];
          std::size_t k = 0;
          for (std::int64_t t = spec.start_ms; t < end; t += step) {
            while (k < hs.size() && hs[k].end <= t) ++k;
            const Hold* h = k < hs.size() && hs[k].start <= t ? &hs[k] : nullptr;
            const double util = h != nullptr ? PodUtilAt(*h->p, t) : 0.0;
            double v = 0;
            switch (m) {
              case 0: v = std::round(util * 100); break;
              case 1: v = util; break;
              default: v = h != nullptr ? h->p->fb_used_mib : 0; break;
            }
            out += fmt::format("{}{{{},container=\"{}\",namespace=\"{}\",pod=\"{}\"}} {} {}\n", kDcgm[m].name, gpu_labels,
                               h != nullptr ? "main" : "", h != nullptr ? h->w->namespace_name : "",
                               h != nullptr ? h->p->name : "", v, t);
            flush(false);
          }
        }
      }
    }
  }
  // kube-state-metrics. A pod's series from its creation (or its start) to its end, one more
  // sample at its end with the completion time; the window's times only.
  const auto each_step = [&](std::int64_t from, std::int64_t to, const std::function<void(std::int64_t)>& fn) {
    for (std::int64_t t = std::max(from, spec.start_ms); t <= to && t < end; t += step) fn(t);
  };
  const auto family = [&](const char* name, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
  };
  const auto each_pod = [&](const std::function<void(const FleetWorkload&, const FleetPod&, const std::string&)>& fn) {
    for (const FleetWorkload& w : history.rows) {
      for (const FleetPod& p : w.pods) {
        fn(w, p, fmt::format("namespace=\"{}\",pod=\"{}\"", w.namespace_name, p.name));
        flush(false);
      }
    }
  };
  family("kube_pod_created", "Unix creation timestamp");
  each_pod([&](const FleetWorkload&, const FleetPod& p, const std::string& pl) {
    each_step(p.created_ms, p.end_ms, [&](std::int64_t t) {
      out += fmt::format("kube_pod_created{{{}}} {} {}\n", pl, p.created_ms / 1000, t);
    });
  });
  family("kube_pod_owner", "Information about the Pod's owner.");
  each_pod([&](const FleetWorkload& w, const FleetPod& p, const std::string& pl) {
    const auto owner = PodOwner(w, p);  // not a structured binding: clang 14 cannot capture one
    const std::string& kind = owner.first;
    const std::string& name = owner.second;
    each_step(p.created_ms, p.end_ms, [&](std::int64_t t) {
      out += fmt::format("kube_pod_owner{{{},owner_kind=\"{}\",owner_name=\"{}\",owner_is_controller=\"true\"}} 1 {}\n",
                         pl, kind, name, t);
    });
  });
  family("kube_pod_labels", "Kubernetes labels converted to Prometheus labels.");
  each_pod([&](const FleetWorkload& w, const FleetPod& p, const std::string& pl) {
    const std::string labels = PodLabelSet(w, p);
    each_step(p.created_ms, p.end_ms, [&](std::int64_t t) {
      out += fmt::format("kube_pod_labels{{{},{}}} 1 {}\n", pl, labels, t);
    });
  });
  family("kube_pod_info", "Information about pod.");
  each_pod([&](const FleetWorkload& w, const FleetPod& p, const std::string& pl) {
    const auto owner = PodOwner(w, p);
    const std::string& kind = owner.first;
    const std::string& name = owner.second;
    each_step(p.start_ms, p.end_ms, [&](std::int64_t t) {
      out += fmt::format("kube_pod_info{{{},node=\"{}\",created_by_kind=\"{}\",created_by_name=\"{}\"}} 1 {}\n", pl,
                         p.node, kind, name, t);
    });
  });
  // The request's node label is the pod's node: empty while it is pending, so a pod that waited
  // has two series of one request (as kube-state-metrics shows it).
  family("kube_pod_container_resource_requests", "The number of requested request resource by a container.");
  each_pod([&](const FleetWorkload& w, const FleetPod& p, const std::string& pl) {
    const auto request = [&](std::int64_t from, std::int64_t to, const std::string& node) {
      each_step(from, to, [&](std::int64_t t) {
        out += fmt::format("kube_pod_container_resource_requests{{{},container=\"main\",node=\"{}\","
                           "resource=\"nvidia_com_gpu\",unit=\"integer\"}} {} {}\n",
                           pl, node, w.gpus_per_pod, t);
      });
    };
    request(p.created_ms, p.start_ms - 1, "");
    request(p.start_ms, p.end_ms - 1, p.node);
  });
  family("kube_pod_start_time", "Start time in unix timestamp for a pod.");
  each_pod([&](const FleetWorkload&, const FleetPod& p, const std::string& pl) {
    each_step(p.start_ms, p.end_ms, [&](std::int64_t t) {
      out += fmt::format("kube_pod_start_time{{{}}} {} {}\n", pl, p.start_ms / 1000, t);
    });
  });
  family("kube_pod_completion_time", "Completion time in unix timestamp for a pod.");
  each_pod([&](const FleetWorkload&, const FleetPod& p, const std::string& pl) {
    if (p.end_ms < end) out += fmt::format("kube_pod_completion_time{{{}}} {} {}\n", pl, p.end_ms / 1000, p.end_ms);
  });
  family("kube_job_created", "Unix creation timestamp");
  for (const FleetWorkload& w : history.rows) {
    if (w.owner_kind != "Job") continue;
    each_step(w.submit_ms, w.end_ms(), [&](std::int64_t t) {
      out += fmt::format("kube_job_created{{namespace=\"{}\",job_name=\"{}\"}} {} {}\n", w.namespace_name, w.owner,
                         w.submit_ms / 1000, t);
    });
    flush(false);
  }
  // Deployments: their replica set's owner and the desired replicas (the replicas that exist).
  std::map<std::pair<std::string, std::string>, std::vector<const FleetPod*>> replicas;  // (deployment, rs)
  for (const FleetWorkload& w : history.rows) {
    if (w.kind == "service") replicas[{w.owner, PodOwner(w, w.pods[0]).second}].push_back(&w.pods[0]);
  }
  family("kube_replicaset_owner", "Information about the ReplicaSet's owner.");
  for (const auto& entry : replicas) {
    const auto& d = entry.first;
    each_step(spec.start_ms, end, [&](std::int64_t t) {
      out += fmt::format("kube_replicaset_owner{{namespace=\"serving\",replicaset=\"{}\",owner_kind=\"Deployment\","
                         "owner_name=\"{}\",owner_is_controller=\"true\"}} 1 {}\n",
                         d.second, d.first, t);
    });
  }
  family("kube_deployment_spec_replicas", "Number of desired pods for a deployment.");
  for (const auto& entry : replicas) {
    const auto& d = entry.first;
    const auto& pods = entry.second;
    each_step(spec.start_ms, end, [&](std::int64_t t) {
      int n = 0;
      for (const FleetPod* p : pods) n += p->created_ms <= t && t < p->end_ms ? 1 : 0;
      out += fmt::format("kube_deployment_spec_replicas{{namespace=\"serving\",deployment=\"{}\"}} {} {}\n", d.first, n, t);
    });
    flush(false);
  }
  family("kube_node_labels", "Kubernetes labels converted to Prometheus labels.");
  for (const FleetHistoryPool& pool : spec.pools) {
    std::vector<std::pair<std::string, std::string>> labels;
    for (const auto& [k, v] : pool.labels) labels.emplace_back(KsmLabelName(k), v);
    std::sort(labels.begin(), labels.end());
    std::string ls;
    for (const auto& [k, v] : labels) ls += fmt::format(",{}=\"{}\"", k, v);
    for (const std::string& node : pool.nodes) {
      each_step(spec.start_ms, end, [&](std::int64_t t) {
        out += fmt::format("kube_node_labels{{node=\"{}\"{}}} 1 {}\n", node, ls, t);
      });
      flush(false);
    }
  }
  flush(true);
}

std::string FleetHistoryTruthCsv(const FleetHistorySpec& spec, const FleetHistory& history) {
  const std::int64_t end = spec.start_ms + spec.duration_ms;
  std::map<std::string, bool> spot;
  for (const FleetHistoryPool& pool : spec.pools) {
    for (const std::string& n : pool.nodes) spot[n] = pool.spot;
  }
  std::string out = "id,kind,namespace,pod,owner_kind,owner,gpu_type,gpus,pods,submit,start,end,clipped,nodes,spot,busy_s\n";
  for (const FleetWorkload& w : history.rows) {
    std::set<std::string> nodes;
    bool on_spot = false;
    std::int64_t busy = 0;
    const std::int64_t stop = std::min(w.end_ms(), end);
    for (const FleetPod& p : w.pods) {
      nodes.insert(p.node);
      on_spot = on_spot || spot[p.node];
    }
    // Busy: the steps its (first pod's) GPUs are busy, as the samples show them.
    const FleetPod& p = w.pods.front();
    for (std::int64_t t = p.start_ms; t < std::min(p.end_ms, end); t += spec.interval_ms) {
      busy += PodUtilAt(p, t) > 0.05 ? spec.interval_ms : 0;
    }
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", w.id, w.kind, w.namespace_name, w.row_name(),
                       w.owner_kind, w.owner, w.gpu_type, w.gpus(), w.pods.size(), FormatTimestamp(w.submit_ms),
                       FormatTimestamp(w.start_ms()), FormatTimestamp(stop), w.end_ms() >= end ? "yes" : "no",
                       fmt::join(nodes, ";"), on_spot ? "true" : "false", busy / 1000);
  }
  return out;
}

FleetHistoryStats FleetHistoryStatsOf(const FleetHistorySpec& spec, const FleetHistory& history) {
  FleetHistoryStats s;
  const std::int64_t end = spec.start_ms + spec.duration_ms;
  for (const FleetHistoryPool& pool : spec.pools) {
    s.nodes += static_cast<int>(pool.nodes.size());
    s.gpus += static_cast<int>(pool.nodes.size()) * pool.gpus_per_node;
  }
  std::set<std::string> deployments;
  double queue_sum = 0;
  for (const FleetWorkload& w : history.rows) {
    s.pods += static_cast<int>(w.pods.size());
    for (const FleetPod& p : w.pods) {
      s.gpu_hours += static_cast<double>(p.gpus.size()) * static_cast<double>(std::min(p.end_ms, end) - p.start_ms) / 3.6e6;
    }
    if (w.kind == "batch") {
      ++s.batch;
      s.gangs += w.pods.size() >= 2 ? 1 : 0;
      s.max_queue_ms = std::max(s.max_queue_ms, w.start_ms() - w.submit_ms);
      queue_sum += static_cast<double>(w.start_ms() - w.submit_ms) / 1000.0;
    } else if (w.kind == "service") {
      ++s.service_replicas;
      deployments.insert(w.owner);
    } else {
      ++s.notebooks;
    }
  }
  s.deployments = static_cast<int>(deployments.size());
  s.mean_queue_s = s.batch > 0 ? queue_sum / s.batch : 0;
  return s;
}

}  // namespace seedance::telemetry
