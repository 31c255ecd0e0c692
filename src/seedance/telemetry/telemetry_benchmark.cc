// Parser throughput: samples per second on one core (items_per_second in the output).
#include <benchmark/benchmark.h>

#include <string>

#include "seedance/telemetry/parse.h"
#include "seedance/telemetry/testing/exposition_generator.h"

namespace seedance::telemetry {
namespace {

class CountSink final : public SampleSink {
 public:
  void OnSample(const SampleView& s) override {
    ++count;
    sum += s.value;
  }
  std::int64_t count = 0;
  double sum = 0;
};

std::string Stream(bool timestamps) {
  testing::StreamSpec spec;  // 64 GPUs
  spec.duration_ms = 2LL * 3600 * 1000;  // 120 scrapes, 38,400 samples
  spec.timestamps = timestamps;
  std::string out;
  testing::GenerateDcgmStream(spec, [&](std::string_view s) { out.append(s); });
  return out;
}

void RunParse(benchmark::State& state, InputFormat format, bool timestamps) {
  std::string text = Stream(timestamps);
  std::int64_t samples = 0;
  for (auto _ : state) {
    CountSink sink;
    ParseStats stats;
    ExpositionParser parser(format, ParseOptions{}, sink, stats);
    parser.Feed(text);
    parser.Finish();
    benchmark::DoNotOptimize(sink.sum);
    samples += sink.count;
  }
  state.SetItemsProcessed(samples);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(text.size()));
}

// dcgm-exporter lines (~250 bytes, 9 labels) with millisecond timestamps (so the per-series
// "goes backwards" check runs on every sample).
void BM_ParsePrometheusText(benchmark::State& state) {
  RunParse(state, InputFormat::kPrometheus, true);
}
BENCHMARK(BM_ParsePrometheusText)->Unit(benchmark::kMillisecond);

void BM_ParseDcgmNoTimestamps(benchmark::State& state) {
  RunParse(state, InputFormat::kDcgm, false);
}
BENCHMARK(BM_ParseDcgmNoTimestamps)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace seedance::telemetry

BENCHMARK_MAIN();
