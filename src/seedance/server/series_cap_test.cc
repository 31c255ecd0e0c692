// Issue 26, "What must show" 3: 10^6 distinct telemetry series offered to a server whose cap
// (server.limits.max_series) is 100,000. The batches inside the cap are committed; every batch past
// it is refused with 413 naming the cap and nothing of it is stored; and the server's memory stays
// flat while 700,000 more distinct series are offered, because the series cache and the ledger stop
// growing at the cap. Label `slow`: kept out of the ASan run, where the allocator's quarantine
// makes RSS meaningless.
#include <httplib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "seedance/server/testing/test_server.h"

namespace seedance::server {
namespace {

using testing::RssBytes;
using testing::StartTestServer;
using testing::TestDir;
using testing::WriteFile;

TEST(SeriesCap, AMillionDistinctSeriesAreRefusedPastTheCapAndMemoryStaysFlat) {
  constexpr int kSeries = 1'000'000;
  constexpr int kBatch = 10'000;
  constexpr int kCap = 100'000;
  ServerOptions o;
  const std::string dir = TestDir();
  o.config_path = dir + "/seedance.yaml";
  WriteFile(o.config_path, "server:\n  limits:\n    max_series: " + std::to_string(kCap) + "\n");
  o.token_file = dir + "/token";
  WriteFile(o.token_file, "s3cret\n");
  auto s = StartTestServer(o);
  ASSERT_NE(s, nullptr);

  httplib::Client c("127.0.0.1", s->port());
  c.set_read_timeout(120, 0);
  const httplib::Headers auth{{"Authorization", "Bearer s3cret"}};
  int accepted = 0, refused = 0;
  long rss_warm = 0;  // after twice the cap's worth of refusals: SQLite's page cache has warmed
  std::string first_refusal;
  const auto t0 = std::chrono::steady_clock::now();
  for (int from = 0; from < kSeries; from += kBatch) {
    std::string text;
    text.reserve(static_cast<std::size_t>(kBatch) * 64);
    for (int i = from; i < from + kBatch; ++i)
      text += "DCGM_FI_DEV_GPU_UTIL{Hostname=\"n" + std::to_string(i / 8) + "\",gpu=\"" + std::to_string(i % 8) +
              "\"} 50 1795950000000\n";
    auto r = c.Post("/v1/ingest/prom", auth, text, "text/plain");
    ASSERT_TRUE(r) << "batch at " << from << ": " << httplib::to_string(r.error());
    if (r->status == 200) {
      ++accepted;
      ASSERT_EQ(refused, 0) << "a batch was accepted after one was refused (at " << from << ")";
    } else {
      ASSERT_EQ(r->status, 413) << r->body.substr(0, 300);
      if (refused++ == 0) first_refusal = r->body;
      if (from == 3 * kCap) rss_warm = RssBytes();
    }
  }
  const long rss_end = RssBytes();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(accepted * kBatch, kCap);
  EXPECT_EQ(refused, (kSeries - kCap) / kBatch);
  EXPECT_NE(first_refusal.find("server.limits.max_series"), std::string::npos) << first_refusal;
  EXPECT_NE(first_refusal.find(std::to_string(kCap)), std::string::npos) << first_refusal;

  // Committed samples, summed over the metric's format label: exactly the accepted part.
  double committed = 0;
  const std::string metrics = s->app().metrics.Render();
  for (std::size_t at = metrics.find("\nseedance_ingest_samples_total{"); at != std::string::npos;
       at = metrics.find("\nseedance_ingest_samples_total{", at + 1)) {
    committed += std::stod(metrics.substr(metrics.find(' ', metrics.find('}', at)) + 1));
  }
  EXPECT_EQ(committed, static_cast<double>(kCap));

  // 700,000 more distinct series offered after the warm point: the server keeps none of them.
  std::fprintf(stderr, "series cap: %d series offered in %.1f s; RSS %.1f MiB warm, %.1f MiB at the end\n", kSeries,
               secs, static_cast<double>(rss_warm) / (1 << 20), static_cast<double>(rss_end) / (1 << 20));
  EXPECT_LT(rss_end - rss_warm, 16L << 20) << "refused series grew the server's memory";
}

}  // namespace
}  // namespace seedance::server
