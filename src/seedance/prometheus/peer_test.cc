// A real peer (issue 28): Debian's Prometheus 2.42 scrapes a generated dcgm-exporter +
// kube-state-metrics endpoint on loopback (telemetry::WriteHistoryExposition, every sample with
// its timestamp), then `seedance ingest --prometheus` pulls it back by query_range in chunks; the
// ledger's GPU-hours per job match the generator's truth within 1%, and pulling the same range
// again changes nothing; `export workload` recovers every job (docs/YOUR_FLEET.md's walk on an owned
// fleet is your_fleet_walk_test.cc). Skips without prometheus (fails under SEEDANCE_REQUIRE_PEERS=1).
#include <httplib.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "seedance/core/testing/child_process.h"
#include "seedance/core/testing/require_peer.h"
#include "seedance/ledger/ledger.h"
#include "seedance/prometheus/peer_test_helpers.h"
#include "seedance/telemetry/cluster_history.h"
#include "seedance/telemetry/fleet_history.h"

namespace seedance::prometheus {
namespace {

using peer::InstantValue;
using peer::RunCommand;
using peer::RunResult;

// A generated history served on loopback as an exporter (every scrape serves all of it: after the
// first, Prometheus drops the repeats as out of order, so a missed scrape loses nothing) and a real
// Prometheus scraping it every second, in a fresh folder under the test's temporary one.
class ScrapedHistory {
 public:
  ScrapedHistory(const std::string& text, const std::string& name) : text_(text) {
    exporter_.Get("/metrics", [this](const httplib::Request&, httplib::Response& r) {
      r.set_content(text_, "text/plain; version=0.0.4");
    });
    const int exporter_port = exporter_.bind_to_any_port("127.0.0.1");
    serve_ = std::thread([this] { exporter_.listen_after_bind(); });
    // stop() is a no-op until the accept loop runs; the destructor must not join a thread that
    // then accepts forever.
    while (!exporter_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    dir_ = ::testing::TempDir() + "/" + name + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    port_ = seedance::testing::FreePort();
    if (port_ <= 0) return;
    std::ofstream(dir_ + "/prometheus.yml") << "global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
                                               "scrape_configs:\n"
                                               "  - job_name: gpu\n"
                                               "    static_configs: [{targets: ['127.0.0.1:"
                                            << exporter_port << "']}]\n";
    // Lookback shorter than the interval: the exporter's explicit timestamps get no staleness
    // markers, so a finished pod's series would otherwise be read for 5 more minutes.
    prometheus_ = std::make_unique<seedance::testing::ChildProcess>(
        std::vector<std::string>{"prometheus", "--config.file=" + dir_ + "/prometheus.yml",
                                 "--storage.tsdb.path=" + dir_ + "/data",
                                 "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--query.lookback-delta=30s"},
        dir_ + "/prometheus.log");
  }
  ~ScrapedHistory() {
    prometheus_.reset();
    exporter_.stop();
    serve_.join();
  }
  bool started() const { return prometheus_ != nullptr && prometheus_->started(); }
  const std::string& dir() const { return dir_; }
  int port() const { return port_; }
  // Waits up to 30 s for the instant query to return `want` (the history scraped whole).
  bool WaitFor(const std::string& query, double want) {
    httplib::Client prom("127.0.0.1", port_);
    prom.set_connection_timeout(1);
    for (int i = 0; i < 300; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (InstantValue(prom, query) == want) return true;
    }
    return false;
  }

 private:
  std::string text_;
  httplib::Server exporter_;
  std::thread serve_;
  std::string dir_;
  int port_ = 0;
  std::unique_ptr<seedance::testing::ChildProcess> prometheus_;
};

// workload -> GPU-hours from `seedance attribute --by workload --output csv`.
std::map<std::string, double> GpuHoursByWorkload(const std::string& csv) {
  std::map<std::string, double> out;
  std::istringstream in(csv);
  std::string line;
  // stderr is merged in: the "prices: ..." line comes before the CSV's header
  while (std::getline(in, line) && line.rfind("workload,", 0) != 0) {
  }
  while (std::getline(in, line)) {
    const auto a = line.find(','), b = line.rfind(',');
    if (a == std::string::npos || a == b) continue;
    out[line.substr(0, a)] = std::stod(line.substr(b + 1));
  }
  return out;
}

TEST(PrometheusSourcePeerTest, IngestFromPrometheusRecoversTheGeneratedGpuHours) {
  SEEDANCE_SKIP_WITHOUT_PEER(std::system("command -v prometheus >/dev/null 2>&1") != 0) << "prometheus not on PATH";
  // History in the last hour of real time: Prometheus's head takes samples no older than an hour
  // before the newest one it holds (its own `up` series, written at the scrape's real time).
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  telemetry::HistorySpec spec;
  spec.start_ms = now_ms / 60'000 * 60'000 - 50 * 60'000;
  spec.duration_ms = 45 * 60'000;
  spec.seed = 7;
  const auto jobs = telemetry::GenerateHistoryJobs(spec);
  ASSERT_GE(jobs.size(), 6u);
  std::string text;
  telemetry::WriteHistoryExposition(spec, jobs, [&](std::string_view chunk) { text += chunk; });

  ScrapedHistory scraped(text, "prometheus_source_peer_");
  ASSERT_TRUE(scraped.started());
  const std::string& dir = scraped.dir();
  const int prom_port = scraped.port();
  int gpus = 0;
  for (const auto& n : spec.nodes) gpus += n.gpus;
  const double want_samples = static_cast<double>(gpus * (spec.duration_ms / spec.interval_ms));
  ASSERT_TRUE(scraped.WaitFor("sum(count_over_time(DCGM_FI_DEV_GPU_UTIL[1h]))", want_samples))
      << "Prometheus never held the history; see " << dir << "/prometheus.log";

  const std::string cli = SEEDANCE_CLI;
  const std::string db = dir + "/ledger.db";
  const std::string ingest =
      fmt::format("{} ingest --prometheus http://127.0.0.1:{}/ --from {} --to {} --step 60s --chunk-points 20 --db {} "
                  "--progress",
                  cli, prom_port, spec.start_ms / 1000, (spec.start_ms + spec.duration_ms) / 1000, db);
  RunResult first = RunCommand(ingest);
  ASSERT_EQ(first.rc, 0) << first.out;
  // 45 evaluation times in chunks of 20: three query_range calls per query.
  EXPECT_NE(first.out.find("chunk 3/3"), std::string::npos) << first.out;
  EXPECT_EQ(first.out.find("chunk 4/"), std::string::npos) << first.out;
  const RunResult attributed = RunCommand(cli + " attribute --db " + db + " --by workload --output csv");
  ASSERT_EQ(attributed.rc, 0) << attributed.out;
  const auto hours = GpuHoursByWorkload(attributed.out);
  double truth_total = 0, got_total = 0;
  for (const auto& j : jobs) {
    ASSERT_TRUE(hours.count(j.pod)) << j.pod << " missing from\n" << attributed.out;
    EXPECT_NEAR(hours.at(j.pod), j.gpu_hours(), 0.01 * j.gpu_hours()) << j.pod;
    truth_total += j.gpu_hours();
    got_total += hours.at(j.pod);
  }
  EXPECT_NEAR(got_total, truth_total, 0.01 * truth_total);

  // kube-state-metrics came along: one GPU-request series per pod.
  {
    auto ledger = ledger::Ledger::Open(db);
    ASSERT_TRUE(ledger.has_value());
    auto requests = (*ledger)->SeriesOf("kube_pod_container_resource_requests", spec.start_ms,
                                        spec.start_ms + spec.duration_ms);
    ASSERT_TRUE(requests.has_value());
    EXPECT_EQ(requests->size(), jobs.size());
  }

  // The workload recovered from it: every job with its GPUs and GPU-hours (within 1%).
  const RunResult exported = RunCommand(cli + " export workload --db " + db + " --out " + dir + "/jobs.csv --as-run " +
                                        dir + "/as-run.csv");
  ASSERT_EQ(exported.rc, 0) << exported.out;
  std::ifstream as_run(dir + "/as-run.csv");
  std::string line;
  std::getline(as_run, line);
  std::map<std::string, std::pair<int, double>> recovered;  // pod -> (GPUs, GPU-hours)
  while (std::getline(as_run, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    ASSERT_GE(f.size(), 9u) << line;
    recovered[f[2]] = {std::stoi(f[5]), std::stod(f[8])};
  }
  ASSERT_EQ(recovered.size(), jobs.size());
  for (const auto& j : jobs) {
    ASSERT_TRUE(recovered.count(j.pod)) << j.pod;
    EXPECT_EQ(recovered.at(j.pod).first, static_cast<int>(j.gpus.size())) << j.pod;
    EXPECT_NEAR(recovered.at(j.pod).second, j.gpu_hours(), 0.01 * j.gpu_hours()) << j.pod;
  }

  // The same range again: nothing new, identical totals.
  RunResult second = RunCommand(ingest);
  ASSERT_EQ(second.rc, 0) << second.out;
  EXPECT_NE(second.out.find("(0 new)"), std::string::npos) << second.out;
  const RunResult again = RunCommand(cli + " attribute --db " + db + " --by workload --output csv");
  EXPECT_EQ(again.out, attributed.out);
}


// Issue 38: a fleet's history with its shape (telemetry/fleet_history.h: gangs, services, notebooks,
// queueing, spot) scraped by Prometheus and pulled back by `ingest --prometheus` with its default
// queries: `export workload` recovers every truth row with its kind, GPUs, pods, submit, start,
// end, nodes and spot mark, so kube_pod_created, kube_pod_owner, kube_replicaset_owner and
// kube_node_labels came through.
TEST(PrometheusSourcePeerTest, IngestFromPrometheusKeepsTheHistorysShape) {
  SEEDANCE_SKIP_WITHOUT_PEER(std::system("command -v prometheus >/dev/null 2>&1") != 0) << "prometheus not on PATH";
  const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
  telemetry::FleetHistorySpec spec;
  const auto pool = [](const std::string& name, const std::string& type, const std::string& model, int nodes,
                       bool committed, bool spot) {
    telemetry::FleetHistoryPool p = telemetry::NumberedPool(name, type, model, nodes, committed, spot);
    if (spot) p.labels = {{"karpenter.sh/capacity-type", "spot"}};
    return p;
  };
  spec.pools = {pool("h100", "H100", "NVIDIA H100 80GB HBM3", 3, true, false),
                pool("h100-spot", "H100", "NVIDIA H100 80GB HBM3", 1, false, true),
                pool("a100", "A100-80G", "NVIDIA A100-SXM4-80GB", 1, true, false),
                pool("l4", "L4", "NVIDIA L4", 1, false, false)};
  spec.start_ms = now_ms / 60'000 * 60'000 - 50 * 60'000;
  spec.duration_ms = 45 * 60'000;
  spec.load = 2.0;
  spec.seed = 3;
  auto history = telemetry::GenerateFleetHistory(spec);
  ASSERT_TRUE(history.has_value()) << history.error().message();
  std::string text;
  telemetry::WriteFleetHistoryExposition(spec, *history, [&](std::string_view chunk) { text += chunk; });
  std::set<std::string> kinds;
  for (const auto& w : history->rows) kinds.insert(w.kind);
  ASSERT_EQ(kinds, (std::set<std::string>{"batch", "notebook", "service"}));

  ScrapedHistory scraped(text, "prometheus_fleet_peer_");
  ASSERT_TRUE(scraped.started());
  const std::string& dir = scraped.dir();
  const double want_samples = static_cast<double>(6 * 8 * (spec.duration_ms / spec.interval_ms));
  ASSERT_TRUE(scraped.WaitFor("sum(count_over_time(DCGM_FI_DEV_GPU_UTIL[1h]))", want_samples))
      << "Prometheus never held the history; see " << dir << "/prometheus.log";
  const std::string cli = SEEDANCE_CLI;
  const std::string db = dir + "/ledger.db";
  const RunResult ingested = RunCommand(fmt::format("{} ingest --prometheus http://127.0.0.1:{}/ --from {} --to {} --step 60s --db {}",
                                                    cli, scraped.port(), spec.start_ms / 1000,
                                                    (spec.start_ms + spec.duration_ms) / 1000, db));
  ASSERT_EQ(ingested.rc, 0) << ingested.out;
  const RunResult exported = RunCommand(cli + " export workload --db " + db + " --out " + dir + "/jobs.csv --as-run " +
                                        dir + "/as-run.csv");
  ASSERT_EQ(exported.rc, 0) << exported.out;
  // namespace/pod -> the columns compared (kind, gpus, pods, submit, start, end, nodes, spot).
  const auto rows = [](std::istream& in, std::vector<std::size_t> cols, std::size_t key_ns, std::size_t key_pod) {
    std::map<std::string, std::vector<std::string>> out;
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
      std::vector<std::string> v;
      for (std::size_t c : cols) v.push_back(c < f.size() ? f[c] : "?");
      out[f[key_ns] + "/" + f[key_pod]] = v;
    }
    return out;
  };
  std::istringstream truth_csv(telemetry::FleetHistoryTruthCsv(spec, *history));
  // truth: id,kind,namespace,pod,owner_kind,owner,gpu_type,gpus,pods,submit,start,end,clipped,nodes,spot,busy_s
  const auto truth = rows(truth_csv, {1, 7, 8, 9, 10, 11, 13, 14}, 2, 3);
  // as-run: job_id,namespace,pod,node,gpu_type,gpus,start,end,...,clipped(13),submit,pods,kind,nodes,spot,busy_s
  std::ifstream as_run_csv(dir + "/as-run.csv");
  const auto got = rows(as_run_csv, {16, 5, 15, 14, 6, 7, 17, 18}, 1, 2);
  EXPECT_EQ(got.size(), truth.size());
  for (const auto& [key, want] : truth) {
    ASSERT_TRUE(got.count(key)) << key << " missing; export said\n" << exported.out;
    EXPECT_EQ(got.at(key), want) << key;
  }
}

}  // namespace
}  // namespace seedance::prometheus
