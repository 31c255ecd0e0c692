#include "seedance/cost/node_pool.h"

#include <gtest/gtest.h>

namespace seedance::cost {
namespace {

NodePool Pool(std::string name, PoolKind kind, NodeMatch m) {
  NodePool p;
  p.name = std::move(name);
  p.gpu_type = "H100";
  p.kind = kind;
  p.match = std::move(m);
  return p;
}

TEST(NodePoolTest, LabelsMatchAsWrittenOrAsKubeStateMetricsSanitizesThem) {
  NodeMatch m;
  m.labels = {{"karpenter.sh/capacity-type", "spot"}};
  NodeFacts n{"ip-10-0-0-1", {{"label_karpenter_sh_capacity_type", "spot"}}, ""};
  EXPECT_TRUE(MatchesNode(m, n));
  n.labels = {{"karpenter.sh/capacity-type", "on-demand"}};
  EXPECT_FALSE(MatchesNode(m, n));
  m.labels = {{"karpenter.sh/capacity-type", "*"}};
  EXPECT_TRUE(MatchesNode(m, n));
}

TEST(NodePoolTest, FirstMatchingPoolWinsAndOwnedAndRentedH100sDiffer) {
  NodeMatch owned;
  owned.node_name = "dc1-h100-*";
  NodeMatch od;
  od.labels = {{"eks.amazonaws.com/capacityType", "ON_DEMAND"}};
  std::vector<NodePool> pools = {Pool("h100-owned", PoolKind::kOwned, owned),
                                 Pool("h100-od", PoolKind::kOnDemand, od)};
  pools[0].usd_per_gpu_hour = 1.5;
  pools[1].usd_per_gpu_hour = 3.9;
  auto a = FindNodePool(pools, {"dc1-h100-07", {}, ""}, "fleet.yaml");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ((*a)->name, "h100-owned");
  auto b = FindNodePool(pools, {"ip-1", {{"label_eks_amazonaws_com_capacityType", "ON_DEMAND"}}, ""}, "fleet.yaml");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ((*b)->name, "h100-od");
  EXPECT_NE((*a)->usd_per_gpu_hour, (*b)->usd_per_gpu_hour);
}

TEST(NodePoolTest, ANodeNoPoolMatchesIsAnErrorNamingIt) {
  NodeMatch p;
  p.partition = "gpu-h100";
  std::vector<NodePool> pools = {Pool("slurm-h100", PoolKind::kOwned, p)};
  EXPECT_TRUE(FindNodePool(pools, {"n1", {}, "gpu-h100"}, "f.yaml").has_value());
  auto r = FindNodePool(pools, {"n2", {{"zone", "a"}}, "debug"}, "f.yaml");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find("node 'n2' matches no node pool of f.yaml"), std::string::npos);
  EXPECT_NE(r.error().message().find("zone=a"), std::string::npos);
  EXPECT_NE(r.error().message().find("partition: debug"), std::string::npos);
  // A pool with no criterion matches nothing (the parser refuses it too).
  EXPECT_FALSE(MatchesNode(NodeMatch{}, {"n1", {}, ""}));
}

}  // namespace
}  // namespace seedance::cost
