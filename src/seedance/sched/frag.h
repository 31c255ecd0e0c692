#pragma once

#include <cstdint>
#include <vector>

#include "seedance/cluster/cluster.h"

namespace seedance::sched {

// A "typical pod" of FGD (ATC'23): one request shape of the workload with its popularity.
struct TypicalPod {
  std::int64_t cpu = 0;          // milli-cores (0 counts as 100, as Kubernetes' non-zero request)
  std::int32_t gpu_milli = 0;    // per GPU; 0 for CPU-only
  int num_gpu = 0;
  cluster::GpuModelSet models;   // empty = any
  double weight = 0;             // popularity; weights of one set sum to 1
  std::int64_t count = 0;        // pods of this shape in the source trace
  std::int64_t memory = 0;       // MiB, mean over the shape's pods (FGD ignores memory)
};

// Returns the workload's typical pods, FGD's way: group pods by (cpu, gpu_milli, num_gpu,
// models), sort by count descending (ties by key descending), keep the most popular shapes until
// they cover `coverage` of the pods, and normalize their counts to weights.
std::vector<TypicalPod> ComputeTypicalPods(const std::vector<cluster::PodSpec>& pods,
                                           double coverage = 0.95);

// Returns FGD's fragmentation of `node` for one typical pod, in milli-GPU: the idle GPU capacity
// that pod could not use (all of it if the pod cannot be placed on the node at all).
std::int64_t NodeFragForTypical(const cluster::NodeState& node, const TypicalPod& t);

// Returns the expected fragmentation F(n) = sum_t weight_t * NodeFragForTypical(n, t), milli-GPU.
double NodeFrag(const cluster::NodeState& node, const std::vector<TypicalPod>& typical);

// Shannon entropy (bits) of the free-capacity pattern of the cluster's GPUs: each GPU's idle
// milli-GPU is binned by `block_milli` (the seed's calcFragmentationEntropy). A well-packed
// cluster (GPUs full or empty) scores low; scattered remnants score high.
double GpuFreeEntropy(const cluster::ClusterState& cluster, std::int32_t block_milli = 100);

}  // namespace seedance::sched

namespace seedance::sched {

// The GPUs FGD gives a non-share pod: ascending idle order (stable by index), the first
// pod.num_gpu with idle >= gpu_milli. For whole-GPU pods these are the first free GPUs.
// REQUIRES: cluster::Fits(node, pod) and pod.is_gpu().
cluster::GpuAssignment TightestGpus(const cluster::NodeState& node, const cluster::PodSpec& pod);

// Returns `node` after taking `pod` on `gpus` (CPU, memory and GPU idle reduced).
cluster::NodeState AfterPlacement(cluster::NodeState node, const cluster::PodSpec& pod,
                                  const cluster::GpuAssignment& gpus);

// Calls visit(gpus, node_after) for every GPU choice FGD weighs for `pod` on `node`: each GPU
// that fits (index order) for a share pod, the TightestGpus choice otherwise (none for a CPU
// pod). REQUIRES: cluster::Fits(node, pod).
template <class Visit>
void ForEachGpuChoice(const cluster::NodeState& node, const cluster::PodSpec& pod, Visit visit) {
  if (pod.is_share()) {
    for (int i = 0; i < node.gpu_count; ++i) {
      if (node.gpu_idle[static_cast<std::size_t>(i)] < pod.gpu_milli) continue;
      cluster::GpuAssignment g;
      g.gpus[0] = static_cast<std::uint8_t>(i);
      g.count = 1;
      visit(g, AfterPlacement(node, pod, g));
    }
    return;
  }
  cluster::GpuAssignment g;
  if (pod.is_gpu()) g = TightestGpus(node, pod);
  visit(g, AfterPlacement(node, pod, g));
}

}  // namespace seedance::sched

namespace seedance::sched {

// Seedance's capacity-aware fragmentation of `node`, milli-GPU: like NodeFrag, but a typical pod
// t only "uses" as many of the node's fitting GPUs as the node's CPU and memory can feed copies
// of t. t must fit the free CPU and memory at its full request (else all idle is fragment for
// t); the node then feeds min(cpu_left / trunc(reserve_factor x t.cpu),
// mem_left / trunc(reserve_factor x t.memory)) copies (integer division; a zero divisor does not
// limit), i.e. every copy, the first included, counts at `reserve_factor` x t's request (pods
// that come later are a mix, not copies of t). The fed GPUs are the fitting ones with the most
// idle; the idle capacity of fitting GPUs that no copy could be fed is fragment, as are GPUs
// with too little idle for t. A multi-GPU typical pod counts each fitting GPU it could be fed (rather than FGD's
// all-or-nothing), so rare 8-GPU shapes do not dominate the gradient on big nodes.
// REQUIRES: 0 < reserve_factor <= 1.
double CapacityAwareNodeFrag(const cluster::NodeState& node, const std::vector<TypicalPod>& typical,
                             double reserve_factor);

}  // namespace seedance::sched
