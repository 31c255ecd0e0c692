#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "seedance/cluster/gpu_model.h"
#include "seedance/core/status.h"
#include "seedance/core/strong_id.h"
#include "seedance/core/units.h"

namespace seedance::cluster {

struct NodeTag {};
struct PodTag {};
using NodeId = StrongId<NodeTag>;  // index into ClusterState::nodes()
using PodId = StrongId<PodTag>;

inline constexpr int kMaxGpusPerNode = 16;
inline constexpr std::int32_t kMilliPerGpu = 1000;

enum class Qos : std::uint8_t { kGuaranteed, kBurstable, kBestEffort, kLatencySensitive };

// A machine: CPU, memory and `gpu_count` GPUs of one model, each shareable in milli-GPUs.
struct NodeSpec {
  std::string name;
  MilliCpu cpu;
  Mebibytes memory;
  int gpu_count = 0;
  GpuModelIndex model = kNoGpuModel;
};

// A pod (task) request. `gpu_milli` is per GPU: a pod with num_gpu == 1 and gpu_milli < 1000
// shares one GPU; num_gpu > 1 asks for that many GPUs with gpu_milli each (1000 in practice).
struct PodSpec {
  std::string name;
  MilliCpu cpu;
  Mebibytes memory;
  int num_gpu = 0;
  std::int32_t gpu_milli = 0;  // per GPU; 0 when num_gpu == 0
  GpuModelSet allowed_models;  // empty = any
  Qos qos = Qos::kBestEffort;
  std::int64_t creation_s = 0;  // seconds since trace start (0 when the trace has none)
  std::int64_t deletion_s = 0;

  bool is_gpu() const { return num_gpu > 0; }
  bool is_share() const { return num_gpu == 1 && gpu_milli < kMilliPerGpu; }
  std::int64_t total_gpu_milli() const { return static_cast<std::int64_t>(num_gpu) * gpu_milli; }
};

// Free capacity of one node.
// Invariants: 0 <= gpu_idle[i] <= 1000 for i < gpu_count; cpu_left, mem_left >= 0.
struct NodeState {
  std::int64_t cpu_left = 0;  // milli-cores
  std::int64_t mem_left = 0;  // MiB
  std::int32_t gpu_count = 0;
  GpuModelIndex model = kNoGpuModel;
  std::array<std::int32_t, kMaxGpusPerNode> gpu_idle{};  // milli-GPU free per device
  // Bound GPU pods by shape class (see PodShapeClass): [0] share pods, [k] k-GPU exclusive.
  std::array<std::uint16_t, 9> gpu_pod_classes{};

  std::int64_t TotalGpuIdle() const {
    std::int64_t s = 0;
    for (int i = 0; i < gpu_count; ++i) s += gpu_idle[static_cast<std::size_t>(i)];
    return s;
  }
};

// Which GPUs of a node a pod gets (device indices, ascending for exclusive pods).
struct GpuAssignment {
  std::array<std::uint8_t, kMaxGpusPerNode> gpus{};
  std::uint8_t count = 0;
};

// Which new work a node may take, set from the health audit's admission state (SPEC S7.3):
// admitted nodes take anything, nodes under observation only Bronze (best-effort) work, removed
// and pending nodes nothing.
enum class NodeEligibility : std::uint8_t { kAll, kBestEffortOnly, kNone };

// True if a node with eligibility `e` may take the new `pod`.
bool Admits(NodeEligibility e, const PodSpec& pod);

// The pod's shape class: -1 for CPU-only, 0 for a share pod, k for k whole GPUs (k <= 8).
int PodShapeClass(const PodSpec& pod);

// True if `pod` fits `node` on CPU, memory, GPU model and GPU capacity (the FGD artifact's
// NodeResourcesFit + Open-Gpu-Share filters).
bool Fits(const NodeState& node, const PodSpec& pod);
// Number of GPUs on `node` with at least `milli` idle.
int CountGpusWithIdle(const NodeState& node, std::int32_t milli);
// The exclusive GPU choice: the first `pod.num_gpu` GPUs (index order) with idle >= gpu_milli.
// REQUIRES: Fits(node, pod) and pod.is_gpu().
GpuAssignment FirstFitGpus(const NodeState& node, const PodSpec& pod);
// The tightest GPU for a share pod: smallest idle >= milli, lowest index on ties.
// REQUIRES: Fits(node, pod) and pod.is_share().
GpuAssignment BestFitShareGpu(const NodeState& node, const PodSpec& pod);

// The mutable cluster: node specs and their free capacity, plus running totals.
// Thread-compatible (no internal locking).
// Invariants: used_gpu_milli() == sum over nodes of (gpu_count*1000 - TotalGpuIdle()).
class ClusterState {
 public:
  explicit ClusterState(std::vector<NodeSpec> nodes);

  const std::vector<NodeSpec>& specs() const { return specs_; }
  const std::vector<NodeState>& nodes() const { return nodes_; }
  const NodeState& node(NodeId id) const { return nodes_[id.value()]; }
  std::size_t size() const { return nodes_.size(); }
  // Increments whenever the node's free capacity changes (for policy caches).
  std::uint64_t version(NodeId id) const { return versions_[id.value()]; }

  std::int64_t total_gpus() const { return total_gpus_; }
  std::int64_t used_gpu_milli() const { return used_gpu_milli_; }

  // Admission mask (all kAll at construction). Placement policies place new work only where
  // CanPlace holds; Bind checks it. Changing it does not touch running pods.
  NodeEligibility eligibility(NodeId id) const { return eligibility_[id.value()]; }
  void SetEligibility(NodeId id, NodeEligibility e) { eligibility_[id.value()] = e; }
  // True if `pod` fits `node` and the node's eligibility admits it.
  bool CanPlace(NodeId id, const PodSpec& pod) const {
    return Admits(eligibility_[id.value()], pod) && Fits(nodes_[id.value()], pod);
  }
  // True if CanPlace holds on some node.
  bool CanPlaceAnywhere(const PodSpec& pod) const;

  // Scheduling weight of a node (S7.2: the health grade's coefficient, 1.0 by default). Scoring
  // policies scale a node's score by it (a higher weight makes the node more attractive).
  double weight(NodeId id) const { return weights_[id.value()]; }
  void SetWeight(NodeId id, double w) { weights_[id.value()] = w; }

  // Binds `pod` to `node` on `gpus`. REQUIRES: CanPlace(node, pod) (checked).
  void Bind(const PodSpec& pod, NodeId node, const GpuAssignment& gpus);
  // Releases a binding made by Bind.
  void Unbind(const PodSpec& pod, NodeId node, const GpuAssignment& gpus);

 private:
  std::vector<NodeSpec> specs_;
  std::vector<NodeState> nodes_;
  std::vector<std::uint64_t> versions_;
  std::vector<NodeEligibility> eligibility_;
  std::vector<double> weights_;
  std::int64_t total_gpus_ = 0;
  std::int64_t used_gpu_milli_ = 0;
};

}  // namespace seedance::cluster
