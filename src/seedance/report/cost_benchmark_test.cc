#include "seedance/report/cost_benchmark.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "seedance/core/file_util.h"
#include "seedance/report/testing/xml_check.h"

namespace seedance::report {
namespace {

// The tiny fixture: the real bundled trace with two policies and one seed (well under a second).
CostBenchmarkInput TinyInput() {
  CostBenchmarkInput in;
  const std::string data = SEEDANCE_TEST_DATA_DIR;
  in.nodes_path = data + "/openb/openb_node_list_gpu_node.csv";
  in.pods_path = data + "/openb/openb_pod_list_default.csv";
  in.prices_path = data + "/prices/gpu_prices.csv";
  in.policies = {"bestfit", "fgd"};
  in.seeds = {42};
  in.threads = 1;
  return in;
}

// Drops every line holding a "wall_seconds" key: the only measured values in results.json.
std::string WithoutWallSeconds(const std::string& json) {
  std::istringstream in(json);
  std::string out, line;
  while (std::getline(in, line)) {
    if (line.find("\"wall_seconds\"") == std::string::npos) out += line + "\n";
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

class CostBenchmarkTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto r = RunCostBenchmark(TinyInput(), /*progress=*/false);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    result_ = new CostBenchmarkResult(std::move(*r));
  }
  static void TearDownTestSuite() {
    delete result_;
    result_ = nullptr;
  }
  static const CostBenchmarkResult& result() { return *result_; }

 private:
  static CostBenchmarkResult* result_;
};

CostBenchmarkResult* CostBenchmarkTest::result_ = nullptr;

TEST_F(CostBenchmarkTest, PricesTheStrandedGpus) {
  const CostBenchmarkResult& r = result();
  EXPECT_EQ(r.fleet.nodes, 1213);
  EXPECT_EQ(r.fleet.gpus, 6212);
  ASSERT_EQ(r.costs.size(), 2u);
  for (const PolicyCost& c : r.costs) {
    EXPECT_GT(c.mean_unallocated_pct, 0) << c.policy;
    EXPECT_NEAR(c.unallocated_gpus, c.mean_unallocated_pct / 100 * 6212, 1e-9);
    EXPECT_NEAR(c.stranded_gpu_hours_per_month, c.unallocated_gpus * 730, 1e-6);
    EXPECT_EQ(c.stranded_usd_per_month,
              cost::StrandedUsdPerMonth(r.fleet, c.mean_unallocated_pct / 100));
  }
  // FGD strands fewer GPUs than BestFit on this trace (FGD paper; published 4.77 vs 7.14 %).
  EXPECT_EQ(r.costs[r.best].policy, "fgd");
  const auto h = MakeHeadline(r);
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->subject, "fgd");
  EXPECT_EQ(h->reference, "bestfit");
  EXPECT_GT(h->saving_per_month.raw(), 0);
  EXPECT_EQ(h->text.rfind("FGD strands ", 0), 0u) << h->text;
}

TEST_F(CostBenchmarkTest, ResultsJsonHasTheDocumentedKeys) {
  const auto j = nlohmann::json::parse(CostResultsJson(result()));
  EXPECT_EQ(j["workload"]["name"], "openb");
  EXPECT_EQ(j["workload"]["trace"], "openb_pod_list_default");
  EXPECT_EQ(j["fleet"]["nodes"], 1213);
  EXPECT_EQ(j["fleet"]["gpus"], 6212);
  EXPECT_EQ(j["fleet"]["gpus_by_model"]["G2"], 4392);
  EXPECT_EQ(j["fleet"]["gpus_by_model"].size(), 7u);
  EXPECT_FALSE(j["fleet"]["price_assumptions"].empty());
  ASSERT_EQ(j["packing"].size(), 2u);
  for (const auto& p : j["packing"]) {
    for (const char* key :
         {"policy", "mean_unallocated_gpu_pct_at_100", "unallocated_gpus",
          "stranded_gpu_hours_per_month", "stranded_usd_per_month",
          "published_mean_unallocated_gpu_pct_at_100", "savings_per_month_vs", "wall_seconds"}) {
      EXPECT_TRUE(p.contains(key)) << key;
    }
  }
  EXPECT_EQ(j["best_policy"], "fgd");
  EXPECT_DOUBLE_EQ(
      j["packing"][0]["savings_per_month_vs"]["fgd"]["usd_per_month"].get<double>(),
      -j["packing"][1]["savings_per_month_vs"]["bestfit"]["usd_per_month"].get<double>());
}

TEST_F(CostBenchmarkTest, OutputsAreDeterministicApartFromWallSeconds) {
  CostBenchmarkInput in = TinyInput();
  in.threads = 2;  // a different thread count must not change a byte either
  auto again = RunCostBenchmark(in, /*progress=*/false);
  ASSERT_TRUE(again.has_value()) << again.error().ToString();
  EXPECT_EQ(WithoutWallSeconds(CostResultsJson(result())),
            WithoutWallSeconds(CostResultsJson(*again)));
  EXPECT_EQ(CostReportHtml(result()), CostReportHtml(*again));
  EXPECT_EQ(FormatCostTable(result()), FormatCostTable(*again));
}

TEST_F(CostBenchmarkTest, HtmlIsSelfContainedAndWellFormed) {
  const std::string html = CostReportHtml(result());
  EXPECT_EQ(testing::CheckXml(html, /*html=*/true), "");
  EXPECT_NE(html.find(MakeHeadline(result())->text), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find(">BestFit<"), std::string::npos);  // legend entries
  EXPECT_NE(html.find(">FGD<"), std::string::npos);
  EXPECT_NE(html.find(">FGD (published)<"), std::string::npos);
  for (const char* banned : {"<script", "http://", "https://", "src=", "<link"}) {
    EXPECT_EQ(html.find(banned), std::string::npos) << banned;
  }
}

TEST_F(CostBenchmarkTest, WritesBothFiles) {
  const std::string dir = TempPath("cost_benchmark_out/nested");
  std::filesystem::remove_all(TempPath("cost_benchmark_out"));
  ASSERT_TRUE(WriteCostBenchmarkOutputs(result(), dir).ok());
  EXPECT_EQ(ReadFile(dir + "/results.json"), CostResultsJson(result()));
  EXPECT_EQ(ReadFile(dir + "/cost_optimization_report.html"), CostReportHtml(result()));
  std::filesystem::remove_all(TempPath("cost_benchmark_out"));
}

TEST(CostBenchmarkInputTest, RejectsAnUnknownWorkloadListingTheAcceptedOnes) {
  CostBenchmarkInput in = TinyInput();
  in.workload = "philly";
  auto r = RunCostBenchmark(in, false);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.error().message(), "--workload: unknown workload 'philly' (accepted: openb)");
}

TEST(CostBenchmarkInputTest, RejectsBadPoliciesAndSeeds) {
  CostBenchmarkInput in = TinyInput();
  in.policies = {"fgd", "nope"};
  EXPECT_EQ(RunCostBenchmark(in, false).error().code(), StatusCode::kInvalidArgument);
  in.policies = {"fgd", "fgd"};
  EXPECT_EQ(RunCostBenchmark(in, false).error().code(), StatusCode::kInvalidArgument);
  in = TinyInput();
  in.seeds.clear();
  EXPECT_EQ(RunCostBenchmark(in, false).error().code(), StatusCode::kInvalidArgument);
}

TEST(CostBenchmarkInputTest, ABadPriceRowNamesFileLineAndField) {
  const std::string path = TempPath("bad_prices.csv");
  ASSERT_TRUE(
      WriteFileAtomically(path, "gpu_model,usd_per_gpu_hour_on_demand\nT4,0.35\nG2,two\n").ok());
  CostBenchmarkInput in = TinyInput();
  in.prices_path = path;
  auto r = RunCostBenchmark(in, false);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.error().message().rfind(path + ":3:4: field 'usd_per_gpu_hour_on_demand'", 0), 0u)
      << r.error().message();
}

TEST(CostBenchmarkInputTest, AFleetModelWithoutAPriceIsRejectedBeforeAnyRun) {
  const std::string path = TempPath("partial_prices.csv");
  ASSERT_TRUE(WriteFileAtomically(path, "gpu_model,usd_per_gpu_hour_on_demand\nT4,0.35\n").ok());
  CostBenchmarkInput in = TinyInput();
  in.prices_path = path;
  auto r = RunCostBenchmark(in, false);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.error().message().find("no price for GPU model 'G2'"), std::string::npos)
      << r.error().message();
}

TEST(CostBenchmarkInputTest, ATraceWithoutGpuRequestsIsRejected) {
  const std::string path = TempPath("cpu_only_pods.csv");
  ASSERT_TRUE(
      WriteFileAtomically(path, "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,0,0\n")
          .ok());
  CostBenchmarkInput in = TinyInput();
  in.pods_path = path;
  auto r = RunCostBenchmark(in, false);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.error().message(), path + ": the trace has no GPU request");
}

}  // namespace
}  // namespace seedance::report
