#include "seedance/sim/fleet_file.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "seedance/cost/tco.h"
#include "seedance/gpu/catalog.h"
#include "seedance/sim/policies/seedance_cost_policy.h"
#include "seedance/sim/policies/skypilot_policy.h"
#include "seedance/sim/scenarios.h"

namespace seedance::sim {
namespace {

class FleetFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("fleet_file_test_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_ / "traces");
    Write("traces/a.json", R"({"metadata": {"gap_seconds": 3600}, "data": [2, 2, 1, 0]})");
    Write("traces/b.json", R"({"metadata": {"gap_seconds": 3600}, "data": [1, 0, 1, 1]})");
    Write("prices.csv",
          "gpu_model,usd_per_gpu_hour_on_demand,usd_per_gpu_hour_spot\nA100-80G,1.79,1.19\nV100,2.85,\nH100,2.99,\n");
    prices_ = *cost::PriceTable::LoadFile((dir_ / "prices.csv").string());
  }
  void Write(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  Result<FleetFile> Parse(const std::string& text) {
    Write("fleet.yaml", text);
    return LoadFleetFile((dir_ / "fleet.yaml").string());
  }
  // The message of a parse error with the directory stripped ("fleet.yaml:3: key ...").
  std::string ErrorOf(const std::string& text) {
    auto f = Parse(text);
    if (f.has_value()) return "parsed";
    std::string m = f.error().message();
    const std::string prefix = (dir_ / "").string();
    for (std::size_t at; (at = m.find(prefix)) != std::string::npos;) m.erase(at, prefix.size());
    return m;
  }

  std::filesystem::path dir_;
  cost::PriceTable prices_;
};

constexpr const char* kMixed = R"(name: mixed
regions: [us-east-1, us-west-2]
gpus:
  - type: NVIDIA A100-SXM4-80GB
    owned:
      count: 4
      region: us-east-1
      tco: {gpu_price: 15000, life: 1460d, utilization: 0.6, usd_per_kwh: 0.1, pue: 1.3, ops: 0.5}
    reserved: {count: 2, region: us-east-1, usd_per_gpu_hour: 1.1}
    on_demand: {quota: 8, region: us-east-1}
    spot:
      - {region: us-east-1, max_gpus: 4, gpus_per_instance: 2, series: traces/a.json}
      - {region: us-west-2, max_gpus: 2, series: [traces/b.json]}
  - type: v100
    on_demand: {quota: 3, region: us-west-2, usd_per_gpu_hour: 2.5}
    spot:
      - {region: us-west-2, max_gpus: 6, price_ratio: 0.3, series: traces/b.json}
)";

TEST_F(FleetFileTest, ParsesEveryKindOfCapacity) {
  auto f = Parse(kMixed);
  ASSERT_TRUE(f.has_value()) << f.error().message();
  EXPECT_EQ(f->name, "mixed");
  ASSERT_EQ(f->gpus.size(), 2u);
  const FleetFileGpu& a = f->gpus[0];
  EXPECT_EQ(a.type, "A100-80G");  // the product string, through the GPU-name parser
  EXPECT_EQ(a.owned, 4);
  EXPECT_TRUE(a.owned_tco);
  EXPECT_DOUBLE_EQ(a.tco.life_years, 4.0);
  // The owned price is the TCO model's, from the inputs given and the catalog's FP16 peak and TDP.
  cost::TcoInputs in;
  in.gpu_price_usd = 15000;
  in.life_years = 4;
  in.utilization = 0.6;
  in.usd_per_kwh = 0.1;
  in.pue = 1.3;
  in.ops_usd_per_tflops_year = 0.5;
  auto tco = cost::OwnedGpuTco(gpu::GpuAt(*gpu::ParseGpuName("A100-80G", gpu::NameMatch::kName)), in);
  ASSERT_TRUE(tco.has_value());
  EXPECT_DOUBLE_EQ(a.owned_usd_per_gpu_hour, tco->usd_per_gpu_hour);
  EXPECT_GT(a.owned_usd_per_gpu_hour, 15000.0 / 4 / 8760);  // depreciation alone is 0.428
  EXPECT_EQ(a.reserved, 2);
  EXPECT_DOUBLE_EQ(a.reserved_usd_per_gpu_hour, 1.1);
  EXPECT_EQ(a.on_demand_quota, 8);
  EXPECT_EQ(a.on_demand_usd_per_gpu_hour, 0);  // the price table's
  ASSERT_EQ(a.spot.size(), 2u);
  EXPECT_EQ(a.spot[1].region, "us-west-2");
  EXPECT_EQ(a.spot[0].availability.AvailableAt(0), 4);  // 2 instances x 2 GPUs
  EXPECT_EQ(f->gpus[1].type, "V100");
}

TEST_F(FleetFileTest, BuildsTheSimulatorsFleet) {
  auto f = Parse(kMixed);
  ASSERT_TRUE(f.has_value()) << f.error().message();
  // The workload's types in its own order (and spelling); H100 has no pool.
  auto fleet = BuildFleetSpec(*f, {"H100", "V100", "A100-80G"}, prices_);
  ASSERT_TRUE(fleet.has_value()) << fleet.error().message();
  ASSERT_TRUE(fleet->Validate().ok());
  ASSERT_EQ(fleet->pools.size(), 6u);
  const auto& p = fleet->pools;
  EXPECT_EQ(p[0].tier, Tier::kOwned);
  EXPECT_EQ(p[0].type, 2);
  EXPECT_TRUE(p[0].committed);
  EXPECT_EQ(p[0].MarginalUsdPerGpuHour(), 0);
  EXPECT_EQ(p[1].tier, Tier::kReserved);
  EXPECT_TRUE(p[1].committed);
  EXPECT_DOUBLE_EQ(p[1].usd_per_gpu_hour, 1.1);
  // On-demand in the workload's type order: V100 (the file's price), then A100-80G (the table's).
  EXPECT_EQ(p[2].tier, Tier::kOnDemand);
  EXPECT_EQ(p[2].type, 1);
  EXPECT_DOUBLE_EQ(p[2].usd_per_gpu_hour, 2.5);
  EXPECT_DOUBLE_EQ(p[3].usd_per_gpu_hour, 1.79);
  EXPECT_FALSE(p[3].committed);
  // Spot in file order. A100-80G: two regions pooled (series summed, max_gpus added), at the
  // price table's spot quote; V100 at 0.3 x its on-demand price (the file's).
  EXPECT_EQ(p[4].tier, Tier::kSpot);
  EXPECT_EQ(p[4].type, 2);
  EXPECT_EQ(p[4].max_gpus, 6);
  EXPECT_EQ(p[4].region, "us-east-1+us-west-2");
  EXPECT_DOUBLE_EQ(p[4].usd_per_gpu_hour, 1.19);
  EXPECT_EQ(p[4].spot.AvailableAt(0), 4 + 1);
  EXPECT_EQ(p[4].spot.AvailableAt(3 * 3600), 0 + 1);
  EXPECT_DOUBLE_EQ(p[5].usd_per_gpu_hour, 2.5 * 0.3);
}

TEST_F(FleetFileTest, SpotDefaultsToTheDefaultRatioWithoutAQuote) {
  auto f = Parse("regions: [r]\ngpus:\n  - type: H100\n    spot: [{max_gpus: 4, series: traces/a.json}]\n");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  auto fleet = BuildFleetSpec(*f, {"H100"}, prices_);
  ASSERT_TRUE(fleet.has_value()) << fleet.error().message();
  EXPECT_DOUBLE_EQ(fleet->pools[0].usd_per_gpu_hour, 2.99 * cost::kDefaultSpotRatio);
  EXPECT_EQ(fleet->pools[0].region, "r");  // the only region, unstated
  EXPECT_EQ(f->name, "fleet");             // the file's stem
}

TEST_F(FleetFileTest, BuildErrorsNameTheFileAndType) {
  auto f = Parse("regions: [r]\ngpus:\n  - type: V100\n    on_demand: {quota: 2}\n  - type: L4\n    on_demand: {quota: 2}\n");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  auto fleet = BuildFleetSpec(*f, {"V100"}, prices_);
  ASSERT_FALSE(fleet.has_value());
  EXPECT_NE(fleet.error().message().find("fleet.yaml:5: key 'gpus[].type': 'L4' is a GPU type the workload has no "
                                         "speed for (its types: V100)"),
            std::string::npos)
      << fleet.error().message();
  // An unpriced type is an error naming it, never $0.
  auto l4 = BuildFleetSpec(*f, {"V100", "L4"}, prices_);
  ASSERT_FALSE(l4.has_value());
  EXPECT_NE(l4.error().message().find("no on-demand price for GPU type 'L4'"), std::string::npos) << l4.error().message();
  // Regions pooled into one spot pool must agree on the price.
  auto mixed = Parse(
      "regions: [a, b]\ngpus:\n  - type: V100\n    spot:\n      - {region: a, max_gpus: 2, series: traces/a.json, "
      "price_ratio: 0.3}\n      - {region: b, max_gpus: 2, series: traces/b.json, price_ratio: 0.4}\n");
  ASSERT_TRUE(mixed.has_value()) << mixed.error().message();
  auto m = BuildFleetSpec(*mixed, {"V100"}, prices_);
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().message().find("fleet.yaml:6: spot pools of V100 in several regions are pooled into one and must "
                                     "share a price"),
            std::string::npos)
      << m.error().message();
}

TEST_F(FleetFileTest, ErrorsNameFileLineAndKey) {
  const std::string head = "regions: [r]\ngpus:\n  - type: V100\n";
  struct Case {
    std::string text, error;
  };
  const std::vector<Case> cases = {
      {"regions: [r]\ngpus: []\n", "fleet.yaml:2: key 'gpus': expected a non-empty list of GPU types"},
      {"gpus:\n  - type: V100\n", "fleet.yaml:1: key 'regions': missing key 'regions'"},
      {"regions: [r]\ngpu: []\n", "fleet.yaml:2: key 'gpu': unknown key (allowed: cloud_provider, gpu_types, gpus, name, node_pools, on_prem_provider, regions)"},
      {"regions: [r, r]\ngpus: []\n", "fleet.yaml:1: key 'regions[1]': 'r' is empty or listed twice"},
      {"regions: [r]\ngpus:\n  - {owned: {count: 1}}\n", "fleet.yaml:3: key 'gpus[0]': missing key 'type'"},
      {"regions: [r]\ngpus:\n  - type: B300X\n    on_demand: {quota: 1}\n",
       "fleet.yaml:3: key 'gpus[0].type': unknown GPU model 'B300X'"},
      {head, "fleet.yaml:3: key 'gpus[0]': no capacity: give at least one of owned, reserved, on_demand, spot"},
      {head + "    owned: {count: 2.5}\n", "fleet.yaml:4: key 'gpus[0].owned.count': 2.5 is not a whole number of GPUs"},
      // Found by fleet_file_fuzz: a key that is a list ended the process (yaml-cpp's bad conversion).
      {head + "    owned: {[a]: 1}\n", "fleet.yaml:4: key 'gpus[0].owned': a key that is not a name"},
      {head + "    owned: {count: -1}\n", "fleet.yaml:4: key 'gpus[0].owned.count': -1 is out of range [1, 1e+06]"},
      {head + "    owned: {count: many}\n", "fleet.yaml:4: key 'gpus[0].owned.count': expected a number"},
      {head + "    owned: {cnt: 2}\n", "fleet.yaml:4: key 'gpus[0].owned.cnt': unknown key (allowed: count, region, tco, "
                                       "usd_per_gpu_hour)"},
      {head + "    owned: {region: r}\n", "fleet.yaml:4: key 'gpus[0].owned': missing key 'count'"},
      {head + "    owned: {count: 2, tco: {life: 3}}\n",
       "fleet.yaml:4: key 'gpus[0].owned.tco.life': '3': a number needs a unit"},
      {head + "    owned: {count: 2, tco: {pue: 0.5}}\n", "fleet.yaml:4: key 'gpus[0].owned.tco.pue': 0.5 is out of range [1, 5]"},
      {head + "    owned: {count: 2, tco: {watts_per_tflops: 300}}\n",
       "fleet.yaml:4: key 'gpus[0].owned.tco': watts_per_tflops 300 x 125 TFLOPS = 37500 W per GPU, above the V100's "
       "300 W TDP"},
      {head + "    owned: {count: 2, usd_per_gpu_hour: 0.5, tco: {}}\n",
       "fleet.yaml:4: key 'gpus[0].owned.usd_per_gpu_hour': give either 'tco'"},
      {head + "    owned: {count: 2, region: eu}\n", "fleet.yaml:4: key 'gpus[0].owned.region': 'eu' is not in 'regions' (r)"},
      {head + "    reserved: {count: 2}\n", "fleet.yaml:4: key 'gpus[0].reserved': missing key 'usd_per_gpu_hour'"},
      {head + "    reserved: {count: 2, usd_per_gpu_hour: -1}\n",
       "fleet.yaml:4: key 'gpus[0].reserved.usd_per_gpu_hour': -1 is out of range (0, 1000]"},
      {head + "    on_demand: {quota: 0}\n", "fleet.yaml:4: key 'gpus[0].on_demand.quota': 0 is out of range [1, 1e+06]"},
      {head + "    spot: {max_gpus: 2}\n", "fleet.yaml:4: key 'gpus[0].spot': expected a non-empty list of spot pools"},
      {head + "    spot: [{max_gpus: 2}]\n", "fleet.yaml:4: key 'gpus[0].spot[0]': missing key 'series'"},
      {head + "    spot: [{series: traces/a.json}]\n", "fleet.yaml:4: key 'gpus[0].spot[0]': missing key 'max_gpus'"},
      {head + "    spot: [{max_gpus: 2, series: traces/none.json}]\n",
       "fleet.yaml:4: key 'gpus[0].spot[0].series': traces/none.json: cannot open spot series"},
      {head + "    spot: [{max_gpus: 2, series: [traces/a.json, prices.csv]}]\n",
       "fleet.yaml:4: key 'gpus[0].spot[0].series[1]': prices.csv: not a JSON object"},
      {head + "    spot: [{max_gpus: 2, series: traces/a.json, price_ratio: 1.5}]\n",
       "fleet.yaml:4: key 'gpus[0].spot[0].price_ratio': 1.5 is out of range (0, 1]"},
      {head + "    spot: [{max_gpus: 2, series: traces/a.json, price_ratio: 0.3, usd_per_gpu_hour: 1}]\n",
       "fleet.yaml:4: key 'gpus[0].spot[0].usd_per_gpu_hour': give one of 'price_ratio', 'usd_per_gpu_hour' and "
       "'price_series'"},
      {head + "    spot: [{max_gpus: 2, series: traces/a.json, price_ratio: 0.3, price_series: p.csv}]\n",
       "fleet.yaml:4: key 'gpus[0].spot[0].price_series': give one of 'price_ratio', 'usd_per_gpu_hour' and "
       "'price_series'"},
      {head + "    spot: [{max_gpus: 2, series: traces/a.json, instance_type: p5.48xlarge}]\n",
       "fleet.yaml:4: key 'gpus[0].spot[0].instance_type': chooses rows of an AWS price history; give 'price_series'"},
      {head + "    spot: [{max_gpus: 2, series: traces/a.json, price_series: none.csv}]\n",
       "fleet.yaml:4: key 'gpus[0].spot[0].price_series': none.csv: cannot open price series"},
      {head + "    on_demand: {quota: 1}\n  - type: v100\n    on_demand: {quota: 1}\n",
       "fleet.yaml:5: key 'gpus[1].type': 'v100' is V100, listed already at line 3"},
      {"regions: [r\n", "fleet.yaml:2: not valid YAML"},
  };
  for (const auto& c : cases) {
    const std::string got = ErrorOf(c.text);
    EXPECT_EQ(got.rfind(c.error, 0), 0u) << "input:\n" << c.text << "\nwant prefix: " << c.error << "\ngot: " << got;
  }
  EXPECT_EQ(LoadFleetFile((dir_ / "none.yaml").string()).error().code(), StatusCode::kNotFound);
}


// A mixed fleet: owned (TCO), reserved, on-demand and spot A100-80G, on-demand and spot V100.
std::string MixedFleet(int owned) {
  return "name: mixed\nregions: [r]\ngpus:\n"
         "  - type: A100-80G\n"
         "    owned: {count: " + std::to_string(owned) + "}\n"
         "    reserved: {count: 2, usd_per_gpu_hour: 1.2}\n"
         "    on_demand: {quota: 8}\n"
         "    spot: [{max_gpus: 8, gpus_per_instance: 4, series: traces/spot.json}]\n"
         "  - type: V100\n"
         "    on_demand: {quota: 8}\n"
         "    spot: [{max_gpus: 8, gpus_per_instance: 4, series: traces/spot.json}]\n";
}

TEST_F(FleetFileTest, MixedFleetOwnedFirstAndTheBoundRespectsIt) {
  // Availability drops now and then: 2, 2, 1, 0, 2, ... instances of 4 GPUs, hourly.
  Write("traces/spot.json", R"({"metadata": {"gap_seconds": 3600}, "data": [2, 2, 1, 0, 2, 2, 2, 1, 2, 0]})");
  // 40 jobs over 10 hours, 1 or 2 GPUs, 1 to 3 hours on an A100-80G, 1.6x slower on a V100, each
  // due 6 hours after it arrives: more than the 6 committed GPUs can do in time.
  std::ostringstream jobs;
  jobs << "job_id,arrival_s,job_type,gpus,total_steps,deadline_s,steps_per_s_A100-80G,steps_per_s_V100\n";
  for (int i = 0; i < 40; ++i) {
    jobs << i << "," << i * 900 << ",t" << i % 3 << "," << 1 + i % 2 << "," << 3600 * (1 + i % 3) << ","
         << i * 900 + 6 * 3600 << ",1,0.625\n";
  }
  Write("jobs.csv", jobs.str());
  ScenarioSpec spec;
  spec.workload = (dir_ / "jobs.csv").string();
  spec.prices_path = (dir_ / "prices.csv").string();
  spec.data_dir = dir_.string();
  std::map<std::string, std::vector<Decision>> decisions;
  spec.on_decision = [&decisions](const std::string& policy, const Decision& d) { decisions[policy].push_back(d); };
  const auto run = [&](int owned) {
    Write("fleet.yaml", MixedFleet(owned));
    spec.fleet_path = (dir_ / "fleet.yaml").string();
    decisions.clear();
    return RunCostScenario(spec, nullptr);
  };
  auto r = run(4);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->pool_names.size(), 6u);
  EXPECT_EQ(r->pool_names[0], "A100-80G owned");
  EXPECT_EQ(r->pool_names[1], "A100-80G reserved");
  const double owned_usd = [] {
    cost::TcoInputs in;
    return cost::OwnedGpuTco(gpu::GpuAt(*gpu::ParseGpuName("A100-80G", gpu::NameMatch::kName)), in)->usd_per_gpu_hour;
  }();
  // What every schedule pays for the committed pools: from the first arrival to the last.
  const double committed_usd = (4 * owned_usd + 2 * 1.2) * 39 * 900 / 3600.0;
  EXPECT_GT(r->bound.usd, committed_usd);  // and some on-demand or spot work on top
  for (const auto& p : r->policies) {
    SCOPED_TRACE(p.name);
    // The bound holds for every policy, and committed pools are paid whether used or not.
    EXPECT_LE(r->bound.usd, p.result.total_cost_usd + 1e-6);
    EXPECT_GE(p.result.cost_by_pool_usd[0], 4 * owned_usd * 39 * 900 / 3600.0 - 1e-6);
    EXPECT_GE(p.result.cost_by_pool_usd[1], 2 * 1.2 * 39 * 900 / 3600.0 - 1e-6);
  }
  // Owned and reserved GPUs are used first: from the decision log, Seedance never starts a job on a
  // pay-per-use pool while committed GPUs enough for it stay free at that instant. (Gavel's FIFO and
  // LAS keep their published allocation over worker types; SkyPilot's rows launch cloud capacity.)
  for (const std::string policy : {"seedance", "seedance-predictive"}) {
    SCOPED_TRACE(policy);
    const auto& log = decisions[policy];
    ASSERT_FALSE(log.empty());
    EXPECT_EQ(log.front().action, DecisionAction::kStart);
    EXPECT_EQ(log.front().pool, 0);  // the first job lands on an owned GPU
    std::map<std::int64_t, std::pair<int, int>> running;  // job -> (pool, GPUs)
    std::size_t i = 0;
    int starts_elsewhere = 0;
    while (i < log.size()) {
      const double t = log[i].time_s;
      std::size_t j = i;
      for (; j < log.size() && log[j].time_s == t; ++j) {
        const Decision& d = log[j];
        if (d.job_id < 0) continue;  // provision / release
        if (d.action == DecisionAction::kStart || d.action == DecisionAction::kMigrate) {
          running[d.job_id] = {d.pool, d.gpus};
        } else if (d.action == DecisionAction::kStop || d.action == DecisionAction::kFinish ||
                   d.action == DecisionAction::kInterrupt) {
          running.erase(d.job_id);
        }
      }
      int free_owned = 4, free_reserved = 2;
      for (const auto& [job, pg] : running) {
        if (pg.first == 0) free_owned -= pg.second;
        if (pg.first == 1) free_reserved -= pg.second;
      }
      ASSERT_GE(free_owned, 0);
      ASSERT_GE(free_reserved, 0);
      for (std::size_t k = i; k < j; ++k) {
        const Decision& d = log[k];
        if (d.action != DecisionAction::kStart || d.pool <= 1) continue;
        ++starts_elsewhere;
        EXPECT_LT(std::max(free_owned, free_reserved), d.gpus)
            << "job " << d.job_id << " started on pool " << d.pool << " at " << t << " s with " << free_owned
            << " owned and " << free_reserved << " reserved GPUs free";
      }
      i = j;
    }
    EXPECT_GT(starts_elsewhere, 0);  // the committed GPUs are not enough for this workload
  }
  // The bound follows the fleet: more owned GPUs, a different bound (and still below every policy).
  auto more = run(8);
  ASSERT_TRUE(more.has_value()) << more.error().message();
  EXPECT_NE(more->bound.usd, r->bound.usd);
  for (const auto& p : more->policies) EXPECT_LE(more->bound.usd, p.result.total_cost_usd + 1e-6) << p.name;
}

TEST_F(FleetFileTest, PricesTheAsRunPeriodByTheSameRules) {
  auto f = Parse(
      "name: mine\nregions: [r]\ngpus:\n  - type: A100-80G\n    owned: {count: 2, usd_per_gpu_hour: 0.5}\n"
      "    reserved: {count: 1, usd_per_gpu_hour: 1.2}\n    on_demand: {quota: 4}\n"
      "    spot: [{max_gpus: 4, series: traces/a.json}]\n  - type: V100\n    on_demand: {quota: 2, usd_per_gpu_hour: 2}\n");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  const std::vector<AsRunInterval> run = {
      {"a", "NVIDIA A100-SXM4-80GB", Tier::kOwned, 0, 7200, 2},  // both owned GPUs, 2 h
      {"b", "A100-80G", Tier::kOnDemand, 3600, 5400, 3},        // 3 on-demand GPUs, 0.5 h
      {"c", "a100-80g", Tier::kSpot, 0, 3600, 1},               // spot at the table's quote
      {"a", "V100", Tier::kOnDemand, 7200, 10800, 1},           // job a again, on a V100
  };
  auto c = PriceAsRun(*f, run, prices_);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_DOUBLE_EQ(c->period_end_s - c->period_start_s, 10800);
  // Committed: 2 owned x 3 h x 0.5 + 1 reserved x 3 h x 1.2, used or not.
  EXPECT_NEAR(c->committed_usd, 3.0 + 3.6, 1e-9);
  EXPECT_NEAR(c->committed_idle_usd, 3.0 + 3.6 - 2 * 2 * 0.5, 1e-9);  // owned used 4 GPU-hours; reserved idle
  EXPECT_NEAR(c->on_demand_usd, 3 * 0.5 * 1.79 + 1 * 1 * 2, 1e-9);
  EXPECT_NEAR(c->spot_usd, 1.19, 1e-9);
  EXPECT_NEAR(c->total_usd, c->committed_usd + c->on_demand_usd + c->spot_usd, 1e-9);
  ASSERT_EQ(c->usd_by_job.size(), 3u);
  EXPECT_EQ(c->usd_by_job[0].first, "a");
  EXPECT_NEAR(c->usd_by_job[0].second, 2 * 2 * 0.5 + 2, 1e-9);
  // A longer stated period bills the committed pools longer.
  auto longer = PriceAsRun(*f, run, prices_, 0, 2 * 10800);
  ASSERT_TRUE(longer.has_value());
  EXPECT_NEAR(longer->committed_usd, 2 * c->committed_usd, 1e-9);
  // The same rules as the simulator: a committed pool's bill does not depend on its use.
  auto idle = PriceAsRun(*f, {run[3]}, prices_, 0, 10800);
  ASSERT_TRUE(idle.has_value());
  EXPECT_NEAR(idle->committed_usd, c->committed_usd, 1e-9);

  // Errors name the interval and its job.
  const auto error = [&](const std::vector<AsRunInterval>& r) {
    auto x = PriceAsRun(*f, r, prices_);
    return x.has_value() ? std::string("priced") : x.error().message();
  };
  EXPECT_EQ(error({{"j", "V100", Tier::kOwned, 0, 10, 1}}), "as-run interval 0 (job 'j'): fleet 'mine' has no owned V100 GPUs");
  EXPECT_EQ(error({{"j", "H100", Tier::kOnDemand, 0, 10, 1}}),
            "as-run interval 0 (job 'j'): fleet 'mine' has no on-demand H100 GPUs");
  EXPECT_EQ(error({{"j", "V100", Tier::kOnDemand, 10, 0, 1}}), "as-run interval 0 (job 'j'): ends before it starts");
  EXPECT_EQ(error({{"j", "V100", Tier::kOnDemand, 0, 10, 0}}), "as-run interval 0 (job 'j'): gpus 0 must be >= 1");
  EXPECT_EQ(error({{"j", "A100-80G", Tier::kOwned, 0, 10, 2}, {"k", "A100-80G", Tier::kOwned, 5, 20, 1}}).rfind(
                "as-run: A100-80G owned holds 3 GPUs at 5.000000 s; fleet 'mine' has 2", 0),
            0u);
  // Back to back is not overlap.
  EXPECT_EQ(error({{"j", "A100-80G", Tier::kOwned, 0, 10, 2}, {"k", "A100-80G", Tier::kOwned, 10, 20, 2}}), "priced");
  EXPECT_EQ(ParseTier("on_demand").value(), Tier::kOnDemand);
  EXPECT_EQ(ParseTier("reserved").value(), Tier::kReserved);
  EXPECT_FALSE(ParseTier("preemptible").has_value());
}

TEST_F(FleetFileTest, PlacesWhatRanOwnedFirstThenReservedThenOnDemand) {
  auto f = Parse(
      "name: mine\nregions: [r]\ngpus:\n  - type: A100-80G\n    owned: {count: 2, usd_per_gpu_hour: 0.5}\n"
      "    reserved: {count: 1, usd_per_gpu_hour: 1.2}\n    on_demand: {quota: 4}\n"
      "    spot: [{max_gpus: 4, series: traces/a.json}]\n  - type: V100\n    spot: [{max_gpus: 2, series: traces/b.json}]\n");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  // a takes both owned GPUs; b (3 GPUs, overlapping a) the reserved one and 2 on-demand; c starts
  // after a ends: the owned GPUs are free over all of c's run; d overlaps b and c: on-demand.
  const std::vector<AsRunJob> jobs = {
      {"b", "a100-80g", 1800, 5400, 3},
      {"a", "NVIDIA A100-SXM4-80GB", 0, 3600, 2},
      {"c", "A100-80G", 3600, 7200, 2},
      {"d", "A100-80G", 3600, 5400, 2},
      {"e", "V100", 0, 3600, 2, /*spot=*/true},
  };
  auto placed = PlaceAsRun(*f, jobs);
  ASSERT_TRUE(placed.has_value()) << placed.error().message();
  std::map<std::string, std::string> tiers;
  for (const auto& iv : *placed) tiers[iv.job] += std::string(TierName(iv.tier)) + " " + std::to_string(iv.gpus) + ";";
  EXPECT_EQ(tiers["a"], "owned 2;");
  EXPECT_EQ(tiers["b"], "reserved 1;on-demand 2;");
  EXPECT_EQ(tiers["c"], "owned 2;");
  EXPECT_EQ(tiers["d"], "on-demand 2;");  // b still holds the reserved GPU until 5400 s
  EXPECT_EQ(tiers["e"], "spot 2;");
  // In input order, each job's intervals together.
  EXPECT_EQ((*placed)[0].job, "b");
  auto c = PriceAsRun(*f, *placed, prices_);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  // Committed over the 2 h period: 2 owned x 0.5 + 1 reserved x 1.2 per hour; on-demand at the
  // table's 1.79 (b: 2 GPUs x 1 h, d: 2 GPUs x 0.5 h); V100 spot: the table quotes no spot price,
  // so the default ratio x its on-demand 2.85.
  EXPECT_NEAR(c->owned_usd, 2 * 2 * 0.5, 1e-9);
  EXPECT_NEAR(c->reserved_usd, 2 * 1.2, 1e-9);
  EXPECT_NEAR(c->on_demand_usd, (2 * 1 + 2 * 0.5) * 1.79, 1e-9);
  EXPECT_NEAR(c->spot_usd, 2 * 1 * 2.85 * cost::kDefaultSpotRatio, 1e-9);
  EXPECT_NEAR(c->committed_idle_usd, 1.2 * 2 - 1.2 * 1, 1e-9);  // owned busy all 2 h; reserved 1 of 2 h
  EXPECT_NEAR(c->total_usd, c->owned_usd + c->reserved_usd + c->on_demand_usd + c->spot_usd, 1e-9);
}

TEST_F(FleetFileTest, PlacingWhatRanNeverOverflowsSilently) {
  auto f = Parse(
      "name: mine\nregions: [r]\ngpus:\n  - type: A100-80G\n    owned: {count: 2, usd_per_gpu_hour: 0.5}\n"
      "    on_demand: {quota: 1}\n  - type: V100\n    spot: [{max_gpus: 2, series: traces/b.json}]\n");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  const auto error = [&](const std::vector<AsRunJob>& jobs) {
    auto x = PlaceAsRun(*f, jobs);
    if (x.has_value()) return std::string("placed");
    std::string m = x.error().message();
    const std::string prefix = (dir_ / "").string();
    for (std::size_t at; (at = m.find(prefix)) != std::string::npos;) m.erase(at, prefix.size());
    return m;
  };
  EXPECT_EQ(error({{"a", "A100-80G", 0, 100, 2}, {"b", "A100-80G", 50, 150, 2}}),
            "as-run job 'b' holds 2 GPUs of A100-80G from 50 s to 150 s, 1 more than fleet 'mine' (fleet.yaml:4) has "
            "free then (owned 2, on-demand quota 1): raise its capacity of A100-80G");
  // Back to back fits; the same GPUs again after the first job ends.
  EXPECT_EQ(error({{"a", "A100-80G", 0, 100, 3}, {"b", "A100-80G", 100, 150, 3}}), "placed");
  EXPECT_EQ(error({{"a", "H100", 0, 100, 1}}),
            "as-run job 'a' ran on H100, a GPU type fleet 'mine' (fleet.yaml) does not list: add it to 'gpus'");
  EXPECT_EQ(error({{"a", "V100", 0, 100, 1}}),
            "as-run job 'a' ran on V100; fleet 'mine' (fleet.yaml:7) has only spot pools of it, and the history does "
            "not say the job ran on spot: give V100 owned, reserved or on_demand capacity");
  EXPECT_EQ(error({{"a", "A100-80G", 0, 100, 1, true}}),
            "as-run job 'a' ran on spot A100-80G GPUs; fleet 'mine' (fleet.yaml:4) has no spot pool of A100-80G");
  EXPECT_EQ(error({{"a", "V100", 0, 100, 3, true}}),
            "as-run job 'a' holds 3 GPUs of V100 from 0 s to 100 s, 1 more than fleet 'mine' (fleet.yaml:7) has free "
            "then (spot max 2): raise its capacity of V100");
  EXPECT_EQ(error({{"a", "A100-80G", 10, 0, 1}}), "as-run job 'a': ends before it starts");
  EXPECT_EQ(error({{"a", "A100-80G", 0, 10, 0}}), "as-run job 'a': gpus 0 must be >= 1");
}


// ---- Spot price series (`spot[].price_series`) -------------------------------------------------

TEST(PriceSeriesTest, StepWiseIntegralMinimumAndTimes) {
  // $1 over [0, 1 h), $3 over [1 h, 3 h), $2 after.
  const PriceSeries p({{0, 1.0}, {3600, 3.0}, {10800, 2.0}}, std::nullopt);
  EXPECT_DOUBLE_EQ(p.At(-5), 1.0);
  EXPECT_DOUBLE_EQ(p.At(3599), 1.0);
  EXPECT_DOUBLE_EQ(p.At(3600), 3.0);
  EXPECT_DOUBLE_EQ(p.At(1e9), 2.0);  // the last price holds
  EXPECT_NEAR(p.UsdPerGpu(1800, 5400), 0.5 * 1.0 + 0.5 * 3.0, 1e-12);
  EXPECT_NEAR(p.UsdPerGpu(0, 4 * 3600.0), 1.0 + 2 * 3.0 + 2.0, 1e-12);
  EXPECT_NEAR(p.UsdPerGpu(20000, 23600), 2.0, 1e-12);
  EXPECT_DOUBLE_EQ(p.UsdPerGpu(10, 10), 0.0);
  EXPECT_DOUBLE_EQ(p.MinOver(3600, 10800), 3.0);  // [1 h, 3 h): only $3 in force
  EXPECT_DOUBLE_EQ(p.MinOver(3600, 10801), 2.0);
  EXPECT_DOUBLE_EQ(p.MinOver(0, 3600), 1.0);
  EXPECT_DOUBLE_EQ(p.Min(), 1.0);
  EXPECT_DOUBLE_EQ(p.Max(), 3.0);
  EXPECT_EQ(ParseRfc3339("2026-12-01T00:00:00Z"), 1796083200.0);
  EXPECT_EQ(ParseRfc3339("2026-12-01T01:30:00+01:30"), 1796083200.0);
  EXPECT_EQ(ParseRfc3339("2024-02-29T12:30:00.000Z"), 1709209800.0);
  EXPECT_EQ(ParseRfc3339("2024-02-29 12:30:00.5-00:00"), 1709209800.5);
  EXPECT_FALSE(ParseRfc3339("2023-02-29T00:00:00Z"));  // not a leap year
  EXPECT_FALSE(ParseRfc3339("2026-12-01T00:00:00"));   // no offset
  EXPECT_FALSE(ParseRfc3339("2026-12-01"));
}

TEST_F(FleetFileTest, PriceSeriesFromCsvInSecondsOrRfc3339) {
  Write("s.csv", "# spot\ntime,usd_per_gpu_hour\n0,1.5\n3600, 0.75\n\n7200,2\n");
  auto s = LoadPriceSeries((dir_ / "s.csv").string(), 4, {});
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_FALSE(s->origin_unix_s().has_value());
  ASSERT_EQ(s->points().size(), 3u);
  EXPECT_DOUBLE_EQ(s->At(4000), 0.75);  // per GPU-hour as written: gpus_per_instance does not divide a CSV
  Write("r.csv", "time,usd_per_gpu_hour\r\n2026-12-01T00:00:00Z,1\r\n2026-12-01T02:00:00+01:00,2\r\n");
  auto r = LoadPriceSeries((dir_ / "r.csv").string(), 1, {});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->origin_unix_s(), 1796083200.0);
  EXPECT_EQ(r->points()[1].t_s, 3600.0);  // 02:00+01:00 is 01:00Z, one hour after the first
  struct Case {
    std::string text, error;
  };
  const std::vector<Case> cases = {
      {"", "x.csv: empty; expected the header 'time,usd_per_gpu_hour'"},
      {"time,price\n0,1\n", "x.csv:1: expected the header 'time,usd_per_gpu_hour'"},
      {"time,usd_per_gpu_hour\n", "x.csv: no rows after the header"},
      {"time,usd_per_gpu_hour\n10,1\n", "x.csv:2: field 'time': the first row must be at 0 s"},
      {"time,usd_per_gpu_hour\n0,1\n0,2\n", "x.csv:3: field 'time': '0' is not after the row above"},
      {"time,usd_per_gpu_hour\n0,1\nnoon,2\n", "x.csv:3: field 'time': 'noon' is neither seconds from the start nor"},
      {"time,usd_per_gpu_hour\n0,1\n2026-12-01T00:00:00Z,2\n",
       "x.csv:3: field 'time': '2026-12-01T00:00:00Z' is an RFC 3339 time, the rows above are seconds"},
      {"time,usd_per_gpu_hour\n2026-12-01T00:00:00Z,2\n60,1\n",
       "x.csv:3: field 'time': '60' is seconds, the rows above are RFC 3339 times"},
      {"time,usd_per_gpu_hour\n0,free\n", "x.csv:2: field 'usd_per_gpu_hour': 'free' is not a price in (0, 1000]"},
      {"time,usd_per_gpu_hour\n0,0\n", "x.csv:2: field 'usd_per_gpu_hour': '0' is not a price in (0, 1000]"},
      {"time,usd_per_gpu_hour\n0,1,2\n", "x.csv:2: expected 2 fields (time,usd_per_gpu_hour)"},
  };
  for (const auto& c : cases) {
    Write("x.csv", c.text);
    auto x = LoadPriceSeries((dir_ / "x.csv").string(), 1, {});
    ASSERT_FALSE(x.has_value()) << c.text;
    std::string m = x.error().message();
    m.erase(0, (dir_ / "").string().size());
    EXPECT_EQ(m.rfind(c.error, 0), 0u) << "want prefix: " << c.error << "\ngot: " << m;
  }
}

constexpr const char* kAwsHistory = R"({"SpotPriceHistory": [
  {"AvailabilityZone": "us-east-1a", "InstanceType": "p4d.24xlarge", "ProductDescription": "Linux/UNIX",
   "SpotPrice": "16.000000", "Timestamp": "2026-12-01T02:00:00+00:00"},
  {"AvailabilityZone": "us-east-1b", "InstanceType": "p4d.24xlarge", "ProductDescription": "Linux/UNIX",
   "SpotPrice": "40.000000", "Timestamp": "2026-12-01T01:00:00+00:00"},
  {"AvailabilityZone": "us-east-1a", "InstanceType": "p4d.24xlarge", "ProductDescription": "Linux/UNIX",
   "SpotPrice": "8.000000", "Timestamp": "2026-12-01T00:00:00.000Z"}]})";

TEST_F(FleetFileTest, PriceSeriesFromAwsSpotPriceHistory) {
  Write("aws.json", kAwsHistory);
  const std::string path = (dir_ / "aws.json").string();
  // Two zones and no choice: an error that says which key chooses.
  auto both = LoadPriceSeries(path, 8, {});
  ASSERT_FALSE(both.has_value());
  EXPECT_NE(both.error().message().find("2 availability zones (us-east-1a, us-east-1b): choose one with the spot "
                                        "pool's 'availability_zone'"),
            std::string::npos)
      << both.error().message();
  auto a = LoadPriceSeries(path, 8, {"", "us-east-1a", ""});
  ASSERT_TRUE(a.has_value()) << a.error().message();
  // Newest first in the file, oldest first in the series; per instance-hour / 8 GPUs.
  ASSERT_EQ(a->points().size(), 2u);
  EXPECT_EQ(a->origin_unix_s(), 1796083200.0);
  EXPECT_DOUBLE_EQ(a->At(0), 1.0);
  EXPECT_DOUBLE_EQ(a->At(7200), 2.0);
  EXPECT_EQ(a->points()[1].t_s, 7200.0);
  auto none = LoadPriceSeries(path, 8, {"p5.48xlarge", "", ""});
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find("no rows match the pool's instance_type"), std::string::npos);
  Write("bad.json", R"({"SpotPriceHistory": [{"Timestamp": "2026-12-01T00:00:00Z", "SpotPrice": "-1"}]})");
  auto bad = LoadPriceSeries((dir_ / "bad.json").string(), 8, {});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("bad.json: field 'SpotPriceHistory[0].SpotPrice': \"-1\" is not a price"),
            std::string::npos)
      << bad.error().message();
  Write("when.json", R"({"SpotPriceHistory": [{"Timestamp": "yesterday", "SpotPrice": "1"}]})");
  auto when = LoadPriceSeries((dir_ / "when.json").string(), 8, {});
  ASSERT_FALSE(when.has_value());
  EXPECT_NE(when.error().message().find("field 'SpotPriceHistory[0].Timestamp': 'yesterday' is not an RFC 3339"),
            std::string::npos);
  Write("x.json", R"({"prices": []})");
  EXPECT_NE(LoadPriceSeries((dir_ / "x.json").string(), 8, {}).error().message().find(
                "field 'SpotPriceHistory': missing or not an array"),
            std::string::npos);

  // Through the fleet file: the pool's series, its zone chosen, and the build keeps it.
  auto f = Parse("name: p\nregions: [r]\ngpus:\n  - type: A100-80G\n    on_demand: {quota: 4}\n"
                 "    spot: [{max_gpus: 8, gpus_per_instance: 8, series: traces/a.json, price_series: aws.json,\n"
                 "            availability_zone: us-east-1a, instance_type: p4d.24xlarge}]\n");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  EXPECT_EQ(f->gpus[0].spot[0].price_series_as_written, "aws.json");
  auto fleet = BuildFleetSpec(*f, {"A100-80G"}, prices_);
  ASSERT_TRUE(fleet.has_value()) << fleet.error().message();
  const PoolSpec& spot = fleet->pools[static_cast<std::size_t>(fleet->FindPool(0, Tier::kSpot))];
  EXPECT_EQ(spot.price, *a);
  EXPECT_DOUBLE_EQ(spot.usd_per_gpu_hour, 1.0);  // the first price
  EXPECT_NEAR(spot.Usd(1, 3600, 10800), 1.0 + 2.0, 1e-12);  // 1 h at $1, 1 h at $2
  EXPECT_NEAR(spot.MeanPriceOver(3600, 10800), 1.5, 1e-12);
  // The zone's error goes through the fleet file with its line and key.
  EXPECT_EQ(ErrorOf("name: p\nregions: [r]\ngpus:\n  - type: A100-80G\n"
                    "    spot: [{max_gpus: 8, series: traces/a.json, price_series: aws.json}]\n")
                .rfind("fleet.yaml:5: key 'gpus[0].spot[0].price_series': aws.json: the price history holds 2 "
                       "availability zones",
                       0),
            0u);
  // Pools of one type in two regions share one price series or fail.
  Write("s1.csv", "time,usd_per_gpu_hour\n0,1\n");
  Write("s2.csv", "time,usd_per_gpu_hour\n0,2\n");
  auto two = Parse("name: p\nregions: [r, q]\ngpus:\n  - type: A100-80G\n    on_demand: {quota: 4, region: r}\n"
                   "    spot:\n      - {region: r, max_gpus: 8, series: traces/a.json, price_series: s1.csv}\n"
                   "      - {region: q, max_gpus: 8, series: traces/b.json, price_series: s2.csv}\n");
  ASSERT_TRUE(two.has_value()) << two.error().message();
  auto mismatch = BuildFleetSpec(*two, {"A100-80G"}, prices_);
  ASSERT_FALSE(mismatch.has_value());
  EXPECT_NE(mismatch.error().message().find("must share a price: give them the same 'price_series'"), std::string::npos);
}

// Spot billed at the price in force at each instant: the simulator's spot bill equals the held
// intervals it reports priced by an independent step function, and differs from the first price's.
TEST_F(FleetFileTest, SpotIsBilledAtThePriceInForceAndTheBoundHolds) {
  // Always 2 instances of 4 GPUs; the price: $0.4 for 3 h, $2.5 for 3 h, $0.8 after.
  Write("traces/spot.json", R"({"metadata": {"gap_seconds": 3600}, "data": [2]})");
  Write("spot.csv", "time,usd_per_gpu_hour\n0,0.4\n10800,2.5\n21600,0.8\n");
  const auto price_at = [](double t) { return t < 10800 ? 0.4 : t < 21600 ? 2.5 : 0.8; };
  std::ostringstream jobs;
  jobs << "job_id,arrival_s,job_type,gpus,total_steps,steps_per_s_A100-80G,steps_per_s_V100\n";
  for (int i = 0; i < 30; ++i) jobs << i << "," << i * 1200 << ",t" << i % 3 << "," << 1 + i % 2 << "," << 3600 * (1 + i % 3) << ",1,0.6\n";
  Write("jobs.csv", jobs.str());
  const auto fleet_text = [](const std::string& price) {
    return "name: s\nregions: [r]\ngpus:\n  - type: A100-80G\n    on_demand: {quota: 8}\n"
           "    spot: [{max_gpus: 8, gpus_per_instance: 4, series: traces/spot.json, " + price + "}]\n"
           "  - type: V100\n    on_demand: {quota: 8}\n";
  };
  ScenarioSpec spec;
  spec.workload = (dir_ / "jobs.csv").string();
  spec.prices_path = (dir_ / "prices.csv").string();
  spec.data_dir = dir_.string();
  const auto run = [&](const std::string& price) {
    Write("fleet.yaml", fleet_text(price));
    spec.fleet_path = (dir_ / "fleet.yaml").string();
    return RunCostScenario(spec, nullptr);
  };
  auto r = run("price_series: spot.csv");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const std::size_t spot = 2;  // on-demand A100-80G, on-demand V100, then spot
  ASSERT_EQ(r->pool_names[spot], "A100-80G spot");
  int spot_users = 0;
  for (const auto& p : r->policies) {
    SCOPED_TRACE(p.name);
    // The lower bound stays below every policy with a series.
    EXPECT_LE(r->bound.usd, p.result.total_cost_usd + 1e-6);
  }
  // The bill, rebuilt from the simulator's own pool intervals and an independent step function.
  Workload w;
  FleetSpec fleet;
  std::vector<std::string> notes;
  ASSERT_TRUE(BuildScenario(spec, &w, &fleet, &notes).ok());
  ASSERT_FALSE(fleet.pools[spot].price.empty());
  {
    // A sweep grid's spot_price_ratio replaces the series, as it replaces a fixed spot price.
    ScenarioSpec ratio = spec;
    ratio.spot_price_ratio = 0.5;
    Workload w2;
    FleetSpec f2;
    ASSERT_TRUE(BuildScenario(ratio, &w2, &f2, &notes).ok());
    EXPECT_TRUE(f2.pools[spot].price.empty());
    EXPECT_DOUBLE_EQ(f2.pools[spot].PriceAt(20000), 0.5 * 1.79);
  }
  SkyPilotPolicy::Options spot_only;
  spot_only.any_of = true;
  spot_only.spot_only = true;
  std::vector<std::unique_ptr<JobPolicy>> policies;
  policies.push_back(std::make_unique<SeedanceCostPolicy>(config::CostAwareConfig{}));
  policies.push_back(std::make_unique<SkyPilotPolicy>(spot_only));
  for (auto& pol : policies) {
    SCOPED_TRACE(std::string(pol->name()));
    double expected = 0, first_price = 0;
    SimOptions o;
    o.on_pool_interval = [&](const PoolInterval& iv) {
      if (static_cast<std::size_t>(iv.pool) != spot) return;
      for (double t = iv.start_s; t < iv.end_s;) {  // cut at the price changes
        const double next = std::min(iv.end_s, t < 10800 ? 10800.0 : t < 21600 ? 21600.0 : iv.end_s);
        expected += iv.held_gpus * (next - t) * price_at(t) / 3600.0;
        t = next;
      }
      first_price += iv.held_gpus * (iv.end_s - iv.start_s) * 0.4 / 3600.0;
    };
    auto res = Simulate(w, fleet, *pol, o);
    ASSERT_TRUE(res.has_value()) << res.error().message();
    EXPECT_GT(res->cost_by_pool_usd[spot], 0.0);
    EXPECT_NEAR(res->cost_by_pool_usd[spot], expected, 1e-6 * expected);
    EXPECT_GT(res->cost_by_pool_usd[spot], first_price + 1.0);  // not the first price throughout
    spot_users += res->cost_by_pool_usd[spot] > 0;
  }
  EXPECT_EQ(spot_users, 2);
  // The bound reads the series: the same fleet at its dearest price bounds higher, at its cheapest lower.
  auto dear = run("usd_per_gpu_hour: 2.5");
  auto cheap = run("usd_per_gpu_hour: 0.4");
  ASSERT_TRUE(dear.has_value() && cheap.has_value());
  EXPECT_LE(cheap->bound.usd, r->bound.usd + 1e-9);
  EXPECT_LE(r->bound.usd, dear->bound.usd + 1e-9);
  EXPECT_NE(cheap->bound.usd, dear->bound.usd);
}

TEST_F(FleetFileTest, AsRunPricesSpotByTheSeriesOnTheHistorysClock) {
  Write("aws.json", kAwsHistory);
  auto f = Parse("name: p\nregions: [r]\ngpus:\n  - type: A100-80G\n    on_demand: {quota: 4}\n"
                 "    spot: [{max_gpus: 8, gpus_per_instance: 8, series: traces/a.json, price_series: aws.json,\n"
                 "            availability_zone: us-east-1a}]\n");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  // $1/GPU-hour from 00:00Z, $2 from 02:00Z. A job on 2 spot GPUs from 01:00Z to 03:00Z.
  const std::vector<AsRunInterval> run = {{"j", "A100-80G", Tier::kSpot, 0, 7200, 2}};
  auto c = PriceAsRun(*f, run, prices_, 0, 7200, 1796083200.0 + 3600);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_NEAR(c->spot_usd, 2 * (1.0 + 2.0), 1e-9);
  EXPECT_NEAR(c->total_usd, c->spot_usd, 1e-9);
  // Without a clock the series starts with the run.
  auto rel = PriceAsRun(*f, run, prices_, 0, 7200);
  ASSERT_TRUE(rel.has_value());
  EXPECT_NEAR(rel->spot_usd, 2 * 2 * 1.0, 1e-9);
  // History before the series begins has no known price: an error, not the first price.
  auto early = PriceAsRun(*f, run, prices_, 0, 7200, 1796083200.0 - 60);
  ASSERT_FALSE(early.has_value());
  EXPECT_NE(early.error().message().find("before its price series begins"), std::string::npos)
      << early.error().message();
}

// Node pools (issue 38): owned and rented H100s of one model priced apart, prices defaulted from
// the gpus[] entries and the price table, each with its source; FOCUS providers by kind.
TEST_F(FleetFileTest, NodePoolsPriceOwnedAndRentedH100sApart) {
  auto f = Parse(R"(name: mine
regions: [dc1]
on_prem_provider: Acme DC1
cloud_provider: AWS
gpus:
  - type: H100
    owned: {count: 16, usd_per_gpu_hour: 1.5}
    on_demand: {quota: 64, usd_per_gpu_hour: 3.9}
  - type: A100-80G
    owned: {count: 8}
node_pools:
  - name: h100-owned
    type: H100
    kind: owned
    power_down_usd_per_gpu_hour: 0.12
    match: {node_name: "dc1-h100-*"}
  - name: h100-od
    type: h100
    kind: on-demand
    match: {labels: {karpenter.sh/capacity-type: on-demand, node.kubernetes.io/instance-type: p5.48xlarge}}
  - name: h100-spot
    type: H100
    kind: spot
    provider: Google Cloud
    match: {labels: {cloud.google.com/gke-spot: "true"}}
  - name: a100-owned
    type: NVIDIA A100-SXM4-80GB
    kind: owned
    match: {partition: a100}
)");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  ASSERT_EQ(f->node_pools.size(), 4u);
  auto pools = ResolveNodePools(*f, prices_);
  ASSERT_TRUE(pools.has_value()) << pools.error().message();
  const auto& p = *pools;
  EXPECT_DOUBLE_EQ(p[0].usd_per_gpu_hour, 1.5);
  EXPECT_EQ(p[0].provider, "Acme DC1");
  EXPECT_DOUBLE_EQ(p[0].power_down_usd_per_gpu_hour, 0.12);
  EXPECT_GT(p[0].power_usd_per_gpu_hour, 0);
  EXPECT_DOUBLE_EQ(p[1].usd_per_gpu_hour, 3.9);
  EXPECT_EQ(p[1].price_source, "gpus[H100].on_demand.usd_per_gpu_hour");
  EXPECT_EQ(p[1].provider, "AWS");
  EXPECT_NEAR(p[2].usd_per_gpu_hour, 3.9 * cost::kDefaultSpotRatio, 1e-12);  // H100 has no spot quote here
  EXPECT_EQ(p[2].provider, "Google Cloud");
  EXPECT_EQ(p[3].price_source, "gpus[A100-80G].owned TCO");
  auto owned = cost::FindNodePool(p, {"dc1-h100-03", {}, ""}, "f");
  auto od = cost::FindNodePool(p, {"ip-10-1", {{"label_karpenter_sh_capacity_type", "on-demand"},
                                                {"label_node_kubernetes_io_instance_type", "p5.48xlarge"}}, ""}, "f");
  ASSERT_TRUE(owned.has_value() && od.has_value());
  EXPECT_EQ((*owned)->gpu_type, (*od)->gpu_type);
  EXPECT_NE((*owned)->usd_per_gpu_hour, (*od)->usd_per_gpu_hour);
  EXPECT_EQ((*cost::FindNodePool(p, {"n7", {}, "a100"}, "f"))->name, "a100-owned");
  EXPECT_FALSE(cost::FindNodePool(p, {"dc2-h100-01", {}, ""}, "f").has_value());
}

TEST_F(FleetFileTest, NodePoolErrorsNameTheLineAndKey) {
  const std::string head = "regions: [r]\ngpus:\n  - {type: H100, on_demand: {quota: 1}}\nnode_pools:\n";
  EXPECT_EQ(ErrorOf(head + "  - {name: a, type: H100, kind: rented, match: {node_name: x}}\n"),
            "fleet.yaml:5: key 'node_pools[0].kind': 'rented': expected owned, reserved, on-demand or spot");
  EXPECT_NE(ErrorOf(head + "  - {name: a, type: H100, kind: owned, match: {}}\n")
                .find("fleet.yaml:5: key 'node_pools[0].match': give at least one of labels, node_name, partition"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "  - {name: a, type: H100, kind: spot, power_down_usd_per_gpu_hour: 0.1, match: {node_name: x}}\n")
                .find("key 'node_pools[0].power_down_usd_per_gpu_hour': only owned and reserved"),
            std::string::npos);
  EXPECT_NE(ErrorOf(head + "  - {name: a, type: H100, kind: owned, match: {node_name: x}}\n"
                           "  - {name: a, type: H100, kind: owned, match: {node_name: y}}\n")
                .find("fleet.yaml:6: key 'node_pools[1].name': 'a' is listed already at line 5"),
            std::string::npos);
  // A cloud pool must say who bills it.
  auto f = Parse(head + "  - {name: od, type: H100, kind: on-demand, match: {node_name: x}}\n");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  auto r = ResolveNodePools(*f, prices_);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message().find(":5: key 'node_pools[0]' (od): who bills this pool?"), std::string::npos);
}

// Issue 38: a per-node price typed as a per-GPU one is warned, naming the price and the range.
TEST_F(FleetFileTest, ImplausiblePricesAreWarned) {
  auto f = Parse(R"(regions: [r]
gpus:
  - type: H100
    on_demand: {quota: 8, usd_per_gpu_hour: 98.32}
  - type: A100-80G
    owned: {count: 8, usd_per_gpu_hour: 0.9}
node_pools:
  - {name: p, type: H100, kind: spot, usd_per_gpu_hour: 0.01, provider: AWS, match: {node_name: x}}
)");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  const auto w = FleetPriceWarnings(*f, prices_);
  ASSERT_EQ(w.size(), 2u);
  const std::string prefix = (dir_ / "").string();
  EXPECT_EQ(w[0].substr(prefix.size()),
            "fleet.yaml:3: key 'gpus[0].on_demand.usd_per_gpu_hour': $98.3200 per GPU-hour is outside the plausible "
            "$0.15 .. $8.97 for one H100 (0.05 .. 3x its list price $2.99 in " + (dir_ / "prices.csv").string() +
            "); is it the price of a whole node? divide by its GPUs");
  EXPECT_NE(w[1].find("key 'node_pools[0].usd_per_gpu_hour': $0.0100 per GPU-hour is outside"), std::string::npos);
}


// Issue 39: `on_demand.node_gpus` lists the shapes the cloud sells (GPUs per node), carried to the
// on-demand pool; a list out of order or with a repeat names its line and key.
TEST_F(FleetFileTest, NodeShapesReachTheOnDemandPool) {
  auto f = Parse("regions: [r]\ngpus:\n  - type: H100\n    on_demand: {quota: 16, node_gpus: [1, 4, 8]}\n");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  auto fleet = BuildFleetSpec(*f, {"H100"}, prices_);
  ASSERT_TRUE(fleet.has_value()) << fleet.error().message();
  ASSERT_EQ(fleet->pools.size(), 1u);
  EXPECT_EQ(fleet->pools[0].node_gpus, (std::vector<int>{1, 4, 8}));
  EXPECT_DOUBLE_EQ(fleet->pools[0].usd_per_gpu_hour, 2.99);  // one per-GPU price for every shape
  EXPECT_EQ(ErrorOf("regions: [r]\ngpus:\n  - type: H100\n    on_demand:\n      quota: 16\n      node_gpus: [4, 1]\n"),
            "fleet.yaml:6: key 'gpus[0].on_demand.node_gpus[1]': 1 after 4: list the shapes ascending, each once");
  EXPECT_NE(ErrorOf("regions: [r]\ngpus:\n  - type: H100\n    on_demand: {quota: 16, node_gpus: []}\n")
                .find("key 'gpus[0].on_demand.node_gpus': expected a non-empty list"),
            std::string::npos);
  EXPECT_NE(ErrorOf("regions: [r]\ngpus:\n  - type: H100\n    on_demand: {quota: 16, node_gpus: [0.5]}\n")
                .find("node_gpus[0]"),
            std::string::npos);
}

// Issue 38: a key with no value (a block under it indented wrongly, or nothing) is reported on its
// own line; yaml-cpp marks the null value at the next token (here line 7, what main printed).
TEST_F(FleetFileTest, ValuelessKeyIsReportedOnItsOwnLine) {
  EXPECT_EQ(ErrorOf("regions: [r]\ngpus:\n  - type: H100\n    owned:\n\n\n    on_demand: {quota: 1}\n"),
            "fleet.yaml:4: key 'gpus[0].owned': expected a mapping");
  EXPECT_NE(ErrorOf("regions: [r]\ngpus:\n  - type: H100\n    on_demand:\n    quota: 1\n")
                .find("fleet.yaml:5: key 'gpus[0].quota': unknown key"),
            std::string::npos);
  // A bad indent yaml-cpp itself refuses: its own line.
  EXPECT_NE(ErrorOf("regions: [r]\ngpus:\n  - type: H100\n    owned:\n      count: 8\n     usd_per_gpu_hour: 1.5\n")
                .find("fleet.yaml:6: not valid YAML"),
            std::string::npos);
}

// Issue 38: GPU types the built-in catalog lacks come from the fleet file's `gpu_types` (the same
// entries as a catalog file): an owned H200 pool (built in, at its cited purchase price) and an
// on-demand MI300X pool (defined here, at its catalog list price) price, and build the simulator's fleet.
TEST_F(FleetFileTest, NewGpuTypesFromTheFleetFilePriceAndBuildTheFleet) {
  auto f = Parse(R"(regions: [dc1]
cloud_provider: Azure
gpu_types:
  - name: MI300X
    product: AMD Instinct MI300X (OAM)
    dcgm_model_names: [AMD Instinct MI300X OAM]
    memory_gib: 192
    fp16_tflops: 1307.4
    memory_gb_s: 5300
    tdp_w: 750
    source: AMD Instinct MI300X data sheet
    on_demand: {usd_per_gpu_hour: 6.0, source: Azure ND MI300X v5 list price}
    purchase: {usd: 24600, source: estimate}
gpus:
  - type: NVIDIA H200
    owned: {count: 16}
  - type: AMD Instinct MI300X OAM
    on_demand: {quota: 16}
node_pools:
  - {name: h200-owned, type: H200, kind: owned, match: {node_name: "dc1-h200-*"}}
  - {name: mi300x-od, type: mi300x, kind: on-demand, match: {labels: {node.kubernetes.io/instance-type: ND96isr_MI300X_v5}}}
)");
  ASSERT_TRUE(f.has_value()) << f.error().message();
  ASSERT_EQ(f->gpus.size(), 2u);
  EXPECT_EQ(f->gpus[1].type, "MI300X");
  EXPECT_EQ(f->node_pools[1].type, "MI300X");
  // The parser knows the new type by every spelling, product strings included.
  EXPECT_TRUE(gpu::ParseGpuName("AMD Instinct MI300X", gpu::NameMatch::kProduct).has_value());
  const gpu::GpuFacts& mi = gpu::GpuAt(*gpu::ParseGpuName("MI300X", gpu::NameMatch::kCanonical));
  EXPECT_EQ(mi.defined_in, (dir_ / "fleet.yaml").string() + ":4");
  auto pools = ResolveNodePools(*f, prices_);
  ASSERT_TRUE(pools.has_value()) << pools.error().message();
  // Owned H200: the TCO model at the H200's cited purchase price, about $1.56 per GPU-hour.
  const auto h200 = cost::OwnedGpuTco(gpu::GpuAt(*gpu::ParseGpuName("H200", gpu::NameMatch::kCanonical)), {});
  ASSERT_TRUE(h200.has_value());
  EXPECT_DOUBLE_EQ((*pools)[0].usd_per_gpu_hour, h200->usd_per_gpu_hour);
  EXPECT_NEAR((*pools)[0].usd_per_gpu_hour, 1.56, 0.01);
  // On-demand MI300X: prices_ does not list it, so its catalog list price.
  EXPECT_DOUBLE_EQ((*pools)[1].usd_per_gpu_hour, 6.0);
  auto node = cost::FindNodePool(*pools, {"aks-mi-0", {{"node.kubernetes.io/instance-type", "ND96isr_MI300X_v5"}}, ""}, "f");
  ASSERT_TRUE(node.has_value()) << node.error().message();
  EXPECT_EQ((*node)->name, "mi300x-od");
  auto fleet = BuildFleetSpec(*f, {"H200", "MI300X"}, prices_);
  ASSERT_TRUE(fleet.has_value()) << fleet.error().message();
  const auto od = std::find_if(fleet->pools.begin(), fleet->pools.end(), [](const auto& p) {
    return p.tier == Tier::kOnDemand;
  });
  ASSERT_NE(od, fleet->pools.end());
  EXPECT_DOUBLE_EQ(od->usd_per_gpu_hour, 6.0);
}

TEST_F(FleetFileTest, GpuTypeErrorsNameTheLineAndField) {
  const std::string tail = "gpus:\n  - {type: H100, on_demand: {quota: 1}}\n";
  EXPECT_EQ(ErrorOf("regions: [r]\ngpu_types:\n  - name: X9\n    product: x\n    memory_gib: lots\n"
                    "    fp16_tflops: 1\n    memory_gb_s: 1\n    tdp_w: 1\n    source: s\n" + tail),
            "fleet.yaml:5: key 'gpu_types[0].memory_gib': expected a number");
  EXPECT_EQ(ErrorOf("regions: [r]\ngpu_types:\n  - {name: X9, product: x, memory_gib: 8, memory_gb_s: 1, tdp_w: 1, "
                    "source: s}\n" + tail),
            "fleet.yaml:3: key 'gpu_types[0]': missing key 'fp16_tflops' (a new GPU type)");
  EXPECT_NE(ErrorOf("regions: [r]\ngpu_types:\n  - name: H100\n    memory_gib: 96\n" + tail)
                .find("fleet.yaml:4: key 'gpu_types[0].memory_gib': H100 is built in"),
            std::string::npos);
  EXPECT_NE(ErrorOf("regions: [r]\ngpu_types:\n  - name: X9\n    purchase: {usd: 100}\n" + tail)
                .find("key 'gpu_types[0].purchase': missing key 'source'"),
            std::string::npos);
  // A new type may not take another type's spelling.
  EXPECT_NE(ErrorOf("regions: [r]\ngpu_types:\n  - {name: X9, aliases: [h100-sxm], product: x, memory_gib: 8, "
                    "fp16_tflops: 1, memory_gb_s: 1, tdp_w: 1, source: s}\n" + tail)
                .find("fleet.yaml:3: key 'gpu_types[0].name': GPU type 'X9': the spelling 'h100-sxm' already names H100"),
            std::string::npos);
}

}  // namespace
}  // namespace seedance::sim
