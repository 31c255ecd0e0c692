// Scheduler speed: one scheduling step (NextBatch + ApplyStep) with 256 running sequences, and
// a whole replay of the Azure conversation trace per policy.
#include <benchmark/benchmark.h>

#include <memory>

#include "seedance/batching/benchmark.h"
#include "seedance/batching/replay.h"

namespace seedance::batching {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;

class ZeroExecutor : public Executor {
 public:
  StepCost Step(const BatchShape&) const override { return StepCost{0.02, 0.5, 0.5}; }
};

struct Engine {
  explicit Engine(const std::string& policy) : records(256) {
    PolicySettings s;
    s.engine.kv_bytes_per_token = 1;
    s.engine.kv_capacity_bytes = 256.0 * 4096 * 2;
    s.engine.max_context = 4096;
    sched = std::move(MakeScheduler(policy, s, &exec, &records)).value();
    for (std::uint32_t i = 0; i < 256; ++i) {
      Request r;
      r.id = i;
      r.prompt = 64;
      r.output = 4000;
      r.qos = static_cast<QosClass>(i % 3);
      r.tenant = static_cast<std::uint16_t>(i % 4);
      sched->Admit(r, 0);
    }
    // Warm up until every sequence decodes.
    for (int i = 0; i < 64; ++i) Step();
  }
  void Step() {
    if (!sched->NextBatch(now, &batch)) return;
    now += 0.02;
    sched->ApplyStep(batch, now, StepCost{0.02, 0.5, 0.5});
  }
  ZeroExecutor exec;
  std::vector<RequestRecord> records;
  std::unique_ptr<Scheduler> sched;
  Batch batch;
  double now = 0;
};

void BM_SchedulingStep256(benchmark::State& state, const std::string& policy) {
  auto engine = std::make_unique<Engine>(policy);
  int steps = 0;
  for (auto _ : state) {
    if (++steps == 3000) {  // sequences near their end: start over outside the timing
      state.PauseTiming();
      engine = std::make_unique<Engine>(policy);
      steps = 0;
      state.ResumeTiming();
    }
    engine->Step();
    benchmark::DoNotOptimize(engine->batch.items.size());
  }
  state.counters["running"] = static_cast<double>(engine->batch.items.size());
}
BENCHMARK_CAPTURE(BM_SchedulingStep256, vllm, std::string("vllm"));
BENCHMARK_CAPTURE(BM_SchedulingStep256, seedance, std::string("seedance"));

void BM_ReplayConversationTrace(benchmark::State& state, const std::string& policy) {
  auto gpu = FindGpu("a100");
  auto model = FindModel("llama-2-7b");
  auto exec = std::move(ProfiledExecutor::Load(kData, *gpu, *model, Precision::kFp16)).value();
  const Trace trace = std::move(LoadAzureTrace(kData + "/azure_llm/AzureLLMInferenceTrace_conv.csv")).value();
  PolicySettings s;
  s.engine.kv_capacity_bytes = gpu->memory_bytes * 0.9 - WeightBytes(*model, exec->precision());
  s.engine.kv_bytes_per_token = KvBytesPerToken(*model);
  s.engine.max_context = model->max_context;
  std::int64_t steps = 0;
  for (auto _ : state) {
    std::vector<RequestRecord> records(trace.requests.size());
    auto sched = std::move(MakeScheduler(policy, s, exec.get(), &records)).value();
    ReplayOptions o;
    o.noise = DefaultStepNoise();  // as `seedance batching` runs it
    o.noise.seed = 42;
    auto r = Replay(trace, *sched, *exec, records, o);
    steps = r->steps;
    benchmark::DoNotOptimize(r->goodput_rps);
  }
  state.counters["steps"] = static_cast<double>(steps);
  state.counters["requests"] = static_cast<double>(trace.requests.size());
}
BENCHMARK_CAPTURE(BM_ReplayConversationTrace, static, std::string("static"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReplayConversationTrace, static_bucketed, std::string("static-bucketed"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReplayConversationTrace, triton, std::string("triton"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReplayConversationTrace, vllm, std::string("vllm"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReplayConversationTrace, seedance, std::string("seedance"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ReplayConversationTrace, seedance_kvtiers, std::string("seedance-kvtiers"))->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace seedance::batching

BENCHMARK_MAIN();
