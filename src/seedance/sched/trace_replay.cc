#include "seedance/sched/trace_replay.h"

#include <algorithm>
#include <tuple>

#include "seedance/core/rng.h"
#include "seedance/sched/placement_policy.h"

namespace seedance::sched {

Result<std::vector<TraceReplayEvent>> ReplayTrace(const std::vector<cluster::NodeSpec>& nodes,
                                                  const std::vector<cluster::PodSpec>& pods,
                                                  const TraceReplayOptions& options) {
  // Policies keep a reference to their context: it lives as long as the policy.
  const PolicyContext context = NameOrderPolicyContext(nodes, {});
  SEEDANCE_ASSIGN_OR_RETURN(std::unique_ptr<PlacementPolicy> policy, MakePlacementPolicy(options.policy, context));
  // (time, group, pod): group 0 = deletions, 1 = creations, 2 = deletions of pods that leave no
  // later than they arrive.
  using Key = std::tuple<std::int64_t, int, std::size_t>;
  std::vector<Key> order;
  order.reserve(2 * pods.size());
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const cluster::PodSpec& p = pods[i];
    order.emplace_back(p.creation_s, 1, i);
    if (p.deletion_s > p.creation_s) {
      order.emplace_back(p.deletion_s, 0, i);
    } else {
      order.emplace_back(p.creation_s, 2, i);
    }
  }
  std::sort(order.begin(), order.end());

  cluster::ClusterState cluster(nodes);
  Rng rng = Rng(options.seed).Fork(1);
  struct Placed {
    bool placed = false;
    cluster::NodeId node;
    cluster::GpuAssignment gpus;
  };
  std::vector<Placed> placed(pods.size());
  std::vector<TraceReplayEvent> events;
  events.reserve(order.size());
  for (const auto& [time, group, i] : order) {
    if (group == 1) {
      const PlacementDecision d = policy->Decide(cluster, pods[i], rng);
      TraceReplayEvent e{TraceReplayEvent::Kind::kCreate, i, ""};
      if (d.placed()) {
        cluster.Bind(pods[i], d.node, d.gpus);
        placed[i] = {true, d.node, d.gpus};
        e.node = nodes[d.node.value()].name;
      }
      events.push_back(std::move(e));
    } else if (placed[i].placed) {
      cluster.Unbind(pods[i], placed[i].node, placed[i].gpus);
      placed[i].placed = false;
      events.push_back({TraceReplayEvent::Kind::kDelete, i, nodes[placed[i].node.value()].name});
    }
  }
  return events;
}

}  // namespace seedance::sched
