// Decision time of the extender (no HTTP): filter + prioritize of one 1-GPU pod over a cluster of
// 8-GPU nodes (a third partly used), with and without the JSON codec (parse the request bodies,
// encode the responses). Arguments: nodes in the cluster, node names per request, and whether the
// nodes are watch-fed (1: every node carries the conditions the cluster watch brings, Ready=True
// and a PreferNoSchedule taint on every tenth; 0: POST /v1/nodes without status). kube-scheduler
// sends an extender the feasible nodes it found, at most numFeasibleNodesToFind(N) of them
// (k8s.io/kubernetes pkg/scheduler/schedule_one.go: with percentageOfNodesToScore unset,
// max(100, N x max(5, 50 - N/125) / 100); 500 of 5,000); percentageOfNodesToScore: 100 sends all N.
//   build/ci/src/seedance/server/extender_benchmark --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "seedance/cluster/gpu_model.h"
#include "seedance/server/extender.h"

namespace seedance::server {
namespace {

using nlohmann::json;

struct Fixture {
  App app;
  std::unique_ptr<Extender> core;
  json names = json::array();
  json pod;
  Fixture(int node_count, bool watch_fed) {
    app.now_ms = [] { return std::int64_t{0}; };
    core = std::make_unique<Extender>(app);
    std::vector<K8sNode> nodes;
    for (int i = 0; i < node_count; ++i) {
      K8sNode n;
      n.name = "node-" + std::to_string(i);
      n.spec.name = n.name;
      n.spec.cpu = MilliCpu::FromRaw(96'000);
      n.spec.memory = Mebibytes::FromRaw(512 * 1024);
      n.spec.gpu_count = 8;
      n.spec.model = *cluster::ParseGpuModel("A100-80G");
      if (watch_fed) {
        n.conditions.ready = "True";
        if (i % 10 == 0) n.conditions.taints.push_back({"example.com/spot", "true", "PreferNoSchedule"});
      }
      nodes.push_back(n);
      names.push_back(n.name);
    }
    (void)core->UpsertNodes(nodes);
    std::vector<K8sPod> pods;
    for (int i = 0; i < node_count; i += 3) {
      K8sPod p = *ParsePod(json{{"metadata", {{"name", "fill-" + std::to_string(i)}}},
                                {"spec", {{"nodeName", "node-" + std::to_string(i)},
                                          {"containers", {{{"resources", {{"requests", {{"nvidia.com/gpu", "3"}}}}}}}}}}},
                           "");
      pods.push_back(p);
    }
    (void)core->UpsertPods(pods);
    pod = {{"metadata", {{"name", "p"}, {"namespace", "ml"}, {"uid", "u"}}},
           {"spec", {{"containers", {{{"resources", {{"requests", {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", "1"}}}}}}}}}}};
  }
};

Fixture& F(int node_count, bool watch_fed = false) {
  static auto* fixtures = new std::map<std::pair<int, bool>, std::unique_ptr<Fixture>>();
  auto& f = (*fixtures)[{node_count, watch_fed}];
  if (!f) f = std::make_unique<Fixture>(node_count, watch_fed);
  return *f;
}

// The first `count` node names from a rotating start, as kube-scheduler's nextStartNodeIndex does.
json Names(const Fixture& f, int count, int start) {
  json out = json::array();
  for (int i = 0; i < count; ++i) out.push_back(f.names[(static_cast<std::size_t>(start) + static_cast<std::size_t>(i)) % f.names.size()]);
  return out;
}

// The shapes both decision benchmarks run: (nodes, names per request, watch-fed nodes with conditions).
void DecisionShapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"nodes", "names", "watch"})
      ->Args({1000, 1000, 0})
      ->Args({5000, 500, 0})
      ->Args({5000, 5000, 0})
      ->Args({5000, 500, 1})
      ->Args({5000, 5000, 1})
      ->Unit(benchmark::kMicrosecond);
}

void BM_FilterPrioritize(benchmark::State& state) {
  Fixture& f = F(static_cast<int>(state.range(0)), state.range(2) != 0);
  ExtenderArgs args =
      *ParseExtenderArgs(json{{"Pod", f.pod}, {"NodeNames", Names(f, static_cast<int>(state.range(1)), 0)}}.dump());
  for (auto _ : state) {
    FilterResult r = f.core->Filter(args);
    ExtenderArgs p = args;
    p.node_names = r.node_names;
    benchmark::DoNotOptimize(f.core->Prioritize(p));
  }
}
BENCHMARK(BM_FilterPrioritize)->Apply(DecisionShapes);

void BM_FilterPrioritizeWithCodec(benchmark::State& state) {
  Fixture& f = F(static_cast<int>(state.range(0)), state.range(2) != 0);
  const std::string body =
      json{{"Pod", f.pod}, {"NodeNames", Names(f, static_cast<int>(state.range(1)), 0)}}.dump();
  for (auto _ : state) {
    ExtenderArgs args = *ParseExtenderArgs(body);
    const std::string filtered = DumpFilterResult(f.core->Filter(args));
    const json fr = json::parse(filtered);
    const std::string pbody = json{{"Pod", f.pod}, {"NodeNames", fr["NodeNames"]}}.dump();
    ExtenderArgs pargs = *ParseExtenderArgs(pbody);
    benchmark::DoNotOptimize(DumpHostPriorityList(f.core->Prioritize(pargs)));
  }
}
BENCHMARK(BM_FilterPrioritizeWithCodec)->Apply(DecisionShapes);

// What `seedance server` does per pair of requests of scripts/bench-server.sh (bench/server/
// extender.lua), HTTP aside: a filter and a prioritize of the same body (a 1-GPU pod and the
// names), each parsed, decided and answered in the JSON text sent back.
void BM_ServedPair(benchmark::State& state) {
  Fixture& f = F(static_cast<int>(state.range(0)), state.range(2) != 0);
  const std::string body =
      json{{"Pod", f.pod}, {"NodeNames", Names(f, static_cast<int>(state.range(1)), 0)}}.dump();
  for (auto _ : state) {
    auto filter = ParseExtenderArgs(body);
    benchmark::DoNotOptimize(DumpFilterResult(f.core->Filter(std::move(*filter))));
    auto prioritize = ParseExtenderArgs(body);
    benchmark::DoNotOptimize(DumpHostPriorityList(f.core->Prioritize(std::move(*prioritize))));
  }
}
BENCHMARK(BM_ServedPair)->Apply(DecisionShapes);

// The codec's floor, no decision: what a filter and a prioritize cost in parsing their bodies
// and writing answers of every name (the filter passes all, prioritize scores all), per pair.
void BM_CodecOnly(benchmark::State& state) {
  Fixture& f = F(static_cast<int>(state.range(0)));
  const std::string body =
      json{{"Pod", f.pod}, {"NodeNames", Names(f, static_cast<int>(state.range(1)), 0)}}.dump();
  for (auto _ : state) {
    ExtenderArgs args = *ParseExtenderArgs(body);
    FilterResult fr;
    fr.node_names = *args.node_names;
    benchmark::DoNotOptimize(DumpFilterResult(fr));
    ExtenderArgs pargs = *ParseExtenderArgs(body);
    std::vector<HostPriority> scores;
    scores.reserve(pargs.node_names->size());
    for (const auto& n : *pargs.node_names) scores.push_back(HostPriority{n, 5});
    benchmark::DoNotOptimize(DumpHostPriorityList(scores));
  }
}
BENCHMARK(BM_CodecOnly)
    ->ArgNames({"nodes", "names"})
    ->Args({5000, 500})
    ->Args({5000, 5000})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace seedance::server

BENCHMARK_MAIN();
