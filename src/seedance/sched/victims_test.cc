#include "seedance/sched/victims.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

#include "seedance/core/rng.h"

namespace seedance::sched {
namespace {

using cluster::ClusterState;
using cluster::NodeEligibility;
using cluster::NodeId;
using cluster::NodeSpec;
using cluster::PodSpec;
using ::testing::ElementsAre;

cluster::GpuModelIndex Model(const char* name) { return *cluster::ParseGpuModel(name); }

NodeSpec GpuNode(int index, int gpus, const char* model = "V100M32") {
  return NodeSpec{"n" + std::to_string(index), Millicores(64000), MiB(524288), gpus, Model(model)};
}

std::vector<NodeSpec> Fleet(int nodes, int gpus) {
  std::vector<NodeSpec> v;
  for (int i = 0; i < nodes; ++i) v.push_back(GpuNode(i, gpus));
  return v;
}

PodSpec Whole(int gpus, cluster::Qos qos = cluster::Qos::kBestEffort) {
  PodSpec p;
  p.name = std::to_string(gpus) + "gpu";
  p.cpu = Millicores(4000);
  p.memory = MiB(16384);
  p.num_gpu = gpus;
  p.gpu_milli = gpus > 0 ? cluster::kMilliPerGpu : 0;
  p.qos = qos;
  return p;
}

PodSpec Share(std::int32_t milli) {
  PodSpec p = Whole(1);
  p.name = "share" + std::to_string(milli);
  p.gpu_milli = milli;
  return p;
}

// Binds `pod` on `node` (first-fit GPUs, or the tightest GPU for a share pod) and returns the
// running pod as a candidate with `id` and `cost`.
PreemptionCandidate BindPod(ClusterState& state, int node, const PodSpec& pod, std::int64_t id = 0,
                            double cost = 0) {
  const NodeId n(static_cast<std::uint32_t>(node));
  const cluster::NodeState& s = state.node(n);
  const cluster::GpuAssignment g =
      pod.is_share() ? cluster::BestFitShareGpu(s, pod) : cluster::FirstFitGpus(s, pod);
  state.Bind(pod, n, g);
  return PreemptionCandidate{id, n, pod, g, cost};
}

// `state` after unbinding the candidates whose ids are in `ids`.
ClusterState Without(ClusterState state, const std::vector<PreemptionCandidate>& candidates,
                     const std::vector<std::int64_t>& ids) {
  for (const PreemptionCandidate& c : candidates) {
    if (std::find(ids.begin(), ids.end(), c.id) != ids.end()) state.Unbind(c.pod, c.node, c.gpus);
  }
  return state;
}

NodeId NodeOf(const std::vector<PreemptionCandidate>& candidates, std::int64_t id) {
  for (const PreemptionCandidate& c : candidates) {
    if (c.id == id) return c.node;
  }
  ADD_FAILURE() << "no candidate " << id;
  return NodeId(0);
}

// Issue 13 item 4 (Kueue #10815): idle-tier victims of 1-2 GPUs scattered over several nodes free
// 4 GPUs in total, but only one node can be freed for a 4-GPU pod.
TEST(FindVictimsForFitTest, FreesOneNodeWhereQuotaOnlyPreemptionScattersGpus) {
  ClusterState state(Fleet(4, 8));
  std::vector<PreemptionCandidate> candidates;
  // Nodes 0-2: a pod that may not be preempted next to cheap idle-tier victims.
  BindPod(state, 0, Whole(6));
  candidates.push_back(BindPod(state, 0, Whole(2), 1, 1.0));
  BindPod(state, 1, Whole(7));
  candidates.push_back(BindPod(state, 1, Whole(1), 2, 1.0));
  BindPod(state, 2, Whole(6));
  candidates.push_back(BindPod(state, 2, Whole(1), 3, 1.0));
  BindPod(state, 2, Whole(1));
  // Node 3: only preemptible pods, each dearer than the scattered ones.
  candidates.push_back(BindPod(state, 3, Whole(2), 4, 3.0));
  candidates.push_back(BindPod(state, 3, Whole(1), 5, 2.0));
  candidates.push_back(BindPod(state, 3, Whole(1), 6, 2.0));
  candidates.push_back(BindPod(state, 3, Whole(2), 7, 3.0));
  candidates.push_back(BindPod(state, 3, Whole(2), 8, 5.0));
  ASSERT_EQ(state.used_gpu_milli(), 32000);
  const PodSpec pod = Whole(4, cluster::Qos::kGuaranteed);
  ASSERT_FALSE(state.CanPlaceAnywhere(pod));

  // Quota-only: the three cheapest free 4 GPUs, over three nodes; no node can take the pod.
  const std::vector<std::int64_t> quota = QuotaOnlyVictims(pod, candidates);
  EXPECT_THAT(quota, ElementsAre(1, 2, 3));
  const ClusterState after_quota = Without(state, candidates, quota);
  EXPECT_GE(state.used_gpu_milli() - after_quota.used_gpu_milli(), 4000);
  EXPECT_FALSE(after_quota.CanPlaceAnywhere(pod));

  // Fit-aware: all on node 3, and the pod fits there afterwards.
  const auto set = FindVictimsForFit(state, pod, candidates);
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->node, NodeId(3));
  for (std::int64_t id : set->victims) EXPECT_EQ(NodeOf(candidates, id), NodeId(3)) << id;
  EXPECT_TRUE(Without(state, candidates, set->victims).CanPlace(set->node, pod));
  // Cheapest on node 3: two 2-GPU pods (6.0) beat 2 + 1 + 1 (7.0) and anything with id 8.
  EXPECT_THAT(set->victims, ElementsAre(4, 7));
  EXPECT_DOUBLE_EQ(set->cost, 6.0);
}

TEST(FindVictimsForFitTest, ReturnsEmptyVictimsOnTheFirstNodeWhenThePodAlreadyFits) {
  ClusterState state(Fleet(3, 8));
  std::vector<PreemptionCandidate> candidates;
  candidates.push_back(BindPod(state, 0, Whole(8), 1, 0.0));
  BindPod(state, 1, Whole(6));
  const auto set = FindVictimsForFit(state, Whole(2), candidates);
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->node, NodeId(1));
  EXPECT_TRUE(set->victims.empty());
  EXPECT_EQ(set->cost, 0.0);
}

TEST(FindVictimsForFitTest, ReturnsNulloptWhenNoSingleNodeCanBeFreed) {
  ClusterState state(Fleet(2, 8));
  std::vector<PreemptionCandidate> candidates;
  BindPod(state, 0, Whole(5));
  candidates.push_back(BindPod(state, 0, Whole(3), 1, 1.0));
  BindPod(state, 1, Whole(5));
  candidates.push_back(BindPod(state, 1, Whole(3), 2, 1.0));
  // 6 GPUs are preemptible in total, but no node can give 4.
  EXPECT_EQ(FindVictimsForFit(state, Whole(4), candidates), std::nullopt);
  EXPECT_THAT(QuotaOnlyVictims(Whole(4), candidates), ElementsAre(1, 2));
  // A pod larger than any node, and no candidates at all.
  EXPECT_EQ(FindVictimsForFit(state, Whole(9), candidates), std::nullopt);
  EXPECT_EQ(FindVictimsForFit(state, Whole(4), {}), std::nullopt);
}

TEST(FindVictimsForFitTest, RespectsEligibilityAndGpuModel) {
  std::vector<NodeSpec> nodes = {GpuNode(0, 8), GpuNode(1, 8, "T4"), GpuNode(2, 8), GpuNode(3, 8)};
  ClusterState state(nodes);
  std::vector<PreemptionCandidate> candidates;
  for (int n = 0; n < 4; ++n) {
    // The cheapest victims sit on the nodes that cannot take the pod.
    candidates.push_back(BindPod(state, n, Whole(4), 10 * n + 1, n == 3 ? 9.0 : 1.0));
    candidates.push_back(BindPod(state, n, Whole(4), 10 * n + 2, n == 3 ? 9.0 : 1.0));
  }
  state.SetEligibility(NodeId(0), NodeEligibility::kNone);
  state.SetEligibility(NodeId(2), NodeEligibility::kBestEffortOnly);
  PodSpec pod = Whole(4, cluster::Qos::kGuaranteed);
  pod.allowed_models = cluster::GpuModelSet::Of(Model("V100M32"));

  auto set = FindVictimsForFit(state, pod, candidates);
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->node, NodeId(3));
  EXPECT_THAT(set->victims, ElementsAre(31));
  EXPECT_TRUE(Without(state, candidates, set->victims).CanPlace(set->node, pod));

  // A best-effort pod may go to node 2 (observation), and the model allows node 1 only if it
  // asks for any model.
  pod.qos = cluster::Qos::kBestEffort;
  set = FindVictimsForFit(state, pod, candidates);
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->node, NodeId(2));
  pod.allowed_models = {};
  set = FindVictimsForFit(state, pod, candidates);
  ASSERT_TRUE(set.has_value());
  EXPECT_EQ(set->node, NodeId(1));

  // No node admits it: nullopt.
  for (std::uint32_t n = 1; n < 4; ++n) state.SetEligibility(NodeId(n), NodeEligibility::kNone);
  EXPECT_EQ(FindVictimsForFit(state, pod, candidates), std::nullopt);
}

// Share pods: freeing milli-GPU on several devices of a node does not help a pod that needs it
// on one device.
TEST(FindVictimsForFitTest, CountsMilliGpuPerDevice) {
  ClusterState state({GpuNode(0, 3)});
  std::vector<PreemptionCandidate> candidates;
  const auto on = [&](int gpu, const PodSpec& pod, std::int64_t id, double cost) {
    cluster::GpuAssignment g;
    g.gpus[0] = static_cast<std::uint8_t>(gpu);
    g.count = 1;
    state.Bind(pod, NodeId(0), g);
    if (id > 0) candidates.push_back(PreemptionCandidate{id, NodeId(0), pod, g, cost});
  };
  on(0, Share(600), 0, 0);
  on(0, Share(300), 1, 1.0);  // GPU 0: 100 idle, 400 once preempted
  on(1, Share(600), 0, 0);
  on(1, Share(300), 2, 1.0);  // GPU 1: likewise
  on(2, Whole(1), 3, 5.0);    // GPU 2: full, 1000 once preempted
  const PodSpec pod = Share(500);
  ASSERT_FALSE(state.CanPlaceAnywhere(pod));

  const auto set = FindVictimsForFit(state, pod, candidates);
  ASSERT_TRUE(set.has_value());
  EXPECT_THAT(set->victims, ElementsAre(3));
  EXPECT_DOUBLE_EQ(set->cost, 5.0);
  // Quota-only takes the two cheap share pods: 600 milli freed, on two devices; no fit.
  const auto quota = QuotaOnlyVictims(pod, candidates);
  EXPECT_THAT(quota, ElementsAre(1, 2));
  EXPECT_FALSE(Without(state, candidates, quota).CanPlaceAnywhere(pod));

  // A share victim on a device with room to spare is enough once it is the cheapest.
  candidates[0].cost = 0.5;  // id 1, GPU 0
  on(0, Share(100), 0, 0);   // GPU 0 now full; releasing id 1 gives 300 idle: still no fit
  EXPECT_THAT(FindVictimsForFit(state, pod, candidates)->victims, ElementsAre(3));
  const auto relaxed = FindVictimsForFit(state, Share(300), candidates);
  ASSERT_TRUE(relaxed.has_value());
  EXPECT_THAT(relaxed->victims, ElementsAre(1));
}

// A random small cluster with running pods, some of them candidates with small integer costs (so
// that ties are common and the tie-break order is exercised).
struct RandomCase {
  ClusterState state;
  std::vector<PreemptionCandidate> candidates;
  PodSpec pod;
};

RandomCase MakeRandomCase(std::uint64_t seed, int max_candidates) {
  Rng rng(seed);
  std::vector<NodeSpec> nodes;
  const int n = static_cast<int>(rng.UniformInt(1, 3));
  for (int i = 0; i < n; ++i) {
    nodes.push_back(
        GpuNode(i, static_cast<int>(rng.UniformInt(2, 8)), rng.Bernoulli(0.25) ? "T4" : "V100M32"));
    nodes.back().cpu = Millicores(rng.UniformInt(12000, 40000));
  }
  RandomCase c{ClusterState(nodes), {}, {}};
  for (int attempt = 0; attempt < 14; ++attempt) {
    PodSpec p = rng.Bernoulli(0.4) ? Share(static_cast<std::int32_t>(rng.UniformInt(1, 9) * 100))
                                   : Whole(static_cast<int>(rng.UniformInt(1, 3)));
    p.cpu = Millicores(rng.UniformInt(1, 8) * 1000);
    const auto node = static_cast<int>(rng.Uniform(static_cast<std::uint64_t>(n)));
    if (!cluster::Fits(c.state.node(NodeId(static_cast<std::uint32_t>(node))), p)) continue;
    const double cost = static_cast<double>(rng.UniformInt(0, 4));
    PreemptionCandidate running = BindPod(c.state, node, p, 100 - attempt, cost);
    if (static_cast<int>(c.candidates.size()) < max_candidates && rng.Bernoulli(0.75)) {
      c.candidates.push_back(running);
    }
  }
  for (int i = 0; i < n; ++i) {
    const auto r = rng.Uniform(10);
    c.state.SetEligibility(
        NodeId(static_cast<std::uint32_t>(i)),
        r == 0 ? NodeEligibility::kNone
               : (r == 1 ? NodeEligibility::kBestEffortOnly : NodeEligibility::kAll));
  }
  c.pod = rng.Bernoulli(0.3) ? Share(static_cast<std::int32_t>(rng.UniformInt(1, 10) * 100))
                             : Whole(static_cast<int>(rng.UniformInt(1, 5)));
  c.pod.cpu = Millicores(rng.UniformInt(1, 12) * 1000);
  c.pod.qos = rng.Bernoulli(0.5) ? cluster::Qos::kGuaranteed : cluster::Qos::kBestEffort;
  if (rng.Bernoulli(0.2)) c.pod.allowed_models = cluster::GpuModelSet::Of(Model("T4"));
  return c;
}

// The header's order over sets, by brute force over every subset of candidates.
std::optional<VictimSet> BruteForce(const RandomCase& c) {
  std::optional<VictimSet> best;
  const std::size_t k = c.candidates.size();
  for (std::uint32_t mask = 0; mask < (1u << k); ++mask) {
    std::vector<const PreemptionCandidate*> set;
    for (std::size_t i = 0; i < k; ++i) {
      if ((mask >> i) & 1u) set.push_back(&c.candidates[i]);
    }
    // The canonical cost sum: in (cost, id) order.
    std::sort(set.begin(), set.end(), [](auto* a, auto* b) {
      return a->cost != b->cost ? a->cost < b->cost : a->id < b->id;
    });
    double cost = 0;
    std::vector<std::int64_t> ids;
    for (const auto* v : set) {
      cost += v->cost;
      ids.push_back(v->id);
    }
    std::sort(ids.begin(), ids.end());
    for (std::uint32_t n = 0; n < c.state.size(); ++n) {
      const NodeId node(n);
      if (std::any_of(set.begin(), set.end(), [&](auto* v) { return v->node != node; })) continue;
      if (!Without(c.state, c.candidates, ids).CanPlace(node, c.pod)) continue;
      // The header's order: cost, number of victims, node, ids.
      if (!best ||
          std::make_tuple(cost, ids.size(), node, ids) <
              std::make_tuple(best->cost, best->victims.size(), best->node, best->victims)) {
        best = VictimSet{node, ids, cost};
      }
    }
  }
  return best;
}

TEST(FindVictimsForFitTest, MatchesBruteForceOnRandomSmallClusters) {
  int with_victims = 0, already_fits = 0, none = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    const RandomCase c = MakeRandomCase(seed, 10);
    const auto expected = BruteForce(c);
    const auto got = FindVictimsForFit(c.state, c.pod, c.candidates);
    ASSERT_EQ(got.has_value(), expected.has_value()) << "seed " << seed;
    // The result must not depend on the order of the candidates.
    std::vector<PreemptionCandidate> reversed(c.candidates.rbegin(), c.candidates.rend());
    const auto got_reversed = FindVictimsForFit(c.state, c.pod, reversed);
    ASSERT_EQ(got_reversed.has_value(), expected.has_value()) << "seed " << seed;
    if (!expected) {
      ++none;
      continue;
    }
    EXPECT_EQ(got->node, expected->node) << "seed " << seed;
    EXPECT_EQ(got->victims, expected->victims) << "seed " << seed;
    EXPECT_EQ(got->cost, expected->cost) << "seed " << seed;
    EXPECT_EQ(got_reversed->node, got->node) << "seed " << seed;
    EXPECT_EQ(got_reversed->victims, got->victims) << "seed " << seed;
    (expected->victims.empty() ? already_fits : with_victims)++;
  }
  // The random cases cover all three outcomes, mostly ones that need victims.
  EXPECT_GE(with_victims, 60);
  EXPECT_GE(already_fits, 10);
  EXPECT_GE(none, 10);
}

// Above kExactVictimSearchMaxCandidates candidates on a node the search is greedy: the set must
// still free the node, and no victim in it can be spared.
TEST(FindVictimsForFitTest, GreedySetOnCrowdedNodesFitsAndIsMinimal) {
  int searched = 0;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    Rng rng(seed);
    ClusterState state({GpuNode(0, 16), GpuNode(1, 16)});
    std::vector<PreemptionCandidate> candidates;
    std::int64_t id = 0;
    for (int node = 0; node < 2; ++node) {
      for (int gpu = 0; gpu < 16; ++gpu) {
        // Two or three share pods per GPU, all preemptible.
        const int pods = static_cast<int>(rng.UniformInt(2, 3));
        for (int p = 0; p < pods; ++p) {
          PodSpec s = Share(300);
          s.cpu = Millicores(500);
          s.memory = MiB(1024);
          cluster::GpuAssignment g;
          g.gpus[0] = static_cast<std::uint8_t>(gpu);
          g.count = 1;
          state.Bind(s, NodeId(static_cast<std::uint32_t>(node)), g);
          candidates.push_back(PreemptionCandidate{++id, NodeId(static_cast<std::uint32_t>(node)),
                                                   s, g,
                                                   static_cast<double>(rng.UniformInt(1, 9))});
        }
      }
    }
    const PodSpec pod = Whole(static_cast<int>(rng.UniformInt(2, 6)));
    if (state.CanPlaceAnywhere(pod)) continue;
    ++searched;
    const auto set = FindVictimsForFit(state, pod, candidates);
    ASSERT_TRUE(set.has_value()) << "seed " << seed;
    for (std::int64_t v : set->victims) EXPECT_EQ(NodeOf(candidates, v), set->node);
    EXPECT_TRUE(Without(state, candidates, set->victims).CanPlace(set->node, pod));
    for (std::size_t drop = 0; drop < set->victims.size(); ++drop) {
      std::vector<std::int64_t> fewer = set->victims;
      fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(drop));
      EXPECT_FALSE(Without(state, candidates, fewer).CanPlace(set->node, pod))
          << "seed " << seed << ": victim " << set->victims[drop] << " can be spared";
    }
  }
  EXPECT_GE(searched, 40);
}

TEST(QuotaOnlyVictimsTest, TakesCandidatesInOrderUntilTheGpuRequestIsCovered) {
  ClusterState state(Fleet(2, 8));
  std::vector<PreemptionCandidate> candidates;
  PodSpec cpu_only = Whole(0);
  candidates.push_back(BindPod(state, 0, cpu_only, 1));
  candidates.push_back(BindPod(state, 0, Share(500), 2));
  candidates.push_back(BindPod(state, 1, Whole(2), 3));
  candidates.push_back(BindPod(state, 1, Whole(2), 4));
  EXPECT_THAT(QuotaOnlyVictims(Whole(2), candidates), ElementsAre(2, 3));
  EXPECT_THAT(QuotaOnlyVictims(Whole(4), candidates), ElementsAre(2, 3, 4));
  EXPECT_TRUE(QuotaOnlyVictims(Whole(5), candidates).empty());
  EXPECT_TRUE(QuotaOnlyVictims(cpu_only, candidates).empty());
}

}  // namespace
}  // namespace seedance::sched
