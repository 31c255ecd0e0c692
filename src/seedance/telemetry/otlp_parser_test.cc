#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "seedance/telemetry/parse.h"

namespace seedance::telemetry {
namespace {

using ::testing::HasSubstr;

struct Parsed {
  std::vector<Sample> samples;
  ParseStats stats;
};

Parsed ParseOtlp(std::string_view text) {
  Parsed p;
  CollectingSink sink;
  ParseOptions opt;
  opt.source = "req.json";
  ParseOtlpJson(text, opt, sink, p.stats);
  p.samples = std::move(sink.samples);
  return p;
}

// Verbatim structure of opentelemetry-proto examples/metrics.json, trimmed (docs/PROTOCOLS.md 4).
constexpr std::string_view kOtlpExample = R"({"resourceMetrics":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"my.service"}}]},
 "scopeMetrics":[{"scope":{"name":"my.library","version":"1.0.0"},
  "metrics":[
   {"name":"my.counter","unit":"1","description":"I am a Counter",
    "sum":{"aggregationTemporality":1,"isMonotonic":true,"dataPoints":[{"asDouble":5,"startTimeUnixNano":"1544712660300000000","timeUnixNano":"1544712660300000000","attributes":[{"key":"my.counter.attr","value":{"stringValue":"some value"}}]}]}},
   {"name":"my.gauge","unit":"1","description":"I am a Gauge",
    "gauge":{"dataPoints":[{"asDouble":10,"timeUnixNano":"1544712660300000000","attributes":[{"key":"my.gauge.attr","value":{"stringValue":"some value"}}]}]}}]}]}]})";

TEST(OtlpParserTest, ParsesTheOpenTelemetryExample) {
  Parsed p = ParseOtlp(kOtlpExample);
  EXPECT_EQ(p.stats.rejected, 0u);
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(p.samples[0].metric, "my.counter");
  EXPECT_EQ(p.samples[0].type, MetricType::kCounter);
  EXPECT_EQ(p.samples[0].value, 5);
  EXPECT_EQ(p.samples[0].timestamp_ms, 1544712660300);
  EXPECT_EQ(p.samples[0].LabelValue("service.name"), "my.service");
  EXPECT_EQ(p.samples[0].LabelValue("my.counter.attr"), "some value");
  EXPECT_EQ(p.samples[1].metric, "my.gauge");
  EXPECT_EQ(p.samples[1].type, MetricType::kGauge);
  EXPECT_EQ(p.samples[1].value, 10);
}

// Constructed: GPU semantic conventions with k8s resource attributes, asInt as a string, a
// histogram with explicit bounds.
constexpr std::string_view kGpuRequest = R"({"resourceMetrics":[{"resource":{"attributes":[
  {"key":"k8s.node.name","value":{"stringValue":"gpu-node-3"}},
  {"key":"k8s.namespace.name","value":{"stringValue":"team-a"}},
  {"key":"k8s.pod.name","value":{"stringValue":"trainer-0"}}]},
 "scopeMetrics":[{"metrics":[
  {"name":"hw.gpu.utilization","unit":"1","gauge":{"dataPoints":[
    {"asDouble":0.75,"timeUnixNano":"1795910400000000000","attributes":[
      {"key":"hw.id","value":{"stringValue":"GPU-abc"}},{"key":"hw.model","value":{"stringValue":"NVIDIA H100 80GB HBM3"}}]}]}},
  {"name":"hw.gpu.memory.usage","unit":"By","sum":{"aggregationTemporality":2,"isMonotonic":false,"dataPoints":[
    {"asInt":"42949672960","timeUnixNano":1795910400000000000,"attributes":[{"key":"hw.id","value":{"stringValue":"GPU-abc"}}]}]}},
  {"name":"batch.latency","unit":"s","histogram":{"aggregationTemporality":2,"dataPoints":[
    {"count":"6","sum":1.5,"bucketCounts":["1","2","3"],"explicitBounds":[0.1,0.5],"timeUnixNano":"1795910400000000000"}]}}
 ]}]}]})";

TEST(OtlpParserTest, ParsesGpuMetricsAndHistograms) {
  Parsed p = ParseOtlp(kGpuRequest);
  EXPECT_EQ(p.stats.rejected, 0u);
  ASSERT_EQ(p.samples.size(), 7u);
  Entity e = p.samples[0].entity();
  EXPECT_EQ(e.gpu_uuid, "GPU-abc");
  EXPECT_EQ(e.hostname, "gpu-node-3");
  EXPECT_EQ(e.namespace_name, "team-a");
  EXPECT_EQ(e.pod, "trainer-0");
  EXPECT_EQ(p.samples[0].field().field, Field::kGpuUtil);
  EXPECT_EQ(p.samples[1].value, 42949672960.0);
  EXPECT_DOUBLE_EQ(p.samples[1].value * p.samples[1].field().scale, 40960.0);  // MiB
  EXPECT_EQ(p.samples[2].metric, "batch.latency_bucket");
  EXPECT_EQ(p.samples[2].LabelValue("le"), "0.1");
  EXPECT_EQ(p.samples[3].value, 3);  // cumulative
  EXPECT_EQ(p.samples[4].LabelValue("le"), "+Inf");
  EXPECT_EQ(p.samples[4].value, 6);
  EXPECT_EQ(p.samples[5].metric, "batch.latency_sum");
  EXPECT_EQ(p.samples[6].metric, "batch.latency_count");
}

TEST(OtlpParserTest, JsonLinesRejectPerLine) {
  std::string line1(kOtlpExample);
  std::erase(line1, '\n');  // one request per line
  std::string text = line1 + "\n{not json\n" + line1 + "\n";
  Parsed p = ParseOtlp(text);
  EXPECT_EQ(p.stats.lines, 3u);
  ASSERT_EQ(p.stats.rejected, 1u);
  EXPECT_EQ(p.stats.rejections[0].line, 2u);
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr("invalid JSON"));
  EXPECT_EQ(p.samples.size(), 4u);
  EXPECT_EQ(p.samples[3].line, 3u);
}

// Issue 40: nesting past core's kMaxJsonDepth is refused before a DOM is built, naming where; the
// other lines of a JSON Lines body are still read.
TEST(OtlpParserTest, DeepNestingIsRejectedNamingThePath) {
  std::string line1(kOtlpExample);
  std::erase(line1, '\n');
  const std::string deep = R"({"resourceMetrics":[{"resource":{"attributes":[{"key":"k","value":)" +
                           std::string(100'000, '[') + std::string(100'000, ']') + "}]}}]}";
  Parsed p = ParseOtlp(line1 + "\n" + deep + "\n" + line1 + "\n");
  ASSERT_EQ(p.stats.rejected, 1u);
  EXPECT_EQ(p.stats.rejections[0].line, 2u);
  EXPECT_THAT(p.stats.rejections[0].reason,
              HasSubstr("resourceMetrics[0].resource.attributes[0].value[0]"));
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr("JSON nests deeper than 64 levels"));
  EXPECT_EQ(p.samples.size(), 4u);
}

struct BadOtlp {
  const char* name;
  const char* metric_json;
  const char* reason;
};

class OtlpBadTest : public ::testing::TestWithParam<BadOtlp> {};

TEST_P(OtlpBadTest, RejectsWithPathAndReasonAndKeepsTheRest) {
  std::string doc = std::string(R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[)") +
                    GetParam().metric_json +
                    R"(,{"name":"ok","unit":"1","gauge":{"dataPoints":[{"asDouble":1,"timeUnixNano":"1000000"}]}}]}]}]})";
  Parsed p = ParseOtlp(doc);
  ASSERT_EQ(p.stats.rejected, 1u);
  EXPECT_THAT(p.stats.rejections[0].ToString(), HasSubstr("req.json:1: resourceMetrics[0]"));
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr(GetParam().reason));
  ASSERT_GE(p.samples.size(), 1u);
  EXPECT_EQ(p.samples.back().metric, "ok");
}

const BadOtlp kBadOtlp[] = {
    {"unknown_unit", R"({"name":"x","unit":"furlongs","gauge":{"dataPoints":[{"asDouble":1,"timeUnixNano":"1"}]}})",
     "unknown unit 'furlongs'"},
    {"no_time", R"({"name":"x","unit":"1","gauge":{"dataPoints":[{"asDouble":1}]}})", "timeUnixNano"},
    {"no_value", R"({"name":"x","unit":"1","gauge":{"dataPoints":[{"timeUnixNano":"1"}]}})",
     "without asDouble or asInt"},
    {"nan_counter",
     R"({"name":"x","unit":"1","sum":{"aggregationTemporality":2,"isMonotonic":true,"dataPoints":[{"asDouble":"NaN","timeUnixNano":"1"}]}})",
     "must be finite"},
    {"string_enum",
     R"({"name":"x","unit":"1","sum":{"aggregationTemporality":"AGGREGATION_TEMPORALITY_DELTA","dataPoints":[]}})",
     "integer enum"},
    {"bucket_mismatch",
     R"({"name":"h","unit":"s","histogram":{"dataPoints":[{"count":"3","bucketCounts":["1","2"],"explicitBounds":[0.1,0.5],"timeUnixNano":"1"}]}})",
     "expected explicitBounds + 1"},
    {"bad_int", R"({"name":"x","unit":"1","gauge":{"dataPoints":[{"asInt":"12k","timeUnixNano":"1"}]}})",
     "asInt"},
    {"backwards",
     R"({"name":"x","unit":"1","gauge":{"dataPoints":[{"asInt":1,"timeUnixNano":"5000000"},{"asInt":1,"timeUnixNano":"4000000"}]}})",
     "goes backwards"},
};

INSTANTIATE_TEST_SUITE_P(Cases, OtlpBadTest, ::testing::ValuesIn(kBadOtlp),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(OtlpParserTest, InvalidDocumentNamesTheLine) {
  Parsed p = ParseOtlp("{\n \"resourceMetrics\": [\n  {,}\n]}\n");
  ASSERT_EQ(p.stats.rejected, 1u);
  EXPECT_EQ(p.stats.rejections[0].line, 3u);
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr("invalid JSON"));
}

// otlp_fuzz found this: nlohmann::json throws out_of_range (not parse_error) for a number that
// overflows a double; it must be a rejection, not an escaping exception.
TEST(OtlpParserTest, HugeNumberIsARejection) {
  std::string doc = "6660000000000020000000000666666600066666.666E000066666666666666666606";
  Parsed p = ParseOtlp(doc);
  EXPECT_EQ(p.stats.rejected, 1u);
  EXPECT_TRUE(p.samples.empty());
  p = ParseOtlp(R"({"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":"x","unit":"1","gauge":{"dataPoints":[{"asDouble":1e999,"timeUnixNano":"1"}]}}]}]}]})");
  EXPECT_EQ(p.stats.rejected, 1u);
  EXPECT_TRUE(p.samples.empty());
}

}  // namespace
}  // namespace seedance::telemetry
