// The extender's placements: bind, assumed placements (reservations) and their expiry, release.

#include "seedance/server/extender_internal.h"

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace seedance::server {

void Extender::Impl::ExpireReservations() {
  if (deadlines.empty() || deadlines.begin()->first > Now()) return;
  const std::int64_t now = Now();
  // Only the expired ones are visited: every verb and watch event calls this, and walking every
  // bound pod here was the extender's largest cost in a burst (issue 40's throughput profile).
  std::vector<std::string> expired;
  for (auto d = deadlines.begin(); d != deadlines.end() && d->first <= now; ++d) expired.push_back(d->second);
  for (const auto& uid : expired) {
    app.Log("info", "extender_reservation_expired", {{"pod", bound[uid].pod.key()}, {"node", bound[uid].pod.node_name}});
    Release(uid, /*unbind=*/true);
  }
  if (!expired.empty()) generation++;
}

void Extender::Impl::SetDeadline(const std::string& uid, Bound& b, std::int64_t until) {
  if (b.assumed_until_ms > 0) deadlines.erase({b.assumed_until_ms, uid});
  b.assumed_until_ms = until;
  if (until > 0) deadlines.emplace(until, uid);
}

bool Extender::Impl::HoldsReservation(const std::string& uid) const {
  if (deadlines.empty()) return false;
  auto it = bound.find(uid);
  return it != bound.end() && it->second.assumed_until_ms > 0;
}

void Extender::Impl::DropReservation(const std::string& uid) {
  ExpireReservations();
  if (HoldsReservation(uid)) {
    Release(uid, /*unbind=*/true);
    generation++;
  }
}

void Extender::Impl::Release(const std::string& uid, bool unbind) {
  auto it = bound.find(uid);
  if (it == bound.end()) return;
  Bound& b = it->second;
  SetDeadline(uid, b, 0);
  if (unbind) cluster->Unbind(b.pod.spec, b.node, b.gpus);
  if (b.node.value() < priorities.size()) {
    auto& on = priorities[b.node.value()];
    if (auto p = on.find(b.pod.priority); p != on.end() && --p->second == 0) on.erase(p);
  }
  if (book && b.tenant >= 0) book->Remove(b.tenant, b.request);
  uid_of.erase(b.pod.key());
  bound.erase(it);
}

Status Extender::Impl::BindPod(K8sPod pod, const std::string& node_name, const std::string& field, bool assume) {
  auto it = node_index.find(node_name);
  if (it == node_index.end()) {
    return NotFoundError(fmt::format("{}: unknown node '{}'", field, node_name));
  }
  const NodeId n(static_cast<std::uint32_t>(it->second));
  const std::int64_t until = assume && watch_confirms ? Now() + std::max<std::int64_t>(1, options.reservation_ms) : 0;
  if (auto b = bound.find(pod.uid); b != bound.end()) {
    if (b->second.node == n) {
      // Confirmed by the watch, or placed again by Seedance (a new deadline while unconfirmed).
      if (b->second.assumed_until_ms > 0 || until == 0) SetDeadline(pod.uid, b->second, until);
      return Status::Ok();
    }
    Release(pod.uid, /*unbind=*/true);
  }
  // The same name with a new uid is a new pod (the old one was deleted and recreated): the
  // old one's GPUs are freed first, so the name never points at a pod other than the bound one.
  if (auto u = uid_of.find(pod.key()); u != uid_of.end() && u->second != pod.uid && bound.count(u->second) != 0) {
    Release(u->second, /*unbind=*/true);
  }
  TenantInfo t;
  pod = Admit(pod, &t);
  const cluster::NodeState& ns = cluster->node(n);
  if (!cluster::Fits(ns, pod.spec)) {
    std::string why = FitReason(ns, pod.spec);
    if (!pod.spec.allowed_models.Accepts(ns.model) && pod.spec.is_gpu()) why = "fit: GPU model not accepted";
    return FailedPreconditionError(fmt::format("{}: {} on {}", field, why, node_name));
  }
  GpuAssignment gpus;
  if (auto p = picks.find(pod.uid); p != picks.end() && p->second.node == node_name &&
                                    p->second.version == cluster->version(n)) {
    gpus = p->second.gpus;
  } else {
    gpus = ChooseGpus(ns, pod.spec);
  }
  picks.erase(pod.uid);
  // The scheduler (or the cluster) decided: bind even where the audit mask would not place.
  const cluster::NodeEligibility e = cluster->eligibility(n);
  cluster->SetEligibility(n, cluster::NodeEligibility::kAll);
  cluster->Bind(pod.spec, n, gpus);
  cluster->SetEligibility(n, e);
  if (priorities.size() < specs.size()) priorities.resize(specs.size());
  priorities[n.value()][pod.priority]++;
  pod.node_name = node_name;
  Bound b;
  b.node = n;
  b.gpus = gpus;
  b.tenant = t.book;
  b.request = RequestOn(pod.spec, specs[n.value()].model, t.book);
  b.seq = next_seq++;
  SetDeadline(pod.uid, b, until);
  if (book && b.tenant >= 0) book->Add(b.tenant, b.request);
  EraseSeen(pod.uid);
  uid_of[pod.key()] = pod.uid;
  b.pod = std::move(pod);
  bound.emplace(b.pod.uid, std::move(b));
  return Status::Ok();
}

}  // namespace seedance::server
