#include "seedance/sched/scoring_policy.h"

namespace seedance::sched {

using cluster::ClusterState;
using cluster::GpuAssignment;
using cluster::NodeId;
using cluster::PodSpec;

GpuAssignment ScoringPlacementPolicy::DefaultGpus(const ClusterState& cluster, NodeId node,
                                                  const PodSpec& pod) const {
  if (!pod.is_gpu()) return {};
  if (pod.is_share()) return cluster::BestFitShareGpu(cluster.node(node), pod);
  return cluster::FirstFitGpus(cluster.node(node), pod);
}

std::vector<ScoringPlacementPolicy::MemoCell>& ScoringPlacementPolicy::MemoFor(
    const PodSpec& pod, std::size_t nodes) const {
  ShapeKey key{pod.cpu.raw(), pod.memory.raw(), pod.num_gpu, pod.is_gpu() ? pod.gpu_milli : 0,
               pod.allowed_models.mask()};
  auto [it, inserted] = shape_ids_.emplace(key, memo_.size());
  if (inserted) memo_.emplace_back(nodes);
  return memo_[it->second];
}

PlacementDecision ScoringPlacementPolicy::Decide(const ClusterState& cluster, const PodSpec& pod,
                                                 Rng& /*rng*/) const {
  const auto& nodes = cluster.nodes();
  const auto n = static_cast<std::uint32_t>(nodes.size());
  // First pass: count feasible nodes and remember one (kube-scheduler skips scoring for one).
  std::uint32_t feasible = 0;
  std::uint32_t only = 0;
  for (std::uint32_t i = 0; i < n && feasible < 2; ++i) {
    if (cluster.CanPlace(NodeId(i), pod)) {
      ++feasible;
      only = i;
    }
  }
  if (feasible == 0) return PlacementDecision::Unschedulable();
  if (feasible == 1) {
    return PlacementDecision::Placed(NodeId(only), DefaultGpus(cluster, NodeId(only), pod));
  }
  std::vector<MemoCell>* memo = memoize_ ? &MemoFor(pod, n) : nullptr;
  bool have = false;
  NodeScore best;
  std::uint32_t best_node = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!cluster.CanPlace(NodeId(i), pod)) continue;
    NodeScore s;
    if (memo != nullptr) {
      MemoCell& cell = (*memo)[i];
      const std::uint64_t v = cluster.version(NodeId(i)) + 1;
      if (cell.version_plus_one != v) {
        cell.score = Score(cluster, NodeId(i), pod);
        cell.version_plus_one = v;
      }
      s = cell.score;
    } else {
      s = Score(cluster, NodeId(i), pod);
    }
    // The node's health-grade weight (S7.2) scales its score: more attractive above 1.
    if (const double w = cluster.weight(NodeId(i)); w != 1.0) {
      s.primary = s.primary >= 0 ? s.primary * w : s.primary / w;
    }
    bool better;
    if (!have) {
      better = true;
    } else if (s.primary != best.primary) {
      better = s.primary > best.primary;
    } else if (s.secondary != best.secondary) {
      better = s.secondary > best.secondary;
    } else {
      better = context_.tie_rank[i] < context_.tie_rank[best_node];
    }
    if (better) {
      have = true;
      best = s;
      best_node = i;
    }
  }
  return PlacementDecision::Placed(NodeId(best_node), best.gpus);
}

}  // namespace seedance::sched
