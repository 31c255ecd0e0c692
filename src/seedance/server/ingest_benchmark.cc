// OTLP ingest through the HTTP path in-process (issue 14: >= 200,000 samples/s on 2 cores):
// `threads` clients post OTLP/HTTP JSON requests of `points` gauge points each to the telemetry
// part on a loopback port; every answer comes after the ledger commit (WAL, synchronous=FULL).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/server/app.h"
#include "seedance/server/ingest.h"
#include "seedance/server/telemetry_service.h"

namespace seedance::server {
namespace {

// CPU seconds used by the whole process (server and clients), to report samples per CPU-second:
// on a loaded shared machine wall-clock rates understate what two idle cores do.
double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

using Json = nlohmann::json;

// One request: `series` GPU series x `per_series` points, distinct times per request.
std::string OtlpBody(int request, int series, int per_series) {
  Json metrics = Json::array();
  Json points = Json::array();
  for (int s = 0; s < series; ++s) {
    for (int k = 0; k < per_series; ++k) {
      std::int64_t t_ms = 1'795'950'000'000 + (static_cast<std::int64_t>(request) * per_series + k) * 1000;
      points.push_back({{"timeUnixNano", std::to_string(t_ms * 1'000'000)},
                        {"asDouble", 0.5},
                        {"attributes", Json::array({{{"key", "gpu"}, {"value", {{"stringValue", std::to_string(s)}}}},
                                                    {{"key", "UUID"}, {"value", {{"stringValue", "GPU-" + std::to_string(s)}}}}})}});
    }
  }
  metrics.push_back({{"name", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"}, {"unit", "1"}, {"gauge", {{"dataPoints", points}}}});
  return Json{{"resourceMetrics",
               Json::array({{{"resource", {{"attributes", Json::array({{{"key", "host.name"}, {"value", {{"stringValue", "n1"}}}}})}}},
                             {"scopeMetrics", Json::array({{{"metrics", metrics}}})}}})}}
      .dump();
}

void BM_OtlpIngestHttp(benchmark::State& state) {
  const int clients = static_cast<int>(state.range(0));
  const int series = 64, per_series = 40;  // 2,560 points a request
  auto dir = std::filesystem::temp_directory_path() / ("seedance-ingest-bench-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  App app;
  app.options.db = (dir / "ledger.db").string();
  app.now_ms = [] { return std::int64_t{1'795'960'000'000}; };
  TelemetryServiceOptions o;
  o.background = false;
  auto service = MakeTelemetryService(app, o);
  if (!service->Start().ok()) {
    state.SkipWithError("cannot open the ledger");
    return;
  }
  httplib::Server http;
  service->Register(http);
  int port = http.bind_to_any_port("127.0.0.1");
  std::thread server([&http] { http.listen_after_bind(); });
  while (!http.is_running()) std::this_thread::yield();

  // Bodies prepared up front: the benchmark measures the server, not the client's JSON.
  constexpr int kBodies = 64;
  std::vector<std::string> bodies;
  std::atomic<int> next{0};
  std::int64_t samples = 0;
  double cpu_s = 0;
  for (auto _ : state) {
    state.PauseTiming();
    bodies.clear();
    int base = next.fetch_add(kBodies);
    for (int i = 0; i < kBodies; ++i) bodies.push_back(OtlpBody(base + i, series, per_series));
    std::atomic<int> cursor{0}, errors{0};
    state.ResumeTiming();
    const double cpu0 = ProcessCpuSeconds();
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&] {
        httplib::Client cli("127.0.0.1", port);
        cli.set_keep_alive(true);
        for (int i; (i = cursor.fetch_add(1)) < kBodies;) {
          auto r = cli.Post("/v1/metrics", bodies[static_cast<std::size_t>(i)], "application/json");
          if (!r || r->status != 200) errors.fetch_add(1);
        }
      });
    }
    for (auto& t : threads) t.join();
    cpu_s += ProcessCpuSeconds() - cpu0;
    if (errors.load() > 0) state.SkipWithError("ingest answered errors");
    samples += static_cast<std::int64_t>(kBodies) * series * per_series;
  }
  state.SetItemsProcessed(samples);
  state.counters["samples_per_s"] = benchmark::Counter(static_cast<double>(samples), benchmark::Counter::kIsRate);
  state.counters["samples_per_cpu_s"] = cpu_s > 0 ? static_cast<double>(samples) / cpu_s : 0;
  http.stop();
  server.join();
  service->Stop();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_OtlpIngestHttp)->Arg(1)->Arg(4)->Arg(8)->UseRealTime()->Unit(benchmark::kMillisecond);

// The two halves of the path alone: parsing one request into a batch, and committing batches.
void BM_OtlpParseOnly(benchmark::State& state) {
  std::string body = OtlpBody(0, 64, 40);
  telemetry::ParseOptions po;
  for (auto _ : state) {
    SampleBatch batch;
    telemetry::ParseStats stats;
    telemetry::ParseOtlpJson(body, po, batch, stats);
    benchmark::DoNotOptimize(batch.size());
  }
  state.SetItemsProcessed(state.iterations() * 64 * 40);
}
BENCHMARK(BM_OtlpParseOnly)->Unit(benchmark::kMillisecond);

void BM_LedgerCommitOnly(benchmark::State& state) {
  auto dir = std::filesystem::temp_directory_path() / ("seedance-commit-bench-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto writer = IngestWriter::Open({.db = (dir / "ledger.db").string()});
  if (!writer.has_value()) return state.SkipWithError("cannot open the ledger");
  int request = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto batch = std::make_shared<SampleBatch>();
    telemetry::ParseStats stats;
    telemetry::ParseOtlpJson(OtlpBody(request++, 64, 40), {}, *batch, stats);
    state.ResumeTiming();
    if (!(*writer)->Write("otlp", batch).ok()) state.SkipWithError("commit failed");
  }
  state.SetItemsProcessed(state.iterations() * 64 * 40);
  writer->reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_LedgerCommitOnly)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace seedance::server

BENCHMARK_MAIN();
