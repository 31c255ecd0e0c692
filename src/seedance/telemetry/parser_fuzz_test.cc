// Fuzz-style robustness test: random mutations of valid inputs must never crash, hang or trip a
// sanitizer (run it under the asan preset), and every line is either accepted or rejected.
#include <gtest/gtest.h>

#include <string>

#include "seedance/core/rng.h"
#include "seedance/telemetry/parse.h"
#include "seedance/telemetry/testing/exposition_generator.h"

namespace seedance::telemetry {
namespace {

class NullSink final : public SampleSink {
 public:
  void OnSample(const SampleView& s) override {
    ++count;
    // Touch every view so that ASan sees dangling ones.
    for (const LabelView& l : s.labels) bytes += l.name.size() + l.value.size();
    bytes += s.metric.size();
  }
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
};

std::string Mutate(const std::string& in, Rng& rng) {
  static constexpr std::string_view kTokens[] = {
      "\\", "\"", "{", "}", "=", ",", " ", "\n", "#", "NaN", "+Inf", "-", "e", "\\n", "\\x",
      "# TYPE a counter\n", "# EOF\n", "le=\"+Inf\"", "_bucket", "_count", "\r", std::string_view("\0", 1)};
  std::string s = in;
  int edits = 1 + static_cast<int>(rng.Uniform(8));
  for (int e = 0; e < edits && !s.empty(); ++e) {
    std::size_t pos = static_cast<std::size_t>(rng.Uniform(s.size()));
    switch (rng.Uniform(5)) {
      case 0:  // flip a byte
        s[pos] = static_cast<char>(rng.Uniform(256));
        break;
      case 1:  // delete a span
        s.erase(pos, static_cast<std::size_t>(rng.Uniform(16)));
        break;
      case 2:  // insert a token
        s.insert(pos, kTokens[rng.Uniform(std::size(kTokens))]);
        break;
      case 3: {  // duplicate a span
        std::string span = s.substr(pos, static_cast<std::size_t>(rng.Uniform(64)));
        s.insert(static_cast<std::size_t>(rng.Uniform(s.size())), span);
        break;
      }
      default:  // truncate
        s.resize(pos);
        break;
    }
  }
  return s;
}

constexpr std::string_view kSeeds[] = {
    "# HELP http_requests_total The total number of HTTP requests.\n# TYPE http_requests_total "
    "counter\nhttp_requests_total{method=\"post\",code=\"200\"} 1027 1395066363000\n"
    "msdos_file_access_time_seconds{path=\"C:\\\\DIR\\\\FILE.TXT\",error=\"Cannot find "
    "file:\\n\\\"FILE.TXT\\\"\"} 1.458255915e9\n# TYPE h histogram\nh_bucket{le=\"0.05\"} 24054\n"
    "h_bucket{le=\"+Inf\"} 144320\nh_sum 53423\nh_count 144320\n",
    "# TYPE c counter\n# UNIT c_seconds seconds\nc_total 4.2 # {trace_id=\"x\"} 0.6\n"
    "{\"my.metric\", \"a.b\"=\"v\"} 1 1605281325.5\n# EOF\n",
    "DCGM_FI_DEV_SM_CLOCK{gpu=\"0\", UUID=\"GPU-604ac76c\",container=\"\",namespace=\"\",pod=\"\"} "
    "139\nDCGM_FI_DEV_MEMORY_TEMP{gpu=\"0\",UUID=\"GPU-1\"} 9223372036854775794\n",
};

constexpr std::string_view kOtlpSeed =
    R"({"resourceMetrics":[{"resource":{"attributes":[{"key":"k8s.pod.name","value":{"stringValue":"p"}}]},"scopeMetrics":[{"metrics":[{"name":"hw.gpu.utilization","unit":"1","gauge":{"dataPoints":[{"asDouble":0.5,"timeUnixNano":"1795910400000000000","attributes":[{"key":"hw.id","value":{"stringValue":"GPU-1"}}]}]}},{"name":"h","unit":"s","histogram":{"dataPoints":[{"count":"3","sum":1,"bucketCounts":["1","2"],"explicitBounds":[0.5],"timeUnixNano":"1"}]}}]}]}]})";

TEST(ParserFuzzTest, MutatedExpositionsNeverCrash) {
  Rng rng(20261129);
  std::uint64_t total_samples = 0, total_rejected = 0;
  const InputFormat formats[] = {InputFormat::kPrometheus, InputFormat::kOpenMetrics,
                                 InputFormat::kDcgm};
  for (int iter = 0; iter < 3000; ++iter) {
    std::string seed(kSeeds[rng.Uniform(std::size(kSeeds))]);
    std::string input = Mutate(seed, rng);
    InputFormat f = formats[rng.Uniform(3)];
    NullSink sink;
    ParseStats stats;
    ParseOptions opt;
    ExpositionParser parser(f, opt, sink, stats);
    std::size_t chunk = 1 + static_cast<std::size_t>(rng.Uniform(64));
    for (std::size_t i = 0; i < input.size(); i += chunk) {
      parser.Feed(std::string_view(input).substr(i, chunk));
    }
    parser.Finish();
    EXPECT_EQ(stats.samples, sink.count);
    EXPECT_LE(stats.samples + stats.missing, stats.lines);
    total_samples += stats.samples;
    total_rejected += stats.rejected;
  }
  // The mutations must exercise both paths.
  EXPECT_GT(total_samples, 1000u);
  EXPECT_GT(total_rejected, 1000u);
}

TEST(ParserFuzzTest, MutatedOtlpNeverCrashes) {
  Rng rng(7);
  std::uint64_t total_samples = 0, total_rejected = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    std::string input = Mutate(std::string(kOtlpSeed), rng);
    NullSink sink;
    ParseStats stats;
    ParseOtlpJson(input, ParseOptions{}, sink, stats);
    EXPECT_EQ(stats.samples, sink.count);
    total_samples += stats.samples;
    total_rejected += stats.rejected;
  }
  EXPECT_GT(total_samples, 100u);
  EXPECT_GT(total_rejected, 100u);
}

TEST(ParserFuzzTest, MutatedGeneratedStreamNeverCrashes) {
  testing::StreamSpec spec;
  spec.nodes = 1;
  spec.duration_ms = 10 * spec.interval_ms;
  std::string stream;
  testing::GenerateDcgmStream(spec, [&](std::string_view s) { stream.append(s); });
  Rng rng(99);
  for (int iter = 0; iter < 200; ++iter) {
    std::string input = Mutate(stream, rng);
    NullSink sink;
    ParseStats stats;
    ParseText(InputFormat::kDcgm, input, ParseOptions{}, sink, stats);
    EXPECT_EQ(stats.samples, sink.count);
  }
}

}  // namespace
}  // namespace seedance::telemetry
