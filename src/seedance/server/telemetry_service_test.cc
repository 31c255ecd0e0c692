// The telemetry part in-process: an httplib::Server on a loopback port with only this part's
// routes, driven by httplib::Client; the clock is injected.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "seedance/audit/synthetic.h"
#include "seedance/audit/telemetry_adapter.h"
#include "seedance/core/rng.h"
#include "seedance/ledger/ledger.h"
#include "seedance/server/app.h"
#include "seedance/server/telemetry_service.h"

namespace seedance::server {
namespace {

using Json = nlohmann::json;

constexpr std::int64_t kHour = 3'600'000;
constexpr std::int64_t kT0 = 1'795'950'000'000 / kHour * kHour;  // an hour start (2026-11-29)

// A loopback server on port 0 running `register_fn`'s routes.
class LoopbackServer {
 public:
  explicit LoopbackServer(const std::function<void(httplib::Server&)>& register_fn) {
    register_fn(http_);
    port_ = http_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { http_.listen_after_bind(); });
  }
  ~LoopbackServer() {
    // stop() before the accept loop runs would be lost: wait for it to start.
    while (!http_.is_running()) std::this_thread::yield();
    http_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  httplib::Server http_;
  int port_ = 0;
  std::thread thread_;
};

// dcgm-exporter text for `gpus` H100s of pod `pod` in namespace `ns` on node `host`, one scrape
// a minute for `minutes` minutes from `start_ms` (millisecond timestamps, 0.0.4).
std::string DcgmText(const std::string& host, const std::string& ns, const std::string& pod,
                     int gpus, std::int64_t start_ms, int minutes, double util) {
  std::string text;
  for (int m = 0; m < minutes; ++m) {
    std::int64_t ts = start_ms + m * 60'000;
    for (int g = 0; g < gpus; ++g) {
      std::string labels = fmt::format(
          R"({{gpu="{}",UUID="GPU-{}-{}",modelName="NVIDIA H100 80GB HBM3",Hostname="{}",pod="{}",namespace="{}",container="main"}})",
          g, host, g, host, pod, ns);
      text += fmt::format("DCGM_FI_PROF_GR_ENGINE_ACTIVE{} {} {}\n", labels, util, ts);
      text += fmt::format("DCGM_FI_DEV_FB_USED{} 10240 {}\n", labels, ts);
    }
  }
  return text;
}

std::string OtlpGauge(const std::string& name, std::int64_t t_ms, const std::vector<double>& values) {
  Json points = Json::array();
  for (std::size_t i = 0; i < values.size(); ++i) {
    points.push_back({{"timeUnixNano", std::to_string((t_ms + static_cast<std::int64_t>(i) * 1000) * 1'000'000)},
                      {"asDouble", values[i]},
                      {"attributes", Json::array({{{"key", "gpu"}, {"value", {{"stringValue", "0"}}}}})}});
  }
  Json doc = {{"resourceMetrics",
               Json::array({{{"resource", {{"attributes", Json::array({{{"key", "host.name"}, {"value", {{"stringValue", "n1"}}}}})}}},
                             {"scopeMetrics",
                              Json::array({{{"metrics", Json::array({{{"name", name}, {"unit", "1"},
                                                                      {"gauge", {{"dataPoints", points}}}}})}}})}}})}};
  return doc.dump();
}

class TelemetryServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("seedance-telemetry-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "ledger.db").string();
  }
  void TearDown() override {
    StopService();
    std::filesystem::remove_all(dir_);
  }

  void StartService(ServerConfig config = ServerConfig::Defaults(), std::int64_t max_pages = 0,
                    bool background = false) {
    app_.options.db = db_;
    app_.now_ms = [this] { return now_.load(); };
    app_.config.Set(std::make_shared<ServerConfig>(std::move(config)));
    TelemetryServiceOptions o;
    o.busy_timeout_ms = 200;
    o.background = background;
    o.max_db_pages = max_pages;
    service_ = MakeTelemetryService(app_, o);
    Status s = service_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    server_ = std::make_unique<LoopbackServer>([this](httplib::Server& h) { service_->Register(h); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(60);
  }
  void StopService() {
    client_.reset();
    server_.reset();
    if (service_ != nullptr) service_->Stop();
    service_.reset();
  }

  httplib::Result Post(const std::string& path, const std::string& body, const std::string& ct) {
    return client_->Post(path.c_str(), body, ct.c_str());
  }
  Json PostJson(const std::string& path, const std::string& body, int want_status,
                const std::string& ct = "application/json") {
    auto r = Post(path, body, ct);
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    EXPECT_EQ(r->status, want_status) << path << ": " << r->body;
    return Json::parse(r->body, nullptr, false);
  }
  Json GetJson(const std::string& path, int want_status) {
    auto r = client_->Get(path.c_str());
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    EXPECT_EQ(r->status, want_status) << path << ": " << r->body;
    return Json::parse(r->body, nullptr, false);
  }
  std::int64_t CountSamples() {
    auto l = ledger::Ledger::Open(db_);
    EXPECT_TRUE(l.has_value());
    auto n = (*l)->CountSamples();
    return n.has_value() ? *n : -1;
  }

  std::filesystem::path dir_;
  std::string db_;
  std::atomic<std::int64_t> now_{kT0 + 2 * kHour + 10 * 60'000};
  App app_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<LoopbackServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

// ---- ingest ---------------------------------------------------------------------------------

TEST_F(TelemetryServiceTest, OtlpIsCommittedBeforeTheAnswer) {
  StartService();
  Json r = PostJson("/v1/metrics", OtlpGauge("hw.gpu.utilization", kT0, {0.5, 0.6, 0.7}), 200);
  EXPECT_EQ(r, Json::object());
  EXPECT_EQ(CountSamples(), 3);  // another connection sees them: committed
  EXPECT_EQ(app_.metrics.Value("seedance_ingest_samples_total", {{"format", "otlp"}}), 3);
  EXPECT_DOUBLE_EQ(app_.metrics.Value("seedance_ledger_lag_seconds", {}),
                   static_cast<double>(now_.load() - (kT0 + 2000)) / 1000.0);
}

TEST_F(TelemetryServiceTest, OtlpProtobufIs415) {
  StartService();
  Json r = PostJson("/v1/metrics", "\x0a\x00", 415, "application/x-protobuf");
  EXPECT_EQ(r["field"], "Content-Type");
  EXPECT_NE(r["error"].get<std::string>().find("only OTLP/HTTP JSON"), std::string::npos);
}

TEST_F(TelemetryServiceTest, MalformedOtlpIs400NamingTheField) {
  StartService();
  Json r = PostJson("/v1/metrics", "{\"resourceMetrics\": [", 400);
  EXPECT_EQ(r["field"], "body");
  Json doc = Json::parse(OtlpGauge("m", kT0, {1}));
  doc["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["gauge"]["dataPoints"][0].erase("timeUnixNano");
  r = PostJson("/v1/metrics", doc.dump(), 400);
  EXPECT_EQ(r["field"].get<std::string>().rfind("resourceMetrics[0].scopeMetrics[0].metrics[0]", 0), 0u) << r;
  doc["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["gauge"]["dataPoints"][0]["asDouble"] = "x";
  doc["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["gauge"]["dataPoints"][0]["timeUnixNano"] = "1";
  r = PostJson("/v1/metrics", doc.dump(), 400);
  EXPECT_NE(r["error"].get<std::string>().find("asDouble"), std::string::npos) << r;
  EXPECT_EQ(CountSamples(), 0);
}

TEST_F(TelemetryServiceTest, OtlpPartialSuccessCountsRejectedPoints) {
  StartService();
  Json doc = Json::parse(OtlpGauge("m", kT0, {1, 2}));
  doc["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["gauge"]["dataPoints"][1]["asDouble"] = "x";
  Json r = PostJson("/v1/metrics", doc.dump(), 200);
  EXPECT_EQ(r["partialSuccess"]["rejectedDataPoints"], "1") << r;
  EXPECT_NE(r["partialSuccess"]["errorMessage"].get<std::string>().find("asDouble"), std::string::npos);
  EXPECT_EQ(CountSamples(), 1);
}

TEST_F(TelemetryServiceTest, HugeLabelSetsAre400) {
  StartService();
  std::string labels;
  for (int i = 0; i < 70; ++i) labels += fmt::format("{}l{}=\"v\"", i == 0 ? "" : ",", i);
  Json r = PostJson("/v1/ingest/prom", "m{" + labels + "} 1 1000\n", 400, "text/plain; version=0.0.4");
  EXPECT_EQ(r["field"], "labels");
  EXPECT_NE(r["error"].get<std::string>().find("70 labels"), std::string::npos) << r;
  std::string big(17 * 1024, 'x');
  r = PostJson("/v1/ingest/prom", "m{a=\"" + big + "\"} 1 1000\n", 400, "text/plain");
  EXPECT_EQ(r["field"], "labels");
  EXPECT_EQ(CountSamples(), 0);
}

TEST_F(TelemetryServiceTest, PromTextAndOpenMetricsAreIngested) {
  StartService();
  // dcgm-exporter sends no timestamps: the server's clock stamps them.
  Json r = PostJson("/v1/ingest/prom",
                    "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-0\",Hostname=\"n1\"} 42\n"
                    "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-1\",Hostname=\"n1\"} 43\nbad{ 1\n",
                    200, "text/plain; version=0.0.4");
  EXPECT_EQ(r["format"], "dcgm");
  EXPECT_EQ(r["accepted"], 2);
  EXPECT_EQ(r["rejected"], 1);
  EXPECT_EQ(r["rejections"].size(), 1u);
  r = PostJson("/v1/ingest/prom", "# TYPE temp gauge\ntemp{room=\"a\"} 21.5 1795950000\n# EOF\n", 200,
               "application/openmetrics-text; version=1.0.0");
  EXPECT_EQ(r["format"], "openmetrics");
  EXPECT_EQ(r["accepted"], 1);
  r = PostJson("/v1/ingest/prom", "bad{ 1\n", 400, "text/plain");
  EXPECT_EQ(r["field"], "line 1");
  EXPECT_EQ(CountSamples(), 3);
}

TEST_F(TelemetryServiceTest, LockedLedgerIs503ThenRecovers) {
  StartService();
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  auto r = Post("/v1/metrics", OtlpGauge("m", kT0, {1}), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(r->get_header_value("Retry-After"), "5");
  EXPECT_NE(r->body.find("ledger locked"), std::string::npos) << r->body;
  ASSERT_EQ(sqlite3_exec(other, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  PostJson("/v1/metrics", OtlpGauge("m", kT0, {1}), 200);
  EXPECT_EQ(CountSamples(), 1);
}

TEST_F(TelemetryServiceTest, FullLedgerIs503AndNothingHalfWritten) {
  {
    auto l = ledger::Ledger::Open(db_);  // create the schema first
    ASSERT_TRUE(l.has_value());
  }
  sqlite3* probe = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &probe), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(probe, "PRAGMA page_count", -1, &st, nullptr);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  std::int64_t pages = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(probe);
  StartService(ServerConfig::Defaults(), pages + 4);
  std::vector<double> many(20'000, 1.0);
  auto r = Post("/v1/metrics", OtlpGauge("m", kT0, many), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
  EXPECT_NE(r->body.find("ledger full"), std::string::npos) << r->body;
  EXPECT_EQ(CountSamples(), 0);
  // A small request still fits: the server kept serving.
  PostJson("/v1/metrics", OtlpGauge("m", kT0, {1, 2}), 200);
  EXPECT_EQ(CountSamples(), 2);
}

// ---- breaker --------------------------------------------------------------------------------

TEST_F(TelemetryServiceTest, BreakerTripsOnIngestedCostAndResets) {
  ServerConfig c = ServerConfig::Defaults();
  c.breaker_namespaces["ml"] = Usd(5);   // 4 H100 x $2.99 = $11.96/h crosses
  c.breaker_namespaces["web"] = Usd(5);  // 1 H100 = $2.99/h does not
  c.breaker_cooldown_ms = 0;
  StartService(c);
  std::string text = DcgmText("n1", "ml", "train-0", 4, kT0 + kHour, 60, 0.2) +
                     DcgmText("n2", "web", "serve-0", 1, kT0 + kHour, 60, 0.9);
  Json r = PostJson("/v1/ingest/prom", text, 200, "text/plain");
  EXPECT_EQ(r["rejected"], 0) << r;
  r = PostJson("/v1/breaker/evaluate", "", 200);
  ASSERT_EQ(r["tripped"].size(), 1u) << r;
  EXPECT_EQ(r["tripped"][0]["key"], "ml");
  const std::string reason = r["tripped"][0]["reason"];
  EXPECT_EQ(reason.rfind("namespace ml: hourly cost $11.96 > threshold $5.00: 4 x NVIDIA H100 80GB HBM3, utilization 20%", 0), 0u)
      << reason;
  EXPECT_NE(reason.find("; suggestion: "), std::string::npos) << reason;

  auto trip = app_.breaker.Active("ml", "train-0", now_);
  ASSERT_TRUE(trip.has_value());
  EXPECT_EQ(trip->reason, reason);
  EXPECT_FALSE(app_.breaker.Active("web", "serve-0", now_).has_value());
  EXPECT_EQ(app_.metrics.Value("seedance_breaker_trips_total", {{"scope", "namespace"}}), 1);
  EXPECT_EQ(GetJson("/v1/breaker", 200)["trips"].size(), 1u);

  r = PostJson("/v1/breaker/reset", R"({"namespace":"ml"})", 200);
  EXPECT_EQ(r["cleared"], true);
  EXPECT_FALSE(app_.breaker.Active("ml", "train-0", now_).has_value());
  // The same hour does not trip it again; the next hour's crossing does.
  EXPECT_EQ(PostJson("/v1/breaker/evaluate", "", 200)["tripped"].size(), 0u);

  // Both events are in the ledger.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(db, "SELECT job, paused, finding FROM breaker_actions ORDER BY hour_ms", -1, &st, nullptr);
  std::vector<std::tuple<std::string, int, std::string>> rows;
  while (sqlite3_step(st) == SQLITE_ROW) {
    rows.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)), sqlite3_column_int(st, 1),
                      reinterpret_cast<const char*>(sqlite3_column_text(st, 2)));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], std::make_tuple(std::string("namespace:ml"), 1, reason));
  EXPECT_EQ(std::get<0>(rows[1]), "namespace:ml");
  EXPECT_EQ(std::get<1>(rows[1]), 0);
}

TEST_F(TelemetryServiceTest, BreakerCoolDownExpires) {
  ServerConfig c = ServerConfig::Defaults();
  c.breaker_default_hourly = Usd(1);
  c.breaker_cooldown_ms = 600'000;
  StartService(c);
  PostJson("/v1/ingest/prom", DcgmText("n1", "ml", "p", 1, kT0 + kHour, 60, 0.5), 200, "text/plain");
  PostJson("/v1/breaker/evaluate", "", 200);
  EXPECT_TRUE(app_.breaker.Active("ml", "", now_).has_value());
  EXPECT_FALSE(app_.breaker.Active("ml", "", now_ + 600'000).has_value());
}

TEST_F(TelemetryServiceTest, BreakerResetNeedsOneKey) {
  StartService();
  EXPECT_EQ(PostJson("/v1/breaker/reset", R"({"namespace":"a","job":"b"})", 400)["field"], "body");
  EXPECT_EQ(PostJson("/v1/breaker/reset", R"({"job":3})", 400)["field"], "job");
  EXPECT_EQ(PostJson("/v1/breaker/reset", "nope", 400)["field"], "body");
  EXPECT_EQ(PostJson("/v1/breaker/reset", R"({"job":"j"})", 200)["cleared"], false);
}

// ---- audit ----------------------------------------------------------------------------------

TEST_F(TelemetryServiceTest, AuditWritesVerdictsIntoTheHealthBoard) {
  StartService();
  // Three hours of synthetic dcgm-exporter telemetry: n-good is healthy, n-bad raises XID 79.
  const std::int64_t start_s = kT0 / 1000;
  Rng rng(7);
  std::string text;
  for (auto [host, fault] : {std::pair{"n-good", audit::SyntheticFault::kNone},
                             std::pair{"n-bad", audit::SyntheticFault::kXid}}) {
    audit::SyntheticNode node;
    node.host = host;
    node.gpus = 2;
    node.fault = fault;
    node.fault_start_s = start_s;
    text += audit::RenderDcgmExposition(audit::GenerateNodeTelemetry(node, start_s, start_s + 3 * 3600, 60, rng));
  }
  // Utilization alone is incomplete evidence: a node never graded keeps serving.
  PostJson("/v1/ingest/prom", DcgmText("n-new", "ml", "p", 1, kT0, 10, 0.5), 200, "text/plain");
  PostJson("/v1/ingest/prom", text, 200, "text/plain");
  now_ = kT0 + 3 * kHour;
  Json r = PostJson("/v1/audit/run", "", 200);
  auto good = app_.health.Get("n-good");
  ASSERT_TRUE(good.has_value()) << r;
  EXPECT_EQ(good->state, audit::AdmissionState::kAdmitted) << good->reason;
  EXPECT_GT(good->grade_weight, 0.0);
  auto fresh = app_.health.Get("n-new");
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(fresh->state, audit::AdmissionState::kAdmitted) << fresh->reason;
  auto bad = app_.health.Get("n-bad");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->state, audit::AdmissionState::kObservation);
  EXPECT_EQ(bad->reason.rfind("audit: node n-bad observation", 0), 0u) << bad->reason;
  EXPECT_NE(bad->reason.find("xid"), std::string::npos) << bad->reason;
  // The second failed audit removes it (removal_failures = 2).
  now_ += 300'000;
  PostJson("/v1/audit/run", "", 200);
  bad = app_.health.Get("n-bad");
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->state, audit::AdmissionState::kRemoved) << bad->reason;
  Json nodes = GetJson("/v1/audit", 200)["nodes"];
  EXPECT_EQ(nodes["n-bad"]["state"], "removed");
  EXPECT_EQ(nodes["n-good"]["state"], "admitted");
}

// ---- scrapes --------------------------------------------------------------------------------

TEST_F(TelemetryServiceTest, ScrapesADcgmEndpointAndAttributesIt) {
  std::string exposition = DcgmText("n7", "vision", "resnet-0", 2, kT0 + kHour, 30, 0.8);
  LoopbackServer exporter([&](httplib::Server& h) {
    h.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
      res.set_content(exposition, "text/plain; version=0.0.4");
    });
  });
  ServerConfig c = ServerConfig::Defaults();
  c.scrape.push_back({"dcgm-n7", exporter.url() + "/metrics", "exposition", "", 15'000});
  ASSERT_TRUE(service_ == nullptr);
  StartService(c);
  Json r = PostJson("/v1/scrape/run", R"({"target":"dcgm-n7"})", 200);
  EXPECT_EQ(r["accepted"], 120) << r;
  EXPECT_EQ(app_.metrics.Value("seedance_scrapes_total", {{"target", "dcgm-n7"}, {"result", "ok"}}), 1);
  r = GetJson("/v1/cost?by=namespace&from=" + std::to_string(kT0 / 1000) + "&to=" + std::to_string((kT0 + 2 * kHour) / 1000), 200);
  ASSERT_EQ(r["rows"].size(), 1u) << r;
  EXPECT_EQ(r["rows"][0]["key"], "vision");
  EXPECT_NEAR(r["rows"][0]["cost_usd"].get<double>(), 2.99, 0.01);  // 2 GPUs x 30 min x $2.99/h
  EXPECT_EQ(GetJson("/v1/cost?by=node", 200)["rows"][0]["key"], "n7");
  EXPECT_EQ(PostJson("/v1/scrape/run", R"({"target":"nope"})", 404)["field"], "target");
}

TEST_F(TelemetryServiceTest, ScrapesPrometheusQueryRange) {
  LoopbackServer prom([](httplib::Server& h) {
    h.Get("/api/v1/query_range", [](const httplib::Request& req, httplib::Response& res) {
      if (req.get_param_value("query") != "DCGM_FI_DEV_GPU_UTIL") {
        res.status = 400;
        return;
      }
      res.set_content(R"({"status":"success","data":{"resultType":"matrix","result":[
        {"metric":{"__name__":"DCGM_FI_DEV_GPU_UTIL","Hostname":"n1","UUID":"GPU-0","gpu":"0"},
         "values":[[1795950000,"40"],[1795950015,"NaN"],[1795950030,"+Inf"]]},
        {"metric":{"Hostname":"n2"},"values":[[1795950000.5,"1"]]}]}})",
                      "application/json");
    });
  });
  ServerConfig c = ServerConfig::Defaults();
  c.scrape.push_back({"prom", prom.url(), "prometheus", "DCGM_FI_DEV_GPU_UTIL", 15'000});
  StartService(c);
  Json r = PostJson("/v1/scrape/run", R"({"target":"prom"})", 200);
  EXPECT_EQ(r["accepted"], 4) << r;
  EXPECT_EQ(CountSamples(), 4);
}

TEST_F(TelemetryServiceTest, BackgroundScrapeLoopIngestsAndStopsCleanly) {
  std::atomic<int> scrapes{0};
  LoopbackServer exporter([&](httplib::Server& h) {
    h.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
      int n = scrapes.fetch_add(1);
      res.set_content(fmt::format("DCGM_FI_DEV_GPU_UTIL{{gpu=\"0\",UUID=\"GPU-0\",Hostname=\"n1\"}} {} {}\n",
                                  n, kT0 + n * 1000),
                      "text/plain; version=0.0.4");
    });
  });
  ServerConfig c = ServerConfig::Defaults();
  c.scrape.push_back({"loop", exporter.url() + "/metrics", "exposition", "", 20});
  StartService(c, 0, /*background=*/true);
  // Wait (bounded) for two scrapes to be committed; no timing is asserted.
  for (int i = 0; i < 1000 && app_.metrics.Value("seedance_ingest_samples_total", {{"format", "scrape"}}) < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(app_.metrics.Value("seedance_ingest_samples_total", {{"format", "scrape"}}), 2);
  StopService();
  EXPECT_GE(CountSamples(), 2);
}

TEST_F(TelemetryServiceTest, BadScrapeConfigIsRejectedNamingTheKey) {
  StartService();
  ServerConfig c = ServerConfig::Defaults();
  c.scrape.push_back({"x", "ftp://h", "exposition", "", 1000});
  Status s = service_->CheckConfig(c);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("server.scrape[0].url"), std::string::npos) << s.message();
}

// ---- cost and unit cost ---------------------------------------------------------------------

TEST_F(TelemetryServiceTest, CostRejectsBadParameters) {
  StartService();
  EXPECT_EQ(GetJson("/v1/cost?by=planet", 400)["field"], "by");
  EXPECT_EQ(GetJson("/v1/cost?from=yesterday", 400)["field"], "from");
  EXPECT_EQ(GetJson("/v1/cost?from=2000&to=1000", 400)["field"], "from");
}

TEST_F(TelemetryServiceTest, UnitCostFollowsTheFormula) {
  ServerConfig c = ServerConfig::Defaults();
  c.unit_cost_period_ms = kHour;
  c.cooling_usd_per_hour = 50;  // w_cooling = 1.16
  c.opex_usd_per_hour = 1;
  StartService(c);
  now_ = kT0 + 2 * kHour;
  PostJson("/v1/ingest/prom", DcgmText("n1", "ml", "p", 1, kT0 + kHour, 60, 0.5), 200, "text/plain");
  PostJson("/v1/metrics", OtlpGauge("seedance_sla_breach_ratio", kT0 + kHour, {0.1}), 200);
  Json u = GetJson("/v1/unit-cost", 200);
  const double total = u["total_usd_per_hour"].get<double>();  // per-minute charges, rounded
  EXPECT_NEAR(total, 2.99, 1e-4) << u;
  EXPECT_NEAR(u["w_cooling"].get<double>(), 1.16, 1e-12);
  EXPECT_NEAR(u["w_sla"].get<double>(), 1.21, 1e-12);
  const double tflops = u["effective_tflops"].get<double>();
  EXPECT_NEAR(tflops, 0.5 * 989, 1e-6);  // 50% of an H100 SXM's dense FP16 tensor peak
  EXPECT_NEAR(u["usd_per_tflops_hour"].get<double>(), (total + 1) / tflops * 1.16 * 1.21, 1e-12);
  EXPECT_EQ(app_.metrics.Value("seedance_unit_cost_usd_per_tflops_hour", {}), u["usd_per_tflops_hour"].get<double>());
  EXPECT_NEAR(app_.metrics.Value("seedance_cost_usd", {{"tenant", "ml"}}), total, 1e-9);
}

}  // namespace
}  // namespace seedance::server
