// kube-scheduler's NodeResourcesFit scoring strategies (kubernetes pkg/scheduler/framework/plugins/
// noderesources: least_allocated.go, most_allocated.go; re-implemented from the documented formulas,
// not copied): for every scored resource r with weight w_r,
//   LeastAllocated: (allocatable_r - requested_r) * 100 / allocatable_r
//   MostAllocated:  requested_r * 100 / allocatable_r
// where requested_r includes the pod being scheduled, integer division as the plugin's int64 math;
// the node score is sum(w_r * score_r) / sum(w_r). A resource the node does not have scores 0 (the
// plugin skips resources with zero allocatable).
//  - "least-allocated": the default profile's strategy and resources (cpu 1, memory 1; GPUs are
//    not scored by default: kube-scheduler's config v1 default `resources: [{cpu,1},{memory,1}]`).
//  - "most-allocated": the bin-packing configuration of the Kubernetes "Resource Bin Packing" page:
//    MostAllocated over cpu 1, memory 1 and the extended resource (nvidia.com/gpu) at weight 3.
// Ties go to the context's tie rank (kube-scheduler picks one of the tied nodes at random).
#include <cstdint>

#include "seedance/sched/policies/policies.h"
#include "seedance/sched/scoring_policy.h"

namespace seedance::sched::internal {
namespace {

using cluster::ClusterState;
using cluster::NodeId;
using cluster::PodSpec;

std::int64_t ResourceScore(std::int64_t allocatable, std::int64_t requested, bool most) {
  if (allocatable <= 0) return 0;
  if (requested > allocatable) requested = allocatable;
  return most ? requested * 100 / allocatable : (allocatable - requested) * 100 / allocatable;
}

class NodeResourcesFitPolicy final : public ScoringPlacementPolicy {
 public:
  NodeResourcesFitPolicy(const PolicyContext& c, bool most, std::int64_t gpu_weight)
      : ScoringPlacementPolicy(c, /*memoize=*/true), most_(most), gpu_weight_(gpu_weight) {}
  std::string_view Name() const override { return most_ ? "most-allocated" : "least-allocated"; }

 protected:
  NodeScore Score(const ClusterState& cluster, NodeId id, const PodSpec& pod) const override {
    const auto& spec = cluster.specs()[id.value()];
    const auto& n = cluster.node(id);
    NodeScore s;
    s.gpus = cluster::FirstFitGpus(n, pod);
    const std::int64_t cpu_alloc = spec.cpu.raw(), mem_alloc = spec.memory.raw();
    const std::int64_t cpu_req = cpu_alloc - n.cpu_left + pod.cpu.raw();
    const std::int64_t mem_req = mem_alloc - n.mem_left + pod.memory.raw();
    std::int64_t sum = ResourceScore(cpu_alloc, cpu_req, most_) + ResourceScore(mem_alloc, mem_req, most_);
    std::int64_t weights = 2;
    if (gpu_weight_ > 0) {
      const std::int64_t gpu_alloc = static_cast<std::int64_t>(spec.gpu_count) * cluster::kMilliPerGpu;
      const std::int64_t gpu_req = gpu_alloc - n.TotalGpuIdle() + pod.total_gpu_milli();
      sum += gpu_weight_ * ResourceScore(gpu_alloc, gpu_req, most_);
      weights += gpu_weight_;
    }
    s.primary = static_cast<double>(sum / weights);
    return s;
  }

 private:
  bool most_;
  std::int64_t gpu_weight_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> NewLeastAllocatedPolicy(const PolicyContext& c) {
  return std::make_unique<NodeResourcesFitPolicy>(c, /*most=*/false, /*gpu_weight=*/0);
}
std::unique_ptr<PlacementPolicy> NewMostAllocatedPolicy(const PolicyContext& c) {
  return std::make_unique<NodeResourcesFitPolicy>(c, /*most=*/true, /*gpu_weight=*/3);
}

}  // namespace seedance::sched::internal
