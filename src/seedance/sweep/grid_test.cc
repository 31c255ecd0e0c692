#include "seedance/sweep/grid.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

namespace seedance::sweep {
namespace {

const char* const kGrid =
    "workloads: [llm-finetune, gavel]\n"
    "policies: [fifo, seedance]\n"
    "seeds: [0, 1, 2]\n"
    "values:\n"
    "  spot_price_ratio: [0.3, 0.5]\n"
    "  duration: 6h\n"
    "  scheduler.cost_aware.max_price_ratio: [0.6, 0.9]\n";

std::string ErrorOf(const std::string& text) {
  auto g = ParseGrid("grid.yaml", text, "");
  EXPECT_FALSE(g.has_value()) << text;
  return g.has_value() ? "" : g.error().message();
}

TEST(SweepGrid, ExpandsEveryCombinationInAFixedOrder) {
  auto g = ParseGrid("grid.yaml", kGrid, "");
  ASSERT_TRUE(g.has_value()) << g.error().message();
  ASSERT_EQ(g->axes.size(), 3u);
  EXPECT_EQ(g->axes[0].key, "duration");  // sorted by key
  EXPECT_EQ(g->axes[0].values[0], "6h");
  const std::vector<Cell> cells = ExpandGrid(*g);
  ASSERT_EQ(cells.size(), 2u * 4u * 2u * 3u);
  std::set<std::string> ids;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(cells[i].index, i);
    EXPECT_EQ(cells[i].id, CellId(cells[i].Params()));
    EXPECT_EQ(cells[i].id.size(), 16u);
    ids.insert(cells[i].id);
  }
  EXPECT_EQ(ids.size(), cells.size());
  // Workload, then values (last key fastest), then policy, then seed.
  EXPECT_EQ(cells[0].workload, "llm-finetune");
  EXPECT_EQ(cells[0].policy, "fifo");
  EXPECT_EQ(cells[1].seed, 1u);
  EXPECT_EQ(cells[3].policy, "seedance");
  EXPECT_EQ(cells[6].values["spot_price_ratio"], 0.5);  // keys sorted: spot_price_ratio is last
  EXPECT_EQ(cells[6].values["scheduler.cost_aware.max_price_ratio"], 0.6);
  EXPECT_EQ(cells[12].values["scheduler.cost_aware.max_price_ratio"], 0.9);
  EXPECT_EQ(cells[12].values["spot_price_ratio"], 0.3);
  EXPECT_EQ(cells[24].workload, "gavel");
}

TEST(SweepGrid, CellIdsDoNotDependOnOrderOrOtherCells) {
  auto a = ParseGrid("a.yaml", kGrid, "");
  auto b = ParseGrid("b.yaml",
                     "seeds: [2, 0, 1, 7]\npolicies: [seedance, fifo]\nworkloads: [gavel, llm-finetune]\n"
                     "values:\n  scheduler.cost_aware.max_price_ratio: [0.9, 0.6]\n  duration: [6h]\n"
                     "  spot_price_ratio: [0.5, 0.3]\n",
                     "");
  ASSERT_TRUE(a.has_value() && b.has_value());
  std::set<std::string> ids_b;
  for (const auto& c : ExpandGrid(*b)) ids_b.insert(c.id);
  for (const auto& c : ExpandGrid(*a)) EXPECT_TRUE(ids_b.count(c.id)) << c.Params().dump();
  // A value changes the id.
  Cell c = ExpandGrid(*a).front();
  const std::string before = c.id;
  c.values["spot_price_ratio"] = 0.31;
  EXPECT_NE(CellId(c.Params()), before);
}

TEST(SweepGrid, ValuesReachTheScenarioAndTheConfig) {
  auto g = ParseGrid("grid.yaml", kGrid, "");
  ASSERT_TRUE(g.has_value());
  const Cell cell = ExpandGrid(*g)[12];  // max_price_ratio 0.9, spot 0.3
  auto task = TaskOf(*g, cell);
  ASSERT_TRUE(task.has_value()) << task.error().message();
  EXPECT_DOUBLE_EQ(task->duration_s, 6 * 3600.0);
  EXPECT_DOUBLE_EQ(task->spot_price_ratio, 0.3);
  EXPECT_EQ(task->on_demand_quota, 0);
  auto spec = ScenarioOf(*task, "/data");
  ASSERT_TRUE(spec.has_value()) << spec.error().message();
  EXPECT_DOUBLE_EQ(spec->config.cost_aware.max_price_ratio, 0.9);
  EXPECT_EQ(spec->only_policies, std::vector<std::string>{"fifo"});
  EXPECT_EQ(spec->data_dir, "/data");
}

TEST(SweepGrid, AFleetFileForEveryCell) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "sweep_grid_fleet";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "mine.yaml") << "name: my-fleet\nregions: [r]\ngpus:\n  - type: V100\n    owned: {count: 4}\n";
  const std::string grid = "workloads: [gavel]\npolicies: [fifo]\nseeds: [1]\nfleet: mine.yaml\n";
  auto g = ParseGrid("grid.yaml", grid, dir.string());
  ASSERT_TRUE(g.has_value()) << g.error().message();
  EXPECT_EQ(g->fleet_path, (dir / "mine.yaml").string());
  const std::vector<Cell> cells = ExpandGrid(*g);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].Params()["fleet"], "my-fleet");  // another fleet, another cell id
  auto plain = ParseGrid("grid.yaml", "workloads: [gavel]\npolicies: [fifo]\nseeds: [1]\n", dir.string());
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(ExpandGrid(*plain)[0].Params().contains("fleet"));  // ids of grids without one unchanged
  EXPECT_NE(ExpandGrid(*plain)[0].id, cells[0].id);
  auto task = TaskOf(*g, cells[0]);
  ASSERT_TRUE(task.has_value());
  auto spec = ScenarioOf(*task, "/data");
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->fleet_path, g->fleet_path);
  // Errors: a missing file names the grid's line; a bad fleet file names its own line and key.
  auto missing = ParseGrid("grid.yaml", "workloads: [gavel]\npolicies: [fifo]\nseeds: [1]\nfleet: none.yaml\n", dir.string());
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message().rfind("grid.yaml:4: key 'fleet': cannot open", 0), 0u) << missing.error().message();
  std::ofstream(dir / "bad.yaml") << "regions: [r]\ngpus:\n  - type: V100\n    owned: {count: 0}\n";
  auto bad = ParseGrid("grid.yaml", "workloads: [gavel]\npolicies: [fifo]\nseeds: [1]\nfleet: bad.yaml\n", dir.string());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("bad.yaml:4: key 'gpus[0].owned.count': 0 is out of range"), std::string::npos)
      << bad.error().message();
}

TEST(SweepGrid, UnknownKeysNameFileLineAndKey) {
  EXPECT_EQ(ErrorOf("workloads: [gavel]\npolicies: [fifo]\nseed: [1]\n"),
            "grid.yaml:3: key 'seed': unknown key (allowed: config, fleet, policies, seeds, values, workloads)");
  EXPECT_EQ(ErrorOf("workloads: [gavel]\npolicies: [fifo]\nseeds: [1]\nvalues:\n  quota: [1]\n")
                .rfind("grid.yaml:5: key 'values.quota': unknown key", 0),
            0u);
  const std::string sched = ErrorOf("workloads: [gavel]\npolicies: [fifo]\nseeds: [1]\nvalues:\n"
                                    "  scheduler.cost_aware.max_price: [0.5]\n");
  EXPECT_EQ(sched.rfind("grid.yaml:5: key 'values.scheduler.cost_aware.max_price': unknown key", 0), 0u) << sched;
}

TEST(SweepGrid, BadValuesNameFileLineAndKey) {
  const std::string head = "workloads: [gavel]\npolicies: [fifo]\nseeds: [1]\nvalues:\n";
  EXPECT_EQ(ErrorOf(head + "  spot_price_ratio: [0.3,\n    1.5]\n"),
            "grid.yaml:6: key 'values.spot_price_ratio': '1.5' is out of range (0, 1]");
  EXPECT_EQ(ErrorOf(head + "  scheduler.cost_aware.max_price_ratio: [0.5, 2]\n"),
            "grid.yaml:5: key 'values.scheduler.cost_aware.max_price_ratio': 2 is out of range (0, 1]");
  EXPECT_EQ(ErrorOf(head + "  on_demand_quota: [8, 2.5]\n"),
            "grid.yaml:5: key 'values.on_demand_quota': '2.5' is not an integer in [1, 1000000] (GPUs per pool)");
  EXPECT_NE(ErrorOf(head + "  duration: [6x]\n").find("grid.yaml:5: key 'values.duration': '6x'"), std::string::npos);
  EXPECT_EQ(ErrorOf(head + "  scheduler.autoscaling.mode: [reactive, eager]\n"),
            "grid.yaml:5: key 'values.scheduler.autoscaling.mode': 'eager' (allowed: reactive, predictive)");
  EXPECT_EQ(ErrorOf(head + "  spot_price_ratio: [0.3, 0.3]\n"),
            "grid.yaml:5: key 'values.spot_price_ratio': '0.3' is listed twice");
  EXPECT_EQ(ErrorOf("workloads: [gavel]\npolicies: [fifo]\nseeds: [1, -2]\n"),
            "grid.yaml:3: key 'seeds': '-2' is not a non-negative integer");
  EXPECT_EQ(ErrorOf("workloads: []\npolicies: [fifo]\nseeds: [1]\n"),
            "grid.yaml:1: key 'workloads': expected a non-empty list");
  EXPECT_EQ(ErrorOf("workloads: [gavel]\npolicies: [fifo]\n"), "grid.yaml:1: key 'seeds' is missing");
  EXPECT_EQ(ErrorOf("workloads: [gavel]\npolicies: [fifo\n").rfind("grid.yaml:", 0), 0u);
}

TEST(SweepGrid, UnknownWorkloadsAndPolicies) {
  EXPECT_NE(ErrorOf("workloads: [gavel,\n  nope.csv]\npolicies: [fifo]\nseeds: [1]\n")
                .find("grid.yaml:2: key 'workloads': unknown workload 'nope.csv'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("workloads: [gavel]\npolicies:\n  - fifo\n  - fgd\nseeds: [1]\n")
                .find("grid.yaml:4: key 'policies': unknown policy 'fgd'"),
            std::string::npos);
  // The other autoscaler's row exists only where the config names the first one.
  EXPECT_TRUE(ParseGrid("g", "workloads: [gavel]\npolicies: [seedance-predictive]\nseeds: [1]\n", "").has_value());
  const std::string e = ErrorOf(
      "workloads: [gavel]\npolicies: [seedance-predictive]\nseeds: [1]\n"
      "values:\n  scheduler.autoscaling.mode: [reactive, predictive]\n");
  EXPECT_NE(e.find("grid.yaml:2: key 'policies': unknown policy 'seedance-predictive' with values"), std::string::npos)
      << e;
}

}  // namespace
}  // namespace seedance::sweep
