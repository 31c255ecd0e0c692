#include "seedance/sched/gang.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "seedance/core/rng.h"

namespace seedance::sched {
namespace {

using cluster::ClusterState;
using cluster::NodeId;
using cluster::NodeSpec;
using cluster::PodSpec;

cluster::GpuModelIndex Model(const char* name) { return *cluster::ParseGpuModel(name); }

NodeSpec GpuNode(int index, int gpus, const char* model) {
  return NodeSpec{"n" + std::to_string(index), Millicores(64000), MiB(524288), gpus, Model(model)};
}

PodSpec Whole(int gpus, const char* model = nullptr) {
  PodSpec p;
  p.name = std::to_string(gpus) + "gpu";
  p.cpu = Millicores(4000);
  p.memory = MiB(16384);
  p.num_gpu = gpus;
  p.gpu_milli = gpus > 0 ? cluster::kMilliPerGpu : 0;
  if (model != nullptr) p.allowed_models = cluster::GpuModelSet::Of(Model(model));
  return p;
}

PreemptionCandidate BindPod(ClusterState& state, int node, const PodSpec& pod, std::int64_t id, double cost) {
  const NodeId n(static_cast<std::uint32_t>(node));
  const cluster::GpuAssignment g = cluster::FirstFitGpus(state.node(n), pod);
  state.Bind(pod, n, g);
  return PreemptionCandidate{id, n, pod, g, cost};
}

// The context outlives the policy (policies keep a reference); ranks by node index.
PolicyContext Context(std::size_t nodes) {
  PolicyContext ctx;
  for (std::uint32_t i = 0; i < nodes; ++i) ctx.tie_rank.push_back(i);
  return ctx;
}

// Two A100 nodes and three H100 nodes; one H100 node already half full.
std::vector<NodeSpec> MixedFleet() {
  return {GpuNode(0, 8, "A100-80G"), GpuNode(1, 8, "H100"), GpuNode(2, 8, "A100-80G"),
          GpuNode(3, 8, "H100"), GpuNode(4, 8, "H100")};
}

TEST(PlaceGangTest, MembersLandOnDistinctNodesOfTheOneModelTheyAsk) {
  ClusterState state(MixedFleet());
  BindPod(state, 3, Whole(4), 99, 0);
  const PolicyContext ctx = Context(state.size());
  auto policy = MakePlacementPolicy("bestfit", ctx);
  ASSERT_TRUE(policy.has_value());
  Rng rng(1);
  const PodSpec pod = Whole(4, "H100");
  auto m = PlaceGang(**policy, state, pod, 3, rng);
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->size(), 3u);
  std::set<std::uint32_t> nodes;
  for (const auto& g : *m) {
    nodes.insert(g.node.value());
    EXPECT_EQ(state.specs()[g.node.value()].model, Model("H100"));
    EXPECT_EQ(g.gpus.count, 4);
  }
  EXPECT_EQ(nodes, (std::set<std::uint32_t>{1, 3, 4}));
  // bestfit takes the fullest node first: the half-full H100 node.
  EXPECT_EQ((*m)[0].node.value(), 3u);
  // Bound: node 3 is full now, the others half.
  EXPECT_EQ(state.node(NodeId(3)).TotalGpuIdle(), 0);
  EXPECT_EQ(state.node(NodeId(1)).TotalGpuIdle(), 4000);
  // Eligibility was restored.
  for (std::uint32_t n = 0; n < state.size(); ++n) EXPECT_EQ(state.eligibility(NodeId(n)), cluster::NodeEligibility::kAll);
}

TEST(PlaceGangTest, TooFewNodesOfTheModelLeavesTheStateUntouched) {
  ClusterState state(MixedFleet());
  const PolicyContext ctx = Context(state.size());
  auto policy = MakePlacementPolicy("bestfit", ctx);
  ASSERT_TRUE(policy.has_value());
  Rng rng(1);
  // Three A100 members: only two A100 nodes, even though each takes 2 of 8 GPUs.
  EXPECT_FALSE(PlaceGang(**policy, state, Whole(2, "A100-80G"), 3, rng).has_value());
  for (std::uint32_t n = 0; n < state.size(); ++n) {
    EXPECT_EQ(state.node(NodeId(n)).TotalGpuIdle(), 8000) << "node " << n;
    EXPECT_EQ(state.eligibility(NodeId(n)), cluster::NodeEligibility::kAll);
  }
  EXPECT_TRUE(PlaceGang(**policy, state, Whole(2, "A100-80G"), 2, rng).has_value());
}

TEST(FindVictimsForGangTest, FreesDistinctNodesCheapestFirstAndCountsAMultiNodeVictimOnce) {
  ClusterState state(MixedFleet());
  std::vector<PreemptionCandidate> c;
  // Node 1: a cheap 8-GPU victim. Nodes 3 and 4: one 2-node victim (id 7, cost 5) on both.
  // Node 4 also holds a dear single-node victim.
  c.push_back(BindPod(state, 1, Whole(8), 1, 1.0));
  c.push_back(BindPod(state, 3, Whole(8), 7, 5.0));
  c.push_back(BindPod(state, 4, Whole(4), 7, 5.0));
  c.push_back(BindPod(state, 4, Whole(4), 2, 9.0));
  const PodSpec pod = Whole(8, "H100");
  // One member: the cheapest node.
  auto one = FindVictimsForGang(state, pod, 1, c);
  ASSERT_TRUE(one.has_value());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].node.value(), 1u);
  EXPECT_EQ((*one)[0].victims, (std::vector<std::int64_t>{1}));
  // Two members: node 1 (job 1), then node 3 (job 7, which frees node 4's half too).
  auto two = FindVictimsForGang(state, pod, 2, c);
  ASSERT_TRUE(two.has_value());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[1].node.value(), 3u);
  EXPECT_EQ((*two)[1].victims, (std::vector<std::int64_t>{7}));
  EXPECT_DOUBLE_EQ((*two)[1].cost, 5.0);
  // Three members: node 4 still needs job 2 gone (job 7's half was released already).
  auto three = FindVictimsForGang(state, pod, 3, c);
  ASSERT_TRUE(three.has_value());
  EXPECT_EQ((*three)[2].node.value(), 4u);
  EXPECT_EQ((*three)[2].victims, (std::vector<std::int64_t>{2}));
  // Four H100 members: there are only three H100 nodes.
  EXPECT_FALSE(FindVictimsForGang(state, pod, 4, c).has_value());
  // An idle node costs nothing and is taken first.
  ClusterState idle(MixedFleet());
  auto free2 = FindVictimsForGang(idle, Whole(8, "A100-80G"), 2, {});
  ASSERT_TRUE(free2.has_value());
  EXPECT_TRUE((*free2)[0].victims.empty());
  EXPECT_NE((*free2)[0].node, (*free2)[1].node);
}

}  // namespace
}  // namespace seedance::sched
