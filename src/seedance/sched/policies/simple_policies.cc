// The baseline policies of the FGD artifact (hkust-adsl/kubernetes-scheduler-simulator), each
// re-implemented from the protocol facts in FGD_PROTOCOL.md §6 (paraphrased, not copied):
// random, dot-product, GPU clustering, GPU packing, best-fit; plus first-fit.
#include <algorithm>
#include <cmath>

#include "seedance/sched/policies/policies.h"
#include "seedance/sched/scoring_policy.h"

namespace seedance::sched::internal {
namespace {

using cluster::ClusterState;
using cluster::GpuAssignment;
using cluster::NodeId;
using cluster::NodeState;
using cluster::PodSpec;

// Uniformly random feasible node; a share pod gets a uniformly random GPU that fits.
class RandomPolicy final : public PlacementPolicy {
 public:
  std::string_view Name() const override { return "random"; }
  PlacementDecision Decide(const ClusterState& cluster, const PodSpec& pod,
                           Rng& rng) const override {
    feasible_.clear();
    const auto& nodes = cluster.nodes();
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
      if (cluster.CanPlace(NodeId(i), pod)) feasible_.push_back(i);
    }
    if (feasible_.empty()) return PlacementDecision::Unschedulable();
    std::uint32_t pick = feasible_[0];
    if (feasible_.size() > 1) pick = feasible_[rng.Uniform(feasible_.size())];
    const NodeState& n = nodes[pick];
    GpuAssignment g;
    if (pod.is_share()) {
      int fit = cluster::CountGpusWithIdle(n, pod.gpu_milli);
      auto k = static_cast<int>(rng.Uniform(static_cast<std::uint64_t>(fit)));
      for (int i = 0; i < n.gpu_count; ++i) {
        if (n.gpu_idle[static_cast<std::size_t>(i)] >= pod.gpu_milli && k-- == 0) {
          g.gpus[0] = static_cast<std::uint8_t>(i);
          g.count = 1;
          break;
        }
      }
    } else if (pod.is_gpu()) {
      g = cluster::FirstFitGpus(n, pod);
    }
    return PlacementDecision::Placed(NodeId(pick), g);
  }

 private:
  mutable std::vector<std::uint32_t> feasible_;  // scratch
};

GpuAssignment BestGpus(const NodeState& n, const PodSpec& pod) {
  if (!pod.is_gpu()) return {};
  if (pod.is_share()) return cluster::BestFitShareGpu(n, pod);
  return cluster::FirstFitGpus(n, pod);
}

// Dot product of the node's free vector and the pod's request (CPU, total GPU), both normalized
// by the largest node spec; the smaller the product, the higher the score.
class DotProductPolicy final : public ScoringPlacementPolicy {
 public:
  using ScoringPlacementPolicy::ScoringPlacementPolicy;
  std::string_view Name() const override { return "dotprod"; }

 protected:
  NodeScore Score(const ClusterState& cluster, NodeId id, const PodSpec& pod) const override {
    const NodeState& n = cluster.node(id);
    NodeScore s;
    s.gpus = BestGpus(n, pod);
    const auto cpu_left = static_cast<double>(n.cpu_left);
    const auto cpu_req = static_cast<double>(pod.cpu.raw());
    if (cpu_left < cpu_req) return s;
    const double raw = (cpu_left / kMaxSpecCpu * cpu_req / kMaxSpecCpu +
                        static_cast<double>(n.TotalGpuIdle()) / kMaxSpecGpu *
                            static_cast<double>(pod.total_gpu_milli()) / kMaxSpecGpu) /
                       2.0;
    s.primary = std::trunc(100.0 * (1.0 - raw));
    return s;
  }
};

// Groups pods of the same shape class (share, 1-GPU, 2-GPU, ...) on the same nodes.
class GpuClusteringPolicy final : public ScoringPlacementPolicy {
 public:
  using ScoringPlacementPolicy::ScoringPlacementPolicy;
  std::string_view Name() const override { return "clustering"; }

 protected:
  NodeScore Score(const ClusterState& cluster, NodeId id, const PodSpec& pod) const override {
    const NodeState& n = cluster.node(id);
    NodeScore s;
    s.gpus = BestGpus(n, pod);
    const int cls = cluster::PodShapeClass(pod);
    if (cls < 0) return s;  // CPU pods score 0 everywhere
    const std::int64_t base = 25 * (8000 - n.TotalGpuIdle()) / 8000;
    int kinds = 0;
    for (auto c : n.gpu_pod_classes) kinds += c > 0;
    const bool has_own = n.gpu_pod_classes[static_cast<std::size_t>(cls)] > 0;
    std::int64_t v = base;
    if (has_own && kinds == 1) {
      v += 75;
    } else if (has_own) {
      v += 50;
    } else if (kinds == 0) {
      v += 25;
    }
    s.primary = static_cast<double>(v);
    return s;
  }
};

// Prefers partially used GPUs that fit, then partially used nodes, then empty nodes.
class GpuPackingPolicy final : public ScoringPlacementPolicy {
 public:
  using ScoringPlacementPolicy::ScoringPlacementPolicy;
  std::string_view Name() const override { return "packing"; }

 protected:
  NodeScore Score(const ClusterState& cluster, NodeId id, const PodSpec& pod) const override {
    const NodeState& n = cluster.node(id);
    NodeScore s;
    s.gpus = BestGpus(n, pod);
    if (!pod.is_gpu()) return s;
    int free = 0;
    for (int i = 0; i < n.gpu_count; ++i) free += n.gpu_idle[static_cast<std::size_t>(i)] == 1000;
    if (free == n.gpu_count) {
      s.primary = std::max(33 - free, free);
      return s;
    }
    // GPUs by ascending idle (stable by index); the first num_gpu that fit.
    std::array<int, cluster::kMaxGpusPerNode> order{};
    for (int i = 0; i < n.gpu_count; ++i) order[static_cast<std::size_t>(i)] = i;
    std::stable_sort(order.begin(), order.begin() + n.gpu_count, [&](int a, int b) {
      return n.gpu_idle[static_cast<std::size_t>(a)] < n.gpu_idle[static_cast<std::size_t>(b)];
    });
    int picked = 0, picked_free = 0;
    std::int64_t idle_sum = 0;
    for (int k = 0; k < n.gpu_count && picked < pod.num_gpu; ++k) {
      std::int32_t idle = n.gpu_idle[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];
      if (idle < pod.gpu_milli) continue;
      ++picked;
      picked_free += idle == 1000;
      idle_sum += idle * 100 / 1000;
    }
    if (picked_free > 0) {
      s.primary = std::max(50 - picked_free, 33);
    } else {
      s.primary = static_cast<double>(std::max<std::int64_t>(100 - idle_sum / 10, 50));
    }
    return s;
  }
};

// Least free CPU and GPU left after placement (normalized, equal weights).
class BestFitPolicy final : public ScoringPlacementPolicy {
 public:
  using ScoringPlacementPolicy::ScoringPlacementPolicy;
  std::string_view Name() const override { return "bestfit"; }

 protected:
  NodeScore Score(const ClusterState& cluster, NodeId id, const PodSpec& pod) const override {
    const NodeState& n = cluster.node(id);
    NodeScore s;
    s.gpus = BestGpus(n, pod);
    const double left =
        0.5 * static_cast<double>(n.cpu_left - pod.cpu.raw()) / kMaxSpecCpu +
        0.5 * static_cast<double>(n.TotalGpuIdle() - pod.total_gpu_milli()) / kMaxSpecGpu;
    s.primary = std::trunc(100.0 * (1.0 - left));
    return s;
  }
};

// First feasible node in tie-rank order (the scheduler's node order).
class FirstFitPolicy final : public ScoringPlacementPolicy {
 public:
  using ScoringPlacementPolicy::ScoringPlacementPolicy;
  std::string_view Name() const override { return "firstfit"; }

 protected:
  NodeScore Score(const ClusterState& cluster, NodeId id, const PodSpec& pod) const override {
    NodeScore s;
    s.gpus = BestGpus(cluster.node(id), pod);
    return s;
  }
};

}  // namespace

std::unique_ptr<PlacementPolicy> NewRandomPolicy(const PolicyContext&) {
  return std::make_unique<RandomPolicy>();
}
std::unique_ptr<PlacementPolicy> NewDotProductPolicy(const PolicyContext& c) {
  return std::make_unique<DotProductPolicy>(c);
}
std::unique_ptr<PlacementPolicy> NewGpuClusteringPolicy(const PolicyContext& c) {
  return std::make_unique<GpuClusteringPolicy>(c);
}
std::unique_ptr<PlacementPolicy> NewGpuPackingPolicy(const PolicyContext& c) {
  return std::make_unique<GpuPackingPolicy>(c);
}
std::unique_ptr<PlacementPolicy> NewBestFitPolicy(const PolicyContext& c) {
  return std::make_unique<BestFitPolicy>(c);
}
std::unique_ptr<PlacementPolicy> NewFirstFitPolicy(const PolicyContext& c) {
  return std::make_unique<FirstFitPolicy>(c);
}

}  // namespace seedance::sched::internal
