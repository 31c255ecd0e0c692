// Prometheus source: chunk planning under the 11,000-point limit, the matrix reader, and the HTTP
// client against a loopback server standing in for Prometheus's API (auth headers, error bodies).
#include "seedance/prometheus/source.h"

#include <unistd.h>

#include <httplib.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <set>
#include <thread>

#include "seedance/core/testing/require_peer.h"

namespace seedance::prometheus {
namespace {

TEST(PlanChunksTest, EveryEvaluationTimeOnceAndUnderTheLimit) {
  const std::int64_t step = 60'000, from = 1'795'910'400'000;
  for (std::int64_t minutes : {1, 2, 10, 10'999, 11'000, 11'001, 30'000}) {
    auto chunks = PlanChunks(from, from + minutes * step, step, kMaxPointsPerSeries);
    ASSERT_TRUE(chunks.has_value()) << chunks.error().message();
    std::int64_t expect = from;
    for (const Chunk& c : *chunks) {
      EXPECT_EQ(c.start_ms, expect);
      const std::int64_t points = (c.end_ms - c.start_ms) / step + 1;
      EXPECT_LE(points, kMaxPointsPerSeries);
      EXPECT_GE(points, 1);
      expect = c.end_ms + step;
    }
    EXPECT_EQ(expect, from + minutes * step) << minutes;  // the last time is < to, and every one is there
    EXPECT_EQ(chunks->size(), static_cast<std::size_t>((minutes + kMaxPointsPerSeries - 1) / kMaxPointsPerSeries));
  }
  // `to` is exclusive: a range that is not a whole number of steps still ends before it.
  auto odd = PlanChunks(0, 150'000, step, 2);
  ASSERT_TRUE(odd.has_value());
  ASSERT_EQ(odd->size(), 2u);
  EXPECT_EQ((*odd)[0].end_ms, 60'000);
  EXPECT_EQ((*odd)[1].start_ms, 120'000);
  EXPECT_EQ((*odd)[1].end_ms, 120'000);
}

TEST(PlanChunksTest, BadArgumentsNameTheFlag) {
  EXPECT_NE(PlanChunks(10, 10, 1, 5).error().message().find("--from/--to"), std::string::npos);
  EXPECT_NE(PlanChunks(0, 10, 0, 5).error().message().find("--step"), std::string::npos);
  EXPECT_NE(PlanChunks(0, 10, 1, 11'001).error().message().find("--chunk-points"), std::string::npos);
  EXPECT_NE(PlanChunks(0, 10, 1, 0).error().message().find("--chunk-points"), std::string::npos);
}

TEST(ParseMatrixTest, NamesLabelsValuesAndTimes) {
  const std::string body = R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","UUID":"GPU-1","pod":"p","instance":"x:9400"},
     "values":[[1795910400,"42"],[1795910460.5,"NaN"],[1795910520,"+Inf"]]},
    {"metric":{"pod":"nameless"},"values":[[1795910400,"1"]]},
    {"metric":{"__name__":"m"},"values":[[1795910400,7],["x","1"],[1795910400,"3"]]}]}})";
  telemetry::CollectingSink sink;
  MatrixStats stats;
  ASSERT_TRUE(ParseMatrix(body, "q", sink, stats).ok());
  ASSERT_EQ(sink.samples.size(), 4u);
  EXPECT_EQ(stats.series, 2u);
  EXPECT_EQ(stats.samples, 4u);
  EXPECT_EQ(stats.dropped, 3u);  // the nameless series' point and two malformed points
  const telemetry::Sample& s = sink.samples[0];
  EXPECT_EQ(s.metric, "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(s.LabelValue("UUID"), "GPU-1");
  EXPECT_EQ(s.LabelValue("pod"), "p");
  EXPECT_EQ(s.LabelValue("__name__"), "");
  EXPECT_EQ(s.value, 42);
  EXPECT_EQ(s.timestamp_ms, 1'795'910'400'000);
  EXPECT_EQ(s.source, "q");
  EXPECT_EQ(sink.samples[1].timestamp_ms, 1'795'910'460'500);
  EXPECT_TRUE(std::isnan(sink.samples[1].value));
  EXPECT_TRUE(std::isinf(sink.samples[2].value));
  EXPECT_EQ(sink.samples[3].metric, "m");
  EXPECT_EQ(sink.samples[3].value, 3);
}

TEST(ParseMatrixTest, ErrorsNameTheQuery) {
  telemetry::CollectingSink sink;
  MatrixStats stats;
  Status s = ParseMatrix("<html>", "up", sink, stats);
  EXPECT_NE(s.message().find("query up: the answer is not JSON"), std::string::npos) << s.message();
  s = ParseMatrix(R"({"status":"error","errorType":"bad_data","error":"parse error"})", "up(", sink, stats);
  EXPECT_NE(s.message().find("query up(: status error: bad_data: parse error"), std::string::npos) << s.message();
  s = ParseMatrix(R"({"status":"success","data":{"resultType":"vector","result":[]}})", "up", sink, stats);
  EXPECT_NE(s.message().find("matrix"), std::string::npos) << s.message();
}

TEST(ParseMatrixTest, FieldsOfAnotherTypeAreAnErrorNotAThrow) {
  // json::value() threw type_error on these (the process ended); found writing prometheus_matrix_fuzz.
  telemetry::CollectingSink sink;
  MatrixStats stats;
  Status s = ParseMatrix(R"({"status":1})", "up", sink, stats);
  EXPECT_NE(s.message().find("query up: status ?: ?: "), std::string::npos) << s.message();
  s = ParseMatrix(R"({"status":"error","errorType":[],"error":{"x":1}})", "up", sink, stats);
  EXPECT_NE(s.message().find("query up: status error: ?: "), std::string::npos) << s.message();
  s = ParseMatrix(R"({"status":"success","data":{"resultType":7,"result":[]}})", "up", sink, stats);
  EXPECT_NE(s.message().find("data.resultType must be matrix"), std::string::npos) << s.message();
  EXPECT_EQ(stats.samples, 0u);
}

// A loopback stand-in for Prometheus's query_range: records what it was asked.
class FakePrometheus {
 public:
  FakePrometheus() {
    server_.Get("/prefix/api/v1/query_range", [this](const httplib::Request& q, httplib::Response& r) {
      std::lock_guard lock(mu_);
      auth_ = q.get_header_value("Authorization");
      const std::string query = q.get_param_value("query");
      calls_.push_back(query + "@" + q.get_param_value("start") + ".." + q.get_param_value("end") + "/" +
                       q.get_param_value("step"));
      if (query == "bad(") {
        r.status = 400;
        r.set_content(R"({"status":"error","errorType":"bad_data","error":"1:5: parse error: unclosed left parenthesis"})",
                      "application/json");
        return;
      }
      if (query == "overload") {
        r.status = 503;
        r.set_content("overloaded", "text/plain");
        return;
      }
      const double start = std::stod(q.get_param_value("start"));
      const double end = std::stod(q.get_param_value("end"));
      const double step = std::stod(q.get_param_value("step"));
      std::string values;
      for (double t = start; t <= end + 1e-9; t += step) {
        values += (values.empty() ? "" : ",") + fmt::format("[{},\"1\"]", t);
      }
      r.set_content(R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":")" + query +
                        R"(","gpu":"0"},"values":[)" + values + "]}]}}",
                    "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakePrometheus() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/prefix/"; }
  std::string auth() {
    std::lock_guard lock(mu_);
    return auth_;
  }
  std::vector<std::string> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::string auth_;
  std::vector<std::string> calls_;
};

TEST(ClientTest, PullsEveryQueryInChunksWithTheBearerToken) {
  FakePrometheus fake;
  SourceOptions o;
  o.url = fake.url();
  o.bearer_token = "s3cret";
  Client client(o);
  telemetry::CollectingSink sink;
  std::vector<PullProgress> progress;
  // 5 evaluation times (0, 60, ..., 240 s) in chunks of 2: 3 calls per query.
  auto r = Pull(client, {{"a", ""}, {"b", ""}}, 0, 300'000, 60'000, 2, sink,
                [&](const PullProgress& p) { progress.push_back(p); });
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(fake.auth(), "Bearer s3cret");
  EXPECT_EQ(fake.calls(), (std::vector<std::string>{"a@0.000..60.000/60.000", "a@120.000..180.000/60.000",
                                                   "a@240.000..240.000/60.000", "b@0.000..60.000/60.000",
                                                   "b@120.000..180.000/60.000", "b@240.000..240.000/60.000"}));
  EXPECT_EQ(r->total.samples, 10u);
  EXPECT_EQ(r->per_query[0].samples, 5u);
  EXPECT_EQ(sink.samples.size(), 10u);
  std::set<std::int64_t> times;
  for (const auto& s : sink.samples) times.insert(s.timestamp_ms);
  EXPECT_EQ(times, (std::set<std::int64_t>{0, 60'000, 120'000, 180'000, 240'000}));
  ASSERT_EQ(progress.size(), 6u);
  EXPECT_EQ(progress[5].query_index, 1u);
  EXPECT_EQ(progress[5].chunk_index, 2u);
  EXPECT_EQ(progress[5].chunks, 3u);
}

TEST(ClientTest, BasicAuthFromItsFile) {
  FakePrometheus fake;
  const std::string path = ::testing::TempDir() + "/basic_auth";
  std::ofstream(path) << "alice:pa:ss\n";
  SourceOptions o;
  o.url = fake.url();
  ASSERT_TRUE(ReadBasicAuthFile(path, o).ok());
  EXPECT_EQ(o.basic_user, "alice");
  EXPECT_EQ(o.basic_password, "pa:ss");
  telemetry::CollectingSink sink;
  MatrixStats stats;
  ASSERT_TRUE(Client(o).QueryRange("up", {0, 0}, 1000, sink, stats).ok());
  EXPECT_EQ(fake.auth(), "Basic YWxpY2U6cGE6c3M=");  // base64("alice:pa:ss")
}

TEST(ClientTest, ErrorsNameTheQueryTheStatusAndPrometheusError) {
  FakePrometheus fake;
  SourceOptions o;
  o.url = fake.url();
  Client client(o);
  telemetry::CollectingSink sink;
  MatrixStats stats;
  Status s = client.QueryRange("bad(", {0, 60'000}, 60'000, sink, stats);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("query bad( over [0.000, 60.000]"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("HTTP 400: bad_data: 1:5: parse error: unclosed left parenthesis"), std::string::npos)
      << s.message();
  s = client.QueryRange("overload", {0, 0}, 60'000, sink, stats);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("HTTP 503: overloaded"), std::string::npos) << s.message();
  // Nobody listens: a connection error naming the URL.
  o.url = "http://127.0.0.1:1";
  o.connect_timeout_s = 2;
  s = Client(o).QueryRange("up", {0, 0}, 1000, sink, stats);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("query up"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("http://127.0.0.1:1"), std::string::npos) << s.message();
  o.url = "ftp://x";
  s = Client(o).QueryRange("up", {0, 0}, 1000, sink, stats);
  EXPECT_NE(s.message().find("--prometheus: 'ftp://x' must start with http:// or https://"), std::string::npos);
}

// TLS: a server certificate signed by a test CA (openssl CLI) verifies with --ca-file, fails
// without it (the error says to pass --ca-file), and --insecure-skip-verify connects anyway.
TEST(ClientTest, TlsWithCaFileOrInsecure) {
  SEEDANCE_SKIP_WITHOUT_PEER(std::system("command -v openssl >/dev/null 2>&1") != 0) << "openssl CLI not on PATH";
  const std::string dir = ::testing::TempDir() + "/prometheus_tls_" + std::to_string(::getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir + " && cd " + dir +
                         " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1"
                         " -subj /CN=prom-test-ca -keyout ca.key -out ca.crt"
                         " && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1"
                         " -keyout tls.key -out tls.csr && printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext"
                         " && openssl x509 -req -days 1 -CA ca.crt -CAkey ca.key -CAcreateserial -in tls.csr"
                         " -extfile san.ext -out tls.crt >/dev/null 2>&1")
                            .c_str()),
            0);
  httplib::SSLServer server((dir + "/tls.crt").c_str(), (dir + "/tls.key").c_str());
  ASSERT_TRUE(server.is_valid());
  server.Get("/api/v1/query_range", [](const httplib::Request&, httplib::Response& r) {
    r.set_content(R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up"},"values":[[0,"1"]]}]}})",
                  "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  std::thread t([&] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  SourceOptions o;
  o.url = "https://127.0.0.1:" + std::to_string(port);
  telemetry::CollectingSink sink;
  MatrixStats stats;
  Status s = Client(o).QueryRange("up", {0, 0}, 1000, sink, stats);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("pass --ca-file"), std::string::npos) << s.message();
  o.ca_file = dir + "/ca.crt";
  s = Client(o).QueryRange("up", {0, 0}, 1000, sink, stats);
  EXPECT_TRUE(s.ok()) << s.message();
  o.ca_file.clear();
  o.insecure_skip_verify = true;
  s = Client(o).QueryRange("up", {0, 0}, 1000, sink, stats);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(sink.samples.size(), 2u);
  server.stop();
  t.join();
}

TEST(CredentialFilesTest, ErrorsNameTheFile) {
  const std::string dir = ::testing::TempDir();
  EXPECT_NE(ReadTokenFile(dir + "/none").error().message().find("--bearer-token-file " + dir + "/none: cannot open"),
            std::string::npos);
  std::ofstream(dir + "/empty_token") << "  \n";
  EXPECT_NE(ReadTokenFile(dir + "/empty_token").error().message().find("empty"), std::string::npos);
  std::ofstream(dir + "/token") << "abc\n";
  EXPECT_EQ(ReadTokenFile(dir + "/token").value(), "abc");
  std::ofstream(dir + "/basic") << "nocolon\n";
  SourceOptions o;
  EXPECT_NE(ReadBasicAuthFile(dir + "/basic", o).message().find("--basic-auth-file " + dir + "/basic:1: expected user:password"),
            std::string::npos);
}

// Issue 38: the history's shape needs kube-state-metrics' submit, owner and node-label series;
// `ingest --prometheus` pulls them by default.
TEST(DefaultQueriesTest, PullTheSeriesOfTheHistorysShape) {
  std::set<std::string> exprs;
  for (const Query& q : DefaultQueries()) exprs.insert(q.expr);
  for (const char* m : {"kube_pod_created", "kube_pod_owner", "kube_pod_labels", "kube_node_labels", "kube_pod_info",
                        "kube_replicaset_owner", "kube_deployment_spec_replicas", "kube_job_created",
                        "kube_pod_start_time", "kube_pod_completion_time"}) {
    EXPECT_TRUE(exprs.count(m)) << m;
  }
}

}  // namespace
}  // namespace seedance::prometheus
