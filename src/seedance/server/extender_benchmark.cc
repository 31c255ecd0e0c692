// Decision time of the extender (no HTTP): filter + prioritize of one 1-GPU pod over 1,000
// 8-GPU nodes (a third partly used), with and without the JSON codec (parse the request bodies,
// encode the responses).
//   build/ci/src/seedance/server/extender_benchmark --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <string>

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
  Fixture() {
    app.now_ms = [] { return std::int64_t{0}; };
    core = std::make_unique<Extender>(app);
    std::vector<K8sNode> nodes;
    for (int i = 0; i < 1000; ++i) {
      K8sNode n;
      n.name = "node-" + std::to_string(i);
      n.spec.name = n.name;
      n.spec.cpu = MilliCpu::FromRaw(96'000);
      n.spec.memory = Mebibytes::FromRaw(512 * 1024);
      n.spec.gpu_count = 8;
      n.spec.model = *cluster::ParseGpuModel("A100-80G");
      nodes.push_back(n);
      names.push_back(n.name);
    }
    (void)core->UpsertNodes(nodes);
    std::vector<K8sPod> pods;
    for (int i = 0; i < 1000; i += 3) {
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

Fixture& F() {
  static Fixture* f = new Fixture();
  return *f;
}

void BM_FilterPrioritize1000Nodes(benchmark::State& state) {
  Fixture& f = F();
  ExtenderArgs args = *ParseExtenderArgs(json{{"Pod", f.pod}, {"NodeNames", f.names}}.dump());
  for (auto _ : state) {
    FilterResult r = f.core->Filter(args);
    ExtenderArgs p = args;
    p.node_names = r.node_names;
    benchmark::DoNotOptimize(f.core->Prioritize(p));
  }
}
BENCHMARK(BM_FilterPrioritize1000Nodes)->Unit(benchmark::kMicrosecond);

void BM_FilterPrioritize1000NodesWithCodec(benchmark::State& state) {
  Fixture& f = F();
  const std::string body = json{{"Pod", f.pod}, {"NodeNames", f.names}}.dump();
  for (auto _ : state) {
    ExtenderArgs args = *ParseExtenderArgs(body);
    const std::string filtered = EncodeFilterResult(f.core->Filter(args)).dump();
    const json fr = json::parse(filtered);
    const std::string pbody = json{{"Pod", f.pod}, {"NodeNames", fr["NodeNames"]}}.dump();
    ExtenderArgs pargs = *ParseExtenderArgs(pbody);
    benchmark::DoNotOptimize(EncodeHostPriorityList(f.core->Prioritize(pargs)).dump());
  }
}
BENCHMARK(BM_FilterPrioritize1000NodesWithCodec)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace seedance::server

BENCHMARK_MAIN();
