#include "seedance/cluster/cluster.h"

#include <gtest/gtest.h>

namespace seedance::cluster {
namespace {

NodeSpec Node(std::string name, int gpus, std::int64_t cpu = 32000) {
  return NodeSpec{std::move(name), Millicores(cpu), MiB(65536), gpus, *ParseGpuModel("T4")};
}

PodSpec Pod(int num_gpu, std::int32_t milli, std::int64_t cpu = 1000) {
  PodSpec p;
  p.name = "p";
  p.cpu = Millicores(cpu);
  p.memory = MiB(1024);
  p.num_gpu = num_gpu;
  p.gpu_milli = milli;
  return p;
}

TEST(ClusterTest, FitsChecksCpuMemoryModelAndGpus) {
  ClusterState c({Node("a", 2)});
  const NodeState& n = c.node(NodeId(0));
  EXPECT_TRUE(Fits(n, Pod(2, 1000)));
  EXPECT_FALSE(Fits(n, Pod(3, 1000)));
  EXPECT_FALSE(Fits(n, Pod(1, 500, 64000)));
  PodSpec wrong = Pod(1, 500);
  wrong.allowed_models = GpuModelSet::Of(*ParseGpuModel("V100M32"));
  EXPECT_FALSE(Fits(n, wrong));
  PodSpec cpu_only = Pod(0, 0);
  EXPECT_TRUE(Fits(n, cpu_only));
}

TEST(ClusterTest, BindAndUnbindKeepTotals) {
  ClusterState c({Node("a", 2), Node("b", 4)});
  EXPECT_EQ(c.total_gpus(), 6);
  PodSpec share = Pod(1, 300);
  GpuAssignment g = BestFitShareGpu(c.node(NodeId(1)), share);
  c.Bind(share, NodeId(1), g);
  EXPECT_EQ(c.used_gpu_milli(), 300);
  EXPECT_EQ(c.version(NodeId(1)), 1u);
  // The tightest GPU is now the one with 700 left.
  PodSpec share2 = Pod(1, 600);
  GpuAssignment g2 = BestFitShareGpu(c.node(NodeId(1)), share2);
  EXPECT_EQ(g2.gpus[0], g.gpus[0]);
  c.Bind(share2, NodeId(1), g2);
  EXPECT_EQ(c.node(NodeId(1)).gpu_pod_classes[0], 2);
  c.Unbind(share2, NodeId(1), g2);
  c.Unbind(share, NodeId(1), g);
  EXPECT_EQ(c.used_gpu_milli(), 0);
  EXPECT_EQ(c.node(NodeId(1)).TotalGpuIdle(), 4000);
}

TEST(ClusterTest, FirstFitTakesLowestFreeIndices) {
  ClusterState c({Node("a", 4)});
  c.Bind(Pod(1, 1000), NodeId(0), FirstFitGpus(c.node(NodeId(0)), Pod(1, 1000)));
  GpuAssignment g = FirstFitGpus(c.node(NodeId(0)), Pod(2, 1000));
  ASSERT_EQ(g.count, 2);
  EXPECT_EQ(g.gpus[0], 1);
  EXPECT_EQ(g.gpus[1], 2);
}

TEST(ClusterDeathTest, BindOfAPodThatDoesNotFitAborts) {
  ClusterState c({Node("a", 1)});
  GpuAssignment g;
  g.count = 2;
  EXPECT_DEATH(c.Bind(Pod(2, 1000), NodeId(0), g), "bind of");
}

TEST(GpuModelTest, ParsesSetsAndRejectsUnknown) {
  auto s = ParseGpuModelSet("V100M16|V100M32");
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->Accepts(*ParseGpuModel("V100M32")));
  EXPECT_FALSE(s->Accepts(*ParseGpuModel("T4")));
  EXPECT_FALSE(s->Accepts(kNoGpuModel));
  EXPECT_TRUE(ParseGpuModelSet("")->any());
  EXPECT_FALSE(ParseGpuModelSet("T4|X9").has_value());
}

}  // namespace
}  // namespace seedance::cluster
