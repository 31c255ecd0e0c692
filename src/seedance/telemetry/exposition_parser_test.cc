#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>

#include "seedance/telemetry/parse.h"
#include "seedance/telemetry/testing/exposition_generator.h"

namespace seedance::telemetry {
namespace {

using ::testing::HasSubstr;

struct Parsed {
  std::vector<Sample> samples;
  ParseStats stats;
};

Parsed Parse(InputFormat format, std::string_view text, std::int64_t default_ts = kNoTimestamp) {
  Parsed p;
  CollectingSink sink;
  ParseOptions opt;
  opt.source = "t.prom";
  opt.default_timestamp_ms = default_ts;
  ParseText(format, text, opt, sink, p.stats);
  p.samples = std::move(sink.samples);
  return p;
}

std::string Reasons(const ParseStats& s) {
  std::string out;
  for (const auto& r : s.rejections) out += r.ToString() + "\n";
  return out;
}

// Issue 40: -2^63 is kNoTimestamp, the marker for "none": it was stored as the default (now).
TEST(ExpositionParserTest, TimestampOfMinusTwoToThe63IsRefusedNamingTheLine) {
  Parsed p = Parse(InputFormat::kPrometheus, "a 1 1000\nb 2 -9223372036854775808\nc 3 -9223372036854775807\n", 5000);
  EXPECT_EQ(p.stats.rejected, 1u) << Reasons(p.stats);
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(p.samples[0].metric, "a");
  EXPECT_EQ(p.samples[1].metric, "c");
  EXPECT_EQ(p.samples[1].timestamp_ms, -9223372036854775807);
  ASSERT_EQ(p.stats.rejections.size(), 1u);
  EXPECT_EQ(p.stats.rejections[0].line, 2u);
  EXPECT_THAT(Reasons(p.stats), HasSubstr("timestamp '-9223372036854775808' is out of range"));
}


// Verbatim from prometheus/docs exposition_formats.md (docs/PROTOCOLS.md 3.1).
constexpr std::string_view kPromExample = R"(# HELP http_requests_total The total number of HTTP requests.
# TYPE http_requests_total counter
http_requests_total{method="post",code="200"} 1027 1395066363000
msdos_file_access_time_seconds{path="C:\\DIR\\FILE.TXT",error="Cannot find file:\n\"FILE.TXT\""} 1.458255915e9
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{le="0.05"} 24054
http_request_duration_seconds_bucket{le="+Inf"} 144320
http_request_duration_seconds_sum 53423
http_request_duration_seconds_count 144320
)";

TEST(ExpositionParserTest, ParsesThePrometheusDocsExample) {
  Parsed p = Parse(InputFormat::kPrometheus, kPromExample);
  EXPECT_EQ(p.stats.rejected, 0u) << Reasons(p.stats);
  ASSERT_EQ(p.samples.size(), 6u);
  EXPECT_EQ(p.samples[0].metric, "http_requests_total");
  EXPECT_EQ(p.samples[0].type, MetricType::kCounter);
  EXPECT_EQ(p.samples[0].value, 1027);
  EXPECT_EQ(p.samples[0].timestamp_ms, 1395066363000);
  EXPECT_EQ(p.samples[0].LabelValue("code"), "200");
  EXPECT_EQ(p.samples[0].line, 3u);
  EXPECT_EQ(p.samples[1].LabelValue("path"), "C:\\DIR\\FILE.TXT");
  EXPECT_EQ(p.samples[1].LabelValue("error"), "Cannot find file:\n\"FILE.TXT\"");
  EXPECT_DOUBLE_EQ(p.samples[1].value, 1.458255915e9);
  EXPECT_EQ(p.samples[1].timestamp_ms, kNoTimestamp);
  EXPECT_EQ(p.samples[2].type, MetricType::kHistogram);
  EXPECT_EQ(p.samples[3].LabelValue("le"), "+Inf");
  EXPECT_EQ(p.samples[5].metric, "http_request_duration_seconds_count");
}

// Verbatim from the dcgm-exporter README and issues (docs/PROTOCOLS.md 2.2), plus the line constructed
// from the current template.
constexpr std::string_view kDcgmExample = R"(# HELP DCGM_FI_DEV_SM_CLOCK SM clock frequency (in MHz).
# TYPE DCGM_FI_DEV_SM_CLOCK gauge
DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52",container="",namespace="",pod=""} 139
DCGM_FI_DEV_MEMORY_TEMP{gpu="0", UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52",container="",namespace="",pod=""} 9223372036854775794
DCGM_FI_DEV_SM_CLOCK{gpu="0",UUID="GPU-55274b56-9033-f166-7723-77088b0ff94d",device="nvidia0",modelName="NVIDIA TITAN V",Hostname="dcgm-exporter-lcxpl",container="",namespace="",pod=""} 135
DCGM_FI_DEV_POWER_USAGE{gpu="1",UUID="GPU-55274b56-9033-f166-7723-77088b0ff94e",device="nvidia1",modelName="NVIDIA TITAN V",Hostname="dcgm-exporter-lcxpl",container="",namespace="",pod=""} 302.206000
DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="3",UUID="GPU-ab12",pci_bus_id="00000000:3B:00.0",device="nvidia3",modelName="NVIDIA H100 80GB HBM3",hostname="gpu-node-7",DCGM_FI_DRIVER_VERSION="550.54.15",container="trainer",namespace="team-a",pod="llm-ft-0"} 0.913421
)";

TEST(ExpositionParserTest, ParsesDcgmExporterOutputAndDropsBlankSentinels) {
  Parsed p = Parse(InputFormat::kDcgm, kDcgmExample, /*default_ts=*/1795910400000);
  EXPECT_EQ(p.stats.rejected, 0u) << Reasons(p.stats);
  EXPECT_EQ(p.stats.missing, 1u);  // MEMORY_TEMP 9223372036854775794 = DCGM_INT64_BLANK + 2
  ASSERT_EQ(p.samples.size(), 4u);
  EXPECT_EQ(p.samples[0].value, 139);
  EXPECT_EQ(p.samples[0].timestamp_ms, 1795910400000);
  EXPECT_EQ(p.samples[0].entity().gpu_uuid, "GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52");
  Entity old_host = p.samples[1].entity();
  EXPECT_EQ(old_host.hostname, "dcgm-exporter-lcxpl");
  EXPECT_EQ(old_host.model, "NVIDIA TITAN V");
  EXPECT_DOUBLE_EQ(p.samples[2].value, 302.206);
  Entity k8s = p.samples[3].entity();
  EXPECT_EQ(k8s.hostname, "gpu-node-7");
  EXPECT_EQ(k8s.pod, "llm-ft-0");
  EXPECT_EQ(k8s.namespace_name, "team-a");
  EXPECT_EQ(k8s.container, "trainer");
  EXPECT_EQ(CatalogModelName(k8s.model), "H100");
  EXPECT_EQ(p.samples[3].field().field, Field::kGrEngineActive);
}

// Constructed from the OpenMetrics 1.0 rules in docs/PROTOCOLS.md 3.2: counter family without
// _total, UNIT as a suffix, timestamps in seconds, an exemplar, # EOF.
constexpr std::string_view kOpenMetricsExample = R"(# TYPE acme_http_router_request_seconds summary
# UNIT acme_http_router_request_seconds seconds
# HELP acme_http_router_request_seconds Latency though all of ACME's HTTP request router.
acme_http_router_request_seconds_sum{path="/api/v1",method="GET"} 9036.32
acme_http_router_request_seconds_count{path="/api/v1",method="GET"} 807283.0
acme_http_router_request_seconds_created{path="/api/v1",method="GET"} 1605281325.0
# TYPE go_goroutines gauge
go_goroutines 69 1605281325.5
# TYPE process_cpu_seconds counter
# UNIT process_cpu_seconds seconds
# HELP process_cpu_seconds Total user and system CPU time spent in seconds.
process_cpu_seconds_total 4.20072246e+06 # {trace_id="KOO5S4vxi0o"} 0.67
# TYPE request_size_bytes histogram
request_size_bytes_bucket{le="0.5"} 2 1605281325
request_size_bytes_bucket{le="1.0"} 3 1605281325
request_size_bytes_bucket{le="+Inf"} 5 1605281325
request_size_bytes_count 5 1605281325
request_size_bytes_sum 12.0 1605281325
# EOF
)";

TEST(ExpositionParserTest, ParsesOpenMetrics) {
  Parsed p = Parse(InputFormat::kOpenMetrics, kOpenMetricsExample);
  EXPECT_EQ(p.stats.rejected, 0u) << Reasons(p.stats);
  ASSERT_EQ(p.samples.size(), 10u);
  EXPECT_EQ(p.samples[0].type, MetricType::kSummary);
  EXPECT_EQ(p.samples[3].metric, "go_goroutines");
  EXPECT_EQ(p.samples[3].timestamp_ms, 1605281325500);  // seconds, fractional
  EXPECT_EQ(p.samples[4].metric, "process_cpu_seconds_total");
  EXPECT_EQ(p.samples[4].type, MetricType::kCounter);
  EXPECT_EQ(p.samples[5].type, MetricType::kHistogram);
  EXPECT_EQ(p.samples[7].timestamp_ms, 1605281325000);
}

TEST(ExpositionParserTest, OpenMetricsNeedsEofAndNothingAfterIt) {
  Parsed p = Parse(InputFormat::kOpenMetrics, "a 1\n");
  EXPECT_EQ(p.samples.size(), 1u);
  ASSERT_EQ(p.stats.rejected, 1u);
  EXPECT_THAT(p.stats.rejections[0].ToString(), HasSubstr("does not end with '# EOF'"));
  p = Parse(InputFormat::kOpenMetrics, "a 1\n# EOF\nb 2\n");
  EXPECT_EQ(p.samples.size(), 1u);
  ASSERT_EQ(p.stats.rejected, 1u);
  EXPECT_EQ(p.stats.rejections[0].ToString(), "t.prom:3: content after '# EOF'");
}

TEST(ExpositionParserTest, AcceptsUtf8QuotedNamesAndTrailingComma) {
  Parsed p = Parse(InputFormat::kPrometheus,
                   "{\"my.dotted.metric\", \"error.message\"=\"Not Found\"} 1\nm{a=\"1\",} 2\n");
  EXPECT_EQ(p.stats.rejected, 0u) << Reasons(p.stats);
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(p.samples[0].metric, "my.dotted.metric");
  EXPECT_EQ(p.samples[0].LabelValue("error.message"), "Not Found");
  EXPECT_EQ(p.samples[1].LabelValue("a"), "1");
}

// Real exporters emit NaN and +Inf for counters and histogram counts; prometheus/common keeps them.
TEST(ExpositionParserTest, NonFiniteCountersAreKeptInTextFormat) {
  Parsed p = Parse(InputFormat::kPrometheus,
                   "# TYPE b_total counter\nb_total NaN\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} +Inf\n");
  EXPECT_EQ(p.stats.rejected, 0u) << Reasons(p.stats);
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_TRUE(std::isnan(p.samples[0].value));
  EXPECT_EQ(p.samples[1].value, INFINITY);
}

// A recorded stream concatenates scrapes: a family's HELP/TYPE coming back after other
// families starts its next scrape; back to back, or after the family's own samples, it is a
// duplicate (prometheus/common testTextParseError 12-14).
TEST(ExpositionParserTest, ConcatenatedScrapesMayRepeatMetadata) {
  const std::string scrape1 = "# HELP a x\n# TYPE a gauge\na 1 1000\n# TYPE b counter\nb 1 1000\nc 1 1000\n";
  const std::string scrape2 = "# HELP a x\n# TYPE a gauge\na 2 2000\n# TYPE b counter\nb 2 2000\nc 2 2000\n";
  Parsed p = Parse(InputFormat::kPrometheus, scrape1 + scrape2);
  EXPECT_EQ(p.stats.rejected, 0u) << Reasons(p.stats);
  EXPECT_EQ(p.samples.size(), 6u);
  p = Parse(InputFormat::kPrometheus, "# TYPE a gauge\na 1\n# TYPE a gauge\na 2\n");
  ASSERT_EQ(p.stats.rejected, 1u);
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr("TYPE"));
  EXPECT_EQ(p.stats.rejections[0].line, 3u);
  p = Parse(InputFormat::kPrometheus, "# HELP a one\n# HELP a two\na 1\n");
  ASSERT_EQ(p.stats.rejected, 1u);
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr("second HELP"));
}

TEST(ExpositionParserTest, OpenMetricsExemplarsAreCheckedAndDropped) {
  Parsed p = Parse(InputFormat::kOpenMetrics,
                   "# TYPE a counter\na_total{x=\"1\"} 3 # {id=\"abc\",x=\"2\"} 1 1.5\n# EOF\n");
  EXPECT_EQ(p.stats.rejected, 0u) << Reasons(p.stats);
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(p.samples[0].value, 3);
  ASSERT_EQ(p.samples[0].labels.size(), 1u);  // the exemplar's labels are not the sample's
  EXPECT_EQ(p.samples[0].LabelValue("x"), "1");
  p = Parse(InputFormat::kOpenMetrics, "# TYPE a gauge\na 1 # {id=\"abc\"} 1\n# EOF\n");
  ASSERT_EQ(p.stats.rejected, 1u);
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr("exemplar not allowed"));
}

TEST(ExpositionParserTest, ValuesFollowGoParseFloat) {
  Parsed p = Parse(InputFormat::kPrometheus, "a NaN\nb +Inf\nc -Inf\nd 1e-3\ne -0.5\n");
  EXPECT_EQ(p.stats.rejected, 0u) << Reasons(p.stats);
  ASSERT_EQ(p.samples.size(), 5u);
  EXPECT_TRUE(std::isnan(p.samples[0].value));
  EXPECT_EQ(p.samples[1].value, INFINITY);
  EXPECT_EQ(p.samples[2].value, -INFINITY);
  EXPECT_DOUBLE_EQ(p.samples[3].value, 0.001);
}

struct BadCase {
  const char* name;
  InputFormat format;
  const char* text;  // line 2 is the bad one; lines 1 and 3 are good
  const char* reason;
};

class BadLineTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadLineTest, RejectsTheLineWithFileLineAndReasonAndKeepsTheRest) {
  const BadCase& c = GetParam();
  Parsed p = Parse(c.format, c.text);
  ASSERT_EQ(p.stats.rejected, 1u) << Reasons(p.stats);
  EXPECT_EQ(p.stats.rejections[0].line, 2u) << Reasons(p.stats);
  EXPECT_THAT(p.stats.rejections[0].ToString(), HasSubstr("t.prom:2: "));
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr(c.reason));
  EXPECT_GE(p.samples.size(), 2u);
}

const BadCase kBadCases[] = {
    {"no_value", InputFormat::kPrometheus, "a 1\nb{x=\"1\"}\nc 3\n", "expected a space and a value"},
    {"bad_value", InputFormat::kPrometheus, "a 1\nb 12k\nc 3\n", "is not a number"},
    {"unterminated", InputFormat::kPrometheus, "a 1\nb{x=\"1} 2\nc 3\n", "unterminated"},
    {"bad_escape", InputFormat::kPrometheus, "a 1\nb{x=\"a\\tb\"} 2\nc 3\n", "bad escape '\\t'"},
    {"unquoted", InputFormat::kPrometheus, "a 1\nb{x=1} 2\nc 3\n", "must be in double quotes"},
    {"dup_label", InputFormat::kPrometheus, "a 1\nb{x=\"1\",x=\"2\"} 2\nc 3\n", "duplicate label"},
    {"missing_eq", InputFormat::kPrometheus, "a 1\nb{x \"1\"} 2\nc 3\n", "expected '='"},
    {"garbage", InputFormat::kPrometheus, "a 1\nb 2 3 4\nc 3\n", "unexpected text"},
    {"bad_name", InputFormat::kPrometheus, "a 1\n9b 2\nc 3\n", "expected a metric name"},
    {"float_ts_in_prom", InputFormat::kPrometheus, "a 1\nb 2 1.5\nc 3\n", "not an integer"},
    {"nan_ts_in_om", InputFormat::kOpenMetrics, "a 1\nb 2 NaN\nc 3\n# EOF\n", "not a finite number"},
    {"nan_counter_in_om", InputFormat::kOpenMetrics, "# TYPE b counter\nb_total NaN\nb_total 1\nc 3\n# EOF\n",
     "count must be finite"},
    {"negative_counter", InputFormat::kPrometheus, "# TYPE b_total counter\nb_total -1\nb_total 1\nc 3\n",
     "count must be finite"},
    {"inf_in_dcgm", InputFormat::kDcgm, "a 1\nDCGM_FI_DEV_GPU_TEMP +Inf\nc 3\n", "values are finite"},
    {"ts_backwards", InputFormat::kPrometheus, "a 1 2000\na 2 1000\na 3 3000\n", "goes backwards"},
    {"unknown_type", InputFormat::kPrometheus, "a 1\n# TYPE b histogramm\nc 3\n", "unknown metric type"},
    {"type_change", InputFormat::kPrometheus, "# TYPE a gauge\n# TYPE a counter\na 3\nb 4\n",
     "TYPE changes 'a' from gauge to counter"},
    {"unknown_unit", InputFormat::kOpenMetrics, "a 1\n# UNIT b_furlongs furlongs\nc 3\n# EOF\n",
     "unknown unit 'furlongs'"},
    {"unit_not_suffix", InputFormat::kOpenMetrics, "a 1\n# UNIT b_total seconds\nc 3\n# EOF\n",
     "not a suffix"},
    {"help_escape", InputFormat::kPrometheus, "a 1\n# HELP b bad \\q escape\nc 3\n", "bad escape '\\q' in HELP"},
    {"le_decreasing", InputFormat::kPrometheus,
     "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_count 1\nh_bucket{le=\"1\"} 1\n"
     "h_bucket{le=\"0.5\"} 1\nh_bucket{le=\"+Inf\"} 1\n",
     "does not increase"},
    {"count_mismatch", InputFormat::kPrometheus,
     "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 4\nh_count 5\nx 1\n", "differs from the le=\"+Inf\" bucket"},
};

// The le_decreasing case rejects line 6, not 2: checked separately below.
INSTANTIATE_TEST_SUITE_P(Cases, BadLineTest,
                         ::testing::ValuesIn(std::begin(kBadCases), std::end(kBadCases) - 2),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(ExpositionParserTest, HistogramOrderChecks) {
  const BadCase& le = kBadCases[std::size(kBadCases) - 2];
  Parsed p = Parse(le.format, le.text);
  ASSERT_EQ(p.stats.rejected, 1u) << Reasons(p.stats);
  EXPECT_EQ(p.stats.rejections[0].line, 6u);
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr(le.reason));
  const BadCase& count = kBadCases[std::size(kBadCases) - 1];
  p = Parse(count.format, count.text);
  ASSERT_EQ(p.stats.rejected, 1u) << Reasons(p.stats);
  EXPECT_EQ(p.stats.rejections[0].line, 3u);
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr(count.reason));
  EXPECT_EQ(p.samples.size(), 2u);  // the bucket and x
  p = Parse(InputFormat::kOpenMetrics, "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\n# EOF\n");
  ASSERT_GE(p.stats.rejected, 1u);  // at h_count, and again at the family's end
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr("without a le=\"+Inf\" bucket"));
}

TEST(ExpositionParserTest, ChunkBoundariesDoNotMatter) {
  std::string text(kPromExample);
  Parsed whole = Parse(InputFormat::kPrometheus, text);
  for (std::size_t chunk = 1; chunk < 40; chunk += 3) {
    CollectingSink sink;
    ParseStats stats;
    ParseOptions opt;
    ExpositionParser parser(InputFormat::kPrometheus, opt, sink, stats);
    for (std::size_t i = 0; i < text.size(); i += chunk) {
      parser.Feed(std::string_view(text).substr(i, chunk));
    }
    parser.Finish();
    ASSERT_EQ(sink.samples.size(), whole.samples.size()) << "chunk " << chunk;
    for (std::size_t i = 0; i < sink.samples.size(); ++i) {
      EXPECT_EQ(SeriesKey(sink.samples[i]), SeriesKey(whole.samples[i]));
      EXPECT_EQ(sink.samples[i].line, whole.samples[i].line);
    }
  }
}

// The text format ends every line with a line feed (prometheus/common rejects a last line
// without one: it may be a cut-off sample such as "b 2" of "b 20").
TEST(ExpositionParserTest, LastLineWithoutNewlineIsRejected) {
  Parsed p = Parse(InputFormat::kPrometheus, "a 1\nb 2");
  EXPECT_EQ(p.samples.size(), 1u);
  ASSERT_EQ(p.stats.rejected, 1u);
  EXPECT_THAT(p.stats.rejections[0].reason, HasSubstr("no line feed"));
  p = Parse(InputFormat::kPrometheus, "a 1\n\t");  // trailing blanks are not a line
  EXPECT_EQ(p.stats.rejected, 0u);
}

// A generated 24-hour, 64-GPU dcgm-exporter recording (8 nodes x 8 GPUs, one scrape a minute).
class CountingSink final : public SampleSink {
 public:
  void OnSample(const SampleView& s) override {
    ++count;
    EntityView e = IdentifyEntity(s.labels);
    uuids.insert(std::string(e.gpu_uuid));
    if (!e.pod.empty()) pods.insert(std::string(e.pod));
    min_ts = std::min(min_ts, s.timestamp_ms);
    max_ts = std::max(max_ts, s.timestamp_ms);
  }
  std::int64_t count = 0;
  std::set<std::string> uuids;
  std::set<std::string> pods;
  std::int64_t min_ts = INT64_MAX;
  std::int64_t max_ts = INT64_MIN;
};

TEST(ExpositionParserTest, ParsesAGenerated24HourStreamOf64Gpus) {
  testing::StreamSpec spec;  // 8 x 8 GPUs, 24 h, 60 s
  CountingSink sink;
  ParseStats stats;
  ParseOptions opt;
  opt.source = "stream.prom";
  ExpositionParser parser(InputFormat::kDcgm, opt, sink, stats);
  std::int64_t scrapes = 0;
  testing::GenerateDcgmStream(spec, [&](std::string_view text) {
    parser.Feed(text);
    ++scrapes;
  });
  parser.Finish();
  EXPECT_EQ(scrapes, 1440);
  EXPECT_EQ(stats.rejected, 0u) << Reasons(stats);
  EXPECT_EQ(sink.count, 1440 * testing::SamplesPerScrape(spec));
  EXPECT_EQ(sink.uuids.size(), 64u);
  EXPECT_GT(sink.pods.size(), 64u);
  EXPECT_EQ(sink.min_ts, spec.start_ms);
  EXPECT_EQ(sink.max_ts, spec.start_ms + spec.duration_ms - spec.interval_ms);
}

}  // namespace
}  // namespace seedance::telemetry
