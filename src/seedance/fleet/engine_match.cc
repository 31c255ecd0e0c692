// Seedance's type matching on committed GPUs (issue 39, fleet c: StackConfig::match_types). With a
// standing backlog every owned GPU-hour runs some job; the PFLOP it yields depends on which. An
// llm-finetune job runs 2.8x as fast on an H100 as on an A100-80G, a Philly job 1.6x: each H100
// hour given to a Philly job while a fine-tune waits is work lost (and each A100 hour it then
// leaves to the fine-tune costs less). The rule compares every job against one reference type,
// the committed type with the most GPUs (the numeraire: it takes whatever waits, so no GPU of it
// is held back): on any other committed type t, a waiting job that is relatively faster there
// (speed on t / speed on the reference) claims it first. What it reads is what a scheduler knows
// now: the queue (jobs arrived and not running), each job's submitted speeds per type, the
// tenants' quota usage, and the room on the nodes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "seedance/fleet/engine_internal.h"
#include "seedance/tenancy/quota.h"

namespace seedance::fleet::detail {

void Engine::EnsureMatchTable() const {
  if (match_at_ == now_ && !match_class_of_.empty()) return;
  if (match_class_of_.empty()) {
    // The reference type: the committed type with the most GPUs (the first on a tie).
    std::vector<int> committed(s_.fleet.gpu_types.size(), 0);
    for (const auto& p : pools_) {
      if (p.committed()) committed[static_cast<std::size_t>(p.spec->type)] += p.spec->max_gpus;
    }
    match_numeraire_ = -1;
    for (std::size_t t = 0; t < committed.size(); ++t) {
      if (committed[t] > 0 && (match_numeraire_ < 0 || committed[t] > committed[static_cast<std::size_t>(match_numeraire_)])) {
        match_numeraire_ = static_cast<int>(t);
      }
    }
    // Classes of jobs alike for the rule: tenant, pod shape and speed on each type relative to the
    // reference (+infinity where the job cannot run on the reference, 0 where not on the type).
    std::map<std::tuple<int, int, int, std::vector<double>>, int> index;
    match_class_of_.reserve(jobs_.size());
    for (const JobRun& r : jobs_) {
      std::vector<double> rel(s_.fleet.gpu_types.size(), 0.0);
      const double ref = match_numeraire_ >= 0 ? r.job->steps_per_s[static_cast<std::size_t>(match_numeraire_)] : 0.0;
      for (std::size_t t = 0; t < rel.size(); ++t) {
        const double v = r.job->steps_per_s[t];
        rel[t] = v <= 0 ? 0.0 : ref > 0 ? v / ref : kInf;
      }
      const auto key = std::make_tuple(r.job->tenant, r.pod.num_gpu, r.job->pods, rel);
      auto it = index.find(key);
      if (it == index.end()) {
        it = index.emplace(key, static_cast<int>(match_classes_.size())).first;
        MatchClass c;
        c.tenant = r.job->tenant;
        c.gpus = r.job->gpus;
        c.pods = r.job->pods;
        c.pod = r.pod;
        c.rel = rel;
        match_classes_.push_back(std::move(c));
      }
      match_class_of_.push_back(it->second);
    }
  }
  // The queue now: jobs arrived and waiting for admission, or admitted and waiting for a node.
  for (MatchClass& c : match_classes_) c.waiting = 0;
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    if (MatchWaiting(jobs_[i])) ++match_classes_[static_cast<std::size_t>(match_class_of_[i])].waiting;
  }
  match_at_ = now_;
}

bool Engine::MatchWaiting(const JobRun& r) const {
  return (r.state == JobState::kQueued && r.job->arrival_s <= now_) || r.state == JobState::kPending;
}

void Engine::MatchPlaced(const JobRun& r) {
  // A waiting job counted in this step's table has been placed: it no longer claims a type.
  if (!c_.match_types || match_at_ != now_ || match_class_of_.empty()) return;
  MatchClass& c = match_classes_[static_cast<std::size_t>(match_class_of_[job_index_.at(r.job->id)])];
  if (c.waiting > 0) --c.waiting;
}

bool Engine::MatchYields(const JobRun& r, int type) const {
  if (!c_.match_types) return false;
  EnsureMatchTable();
  if (match_numeraire_ < 0 || type == match_numeraire_) return false;
  // Never held back or moved for another: Gold work (its guarantee is a start within one cycle)
  // and jobs with a deadline; nor a job that cannot run on the reference type.
  if (s_.tenancy.tenants[static_cast<std::size_t>(r.job->tenant)].tier == tenancy::Tier::kGold) return false;
  if (std::isfinite(r.job->deadline_s)) return false;
  return MatchClassOf(r).rel[static_cast<std::size_t>(match_numeraire_)] > 0;
}

bool Engine::MatchClaims(const MatchClass& c, const JobRun& r, int type) const {
  if (c.rel[static_cast<std::size_t>(type)] <= MatchClassOf(r).rel[static_cast<std::size_t>(type)] * (1 + 1e-9)) return false;
  // The claimant's tenant, with it, stays within its nominal quota or within the share `r`'s
  // tenant holds: yielding never hands a tenant more than fair sharing gives it.
  return TenantShare(c.tenant, c.gpus) <= std::max(1.0, TenantShare(r.job->tenant, 0)) + 1e-9;
}

double Engine::TenantShare(int tenant, int more) const {
  const auto& book = admitter_->book();
  const double nominal = tenancy::FromQuantity(book.nominal(tenant, 0));
  const double used = tenancy::FromQuantity(book.usage(tenant, 0)) + more;
  return nominal > 0 ? used / nominal : kInf;
}

std::vector<std::size_t> Engine::YieldersOnNode(int pool, std::size_t n, std::vector<std::size_t> candidates, int gpus,
                                                int* yielded) const {
  const PoolRun& p = pools_[static_cast<std::size_t>(pool)];
  int room = static_cast<int>(p.state->node(cluster::NodeId(static_cast<std::uint32_t>(n))).TotalGpuIdle() / cluster::kMilliPerGpu);
  // The largest yielders first (the fewest moves), then in the order they run on the node.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](std::size_t a, std::size_t b) { return jobs_[a].job->gpus > jobs_[b].job->gpus; });
  std::vector<std::size_t> take;
  *yielded = 0;
  for (std::size_t i : candidates) {
    if (room >= gpus) break;
    take.push_back(i);
    room += jobs_[i].job->gpus;
    *yielded += jobs_[i].job->gpus;
  }
  if (room < gpus) take.clear();
  return take;
}

double Engine::MatchAdvantage(const JobRun& r, int type) const {
  // A job's comparative advantage on a committed type: its speed there relative to the reference
  // type, over the best such relative speed among the jobs waiting now (and its own). 1 on the
  // reference type and wherever no waiting job is relatively faster. A job that may yield (not
  // Gold, no deadline) tries its committed types by this first, fastest next: a Philly job takes
  // A100 room before H100 room while fine-tunes wait (they run 2.8x as fast on an H100, it 1.6x),
  // so the H100s' holes are not filled with work they do relatively worst. Only under a standing
  // backlog (more training waiting than the committed GPUs hold: every committed GPU will be
  // used, so what counts is which work it does); otherwise the fastest type with room finishes
  // the job soonest and frees its GPUs.
  if (!MatchYields(r, type) || !StandingBacklog()) return 1;
  const auto t = static_cast<std::size_t>(type);
  const double own = MatchClassOf(r).rel[t];
  double best = own;
  for (const MatchClass& c : match_classes_) {
    if (c.waiting > 0) best = std::max(best, c.rel[t]);
  }
  return best > 0 && std::isfinite(best) ? own / best : 1;
}

const Engine::MatchClass& Engine::MatchClassOf(const JobRun& r) const {
  return match_classes_[static_cast<std::size_t>(match_class_of_[job_index_.at(r.job->id)])];
}

bool Engine::Outmatched(const JobRun& r, int pool) const {
  const PoolRun& p = pools_[static_cast<std::size_t>(pool)];
  if (!p.committed() || !MatchYields(r, p.spec->type)) return false;
  for (const MatchClass& c : match_classes_) {
    // A waiting claimant whose gang fits the pool's room now (else the room would idle).
    if (c.waiting > 0 && MatchClaims(c, r, p.spec->type) && GangRoomNow(pool, c.pod) >= c.pods) return true;
  }
  return false;
}

bool Engine::YieldNodeFor(const JobRun& w, const std::vector<std::vector<char>>& pinned,
                          std::vector<std::vector<std::vector<std::size_t>>>& on) {
  // A gang that fits no committed node waits while jobs it outmatches hold room on a type where it
  // is relatively faster: a committed node of such a type is emptied for it (fewest GPUs in use
  // first) when at least one occupant yields to it and the others fit elsewhere as Defragment
  // moves them. Each job that yields checkpoints and moves to a hole on the reference type, or
  // goes back to its queue (the checkpoint's cost is the work lost either way).
  if (!c_.match_types) return false;
  EnsureMatchTable();
  if (match_numeraire_ < 0) return false;
  const MatchClass& wc = MatchClassOf(w);
  const int g = w.pod.num_gpu;
  const auto& book = admitter_->book();
  std::vector<int> to_ref;
  for (const auto& q : pools_) {
    if (q.committed() && q.spec->type == match_numeraire_) to_ref.push_back(q.index);
  }
  std::vector<std::tuple<std::int64_t, int, std::size_t>> nodes;  // (GPUs in use, pool, node)
  for (const auto& p : pools_) {
    const int t = p.spec->type;
    if (!p.committed() || t == match_numeraire_ || w.job->steps_per_s[static_cast<std::size_t>(t)] <= 0) continue;
    const auto pu = static_cast<std::size_t>(p.index);
    for (std::size_t n = 0; n < p.slots.size(); ++n) {
      if (p.slots[n].phase != Phase::kUp || p.slots[n].gpus < g || pinned[pu][n] || on[pu][n].empty()) continue;
      const bool any = std::any_of(on[pu][n].begin(), on[pu][n].end(), [&](std::size_t i) {
        return MatchYields(jobs_[i], t) && MatchClaims(wc, jobs_[i], t);
      });
      if (!any) continue;
      nodes.emplace_back(p.slots[n].gpus * cluster::kMilliPerGpu -
                             p.state->node(cluster::NodeId(static_cast<std::uint32_t>(n))).TotalGpuIdle(),
                         p.index, n);
    }
  }
  std::sort(nodes.begin(), nodes.end());
  for (const auto& [busy, pi, n] : nodes) {
    PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    const auto pu = static_cast<std::size_t>(pi);
    const int t = p.spec->type;
    const cluster::NodeId node(static_cast<std::uint32_t>(n));
    // The yielders' GPUs return to the cohort: the gang's tenant must be admissible then.
    double yielded = 0;
    for (std::size_t i : on[pu][n]) {
      if (MatchYields(jobs_[i], t) && MatchClaims(wc, jobs_[i], t)) yielded += jobs_[i].job->gpus;
    }
    if (tenancy::FromQuantity(book.Available(w.job->tenant, 0)) + yielded < w.job->gpus - 1e-9) continue;
    p.state->SetEligibility(node, cluster::NodeEligibility::kNone);
    std::vector<std::pair<std::size_t, Where>> moves;
    std::vector<std::size_t> requeue;
    bool all = true;
    for (std::size_t i : on[pu][n]) {
      // A job that yields moves to a hole on the reference type, else back to its queue; any
      // other is moved as Defragment moves it, or the node stays.
      const JobRun& r = jobs_[i];
      const bool yields = MatchYields(r, t) && MatchClaims(wc, r, t);
      Where dest;
      if (TryPlace(r.pod, yields ? to_ref : DefragDestinations(r, pi, /*to_reference=*/false), &dest)) {
        moves.emplace_back(i, dest);
      } else if (yields) {
        requeue.push_back(i);
      } else {
        all = false;
        break;
      }
    }
    p.state->SetEligibility(node, cluster::NodeEligibility::kAll);
    if (!CommitMoves(all, moves, on)) continue;
    on[pu][n].clear();
    for (std::size_t i : requeue) RequeueYielder(i);
    return true;
  }
  return false;
}

void Engine::RequeueYielder(std::size_t i) {
  JobRun& r = jobs_[i];
  RollBack(r, s_.fleet.checkpoint_cost_s);
  ReleaseJob(r);
  ++r.restarts;
  r.state = JobState::kQueued;
  admitter_->Evicted(r.job->id, /*requeue=*/true);
  pending_jobs_.erase(std::remove(pending_jobs_.begin(), pending_jobs_.end(), i), pending_jobs_.end());
  ++out_.match_requeues;
}

bool Engine::YieldRoomFor(const JobRun& w, std::vector<std::vector<std::vector<std::size_t>>>& on) {
  // Round 5 (issue 39, fleet c): the owned H100s hold Gold jobs, 2-GPU fine-tunes and 1-GPU Philly
  // jobs side by side. A Philly job took an H100 hole when no fine-tune waiting fitted it; once
  // fine-tunes wait again, nothing gives the GPU back until the Philly job ends (YieldNodeFor
  // empties whole nodes only, and a Gold job on a node keeps it). Under a standing backlog, a
  // one-pod job waiting with no room on a committed type where it is relatively faster takes room
  // on one node of that type from the jobs it outmatches there (MatchClaims: relatively slower
  // there, and fair sharing kept): the fewest GPUs yielded, on the node needing the least; each
  // moves to a hole on the reference type, else goes back to its queue from a checkpoint. The
  // waiting job's tenant must be admissible for it then. Reads the queue and the nodes now.
  if (!c_.match_types || w.job->pods > 1 || !StandingBacklog()) return false;
  EnsureMatchTable();
  if (match_numeraire_ < 0) return false;
  const MatchClass& wc = MatchClassOf(w);
  const int g = w.pod.num_gpu;
  std::vector<int> to_ref;
  for (const auto& q : pools_) {
    if (q.committed() && q.spec->type == match_numeraire_) to_ref.push_back(q.index);
  }
  // Best node: (GPUs yielded, pool, node) and its yielders.
  std::tuple<int, int, std::size_t> best{std::numeric_limits<int>::max(), -1, 0};
  std::vector<std::size_t> best_yield;
  // Its committed types fastest first, down to the first with room for it now (it is placed there
  // without help); the reference type is never taken from anyone.
  std::vector<std::pair<double, int>> order;
  for (const auto& p : pools_) {
    const double speed = w.job->steps_per_s[static_cast<std::size_t>(p.spec->type)];
    if (p.committed() && speed > 0) order.emplace_back(-speed, p.index);
  }
  std::sort(order.begin(), order.end());
  for (const auto& [neg_speed, index] : order) {
    const PoolRun& p = pools_[static_cast<std::size_t>(index)];
    const int t = p.spec->type;
    if (GangRoomNow(p.index, w.pod) >= 1) break;
    if (t == match_numeraire_) continue;
    const auto pu = static_cast<std::size_t>(p.index);
    for (std::size_t n = 0; n < p.slots.size(); ++n) {
      if (p.slots[n].phase != Phase::kUp || p.slots[n].gpus < g) continue;
      std::vector<std::size_t> ys;
      for (std::size_t i : on[pu][n]) {
        if (MatchYields(jobs_[i], t) && MatchClaims(wc, jobs_[i], t)) ys.push_back(i);
      }
      int yielded = 0;
      const std::vector<std::size_t> take = YieldersOnNode(p.index, n, std::move(ys), g, &yielded);
      if (take.empty()) continue;
      if (std::make_tuple(yielded, p.index, n) < best) {
        best = {yielded, p.index, n};
        best_yield = take;
      }
    }
  }
  const auto [yielded, pi, n] = best;
  if (pi < 0) return false;
  // The yielders' GPUs return to the cohort: the waiting job's tenant must be admissible then.
  if (w.state != JobState::kPending &&
      tenancy::FromQuantity(admitter_->book().Available(w.job->tenant, 0)) + yielded < w.job->gpus - 1e-9) {
    return false;
  }
  PoolRun& p = pools_[static_cast<std::size_t>(pi)];
  const cluster::NodeId node(static_cast<std::uint32_t>(n));
  p.state->SetEligibility(node, cluster::NodeEligibility::kNone);
  std::vector<std::pair<std::size_t, Where>> moves;
  std::vector<std::size_t> requeue;
  for (std::size_t i : best_yield) {
    Where dest;
    if (TryPlace(jobs_[i].pod, to_ref, &dest)) {
      moves.emplace_back(i, dest);
    } else {
      requeue.push_back(i);
    }
  }
  p.state->SetEligibility(node, cluster::NodeEligibility::kAll);
  CommitMoves(/*all=*/true, moves, on);
  for (std::size_t i : requeue) RequeueYielder(i);
  auto& here = on[static_cast<std::size_t>(pi)][n];
  here.erase(std::remove_if(here.begin(), here.end(),
                            [&](std::size_t i) { return std::find(best_yield.begin(), best_yield.end(), i) != best_yield.end(); }),
             here.end());
  if (w.state == JobState::kPending) {
    // Admitted already (its quota held): it takes the room now, before any other pod.
    JobRun& r = jobs_[job_index_.at(w.job->id)];
    if (PlaceJob(r, {pi})) StartJob(r);
  }
  return true;
}

bool Engine::TakeRoomForDeadline(JobRun& r, const std::vector<int>& cands) {
  // Round 7 (issue 39, fleet c): under a standing backlog every committed GPU is busy whatever the
  // cloud does, and a job without a deadline loses nothing a promise depends on by waiting. A job
  // with a deadline that finds no committed room rented an on-demand H100 at about 413 PFLOP per $
  // against the owned fleet's 563, while best-effort backlog work ran on owned GPUs fast enough for
  // it. It now takes their room instead: on the committed pools ahead of its first cloud pool in
  // its candidates (the types that keep its deadline, fastest first), the node where the fewest
  // GPUs yield; the yielders (running, one pod, no deadline, not Gold, of no higher tier than it)
  // checkpoint and go back to their queue, as Kueue's preemption with a checkpoint. Fair sharing
  // is kept as in the type matching: its tenant's share of its nominal quota stays within 1 or the
  // yielder's. Only while the cloud pool is dearer per PFLOP than the committed GPUs so far (the
  // backlog rule's test). Reads the queue, the nodes and the bill so far.
  if (!c_.deadline_takes_backlog_room || !std::isfinite(r.job->deadline_s) || r.job->pods > 1) return false;
  std::vector<int> committed;
  int cloud = -1;
  for (int pi : cands) {
    if (!pools_[static_cast<std::size_t>(pi)].committed()) {
      cloud = pi;
      break;
    }
    if (GangRoomNow(pi, r.pod) >= 1) return false;  // room now: PlaceJob takes it
    committed.push_back(pi);
  }
  if (cloud < 0 || committed.empty()) return false;
  const double cloud_speed = r.job->steps_per_s[static_cast<std::size_t>(pools_[static_cast<std::size_t>(cloud)].spec->type)];
  if (cloud_speed <= 0) return false;
  if (!BacklogAndCloudDearer(r, PriceOf(cloud) * r.job->gpus / cloud_speed)) return false;
  const double claimant_share = TenantShare(r.job->tenant, 0);
  const int g = r.pod.num_gpu;
  NodeOccupants occupants = Occupants(/*committed=*/true, /*training_stays=*/false);
  // Best node: (GPUs yielded, rank of its pool in cands, node) and its yielders.
  std::tuple<int, std::size_t, std::size_t> best{std::numeric_limits<int>::max(), 0, 0};
  std::vector<std::size_t> best_yield;
  int best_pool = -1;
  for (std::size_t k = 0; k < committed.size(); ++k) {
    const int pi = committed[k];
    const PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    const auto pu = static_cast<std::size_t>(pi);
    for (std::size_t n = 0; n < p.slots.size(); ++n) {
      if (p.slots[n].phase != Phase::kUp || p.slots[n].gpus < g) continue;
      std::vector<std::size_t> ys;
      for (std::size_t i : occupants.movable[pu][n]) {
        const JobRun& y = jobs_[i];
        if (std::isfinite(y.job->deadline_s) || TierRank(y) < TierRank(r)) continue;
        if (s_.tenancy.tenants[static_cast<std::size_t>(y.job->tenant)].tier == tenancy::Tier::kGold) continue;
        if (claimant_share > std::max(1.0, TenantShare(y.job->tenant, 0)) + 1e-9) continue;
        ys.push_back(i);
      }
      int yielded = 0;
      const std::vector<std::size_t> take = YieldersOnNode(pi, n, std::move(ys), g, &yielded);
      if (take.empty()) continue;
      if (std::make_tuple(yielded, k, n) < best) {
        best = {yielded, k, n};
        best_yield = take;
        best_pool = pi;
      }
    }
  }
  if (best_pool < 0) return false;
  for (std::size_t i : best_yield) RequeueYielder(i);
  return PlaceJob(r, {best_pool});
}

}  // namespace seedance::fleet::detail
