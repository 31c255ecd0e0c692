// The fleet history generator (issue 38): self-consistent (no node over its GPUs at any time, every
// pod on a node of its type, submit <= start), shaped (gangs, services that scale, notebooks with
// idle stretches, queueing) and deterministic for a seed.
#include "seedance/telemetry/fleet_history.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include <fmt/format.h>

namespace seedance::telemetry {
namespace {

FleetHistorySpec SmallFleet() {
  FleetHistorySpec spec;
  const auto pool = NumberedPool;
  spec.pools = {pool("h100", "H100", "NVIDIA H100 80GB HBM3", 6, true, false),
                pool("a100", "A100-80G", "NVIDIA A100-SXM4-80GB", 3, true, false),
                pool("h100-spot", "H100", "NVIDIA H100 80GB HBM3", 2, false, true),
                pool("l4", "L4", "NVIDIA L4", 2, false, false)};
  spec.pools[2].labels = {{"karpenter.sh/capacity-type", "spot"}};
  spec.duration_ms = 12 * 3'600'000;
  spec.interval_ms = 300'000;
  spec.load = 1.2;
  spec.seed = 5;
  return spec;
}

TEST(FleetHistoryTest, NoNodeOverItsGpusAndEveryPodOnItsType) {
  const FleetHistorySpec spec = SmallFleet();
  auto h = GenerateFleetHistory(spec);
  ASSERT_TRUE(h.has_value()) << h.error().message();
  std::map<std::string, const FleetHistoryPool*> pool_of;
  for (const FleetHistoryPool& p : spec.pools) {
    for (const std::string& n : p.nodes) pool_of[n] = &p;
  }
  // node -> time -> GPUs in use (changes), and per GPU no two holders at once.
  std::map<std::string, std::map<std::int64_t, int>> use;
  std::map<std::pair<std::string, int>, std::vector<std::pair<std::int64_t, std::int64_t>>> held;
  for (const FleetWorkload& w : h->rows) {
    for (const FleetPod& p : w.pods) {
      ASSERT_TRUE(pool_of.count(p.node)) << p.name;
      EXPECT_EQ(pool_of[p.node]->gpu_type, w.gpu_type) << p.name;
      EXPECT_EQ(static_cast<int>(p.gpus.size()), w.gpus_per_pod) << p.name;
      EXPECT_LE(p.created_ms, p.start_ms) << p.name;
      EXPECT_LT(p.start_ms, p.end_ms) << p.name;
      EXPECT_EQ(p.start_ms % spec.interval_ms, 0) << p.name;
      if (pool_of[p.node]->spot) {
        EXPECT_TRUE(w.kind == "batch" && w.tolerates_spot) << p.name;
      }
      use[p.node][p.start_ms] += static_cast<int>(p.gpus.size());
      use[p.node][p.end_ms] -= static_cast<int>(p.gpus.size());
      for (int g : p.gpus) held[{p.node, g}].emplace_back(p.start_ms, p.end_ms);
    }
  }
  for (const auto& [node, changes] : use) {
    int n = 0;
    for (const auto& [t, d] : changes) {
      n += d;
      EXPECT_LE(n, pool_of[node]->gpus_per_node) << node << " at " << t;
    }
  }
  for (auto& [gpu, spans] : held) {
    std::sort(spans.begin(), spans.end());
    for (std::size_t i = 1; i < spans.size(); ++i) EXPECT_LE(spans[i - 1].second, spans[i].first) << gpu.first;
  }
}

TEST(FleetHistoryTest, GangsServicesNotebooksAndQueueing) {
  const FleetHistorySpec spec = SmallFleet();
  auto h = GenerateFleetHistory(spec);
  ASSERT_TRUE(h.has_value());
  const FleetHistoryStats s = FleetHistoryStatsOf(spec, *h);
  EXPECT_GT(s.gangs, 0);
  EXPECT_EQ(s.deployments, 3);
  EXPECT_GT(s.notebooks, 0);
  EXPECT_GT(s.max_queue_ms, 30 * 60'000);  // load 1.2: work waits
  std::set<int> replicas_seen;
  bool idle_notebook = false, on_spot = false;
  for (const FleetWorkload& w : h->rows) {
    if (w.kind == "batch" && w.pods.size() >= 2) {
      EXPECT_EQ(w.owner_kind, "PyTorchJob");
      EXPECT_EQ(w.row_name(), "PyTorchJob/" + w.owner);
      for (const FleetPod& p : w.pods) EXPECT_EQ(p.start_ms, w.pods[0].start_ms);  // all at once
    }
    if (w.kind == "notebook") {
      std::int64_t busy = 0;
      for (const auto& [a, b] : w.pods[0].busy) busy += b - a;
      idle_notebook = idle_notebook || busy < w.pods[0].end_ms - w.pods[0].start_ms;
    }
    for (const FleetPod& p : w.pods) on_spot = on_spot || p.node.rfind("h100-spot", 0) == 0;
  }
  EXPECT_TRUE(idle_notebook);
  EXPECT_TRUE(on_spot);
  // A deployment's replicas change over the day: some replica ends before the window does.
  bool scaled_down = false;
  for (const FleetWorkload& w : h->rows) {
    scaled_down = scaled_down || (w.kind == "service" && w.end_ms() < spec.start_ms + spec.duration_ms);
  }
  EXPECT_TRUE(scaled_down);
}

TEST(FleetHistoryTest, DeterministicForASeed) {
  FleetHistorySpec spec = SmallFleet();
  spec.duration_ms = 2 * 3'600'000;
  const auto text = [&](const FleetHistorySpec& sp) {
    auto h = GenerateFleetHistory(sp);
    std::string out;
    WriteFleetHistoryExposition(sp, *h, [&](std::string_view c) { out += c; });
    return out + FleetHistoryTruthCsv(sp, *h);
  };
  const std::string a = text(spec);
  EXPECT_EQ(a, text(spec));
  spec.seed = 6;
  EXPECT_NE(a, text(spec));
  EXPECT_NE(a.find("kube_pod_owner{namespace=\""), std::string::npos);
  EXPECT_NE(a.find("label_karpenter_sh_capacity_type=\"spot\""), std::string::npos);
  EXPECT_FALSE(GenerateFleetHistory(FleetHistorySpec{}).has_value());  // no pools
}

}  // namespace
}  // namespace seedance::telemetry
