#include "seedance/cluster/cluster.h"

#include "seedance/core/check.h"

namespace seedance::cluster {

int PodShapeClass(const PodSpec& pod) {
  if (!pod.is_gpu()) return -1;
  if (pod.is_share()) return 0;
  return pod.num_gpu < 8 ? pod.num_gpu : 8;
}

int CountGpusWithIdle(const NodeState& node, std::int32_t milli) {
  int c = 0;
  for (int i = 0; i < node.gpu_count; ++i) c += node.gpu_idle[static_cast<std::size_t>(i)] >= milli;
  return c;
}

bool Admits(NodeEligibility e, const PodSpec& pod) {
  switch (e) {
    case NodeEligibility::kAll:
      return true;
    case NodeEligibility::kBestEffortOnly:
      return pod.qos == Qos::kBestEffort;
    case NodeEligibility::kNone:
      return false;
  }
  return false;
}

bool Fits(const NodeState& node, const PodSpec& pod) {
  if (node.cpu_left < pod.cpu.raw() || node.mem_left < pod.memory.raw()) return false;
  if (!pod.is_gpu()) return true;
  if (node.gpu_count == 0 || !pod.allowed_models.Accepts(node.model)) return false;
  return CountGpusWithIdle(node, pod.gpu_milli) >= pod.num_gpu;
}

GpuAssignment FirstFitGpus(const NodeState& node, const PodSpec& pod) {
  GpuAssignment a;
  for (int i = 0; i < node.gpu_count && a.count < pod.num_gpu; ++i) {
    if (node.gpu_idle[static_cast<std::size_t>(i)] >= pod.gpu_milli) {
      a.gpus[a.count++] = static_cast<std::uint8_t>(i);
    }
  }
  SEEDANCE_DCHECK(a.count == pod.num_gpu);
  return a;
}

GpuAssignment BestFitShareGpu(const NodeState& node, const PodSpec& pod) {
  GpuAssignment a;
  std::int32_t best = kMilliPerGpu + 1;
  for (int i = 0; i < node.gpu_count; ++i) {
    std::int32_t idle = node.gpu_idle[static_cast<std::size_t>(i)];
    if (idle >= pod.gpu_milli && idle < best) {
      best = idle;
      a.gpus[0] = static_cast<std::uint8_t>(i);
      a.count = 1;
    }
  }
  return a;
}

ClusterState::ClusterState(std::vector<NodeSpec> nodes) : specs_(std::move(nodes)) {
  nodes_.reserve(specs_.size());
  for (const NodeSpec& s : specs_) {
    SEEDANCE_CHECK(s.gpu_count >= 0 && s.gpu_count <= kMaxGpusPerNode) << s.name;
    NodeState st;
    st.cpu_left = s.cpu.raw();
    st.mem_left = s.memory.raw();
    st.gpu_count = s.gpu_count;
    st.model = s.model;
    for (int i = 0; i < s.gpu_count; ++i) st.gpu_idle[static_cast<std::size_t>(i)] = kMilliPerGpu;
    total_gpus_ += s.gpu_count;
    nodes_.push_back(st);
  }
  versions_.assign(nodes_.size(), 0);
  eligibility_.assign(nodes_.size(), NodeEligibility::kAll);
  weights_.assign(nodes_.size(), 1.0);
}

bool ClusterState::CanPlaceAnywhere(const PodSpec& pod) const {
  for (std::uint32_t n = 0; n < nodes_.size(); ++n)
    if (CanPlace(NodeId(n), pod)) return true;
  return false;
}

void ClusterState::Bind(const PodSpec& pod, NodeId id, const GpuAssignment& gpus) {
  NodeState& n = nodes_[id.value()];
  SEEDANCE_CHECK(Fits(n, pod)) << "bind of " << pod.name << " to " << specs_[id.value()].name;
  SEEDANCE_CHECK(Admits(eligibility_[id.value()], pod))
      << "bind of " << pod.name << " to " << specs_[id.value()].name << ", which does not admit it";
  SEEDANCE_CHECK(gpus.count == (pod.is_gpu() ? pod.num_gpu : 0)) << pod.name;
  n.cpu_left -= pod.cpu.raw();
  n.mem_left -= pod.memory.raw();
  for (int k = 0; k < gpus.count; ++k) {
    auto& idle = n.gpu_idle[gpus.gpus[static_cast<std::size_t>(k)]];
    SEEDANCE_CHECK(idle >= pod.gpu_milli) << pod.name;
    idle -= pod.gpu_milli;
  }
  if (int cls = PodShapeClass(pod); cls >= 0) ++n.gpu_pod_classes[static_cast<std::size_t>(cls)];
  used_gpu_milli_ += pod.total_gpu_milli();
  ++versions_[id.value()];
}

void ClusterState::Unbind(const PodSpec& pod, NodeId id, const GpuAssignment& gpus) {
  NodeState& n = nodes_[id.value()];
  n.cpu_left += pod.cpu.raw();
  n.mem_left += pod.memory.raw();
  for (int k = 0; k < gpus.count; ++k) {
    auto& idle = n.gpu_idle[gpus.gpus[static_cast<std::size_t>(k)]];
    idle += pod.gpu_milli;
    SEEDANCE_CHECK(idle <= kMilliPerGpu) << pod.name;
  }
  if (int cls = PodShapeClass(pod); cls >= 0) --n.gpu_pod_classes[static_cast<std::size_t>(cls)];
  used_gpu_milli_ -= pod.total_gpu_milli();
  ++versions_[id.value()];
}

}  // namespace seedance::cluster
