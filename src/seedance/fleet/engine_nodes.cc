// Cloud nodes under Karpenter (issue 39): node shapes sold by the cloud (right-sizing), and the
// consolidation of underutilized nodes (Karpenter's, checkpoint-blind; Seedance's, checkpoint-aware).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "seedance/fleet/engine_internal.h"

namespace seedance::fleet::detail {

namespace {
// Karpenter's default NodePool disruption budget: 10 % of the pool's nodes (rounded up), less the
// nodes being deleted or not ready.
constexpr double kDisruptionBudgetShare = 0.10;
}  // namespace

bool Engine::RightSized(const sim::PoolSpec& ps) const {
  if (!c_.right_size || ps.tier != sim::Tier::kOnDemand) return false;
  return std::any_of(ps.node_gpus.begin(), ps.node_gpus.end(), [](int g) { return g <= kGpusPerNode; });
}

std::vector<int> Engine::ReplicaNodeGpus(const ServingProfile& prof, const std::vector<int>& fleet_type) const {
  // Per profile type: 1 where a committed pool of its fleet type can hold a replica in its holes;
  // else the smallest node its on-demand pool sells that holds one (TypeCandidates: replicas go to
  // committed pools, then on-demand).
  std::vector<int> out;
  for (std::size_t g = 0; g < prof.gpus.size(); ++g) {
    const int f = fleet_type[g];
    const int tp = std::max(1, prof.tp[g]);
    int node = 1;
    const bool committed = std::any_of(pools_.begin(), pools_.end(), [&](const PoolRun& p) { return p.committed() && p.spec->type == f; });
    const int od = s_.fleet.FindPool(f, sim::Tier::kOnDemand);
    if (!committed && od >= 0) {
      node = 0;
      for (int size : SlotSizes(s_.fleet.pools[static_cast<std::size_t>(od)])) {
        if (size >= tp && (node == 0 || size < node)) node = size;
      }
      node = std::max(node, tp);
    }
    out.push_back(node);
  }
  return out;
}

std::vector<int> Engine::SlotSizes(const sim::PoolSpec& ps) const {
  std::vector<int> out;
  if (!RightSized(ps)) {
    // Nodes of kGpusPerNode (a committed pool's last node holds the remainder).
    const int n = (ps.max_gpus + kGpusPerNode - 1) / kGpusPerNode;
    for (int k = 0; k < n; ++k) out.push_back(std::min(kGpusPerNode, ps.max_gpus - k * kGpusPerNode));
    return out;
  }
  // Enough nodes of every shape to fill the quota with it; the quota caps the GPUs held at once.
  for (int g : ps.node_gpus) {
    if (g > kGpusPerNode) continue;
    for (int k = 0; k < ps.max_gpus / g; ++k) out.push_back(g);
  }
  return out;
}

int Engine::GpusHeld(const PoolRun& p) const {
  int n = 0;
  for (const Slot& s : p.slots) n += s.phase != Phase::kDown ? s.gpus : 0;
  return n;
}

int Engine::ShapeFor(const PoolRun& p, int gpus) const {
  // Karpenter launches the cheapest instance type that holds the pending pod; every shape is
  // priced at the pool's one per-GPU price, so the smallest that fits within the quota.
  const int room = p.spec->max_gpus - GpusHeld(p);
  int best = -1;
  for (std::size_t k = 0; k < p.slots.size(); ++k) {
    const Slot& s = p.slots[k];
    if (s.phase != Phase::kDown || s.gpus < gpus || s.gpus > room) continue;
    if (best < 0 || s.gpus < p.slots[static_cast<std::size_t>(best)].gpus) best = static_cast<int>(k);
  }
  return best;
}

namespace {
// Claims on a booting node are counted afresh every step (PlacePending); the pods' claims of the
// step before are kept for StackConfig::hold_boots_for_claimants.
void NewClaimStep(Slot& s, double now) {
  if (s.claimed_step == now) return;
  s.pod_claims_before = s.claimed_step >= now - kStepS - 1e-9 ? s.claimed_by_pods : 0;
  s.claimed_step = now;
  s.claimed = 0;
  s.claimed_by_pods = 0;
}
}  // namespace

bool Engine::ClaimBootingSlot(PoolRun& p, int gpus, bool replica) {
  for (Slot& s : p.slots) {
    if (s.phase != Phase::kBooting || s.replaces >= 0) continue;
    NewClaimStep(s, now_);
    // Seedance: a replica (claiming first in a step) leaves the room the waiting pods claimed in
    // the step before and have not claimed again yet (they claim after the replicas).
    const int kept = replica && c_.hold_boots_for_claimants ? std::max(0, s.pod_claims_before - s.claimed_by_pods) : 0;
    if (s.gpus - s.claimed - kept < gpus) continue;
    s.claimed += gpus;
    if (!replica) s.claimed_by_pods += gpus;
    return true;
  }
  return false;
}

void Engine::NoteClaim(PoolRun& p, int gpus, bool replica) {
  Slot* room = nullptr;
  for (Slot& s : p.slots) {
    if (s.phase != Phase::kBooting || s.replaces >= 0) continue;
    NewClaimStep(s, now_);
    if (room == nullptr && s.gpus - s.claimed >= gpus) room = &s;
  }
  if (room == nullptr) return;
  room->claimed += gpus;
  if (!replica) room->claimed_by_pods += gpus;
}

void Engine::HoldForClaimants(PoolRun& p, Slot& s) {
  // The claims of the step before (PlacePending claims a booting node's room every step): the
  // pods still waiting for this node.
  if (!c_.hold_boots_for_claimants || s.claimed_by_pods <= 0 || s.claimed_step < now_ - kStepS - 1e-9) return;
  s.held_for_claimants = s.claimed_by_pods;
  ++p.held_nodes;
}

void Engine::ReleaseHolds() {
  for (auto& p : pools_) {
    if (p.held_nodes == 0) continue;
    for (Slot& s : p.slots) s.held_for_claimants = 0;
    p.held_nodes = 0;
  }
}

sched::PlacementDecision Engine::Decide(PoolRun& p, const cluster::PodSpec& pod) {
  if (p.held_nodes == 0 || placing_claimants_) return p.policy->Decide(*p.state, pod, rng_);
  // A node whose free GPUs, less those held for its claimants, cannot take `pod` is filtered out.
  std::vector<cluster::NodeId> hidden;
  for (std::size_t k = 0; k < p.slots.size(); ++k) {
    const Slot& s = p.slots[k];
    if (s.held_for_claimants <= 0 || s.phase != Phase::kUp) continue;
    const cluster::NodeId node(static_cast<std::uint32_t>(k));
    const std::int64_t left = p.state->node(node).TotalGpuIdle() - std::int64_t{s.held_for_claimants} * cluster::kMilliPerGpu;
    if (left >= pod.total_gpu_milli()) continue;
    p.state->SetEligibility(node, cluster::NodeEligibility::kNone);
    hidden.push_back(node);
  }
  const sched::PlacementDecision d = p.policy->Decide(*p.state, pod, rng_);
  for (const cluster::NodeId node : hidden) p.state->SetEligibility(node, cluster::NodeEligibility::kAll);
  return d;
}

bool Engine::BootSlot(PoolRun& p, int gpus, bool replica) {
  const int k = ShapeFor(p, gpus);
  if (k < 0) return false;
  Slot& s = p.slots[static_cast<std::size_t>(k)];
  s.phase = Phase::kBooting;
  s.ready_at = now_ + s_.fleet.cold_start_s;
  s.claimed_step = now_;
  s.claimed = gpus;
  s.claimed_by_pods = replica ? 0 : gpus;
  s.pod_claims_before = 0;
  ++out_.nodes_booted;
  return true;
}

void Engine::ConsolidationMove(JobRun& r, const Where& to) {
  ++out_.consolidation_moves;
  if (c_.consolidation == StackConfig::Consolidation::kCheckpointAware) {
    MoveJob(r, {to});  // checkpoint now: the checkpoint and the restore are the work lost
    return;
  }
  // Evicted: the pod is recreated and restarts from its last checkpoint.
  RollBack(r, std::fmod(std::max(0.0, now_ - r.seg_start), r.job->checkpoint_s));
  ReleaseJob(r);
  Hold(r, {to});
  ++r.restarts;
  StartJob(r);
}

void Engine::FinishReplacements() {
  // A replacement node that is up takes the pods of the node it replaces (which was cordoned when
  // the replacement was launched); the drained node is deleted. If they no longer fit, the old
  // node is uncordoned and the new one stays as any node.
  bool changed = false;
  for (auto& p : pools_) {
    for (std::size_t k = 0; k < p.slots.size(); ++k) {
      Slot& repl = p.slots[k];
      if (repl.replaces < 0 || repl.phase != Phase::kUp) continue;
      const auto old = static_cast<std::size_t>(repl.replaces);
      repl.replaces = -1;
      Slot& s = p.slots[old];
      s.draining = false;
      if (s.phase != Phase::kUp) continue;
      const cluster::NodeId node(static_cast<std::uint32_t>(old));
      std::vector<std::pair<std::size_t, Where>> moves;
      bool all = true;
      for (std::size_t i = 0; i < jobs_.size() && all; ++i) {
        const JobRun& r = jobs_[i];
        if (r.state != JobState::kRunning || r.where.pool != p.index || !(r.where.node == node)) continue;
        Where dest;
        if (TryPlace(r.pod, {p.index}, &dest)) {
          moves.emplace_back(i, dest);
        } else {
          all = false;
        }
      }
      if (!all) {
        for (auto& [i, dest] : moves) p.state->Unbind(jobs_[i].pod, dest.node, dest.gpus);
        p.state->SetEligibility(node, cluster::NodeEligibility::kAll);
        continue;
      }
      for (auto& [i, dest] : moves) ConsolidationMove(jobs_[i], dest);
      changed = true;
      if (p.state->node(node).TotalGpuIdle() == s.gpus * cluster::kMilliPerGpu) {
        s.phase = Phase::kDown;
        p.state->SetEligibility(node, cluster::NodeEligibility::kNone);
        ++out_.consolidations;
      } else {
        p.state->SetEligibility(node, cluster::NodeEligibility::kAll);
      }
    }
  }
  if (changed) admitter_->CapacityChanged();
}

Engine::NodeOccupants Engine::Occupants(bool committed, bool training_stays) const {
  NodeOccupants o;
  o.movable.resize(pools_.size());
  o.held.resize(pools_.size());
  for (const auto& p : pools_) {
    if (p.committed() != committed) continue;
    o.movable[static_cast<std::size_t>(p.index)].resize(p.slots.size());
    o.held[static_cast<std::size_t>(p.index)].assign(p.slots.size(), 0);
  }
  auto hold = [&](const Where& w) {
    if (w.placed() && pools_[static_cast<std::size_t>(w.pool)].committed() == committed) {
      o.held[static_cast<std::size_t>(w.pool)][w.node.value()] = 1;
    }
  };
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const JobRun& r = jobs_[i];
    if (r.state != JobState::kRunning || pools_[static_cast<std::size_t>(r.where.pool)].committed() != committed) continue;
    if (r.job->pods > 1 || training_stays) {  // a running gang is not moved pod by pod: its nodes stay
      hold(r.where);
      for (const Where& w : r.gang) hold(w);
      continue;
    }
    o.movable[static_cast<std::size_t>(r.where.pool)][r.where.node.value()].push_back(i);
  }
  for (const Replica& r : replicas_) hold(r.where);
  for (const DevRun& d : devs_) hold(d.where);
  return o;
}

void Engine::Consolidate() {
  using C = StackConfig::Consolidation;
  // Every cloud node's last change of the GPUs in use: consolidateAfter counts from it.
  for (auto& p : pools_) {
    if (p.committed()) continue;
    for (std::size_t k = 0; k < p.slots.size(); ++k) {
      Slot& s = p.slots[k];
      if (s.phase != Phase::kUp) {
        s.idle_seen = -1;
        continue;
      }
      const std::int64_t idle = p.state->node(cluster::NodeId(static_cast<std::uint32_t>(k))).TotalGpuIdle();
      if (idle != s.idle_seen) {
        s.idle_seen = idle;
        s.changed_at = now_;
      }
    }
  }
  if (c_.consolidation == C::kNone) return;
  const bool aware = c_.consolidation == C::kCheckpointAware;
  // What is on each cloud node now: one-pod training jobs (movable), or a pod that blocks the node
  // (a notebook: do-not-disrupt; a serving replica: its PDB; a gang's pod; training marked
  // do-not-disrupt in the base).
  NodeOccupants occupants = Occupants(/*committed=*/false, /*training_stays=*/!aware && c_.training_do_not_disrupt);
  auto& on = occupants.movable;
  auto& blocked = occupants.held;
  bool changed = false;
  for (auto& p : pools_) {
    if (p.committed()) continue;
    const auto pu = static_cast<std::size_t>(p.index);
    int nodes = 0, not_ready = 0;
    for (const Slot& s : p.slots) {
      nodes += s.phase != Phase::kDown;
      not_ready += s.phase == Phase::kBooting || s.draining;
    }
    int budget = static_cast<int>(std::ceil(kDisruptionBudgetShare * nodes)) - not_ready;
    if (budget <= 0) continue;
    // Candidates, the least disruptive first (Karpenter: fewer pods), then fewer GPUs in use.
    std::vector<std::tuple<std::size_t, std::int64_t, std::size_t>> cands;
    for (std::size_t n = 0; n < p.slots.size(); ++n) {
      const Slot& s = p.slots[n];
      if (s.phase != Phase::kUp || s.draining || blocked[pu][n] || on[pu][n].empty()) continue;
      if (now_ - s.changed_at < c_.consolidate_after_s) continue;
      const std::int64_t used = s.gpus * cluster::kMilliPerGpu - p.state->node(cluster::NodeId(static_cast<std::uint32_t>(n))).TotalGpuIdle();
      if (aware && static_cast<double>(used) > c_.consolidate_max_used_share * s.gpus * cluster::kMilliPerGpu) continue;
      cands.emplace_back(on[pu][n].size(), used, n);
    }
    std::sort(cands.begin(), cands.end());
    std::vector<char> touched(p.slots.size(), 0);  // received pods this step: not a candidate again
    for (const auto& [pods, used, n] : cands) {
      if (budget <= 0) break;
      if (touched[n]) continue;
      Slot& s = p.slots[n];
      const cluster::NodeId node(static_cast<std::uint32_t>(n));
      // Deletion: every pod fits on the other nodes of the pool now.
      p.state->SetEligibility(node, cluster::NodeEligibility::kNone);
      std::vector<std::pair<std::size_t, Where>> moves;
      bool all = true;
      for (std::size_t i : on[pu][n]) {
        Where dest;
        if (!TryPlace(jobs_[i].pod, {p.index}, &dest)) {
          all = false;
          break;
        }
        moves.emplace_back(i, dest);
      }
      if (all) {
        for (auto& [i, dest] : moves) {
          ConsolidationMove(jobs_[i], dest);
          touched[dest.node.value()] = 1;
          on[pu][dest.node.value()].push_back(i);
        }
        on[pu][n].clear();
        s.phase = Phase::kDown;  // the node stays ineligible
        ++out_.consolidations;
        --budget;
        changed = true;
        continue;
      }
      for (auto& [i, dest] : moves) p.state->Unbind(jobs_[i].pod, dest.node, dest.gpus);
      // Replacement: one cheaper node (fewer GPUs at the pool's per-GPU price) that holds every
      // pod, launched now; the node is cordoned and drained once it is up. Spot: deletion only.
      const int k = p.right_sized ? ShapeFor(p, static_cast<int>(used / cluster::kMilliPerGpu)) : -1;
      if (k < 0 || p.slots[static_cast<std::size_t>(k)].gpus >= s.gpus) {
        p.state->SetEligibility(node, cluster::NodeEligibility::kAll);
        continue;
      }
      Slot& repl = p.slots[static_cast<std::size_t>(k)];
      repl.phase = Phase::kBooting;
      repl.ready_at = now_ + s_.fleet.cold_start_s;
      repl.replaces = static_cast<int>(n);
      ++out_.nodes_booted;
      s.draining = true;
      --budget;
    }
  }
  if (changed) admitter_->CapacityChanged();
}

}  // namespace seedance::fleet::detail
