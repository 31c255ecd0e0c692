// docs/YOUR_FLEET.md's walk on an owned fleet, run as written against a real Prometheus (issue 38,
// "what must show" 5). The history: a day of examples/fleets/owned-heavy.yaml (384 owned H100, 128
// owned A100-80G, on-demand H100 and L4, spot H100; gangs, services, notebooks, queueing) from
// `seedance generate telemetry --fleet` (its default start and seed, 5-minute samples), turned into
// OpenMetrics and backfilled with `promtool tsdb create-blocks-from openmetrics` into the data
// directory of Debian's Prometheus 2.42, which then serves it over HTTP. The doc's ```sh block runs
// line by line from a folder like the repository root; the test checks what makes the what-if
// trustworthy: every command exits 0, the owned GPUs are billed for the whole window, the replay of
// the history ("as run, replayed") is within 5 % of as run, no policy is called cheaper by less than
// that gap, attribute --fleet bills what export workload --fleet priced, and "clipped" counts the
// pods the generator left unfinished. Slow (a day of 640 GPUs through cost-benchmark: 1-2 minutes
// on 2 shared cores). Skips without prometheus and promtool (fails under SEEDANCE_REQUIRE_PEERS=1).
#include <httplib.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "seedance/core/testing/child_process.h"
#include "seedance/core/testing/require_peer.h"
#include "seedance/prometheus/peer_test_helpers.h"

namespace seedance::prometheus {
namespace {

using peer::RunCommand;
using peer::RunResult;
using Json = nlohmann::json;

// The generator's default start and the day the doc's figures are of.
constexpr const char* kFrom = "2026-11-29T00:00:00Z";
constexpr const char* kTo = "2026-11-30T00:00:00Z";
constexpr std::int64_t kToUnix = 1'795'996'800;  // kTo

// Prometheus text (millisecond timestamps, # HELP/# TYPE lines) to OpenMetrics as promtool reads it
// (second timestamps, no comments or blank lines, `# EOF`). Returns the DCGM_FI_DEV_GPU_UTIL samples.
std::int64_t ToOpenMetrics(const std::string& prom, const std::string& om) {
  std::ifstream in(prom);
  std::ofstream out(om);
  std::int64_t util = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    const std::int64_t ms = std::stoll(line.substr(space + 1));
    out << line.substr(0, space) << ' ' << ms / 1000 << '.' << fmt::format("{:03d}", ms % 1000) << '\n';
    util += line.rfind("DCGM_FI_DEV_GPU_UTIL{", 0) == 0 ? 1 : 0;
  }
  out << "# EOF\n";
  return util;
}

// namespace,pod of a truth row -> (pods, clipped) summed: the pods the generator left unfinished.
int ClippedPodsOfTruth(const std::string& truth_csv) {
  std::ifstream in(truth_csv);
  std::string line;
  std::getline(in, line);  // id,kind,namespace,pod,owner_kind,owner,gpu_type,gpus,pods,submit,start,end,clipped,...
  int clipped = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    if (f.size() > 12 && f[12] == "yes") clipped += std::stoi(f[8]);
  }
  return clipped;
}

// "<pool> (owned <type>, N nodes, $P/GPU-h" in a price_source line: N x 8 GPUs at P.
std::pair<int, double> OwnedPool(const std::string& price_source, const std::string& pool) {
  std::smatch m;
  const std::regex re(pool + " \\(owned [^,]+, ([0-9]+) nodes, \\$([0-9.]+)/GPU-h");
  if (!std::regex_search(price_source, m, re)) return {0, 0.0};
  return {std::stoi(m[1]) * 8, std::stod(m[2])};
}

Json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in, nullptr, false);
}

TEST(YourFleetWalkTest, OwnedFleetFromPrometheusToATrustworthyWhatIf) {
  SEEDANCE_SKIP_WITHOUT_PEER(std::system("command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1") !=
                             0)
      << "prometheus or promtool not on PATH";
  const std::string cli = SEEDANCE_CLI;
  const std::string src = SEEDANCE_SOURCE_DIR;

  // The doc's block first: a broken or missing block fails before any minute is spent.
  const std::vector<std::string> walk = peer::WalkCommands(src + "/docs/YOUR_FLEET.md");
  ASSERT_GE(walk.size(), 4u) << "no walkthrough block in docs/YOUR_FLEET.md";
  EXPECT_LE(walk.size(), 6u) << "the walk is at most six commands (issue 38)";
  const auto step_of = [&](const std::string& prefix, const std::string& needs) {
    for (std::size_t i = 0; i < walk.size(); ++i) {
      if (walk[i].rfind(prefix, 0) == 0 && walk[i].find(needs) != std::string::npos) return i;
    }
    return std::string::npos;
  };
  const std::size_t ingest = step_of("seedance ingest ", "--prometheus");
  const std::size_t exported = step_of("seedance export workload ", "--as-run");
  const std::size_t benchmark = step_of("seedance cost-benchmark ", "--as-run");
  const std::size_t attribute = step_of("seedance attribute ", "--fleet");
  ASSERT_TRUE(ingest == 0 && exported != std::string::npos && benchmark != std::string::npos &&
              attribute != std::string::npos && exported < benchmark && exported < attribute)
      << "the walk: ingest --prometheus, export workload --as-run, cost-benchmark --as-run, attribute --fleet";

  const std::string dir = ::testing::TempDir() + "/your_fleet_walk_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/walk");
  // Removed after a pass (once Prometheus, declared later, has stopped); kept after a failure to read.
  struct RemoveOnPass {
    std::string dir;
    ~RemoveOnPass() {
      if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir);
    }
  } remove_on_pass{dir};

  // A day of the owned-heavy fleet, backfilled into Prometheus' data directory.
  const RunResult generated =
      RunCommand(fmt::format("{} generate telemetry --fleet {}/examples/fleets/owned-heavy.yaml --duration 24h "
                             "--interval 5m --out {}/day.prom --truth {}/truth.csv",
                             cli, src, dir, dir));
  ASSERT_EQ(generated.rc, 0) << generated.out;
  ASSERT_NE(generated.out.find(std::string(kFrom) + " .. " + kTo), std::string::npos) << generated.out;
  const std::int64_t util_samples = ToOpenMetrics(dir + "/day.prom", dir + "/day.om");
  std::filesystem::remove(dir + "/day.prom");
  const RunResult blocks = RunCommand(fmt::format("promtool tsdb create-blocks-from openmetrics {}/day.om {}/data", dir, dir));
  ASSERT_EQ(blocks.rc, 0) << blocks.out;
  std::filesystem::remove(dir + "/day.om");
  const int port = seedance::testing::FreePort();
  ASSERT_GT(port, 0);
  std::ofstream(dir + "/prometheus.yml") << "global: {scrape_interval: 1m}\n";
  // Lookback under the 5-minute interval: backfilled samples carry no staleness markers, so a
  // finished pod's last sample would otherwise be read again at the next step. Retention long
  // enough that a fixed day in the past is never deleted as too old.
  seedance::testing::ChildProcess prometheus(
      {"prometheus", "--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/data",
       "--web.listen-address=127.0.0.1:" + std::to_string(port), "--query.lookback-delta=4m",
       "--storage.tsdb.retention.time=100y"},
      dir + "/prometheus.log");
  ASSERT_TRUE(prometheus.started());
  {
    httplib::Client prom("127.0.0.1", port);
    prom.set_connection_timeout(1);
    double held = -1;
    for (int i = 0; i < 300 && held != static_cast<double>(util_samples); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      held = peer::InstantValue(prom, "sum(count_over_time(DCGM_FI_DEV_GPU_UTIL[2d]))", std::to_string(kToUnix));
    }
    ASSERT_EQ(held, static_cast<double>(util_samples)) << "Prometheus never served the backfilled day; see " << dir
                                                       << "/prometheus.log";
  }

  // The walk as a user runs it from the repository root (examples/ and data/ linked).
  const std::string root = dir + "/walk";
  std::filesystem::create_directory_symlink(src + "/examples", root + "/examples");
  std::filesystem::create_directory_symlink(src + "/data", root + "/data");
  const std::string env = fmt::format("cd '{}' && export PATH='{}':\"$PATH\" PROM=http://127.0.0.1:{}/ FROM={} TO={} && ",
                                      root, std::filesystem::path(cli).parent_path().string(), port, kFrom, kTo);
  std::vector<RunResult> ran;
  for (const auto& command : walk) {
    ran.push_back(RunCommand(env + command));
    ASSERT_EQ(ran.back().rc, 0) << command << "\n" << ran.back().out;
  }

  // export workload --summary: the period as it ran, priced by the fleet's node pools.
  const Json summary = ReadJson(root + "/as-run.json");
  ASSERT_TRUE(summary.is_object()) << "the walk's export writes --summary as-run.json";
  EXPECT_EQ(summary["period"]["hours"].get<double>(), 24.0);
  // "clipped" counts the pods without a completion: those the generator left running at the end.
  EXPECT_EQ(summary["clipped_pods"].get<int>(), ClippedPodsOfTruth(dir + "/truth.csv")) << ran[exported].out;
  // Owned GPUs are a fixed cost: every one of the 512 billed for the whole window, used or not.
  const std::string prices = summary["price_source"].get<std::string>();
  const auto [h100, h100_usd] = OwnedPool(prices, "h100-owned");
  const auto [a100, a100_usd] = OwnedPool(prices, "a100-owned");
  EXPECT_EQ(h100, 384) << prices;
  EXPECT_EQ(a100, 128) << prices;
  const double owned_window = 24.0 * (h100 * h100_usd + a100 * a100_usd);
  EXPECT_NEAR(summary["usd_by_tier"]["owned"].get<double>(), owned_window, 5e-4 * owned_window);

  // cost-benchmark --as-run: the as-run row bills the owned GPUs for the same window; the replay of
  // the history lands within 5 % of it; no policy is called cheaper by less than that gap.
  const Json results = ReadJson(root + "/whatif/results.json");
  ASSERT_TRUE(results.is_object()) << ran[benchmark].out;
  const Json& as_run = results["as_run"];
  EXPECT_EQ(as_run["period_hours"].get<double>(), 24.0);
  EXPECT_NEAR(as_run["usd_by_tier"]["owned"].get<double>(), owned_window, 5e-4 * owned_window);
  const Json& window = results["as_run_window"];
  const double gap = window["as_run_replayed"]["gap_pct"].get<double>();
  EXPECT_LE(std::abs(gap), 5.0) << "as run, replayed is " << gap << " % from as run\n" << ran[benchmark].out;
  const double as_run_usd = as_run["total_cost_usd"].get<double>();
  ASSERT_TRUE(window["policies"].contains("seedance"));
  for (const auto& [name, row] : window["policies"].items()) {
    const double total = row["bill"]["total_usd"].get<double>();
    if (row["verdict"] == "cheaper") {
      EXPECT_LT(total, as_run_usd * (1.0 - std::abs(gap) / 100.0)) << name << " called cheaper inside the gap";
    }
  }
  EXPECT_NE(ran[benchmark].out.find("gap to as run"), std::string::npos) << ran[benchmark].out;

  // attribute --fleet: the same bill as export workload --fleet, to the cent.
  std::smatch bill;
  const std::string attributed = ran[attribute].out;
  ASSERT_TRUE(std::regex_search(attributed, bill, std::regex("reconciliation: bill \\$([0-9,]+\\.[0-9]{2})"))) << attributed;
  std::string cents = bill[1];
  std::erase(cents, ',');
  EXPECT_EQ(cents, fmt::format("{:.2f}", summary["total_usd"].get<double>())) << attributed;
  EXPECT_NE(attributed.find("prices: fleet file"), std::string::npos) << attributed;
  // ... and the what-if's "as run" row is that bill too (the node inventory beside as-run.csv).
  EXPECT_EQ(cents, fmt::format("{:.2f}", as_run_usd)) << ran[benchmark].out;
  // Seedance is no dearer than the status quo replayed.
  EXPECT_LE(window["policies"]["seedance"]["bill"]["total_usd"].get<double>(),
            window["as_run_replayed"]["bill"]["total_usd"].get<double>())
      << ran[benchmark].out;
}

}  // namespace
}  // namespace seedance::prometheus
