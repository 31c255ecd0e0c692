// The extender verbs kube-scheduler calls: filter, prioritize, preempt, bind (extender_internal.h lists
// the other parts of the decision core).

#include "seedance/server/extender_internal.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "seedance/sched/victims.h"

namespace seedance::server {

Extender::Extender(App& app, ExtenderOptions options)
    : impl_(std::make_unique<Impl>(app, std::move(options))) {}
Extender::~Extender() = default;

namespace {
double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

namespace {
// The request's NodeNames when they are its candidates (node-cache mode), to move from.
std::vector<std::string>* NamesToTake(ExtenderArgs& args) {
  return args.nodes.has_value() || !args.node_names.has_value() ? nullptr : &*args.node_names;
}
}  // namespace

FilterResult Extender::Filter(const ExtenderArgs& args) { return RunFilter(args, nullptr); }
FilterResult Extender::Filter(ExtenderArgs&& args) { return RunFilter(args, NamesToTake(args)); }
std::vector<HostPriority> Extender::Prioritize(const ExtenderArgs& args) { return RunPrioritize(args, nullptr); }
std::vector<HostPriority> Extender::Prioritize(ExtenderArgs&& args) { return RunPrioritize(args, NamesToTake(args)); }

FilterResult Extender::RunFilter(const ExtenderArgs& args, std::vector<std::string>* take) {
  const auto t0 = std::chrono::steady_clock::now();
  Impl& m = *impl_;
  bool reserved = false;
  {
    std::shared_lock probe(m.mu);
    reserved = m.HoldsReservation(args.pod.uid);
  }
  if (reserved) {
    std::unique_lock drop(m.mu);
    m.DropReservation(args.pod.uid);
  }
  std::shared_lock lock(m.mu);  // filters run side by side; only Admit's memo takes seen_mu
  std::unique_lock<std::shared_mutex> exclusive(m.mu, std::defer_lock);  // for a reservation or a pick
  const Impl::Request req = m.Begin(args);
  const auto& [pod, tenant, trip] = req;
  // server.extender_decide_at_filter: the policy picks among the nodes that pass, here.
  const bool decide = m.config->extender_decide_at_filter;
  FilterResult r;
  if (args.nodes.has_value()) r.nodes.emplace();
  std::vector<std::string> scratch;
  const std::vector<std::string>& candidates = args.Candidates(&scratch);
  if (r.nodes.has_value()) {
    r.nodes->reserve(candidates.size());
  } else {
    r.node_names.reserve(candidates.size());
  }
  Impl::Lookups look(m.app.health);
  Impl::Screen screen;  // the passing nodes as the policy sees them (decide at filter)
  screen.generation = m.generation;
  std::vector<std::string> passing;  // their names in full-node mode (node-cache mode: r.node_names)
  json reasons = json::object();
  std::map<std::string_view, std::int64_t> by_rule;
  std::size_t failed = 0;
  // One text per distinct (rule, numbers): a full cluster fails thousands of nodes on a handful of reasons.
  std::map<std::tuple<Rule, std::int64_t, std::int64_t>, std::string> texts;
  auto reason = [&](NodeCheck& c) -> std::string {
    if (!c.text.empty()) return std::move(c.text);
    auto [it, fresh] = texts.try_emplace({c.rule, c.a, c.b});
    if (fresh) it->second = Impl::Reason(c, look);
    return it->second;
  };
  const std::string* only = nullptr;  // the one node that passes, if exactly one does (moved: see below)
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string& name = candidates[i];
    std::size_t index = NodeCheck::kUnknown;
    NodeCheck c = m.Check(name, pod, tenant, trip, look, &index);
    if (c.verdict == Verdict::kPass) {
      only = only == nullptr && (r.nodes.has_value() ? r.nodes->empty() : r.node_names.empty()) ? &name : nullptr;
      if (decide) {
        m.ScreenNode(screen, name, index, c, look);
        if (r.nodes.has_value()) passing.push_back(name);
      }
      if (r.nodes.has_value()) {
        r.nodes->push_back(args.raw_nodes[i]);
      } else if (take != nullptr) {
        r.node_names.push_back(std::move((*take)[i]));  // `name` (the same string) is not read again
      } else {
        r.node_names.push_back(name);
      }
      continue;
    }
    by_rule[RuleName(c)] += 1;
    std::string why = reason(c);
    if (++failed <= m.options.reasons_per_decision) reasons[name] = why;
    // kube-scheduler's DefaultPreemption can make room only by evicting pods of lower priority on
    // the node: where none is bound, the node is unresolvable and its dry run is skipped.
    const bool resolvable = c.verdict == Verdict::kFailed && m.LowerPriorityOn(index, pod.priority);
    (resolvable ? r.failed : r.failed_unresolvable)[name] = std::move(why);
  }
  json rules = json::object();
  for (const auto& [rule, count] : by_rule) rules[std::string(rule)] = count;
  const std::size_t passed = r.nodes.has_value() ? r.nodes->size() : r.node_names.size();
  std::string chosen;
  if (decide && passed > 0) {
    // The policy's pick among the passing nodes, reserved, is the whole answer: kube-scheduler,
    // left with one feasible node, neither scores nor calls prioritize. The nodes left out need no
    // FailedNodes entry (kube-scheduler drops them). Should the policy place nothing (the state
    // changed since the rules ran), every passing node is answered and prioritize decides.
    const std::vector<std::string>& names = r.nodes.has_value() ? passing : r.node_names;
    lock.unlock();
    exclusive.lock();
    m.ExpireReservations();
    if (m.HoldsReservation(pod.uid)) m.DropReservation(pod.uid);  // a concurrent filter of this pod
    const sched::PlacementDecision d = m.Decide(names, req, screen);
    const auto k = d.placed() ? static_cast<std::size_t>(std::find(names.begin(), names.end(),
                                                                    m.specs[d.node.value()].name) - names.begin())
                              : names.size();
    if (k < names.size()) {  // the policy places only where the screen allows: one of `names`
      chosen = names[k];
      if (r.nodes.has_value()) {
        json kept = std::move((*r.nodes)[k]);
        r.nodes->assign(1, std::move(kept));
      } else {
        if (k != 0) r.node_names[0] = std::move(r.node_names[k]);
        r.node_names.resize(1);
      }
      if (m.MayReserve(pod.uid) && m.BindPod(pod, chosen, "filter", /*assume=*/true).ok()) m.generation++;
    }
  } else if (passed == 1 && only != nullptr && m.MayReserve(pod.uid)) {
    // One feasible node: kube-scheduler takes it without scoring (no prioritize follows), so the
    // reservation prioritize would make is made here.
    const std::string node = r.nodes.has_value() ? *only : r.node_names.front();  // `*only` may be moved
    lock.unlock();
    exclusive.lock();
    m.ExpireReservations();
    if (m.BindPod(pod, node, "filter", /*assume=*/true).ok()) m.generation++;
  }
  json entry{{"verb", "filter"},
             {"time_ms", m.Now()},
             {"candidates", candidates.size()},
             {"passed", passed},
             {"failed_by_rule", std::move(rules)},
             {"reasons", std::move(reasons)},
             {"reasons_omitted", failed - std::min(failed, m.options.reasons_per_decision)}};
  if (!chosen.empty()) {
    entry["chosen"] = chosen;
    entry["policy"] = std::string(m.policy->Name());
  }
  m.Record(pod.key(), std::move(entry));
  m.Count("filter", passed > 0 ? "ok" : "unschedulable", Since(t0));
  m.Gauges();
  return r;
}

sched::PlacementDecision Extender::Impl::Decide(const std::vector<std::string>& candidates, const Request& r,
                                                Screen& screen) {
  if (screen.generation != generation || screen.index.size() != candidates.size()) {
    screen = ScreenForPolicy(candidates, r);
  }
  ClusterState& cl = *cluster;
  // Mask: only candidates that pass the rules (fit aside: the policy checks it) may be picked.
  for (std::size_t i = 0; i < cl.size(); ++i) {
    cl.SetEligibility(NodeId(static_cast<std::uint32_t>(i)), cluster::NodeEligibility::kNone);
  }
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (screen.index[i] == NodeCheck::kUnknown || screen.eligibility[i] == cluster::NodeEligibility::kNone) continue;
    const NodeId n(static_cast<std::uint32_t>(screen.index[i]));
    cl.SetEligibility(n, screen.eligibility[i]);
    cl.SetWeight(n, screen.weight[i]);
  }
  sched::PlacementDecision d = policy->Decide(cl, r.pod.spec, rng);
  // Kept for bind only while the pod is remembered (seen, capped): anonymous prioritize calls
  // with fresh uids grew it without bound.
  if (d.placed() && seen.count(r.pod.uid) != 0) {
    picks[r.pod.uid] = Pick{specs[d.node.value()].name, d.gpus, cl.version(d.node)};
  }
  return d;
}

std::vector<HostPriority> Extender::RunPrioritize(const ExtenderArgs& args, std::vector<std::string>* take) {
  const auto t0 = std::chrono::steady_clock::now();
  Impl& m = *impl_;
  std::vector<std::string> scratch;
  const std::vector<std::string>& candidates = args.Candidates(&scratch);
  // The rules per candidate under the shared lock (beside filters); the policy, which masks the
  // cluster and draws from the rng, under the exclusive one. A change in between (a bind, a node,
  // a config) is seen by the generation, and the rules run again.
  Impl::Request req;
  Impl::Screen screen;
  bool reserved = false;
  {
    std::shared_lock lock(m.mu);
    reserved = m.HoldsReservation(args.pod.uid);
    if (!reserved) {
      req = m.Begin(args);
      screen = m.ScreenForPolicy(candidates, req);
    }
  }
  std::unique_lock lock(m.mu);
  m.ExpireReservations();
  if (reserved || m.HoldsReservation(args.pod.uid)) {
    m.DropReservation(args.pod.uid);
    req = m.Begin(args);
  }
  const sched::PlacementDecision d = m.Decide(candidates, req, screen);
  const K8sPod& pod = req.pod;
  const ClusterState& cl = *m.cluster;
  std::vector<HostPriority> out;
  out.reserve(candidates.size());
  const std::string chosen = d.placed() ? m.specs[d.node.value()].name : std::string();
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    HostPriority h{take != nullptr ? std::move((*take)[i]) : candidates[i], 0};  // candidates[i] not read again
    if (screen.index[i] != NodeCheck::kUnknown) {
      const NodeId n(static_cast<std::uint32_t>(screen.index[i]));
      if (d.placed() && n == d.node) {
        h.score = 10;
      } else if (screen.fits[i] != 0 && cluster::Admits(cl.eligibility(n), pod.spec)) {  // CanPlace, fit known
        const cluster::NodeState& ns = cl.node(n);
        // base = 1 + floor(8 x min(1, fill)), fill = what the pod needs of what is free (GPU milli,
        // else CPU), in integers: the same as in doubles (8 x fill is exact when it is a whole
        // number, and otherwise at least 1/(8 x left) from one, far above a double's error), without
        // a division and a floor in floating point per candidate.
        std::int64_t need = 0, left = 0;
        if (pod.spec.is_gpu()) {
          need = pod.spec.total_gpu_milli();
          left = ns.TotalGpuIdle();
        } else {
          need = pod.spec.cpu.raw();
          left = ns.cpu_left;
        }
        const std::int64_t base = left <= 0 ? 1 : need >= left ? 9 : 1 + (8 * need) / left;
        // With the usual weight of 1 a whole base needs no rounding (llround is a call).
        h.score = std::clamp<std::int64_t>(
            screen.weight[i] == 1.0 ? base : std::llround(static_cast<double>(base) * screen.weight[i]), 0, 9);
      }
    }
    out.push_back(std::move(h));
  }
  // Reserve the pick: quota and GPUs held until the watch shows where the pod went (or the
  // reservation expires), so the next pods of a burst see them taken.
  if (d.placed() && m.MayReserve(pod.uid)) {
    (void)m.BindPod(pod, chosen, "prioritize", /*assume=*/true);
    m.generation++;
  }
  const std::string policy_name(m.policy->Name());
  lock.unlock();
  m.Record(pod.key(), json{{"verb", "prioritize"},
                           {"time_ms", m.Now()},
                           {"candidates", candidates.size()},
                           {"chosen", chosen},
                           {"score", chosen.empty() ? 0 : 10},
                           {"policy", policy_name}});
  m.Count("prioritize", chosen.empty() ? "unschedulable" : "ok", Since(t0));
  m.Gauges();
  return out;
}

std::map<std::string, MetaVictims> Extender::Preempt(const ExtenderPreemptionArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  Impl::TenantInfo tenant;
  const K8sPod pod = m.Admit(args.pod, &tenant);
  ClusterState& cl = *m.cluster;
  const auto& tiers = m.config->tenancy.tiers;
  // Tenancy rules (S4.4, tenancy::Admitter's kSeedance mode, without the telemetry-based ones).
  auto allowed = [&](const Impl::Bound& v) {
    const Impl::TenantInfo vt = m.TenantOf(v.pod);
    if (vt.tier == Tier::kGold && tenant.tier != Tier::kGold) return false;  // never preempt Gold
    if (vt.name == tenant.name) return v.pod.priority < pod.priority;
    const bool same_cohort = m.book && tenant.book >= 0 && vt.book >= 0 && m.book->cohort_of(tenant.book) >= 0 &&
                             m.book->cohort_of(tenant.book) == m.book->cohort_of(vt.book);
    if (same_cohort && m.book->IsBorrowing(vt.book)) return true;  // borrowed capacity is never guaranteed
    if (static_cast<int>(vt.tier) <= static_cast<int>(tenant.tier)) return false;
    if (tenant.tier == Tier::kGold && m.book && tenant.book >= 0) {
      const auto req = m.RequestOn(pod.spec, cluster::kNoGpuModel, tenant.book);
      return m.book->WithinShare(tenant.book, req, tiers[0].guaranteed_share);
    }
    return tenant.tier == Tier::kGold;
  };
  std::map<std::string, MetaVictims> out;
  json reasons = json::object();
  for (const auto& [node_name, proposed] : args.victims) {
    auto it = m.node_index.find(node_name);
    if (it == m.node_index.end()) continue;
    const NodeId n(static_cast<std::uint32_t>(it->second));
    std::vector<sched::PreemptionCandidate> cands;
    std::map<std::int64_t, std::string> uid_by_id;
    for (const auto& [uid, b] : m.bound) {
      if (b.node != n || !allowed(b)) continue;
      cands.push_back({b.seq, b.node, b.pod.spec, b.gpus, 1.0 + static_cast<double>(b.pod.spec.total_gpu_milli()) / 1000.0});
      uid_by_id[b.seq] = uid;
    }
    for (std::size_t i = 0; i < cl.size(); ++i) {
      cl.SetEligibility(NodeId(static_cast<std::uint32_t>(i)), i == n.value() ? cluster::NodeEligibility::kAll
                                                                               : cluster::NodeEligibility::kNone);
    }
    auto set = sched::FindVictimsForFit(cl, pod.spec, cands);
    if (!set.has_value()) {
      reasons[node_name] = "no victim set allowed by the tenancy rules frees a fit";
      continue;
    }
    MetaVictims v;
    for (std::int64_t id : set->victims) v.uids.push_back(uid_by_id[id]);
    out.emplace(node_name, std::move(v));
  }
  m.Record(pod.key(), json{{"verb", "preempt"},
                           {"time_ms", m.Now()},
                           {"candidates", args.victims.size()},
                           {"nodes_with_victims", out.size()},
                           {"reasons", std::move(reasons)}});
  m.Count("preempt", out.empty() ? "none" : "ok", Since(t0));
  return out;
}

Status Extender::Bind(const ExtenderBindingArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  m.ExpireReservations();
  const std::string key = args.pod_namespace + "/" + args.pod_name;
  std::string uid = args.pod_uid;
  Status s = Status::Ok();
  if (uid.empty() || (!m.seen.count(uid) && !m.bound.count(uid))) {
    if (auto it = m.uid_of.find(key); it != m.uid_of.end()) {
      // A pod bound under another uid is not moved by a bind that names a different pod.
      if (!uid.empty() && m.bound.count(it->second) != 0) {
        s = FailedPreconditionError(
            fmt::format("PodUID: {} is bound with uid {}, not {}", key, it->second, args.pod_uid));
      }
      uid = it->second;
    }
  }
  const K8sPod* pod = nullptr;
  if (auto it = m.seen.find(uid); it != m.seen.end()) pod = &it->second;
  if (auto it = m.bound.find(uid); it != m.bound.end()) pod = &it->second.pod;
  if (s.ok()) {
    s = pod == nullptr ? NotFoundError(fmt::format("PodUID: pod {} ({}) not seen by filter nor POST /v1/pods",
                                                   key, args.pod_uid))
                       : m.BindPod(*pod, args.node, "Node", /*assume=*/true);
  }
  m.Record(key, json{{"verb", "bind"}, {"time_ms", m.Now()}, {"chosen", args.node}, {"error", s.ok() ? "" : s.message()}});
  m.Count("bind", s.ok() ? "ok" : "error", Since(t0));
  m.Gauges();
  return s;
}

}  // namespace seedance::server
