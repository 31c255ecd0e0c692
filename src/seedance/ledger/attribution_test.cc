#include "seedance/ledger/telemetry_attribution.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "seedance/ledger/breaker.h"
#include "seedance/telemetry/testing/exposition_generator.h"

namespace seedance::ledger {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kT0 = 1'795'910'400'000;  // 2026-11-29T00:00:00Z

std::unique_ptr<Ledger> OpenFresh(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/attr_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::string path = dir + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  auto l = Ledger::Open(path);
  SEEDANCE_CHECK(l.has_value()) << l.error().ToString();
  return std::move(l).value();
}

void Ingest(Ledger& ledger, telemetry::InputFormat format, std::string_view text,
            std::int64_t default_ts = telemetry::kNoTimestamp) {
  auto w = ledger.NewSampleWriter("test", 10'000);
  SEEDANCE_CHECK(w.has_value());
  telemetry::ParseStats stats;
  telemetry::ParseOptions opt;
  opt.default_timestamp_ms = default_ts;
  telemetry::ParseText(format, text, opt, **w, stats);
  SEEDANCE_CHECK(stats.rejected == 0) << stats.rejections[0].ToString();
  SEEDANCE_CHECK((*w)->Finish().ok());
}

cost::PriceTable Catalog() {
  auto t = cost::PriceTable::LoadFile(std::string(SEEDANCE_TEST_DATA_DIR) + "/prices/gpu_prices.csv");
  SEEDANCE_CHECK(t.has_value());
  return *t;
}

TEST(TelemetryAttributionTest, KubernetesLabelsAloneAttributeAndReconcile) {
  auto ledger = OpenFresh("k8s.db");
  telemetry::testing::StreamSpec spec;
  spec.nodes = 2;
  spec.duration_ms = 3 * 3'600'000;
  std::string text;
  telemetry::testing::GenerateDcgmStream(spec, [&](std::string_view s) { text.append(s); });
  Ingest(*ledger, telemetry::InputFormat::kDcgm, text);
  auto config = LedgerConfig::Parse(
      R"({"namespaces": {"team-a": {"tenant": "acme", "sla_tier": "gold"},
                         "team-b": {"tenant": "acme", "sla_tier": "silver"},
                         "research": {"tenant": "lab"}},
          "overhead_namespaces": ["kube-system"]})",
      "cfg.json");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  cost::PriceTable catalog = Catalog();
  auto run = AttributeTelemetry(*ledger, *config, &catalog, kT0, kT0 + spec.duration_ms);
  ASSERT_TRUE(run.has_value()) << run.error().ToString();
  EXPECT_EQ(run->gpu_steps, 16 * 180);
  EXPECT_EQ(run->node_intervals, 2 * 180);
  EXPECT_EQ(run->unpriced_gpu_steps, 0);
  EXPECT_GT(run->joined_by_labels, 0);
  // H100 at $2.99/h: 8 GPUs x 60 s = 398,666.67 micro-USD per node-minute, rounded up.
  EXPECT_EQ(run->bill, MicroUsd(398'667 * 360));
  auto rep = ledger->Attribute(Dimension::kTenant, kT0, kT0 + spec.duration_ms, false);
  ASSERT_TRUE(rep.has_value());
  EXPECT_TRUE(rep->reconciliation.exact());
  EXPECT_EQ(rep->reconciliation.bill, run->bill);
  EXPECT_GT(rep->reconciliation.idle.raw(), 0);      // the generator leaves 1 GPU in 5 idle
  EXPECT_GT(rep->reconciliation.overhead.raw(), 0);  // kube-system pods
  std::vector<std::string> tenants;
  for (const auto& r : rep->rows) tenants.push_back(r.key);
  EXPECT_EQ(tenants, (std::vector<std::string>{"acme", "lab"}));
  // Re-running replaces the telemetry charges instead of adding to them.
  auto again = AttributeTelemetry(*ledger, *config, &catalog, kT0, kT0 + spec.duration_ms);
  ASSERT_TRUE(again.has_value());
  auto rep2 = ledger->Attribute(Dimension::kTenant, kT0, kT0 + spec.duration_ms, false);
  EXPECT_EQ(rep2->reconciliation.bill, rep->reconciliation.bill);
  EXPECT_EQ(rep2->rows[0].cost, rep->rows[0].cost);
  // Apportionment observations come from nodes shared by several workloads.
  EXPECT_GT(run->apportion.size(), 100u);
  auto fit = FitApportionment(run->apportion);
  ASSERT_TRUE(fit.has_value()) << fit.error().ToString();
  EXPECT_GT(fit->r2, 0.5);
}

TEST(TelemetryAttributionTest, EventsJoinSamplesWithoutPodLabels) {
  auto ledger = OpenFresh("events.db");
  // GPU-1: no pod labels, an event names the pod. GPU-2: a process (pid) no event explains.
  // GPU-3: idle. One event matches nothing.
  std::string text;
  for (int m = 0; m < 10; ++m) {
    std::string ts = std::to_string(kT0 + m * 60'000);
    text += "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA A100-SXM4-80GB\","
            "Hostname=\"n1\"} 0.5 " + ts + "\n";
    text += "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"1\",UUID=\"GPU-2\",modelName=\"NVIDIA A100-SXM4-80GB\","
            "Hostname=\"n1\",pid=\"4242\"} 0.9 " + ts + "\n";
    text += "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"2\",UUID=\"GPU-3\",modelName=\"NVIDIA A100-SXM4-80GB\","
            "Hostname=\"n1\"} 0 " + ts + "\n";
  }
  Ingest(*ledger, telemetry::InputFormat::kDcgm, text);
  std::vector<ProcessEvent> events(2);
  events[0].gpu_uuid = "GPU-1";
  events[0].start_ms = kT0 + 10'000;  // within the 30 s tolerance of the first step
  events[0].end_ms = kT0 + 5 * 60'000;
  events[0].pod = "trainer-0";
  events[0].namespace_name = "ml";
  events[0].job = "llm-ft";
  events[0].request_milli = 1000;
  events[1].gpu_uuid = "GPU-9";
  events[1].start_ms = kT0;
  events[1].end_ms = kT0 + 60'000;
  events[1].pod = "ghost";
  ASSERT_TRUE(ledger->AddEvents(events).ok());
  LedgerConfig config;
  cost::PriceTable catalog = Catalog();
  auto run = AttributeTelemetry(*ledger, config, &catalog, kT0, kT0 + 10 * 60'000);
  ASSERT_TRUE(run.has_value()) << run.error().ToString();
  EXPECT_EQ(run->joined_by_events, 5);
  EXPECT_EQ(run->unmatched_samples, 10);  // GPU-2's pid 4242, every minute
  EXPECT_EQ(run->unmatched_events, 1);    // the ghost
  auto rep = ledger->Attribute(Dimension::kJob, kT0, kT0 + 10 * 60'000, false);
  ASSERT_TRUE(rep.has_value());
  ASSERT_EQ(rep->rows.size(), 1u);
  EXPECT_EQ(rep->rows[0].key, "llm-ft");
  EXPECT_EQ(rep->rows[0].gpu_ms, 5 * 60'000);
  EXPECT_TRUE(rep->reconciliation.exact());
}

TEST(TelemetryAttributionTest, UnpricedModelsAreReported) {
  auto ledger = OpenFresh("unpriced.db");
  Ingest(*ledger, telemetry::InputFormat::kDcgm,
         "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",modelName=\"NVIDIA TITAN V\","
         "Hostname=\"n1\",pod=\"p\",namespace=\"a\"} 50\n",
         kT0);
  LedgerConfig config;
  cost::PriceTable catalog = Catalog();
  auto run = AttributeTelemetry(*ledger, config, &catalog, kT0, kT0 + 60'000);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->unpriced_gpu_steps, 1);
  EXPECT_EQ(run->unpriced_models, std::vector<std::string>{"NVIDIA TITAN V"});
  config.price_overrides["NVIDIA TITAN V"] = Usd(1);
  run = AttributeTelemetry(*ledger, config, &catalog, kT0, kT0 + 60'000);
  EXPECT_EQ(run->unpriced_gpu_steps, 0);
  EXPECT_EQ(run->bill, MicroUsd(16'667));
}

TEST(BreakerTest, FindingCarriesEvidenceAndAPricedSuggestion) {
  auto ledger = OpenFresh("breaker.db");
  // A job on 4 H100s at 20% utilization using 10 GiB: cheaper GPUs hold it.
  std::string text;
  for (int m = 0; m < 60; ++m) {
    std::string ts = std::to_string(kT0 + m * 60'000);
    for (int g = 0; g < 4; ++g) {
      std::string labels = "{gpu=\"" + std::to_string(g) + "\",UUID=\"GPU-" + std::to_string(g) +
                           "\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"n1\",pod=\"big-0\","
                           "namespace=\"ml\",container=\"main\"}";
      text += "DCGM_FI_PROF_GR_ENGINE_ACTIVE" + labels + " 0.2 " + ts + "\n";
      text += "DCGM_FI_DEV_FB_USED" + labels + " 10240 " + ts + "\n";
    }
  }
  Ingest(*ledger, telemetry::InputFormat::kDcgm, text);
  auto config = LedgerConfig::Parse(R"({"breaker": {"jobs": {"big-0": 5.0}, "pause": true}})", "c");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  cost::PriceTable catalog = Catalog();
  auto run = AttributeTelemetry(*ledger, *config, &catalog, kT0, kT0 + 3'600'000);
  ASSERT_TRUE(run.has_value());
  auto hours = ledger->JobHours(kT0, kT0 + 3'600'000);
  ASSERT_TRUE(hours.has_value());
  ASSERT_EQ(hours->size(), 1u);
  EXPECT_EQ((*hours)[0].cost, MicroUsd(199'333 * 60));  // 4 x $2.99/h per minute, rounded
  auto findings = EvaluateBreaker(*hours, run->evidence, *config, &catalog);
  ASSERT_EQ(findings.size(), 1u);
  const BreakerFinding& f = findings[0];
  EXPECT_EQ(f.job, "big-0");
  EXPECT_TRUE(f.pause);
  EXPECT_EQ(f.evidence.gpus, 4);
  EXPECT_NEAR(f.evidence.mean_utilization, 0.2, 1e-9);
  EXPECT_NEAR(f.evidence.peak_memory_mib, 10240, 1e-9);
  // The rule advise uses too (rightsize.h): the cheapest GPU below $2.99 with >= 11 GiB whose FP16
  // TFLOPS x 80% cover 20% of an H100's 989 (198): the A100 40GB at $1.29 (312 x 80% = 250). A T4
  // (16 GiB, $0.35, 65 TFLOPS) holds the memory but is far too slow.
  EXPECT_THAT(f.suggestion, HasSubstr("move to A100 "));
  EXPECT_EQ(f.saving_per_hour, MicroUsd(4 * (2'990'000 - 1'290'000)));
  // Below the threshold: no finding.
  config->breaker_jobs["big-0"] = Usd(100);
  EXPECT_TRUE(EvaluateBreaker(*hours, run->evidence, *config, &catalog).empty());
}

TEST(ConfigTest, RejectsUnknownKeysAndBadValues) {
  auto c = LedgerConfig::Parse(R"({"idle_shr": "none"})", "cfg.json");
  ASSERT_FALSE(c.has_value());
  EXPECT_THAT(c.error().message(), HasSubstr("cfg.json: key 'idle_shr': unknown key"));
  c = LedgerConfig::Parse(R"({"idle_share": "sometimes"})", "cfg.json");
  ASSERT_FALSE(c.has_value());
  EXPECT_THAT(c.error().message(), HasSubstr("unknown idle sharing rule"));
  c = LedgerConfig::Parse(R"({"overhead_fraction": 1.5})", "cfg.json");
  ASSERT_FALSE(c.has_value());
  c = LedgerConfig::Parse(R"({"namespaces": {"a": {"tenant": "t", "sla_tier": "gold"}}})", "x");
  ASSERT_TRUE(c.has_value());
  WorkloadDims d = c->Classify("p", "a", "");
  EXPECT_EQ(d.tenant, "t");
  EXPECT_EQ(d.sla_tier, "gold");
  EXPECT_EQ(d.job, "p");
  EXPECT_EQ(c->Classify("p", "zzz", "j").tenant, "zzz");
  EXPECT_EQ(*ParseDimension("tier"), Dimension::kSlaTier);
  EXPECT_FALSE(ParseDimension("color").has_value());
}

}  // namespace
}  // namespace seedance::ledger
