#include "seedance/sched/placement_policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "seedance/sched/packing_experiment.h"

namespace seedance::sched {
namespace {

using cluster::ClusterState;
using cluster::NodeSpec;
using cluster::PodSpec;

std::vector<NodeSpec> SmallFleet() {
  std::vector<NodeSpec> nodes;
  const char* models[] = {"G2", "T4", "P100", "V100M32"};
  for (int i = 0; i < 12; ++i) {
    nodes.push_back(NodeSpec{"n" + std::to_string(i), Millicores(32000 + 8000 * (i % 3)),
                             MiB(262144), 1 + (i % 4) * 2 + (i % 2),
                             *cluster::ParseGpuModel(models[i % 4])});
  }
  return nodes;
}

std::vector<PodSpec> MixedPods(int n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<PodSpec> pods;
  for (int i = 0; i < n; ++i) {
    PodSpec p;
    p.name = "p" + std::to_string(i);
    p.cpu = Millicores(rng.UniformInt(500, 12000));
    p.memory = MiB(rng.UniformInt(256, 32768));
    const auto kind = rng.Uniform(10);
    if (kind < 2) {
      p.num_gpu = 0;
    } else if (kind < 6) {
      p.num_gpu = 1;
      p.gpu_milli = static_cast<std::int32_t>(rng.UniformInt(1, 999));
    } else if (kind < 9) {
      p.num_gpu = 1;
      p.gpu_milli = 1000;
    } else {
      p.num_gpu = static_cast<int>(rng.UniformInt(2, 4));
      p.gpu_milli = 1000;
    }
    if (rng.Bernoulli(0.2) && p.num_gpu > 0) {
      p.allowed_models = cluster::GpuModelSet::Of(*cluster::ParseGpuModel("T4"));
    }
    pods.push_back(p);
  }
  return pods;
}

// The contract every placement policy keeps (Mesos-style: one suite, every implementation).
class PlacementPolicyContractTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PlacementPolicyContractTest, PlacesOnlyWhereThePodFitsAndFailsOnlyWhenNothingFits) {
  const auto nodes = SmallFleet();
  const auto pods = MixedPods(400, 7);
  PackingWorkload w = PrepareFgdWorkload(nodes, pods, 42, 1.3);
  PolicyContext ctx{w.tie_rank, w.typical};
  auto policy = MakePlacementPolicy(GetParam(), ctx);
  ASSERT_TRUE(policy.has_value()) << policy.error().ToString();
  EXPECT_EQ((*policy)->Name(), GetParam());
  ClusterState cluster(nodes);
  Rng rng(1);
  int placed = 0, failed = 0;
  for (const PodSpec& pod : w.pods) {
    const ClusterState before = cluster;
    PlacementDecision d = (*policy)->Decide(cluster, pod, rng);
    // Decide never changes the cluster.
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      ASSERT_EQ(before.nodes()[i].cpu_left, cluster.nodes()[i].cpu_left);
    }
    bool any_fits = false;
    for (const auto& n : cluster.nodes()) any_fits |= cluster::Fits(n, pod);
    ASSERT_EQ(d.placed(), any_fits) << pod.name;
    if (!d.placed()) {
      ++failed;
      continue;
    }
    ASSERT_TRUE(cluster::Fits(cluster.node(d.node), pod));
    ASSERT_EQ(d.gpus.count, pod.is_gpu() ? pod.num_gpu : 0);
    for (int k = 0; k < d.gpus.count; ++k) {
      ASSERT_GE(cluster.node(d.node).gpu_idle[d.gpus.gpus[static_cast<std::size_t>(k)]],
                pod.gpu_milli);
    }
    cluster.Bind(pod, d.node, d.gpus);  // checks again and aborts on a bad decision
    ++placed;
  }
  EXPECT_GT(placed, 50);
  EXPECT_GT(failed, 0);  // inflated to 130%: something must fail
}

TEST_P(PlacementPolicyContractTest, SameInputsSameDecisions) {
  const auto nodes = SmallFleet();
  const auto pods = MixedPods(200, 9);
  auto run = [&] {
    PackingWorkload w = PrepareFgdWorkload(nodes, pods, 43, 1.3);
    return *RunPacking(nodes, w, GetParam(), 43, PackingRunOptions{});
  };
  PackingRunResult a = run(), b = run();
  EXPECT_EQ(a.pods_placed, b.pods_placed);
  ASSERT_EQ(a.alloc_pct.size(), b.alloc_pct.size());
  for (std::size_t k = 0; k < a.alloc_pct.size(); ++k) {
    if (std::isnan(a.alloc_pct[k])) {
      EXPECT_TRUE(std::isnan(b.alloc_pct[k]));
    } else {
      EXPECT_EQ(a.alloc_pct[k], b.alloc_pct[k]);
    }
  }
}

// The admission mask (S7.3): removed nodes get no new work, observation nodes only Bronze
// (best-effort) work, whatever the policy prefers.
TEST_P(PlacementPolicyContractTest, RespectsTheAdmissionMask) {
  const auto nodes = SmallFleet();
  const auto pods = MixedPods(400, 11);
  PackingWorkload w = PrepareFgdWorkload(nodes, pods, 44, 1.3);
  PolicyContext ctx{w.tie_rank, w.typical};
  auto policy = MakePlacementPolicy(GetParam(), ctx);
  ASSERT_TRUE(policy.has_value());
  ClusterState cluster(nodes);
  for (std::uint32_t i = 0; i < nodes.size(); ++i) {
    const auto e = i % 3 == 0   ? cluster::NodeEligibility::kNone
                   : i % 3 == 1 ? cluster::NodeEligibility::kBestEffortOnly
                                : cluster::NodeEligibility::kAll;
    cluster.SetEligibility(cluster::NodeId(i), e);
  }
  Rng rng(3);
  int on_observation = 0, placed = 0;
  for (PodSpec pod : w.pods) {
    pod.qos = pod.name.size() % 2 == 0 ? cluster::Qos::kBestEffort : cluster::Qos::kGuaranteed;
    PlacementDecision d = (*policy)->Decide(cluster, pod, rng);
    bool any = false;
    for (std::uint32_t i = 0; i < nodes.size(); ++i) any |= cluster.CanPlace(cluster::NodeId(i), pod);
    ASSERT_EQ(d.placed(), any) << pod.name;
    if (!d.placed()) continue;
    const auto e = cluster.eligibility(d.node);
    ASSERT_NE(e, cluster::NodeEligibility::kNone) << pod.name;
    if (e == cluster::NodeEligibility::kBestEffortOnly) {
      ASSERT_EQ(pod.qos, cluster::Qos::kBestEffort) << pod.name;
      ++on_observation;
    }
    cluster.Bind(pod, d.node, d.gpus);
    ++placed;
  }
  EXPECT_GT(placed, 20);
  EXPECT_GT(on_observation, 0);  // best-effort work still uses observation nodes
  for (std::uint32_t i = 0; i < nodes.size(); i += 3) {
    EXPECT_EQ(cluster.nodes()[i].cpu_left, nodes[i].cpu.raw()) << "removed node got work";
  }
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, PlacementPolicyContractTest,
                         ::testing::Values("random", "dotprod", "clustering", "packing", "bestfit",
                                           "fgd", "seedance", "firstfit", "least-allocated",
                                           "most-allocated"));

// S7.2: the health grade's weight steers placement between otherwise equal nodes, against the
// tie order, for the scoring policies.
TEST(GradeWeightTest, AHigherWeightWinsBetweenEqualNodes) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 2; ++i) {
    nodes.push_back(NodeSpec{"w" + std::to_string(i), Millicores(32000), MiB(262144), 4,
                             *cluster::ParseGpuModel("V100M32")});
  }
  PodSpec pod;
  pod.name = "p";
  pod.cpu = Millicores(4000);
  pod.memory = MiB(8192);
  pod.num_gpu = 1;
  pod.gpu_milli = 1000;
  PackingWorkload w = PrepareFgdWorkload(nodes, {pod}, 42, 1.0);
  for (const char* name : {"bestfit", "fgd", "seedance", "packing"}) {
    PolicyContext ctx{w.tie_rank, w.typical};
    auto policy = MakePlacementPolicy(name, ctx);
    ASSERT_TRUE(policy.has_value());
    Rng rng(1);
    ClusterState cluster(nodes);
    const auto tie_winner = (*policy)->Decide(cluster, pod, rng).node;
    const cluster::NodeId other(1 - tie_winner.value());
    cluster.SetWeight(other, 1.25);
    cluster.SetWeight(tie_winner, 0.75);
    EXPECT_EQ((*policy)->Decide(cluster, pod, rng).node, other) << name;
  }
}

// kube-scheduler's NodeResourcesFit: LeastAllocated (cpu, memory) spreads, MostAllocated (cpu,
// memory, GPU x3) packs; the scores are the plugin's integer formulas.
TEST(KubeFitPolicyTest, LeastAllocatedSpreadsAndMostAllocatedPacks) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 3; ++i) {
    nodes.push_back(NodeSpec{"k" + std::to_string(i), Millicores(96000), MiB(1024 * 1024), 8,
                             *cluster::ParseGpuModel("V100M32")});
  }
  PodSpec pod;
  pod.name = "p";
  pod.cpu = Millicores(10000);
  pod.memory = MiB(100 * 1024);
  pod.num_gpu = 1;
  pod.gpu_milli = 1000;
  PolicyContext ctx = NameOrderPolicyContext(nodes, {});
  auto least = MakePlacementPolicy("least-allocated", ctx);
  auto most = MakePlacementPolicy("most-allocated", ctx);
  ASSERT_TRUE(least.has_value() && most.has_value());
  Rng rng(1);
  ClusterState cluster(nodes);
  // Two pods on k1: LeastAllocated then avoids k1, MostAllocated keeps filling it.
  for (int i = 0; i < 2; ++i) cluster.Bind(pod, cluster::NodeId(1), cluster::FirstFitGpus(cluster.node(cluster::NodeId(1)), pod));
  EXPECT_EQ((*least)->Decide(cluster, pod, rng).node, cluster::NodeId(0));  // empty, lowest name
  EXPECT_EQ((*most)->Decide(cluster, pod, rng).node, cluster::NodeId(1));
  EXPECT_EQ((*least)->Name(), "least-allocated");
  EXPECT_EQ((*most)->Name(), "most-allocated");
}

TEST(PlacementPolicyFactoryTest, UnknownNameIsAnErrorNotAThrow) {
  PolicyContext ctx;
  auto p = MakePlacementPolicy("tetris", ctx);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.error().message().find("known: random"), std::string::npos);
}

TEST(PackingWorkloadTest, InflatesToTheTuneTargetAndKeepsTheTraceFirst) {
  const auto nodes = SmallFleet();
  const auto pods = MixedPods(8, 3);
  PackingWorkload w = PrepareFgdWorkload(nodes, pods, 42, 1.3);
  std::int64_t capacity = 0, total = 0;
  for (const auto& n : nodes) capacity += n.gpu_count * 1000;
  for (const auto& p : w.pods) total += p.total_gpu_milli();
  EXPECT_GE(static_cast<double>(total) + 1000.0, 1.3 * static_cast<double>(capacity));
  ASSERT_GT(w.pods.size(), pods.size());
  for (std::size_t i = pods.size(); i < w.pods.size(); ++i) {
    EXPECT_NE(w.pods[i].name.find("-tuned-"), std::string::npos);
  }
  // The tie ranks are a permutation.
  auto r = w.tie_rank;
  std::sort(r.begin(), r.end());
  for (std::uint32_t i = 0; i < r.size(); ++i) EXPECT_EQ(r[i], i);
}

}  // namespace
}  // namespace seedance::sched
