// ReplayTrace: the trace's own clock orders arrivals and departures, departures free capacity,
// unplaced pods hold nothing, and ties go to node names as in `seedance server`.
#include "seedance/sched/trace_replay.h"

#include <gtest/gtest.h>

#include "seedance/sched/placement_policy.h"

namespace seedance::sched {
namespace {

using cluster::NodeSpec;
using cluster::PodSpec;
using Kind = TraceReplayEvent::Kind;

NodeSpec Node(const std::string& name, int gpus) {
  return NodeSpec{name, Millicores(32000), MiB(131072), gpus, *cluster::ParseGpuModel("T4")};
}

PodSpec Pod(const std::string& name, int gpus, std::int32_t milli, std::int64_t created, std::int64_t deleted) {
  PodSpec p;
  p.name = name;
  p.cpu = Millicores(1000);
  p.memory = MiB(1024);
  p.num_gpu = gpus;
  p.gpu_milli = gpus > 0 ? milli : 0;
  p.creation_s = created;
  p.deletion_s = deleted;
  return p;
}

std::string Str(const std::vector<TraceReplayEvent>& events, const std::vector<PodSpec>& pods) {
  std::string s;
  for (const auto& e : events) {
    s += (e.kind == Kind::kCreate ? "+" : "-") + pods[e.pod].name + "@" + e.node + " ";
  }
  return s;
}

TEST(TraceReplayTest, DeparturesFreeCapacityBeforeArrivalsAtTheSameTime) {
  const std::vector<NodeSpec> nodes = {Node("n1", 1)};
  const std::vector<PodSpec> pods = {Pod("a", 1, 1000, 0, 10), Pod("b", 1, 1000, 5, 20),
                                     Pod("c", 1, 1000, 10, 30)};
  auto events = ReplayTrace(nodes, pods, {"bestfit", 0});
  ASSERT_TRUE(events.has_value()) << events.error().message();
  // b arrives while a holds the only GPU: unschedulable, and it never gets a delete event.
  EXPECT_EQ(Str(*events, pods), "+a@n1 +b@ -a@n1 +c@n1 -c@n1 ");
}

TEST(TraceReplayTest, APodThatLeavesNoLaterThanItArrivesIsPlacedThenFreedAfterItsPeers) {
  const std::vector<NodeSpec> nodes = {Node("n1", 1)};
  const std::vector<PodSpec> pods = {Pod("early", 1, 1000, 7, 3), Pod("peer", 1, 1000, 7, 9),
                                     Pod("next", 1, 1000, 8, 9)};
  auto events = ReplayTrace(nodes, pods, {"bestfit", 0});
  ASSERT_TRUE(events.has_value());
  // early holds the GPU while its peer arrives at 7, then leaves; next (t=8) finds it free.
  EXPECT_EQ(Str(*events, pods), "+early@n1 +peer@ -early@n1 +next@n1 -next@n1 ");
}

TEST(TraceReplayTest, SharedGpusAreFreedPerPodAndTiesGoToTheFirstNodeName) {
  // Listed out of name order: with equal scores the server's context prefers "n-a".
  const std::vector<NodeSpec> nodes = {Node("n-b", 2), Node("n-a", 2)};
  const std::vector<PodSpec> pods = {Pod("s1", 1, 600, 0, 100), Pod("s2", 1, 600, 1, 2),
                                     Pod("s3", 1, 400, 3, 100)};
  auto events = ReplayTrace(nodes, pods, {"bestfit", 0});
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 6u);
  EXPECT_EQ((*events)[0].node, "n-a");
  EXPECT_EQ((*events)[1].kind, Kind::kCreate);
  EXPECT_EQ((*events)[2].kind, Kind::kDelete);
  EXPECT_EQ((*events)[2].node, (*events)[1].node);
  // s3 (400) best-fits the 400 milli-GPU s1 left free on n-a.
  EXPECT_EQ((*events)[3].node, "n-a");

  PolicyContext c = NameOrderPolicyContext(nodes, {});
  EXPECT_EQ(c.tie_rank, (std::vector<std::uint32_t>{1, 0}));
  ASSERT_EQ(c.typical.size(), 1u);
}

TEST(TraceReplayTest, SeedancePolicyPlacesEveryPodOfAFittingTrace) {
  std::vector<NodeSpec> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(Node("n" + std::to_string(i), 1 + i % 4));
  std::vector<PodSpec> pods;
  for (int i = 0; i < 40; ++i) {
    pods.push_back(Pod("p" + std::to_string(i), 1 + i % 2, i % 3 == 0 ? 250 : 1000, i, i + 3));
  }
  for (auto& p : pods) {
    if (p.num_gpu > 1) p.gpu_milli = 1000;
  }
  auto events = ReplayTrace(nodes, pods, {"seedance", 0});
  ASSERT_TRUE(events.has_value());
  int creates = 0, deletes = 0;
  for (const auto& e : *events) {
    if (e.kind == Kind::kCreate) {
      ++creates;
      EXPECT_FALSE(e.node.empty()) << pods[e.pod].name;
    } else {
      ++deletes;
    }
  }
  EXPECT_EQ(creates, 40);
  EXPECT_EQ(deletes, 40);
}

TEST(TraceReplayTest, UnknownPolicyIsAnError) {
  auto events = ReplayTrace({Node("n1", 1)}, {Pod("a", 1, 1000, 0, 1)}, {"nope", 0});
  ASSERT_FALSE(events.has_value());
  EXPECT_NE(events.error().message().find("unknown placement policy 'nope'"), std::string::npos);
}

}  // namespace
}  // namespace seedance::sched
