#include "seedance/sched/frag.h"

#include <algorithm>
#include <array>
#include <functional>
#include <cmath>
#include <map>
#include <tuple>

namespace seedance::sched {

std::vector<TypicalPod> ComputeTypicalPods(const std::vector<cluster::PodSpec>& pods,
                                           double coverage) {
  using Key = std::tuple<std::int64_t, std::int32_t, int, std::uint32_t>;
  std::map<Key, std::int64_t> counts;
  std::map<Key, std::int64_t> memory;
  for (const auto& p : pods) {
    std::int64_t cpu = p.cpu.raw() == 0 ? 100 : p.cpu.raw();
    std::int32_t milli = p.is_gpu() ? p.gpu_milli : 0;
    const Key key{cpu, milli, p.is_gpu() ? p.num_gpu : 0, p.allowed_models.mask()};
    counts[key]++;
    memory[key] += p.memory.raw();
  }
  std::vector<std::pair<Key, std::int64_t>> sorted(counts.begin(), counts.end());
  // Count descending; ties by key descending (a total order, so the cut is deterministic).
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return a.first > b.first;
  });
  std::vector<TypicalPod> out;
  const double total = static_cast<double>(pods.size());
  std::int64_t kept = 0;
  for (const auto& [key, count] : sorted) {
    if (static_cast<double>(kept) >= coverage * total) break;
    TypicalPod t;
    t.cpu = std::get<0>(key);
    t.gpu_milli = std::get<1>(key);
    t.num_gpu = std::get<2>(key);
    cluster::GpuModelSet set;
    for (std::uint8_t m = 0; m < 32; ++m) {
      if ((std::get<3>(key) >> m) & 1u) set.Add(m);
    }
    t.models = set;
    t.count = count;
    t.memory = memory[key] / count;
    kept += count;
    out.push_back(t);
  }
  for (auto& t : out) t.weight = static_cast<double>(t.count) / static_cast<double>(kept);
  return out;
}

std::int64_t NodeFragForTypical(const cluster::NodeState& node, const TypicalPod& t) {
  std::int64_t total = 0;
  std::int64_t below = 0;
  int fit = 0;
  for (int i = 0; i < node.gpu_count; ++i) {
    std::int32_t idle = node.gpu_idle[static_cast<std::size_t>(i)];
    total += idle;
    if (idle >= t.gpu_milli) {
      ++fit;
    } else {
      below += idle;
    }
  }
  if (t.gpu_milli == 0) return total;                 // a CPU task uses no GPU
  if (!t.models.Accepts(node.model)) return total;   // no access to this GPU type
  if (fit >= t.num_gpu && node.cpu_left >= t.cpu) return below;
  return total;                                       // lacks GPUs or CPU
}

double NodeFrag(const cluster::NodeState& node, const std::vector<TypicalPod>& typical) {
  if (node.gpu_count == 0) return 0.0;
  double f = 0;
  for (const auto& t : typical) f += t.weight * static_cast<double>(NodeFragForTypical(node, t));
  return f;
}

double GpuFreeEntropy(const cluster::ClusterState& cluster, std::int32_t block_milli) {
  std::map<std::int32_t, std::int64_t> bins;
  std::int64_t n = 0;
  for (const auto& node : cluster.nodes()) {
    for (int i = 0; i < node.gpu_count; ++i) {
      bins[node.gpu_idle[static_cast<std::size_t>(i)] / block_milli]++;
      ++n;
    }
  }
  double h = 0;
  for (const auto& [bin, c] : bins) {
    double p = static_cast<double>(c) / static_cast<double>(n);
    h -= p * std::log2(p);
  }
  return h;
}

}  // namespace seedance::sched

namespace seedance::sched {

cluster::GpuAssignment TightestGpus(const cluster::NodeState& node, const cluster::PodSpec& pod) {
  std::array<int, cluster::kMaxGpusPerNode> order{};
  for (int i = 0; i < node.gpu_count; ++i) order[static_cast<std::size_t>(i)] = i;
  std::stable_sort(order.begin(), order.begin() + node.gpu_count, [&](int a, int b) {
    return node.gpu_idle[static_cast<std::size_t>(a)] < node.gpu_idle[static_cast<std::size_t>(b)];
  });
  cluster::GpuAssignment g;
  for (int k = 0; k < node.gpu_count && g.count < pod.num_gpu; ++k) {
    int i = order[static_cast<std::size_t>(k)];
    if (node.gpu_idle[static_cast<std::size_t>(i)] >= pod.gpu_milli) {
      g.gpus[g.count++] = static_cast<std::uint8_t>(i);
    }
  }
  // Report devices in ascending index order.
  std::sort(g.gpus.begin(), g.gpus.begin() + g.count);
  return g;
}

cluster::NodeState AfterPlacement(cluster::NodeState node, const cluster::PodSpec& pod,
                                  const cluster::GpuAssignment& gpus) {
  node.cpu_left -= pod.cpu.raw();
  node.mem_left -= pod.memory.raw();
  for (int k = 0; k < gpus.count; ++k) node.gpu_idle[gpus.gpus[static_cast<std::size_t>(k)]] -= pod.gpu_milli;
  return node;
}

}  // namespace seedance::sched

namespace seedance::sched {

double CapacityAwareNodeFrag(const cluster::NodeState& node, const std::vector<TypicalPod>& typical,
                             double reserve_factor) {
  if (node.gpu_count == 0) return 0.0;
  // Idle per GPU, descending, with prefix sums: the k largest idle values sum to prefix[k].
  std::array<std::int32_t, cluster::kMaxGpusPerNode> idle{};
  const auto g = static_cast<std::size_t>(node.gpu_count);
  std::copy(node.gpu_idle.begin(), node.gpu_idle.begin() + node.gpu_count, idle.begin());
  std::sort(idle.begin(), idle.begin() + node.gpu_count, std::greater<>());
  std::array<std::int64_t, cluster::kMaxGpusPerNode + 1> prefix{};
  for (std::size_t i = 0; i < g; ++i) prefix[i + 1] = prefix[i] + idle[i];
  const std::int64_t total = prefix[g];
  double f = 0;
  for (const auto& t : typical) {
    std::int64_t frag = total;
    if (t.gpu_milli > 0 && t.models.Accepts(node.model) && node.cpu_left >= t.cpu &&
        node.mem_left >= t.memory) {
      std::size_t fit = 0;
      while (fit < g && idle[fit] >= t.gpu_milli) ++fit;
      auto copies = [&](std::int64_t left, std::int64_t need) -> std::int64_t {
        const auto reserve = static_cast<std::int64_t>(static_cast<double>(need) * reserve_factor);
        return reserve <= 0 ? static_cast<std::int64_t>(g) : left / reserve;
      };
      const std::int64_t n_copies =
          std::min(copies(node.cpu_left, t.cpu), copies(node.mem_left, t.memory));
      const auto take = static_cast<std::size_t>(
          std::min<std::int64_t>(static_cast<std::int64_t>(fit), n_copies * t.num_gpu));
      frag = total - prefix[take];
    }
    f += t.weight * static_cast<double>(frag);
  }
  return f;
}

}  // namespace seedance::sched
