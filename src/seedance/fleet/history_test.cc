#include "seedance/fleet/history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "seedance/cost/price_table.h"
#include "seedance/fleet/comparison.h"
#include "seedance/sim/fleet_file.h"

namespace seedance::fleet {
namespace {

namespace fs = std::filesystem;

const std::string kExample = std::string(SEEDANCE_SOURCE_DIR) + "/examples/history";

sim::FleetSpec ExampleFleet() {
  auto file = sim::LoadFleetFile(kExample + "/fleet.yaml");
  EXPECT_TRUE(file.has_value()) << file.error().message();
  auto prices = cost::PriceTable::LoadFile(std::string(SEEDANCE_TEST_DATA_DIR) + "/prices/gpu_prices.csv");
  EXPECT_TRUE(prices.has_value());
  std::vector<std::string> types;
  for (const auto& g : file->gpus) types.push_back(g.type);
  auto spec = sim::BuildFleetSpec(*file, types, *prices);
  EXPECT_TRUE(spec.has_value()) << spec.error().message();
  return *spec;
}

int Type(const sim::FleetSpec& f, const std::string& name) {
  for (std::size_t k = 0; k < f.gpu_types.size(); ++k) {
    if (f.gpu_types[k] == name) return static_cast<int>(k);
  }
  return -1;
}

TEST(FleetHistoryTest, TheExampleDayMapsJobsNotebooksServicesAndTenants) {
  const sim::FleetSpec fleet = ExampleFleet();
  auto h = ReadUserHistory(kExample + "/day", fleet);
  ASSERT_TRUE(h.has_value()) << h.error().message();
  EXPECT_DOUBLE_EQ(h->window_s, 24 * 3600.0);
  // Batch jobs: gangs kept, arrival = submit (600 s after the window start), speeds on the fleet's types.
  ASSERT_EQ(h->jobs.size(), 8u);
  EXPECT_DOUBLE_EQ(h->jobs[0].arrival_s, 600);
  EXPECT_EQ(h->jobs[0].gpus, 8);
  EXPECT_DOUBLE_EQ(h->jobs[0].steps_per_s[static_cast<std::size_t>(Type(fleet, "H100"))], 1.0);
  EXPECT_DOUBLE_EQ(h->jobs[0].steps_per_s[static_cast<std::size_t>(Type(fleet, "L4"))], 0.0);
  for (const TrainingJob& j : h->jobs) EXPECT_GT(j.pflop_per_step, 0) << j.name;
  EXPECT_DOUBLE_EQ(h->jobs[2].deadline_s, 72000);
  // Notebooks: one session per GPU; in use for busy_s, then idle to the row's end; no busy_s: all in use.
  ASSERT_EQ(h->dev.size(), 5u);
  EXPECT_DOUBLE_EQ(h->dev[0].arrival_s, 9 * 3600.0);  // alice
  EXPECT_DOUBLE_EQ(h->dev[0].active_s, 7200);
  EXPECT_DOUBLE_EQ(h->dev[0].idle_tail_s, 7200);
  EXPECT_EQ(h->dev[0].type, Type(fleet, "L4"));
  EXPECT_EQ(h->dev[1].type, Type(fleet, "A100-80G"));  // bob
  int carol = 0;
  for (const DevPod& d : h->dev) carol += d.arrival_s == 14 * 3600.0 && d.active_s == 3600 && d.idle_tail_s == 0;
  EXPECT_EQ(carol, 1);
  // Services from services.csv (the as-run service rows are not used): chat with its request
  // rate, code-assist without one (its demand comes from its replicas).
  ASSERT_EQ(h->services.size(), 2u);
  EXPECT_EQ(h->services[0].name, "search/chat");
  ASSERT_EQ(h->services[0].requests_per_s.size(), 1440u);
  EXPECT_DOUBLE_EQ(h->services[0].requests_per_s[0], 6.0);
  EXPECT_DOUBLE_EQ(h->services[0].requests_per_s[8 * 60], 14.5);
  EXPECT_DOUBLE_EQ(h->services[0].replicas[23 * 60], 2);
  EXPECT_EQ(h->services[1].name, "search/code-assist");
  EXPECT_TRUE(h->services[1].requests_per_s.empty());
  EXPECT_DOUBLE_EQ(h->services[1].replicas[10 * 60], 2);
  EXPECT_EQ(h->services[1].type, Type(fleet, "A100-80G"));
  // Tenants: the namespaces; Gold runs services, Bronze only notebooks; quota = peak GPUs held.
  ASSERT_EQ(h->tenants.size(), 4u);
  EXPECT_EQ(h->tenants[0].name, "ads");
  EXPECT_EQ(h->tenants[0].tier, tenancy::Tier::kSilver);
  EXPECT_EQ(h->tenants[1].name, "dev");
  EXPECT_EQ(h->tenants[1].tier, tenancy::Tier::kBronze);
  EXPECT_DOUBLE_EQ(h->tenants[1].nominal_gpus, 4);  // bob, dan (2) and alice at 11:00-13:00
  EXPECT_EQ(h->tenants[2].name, "research");
  EXPECT_DOUBLE_EQ(h->tenants[2].nominal_gpus, 12);  // llama-ft-1 (8) and llama-ft-2 (4)
  EXPECT_EQ(h->tenants[3].name, "search");
  EXPECT_EQ(h->tenants[3].tier, tenancy::Tier::kGold);
  for (const TrainingJob& j : h->jobs) {
    EXPECT_TRUE(h->tenants[static_cast<std::size_t>(j.tenant)].name == "ads" ||
                h->tenants[static_cast<std::size_t>(j.tenant)].name == "research");
  }
}

TEST(FleetHistoryTest, WithoutServicesCsvTheServiceRowsAreTheDeployment) {
  const fs::path dir = fs::temp_directory_path() / "seedance_fleet_history_no_services";
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(kExample + "/day/jobs.csv", dir / "jobs.csv");
  fs::copy_file(kExample + "/day/as-run.csv", dir / "as-run.csv");
  auto h = ReadUserHistory(dir.string(), ExampleFleet());
  ASSERT_TRUE(h.has_value()) << h.error().message();
  ASSERT_EQ(h->services.size(), 1u);
  EXPECT_EQ(h->services[0].name, "search/H100");
  EXPECT_DOUBLE_EQ(h->services[0].replicas[600], 2);  // two replica pods all day
  EXPECT_TRUE(h->services[0].requests_per_s.empty());
  fs::remove_all(dir);
}

// A copy of the example with one file's line `line` (1 = header) replaced; returns the error.
std::string ErrorWith(const std::string& file, int line, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "seedance_fleet_history_bad";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"jobs.csv", "as-run.csv", "services.csv"}) fs::copy_file(kExample + "/day/" + f, dir / f);
  std::ifstream in(dir / file);
  std::ostringstream out;
  std::string l;
  for (int n = 1; std::getline(in, l); ++n) out << (n == line ? text : l) << "\n";
  in.close();
  std::ofstream(dir / file) << out.str();
  auto h = ReadUserHistory(dir.string(), ExampleFleet());
  fs::remove_all(dir);
  return h.has_value() ? std::string("no error") : h.error().message();
}

// The history's gangs keep their pods (as-run.csv's `pods` by job_id); a job wider than a node is
// a gang of several nodes, never dropped: one pod per 8 GPUs when the count is missing or uneven.
TEST(FleetHistoryTest, GangsKeepTheirPodsAndWideJobsAreNotDropped) {
  const fs::path dir = fs::temp_directory_path() / "seedance_fleet_history_gangs";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"as-run.csv", "services.csv"}) fs::copy_file(kExample + "/day/" + f, dir / f);
  std::ifstream in(kExample + "/day/jobs.csv");
  std::ostringstream out;
  std::string l;
  for (int n = 1; std::getline(in, l); ++n) {
    // Job 2 (as-run: 1 pod) asks 24 GPUs, job 3 (1 pod) 12: wider than one 8-GPU node.
    if (n == 3) l = "2,3600,research/PyTorchJob/llama-ft-2,24,10800,2.2105,1.0000,0.0000,,research";
    if (n == 4) l = "3,7200,ads/Job/ctr-train-7,12,7200,2.2105,1.0000,0.0000,72000,ads";
    out << l << "\n";
  }
  std::ofstream(dir / "jobs.csv") << out.str();
  auto h = ReadUserHistory(dir.string(), ExampleFleet());
  fs::remove_all(dir);
  ASSERT_TRUE(h.has_value()) << h.error().message();
  EXPECT_EQ(h->jobs.size(), 8u);
  EXPECT_EQ(h->jobs_dropped, 0);
  std::map<std::int64_t, const TrainingJob*> by_id;
  for (const TrainingJob& j : h->jobs) by_id[j.id] = &j;
  EXPECT_EQ(by_id.at(1)->pods, 2);  // PyTorchJob llama-ft-1: 8 GPUs in 2 pods, as run
  EXPECT_EQ(by_id.at(7)->pods, 4);  // JobSet eval-4: 4 GPUs in 4 pods
  EXPECT_EQ(by_id.at(4)->pods, 1);
  EXPECT_EQ(by_id.at(2)->gpus, 24);
  EXPECT_EQ(by_id.at(2)->pods, 3);  // 1 pod in as-run.csv cannot hold 24 GPUs: 3 x 8
  EXPECT_EQ(by_id.at(3)->pods, 2);  // 12 GPUs: 2 x 6
  EXPECT_EQ(h->gangs, 5);  // jobs 1, 2, 3, 5 (llama-ft-3: 2 pods) and 7
  EXPECT_EQ(h->gangs_reshaped, 2);
  // The research tenant's quota holds its largest gang.
  EXPECT_GE(h->tenants[static_cast<std::size_t>(by_id.at(2)->tenant)].nominal_gpus, 24);
}

TEST(FleetHistoryTest, BadRowsNameTheFileLineAndField) {
  using ::testing::HasSubstr;
  using ::testing::MatchesRegex;
  const std::string row10 =
      "10,dev,jupyter-bob,l4-od-1,A100-80G,1,2026-11-30T10:00:00Z,2026-11-30T18:00:00Z,notebook,10800,1,"
      "2026-11-30T10:00:00Z,false,false";
  auto with = [&](const std::string& from, const std::string& to) {
    std::string r = row10;
    r.replace(r.find(from), from.size(), to);
    return r;
  };
  // as-run.csv: line 11 is job 10 (the header is line 1).
  EXPECT_THAT(ErrorWith("as-run.csv", 11, with("notebook", "jupyter")),
              MatchesRegex(".*as-run\\.csv:11:[0-9]+: field 'kind': 'jupyter': expected batch, service or notebook"));
  EXPECT_THAT(ErrorWith("as-run.csv", 11, with("A100-80G", "H200")),
              MatchesRegex(".*as-run\\.csv:11:[0-9]+: field 'gpu_type': 'H200' is not a GPU type of the fleet file "
                           "\\(its types: H100, A100-80G, L4\\)"));
  EXPECT_THAT(ErrorWith("as-run.csv", 11, with("2026-11-30T18:00:00Z", "2026-11-30T09:00:00Z")),
              MatchesRegex(".*as-run\\.csv:11:[0-9]+: field 'end': ends before its start"));
  EXPECT_THAT(ErrorWith("as-run.csv", 11, with("10800", "99999")),
              MatchesRegex(".*as-run\\.csv:11:[0-9]+: field 'busy_s': 99999 s: expected 0 to the run's 28800 s"));
  EXPECT_THAT(ErrorWith("as-run.csv", 11, with("2026-11-30T10:00:00Z,false", "yesterday,false")),
              MatchesRegex(".*as-run\\.csv:11:[0-9]+: field 'submit': .*yesterday.*"));
  EXPECT_THAT(ErrorWith("services.csv", 3, "search,chat,H100,1,2026-11-29T08:00:00Z,4,14.5"),
              MatchesRegex(".*services\\.csv:3:[0-9]+: field 'time': rows must be sorted by \\(namespace, deployment, time\\)"));
  EXPECT_THAT(ErrorWith("services.csv", 3, "search,chat,H100,1,2026-11-30T08:00:00Z,four,14.5"),
              MatchesRegex(".*services\\.csv:3:[0-9]+: field 'replicas': .*four.*"));
  EXPECT_THAT(ErrorWith("jobs.csv", 3, "2,3600,research/PyTorchJob/llama-ft-2,4,ten,2.2105,1.0000,0.0000,,research"),
              MatchesRegex(".*jobs\\.csv:3:[0-9]+: field 'total_steps': .*ten.*"));
  const std::string no_start =
      ErrorWith("as-run.csv", 1, "job_id,namespace,pod,node,gpu_type,gpus,begin,end,kind,busy_s,pods,submit,spot,clipped");
  EXPECT_THAT(no_start, HasSubstr("as-run.csv"));
  EXPECT_THAT(no_start, HasSubstr("start"));
}

TEST(FleetHistoryTest, AMissingFileIsNamed) {
  auto h = ReadUserHistory(kExample, ExampleFleet());  // the example's parent: no jobs.csv
  ASSERT_FALSE(h.has_value());
  EXPECT_THAT(h.error().message(), ::testing::HasSubstr("no jobs.csv"));
}

}  // namespace
}  // namespace seedance::fleet

namespace seedance::fleet {
namespace {

// Issue 38: your week and your fleet run beside the bundled fleet a's headline set, as the docs say;
// the owned fleet c only when asked for.
TEST(FleetHistoryTest, YourWeekAndYourFleetRunBesideTheBundledFleetA) {
  const auto week = DefaultWeekSets(false, "mine.yaml", "history");
  ASSERT_EQ(week.size(), 2u);
  EXPECT_EQ(week[0].shape, "a");
  EXPECT_TRUE(week[0].fleet_file.empty());
  EXPECT_TRUE(week[0].history_dir.empty());
  EXPECT_EQ(week[0].week, 1);
  EXPECT_TRUE(week[0].levers);
  EXPECT_EQ(week[1].fleet_file, "mine.yaml");
  EXPECT_EQ(week[1].history_dir, "history");
  EXPECT_EQ(week[1].seeds, std::vector<std::uint64_t>{0});
  EXPECT_TRUE(week[1].levers);
  const auto fleet = DefaultWeekSets(false, "mine.yaml");
  ASSERT_EQ(fleet.size(), 2u);
  EXPECT_TRUE(fleet[0].fleet_file.empty());
  EXPECT_EQ(fleet[1].fleet_file, "mine.yaml");
  for (const auto& s : DefaultWeekSets(false, "")) EXPECT_NE(s.shape, "c");
  const auto owned = DefaultWeekSets(false, "", "", /*with_owned=*/true);
  EXPECT_EQ(owned.back().shape, "c");
  EXPECT_TRUE(owned.back().held_out);
  EXPECT_TRUE(owned.back().owned_backlog);  // issue 39: the GPUs needed for the SLOs and deadlines
  for (const auto& s : DefaultWeekSets(true, "")) EXPECT_FALSE(s.owned_backlog);
}

}  // namespace
}  // namespace seedance::fleet
