// Simulator-server parity (issue 14, must-show 2): the openb pod stream exactly as
// `bench packing` prepares it (sched::PrepareFgdWorkload), replayed through the extender's HTTP
// API a pod at a time (filter -> prioritize -> the highest score, as a kube-scheduler with only
// this extender's score -> bind), places every pod on the node the packing run places it. With
// server.extender_decide_at_filter (issue 40) the filter answers one node, which kube-scheduler
// takes without scoring (no prioritize): the same placements are required.
// The packing side is RunPacking's decision loop (policy from the same context, Rng(seed).Fork(1),
// Decide then Bind); RunPacking itself is run too and must place the same number of pods.
// Built twice: a 2,000-pod prefix (unit) and, with SEEDANCE_PARITY_FULL, the whole stream (slow).

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seedance/cluster/trace_loader.h"
#include "seedance/sched/packing_experiment.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/server/testing/extender_harness.h"

namespace seedance::server {
namespace {

using nlohmann::json;

#ifdef SEEDANCE_PARITY_FULL
constexpr std::size_t kPods = 0;  // all
#define PARITY_SUITE ExtenderParityFull
#else
constexpr std::size_t kPods = 2000;
#define PARITY_SUITE ExtenderParity
#endif

struct Trace {
  std::vector<cluster::NodeSpec> nodes;
  std::vector<cluster::PodSpec> pods;
};

const Trace& OpenbTrace() {
  static const Trace t = [] {
    const std::string dir = std::string(SEEDANCE_TEST_DATA_DIR) + "/openb/";
    Trace x;
    x.nodes = *cluster::LoadNodes(dir + "openb_node_list_gpu_node.csv");
    x.pods = *cluster::LoadPods(dir + "openb_pod_list_default.csv");
    return x;
  }();
  return t;
}

// The packing run's placements: node name per pod ("" = unschedulable).
std::vector<std::string> PackingPlacements(const std::vector<cluster::NodeSpec>& nodes,
                                           const sched::PackingWorkload& w, const std::string& policy_name,
                                           std::uint64_t seed) {
  sched::PolicyContext context{w.tie_rank, w.typical};
  auto policy = sched::MakePlacementPolicy(policy_name, context);
  EXPECT_TRUE(policy.has_value());
  cluster::ClusterState cluster(nodes);
  Rng rng = Rng(seed).Fork(1);
  std::vector<std::string> out;
  out.reserve(w.pods.size());
  for (const auto& pod : w.pods) {
    const sched::PlacementDecision d = (*policy)->Decide(cluster, pod, rng);
    if (d.placed()) {
      cluster.Bind(pod, d.node, d.gpus);
      out.push_back(nodes[d.node.value()].name);
    } else {
      out.push_back("");
    }
  }
  return out;
}

void ExpectParity(const std::string& policy_name, std::uint64_t seed, bool decide_at_filter = false) {
  const Trace& t = OpenbTrace();
  ASSERT_FALSE(t.nodes.empty());
  sched::PackingWorkload w = sched::PrepareFgdWorkload(t.nodes, t.pods, seed, 1.3);
  if (kPods != 0 && w.pods.size() > kPods) w.pods.resize(kPods);
  const std::vector<std::string> expected = PackingPlacements(t.nodes, w, policy_name, seed);
  auto run = sched::RunPacking(t.nodes, w, policy_name, seed, {});
  ASSERT_TRUE(run.has_value());
  std::int64_t expected_placed = 0;
  for (const auto& e : expected) expected_placed += e.empty() ? 0 : 1;
  ASSERT_EQ(run->pods_placed, expected_placed);

  ServerConfig config = ServerConfig::Defaults();
  config.placement_policy = policy_name;
  config.seed = seed;
  config.extender_decide_at_filter = decide_at_filter;
  ExtenderOptions options;
  options.context = sched::PolicyContext{w.tie_rank, w.typical};
  testing::ExtenderHarness h(config, options);
  json items = json::array();
  json names = json::array();
  for (const auto& n : t.nodes) {
    items.push_back(testing::NodeJson(n));
    names.push_back(n.name);
  }
  ASSERT_EQ(h.Post("/v1/nodes", json{{"items", items}}).first, 200);

  int mismatches = 0;
  for (std::size_t k = 0; k < w.pods.size() && mismatches < 5; ++k) {
    const std::string uid = "uid-" + std::to_string(k);
    const std::string pod_name = "p" + std::to_string(k);
    cluster::PodSpec spec = w.pods[k];
    spec.name = pod_name;
    const json pod = testing::PodJson(spec, "default", uid);
    auto [fc, f] = h.Post("/extender/filter", json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", names}});
    ASSERT_EQ(fc, 200) << f;
    std::string got;
    if (decide_at_filter) {
      // At most one node passes: kube-scheduler takes it as it is ("only one node after predicate").
      ASSERT_LE(f["NodeNames"].size(), 1u) << k << " " << f;
    }
    if (decide_at_filter && f["NodeNames"].size() == 1) {
      got = f["NodeNames"][0].get<std::string>();
      auto [bc, b] = h.Post("/extender/bind", json{{"PodName", pod_name}, {"PodNamespace", "default"}, {"PodUID", uid}, {"Node", got}});
      ASSERT_EQ(b["Error"], "") << k;
    } else if (!f["NodeNames"].empty()) {
      auto [pc, prio] = h.Post("/extender/prioritize", json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", f["NodeNames"]}});
      ASSERT_EQ(pc, 200);
      std::int64_t best = -1;
      for (const auto& hp : prio) {
        if (hp["Score"].get<std::int64_t>() > best) {
          best = hp["Score"].get<std::int64_t>();
          got = hp["Host"].get<std::string>();
        }
      }
      auto [bc, b] = h.Post("/extender/bind", json{{"PodName", pod_name}, {"PodNamespace", "default"}, {"PodUID", uid}, {"Node", got}});
      ASSERT_EQ(b["Error"], "") << k;
    }
    if (got != expected[k]) {
      ++mismatches;
      ADD_FAILURE() << policy_name << " seed " << seed << " pod " << k << " (" << w.pods[k].name << "): server placed on '"
                    << got << "', packing on '" << expected[k] << "'";
    }
  }
  EXPECT_EQ(mismatches, 0);
}

TEST(PARITY_SUITE, BestFit) { ExpectParity("bestfit", 42); }
TEST(PARITY_SUITE, Fgd) { ExpectParity("fgd", 42); }
TEST(PARITY_SUITE, BestFitDecidedAtFilter) { ExpectParity("bestfit", 42, /*decide_at_filter=*/true); }
TEST(PARITY_SUITE, FgdDecidedAtFilter) { ExpectParity("fgd", 42, /*decide_at_filter=*/true); }
#ifdef SEEDANCE_PARITY_FULL
TEST(PARITY_SUITE, FgdOtherSeed) { ExpectParity("fgd", 7); }
#endif

}  // namespace
}  // namespace seedance::server
