// A real peer: the Debian `prometheus` server scrapes this server's /metrics on loopback, and the
// counters read back through Prometheus's HTTP API equal Metrics::Value. Skips without prometheus.
#include <httplib.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "seedance/server/testing/test_server.h"
#include "seedance/core/testing/child_process.h"
#include "seedance/core/testing/require_peer.h"

namespace seedance::server {
namespace {

using seedance::testing::FreePort;
using Child = seedance::testing::ChildProcess;

// The value of the first series `query` selects, through Prometheus's /api/v1/query.
std::optional<double> Query(httplib::Client& prom, const std::string& query) {
  auto r = prom.Get("/api/v1/query", httplib::Params{{"query", query}}, httplib::Headers{});
  if (!r || r->status != 200) return std::nullopt;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (!j.is_object() || j.value("status", "") != "success") return std::nullopt;
  const auto& result = j["data"]["result"];
  if (!result.is_array() || result.empty()) return std::nullopt;
  return std::stod(result[0]["value"][1].get<std::string>());
}

TEST(PrometheusPeerTest, PrometheusScrapesTheCountersBack) {
  SEEDANCE_SKIP_WITHOUT_PEER(std::system("command -v prometheus >/dev/null 2>&1") != 0) << "prometheus not on PATH";
  auto s = testing::StartTestServer({}, [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  });
  ASSERT_NE(s, nullptr);
  httplib::Client c("127.0.0.1", s->port());
  for (int i = 0; i < 7; ++i) ASSERT_EQ(c.Get("/healthz")->status, 200);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(c.Post("/no/route", "{}", "application/json")->status, 404);

  const std::string dir = testing::TestDir();
  const int prom_port = FreePort();
  ASSERT_GT(prom_port, 0);
  testing::WriteFile(dir + "/prometheus.yml",
                     "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                     "scrape_configs:\n"
                     "  - job_name: seedance\n"
                     "    static_configs: [{targets: ['127.0.0.1:" + std::to_string(s->port()) + "']}]\n");
  Child prometheus({"prometheus", "--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/data",
                    "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                   dir + "/prometheus.log");
  ASSERT_TRUE(prometheus.started());

  httplib::Client prom("127.0.0.1", prom_port);
  prom.set_connection_timeout(1);
  const Labels ok_series = {{"path", "/healthz"}, {"code", "200"}};
  const Labels not_found_series = {{"path", "other"}, {"code", "404"}};
  const double want_ok = s->app().metrics.Value("seedance_http_requests_total", ok_series);
  const double want_404 = s->app().metrics.Value("seedance_http_requests_total", not_found_series);
  ASSERT_EQ(want_ok, 7);
  ASSERT_EQ(want_404, 2);
  std::optional<double> got_ok, got_404, scrapes;
  for (int i = 0; i < 300 && !(got_ok && got_404 && scrapes); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    got_ok = Query(prom, R"(seedance_http_requests_total{job="seedance",path="/healthz",code="200"})");
    got_404 = Query(prom, R"(seedance_http_requests_total{job="seedance",path="other",code="404"})");
    // Prometheus's own scrapes are counted too: /metrics answered 200 at least once.
    scrapes = Query(prom, R"(seedance_http_requests_total{job="seedance",path="/metrics",code="200"})");
  }
  ASSERT_TRUE(got_ok && got_404 && scrapes) << "Prometheus never returned the series; see " << dir << "/prometheus.log";
  EXPECT_EQ(*got_ok, want_ok);
  EXPECT_EQ(*got_404, want_404);
  EXPECT_GE(*scrapes, 1);
  EXPECT_EQ(Query(prom, R"(up{job="seedance"})").value_or(0), 1);
}

}  // namespace
}  // namespace seedance::server
