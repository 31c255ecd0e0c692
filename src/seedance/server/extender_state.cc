// The extender's state: nodes, configuration and policy, pods seen, the decision log, metrics.

#include "seedance/server/extender_internal.h"

#include <algorithm>
#include <string>
#include <vector>

#include "seedance/sched/frag.h"

namespace seedance::server {

Extender::Impl::Impl(App& a, ExtenderOptions o) : app(a), options(std::move(o)) {
  app.metrics.DeclareCounter(kDecisions, "Extender decisions by verb and result.");
  app.metrics.DeclareHistogram(kDuration, "Extender decision latency by verb.",
                               {50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3});
  app.metrics.DeclareGauge(kNodesGauge, "Nodes the extender knows.");
  app.metrics.DeclareGauge(kPodsGauge, "Pods bound in the extender's state.");
  app.metrics.DeclareGauge(kRetainedBytes, "Estimated bytes the extender keeps, by what (seen_pods, decision_log).");
  app.metrics.DeclareGauge(kRetainedEntries,
                           "Entries the extender keeps, by what (seen_pods, decision_log, pod_names).");
  app.metrics.DeclareCounter(kEvicted,
                             "Entries dropped oldest-first at a cap (server.limits), by what: seen_pods, "
                             "seen_pod_bytes, decision_pods, decision_log_bytes.");
  cluster = std::make_unique<ClusterState>(std::vector<NodeSpec>{});
  Configure(app.config.Get(), /*reseed=*/true);
}

void Extender::Impl::Count(std::string_view verb, std::string_view result, double seconds) {
  app.metrics.Inc(kDecisions, {{"verb", std::string(verb)}, {"result", std::string(result)}});
  app.metrics.Observe(kDuration, {{"verb", std::string(verb)}}, seconds);
}

void Extender::Impl::Gauges() {
  app.metrics.Set(kNodesGauge, {}, static_cast<double>(specs.size()));
  app.metrics.Set(kPodsGauge, {}, static_cast<double>(bound.size()));
  std::size_t bytes = 0, pods = 0, names = 0, logs = 0, picked = 0;
  {
    std::lock_guard seen_lock(seen_mu);
    bytes = seen_bytes;
    pods = seen.size();
    names = uid_of.size();
    picked = picks.size();  // picks shrink with the seen pods (Admit), under seen_mu or mu exclusive
  }
  {
    std::lock_guard log_lock(log_mu);
    app.metrics.Set(kRetainedBytes, {{"what", "decision_log"}}, static_cast<double>(decision_bytes));
    logs = decisions.size();
  }
  app.metrics.Set(kRetainedBytes, {{"what", "seen_pods"}}, static_cast<double>(bytes));
  app.metrics.Set(kRetainedEntries, {{"what", "seen_pods"}}, static_cast<double>(pods));
  app.metrics.Set(kRetainedEntries, {{"what", "decision_log"}}, static_cast<double>(logs));
  app.metrics.Set(kRetainedEntries, {{"what", "pod_names"}}, static_cast<double>(names));
  app.metrics.Set(kRetainedEntries, {{"what", "picks"}}, static_cast<double>(picked));
}

void Extender::Impl::Rebuild() {
  cluster = std::make_unique<ClusterState>(specs);
  priorities.assign(specs.size(), {});
  std::vector<Bound*> order;
  for (auto& [uid, b] : bound) order.push_back(&b);
  std::sort(order.begin(), order.end(), [](const Bound* a, const Bound* b) { return a->seq < b->seq; });
  std::vector<std::string> dropped;
  for (Bound* b : order) {
    auto it = node_index.find(b->pod.node_name);
    const NodeId n(static_cast<std::uint32_t>(it->second));
    b->node = n;
    priorities[n.value()][b->pod.priority]++;  // a dropped pod's is taken back by Release below
    if (!cluster->CanPlace(n, b->pod.spec)) {
      dropped.push_back(b->pod.uid);
      continue;
    }
    b->gpus = ChooseGpus(cluster->node(n), b->pod.spec);
    cluster->Bind(b->pod.spec, n, b->gpus);
  }
  for (const auto& uid : dropped) {
    app.Log("warn", "extender_pod_dropped", {{"pod", bound[uid].pod.key()}, {"reason", "node shrank"}});
    Release(uid, /*unbind=*/false);
  }
  picks.clear();
  BuildPolicy();
}

void Extender::Impl::BuildPolicy() {
  if (options.context.has_value() && options.context->tie_rank.size() == specs.size()) {
    context = *options.context;
  } else {
    std::vector<PodSpec> pods;
    for (const auto& [uid, b] : bound) pods.push_back(b.pod.spec);
    for (const auto& [uid, p] : seen) pods.push_back(p.spec);
    context = sched::NameOrderPolicyContext(specs, pods);
  }
  auto p = sched::MakePlacementPolicy(config->placement_policy, context);
  if (!p.has_value()) p = sched::MakePlacementPolicy("bestfit", context);  // CheckConfig vetted the name
  policy = std::move(*p);
}

void Extender::Impl::Configure(std::shared_ptr<const ServerConfig> c, bool reseed) {
  config = std::move(c);
  auto b = tenancy::QuotaBook::Build(config->tenancy.tenants, /*allow_borrowing=*/true);
  book.reset();
  named.clear();
  if (b.has_value()) {
    book = std::move(*b);
    named.assign(static_cast<std::size_t>(book->num_tenants()),
                 std::vector<bool>(static_cast<std::size_t>(book->num_resources()), false));
    for (const auto& t : config->tenancy.tenants) {
      const int ti = book->TenantIndex(t.name);
      if (ti < 0) continue;
      for (const auto& q : t.quota) {
        const int ri = book->ResourceIndex(q.resource);
        if (ri >= 0) named[static_cast<std::size_t>(ti)][static_cast<std::size_t>(ri)] = true;
      }
    }
  }
  for (auto& [uid, x] : bound) {
    const TenantInfo t = TenantOf(x.pod);
    x.tenant = t.book;
    x.pod.spec.qos = QosOf(t.tier);
    x.request = RequestOn(x.pod.spec, specs[x.node.value()].model, x.tenant);
    if (book && x.tenant >= 0) book->Add(x.tenant, x.request);
  }
  if (reseed) rng = Rng(config->seed).Fork(1);
  BuildPolicy();
}

K8sPod Extender::Impl::Admit(const K8sPod& in, TenantInfo* tenant) {
  K8sPod pod = in;
  *tenant = TenantOf(pod);
  pod.spec.qos = QosOf(tenant->tier);
  if (bound.count(pod.uid) != 0) return pod;
  std::lock_guard seen_lock(seen_mu);
  if (auto u = uid_of.find(pod.key()); u != uid_of.end() && u->second != pod.uid && bound.count(u->second) != 0) {
    return pod;
  }
  K8sPod kept = pod;
  kept.annotations.clear();
  kept.tolerations.clear();  // bind does not judge conditions: the scheduler decided
  std::erase_if(kept.labels, [](const auto& kv) { return kv.first != kTenantLabel && kv.first != kJobLabel; });
  const std::size_t bytes = PodBytes(kept);
  const bool fresh = seen.count(pod.uid) == 0;
  EraseSeen(pod.uid);
  seen.emplace(pod.uid, std::move(kept));
  seen_bytes += bytes;
  uid_of[pod.key()] = pod.uid;
  if (fresh) seen_order.push_back(pod.uid);
  const std::size_t cap = SeenByteCap();
  while (!seen_order.empty() && seen_order.front() != pod.uid &&
         (seen_order.size() > options.seen_pods || seen_bytes > cap)) {
    const std::string old = std::move(seen_order.front());
    seen_order.pop_front();
    if (auto it = seen.find(old); it != seen.end()) {
      app.metrics.Inc(kEvicted, {{"what", seen_bytes > cap ? "seen_pod_bytes" : "seen_pods"}});
      if (auto u = uid_of.find(it->second.key()); u != uid_of.end() && u->second == old) uid_of.erase(u);
      EraseSeen(old);
      picks.erase(old);
    }
  }
  return pod;
}

void Extender::Impl::EraseSeen(const std::string& uid) {
  auto it = seen.find(uid);
  if (it == seen.end()) return;
  seen_bytes -= std::min(seen_bytes, PodBytes(it->second));
  seen.erase(it);
}

std::size_t Extender::Impl::PodBytes(const K8sPod& p) {
  std::size_t n = sizeof(K8sPod) + 160 + 3 * p.uid.size() + 2 * (p.name.size() + p.namespace_name.size()) +
                  p.node_name.size() + p.phase.size() + p.spec.name.size();
  for (const auto& [k, v] : p.labels) n += 64 + k.size() + v.size();
  for (const auto& [k, v] : p.annotations) n += 64 + k.size() + v.size();
  return n;
}

std::size_t Extender::Impl::JsonBytes(const json& j) {
  std::size_t n = sizeof(json);
  if (j.is_string()) return n + j.get_ref<const std::string&>().size();
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) n += 48 + it.key().size() + JsonBytes(*it);
  } else if (j.is_array()) {
    for (const auto& e : j) n += JsonBytes(e);
  }
  return n;
}

void Extender::Impl::Record(const std::string& key, json entry) {
  const std::size_t bytes = JsonBytes(entry) + key.size() + 96;
  std::lock_guard log_lock(log_mu);
  auto [it, inserted] = decisions.try_emplace(key);
  if (inserted) decision_order.push_back(key);
  it->second.push_back(std::move(entry));
  decision_bytes += bytes;
  decision_bytes_of[key] += bytes;
  while (it->second.size() > options.decisions_per_pod) {
    const std::size_t b = JsonBytes(it->second.front()) + key.size() + 96;
    decision_bytes -= std::min(decision_bytes, b);
    decision_bytes_of[key] -= std::min(decision_bytes_of[key], b);
    it->second.pop_front();
  }
  const std::size_t cap = DecisionByteCap();
  while (!decision_order.empty() && decision_order.front() != key &&
         (decision_order.size() > options.decision_pods || decision_bytes > cap)) {
    const std::string old = std::move(decision_order.front());
    decision_order.pop_front();
    app.metrics.Inc(kEvicted, {{"what", decision_bytes > cap ? "decision_log_bytes" : "decision_pods"}});
    decision_bytes -= std::min(decision_bytes, decision_bytes_of[old]);
    decision_bytes_of.erase(old);
    decisions.erase(old);
  }
}

void Extender::Impl::UpsertNodesLocked(const std::vector<K8sNode>& nodes) {
  bool changed = false;
  for (const auto& n : nodes) {
    auto it = node_index.find(n.name);
    std::size_t i = 0;
    if (it == node_index.end()) {
      i = specs.size();
      node_index.emplace(n.name, i);
      specs.push_back(n.spec);
      conds.emplace_back();
      blocks.push_back(0);
      changed = true;
    } else {
      i = it->second;
      NodeSpec& s = specs[i];
      if (s.cpu != n.spec.cpu || s.memory != n.spec.memory || s.gpu_count != n.spec.gpu_count ||
          s.model != n.spec.model) {
        s = n.spec;
        changed = true;
      }
    }
    conds[i] = n.conditions;
    blocks[i] = MayBlock(n.conditions) ? 1 : 0;
  }
  if (changed) Rebuild();
}

void Extender::Impl::KeepNodes(const std::vector<bool>& keep) {
  std::size_t w = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!keep[i]) continue;
    if (w != i) {
      specs[w] = std::move(specs[i]);
      conds[w] = std::move(conds[i]);
      blocks[w] = blocks[i];
    }
    ++w;
  }
  specs.resize(w);
  conds.resize(w);
  blocks.resize(w);
  node_index.clear();
  for (std::size_t i = 0; i < specs.size(); ++i) node_index.emplace(specs[i].name, i);
}

}  // namespace seedance::server
