#include "seedance/tenancy/admission.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "seedance/core/check.h"

namespace seedance::tenancy {
namespace {
constexpr double kYieldAbove = 0.10;  // compensation weight of an under-served tenant
}  // namespace

std::string_view TenancyModeName(TenancyMode m) {
  switch (m) {
    case TenancyMode::kStrict: return "strict";
    case TenancyMode::kBorrowing: return "borrowing";
    case TenancyMode::kSeedance: return "seedance";
    case TenancyMode::kKueue: return "kueue";
    case TenancyMode::kFairSharing: return "fair-sharing";
    case TenancyMode::kFairSharingFinal: return "fair-sharing-ltefs";
    case TenancyMode::kFairSharingInitial: return "fair-sharing-ltis";
  }
  return "?";
}

std::optional<TenancyMode> ParseTenancyMode(std::string_view s) {
  for (auto m : {TenancyMode::kStrict, TenancyMode::kBorrowing, TenancyMode::kSeedance, TenancyMode::kKueue,
                 TenancyMode::kFairSharing, TenancyMode::kFairSharingFinal, TenancyMode::kFairSharingInitial})
    if (TenancyModeName(m) == s) return m;
  return std::nullopt;
}

bool IsFairSharing(TenancyMode m) {
  return m == TenancyMode::kFairSharing || m == TenancyMode::kFairSharingFinal || m == TenancyMode::kFairSharingInitial;
}

double DominantShare::Value() const {
  if (Infinite()) return std::numeric_limits<double>::infinity();
  return ratio == 0 ? 0.0 : ratio / weight;
}

int DominantShare::Compare(const DominantShare& a, const DominantShare& b) {
  auto cmp = [](double x, double y) { return x < y ? -1 : (y < x ? 1 : 0); };
  if (a.Infinite() && b.Infinite()) return cmp(a.ratio, b.ratio);
  if (a.Infinite()) return 1;
  if (b.Infinite()) return -1;
  return cmp(a.Value(), b.Value());
}

bool Admitter::Key::operator<(const Key& o) const {
  return std::tie(neg_priority, creation_s, id) < std::tie(o.neg_priority, o.creation_s, o.id);
}

Admitter::Admitter(QuotaBook book, TenancyMode mode, const TenancyConfig& config)
    : book_(std::move(book)), mode_(mode), config_(config) {
  const auto n = static_cast<std::size_t>(book_.num_tenants());
  queues_.resize(n);
  compensation_.assign(n, 0.0);
  elastic_.assign(n, 1.0);
  tenant_tier_.assign(n, Tier::kSilver);
  fair_weight_.assign(n, 1.0);
  for (const auto& t : config_.tenants) {
    const int i = book_.TenantIndex(t.name);
    if (i >= 0) tenant_tier_[static_cast<std::size_t>(i)] = t.tier;
    if (i >= 0) fair_weight_[static_cast<std::size_t>(i)] = t.fair_weight;
  }
  cohort_members_.resize(n);
  admitted_by_tenant_.resize(n);
  victim_order_.resize(n);
  for (int a = 0; a < book_.num_tenants(); ++a) {
    for (int b = 0; b < book_.num_tenants(); ++b) {
      const bool same = a == b || (book_.cohort_of(a) >= 0 && book_.cohort_of(a) == book_.cohort_of(b));
      if (same) cohort_members_[static_cast<std::size_t>(a)].push_back(b);
    }
  }
}

void Admitter::Submit(WorkloadRequest w) {
  SEEDANCE_CHECK(w.tenant >= 0 && w.tenant < book_.num_tenants());
  SEEDANCE_CHECK(static_cast<int>(w.request.size()) == book_.num_resources());
  auto [it, fresh] =
      hash_ids_.emplace(std::make_tuple(w.tenant, w.priority, w.request), static_cast<std::int64_t>(hash_ids_.size()));
  Entry e;
  e.hash = it->second;
  e.w = std::move(w);
  const std::int64_t id = e.w.id;
  entries_[id] = std::move(e);
  QueueInsert(entries_.at(id));
}

void Admitter::QueueInsert(const Entry& e) {
  queues_[static_cast<std::size_t>(e.w.tenant)].classes[e.hash].members.insert(KeyOf(e));
}

void Admitter::QueueErase(const Entry& e) {
  auto& classes = queues_[static_cast<std::size_t>(e.w.tenant)].classes;
  auto it = classes.find(e.hash);
  if (it == classes.end()) return;
  it->second.members.erase(KeyOf(e));
  if (it->second.members.empty()) classes.erase(it);
}

std::int64_t Admitter::HeadOf(const Queue& q) {
  if (q.sticky >= 0) return q.sticky;
  const Key* best = nullptr;
  for (const auto& [hash, c] : q.classes) {
    if (c.inadmissible || c.members.empty()) continue;
    if (best == nullptr || *c.members.begin() < *best) best = &*c.members.begin();
  }
  return best == nullptr ? -1 : best->id;
}

std::size_t Admitter::pending() const {
  std::size_t n = 0;
  for (const auto& q : queues_)
    for (const auto& [hash, c] : q.classes) n += c.members.size();
  return n + unplaceable_.size();
}

bool Admitter::IsAdmitted(std::int64_t id) const { return admitted_.count(id) > 0; }

double Admitter::GuaranteedShare(int tenant) const {
  const auto t = static_cast<std::size_t>(tenant);
  const double base = TierOf(tenant_tier_[t]).guaranteed_share;
  if (mode_ != TenancyMode::kSeedance || !config_.fairness_compensation) return base;
  return std::min(1.0, base + std::max(0.0, compensation_[t]));
}

DominantShare Admitter::DominantResourceShare(int t, std::span<const Quantity> extra) const {
  // Kueue pkg/cache/scheduler/fair_sharing.go (dominantResourceShare, calculateLendable; read at
  // kubernetes-sigs/kueue@02c5bf46): borrowed = max(0, usage + request - subtree quota) per
  // resource (one flavor per resource here, so the sum over flavors is that one term; a
  // ClusterQueue's subtree quota is its nominal quota); ratio = borrowed * 1000 / lendable in
  // the parent (the cohort's lendable total); the share is the largest ratio over resources,
  // divided by the weight. A queue outside any cohort has share 0.
  DominantShare d;
  d.weight = fair_weight_[static_cast<std::size_t>(t)];
  if (book_.cohort_of(t) < 0) return d;
  for (int r = 0; r < book_.num_resources(); ++r) {
    const Quantity add = extra.empty() ? 0 : extra[static_cast<std::size_t>(r)];
    const Quantity borrowed = book_.usage(t, r) + add - book_.nominal(t, r);
    if (borrowed <= 0) continue;
    d.borrowing = true;
    const Quantity lendable = book_.CohortLendable(t, r);
    if (lendable > 0) d.ratio = std::max(d.ratio, static_cast<double>(borrowed) * 1000.0 / static_cast<double>(lendable));
  }
  return d;
}

DominantShare Admitter::ShareOf(const Entry& e) const {
  return IsFairSharing(mode_) ? DominantResourceShare(e.w.tenant, e.w.request) : DominantShare{};
}

double Admitter::OrderShare(const Entry& e) const {
  if (IsFairSharing(mode_)) return DominantResourceShare(e.w.tenant, e.w.request).Value();
  if (mode_ != TenancyMode::kSeedance) return 0.0;
  const auto t = static_cast<std::size_t>(e.w.tenant);
  double share = 0;
  for (int r = 0; r < book_.num_resources(); ++r) {
    const auto req = e.w.request[static_cast<std::size_t>(r)];
    if (req == 0) continue;
    const auto nom = book_.nominal(e.w.tenant, r);
    const double used = static_cast<double>(book_.usage(e.w.tenant, r) + req);
    share = std::max(share, nom > 0 ? used / static_cast<double>(nom) : 1e6);
  }
  // The elastic scale (S4.2) is the tenant's weight: a busy tenant's entitlement grows to 1.5x,
  // an idle one's decays; the compensation (S4.5) moves an under-served tenant forward.
  const double comp = config_.fairness_compensation ? compensation_[t] : 0.0;
  return share / std::max(1e-3, elastic_[t]) * (1.0 - comp);
}

Admitter::Nomination Admitter::Nominate(const Entry& e, AdmissionEnv& /*env*/) {
  if (e.waiting_on > 0) return Nomination::kWait;
  const auto fit = book_.Check(e.w.tenant, e.w.request);
  if (fit == FitKind::kFit) return Nomination::kFit;
  if (fit == FitKind::kBorrow) return Nomination::kBorrow;
  for (int r = 0; r < book_.num_resources(); ++r)
    if (e.w.request[static_cast<std::size_t>(r)] > book_.PotentialAvailable(e.w.tenant, r)) return Nomination::kNoFit;
  // Fair Sharing: a preemptor may borrow (Kueue's flavor assigner lets a fair-sharing queue
  // preempt while borrowing); the strategies decide whether it may take from whom.
  if (IsFairSharing(mode_)) return Nomination::kPreempt;
  // Classical preemption: only a preemptor that can fit within its own quota once victims are gone
  // (Kueue: nominal; Seedance: the guaranteed share of its tenant's tier) may preempt; whether
  // it then does is decided by the victim search (ChooseVictims).
  const double share = mode_ == TenancyMode::kSeedance ? GuaranteedShare(e.w.tenant) : 1.0;
  bool may = true;
  for (int r = 0; r < book_.num_resources(); ++r) {
    const auto req = e.w.request[static_cast<std::size_t>(r)];
    if (req > 0 && static_cast<double>(req) > share * static_cast<double>(book_.nominal(e.w.tenant, r)) + 1e-9) may = false;
  }
  return may ? Nomination::kPreempt : Nomination::kNoFit;
}

bool Admitter::QuotaCandidate(const Entry& p, const Entry& v, const AdmissionEnv& env) const {
  const bool same_tenant = p.w.tenant == v.w.tenant;
  const bool same_cohort = !same_tenant && book_.cohort_of(p.w.tenant) >= 0 &&
                           book_.cohort_of(p.w.tenant) == book_.cohort_of(v.w.tenant);
  const bool lower = v.w.priority < p.w.priority;
  switch (mode_) {
    case TenancyMode::kStrict:
      return same_tenant && lower;
    case TenancyMode::kKueue:
      return (same_tenant && lower) || (same_cohort && book_.IsBorrowing(v.w.tenant));
    case TenancyMode::kFairSharing:  // the same candidates; ChooseFairVictims applies the strategies
    case TenancyMode::kFairSharingFinal:
    case TenancyMode::kFairSharingInitial:
    case TenancyMode::kBorrowing:
      return (same_tenant && lower) || (same_cohort && lower && book_.IsBorrowing(v.w.tenant));
    case TenancyMode::kSeedance: {
      // A lower tier never preempts Gold (issue 13, guarantee 1).
      if (v.w.tier == Tier::kGold && p.w.tier != Tier::kGold) return false;
      if (same_tenant) return lower;
      // Borrowed capacity is never guaranteed: an owner reclaims what it lent (Kueue's
      // reclaimWithinCohort), from any tier but Gold.
      if (same_cohort && book_.IsBorrowing(v.w.tenant)) return true;
      if (static_cast<int>(v.w.tier) < static_cast<int>(p.w.tier)) return false;
      const RunningState rs = env.Running(v.w.id);
      if (rs.idle_s >= TierOf(v.w.tier).reclaim_after_s) return true;  // idle past its trigger
      // S4.4: a guaranteed-class (Gold) candidate that stays within its guaranteed quota may
      // preempt a non-guaranteed-class (Silver, Bronze) running task when its SLO latency (one
      // admission cycle) < 0.8 x the task's executed time.
      if (p.w.tier == Tier::kGold && v.w.tier != Tier::kGold) {
        return book_.WithinShare(p.w.tenant, p.w.request, GuaranteedShare(p.w.tenant)) &&
               config_.cycle_s < 0.8 * rs.executed_s;
      }
      return false;
    }
  }
  return false;
}

std::vector<std::int64_t> Admitter::ChooseVictims(const Entry& e, AdmissionEnv& env, bool quota_needed, bool idle_only) {
  // Candidates in Kueue's classical order: other tenants first, lower priority, most recently
  // admitted, id. Seedance orders by the work each would lose instead.
  struct Cand {
    const Entry* entry;
    double cost;
  };
  std::vector<Cand> cands;
  // `next()` yields the candidates in preemption order. Seedance: least lost work first, then id
  // (all its candidates are collected and heap-ordered). Kueue's modes: other tenants first, lower
  // priority, most recently admitted, id; each tenant's admitted workloads are kept in that order
  // (victim_order_), so the cohort's borrowing tenants are merged lazily and a decision that
  // takes k victims costs O(T + k T), not a scan of every admitted workload.
  std::function<const Entry*()> next;
  struct Cursor {
    std::set<VictimKey>::const_iterator it, end;
    int tenant = -1;
  };
  std::vector<Cursor> others;
  Cursor own{};
  std::size_t heap_end = 0;
  auto after = [](const Cand& a, const Cand& b) { return std::tie(b.cost, b.entry->w.id) < std::tie(a.cost, a.entry->w.id); };
  if (mode_ == TenancyMode::kSeedance) {
    // Only the preemptor's cohort (or its own tenant) can hold candidates.
    for (int m : cohort_members_[static_cast<std::size_t>(e.w.tenant)]) {
      for (const auto& [id, ptr] : admitted_by_tenant_[static_cast<std::size_t>(m)]) {
        const Entry& v = *ptr;
        if (!QuotaCandidate(e, v, env)) continue;
        if (idle_only && env.Running(id).idle_s < TierOf(v.w.tier).reclaim_after_s) continue;
        cands.push_back({&v, env.Running(id).lost_if_preempted + 1e-3});
      }
    }
    if (cands.empty()) return {};
    std::make_heap(cands.begin(), cands.end(), after);
    heap_end = cands.size();
    next = [&]() -> const Entry* {
      if (heap_end == 0) return nullptr;
      std::pop_heap(cands.begin(), cands.begin() + static_cast<std::ptrdiff_t>(heap_end), after);
      return cands[--heap_end].entry;
    };
  } else {
    const VictimKey below{e.w.priority, -std::numeric_limits<double>::infinity(), std::numeric_limits<std::int64_t>::min(), nullptr};
    for (int m : cohort_members_[static_cast<std::size_t>(e.w.tenant)]) {
      const auto& order = victim_order_[static_cast<std::size_t>(m)];
      if (m == e.w.tenant) {
        own = {order.begin(), order.lower_bound(below), m};  // withinClusterQueue: LowerPriority
      } else if (mode_ != TenancyMode::kStrict && book_.IsBorrowing(m)) {
        // reclaimWithinCohort: Any (kueue) or LowerPriority (borrowing)
        others.push_back({order.begin(), mode_ == TenancyMode::kKueue ? order.end() : order.lower_bound(below), m});
      }
    }
    next = [&]() -> const Entry* {
      Cursor* best = nullptr;
      for (auto& c : others) {
        // A tenant back within its nominal quota offers no more victims (the greedy pass below
        // would skip each of them): drop its cursor instead of walking it.
        if (c.it != c.end && !book_.IsBorrowing(c.tenant)) c.it = c.end;
        if (c.it != c.end && (best == nullptr || *c.it < *best->it)) best = &c;
      }
      if (best == nullptr) best = own.it != own.end ? &own : nullptr;
      if (best == nullptr) return nullptr;
      return (best->it++)->entry;
    };
  }
  std::vector<std::int64_t> chosen;
  std::vector<const Entry*> removed;  // from the book while deciding; restored at the end
  auto fits = [&] {
    const auto f = book_.Check(e.w.tenant, e.w.request);
    // Kueue: the preemptor must fit without borrowing; Seedance reclaims its guaranteed part.
    if (mode_ != TenancyMode::kSeedance) return f == FitKind::kFit;
    return f != FitKind::kNoFit && book_.WithinShare(e.w.tenant, e.w.request, GuaranteedShare(e.w.tenant));
  };
  auto remove = [&](const Entry* v) {
    book_.Remove(v->w.tenant, v->w.request);
    removed.push_back(v);
  };
  if (mode_ == TenancyMode::kSeedance) {
    // One node first: the victims that free a placement the candidate can use.
    std::vector<VictimCandidate> vc;
    vc.reserve(cands.size());
    for (const auto& c : cands) vc.push_back({c.entry->w.id, c.cost, c.entry->w.priority});
    std::sort(vc.begin(), vc.end(), [](const VictimCandidate& a, const VictimCandidate& b) { return a.id < b.id; });
    auto node = env.VictimsForFit(e.w, vc);
    if (!node) return {};
    for (auto id : *node) {
      remove(&entries_.at(id));
      chosen.push_back(id);
    }
  }
  const std::size_t fixed = chosen.size();
  if (quota_needed && !fits()) {
    while (const Entry* v = next()) {
      if (std::find(chosen.begin(), chosen.end(), v->w.id) != chosen.end()) continue;
      const bool other = v->w.tenant != e.w.tenant;
      // A borrower of another tenant stops being a candidate once it is back within nominal
      // (an idle allocation past its trigger stays one).
      if (other && !book_.IsBorrowing(v->w.tenant) &&
          !(mode_ == TenancyMode::kSeedance && env.Running(v->w.id).idle_s >= TierOf(v->w.tier).reclaim_after_s))
        continue;
      remove(v);
      chosen.push_back(v->w.id);
      if (fits()) break;
    }
    if (!fits()) chosen.clear();
  }
  if (!chosen.empty() && chosen.size() > fixed) {
    // Minimise: add back the quota victims (latest first) the candidate does not need.
    for (std::size_t k = chosen.size(); k-- > fixed;) {
      const Entry& v = entries_.at(chosen[k]);
      book_.Add(v.w.tenant, v.w.request);
      if (fits()) {
        removed.erase(std::find(removed.begin(), removed.end(), &v));
        chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        book_.Remove(v.w.tenant, v.w.request);
      }
    }
  }
  for (const Entry* v : removed) book_.Add(v->w.tenant, v->w.request);
  return chosen;
}

std::vector<std::int64_t> Admitter::ChooseFairVictims(const Entry& e) {
  // Kueue's fair preemption (pkg/scheduler/preemption/preemption.go fairPreemptions,
  // fairsharing/{ordering,strategy,target}.go; read at kubernetes-sigs/kueue@0249ffa0 and
  // @00b0d4bd), for a flat cohort (every ClusterQueue a child of the root, so a queue is its own
  // almost-least-common-ancestor):
  //  - candidates: the lower-priority workloads of the preemptor's own queue (withinClusterQueue
  //    LowerPriority) and of the cohort's borrowing queues (reclaimWithinCohort LowerPriority, as
  //    the borrowing row: the setting a user picks to keep Gold safe from lower tiers), each
  //    queue's in Kueue's candidate order (lower priority, most recently admitted);
  //  - the preemptor's usage is counted while deciding (shares include the incoming workload);
  //  - target queue: the one with the highest share that still has candidates (the preemptor's own
  //    queue even at share 0; others at 0 are dropped); its own queue: take the next candidate;
  //    another queue: take its first candidate for which the first strategy holds and pick the
  //    queue again; candidates that fail it are kept for the second strategy;
  //  - second strategy (LessThanInitialShare): over the kept candidates, in the same queue
  //    order, a queue gives at most its first candidate if the preemptor's new share < the
  //    queue's current share;
  //  - done when the preemptor fits (borrowing allowed); then the victims are added back, latest
  //    but one first, while it still fits (fillBackWorkloads).
  using Strategy = bool (*)(const DominantShare&, const DominantShare&, const DominantShare&);
  // S2-a: preemptor's new share <= the target's share without the victim.
  const Strategy final_share = [](const DominantShare& p, const DominantShare&, const DominantShare& tnew) {
    return DominantShare::Compare(p, tnew) <= 0;
  };
  // S2-b: preemptor's new share < the target's share before.
  const Strategy initial_share = [](const DominantShare& p, const DominantShare& told, const DominantShare&) {
    return DominantShare::Compare(p, told) < 0;
  };
  std::vector<Strategy> strategies;
  if (mode_ != TenancyMode::kFairSharingInitial) strategies.push_back(final_share);
  if (mode_ != TenancyMode::kFairSharingFinal) strategies.push_back(initial_share);

  const int pt = e.w.tenant;
  const auto& members = cohort_members_[static_cast<std::size_t>(pt)];
  std::map<int, std::deque<const Entry*>> cands;
  for (int m : members) {
    if (m != pt && !book_.IsBorrowing(m)) continue;
    for (const VictimKey& k : victim_order_[static_cast<std::size_t>(m)]) {
      if (k.priority >= e.w.priority) break;  // sorted by priority: the rest are not lower
      cands[m].push_back(k.entry);
    }
  }
  if (cands.empty()) return {};

  std::vector<const Entry*> targets;
  auto take = [&](const Entry* v) {
    book_.Remove(v->w.tenant, v->w.request);
    targets.push_back(v);
  };
  // Fits with its own usage taken out again (workloadFitsForFairSharing), borrowing allowed.
  auto fits = [&] {
    book_.Remove(pt, e.w.request);
    const bool ok = book_.Check(pt, e.w.request) != FitKind::kNoFit;
    book_.Add(pt, e.w.request);
    return ok;
  };
  // The next target queue among `from` (TargetClusterQueueOrdering.nextTarget, flat cohort); ties
  // go to the later queue, as Kueue's `>=` scan does. -1 when none is left.
  auto next_target = [&](std::map<int, std::deque<const Entry*>>& from, std::set<int>& pruned) {
    int best = -1;
    DominantShare best_drs{-1, 1, false};
    for (int m : members) {
      if (pruned.count(m) > 0) continue;
      auto it = from.find(m);
      const DominantShare d = DominantResourceShare(m);
      if (it == from.end() || it->second.empty() || (d.Value() == 0 && m != pt)) {
        pruned.insert(m);
        continue;
      }
      if (best < 0 || DominantShare::Compare(d, best_drs) >= 0) {
        best = m;
        best_drs = d;
      }
    }
    return best;
  };

  book_.Add(pt, e.w.request);  // shares include the incoming workload
  bool fit = false;
  std::map<int, std::deque<const Entry*>> retry;
  std::set<int> pruned;
  while (!fit) {
    const int m = next_target(cands, pruned);
    if (m < 0) break;
    auto& list = cands[m];
    if (m == pt) {  // in-ClusterQueue preemption: by priority, no share rule
      take(list.front());
      list.pop_front();
      fit = fits();
      continue;
    }
    const DominantShare pnew = DominantResourceShare(pt);
    const DominantShare told = DominantResourceShare(m);
    while (!list.empty()) {
      const Entry* v = list.front();
      list.pop_front();
      book_.Remove(v->w.tenant, v->w.request);
      const DominantShare tnew = DominantResourceShare(m);
      book_.Add(v->w.tenant, v->w.request);
      if (strategies[0](pnew, told, tnew)) {
        take(v);
        fit = fits();
        break;  // shares changed: choose the target queue again
      }
      retry[m].push_back(v);
    }
  }
  if (!fit && strategies.size() > 1) {
    std::set<int> pruned2;
    while (!fit) {
      const int m = next_target(retry, pruned2);
      if (m < 0) break;
      if (strategies[1](DominantResourceShare(pt), DominantResourceShare(m), {})) {
        take(retry[m].front());
        retry[m].pop_front();
        fit = fits();
      }
      pruned2.insert(m);  // rule S2-b applies at most once per queue
    }
  }
  book_.Remove(pt, e.w.request);
  if (fit) {
    for (std::size_t k = targets.size() >= 2 ? targets.size() - 1 : 0; k-- > 0;) {
      const Entry* v = targets[k];
      book_.Add(v->w.tenant, v->w.request);
      if (book_.Check(pt, e.w.request) != FitKind::kNoFit) {
        targets.erase(targets.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        book_.Remove(v->w.tenant, v->w.request);
      }
    }
  }
  std::vector<std::int64_t> chosen;
  for (const Entry* v : targets) {
    book_.Add(v->w.tenant, v->w.request);
    chosen.push_back(v->w.id);
  }
  if (!fit) chosen.clear();
  return chosen;
}

void Admitter::MakeInadmissible(Queue& q, std::int64_t id) {
  // Scheduling-equivalence hashing: the same class (tenant, priority, request) in the same queue
  // cannot fit either, so the whole class steps aside (BestEffortFIFO: the next class's first
  // workload becomes the head).
  const Entry& e = entries_.at(id);
  q.classes.at(e.hash).inadmissible = true;
  if (q.sticky == id) q.sticky = -1;
}

void Admitter::RequeueCohort(int tenant) {
  for (int m : cohort_members_[static_cast<std::size_t>(tenant)]) {
    for (auto& [hash, c] : queues_[static_cast<std::size_t>(m)].classes) c.inadmissible = false;
  }
  for (auto id : unplaceable_) {
    Entry& e = entries_.at(id);
    e.state = State::kPending;
    QueueInsert(e);
  }
  unplaceable_.clear();
}

void Admitter::Admit(Entry& e, double now) {
  auto& q = queues_[static_cast<std::size_t>(e.w.tenant)];
  QueueErase(e);
  if (q.sticky == e.w.id) q.sticky = -1;
  book_.Add(e.w.tenant, e.w.request);
  e.state = State::kAdmitted;
  e.admitted_at = now;
  admitted_.emplace(e.w.id, &e);
  admitted_by_tenant_[static_cast<std::size_t>(e.w.tenant)].emplace(e.w.id, &e);
  victim_order_[static_cast<std::size_t>(e.w.tenant)].insert(VictimKeyOf(e));
  ++stats_.admitted;
}

void Admitter::Evict(Entry& v, const Entry& preemptor, bool reclaim, std::vector<AdmissionDecision>* out) {
  v.state = State::kEvicting;
  v.evicted_for = preemptor.w.id;
  admitted_.erase(v.w.id);
  admitted_by_tenant_[static_cast<std::size_t>(v.w.tenant)].erase(v.w.id);
  victim_order_[static_cast<std::size_t>(v.w.tenant)].erase(VictimKeyOf(v));
  ++stats_.evictions;
  out->push_back({AdmissionDecision::Kind::kEvict, v.w.id, preemptor.w.id, false, reclaim});
}

bool Admitter::CyclePass(double now, AdmissionEnv& env, std::vector<AdmissionDecision>* out) {
  ++stats_.cycles;
  bool changed = false;
  std::vector<Head> heads;
  for (std::size_t t = 0; t < queues_.size(); ++t) {
    auto& q = queues_[t];
    while (true) {
      const std::int64_t id = HeadOf(q);
      if (id < 0) break;
      const Entry& e = entries_.at(id);
      ++stats_.heads_considered;
      const auto kind = Nominate(e, env);
      if (kind == Nomination::kWait) {  // holds its place in the order (see kWait below)
        heads.push_back({id, kind, OrderShare(e), ShareOf(e)});
        break;
      }
      if (kind == Nomination::kNoFit) {
        MakeInadmissible(q, id);  // BestEffortFIFO: the next workload becomes the head
        changed = true;
        continue;
      }
      heads.push_back({id, kind, OrderShare(e), ShareOf(e)});
      break;
    }
  }
  // Kueue's classical iterator: a head whose preemptions completed first (it reserved them),
  // then non-borrowing before borrowing, then priority, (Seedance: weighted share), creation, id.
  std::sort(heads.begin(), heads.end(), [&](const Head& a, const Head& b) {
    const Entry& x = entries_.at(a.id);
    const Entry& y = entries_.at(b.id);
    const bool xs = queues_[static_cast<std::size_t>(x.w.tenant)].sticky != x.w.id;
    const bool ys = queues_[static_cast<std::size_t>(y.w.tenant)].sticky != y.w.id;
    if (IsFairSharing(mode_)) {
      // Kueue's fair-sharing iterator (pkg/scheduler/fair_sharing_iterator.go, entryComparer):
      // the lowest share after admitting the head, then priority, then queue order timestamp.
      if (xs != ys) return xs < ys;
      if (const int c = DominantShare::Compare(a.drs, b.drs); c != 0) return c < 0;
      return std::make_tuple(-x.w.priority, x.w.creation_s, x.w.id) < std::make_tuple(-y.w.priority, y.w.creation_s, y.w.id);
    }
    const bool xb = a.kind == Nomination::kBorrow, yb = b.kind == Nomination::kBorrow;
    // Seedance orders borrowers by weighted share first (who gets the idle capacity is a
    // fairness question; the tiers' guarantees live in the non-borrowing part).
    const double xp = mode_ == TenancyMode::kSeedance && xb ? 0 : -x.w.priority;
    const double yp = mode_ == TenancyMode::kSeedance && yb ? 0 : -y.w.priority;
    const double xo = mode_ == TenancyMode::kSeedance && xb ? a.order_share : 0;
    const double yo = mode_ == TenancyMode::kSeedance && yb ? b.order_share : 0;
    return std::make_tuple(xs, xb, xo, xp, a.order_share, x.w.creation_s, x.w.id) <
           std::make_tuple(ys, yb, yo, yp, b.order_share, y.w.creation_s, y.w.id);
  });
  // S4.5: while a tenant that history under-served (compensation above kYieldAbove) has work
  // waiting, tenants it over-served (compensation below zero) do not borrow: the capacity they
  // would take is left for the under-served tenant's next fit.
  std::vector<bool> yields(queues_.size(), false);
  if (mode_ == TenancyMode::kSeedance && config_.fairness_compensation) {
    for (std::size_t t = 0; t < queues_.size(); ++t) {
      if (compensation_[t] <= kYieldAbove) continue;
      const auto& q = queues_[t];
      // Waiting on quota (a head nominated this pass or held inadmissible); work waiting for a node
      // does not count (it may never fit).
      if (q.classes.empty()) continue;
      for (int m : cohort_members_[t])
        if (compensation_[static_cast<std::size_t>(m)] < 0) yields[static_cast<std::size_t>(m)] = true;
    }
  }
  // A preemptor's request is reserved for the rest of the pass, from the moment it issues its
  // evictions and in every pass while it waits for its victims to leave (Kueue adds a preempting
  // entry's usage to the cycle's snapshot, and the sticky head does so again each cycle). Without
  // this, workloads that borrow take the room it counted on, and when its victims are gone it no
  // longer fits and preempts again, without end.
  std::vector<const Entry*> reserved;
  auto reserve = [&](const Entry& p) {
    book_.Add(p.w.tenant, p.w.request);
    reserved.push_back(&p);
  };
  // Evicts `victims` for `e`, which becomes its queue's sticky head and keeps its room reserved.
  auto preempt = [&](Entry& e, Queue& q, const std::vector<std::int64_t>& victims) {
    for (auto v : victims) {
      Entry& ve = entries_.at(v);
      const bool reclaim = env.Running(v).idle_s >= TierOf(ve.w.tier).reclaim_after_s;
      Evict(ve, e, reclaim, out);
    }
    e.waiting_on += static_cast<int>(victims.size());
    q.sticky = e.w.id;
    reserve(e);
    changed = true;
  };
  for (const Head& h : heads) {
    Entry& e = entries_.at(h.id);
    auto& q = queues_[static_cast<std::size_t>(e.w.tenant)];
    if (h.kind == Nomination::kWait) {
      reserve(e);
      continue;
    }
    if (h.kind == Nomination::kBorrow && yields[static_cast<std::size_t>(e.w.tenant)]) continue;
    if (h.kind == Nomination::kPreempt) {
      if (book_.Check(e.w.tenant, e.w.request) != FitKind::kNoFit) continue;  // freed meanwhile: next pass
      auto victims = IsFairSharing(mode_) ? ChooseFairVictims(e) : ChooseVictims(e, env, /*quota_needed=*/true);
      if (victims.empty()) {
        MakeInadmissible(q, e.w.id);
        changed = true;
        continue;
      }
      preempt(e, q, victims);
      continue;
    }
    const auto fit = book_.Check(e.w.tenant, e.w.request);
    if (fit == FitKind::kNoFit) continue;  // taken by an earlier head: nominated again next pass
    // Kueue admits on quota alone (the pod then waits for kube-scheduler, which the driver
    // models); Seedance admits only what a node can take now.
    if (mode_ != TenancyMode::kSeedance || env.CanPlace(e.w)) {
      Admit(e, now);
      env.OnAdmit(e.w);
      out->push_back({AdmissionDecision::Kind::kAdmit, e.w.id, -1, fit == FitKind::kBorrow, false});
      changed = true;
      continue;
    }
    // Seedance, quota fits, no node does: free one node among its candidates, by lost work. A
    // head beyond its tier's guaranteed share (or borrowing) may take only allocations idle past
    // their trigger (it may not preempt working jobs to borrow: Kueue's borrowWithinCohort Never).
    const bool guaranteed = fit == FitKind::kFit && book_.WithinShare(e.w.tenant, e.w.request, GuaranteedShare(e.w.tenant));
    const std::vector<std::int64_t> victims = ChooseVictims(e, env, /*quota_needed=*/false, /*idle_only=*/!guaranteed);
    if (victims.empty()) {
      // Out of its queue until a release or a capacity change; a preemptor whose victims have
      // left stops being the sticky head too (else the next pass takes it again: this loop then
      // ran to the cycle guard, and the head could be admitted while still listed here).
      QueueErase(e);
      if (q.sticky == e.w.id) q.sticky = -1;
      e.state = State::kInadmissible;
      unplaceable_.push_back(e.w.id);
      changed = true;
      continue;
    }
    preempt(e, q, victims);
  }
  for (const Entry* p : reserved) book_.Remove(p->w.tenant, p->w.request);
  return changed;
}

void Admitter::Cycle(double now, AdmissionEnv& env, std::vector<AdmissionDecision>* out) {
  // Each pass is one Kueue scheduling cycle (one head per queue); at one instant they repeat
  // until nothing changes. Every pass that changes something moves a workload out of a heap or
  // admits/evicts, so this ends.
  for (int guard = 0; guard < 1000000 && CyclePass(now, env, out); ++guard) {
  }
}

void Admitter::Release(Entry& e) {
  book_.Remove(e.w.tenant, e.w.request);
  admitted_.erase(e.w.id);
  admitted_by_tenant_[static_cast<std::size_t>(e.w.tenant)].erase(e.w.id);
  victim_order_[static_cast<std::size_t>(e.w.tenant)].erase(VictimKeyOf(e));
  if (e.evicted_for >= 0) {
    auto it = entries_.find(e.evicted_for);
    if (it != entries_.end() && it->second.waiting_on > 0) --it->second.waiting_on;
    e.evicted_for = -1;
  }
}

void Admitter::Finished(std::int64_t id) {
  auto it = entries_.find(id);
  SEEDANCE_CHECK(it != entries_.end());
  Release(it->second);
  const int t = it->second.w.tenant;
  entries_.erase(it);
  RequeueCohort(t);
}

void Admitter::Withdraw(std::int64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (e.state == State::kAdmitted || e.state == State::kEvicting) {
    Finished(id);
    return;
  }
  auto& q = queues_[static_cast<std::size_t>(e.w.tenant)];
  QueueErase(e);
  if (q.sticky == id) q.sticky = -1;
  unplaceable_.erase(std::remove(unplaceable_.begin(), unplaceable_.end(), id), unplaceable_.end());
  entries_.erase(it);
}

void Admitter::Restore(WorkloadRequest w, RestoredState state, double admitted_at_s, std::int64_t evicted_for) {
  const std::int64_t id = w.id;
  Submit(std::move(w));
  if (state == RestoredState::kPending) return;
  Entry& e = entries_.at(id);
  Admit(e, admitted_at_s);
  --stats_.admitted;  // admitted before the restart, counted there
  if (state == RestoredState::kAdmitted) return;
  // Evicting: as Evict, without the decision.
  e.state = State::kEvicting;
  admitted_.erase(id);
  admitted_by_tenant_[static_cast<std::size_t>(e.w.tenant)].erase(id);
  victim_order_[static_cast<std::size_t>(e.w.tenant)].erase(VictimKeyOf(e));
  auto p = entries_.find(evicted_for);
  if (p == entries_.end() || p->second.state != State::kPending) return;
  e.evicted_for = evicted_for;
  ++p->second.waiting_on;
  queues_[static_cast<std::size_t>(p->second.w.tenant)].sticky = evicted_for;
}

void Admitter::CapacityChanged() {
  for (std::size_t t = 0; t < queues_.size(); ++t) RequeueCohort(static_cast<int>(t));
}

void Admitter::Evicted(std::int64_t id, bool requeue) {
  auto it = entries_.find(id);
  SEEDANCE_CHECK(it != entries_.end());
  Entry& e = it->second;
  Release(e);
  const int t = e.w.tenant;
  if (requeue) {
    e.state = State::kPending;
    QueueInsert(e);
  } else {
    entries_.erase(it);
  }
  RequeueCohort(t);
}

std::vector<std::int64_t> Admitter::IdleSweep(const AdmissionEnv& env) const {
  std::vector<std::int64_t> out;
  if (mode_ != TenancyMode::kSeedance) return out;
  for (const auto& [id, ptr] : admitted_) {
    const Entry& e = *ptr;
    if (env.Running(id).idle_s >= TierOf(e.w.tier).max_idle_s) out.push_back(id);
  }
  return out;
}

}  // namespace seedance::tenancy
