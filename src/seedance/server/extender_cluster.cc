// What the cluster watch and the state endpoints change or read: nodes, pods, config, snapshots.

#include "seedance/server/extender_internal.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "seedance/cluster/gpu_model.h"

namespace seedance::server {

Status Extender::UpsertNodes(const std::vector<K8sNode>& nodes) {
  std::unique_lock lock(impl_->mu);
  impl_->generation++;
  impl_->UpsertNodesLocked(nodes);
  impl_->Gauges();
  return Status::Ok();
}

Status Extender::DeleteNode(const std::string& name) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  auto it = m.node_index.find(name);
  if (it == m.node_index.end()) return NotFoundError(fmt::format("node: {} unknown", name));
  const std::size_t gone = it->second;
  std::vector<std::string> released;
  for (const auto& [uid, b] : m.bound) {
    if (b.node.value() == gone) released.push_back(uid);
  }
  for (const auto& uid : released) m.Release(uid, /*unbind=*/true);
  std::vector<bool> keep(m.specs.size(), true);
  keep[gone] = false;
  m.KeepNodes(keep);
  m.Rebuild();
  m.Gauges();
  m.app.Log("info", "extender_node_deleted", {{"node", name}, {"pods_released", released.size()}});
  return Status::Ok();
}

Status Extender::UpsertPods(const std::vector<K8sPod>& pods) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  m.ExpireReservations();
  Status first = Status::Ok();
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const K8sPod& p = pods[i];
    const std::string field = pods.size() == 1 ? std::string("spec.nodeName") : fmt::format("items[{}].spec.nodeName", i);
    m.listed_pending.erase(p.uid);
    if (p.phase == "Succeeded" || p.phase == "Failed") {
      m.Release(p.uid, /*unbind=*/true);
      m.EraseSeen(p.uid);
      m.picks.erase(p.uid);
      if (auto u = m.uid_of.find(p.key()); u != m.uid_of.end() && u->second == p.uid) m.uid_of.erase(u);
      continue;
    }
    if (p.node_name.empty()) {
      Impl::TenantInfo t;
      m.Admit(p, &t);
      m.listed_pending.insert(p.uid);
      continue;
    }
    Status s = m.BindPod(p, p.node_name, field);
    if (!s.ok() && first.ok()) first = s;
  }
  m.Gauges();
  return first;
}

Status Extender::DeletePod(const std::string& key) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  auto it = m.uid_of.find(key);
  if (it == m.uid_of.end()) return NotFoundError(fmt::format("pod: {} unknown", key));
  const std::string uid = it->second;
  m.listed_pending.erase(uid);
  m.Release(uid, /*unbind=*/true);
  m.EraseSeen(uid);
  m.picks.erase(uid);
  m.uid_of.erase(key);
  m.Gauges();
  return Status::Ok();
}

Result<json> Extender::Decisions(const std::string& pod_key) const {
  std::shared_lock lock(impl_->mu);
  json list = json::array();
  {
    std::lock_guard log_lock(impl_->log_mu);
    auto it = impl_->decisions.find(pod_key);
    if (it == impl_->decisions.end()) return NotFoundError(fmt::format("pod: no decision recorded for {}", pod_key));
    for (const auto& d : it->second) list.push_back(d);
  }
  json out{{"pod", pod_key}, {"decisions", std::move(list)}};
  std::lock_guard seen_lock(impl_->seen_mu);
  if (auto u = impl_->uid_of.find(pod_key); u != impl_->uid_of.end()) {
    if (auto b = impl_->bound.find(u->second); b != impl_->bound.end()) out["bound_to"] = b->second.pod.node_name;
  }
  return out;
}

Status Extender::CheckConfig(const ServerConfig& config) const {
  sched::PolicyContext ctx;
  auto p = sched::MakePlacementPolicy(config.placement_policy, ctx);
  if (!p.has_value()) return InvalidArgumentError("placement_policy: " + p.error().message());
  auto b = tenancy::QuotaBook::Build(config.tenancy.tenants, true);
  if (!b.has_value()) return InvalidArgumentError("tenancy: " + b.error().message());
  return Status::Ok();
}

void Extender::ApplyConfig(const std::shared_ptr<const ServerConfig>& config) {
  std::unique_lock lock(impl_->mu);
  impl_->generation++;
  const bool reseed = config->seed != impl_->config->seed ||
                      config->placement_policy != impl_->config->placement_policy;
  impl_->Configure(config, reseed);
}

Status Extender::ReplaceNodes(const std::vector<K8sNode>& nodes) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  std::set<std::string> keep;
  for (const auto& n : nodes) keep.insert(n.name);
  std::vector<std::string> gone;
  for (const auto& s : m.specs) {
    if (!keep.count(s.name)) gone.push_back(s.name);
  }
  if (!gone.empty()) {
    std::vector<std::string> released;
    for (const auto& [uid, b] : m.bound) {
      if (!keep.count(m.specs[b.node.value()].name)) released.push_back(uid);
    }
    for (const auto& uid : released) m.Release(uid, /*unbind=*/false);
    std::vector<bool> kept(m.specs.size());
    for (std::size_t i = 0; i < m.specs.size(); ++i) kept[i] = keep.count(m.specs[i].name) != 0;
    m.KeepNodes(kept);
    m.Rebuild();
    m.app.Log("info", "extender_nodes_replaced", {{"removed", gone.size()}, {"pods_released", released.size()}});
  }
  m.UpsertNodesLocked(nodes);
  m.Gauges();
  return Status::Ok();
}

void Extender::WatchConfirmsBinds() {
  std::unique_lock lock(impl_->mu);
  impl_->watch_confirms = true;
}

std::vector<std::pair<K8sPod, Status>> Extender::ReplacePods(const std::vector<K8sPod>& pods) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  m.ExpireReservations();
  std::set<std::string> active, ended;
  for (const auto& p : pods) {
    if (p.phase == "Succeeded" || p.phase == "Failed") {
      ended.insert(p.uid);
    } else if (!p.node_name.empty()) {
      active.insert(p.uid);
    }
  }
  // An assumed placement the list does not show yet stays: the list (a resync replays the
  // reflector's store) may lag what Seedance just placed; its reservation deadline still holds.
  std::vector<std::string> released;
  for (const auto& [uid, b] : m.bound) {
    if (active.count(uid) != 0) continue;
    if (b.assumed_until_ms > 0 && ended.count(uid) == 0) continue;
    released.push_back(uid);
  }
  for (const auto& uid : released) m.Release(uid, /*unbind=*/true);
  std::vector<std::pair<K8sPod, Status>> failed;
  m.listed_pending.clear();
  for (const auto& p : pods) {
    if (p.phase == "Succeeded" || p.phase == "Failed") {
      m.seen.erase(p.uid);
      continue;
    }
    if (p.node_name.empty()) {
      Impl::TenantInfo t;
      m.Admit(p, &t);
      m.listed_pending.insert(p.uid);
      continue;
    }
    Status s = m.BindPod(p, p.node_name, "spec.nodeName");
    if (!s.ok()) failed.emplace_back(p, std::move(s));
  }
  m.Gauges();
  return failed;
}

json Extender::Snapshot() const {
  const Impl& m = *impl_;
  std::shared_lock lock(m.mu);
  json nodes = json::object();
  for (std::size_t i = 0; i < m.specs.size(); ++i) {
    const NodeSpec& s = m.specs[i];
    const cluster::NodeState& n = m.cluster->node(NodeId(static_cast<std::uint32_t>(i)));
    nodes[s.name] = {{"cpu_m", s.cpu.raw()},
                     {"memory_mi", s.memory.raw()},
                     {"gpus", s.gpu_count},
                     {"gpu_model", s.model == cluster::kNoGpuModel ? std::string() : std::string(cluster::GpuModelName(s.model))},
                     {"gpu_milli_used", static_cast<std::int64_t>(s.gpu_count) * cluster::kMilliPerGpu - n.TotalGpuIdle()}};
  }
  json pods = json::object();
  for (const auto& [uid, b] : m.bound) {
    pods[b.pod.key()] = {{"node", b.pod.node_name}, {"uid", uid}, {"gpu_milli", b.pod.spec.total_gpu_milli()}};
    if (b.assumed_until_ms > 0) pods[b.pod.key()]["assumed"] = true;
  }
  json quota = json::object();
  if (m.book) {
    for (int t = 0; t < m.book->num_tenants(); ++t) {
      json use = json::object();
      for (int r = 0; r < m.book->num_resources(); ++r) use[m.book->resource_name(r)] = m.book->usage(t, r);
      quota[m.book->tenant_name(t)] = std::move(use);
    }
  }
  return json{{"nodes", std::move(nodes)}, {"pods", std::move(pods)}, {"quota", std::move(quota)}};
}

std::size_t Extender::num_nodes() const {
  std::shared_lock lock(impl_->mu);
  return impl_->specs.size();
}

std::size_t Extender::num_bound() const {
  std::shared_lock lock(impl_->mu);
  return impl_->bound.size();
}

std::string Extender::BoundNode(const std::string& pod_key) const {
  std::shared_lock lock(impl_->mu);
  std::lock_guard seen_lock(impl_->seen_mu);
  auto u = impl_->uid_of.find(pod_key);
  if (u == impl_->uid_of.end()) return "";
  auto b = impl_->bound.find(u->second);
  return b == impl_->bound.end() ? "" : b->second.pod.node_name;
}

}  // namespace seedance::server
