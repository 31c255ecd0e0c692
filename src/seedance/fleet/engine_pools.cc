// Pools, placement, the cluster autoscaler and serving replicas of the fleet week's engine.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "seedance/fleet/engine_internal.h"
#include "seedance/sched/gang.h"  // FindVictimsForGang
#include "seedance/sched/victims.h"

namespace seedance::fleet::detail {

int Engine::NodesHeld(const PoolRun& p) const {
  int n = 0;
  for (const Slot& s : p.slots) n += s.phase != Phase::kDown;
  return n;
}

int Engine::SpotAvailable(const PoolRun& p) const {
  if (p.spec->tier != sim::Tier::kSpot || p.spec->spot.empty()) return p.spec->max_gpus;
  return std::min(p.spec->max_gpus, p.spec->spot.AvailableAt(now_));
}

bool Engine::BootRoom(int pool, int gpus) const {
  const PoolRun& p = pools_[static_cast<std::size_t>(pool)];
  if (p.committed() || gpus > kGpusPerNode) return false;
  if (p.right_sized) return ShapeFor(p, gpus) >= 0;
  const int held = NodesHeld(p);
  if (held >= static_cast<int>(p.slots.size())) return false;
  return (held + 1) * kGpusPerNode <= SpotAvailable(p);
}

std::vector<int> Engine::TypeCandidates(int fleet_type) const {
  // A fixed GPU type (notebooks, serving replicas): committed pools first (Kueue's flavor order;
  // their marginal price is 0), then on-demand.
  std::vector<int> out;
  for (const auto& p : pools_) {
    if (p.spec->type == fleet_type && p.committed()) out.push_back(p.index);
  }
  const int od = s_.fleet.FindPool(fleet_type, sim::Tier::kOnDemand);
  if (od >= 0) out.push_back(od);
  return out;
}

std::vector<int> Engine::TrainingCandidates(const JobRun& r) const {
  const TrainingJob& j = *r.job;
  struct Cand {
    double key;
    int pool;
    double first = 0;  // sorts before key: Seedance's type matching, minus the job's advantage there
  };
  std::vector<Cand> committed, cloud, too_slow, cloud_too_slow;
  const double remaining_est = j.user_estimate_steps > 0 ? std::max(0.0, j.user_estimate_steps - r.done) : 0.0;
  // Whether the submitter's estimate says the job misses its deadline at `speed` from now.
  const auto misses = [&](double speed) {
    return std::isfinite(j.deadline_s) && remaining_est > 0 && remaining_est / speed > j.deadline_s - now_;
  };
  // Seedance: a type too slow for a job with a deadline: by the submitter's estimate where it has
  // one, else (the work left unknown) slower than migrate_min_speed times its fastest type (the
  // patience a move to a committed type allows).
  double fastest = 0;
  for (double v : j.steps_per_s) fastest = std::max(fastest, v);
  const auto too_slow_for_deadline = [&](double speed) {
    if (!c_.cost_aware || !std::isfinite(j.deadline_s)) return false;
    return remaining_est > 0 ? misses(speed) : speed < c_.migrate_min_speed * fastest;
  };
  for (const auto& p : pools_) {
    const double speed = j.steps_per_s[static_cast<std::size_t>(p.spec->type)];
    if (speed <= 0) continue;
    if (p.committed()) {
      // Both stacks: owned / reserved first (Kueue's first flavor; marginal price 0), fastest first.
      if (Outmatched(r, p.index)) continue;  // Seedance's type matching
      // Seedance: a committed type too slow for the deadline goes after the cloud types that keep
      // it (free GPUs do not pay for a missed deadline).
      (too_slow_for_deadline(speed) ? too_slow : committed).push_back({-speed, p.index, -MatchAdvantage(r, p.spec->type)});
      continue;
    }
    const double usd_per_step = PriceOf(p.index) * j.gpus / speed;
    if (c_.cost_aware && c_.backlog_waits_for_committed && CloudCostsMoreThanTheBacklog(r, usd_per_step)) continue;
    if (!c_.cost_aware) {
      // SkyPilot any_of: the optimizer's dollars per step, spot at its own price.
      cloud.push_back({usd_per_step, p.index});
      continue;
    }
    // Seedance: spot at its expected cost, the work lost per preemption (half a checkpoint
    // interval plus the restart and a new node's cold start) times the node preemption rate seen
    // so far on this pool; a job whose deadline the submitter's estimate says spot could miss
    // (less than 2x slack) avoids spot, and a cloud type too slow for the deadline goes last.
    double key = usd_per_step;
    if (p.spec->tier == sim::Tier::kSpot) {
      const double node_drops_per_s = p.held_gpu_s > 0 ? p.drops / p.held_gpu_s * kGpusPerNode : 1.0 / (6 * 3600.0);
      const double lost_s = j.checkpoint_s / 2 + s_.fleet.restart_s + s_.fleet.cold_start_s;
      key *= 1.0 + node_drops_per_s * lost_s;
      if (std::isfinite(j.deadline_s) && remaining_est > 0 && 2.0 * remaining_est / speed > j.deadline_s - now_) continue;
    }
    if (too_slow_for_deadline(speed)) {
      cloud_too_slow.push_back({key, p.index});
      continue;
    }
    cloud.push_back({key, p.index});
  }
  auto by_key = [](const Cand& a, const Cand& b) { return std::tie(a.first, a.key, a.pool) < std::tie(b.first, b.key, b.pool); };
  std::sort(committed.begin(), committed.end(), by_key);
  std::sort(cloud.begin(), cloud.end(), by_key);
  std::sort(too_slow.begin(), too_slow.end(), by_key);
  std::sort(cloud_too_slow.begin(), cloud_too_slow.end(), by_key);
  // The types that keep the deadline (committed, then cloud); the ones too slow only when none of
  // those has room now, a node booting or one to boot (a job with a deadline waits for a fast
  // type's node rather than start where it would miss; it never waits for room that never comes).
  std::vector<int> out;
  bool fast_room = false;
  for (const auto* list : {&committed, &cloud}) {
    for (const auto& c : *list) {
      out.push_back(c.pool);
      const PoolRun& p = pools_[static_cast<std::size_t>(c.pool)];
      const bool booting = std::any_of(p.slots.begin(), p.slots.end(), [](const Slot& x) { return x.phase == Phase::kBooting; });
      fast_room = fast_room || booting || p.state->CanPlaceAnywhere(r.pod) || BootRoom(c.pool, r.pod.num_gpu);
    }
  }
  if (fast_room) return out;
  for (const auto* list : {&too_slow, &cloud_too_slow}) {
    for (const auto& c : *list) out.push_back(c.pool);
  }
  return out;
}

double Engine::WaitingTrainingGpus() const {
  if (waiting_at_ != now_) {
    waiting_gpus_ = 0;
    for (const JobRun& r : jobs_) {
      if ((r.state == JobState::kQueued && r.job->arrival_s <= now_) || r.state == JobState::kPending) waiting_gpus_ += r.job->gpus;
    }
    waiting_at_ = now_;
  }
  return waiting_gpus_;
}

bool Engine::CloudCostsMoreThanTheBacklog(const JobRun& r, double usd_per_step) const {
  // Seedance's cost-aware layer on a committed fleet with a standing backlog (issue 39, fleet c):
  // while the training waiting now asks for more GPUs than the committed pools hold, every
  // committed GPU stays busy whatever the cloud does, so a cloud GPU-hour only adds work at the
  // cloud's price. A job that can wait (no deadline, not Gold) rents the cloud only where its
  // dollars per PFLOP there are no more than the committed GPUs' so far (their bill over the
  // training PFLOP they did; the past only). No constant.
  const TrainingJob& j = *r.job;
  if (std::isfinite(j.deadline_s)) return false;
  if (s_.tenancy.tenants[static_cast<std::size_t>(j.tenant)].tier == tenancy::Tier::kGold) return false;
  return BacklogAndCloudDearer(r, usd_per_step);
}

bool Engine::BacklogAndCloudDearer(const JobRun& r, double usd_per_step) const {
  const TrainingJob& j = *r.job;
  if (j.pflop_per_step <= 0) return false;
  if (committed_gpus_ <= 0 || committed_pflop_ <= 0 || !StandingBacklog()) return false;
  // usd_per_step: $ an hour per step a second.
  return usd_per_step / 3600.0 / j.pflop_per_step > out_.committed_usd / committed_pflop_;
}

bool Engine::TryPlace(const cluster::PodSpec& pod, const std::vector<int>& cands, Where* out) {
  for (int pi : cands) {
    PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    const sched::PlacementDecision d = Decide(p, pod);
    if (!d.placed()) continue;
    p.state->Bind(pod, d.node, d.gpus);
    out->pool = pi;
    out->node = d.node;
    out->gpus = d.gpus;
    return true;
  }
  return false;
}

bool Engine::CouldPlace(const cluster::PodSpec& pod, const std::vector<int>& cands) {
  for (int pi : cands) {
    PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    if (p.state->CanPlaceAnywhere(pod) || BootRoom(pi, pod.num_gpu)) return true;
  }
  return false;
}

bool Engine::ClaimBoot(const std::vector<int>& cands, int gpus, bool replica) {
  // A pending pod first claims room on a node already booting in one of its pools; else the
  // cluster autoscaler boots a node in the first pool with room.
  for (int pi : cands) {
    PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    if (p.right_sized) {  // room on one booting node (engine_nodes.cc)
      if (ClaimBootingSlot(p, gpus, replica)) return true;
      continue;
    }
    int booting = 0;
    for (const Slot& s : p.slots) booting += s.phase == Phase::kBooting ? s.gpus : 0;
    int& claimed = boot_claimed_[static_cast<std::size_t>(pi)];
    if (booting - claimed >= gpus) {
      claimed += gpus;
      NoteClaim(p, gpus, replica);
      return true;
    }
  }
  for (int pi : cands) {
    if (!BootRoom(pi, gpus)) continue;
    PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    if (p.right_sized) {  // Karpenter: the cheapest shape that holds the pod
      if (BootSlot(p, gpus, replica)) return true;
      continue;
    }
    for (Slot& s : p.slots) {
      if (s.phase != Phase::kDown) continue;
      s.phase = Phase::kBooting;
      s.ready_at = now_ + s_.fleet.cold_start_s;
      ++out_.nodes_booted;
      boot_claimed_[static_cast<std::size_t>(pi)] += gpus;
      NoteClaim(p, gpus, replica);
      return true;
    }
  }
  return false;
}

void Engine::Release(Where& w, const cluster::PodSpec& pod) {
  if (!w.placed()) return;
  PoolRun& p = pools_[static_cast<std::size_t>(w.pool)];
  p.state->Unbind(pod, w.node, w.gpus);
  Slot& slot = p.slots[w.node.value()];
  if (p.state->node(w.node).TotalGpuIdle() == slot.gpus * cluster::kMilliPerGpu) slot.empty_since = now_;
  w = Where{};
}

int Engine::BootableNodes(int pool, int gpus) const {
  const PoolRun& p = pools_[static_cast<std::size_t>(pool)];
  if (p.committed() || gpus > kGpusPerNode) return 0;
  if (p.right_sized) return std::max(0, (p.spec->max_gpus - GpusHeld(p)) / kGpusPerNode);
  const int held = NodesHeld(p);
  const int room = static_cast<int>(p.slots.size()) - held;
  return std::max(0, std::min(room, (SpotAvailable(p) - held * kGpusPerNode) / kGpusPerNode));
}

// Gangs (TrainingJob::pods > 1) in every stack alike: all or nothing, in one pool (one GPU type
// and kind: Kueue admits a workload's pod set on one flavor), each pod placed in turn by the
// stack's own placement policy (kube-scheduler's scoring, or Seedance's packing), several on one
// node where they fit; the gang starts when every pod is placed, holds them all and ends, or is
// preempted, as one. A one-pod job takes the single-pod path unchanged.
bool Engine::TryPlaceJob(const JobRun& r, const std::vector<int>& cands, std::vector<Where>* places) {
  places->clear();
  if (r.job->pods <= 1) {
    Where w;
    if (!TryPlace(r.pod, cands, &w)) return false;
    places->push_back(w);
    return true;
  }
  for (int pi : cands) {
    PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    for (int k = 0; k < r.job->pods; ++k) {
      const sched::PlacementDecision d = Decide(p, r.pod);
      if (!d.placed()) break;
      p.state->Bind(r.pod, d.node, d.gpus);
      places->push_back({pi, d.node, d.gpus});
    }
    if (static_cast<int>(places->size()) == r.job->pods) return true;
    for (const Where& w : *places) p.state->Unbind(r.pod, w.node, w.gpus);
    places->clear();
  }
  return false;
}

void Engine::Hold(JobRun& r, const std::vector<Where>& places) {
  r.where = places.front();
  r.gang.assign(places.begin() + 1, places.end());
  r.ran = true;
}

bool Engine::PlaceJob(JobRun& r, const std::vector<int>& cands) {
  std::vector<Where> places;
  if (!TryPlaceJob(r, cands, &places)) return false;
  Hold(r, places);
  MatchPlaced(r);
  return true;
}

namespace {
// How many more pods like `pod` (whole GPUs) node `id` takes now.
int PodsFitting(const cluster::ClusterState& state, std::uint32_t id, const cluster::PodSpec& pod) {
  const cluster::NodeId n(id);
  if (!state.CanPlace(n, pod)) return 0;
  const cluster::NodeState& node = state.node(n);
  return static_cast<int>(std::min({static_cast<std::int64_t>(cluster::CountGpusWithIdle(node, pod.gpu_milli) / pod.num_gpu),
                                    node.cpu_left / std::max<std::int64_t>(1, pod.cpu.raw()),
                                    node.mem_left / std::max<std::int64_t>(1, pod.memory.raw())}));
}
}  // namespace

int Engine::GangRoomNow(int pool, const cluster::PodSpec& pod) const {
  const PoolRun& p = pools_[static_cast<std::size_t>(pool)];
  int n = 0;
  for (std::uint32_t k = 0; k < p.state->size(); ++k) n += PodsFitting(*p.state, k, pod);
  return n;
}

bool Engine::JobCouldPlace(const JobRun& r, const std::vector<int>& cands) {
  if (r.job->pods <= 1) return CouldPlace(r.pod, cands);
  const int per_node = kGpusPerNode / r.pod.num_gpu;
  for (int pi : cands) {
    if (GangRoomNow(pi, r.pod) + per_node * BootableNodes(pi, r.pod.num_gpu) >= r.job->pods) return true;
  }
  return false;
}

bool Engine::ClaimBootJob(const JobRun& r, const std::vector<int>& cands) {
  if (r.job->pods <= 1) return ClaimBoot(cands, r.pod.num_gpu, /*replica=*/false);
  // The gang's pods that fit no node up now: first on nodes already booting in its pool, the rest
  // on nodes booted for it, all in the first pool that can hold the gang.
  const int g = r.pod.num_gpu, per_node = kGpusPerNode / g;
  for (int pi : cands) {
    PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    if (p.right_sized) {  // pod by pod: room on a booting node, else a node of the cheapest shape
      const int need = std::max(0, r.job->pods - GangRoomNow(pi, r.pod));
      int got = 0;
      while (got < need && (ClaimBootingSlot(p, g, false) || BootSlot(p, g, false))) ++got;
      if (got == need) return true;
      continue;
    }
    int booting = 0;
    for (const Slot& s : p.slots) booting += s.phase == Phase::kBooting ? s.gpus : 0;
    int& claimed = boot_claimed_[static_cast<std::size_t>(pi)];
    const int need = std::max(0, r.job->pods - GangRoomNow(pi, r.pod));
    const int covered = std::min(need, std::max(0, booting - claimed) / g);
    int boot = (need - covered + per_node - 1) / per_node;
    if (boot > BootableNodes(pi, g)) continue;
    claimed += need * g;
    for (Slot& s : p.slots) {
      if (boot == 0) break;
      if (s.phase != Phase::kDown) continue;
      s.phase = Phase::kBooting;
      s.ready_at = now_ + s_.fleet.cold_start_s;
      ++out_.nodes_booted;
      --boot;
    }
    for (int k = 0; k < need; ++k) NoteClaim(p, g, /*replica=*/false);
    return true;
  }
  return false;
}

void Engine::ReleaseJob(JobRun& r) {
  Release(r.where, r.pod);
  for (Where& w : r.gang) Release(w, r.pod);
  r.gang.clear();
}

bool Engine::JobOnNode(const JobRun& r, int pool, cluster::NodeId node) const {
  if (r.where.pool == pool && r.where.node == node) return true;
  return std::any_of(r.gang.begin(), r.gang.end(), [&](const Where& w) { return w.pool == pool && w.node == node; });
}

void Engine::AddJobCandidates(const JobRun& r, int pool, double cost, std::vector<sched::PreemptionCandidate>* out) const {
  if (r.where.pool != pool) return;
  out->push_back({r.job->id, r.where.node, r.pod, r.where.gpus, cost});
  for (const Where& w : r.gang) out->push_back({r.job->id, w.node, r.pod, w.gpus, cost});
}

std::optional<sched::VictimSet> Engine::GangVictims(int pool, const cluster::PodSpec& pod, int count,
                                                    std::span<const sched::PreemptionCandidate> pc) const {
  // One pod and no gang among the candidates: FindVictimsForFit itself (FindVictimsForGang's path).
  auto sets = sched::FindVictimsForGang(*pools_[static_cast<std::size_t>(pool)].state, pod, count, pc);
  if (!sets) return std::nullopt;
  sched::VictimSet out = std::move(sets->front());
  for (std::size_t k = 1; k < sets->size(); ++k) {
    out.victims.insert(out.victims.end(), (*sets)[k].victims.begin(), (*sets)[k].victims.end());
    out.cost += (*sets)[k].cost;
  }
  std::sort(out.victims.begin(), out.victims.end());
  return out;
}

bool Engine::NeverFits(const JobRun& r) const {
  // A pod wider than a node, or a gang wider than every pool of its types (a committed pool's
  // nodes, a cloud pool's quota or spot cap in whole nodes).
  if (r.pod.num_gpu > kGpusPerNode) return true;
  for (const auto& p : pools_) {
    if (r.job->steps_per_s[static_cast<std::size_t>(p.spec->type)] <= 0) continue;
    int room = 0;  // pods the pool holds when empty
    for (const Slot& s : p.slots) room += s.gpus / r.pod.num_gpu;
    if (!p.committed()) room = std::min(room, p.spec->max_gpus / kGpusPerNode * (kGpusPerNode / r.pod.num_gpu));
    if (room >= r.job->pods) return false;
  }
  return true;
}

void Engine::SpotReconcile() {
  for (auto& p : pools_) {
    if (p.spec->tier != sim::Tier::kSpot) continue;
    const int avail = SpotAvailable(p);
    while (NodesHeld(p) * kGpusPerNode > avail) {
      // The provider takes back a booting node first, else the held node with the fewest GPUs in use.
      int victim = -1;
      std::int64_t best_idle = -1;
      for (std::size_t k = 0; k < p.slots.size(); ++k) {
        const Slot& s = p.slots[k];
        if (s.phase == Phase::kDown) continue;
        const std::int64_t idle = s.phase == Phase::kBooting ? std::numeric_limits<std::int64_t>::max()
                                                              : p.state->node(cluster::NodeId(static_cast<std::uint32_t>(k))).TotalGpuIdle();
        if (idle > best_idle) {
          best_idle = idle;
          victim = static_cast<int>(k);
        }
      }
      if (victim < 0) break;
      const cluster::NodeId node(static_cast<std::uint32_t>(victim));
      for (auto& r : jobs_) {
        if (JobOnNode(r, p.index, node)) PreemptJob(r, PreemptedBy::kSpot);
      }
      ++p.drops;
      p.slots[static_cast<std::size_t>(victim)].phase = Phase::kDown;
      p.state->SetEligibility(node, cluster::NodeEligibility::kNone);
    }
  }
}

void Engine::Serving(std::size_t k) {
  for (std::size_t d = 0; d < s_.serving.size(); ++d) {
    const auto& rps = s_.serving[d].demand.rps;
    const std::span<const double> past(rps.data(), std::min(k, rps.size()));
    ServingMix want = controllers_[d].Desired(k, past);
    if (c_.serving_yields_to_training) YieldServing(d, &want);
    const auto count = [&](std::size_t t) {
      int have = 0;
      for (const Replica& r : replicas_) have += r.deployment == static_cast<int>(d) && r.type == static_cast<int>(t);
      return have;
    };
    const auto scale_up = [&](std::size_t t, int have, int target) {
      for (; have < target; ++have) {
        Replica r;
        r.deployment = static_cast<int>(d);
        r.type = static_cast<int>(t);
        r.fleet_type = profile_fleet_type_[d][t];
        r.pod = ReplicaPod(d, t);
        r.requested_at = now_;
        replicas_.push_back(r);
      }
    };
    // With moves (YieldServing) every type scales up before any scales down (make before break).
    if (d < yields_.size() && !yields_[d].empty()) {
      for (std::size_t t = 0; t < want.replicas.size(); ++t) scale_up(t, count(t), want.replicas[t]);
    }
    for (std::size_t t = 0; t < profiles_[d]->gpus.size(); ++t) {
      int have = count(t);
      const int target = t < want.replicas.size() ? want.replicas[t] : 0;
      scale_up(t, have, target);
      have = std::max(have, target);
      // Scale down: the newest replicas first (not yet placed ones before those serving); while a
      // replica of the deployment is still on its way, serving ones are kept (make before break).
      bool arriving = false;
      for (const Replica& r : replicas_) arriving = arriving || (r.deployment == static_cast<int>(d) && r.ready_at > now_);
      while (have > target) {
        std::size_t pick = replicas_.size();
        for (std::size_t i = replicas_.size(); i-- > 0;) {
          const Replica& r = replicas_[i];
          if (r.deployment != static_cast<int>(d) || r.type != static_cast<int>(t)) continue;
          // Not yet placed, then drained (YieldServing), then the newest.
          const auto rank = [](const Replica& x) { return std::make_tuple(x.where.placed() && !x.drain, x.where.placed(), -x.ready_at); };
          if (pick == replicas_.size() || rank(r) < rank(replicas_[pick])) pick = i;
        }
        if (pick == replicas_.size() || (arriving && replicas_[pick].ready_at <= now_)) break;
        Release(replicas_[pick].where, replicas_[pick].pod);
        replicas_.erase(replicas_.begin() + static_cast<std::ptrdiff_t>(pick));
        --have;
      }
    }
  }
}

void Engine::PlacePending() {
  std::fill(boot_claimed_.begin(), boot_claimed_.end(), 0);
  // Serving replicas first (Gold, latency), then training in admission order, then notebooks.
  for (Replica& r : replicas_) {
    if (r.where.placed()) continue;
    const std::vector<int> cands = TypeCandidates(r.fleet_type);
    if (TryPlace(r.pod, cands, &r.where) || (PreemptForReplica(r.pod, cands) && TryPlace(r.pod, cands, &r.where))) {
      r.ready_at = now_ + kModelLoadS;
    } else {
      ClaimBoot(cands, r.pod.num_gpu, /*replica=*/true);
    }
  }
  // The waiting training pods and notebooks, in admission order, may take the GPUs held for them.
  placing_claimants_ = true;
  if (c_.gold_first) {
    // Seedance: the highest tier first (a Gold job's guarantee is a start within one cycle and a
    // cold start), then admission order; the claims on booting nodes follow the same order.
    std::stable_sort(pending_jobs_.begin(), pending_jobs_.end(), [&](std::size_t a, std::size_t b) {
      return TierRank(jobs_[a]) < TierRank(jobs_[b]);
    });
  }
  std::vector<std::size_t> still;
  for (std::size_t i : pending_jobs_) {
    JobRun& r = jobs_[i];
    if (r.state != JobState::kPending) continue;
    const std::vector<int> cands = TrainingCandidates(r);
    if (TakeRoomForDeadline(r, cands) || PlaceJob(r, cands)) {
      StartJob(r);
    } else {
      ClaimBootJob(r, GoldStartBoots(r, cands));
      still.push_back(i);
    }
  }
  pending_jobs_.swap(still);
  still.clear();
  for (std::size_t i : pending_devs_) {
    DevRun& d = devs_[i];
    if (d.state != DevState::kPending) continue;
    if (PlaceDev(d)) {
      StartDev(d);
    } else {
      ClaimBootDev(d);
      still.push_back(i);
    }
  }
  pending_devs_.swap(still);
  placing_claimants_ = false;
  ReleaseHolds();
}

std::vector<int> Engine::GoldStartBoots(const JobRun& r, const std::vector<int>& cands) const {
  // A booting spot node is the first the provider takes back: a Gold job that has not run yet
  // claims and boots nodes only in its candidates that are not spot (all of them if none is).
  if (!c_.gold_first || r.ran || TierRank(r) != -tenancy::TierPriority(tenancy::Tier::kGold)) return cands;
  std::vector<int> out;
  for (int pi : cands) {
    if (pools_[static_cast<std::size_t>(pi)].spec->tier != sim::Tier::kSpot) out.push_back(pi);
  }
  return out.empty() ? cands : out;
}

void Engine::MigrateToCommitted(std::size_t k) {
  // Seedance's cost-aware layer (S3): a training job running on a cloud pool moves to a committed
  // pool (owned, reserved: marginal price 0) that has room now, at a type at least
  // migrate_min_speed as fast (fastest first), once it has run 30 min there (a job's run so far is
  // the no-oracle guess of what is left, so a job about to end is not moved for nothing), and only
  // if its deadline still holds there by the submitter's estimate (else by that guess): it
  // checkpoints, releases its cloud GPUs and restarts from the checkpoint. SkyPilot's managed jobs
  // never move a healthy job.
  if (!c_.cost_aware) return;
  // Serving's forecast room (serving_room_ahead_s), per fleet type: the GPUs the serving
  // controllers ask for within the look-ahead beyond what they ask for now, and the committed GPUs
  // free now; taken at the first job that could move.
  std::vector<double> keep, free;
  const auto room_kept = [&] {
    if (!keep.empty()) return;
    keep.assign(s_.fleet.gpu_types.size(), 0.0);
    free.assign(s_.fleet.gpu_types.size(), 0.0);
    if (c_.serving_room_ahead_s <= 0) return;
    for (std::size_t d = 0; d < s_.serving.size(); ++d) {
      const auto& rps = s_.serving[d].demand.rps;
      const std::span<const double> past(rps.data(), std::min(k, rps.size()));
      const ServingMix now = controllers_[d].Desired(k, past);
      const ServingMix ahead = controllers_[d].DesiredAhead(k, past, c_.serving_room_ahead_s);
      for (std::size_t t = 0; t < ahead.replicas.size() && t < now.replicas.size(); ++t) {
        const int more = ahead.replicas[t] - now.replicas[t];
        if (more > 0) keep[static_cast<std::size_t>(profile_fleet_type_[d][t])] += more * profiles_[d]->tp[t];
      }
    }
    for (const auto& p : pools_) {
      if (!p.committed()) continue;
      for (std::size_t n = 0; n < p.slots.size(); ++n) {
        if (p.slots[n].phase != Phase::kUp) continue;
        free[static_cast<std::size_t>(p.spec->type)] +=
            static_cast<double>(p.state->node(cluster::NodeId(static_cast<std::uint32_t>(n))).TotalGpuIdle()) / cluster::kMilliPerGpu;
      }
    }
  };
  for (JobRun& r : jobs_) {
    if (r.state != JobState::kRunning) continue;
    const PoolRun& from = pools_[static_cast<std::size_t>(r.where.pool)];
    if (from.committed() || now_ - r.seg_start < 1800) continue;
    room_kept();
    const double speed = r.job->steps_per_s[static_cast<std::size_t>(from.spec->type)];
    const double left = r.job->user_estimate_steps > 0 ? std::max(0.0, r.job->user_estimate_steps - r.done) : r.done;
    std::vector<std::pair<double, int>> by_speed;
    for (const auto& p : pools_) {
      const double to = r.job->steps_per_s[static_cast<std::size_t>(p.spec->type)];
      if (!p.committed() || to <= 0 || to < c_.migrate_min_speed * speed) continue;
      if (std::isfinite(r.job->deadline_s) && now_ + s_.fleet.restart_s + left / to > r.job->deadline_s) continue;
      const auto t = static_cast<std::size_t>(p.spec->type);
      if (c_.serving_room_ahead_s > 0 && free[t] - r.job->gpus < keep[t] - 1e-9) continue;  // serving's forecast room
      by_speed.emplace_back(-to, p.index);
    }
    if (by_speed.empty()) continue;
    std::sort(by_speed.begin(), by_speed.end());
    std::vector<int> cands;
    for (const auto& [neg_speed, pool] : by_speed) cands.push_back(pool);
    std::vector<Where> to;
    if (!TryPlaceJob(r, cands, &to)) continue;
    free[static_cast<std::size_t>(pools_[static_cast<std::size_t>(to.front().pool)].spec->type)] -= r.job->gpus;
    MoveJob(r, to);  // checkpoint now: the checkpoint's cost is the only work lost
    ++out_.migrations;
  }
}

bool Engine::PreemptForReplica(const cluster::PodSpec& pod, const std::vector<int>& cands) {
  using SP = StackConfig::ServingPreemption;
  if (c_.serving_preemption == SP::kNone) return false;
  const bool checkpoint_aware = c_.serving_preemption == SP::kCheckpointAware;
  // The cheapest victims in `pool`, or nothing.
  auto victims_in = [&](int pi) -> std::optional<sched::VictimSet> {
    std::vector<sched::PreemptionCandidate> pc;
    for (const JobRun& r : jobs_) {
      if (r.state != JobState::kRunning || r.where.pool != pi) continue;
      const tenancy::Tier tier = s_.tenancy.tenants[static_cast<std::size_t>(r.job->tenant)].tier;
      if (tier == tenancy::Tier::kGold) continue;
      // kube-scheduler: the lowest priorities first, then the fewest victims (a Silver pod weighs
      // as a hundred Bronze ones). Seedance: the lowest priorities first too (round 4: a Silver
      // victim is a tenant's guaranteed work, re-bought on the cloud at once, while a Bronze one
      // waits for cheap room; ignoring the tier made the layer alone +1.4 % dearer), then the work
      // lost since each victim's last checkpoint (GPU-seconds), plus one per victim so that fewer
      // victims win a tie.
      const double lost = r.job->gpus * std::fmod(std::max(0.0, now_ - r.seg_start), r.job->checkpoint_s) + 1.0;
      const double cost = checkpoint_aware ? (tier == tenancy::Tier::kBronze ? 0.0 : kSilverVictimWeight) + lost
                                           : (tier == tenancy::Tier::kBronze ? 1.0 : 100.0);
      AddJobCandidates(r, pi, cost, &pc);
    }
    auto vs = GangVictims(pi, pod, 1, pc);
    if (!vs || vs->victims.empty()) return std::nullopt;
    return vs;
  };
  std::optional<sched::VictimSet> best;
  if (checkpoint_aware) {
    // Seedance compares every committed pool of the replica; only when none can be freed, its
    // cloud pools as PriorityClass preemption would (round 4: booting a node instead left the
    // replica a cold start and the bill a node, where the base preempted).
    for (bool committed : {true, false}) {
      for (int pi : cands) {
        if (pools_[static_cast<std::size_t>(pi)].committed() != committed) continue;
        auto vs = victims_in(pi);
        if (vs && (!best || vs->cost < best->cost)) best = std::move(vs);
      }
      if (best) break;
    }
  } else {
    // kube-scheduler takes the first pool (node group) in the replica's order that can be freed.
    for (int pi : cands) {
      if ((best = victims_in(pi))) break;
    }
  }
  if (!best) return false;
  for (std::int64_t id : best->victims) PreemptJob(jobs_[job_index_.at(id)], PreemptedBy::kServing);
  return true;
}

void Engine::ScaleDown() {
  // The cluster autoscaler removes a node that has been empty for the scale-down delay
  // (cluster-autoscaler's scale-down-unneeded-time) and no pending pod claimed.
  for (auto& p : pools_) {
    if (p.committed()) continue;
    for (std::size_t k = 0; k < p.slots.size(); ++k) {
      Slot& s = p.slots[k];
      if (s.phase != Phase::kUp) continue;
      const cluster::NodeId node(static_cast<std::uint32_t>(k));
      if (p.state->node(node).TotalGpuIdle() != s.gpus * cluster::kMilliPerGpu) continue;
      // Karpenter (right-sized stacks): consolidateAfter; else cluster-autoscaler's delay.
      const double delay = c_.right_size || c_.consolidation != StackConfig::Consolidation::kNone ? c_.consolidate_after_s
                                                                                                  : s_.fleet.scale_down_delay_s;
      if (now_ - s.empty_since < delay) continue;
      if (s.replaces >= 0) continue;
      s.phase = Phase::kDown;
      p.state->SetEligibility(node, cluster::NodeEligibility::kNone);
    }
  }
}

}  // namespace seedance::fleet::detail
