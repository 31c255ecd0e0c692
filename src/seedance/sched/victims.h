#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "seedance/cluster/cluster.h"

namespace seedance::sched {

// Victim selection for preemption (SPEC S4.4): pick running pods whose release frees a placement
// the preemptor can actually use, on one node, rather than GPUs scattered over several nodes
// (Kueue issue #10815: quota-only preemption frees enough GPUs in total, yet the preemptor still
// cannot be placed). Whether a preemption is allowed at all (tiers, SLO rule) is the caller's job:
// it passes only the pods it allows to be preempted.

// A running pod the caller allows to be preempted, with what preempting it costs (work lost since
// its last checkpoint, in GPU-seconds, or any non-negative cost) and a stable id for tie-breaking.
// `node`, `pod` and `gpus` are exactly what was passed to ClusterState::Bind.
struct PreemptionCandidate {
  std::int64_t id = 0;
  cluster::NodeId node;
  cluster::PodSpec pod;
  cluster::GpuAssignment gpus;
  double cost = 0;
};

// Which pods to preempt, all on `node`. `victims` holds candidate ids in ascending order; `cost`
// is the sum of their costs (summed in (cost, id) order, so equal sets give bit-equal sums).
struct VictimSet {
  cluster::NodeId node;
  std::vector<std::int64_t> victims;
  double cost = 0;
};

// Nodes holding at most this many candidates are searched exactly; above it, greedily.
inline constexpr int kExactVictimSearchMaxCandidates = 12;

// Returns the cheapest set of candidates, all on one node, whose release lets `pod` be placed on
// that node (cluster::ClusterState::CanPlace after unbinding them: CPU, memory, GPU model,
// per-device milli-GPU and node eligibility all respected).
// - Empty `victims` (on the first node in index order that can take it) when `pod` already fits.
// - nullopt when no single node can be freed for it.
// Order over sets: lower total cost, then fewer victims, then lower node index, then the
// ascending id lists compared lexicographically; the result is deterministic and does not depend
// on the order of `candidates`.
// Search: per node that admits `pod` (eligibility, GPU model) and that releasing all its
// candidates would free, an exact branch and bound over subsets when the node holds at most
// kExactVictimSearchMaxCandidates candidates (<= 2^12 subsets, pruned by cost and by a
// feasibility bound; releasing more never hurts a fit, so no superset of a fitting set is
// explored). Above that, greedy: add candidates cheapest first (cost, then id) until the pod
// fits, then drop chosen victims from the most expensive down while it still fits (Kueue's
// minimisation); the greedy set is minimal (no victim can be spared) but not always cheapest.
// Time: O(N * G + C log C) for N nodes of G GPUs and C candidates, plus per node with k
// candidates O(2^k * G) at worst for the exact search (k <= 12) and O(k * G) for the greedy one.
// REQUIRES: every candidate's node < state.size(), cost >= 0, ids distinct, and its binding is
// current in `state`.
std::optional<VictimSet> FindVictimsForFit(const cluster::ClusterState& state,
                                           const cluster::PodSpec& pod,
                                           std::span<const PreemptionCandidate> candidates);

// The quota-only baseline (Kueue classical preemption): takes candidates in the given order until
// the GPU capacity they free (milli-GPUs, summed over all nodes) covers `pod`'s request, ignoring
// where that capacity lies. Returns the ids taken, in the given order; empty when `pod` asks for
// no GPU or when all candidates together do not cover it.
std::vector<std::int64_t> QuotaOnlyVictims(const cluster::PodSpec& pod,
                                           std::span<const PreemptionCandidate> candidates);

}  // namespace seedance::sched
