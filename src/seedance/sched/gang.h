#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "seedance/cluster/cluster.h"
#include "seedance/core/rng.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/sched/victims.h"

namespace seedance::sched {

// Multi-node gangs (issue 27: a Slurm job asking N nodes x G GPUs): `count` members of the same
// shape `pod`, each on its own node, all on nodes of ONE GPU model. Both functions drive the
// existing single-pod steps (a PlacementPolicy's Decide, FindVictimsForFit) member by member, so a
// gang is packed by the same policy as every other pod; there is no second packer.

// One member's place.
struct GangMember {
  cluster::NodeId node;
  cluster::GpuAssignment gpus;
};

// Places the gang with `policy`, member by member: each member goes where the policy puts `pod`
// with the nodes already taken by earlier members made ineligible, so members land on distinct
// nodes. `pod.allowed_models` must name exactly one model (the caller tries models in its own
// order). On success every member is bound in `state` and the members are returned in placement
// order; when fewer than `count` members fit, nothing stays bound and nullopt is returned.
// Node eligibility is restored either way. REQUIRES: count >= 1.
std::optional<std::vector<GangMember>> PlaceGang(const PlacementPolicy& policy, cluster::ClusterState& state,
                                                 const cluster::PodSpec& pod, int count, Rng& rng);

// Victims that free `count` distinct nodes for the gang, greedily: per member, the cheapest
// FindVictimsForFit set over the nodes not yet chosen (a node that already fits costs nothing),
// its victims released before the next member is sought. Candidates may share an id: a
// multi-node victim is one entry per node it holds, all with the same id and cost, and choosing
// it releases every entry (its cost counts once). Returns one VictimSet per member (victims in
// ascending id order, a victim listed where it was chosen), or nullopt when fewer than `count`
// nodes can be freed. Deterministic: FindVictimsForFit's order decides each member.
// REQUIRES: count >= 1; every candidate's binding is current in `state`.
std::optional<std::vector<VictimSet>> FindVictimsForGang(const cluster::ClusterState& state,
                                                         const cluster::PodSpec& pod, int count,
                                                         std::span<const PreemptionCandidate> candidates);

}  // namespace seedance::sched
