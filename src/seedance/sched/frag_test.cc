#include "seedance/sched/frag.h"

#include <gtest/gtest.h>

namespace seedance::sched {
namespace {

using cluster::NodeState;
using cluster::PodSpec;

NodeState Node(std::vector<std::int32_t> idle, std::int64_t cpu = 64000, std::int64_t mem = 1 << 20) {
  NodeState n;
  n.cpu_left = cpu;
  n.mem_left = mem;
  n.gpu_count = static_cast<std::int32_t>(idle.size());
  n.model = *cluster::ParseGpuModel("G2");
  for (std::size_t i = 0; i < idle.size(); ++i) n.gpu_idle[i] = idle[i];
  return n;
}

TypicalPod Typical(std::int32_t milli, int num_gpu, std::int64_t cpu = 4000) {
  TypicalPod t;
  t.gpu_milli = milli;
  t.num_gpu = num_gpu;
  t.cpu = cpu;
  t.weight = 1.0;
  return t;
}

TEST(FragTest, FgdFragmentFollowsThePaper) {
  NodeState n = Node({1000, 300, 600, 0});
  // A 500m task fits: only GPUs with less than 500 idle are fragment.
  EXPECT_EQ(NodeFragForTypical(n, Typical(500, 1)), 300);
  // A whole-GPU task fits on GPU 0: the partial GPUs are fragment.
  EXPECT_EQ(NodeFragForTypical(n, Typical(1000, 1)), 900);
  // A 2-GPU task does not fit: everything idle is fragment.
  EXPECT_EQ(NodeFragForTypical(n, Typical(1000, 2)), 1900);
  // Not enough CPU: everything idle is fragment.
  EXPECT_EQ(NodeFragForTypical(n, Typical(500, 1, 100000)), 1900);
  // A CPU-only task uses no GPU.
  EXPECT_EQ(NodeFragForTypical(n, Typical(0, 0)), 1900);
  // A task restricted to another model cannot use this node.
  TypicalPod t4 = Typical(500, 1);
  t4.models = cluster::GpuModelSet::Of(*cluster::ParseGpuModel("T4"));
  EXPECT_EQ(NodeFragForTypical(n, t4), 1900);
}

TEST(FragTest, NodeFragIsTheWeightedSum) {
  NodeState n = Node({1000, 300});
  TypicalPod a = Typical(500, 1), b = Typical(1000, 1);
  a.weight = 0.25;
  b.weight = 0.75;
  EXPECT_DOUBLE_EQ(NodeFrag(n, {a, b}), 0.25 * 300 + 0.75 * 300);
}

TEST(FragTest, TypicalPodsCoverTheWorkloadByPopularity) {
  std::vector<PodSpec> pods;
  auto add = [&](int n, int num_gpu, std::int32_t milli) {
    for (int i = 0; i < n; ++i) {
      PodSpec p;
      p.cpu = Millicores(1000);
      p.memory = MiB(100 + i);
      p.num_gpu = num_gpu;
      p.gpu_milli = milli;
      pods.push_back(p);
    }
  };
  add(90, 1, 1000);
  add(8, 1, 500);
  add(2, 8, 1000);
  auto t = ComputeTypicalPods(pods, 0.95);
  ASSERT_EQ(t.size(), 2u);  // 90 + 8 = 98% >= 95%: the 8-GPU shape is cut
  EXPECT_EQ(t[0].gpu_milli, 1000);
  EXPECT_NEAR(t[0].weight, 90.0 / 98.0, 1e-12);
  EXPECT_NEAR(t[0].weight + t[1].weight, 1.0, 1e-12);
  EXPECT_EQ(t[0].memory, 144);  // mean of 100..189
}

TEST(FragTest, CapacityAwareFragCountsGpusTheCpuCannotFeed) {
  // Four free GPUs but CPU for only two copies of an 8-core task (reserve 1.0).
  NodeState n = Node({1000, 1000, 1000, 1000}, 16000);
  std::vector<TypicalPod> t = {Typical(1000, 1, 8000)};
  EXPECT_DOUBLE_EQ(NodeFrag(n, t), 0.0);                    // FGD: the task fits, no fragment
  EXPECT_DOUBLE_EQ(CapacityAwareNodeFrag(n, t, 1.0), 2000);  // two GPUs are stranded by CPU
  EXPECT_DOUBLE_EQ(CapacityAwareNodeFrag(n, t, 0.5), 0.0);   // copies at half the request
  // Not even one copy fits: all idle is fragment, as in FGD.
  EXPECT_DOUBLE_EQ(CapacityAwareNodeFrag(Node({1000}, 4000), t, 0.55), 1000);
}

TEST(FragTest, CapacityAwareFragCountsEveryCopyAtTheReserveFactor) {
  // 12 free cores, an 8-core task, factor 0.6: copies = floor(12000 / (8000 * 0.6)) = 2, so two
  // of the four free GPUs are fed. (Counting the first copy at its full request and only further
  // ones at 60% would feed one: 1 + floor(4000 / 4800).)
  NodeState n = Node({1000, 1000, 1000, 1000}, 12000);
  std::vector<TypicalPod> t = {Typical(1000, 1, 8000)};
  EXPECT_DOUBLE_EQ(CapacityAwareNodeFrag(n, t, 0.6), 2000);
  // The first copy must still fit at its full request: 7.9 cores feed no 8-core copy.
  EXPECT_DOUBLE_EQ(CapacityAwareNodeFrag(Node({1000, 1000}, 7900), t, 0.6), 2000);
}

TEST(FragTest, EntropyIsZeroForAnEmptyClusterAndGrowsWithRemnants) {
  cluster::ClusterState c({cluster::NodeSpec{"a", Millicores(64000), MiB(1 << 20), 4,
                                              *cluster::ParseGpuModel("G2")}});
  EXPECT_DOUBLE_EQ(GpuFreeEntropy(c), 0.0);
  PodSpec p;
  p.cpu = Millicores(1000);
  p.num_gpu = 1;
  p.gpu_milli = 350;
  c.Bind(p, cluster::NodeId(0), cluster::BestFitShareGpu(c.node(cluster::NodeId(0)), p));
  EXPECT_NEAR(GpuFreeEntropy(c), 0.811278, 1e-6);  // 3 of 4 GPUs full-free, 1 at 650
}

}  // namespace
}  // namespace seedance::sched
