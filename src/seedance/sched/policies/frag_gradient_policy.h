#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <unordered_map>

#include "seedance/sched/scoring_policy.h"

namespace seedance::sched::internal {

// A fragmentation-gradient policy (FGD's form): the score of placing a pod on a node is
// int(100 * sigmoid(-(Frag(after) - Frag(before)) / temperature)), maximized over the GPU choices
// ForEachGpuChoice weighs (the lowest GPU index wins ties). Subclasses define Frag.
class FragGradientPolicy : public ScoringPlacementPolicy {
 protected:
  // `temperature_milli`: the fragmentation growth (milli-GPU) that moves the sigmoid by one unit.
  FragGradientPolicy(const PolicyContext& c, double temperature_milli)
      : ScoringPlacementPolicy(c, /*memoize=*/true), temperature_milli_(temperature_milli) {}

  // Returns the node's expected fragmentation, milli-GPU. Must depend on the node state only.
  virtual double Frag(const cluster::NodeState& node) const = 0;

  NodeScore Score(const cluster::ClusterState& cluster, cluster::NodeId id,
                  const cluster::PodSpec& pod) const final {
    const cluster::NodeState& n = cluster.node(id);
    const double before = MemoFrag(n);
    NodeScore best;
    bool have = false;
    ForEachGpuChoice(n, pod, [&](const cluster::GpuAssignment& g, const cluster::NodeState& after) {
      const double growth = MemoFrag(after) - before;
      const double score = std::trunc(100.0 / (1.0 + std::exp(growth / temperature_milli_)));
      if (!have || score > best.primary) {
        have = true;
        best.primary = score;
        best.gpus = g;
      }
    });
    return best;
  }

 private:
  // Frag depends on (model, free CPU, free memory, multiset of GPU idle) only, and many nodes
  // share such a state (every empty node of a type, common partial patterns): memoize by it.
  struct StateKey {
    std::array<std::int64_t, 2> host{};                     // cpu_left, mem_left
    std::array<std::int16_t, cluster::kMaxGpusPerNode> idle{};  // sorted descending
    std::int32_t gpus_and_model = 0;
    bool operator==(const StateKey& o) const {
      return host == o.host && idle == o.idle && gpus_and_model == o.gpus_and_model;
    }
  };
  struct StateKeyHash {
    std::size_t operator()(const StateKey& k) const {
      std::uint64_t h = 1469598103934665603ULL;
      auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ULL; };
      mix(static_cast<std::uint64_t>(k.host[0]));
      mix(static_cast<std::uint64_t>(k.host[1]));
      mix(static_cast<std::uint64_t>(k.gpus_and_model));
      for (auto v : k.idle) mix(static_cast<std::uint64_t>(static_cast<std::uint16_t>(v)));
      return static_cast<std::size_t>(h);
    }
  };
  double MemoFrag(const cluster::NodeState& n) const {
    StateKey k;
    k.host = {n.cpu_left, n.mem_left};
    k.gpus_and_model = n.gpu_count * 256 + n.model;
    for (int i = 0; i < n.gpu_count; ++i) {
      k.idle[static_cast<std::size_t>(i)] =
          static_cast<std::int16_t>(n.gpu_idle[static_cast<std::size_t>(i)]);
    }
    std::sort(k.idle.begin(), k.idle.begin() + n.gpu_count, std::greater<>());
    if (frag_memo_.size() > kMaxMemo) frag_memo_.clear();  // bound memory on huge runs
    auto [it, inserted] = frag_memo_.try_emplace(k, 0.0);
    if (inserted) it->second = Frag(n);
    return it->second;
  }
  static constexpr std::size_t kMaxMemo = 1u << 20;

  double temperature_milli_;
  mutable std::unordered_map<StateKey, double, StateKeyHash> frag_memo_;
};

}  // namespace seedance::sched::internal
