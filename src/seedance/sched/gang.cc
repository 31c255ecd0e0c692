#include "seedance/sched/gang.h"

#include <algorithm>
#include <map>

#include "seedance/core/check.h"

namespace seedance::sched {

std::optional<std::vector<GangMember>> PlaceGang(const PlacementPolicy& policy, cluster::ClusterState& state,
                                                 const cluster::PodSpec& pod, int count, Rng& rng) {
  SEEDANCE_CHECK(count >= 1) << "gang of " << count;
  std::vector<GangMember> members;
  std::vector<cluster::NodeEligibility> saved;
  for (int k = 0; k < count; ++k) {
    const PlacementDecision d = policy.Decide(state, pod, rng);
    if (!d.placed()) break;
    state.Bind(pod, d.node, d.gpus);
    members.push_back({d.node, d.gpus});
    saved.push_back(state.eligibility(d.node));
    state.SetEligibility(d.node, cluster::NodeEligibility::kNone);  // one member per node
  }
  for (std::size_t k = 0; k < members.size(); ++k) state.SetEligibility(members[k].node, saved[k]);
  if (static_cast<int>(members.size()) == count) return members;
  for (const auto& m : members) state.Unbind(pod, m.node, m.gpus);
  return std::nullopt;
}

std::optional<std::vector<VictimSet>> FindVictimsForGang(const cluster::ClusterState& state,
                                                         const cluster::PodSpec& pod, int count,
                                                         std::span<const PreemptionCandidate> candidates) {
  SEEDANCE_CHECK(count >= 1) << "gang of " << count;
  // One member and one entry per victim: FindVictimsForFit itself, without copying the state.
  if (count == 1) {
    std::vector<std::int64_t> ids;
    ids.reserve(candidates.size());
    for (const auto& c : candidates) ids.push_back(c.id);
    std::sort(ids.begin(), ids.end());
    if (std::adjacent_find(ids.begin(), ids.end()) == ids.end()) {
      auto vs = FindVictimsForFit(state, pod, candidates);
      if (!vs) return std::nullopt;
      return std::vector<VictimSet>{std::move(*vs)};
    }
  }
  cluster::ClusterState work = state;
  // FindVictimsForFit wants distinct ids: entries get their index as id; `owner` maps back.
  std::vector<PreemptionCandidate> left;
  std::vector<std::int64_t> owner;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    PreemptionCandidate c = candidates[i];
    owner.push_back(c.id);
    c.id = static_cast<std::int64_t>(i);
    left.push_back(std::move(c));
  }
  std::vector<VictimSet> out;
  for (int k = 0; k < count; ++k) {
    auto vs = FindVictimsForFit(work, pod, left);
    if (!vs) return std::nullopt;
    VictimSet member{vs->node, {}, 0.0};
    std::map<std::int64_t, double> jobs;  // victim job -> its cost (counted once)
    for (std::int64_t e : vs->victims) jobs.emplace(owner[static_cast<std::size_t>(e)], candidates[static_cast<std::size_t>(e)].cost);
    for (const auto& [job, cost] : jobs) {
      member.victims.push_back(job);
      member.cost += cost;
    }
    // Release every entry of a chosen victim (all its nodes), then take the member's node.
    std::vector<PreemptionCandidate> keep;
    for (auto& c : left) {
      if (jobs.count(owner[static_cast<std::size_t>(c.id)])) {
        work.Unbind(c.pod, c.node, c.gpus);
      } else {
        keep.push_back(std::move(c));
      }
    }
    left = std::move(keep);
    work.SetEligibility(member.node, cluster::NodeEligibility::kNone);
    out.push_back(std::move(member));
  }
  return out;
}

}  // namespace seedance::sched
