#include "seedance/ledger/ledger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/core/csv.h"
#include "seedance/ledger/focus.h"

namespace seedance::ledger {
namespace {

using ::testing::HasSubstr;

std::string TempDb(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/ledger_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::string path = dir + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

WorkloadDims Dims(std::string pod, std::string ns, std::string tenant, std::string tier) {
  WorkloadDims w;
  w.name = std::move(pod);
  w.namespace_name = std::move(ns);
  w.tenant = std::move(tenant);
  w.business_unit = "bu-" + w.tenant;
  w.task_type = "training";
  w.data_source = "ds";
  w.sla_tier = std::move(tier);
  w.job = w.name;
  return w;
}

TEST(LedgerTest, CreatesTheSchemaAndRefusesNewerOnes) {
  std::string path = TempDb("schema.db");
  {
    auto l = Ledger::Open(path);
    ASSERT_TRUE(l.has_value()) << l.error().ToString();
    EXPECT_EQ((*l)->schema_version(), Ledger::kSchemaVersion);
    EXPECT_EQ(*(*l)->IntegrityCheck(), "ok");
  }
  {
    auto l = Ledger::Open(path);  // reopening migrates nothing
    ASSERT_TRUE(l.has_value());
    EXPECT_EQ((*l)->schema_version(), Ledger::kSchemaVersion);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto l = Ledger::Open(path);
  ASSERT_FALSE(l.has_value());
  EXPECT_EQ(l.error().code(), StatusCode::kFailedPrecondition);
}

// Several processes (here threads, each with its own connection) opening a new ledger at once:
// one migrates, the others find it done (the version is read again under the write lock).
TEST(LedgerTest, ConcurrentOpensOfANewLedgerAllSucceed) {
  for (int round = 0; round < 5; ++round) {
    const std::string path = TempDb("race-" + std::to_string(round) + ".db");
    std::vector<std::thread> threads;
    std::vector<std::string> errors(4);
    for (std::size_t i = 0; i < errors.size(); ++i) {
      threads.emplace_back([&, i] {
        auto l = Ledger::Open(path);
        if (!l.has_value()) errors[i] = l.error().ToString();
      });
    }
    for (auto& t : threads) t.join();
    for (const auto& e : errors) EXPECT_EQ(e, "") << "round " << round;
  }
}

TEST(LedgerTest, MigratesAVersionOneFile) {
  std::string path = TempDb("v1.db");
  {
    auto l = Ledger::Open(path);
    ASSERT_TRUE(l.has_value());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "DROP TABLE breaker_actions; DROP INDEX charges_by_start; "
                         "DROP INDEX bills_by_start; DROP TABLE job_allocations; "
                         "DROP TABLE cursors; DROP TABLE admission_workloads; "
                         "DROP TABLE admission_decisions; PRAGMA user_version=1",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto l = Ledger::Open(path);
  ASSERT_TRUE(l.has_value()) << l.error().ToString();
  EXPECT_EQ((*l)->schema_version(), Ledger::kSchemaVersion);
  EXPECT_TRUE((*l)->RecordBreakerAction("j", 0, Usd(1), Usd(1), false, "x").ok());
}

TEST(LedgerTest, MigrationFiveKeepsJobAllocationsAndKeysThemByNode) {
  std::string path = TempDb("v4.db");
  {
    auto l = Ledger::Open(path);
    ASSERT_TRUE(l.has_value());
  }
  // A version-4 file: job_allocations keyed by incarnation only, one row.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "DROP TABLE job_allocations; CREATE TABLE job_allocations("
                         "source TEXT NOT NULL, cluster TEXT NOT NULL, job_id INTEGER NOT NULL, "
                         "incarnation INTEGER NOT NULL, node TEXT NOT NULL, start_ms INTEGER NOT NULL, "
                         "end_ms INTEGER NOT NULL, ended INTEGER NOT NULL, gpus INTEGER NOT NULL, "
                         "node_gpus INTEGER NOT NULL, price_micro INTEGER NOT NULL, workload_id INTEGER NOT NULL, "
                         "PRIMARY KEY(source, cluster, job_id, incarnation)) WITHOUT ROWID; "
                         "INSERT INTO job_allocations VALUES('slurm','c',7,100,'n1',100000,200000,1,4,8,2000000,0); "
                         "PRAGMA user_version=4",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto l = Ledger::Open(path);
  ASSERT_TRUE(l.has_value()) << l.error().ToString();
  EXPECT_EQ((*l)->schema_version(), Ledger::kSchemaVersion);
  (*l)->set_source("slurm");
  auto rows = (*l)->FindJobAllocations("c", 7, 100);
  ASSERT_TRUE(rows.has_value()) << rows.error().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].node, "n1");
  EXPECT_EQ((*rows)[0].gpus, 4);
  EXPECT_TRUE((*rows)[0].gpu_indices.empty());
  // Now a second node of the same incarnation is its own row, with its devices.
  JobAllocation second = (*rows)[0];
  second.node = "n2";
  second.gpu_indices = {0, 2, 3};
  second.gpus = 3;
  ASSERT_TRUE((*l)->PutJobAllocation(second).ok());
  ASSERT_TRUE((*l)->Flush().ok());
  rows = (*l)->FindJobAllocations("c", 7, 100);
  ASSERT_TRUE(rows.has_value());
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[1], second);
  EXPECT_EQ(GpuIndexList({0, 2, 3}), "0,2,3");
  EXPECT_FALSE(ParseGpuIndexList("0,x").has_value());
}

TEST(LedgerTest, ReingestingTheSameSamplesAddsNothing) {
  std::string path = TempDb("ingest.db");
  auto l = Ledger::Open(path);
  ASSERT_TRUE(l.has_value());
  const std::string text =
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",Hostname=\"n1\",pod=\"p\",namespace=\"a\"} 50 "
      "1000\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",Hostname=\"n1\",pod=\"p\","
      "namespace=\"a\"} 60 2000\nDCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-1\",Hostname=\"n1\"} 7 "
      "2000\n";
  for (int run = 0; run < 2; ++run) {
    int commits = 0;
    auto w = (*l)->NewSampleWriter("t.prom", 2, [&](const IngestProgress&) { ++commits; });
    ASSERT_TRUE(w.has_value());
    telemetry::ParseStats stats;
    telemetry::ParseText(telemetry::InputFormat::kDcgm, text, {}, **w, stats);
    Status fin = (*w)->Finish();
    ASSERT_TRUE(fin.ok()) << fin.ToString();
    EXPECT_EQ((*w)->progress().committed_samples, 3u);
    EXPECT_EQ((*w)->progress().inserted, run == 0 ? 3u : 0u);
    EXPECT_EQ(commits, 2);  // a batch of 2, then the last one
    EXPECT_EQ(*(*l)->CountSamples(), 3);
  }
}

// Issue 26: a writer kept across requests writes one ingests row per commit with that commit's
// counts, not running totals.
TEST(LedgerTest, IngestsRowsCountEachCommit) {
  std::string path = TempDb("ingests.db");
  auto l = Ledger::Open(path);
  ASSERT_TRUE(l.has_value());
  auto w = (*l)->NewSampleWriter("otlp", SIZE_MAX, nullptr);
  ASSERT_TRUE(w.has_value());
  for (int request = 0; request < 3; ++request) {
    std::string text;
    for (int i = 0; i <= request; ++i) {
      text += "x{UUID=\"GPU-" + std::to_string(i) + "\"} 1 " + std::to_string(1000 * (request + 1)) + "\n";
    }
    telemetry::ParseStats stats;
    telemetry::ParseText(telemetry::InputFormat::kPrometheus, text, {}, **w, stats);
    ASSERT_TRUE((*w)->Finish().ok());
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> rows;
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2((*l)->db(), "SELECT samples, inserted FROM ingests ORDER BY id", -1, &st, nullptr),
            SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) rows.emplace_back(sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1));
  sqlite3_finalize(st);
  EXPECT_EQ(rows, (std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {2, 2}, {3, 3}}));
}

// Issue 26: distinct series are capped; past the cap the batch fails naming the cap, known
// series stay writable, and the writer's series cache stays at the cap.
TEST(LedgerTest, DistinctSeriesAreCapped) {
  std::string path = TempDb("series_cap.db");
  auto l = Ledger::Open(path);
  ASSERT_TRUE(l.has_value());
  constexpr std::size_t kCap = 1000;
  auto w = (*l)->NewSampleWriter("otlp", SIZE_MAX, nullptr);
  ASSERT_TRUE(w.has_value());
  (*w)->set_max_series(kCap);
  auto push = [&](int from, int to, std::int64_t ts) {
    std::string text;
    for (int i = from; i < to; ++i) text += "x{UUID=\"GPU-" + std::to_string(i) + "\"} 1 " + std::to_string(ts) + "\n";
    telemetry::ParseStats stats;
    telemetry::ParseText(telemetry::InputFormat::kPrometheus, text, {}, **w, stats);
    return (*w)->Finish();
  };
  ASSERT_TRUE(push(0, 1000, 1000).ok());
  EXPECT_EQ((*w)->series_cached(), kCap);
  // 10,000 new series: refused, naming the cap; nothing of the batch is kept.
  Status over = push(1000, 11'000, 2000);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(over.message(), HasSubstr("the cap (server.limits.max_series) is 1000"));
  EXPECT_LE((*w)->series_cached(), kCap);
  (void)sqlite3_exec((*l)->db(), "ROLLBACK", nullptr, nullptr, nullptr);
  // A fresh writer (the server's, after the failed batch) knows the same 1000 and writes them.
  auto again = (*l)->NewSampleWriter("otlp", SIZE_MAX, nullptr);
  ASSERT_TRUE(again.has_value());
  (*again)->set_max_series(kCap);
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "x{UUID=\"GPU-" + std::to_string(i) + "\"} 2 3000\n";
  telemetry::ParseStats stats;
  telemetry::ParseText(telemetry::InputFormat::kPrometheus, text, {}, **again, stats);
  ASSERT_TRUE((*again)->Finish().ok());
  EXPECT_EQ((*again)->series_cached(), kCap);
  EXPECT_EQ(*(*l)->CountSamples(), 2000);
}

// NaN and ±Inf samples (accepted in the text formats) are stored without a value.
TEST(LedgerTest, NonFiniteSamplesHaveNoValue) {
  std::string path = TempDb("nonfinite.db");
  auto l = Ledger::Open(path);
  ASSERT_TRUE(l.has_value());
  auto w = (*l)->NewSampleWriter("t.prom", 10, nullptr);
  ASSERT_TRUE(w.has_value());
  telemetry::ParseStats stats;
  telemetry::ParseText(telemetry::InputFormat::kPrometheus,
                       "x{UUID=\"GPU-1\"} +Inf 1000\nx{UUID=\"GPU-1\"} NaN 2000\nx{UUID=\"GPU-1\"} 5 3000\n",
                       {}, **w, stats);
  ASSERT_EQ(stats.rejected, 0u);
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ(*(*l)->CountSamples(), 3);
  std::vector<double> values;
  ASSERT_TRUE((*l)->ForEachSample([&](std::string_view, std::int64_t, double v) { values.push_back(v); }).ok());
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0], 5.0);
}

// A counter's mean rate over the range, per series, with a reset counted from zero: 0 -> 30 ->
// (reset) 5 -> 35 over 180 s is 30 + 5 + 30 = 65 s of increase, 0.361 per second.
TEST(LedgerTest, CounterRatesCountResetsFromZero) {
  std::string path = TempDb("counter.db");
  auto l = Ledger::Open(path);
  ASSERT_TRUE(l.has_value());
  auto w = (*l)->NewSampleWriter("c.prom", 10, nullptr);
  ASSERT_TRUE(w.has_value());
  telemetry::ParseStats stats;
  const std::string k = "io_wait_total{pod=\"p-0\",namespace=\"ns\",container=\"main\"}";
  const std::string other = "other_total{pod=\"p-0\",namespace=\"ns\"}";
  telemetry::ParseText(telemetry::InputFormat::kPrometheus,
                       k + " 0 0\n" + k + " 30 60000\n" + k + " 5 120000\n" + k + " 35 180000\n" +
                           k + " 99 240000\n" + other + " 7 0\n" + other + " 70 60000\n",
                       {}, **w, stats);
  ASSERT_EQ(stats.rejected, 0u);
  ASSERT_TRUE((*w)->Finish().ok());
  auto r = (*l)->CounterRates("io_wait_total", 0, 240000);  // the 240 s sample is outside
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].pod, "p-0");
  EXPECT_EQ((*r)[0].namespace_name, "ns");
  EXPECT_EQ((*r)[0].samples, 4);
  EXPECT_NEAR((*r)[0].rate_per_s, 65.0 / 180.0, 1e-12);
  EXPECT_TRUE((*l)->CounterRates("absent_total", 0, 240000)->empty());
}

// The series of a metric with a sample in the range, each with its full key (annotations kept).
TEST(LedgerTest, SeriesOfKeepsEveryLabel) {
  auto l = Ledger::Open(TempDb("series_of.db"));
  ASSERT_TRUE(l.has_value());
  auto w = (*l)->NewSampleWriter("a.prom", 10, nullptr);
  ASSERT_TRUE(w.has_value());
  telemetry::ParseStats stats;
  const std::string a =
      "kube_pod_annotations{namespace=\"ns\",pod=\"p-0\",annotation_seedance_io_deadline=\"12h\"}";
  const std::string b = "kube_pod_annotations{namespace=\"ns\",pod=\"p-1\"}";
  telemetry::ParseText(telemetry::InputFormat::kPrometheus,
                       a + " 1 0\n" + a + " 1 60000\n" + b + " 1 120000\n" + "other{pod=\"p-0\"} 1 0\n", {},
                       **w, stats);
  ASSERT_EQ(stats.rejected, 0u);
  ASSERT_TRUE((*w)->Finish().ok());
  auto r = (*l)->SeriesOf("kube_pod_annotations", 0, 120000);  // p-1's only sample is outside
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].pod, "p-0");
  EXPECT_EQ((*r)[0].namespace_name, "ns");
  EXPECT_NE((*r)[0].key.find("annotation_seedance_io_deadline=\"12h\""), std::string::npos) << (*r)[0].key;
  EXPECT_EQ((*r)[0].first_ms, 0);
  EXPECT_EQ((*r)[0].last_ms, 60000);
  EXPECT_EQ((*l)->SeriesOf("kube_pod_annotations", 0, 200000)->size(), 2u);
}

TEST(LedgerTest, RecordsNodeIntervalsAndReconciles) {
  auto l = Ledger::Open(TempDb("charges.db"));
  ASSERT_TRUE(l.has_value());
  Ledger& ledger = **l;
  NodeBill bill{0, 3'600'000, "node-1", MicroUsd(10'000'001)};
  std::vector<ChargeRecord> cs = {
      {0, 3'600'000, "node-1", ChargeKind::kWorkload, Dims("p1", "a", "acme", "gold"),
       MicroUsd(5'000'000), 3'600'000},
      {0, 3'600'000, "node-1", ChargeKind::kIdle, Dims("p1", "a", "acme", "gold"),
       MicroUsd(1'000'000), 0},
      {0, 3'600'000, "node-1", ChargeKind::kWorkload, Dims("p2", "b", "beta", "bronze"),
       MicroUsd(2'000'000), 1'800'000},
      {0, 3'600'000, "node-1", ChargeKind::kIdle, {}, MicroUsd(1'500'001), 0},
      {0, 3'600'000, "node-1", ChargeKind::kOverhead, {}, MicroUsd(500'000), 0},
  };
  ASSERT_TRUE(ledger.RecordNodeInterval(bill, cs).ok());
  // Recording the same interval again replaces it.
  ASSERT_TRUE(ledger.RecordNodeInterval(bill, cs).ok());
  std::vector<ChargeRecord> bad = cs;
  bad[0].cost = MicroUsd(1);
  Status s = ledger.RecordNodeInterval(bill, bad);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("the bill is 10000001"));

  auto rep = ledger.Attribute(Dimension::kTenant, 0, 3'600'000, false);
  ASSERT_TRUE(rep.has_value()) << rep.error().ToString();
  ASSERT_EQ(rep->rows.size(), 2u);
  EXPECT_EQ(rep->rows[0].key, "acme");
  EXPECT_EQ(rep->rows[0].cost, MicroUsd(6'000'000));
  EXPECT_EQ(rep->rows[0].gpu_ms, 3'600'000);
  EXPECT_EQ(rep->rows[1].key, "beta");
  const Reconciliation& r = rep->reconciliation;
  EXPECT_EQ(r.bill, MicroUsd(10'000'001));
  EXPECT_EQ(r.attributed, MicroUsd(8'000'000));
  EXPECT_EQ(r.idle, MicroUsd(1'500'001));
  EXPECT_EQ(r.overhead, MicroUsd(500'000));
  EXPECT_EQ(r.idle_shared, MicroUsd(1'000'000));
  EXPECT_TRUE(r.exact());

  auto tiers = ledger.Attribute(Dimension::kSlaTier, 0, 3'600'000, true);
  ASSERT_TRUE(tiers.has_value());
  ASSERT_EQ(tiers->rows.size(), 2u);
  EXPECT_EQ(tiers->rows[0].key, "bronze");
  EXPECT_EQ(tiers->rows[0].hour_ms, 0);
  auto by_tenant = ledger.CostByTenant(0, 3'600'000);
  ASSERT_TRUE(by_tenant.has_value());
  EXPECT_EQ(by_tenant->size(), 2u);
  // Outside the range: nothing.
  auto later = ledger.Attribute(Dimension::kTenant, 3'600'000, 7'200'000, false);
  EXPECT_TRUE(later->rows.empty());
  EXPECT_EQ(later->reconciliation.bill, Money());
}

TEST(LedgerTest, SimulatorApiRecordsAllocatedIntervalsAndReportsCostByTenant) {
  auto l = Ledger::Open(TempDb("sim.db"));
  ASSERT_TRUE(l.has_value());
  std::vector<WorkloadDims> dims = {Dims("a-0", "ns-a", "alpha", "gold"),
                                    Dims("b-0", "ns-b", "beta", "gold")};
  auto lookup = [&](std::uint32_t id) -> const WorkloadDims& { return dims[id - 1]; };
  for (int t = 0; t < 60; ++t) {
    std::vector<GpuUse> uses = {{1, 2000, 1500, 1000, false}, {2, 1000, 200, 1000, false}};
    NodeInterval n{t * 60'000LL, (t + 1) * 60'000LL, 0, MicroUsd(100'001), 4000, 0, uses};
    ASSERT_TRUE(RecordAllocatedInterval(**l, n, IdleShare::kByUsage, "sim-node", lookup).ok());
  }
  auto tenants = (*l)->CostByTenant(0, 3'600'000);
  ASSERT_TRUE(tenants.has_value());
  ASSERT_EQ(tenants->size(), 2u);
  EXPECT_EQ((*tenants)[0].key, "alpha");
  EXPECT_EQ((*tenants)[0].gpu_ms, 2 * 3'600'000);
  EXPECT_EQ((*tenants)[0].cost + (*tenants)[1].cost, MicroUsd(60 * 100'001));  // idle shared
  auto rep = (*l)->Attribute(Dimension::kTenant, 0, 3'600'000, false);
  EXPECT_TRUE(rep->reconciliation.exact());
  EXPECT_EQ(rep->reconciliation.idle, Money());
}


// Issue 38: with idle_share usage, the idle of a node that ran nothing is shared too (it was
// left as idle while the output said idle was apportioned). One node runs alpha (3 GPUs held) and
// beta (1), the other runs nothing for the hour; its whole bill is spread over alpha and beta by
// cost, exactly, and nothing stays idle.
TEST(LedgerTest, IdleOfAnEmptyNodeIsSpreadToo) {
  auto l = Ledger::Open(TempDb("empty_node.db"));
  ASSERT_TRUE(l.has_value());
  std::vector<WorkloadDims> dims = {Dims("a-0", "ns-a", "alpha", "gold"), Dims("b-0", "ns-b", "beta", "gold")};
  auto lookup = [&](std::uint32_t id) -> const WorkloadDims& { return dims[id - 1]; };
  for (int t = 0; t < 60; ++t) {
    std::vector<GpuUse> busy = {{1, 3000, 3000, 1000, false}, {2, 1000, 1000, 1000, false}};
    NodeInterval used{t * 60'000LL, (t + 1) * 60'000LL, 0, MicroUsd(100'000), 4000, 0, busy};
    ASSERT_TRUE(RecordAllocatedInterval(**l, used, IdleShare::kByUsage, "busy-node", lookup).ok());
    NodeInterval empty{t * 60'000LL, (t + 1) * 60'000LL, 1, MicroUsd(50'001), 4000, 0, {}};
    ASSERT_TRUE(RecordAllocatedInterval(**l, empty, IdleShare::kByUsage, "empty-node", lookup).ok());
  }
  // Without spreading (what main did): the empty node's $3.00006 stays idle.
  auto kept = (*l)->Attribute(Dimension::kTenant, 0, 3'600'000, false);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->reconciliation.idle, MicroUsd(60 * 50'001));
  auto rep = (*l)->Attribute(Dimension::kTenant, 0, 3'600'000, false, /*spread_empty_idle=*/true);
  ASSERT_TRUE(rep.has_value()) << rep.error().ToString();
  const Reconciliation& r = rep->reconciliation;
  EXPECT_EQ(r.idle, Money());
  EXPECT_EQ(r.idle_spread, MicroUsd(60 * 50'001));
  EXPECT_EQ(r.attributed, MicroUsd(60 * 150'001));
  EXPECT_TRUE(r.exact());
  ASSERT_EQ(rep->rows.size(), 2u);
  // alpha held 3/4 of the busy node: $4.50 of its bill and 3/4 of the empty node's $3.00006.
  EXPECT_EQ(rep->rows[0].key, "alpha");
  EXPECT_EQ(rep->rows[0].cost, MicroUsd(4'500'000 + 2'250'045));
  EXPECT_EQ(rep->rows[1].cost, MicroUsd(1'500'000 + 750'015));
  // Hourly: the spread stays in its hour.
  auto hourly = (*l)->Attribute(Dimension::kTenant, 0, 3'600'000, true, true);
  ASSERT_TRUE(hourly.has_value());
  EXPECT_EQ(hourly->reconciliation.idle, Money());
  EXPECT_EQ(hourly->rows[0].cost + hourly->rows[1].cost, MicroUsd(60 * 150'001));
  auto tenants = (*l)->CostByTenant(0, 3'600'000, true);
  ASSERT_TRUE(tenants.has_value());
  EXPECT_EQ((*tenants)[0].cost, rep->rows[0].cost);
}

TEST(FocusTest, ExportHasTheMandatoryColumnsWithTheRightTypes) {
  auto l = Ledger::Open(TempDb("focus.db"));
  ASSERT_TRUE(l.has_value());
  Ledger& ledger = **l;
  const std::int64_t t0 = 1'795'910'400'000;  // 2026-11-29T00:00:00Z
  for (int h = 0; h < 3; ++h) {
    std::int64_t s = t0 + h * 3'600'000;
    NodeBill bill{s, s + 3'600'000, "node-1", MicroUsd(2'990'000)};
    std::vector<ChargeRecord> cs = {
        {s, s + 3'600'000, "node-1", ChargeKind::kWorkload, Dims("trainer-0", "ml", "acme", "gold"),
         MicroUsd(1'990'000), 3'600'000},
        {s, s + 3'600'000, "node-1", ChargeKind::kIdle, {}, MicroUsd(1'000'000), 1'800'000}};
    ASSERT_TRUE(ledger.RecordNodeInterval(bill, cs).ok());
  }
  std::string out = ::testing::TempDir() + "/focus_" + std::to_string(::getpid()) + ".csv";
  ASSERT_TRUE(ExportFocus(ledger, 0, INT64_MAX, out).ok());
  auto table = CsvTable::ReadFile(out);
  ASSERT_TRUE(table.has_value()) << table.error().ToString();
  for (const char* col :
       {"BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "BillingCurrency",
        "BillingAccountId", "BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart",
        "ChargePeriodEnd", "ChargeCategory", "ChargeClass", "ChargeDescription", "PricingQuantity",
        "PricingUnit", "ProviderName", "PublisherName", "InvoiceIssuerName", "ServiceName",
        "ServiceCategory", "Tags"}) {
    EXPECT_GE(table->FindColumn(col), 0) << col;
  }
  for (const std::string& h : table->header()) {
    bool focus = std::find(FocusColumns().begin(), FocusColumns().end(), h) != FocusColumns().end();
    EXPECT_TRUE(focus);
    if (h.rfind("x_", 0) != 0) {
      EXPECT_TRUE(std::isupper(static_cast<unsigned char>(h[0]))) << h;
    }
  }
  ASSERT_EQ(table->rows().size(), 6u);
  const std::regex decimal(R"(^-?[0-9]+(\.[0-9]+)?$)");
  const std::regex datetime(R"(^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$)");
  std::int64_t billed = 0;
  for (const auto& row : table->rows()) {
    for (const char* c : {"BilledCost", "EffectiveCost", "ListCost", "ContractedCost",
                          "PricingQuantity", "ConsumedQuantity"}) {
      std::string v(table->Str(row, static_cast<std::size_t>(table->FindColumn(c))));
      EXPECT_TRUE(std::regex_match(v, decimal)) << c << "=" << v;
    }
    for (const char* c : {"BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart",
                          "ChargePeriodEnd"}) {
      std::string v(table->Str(row, static_cast<std::size_t>(table->FindColumn(c))));
      EXPECT_TRUE(std::regex_match(v, datetime)) << c << "=" << v;
    }
    auto col = [&](const char* c) {
      return std::string(table->Str(row, static_cast<std::size_t>(table->FindColumn(c))));
    };
    EXPECT_EQ(col("BillingCurrency"), "USD");
    EXPECT_EQ(col("ChargeCategory"), "Usage");
    EXPECT_EQ(col("ChargeClass"), "");
    EXPECT_EQ(col("BillingPeriodStart"), "2026-11-01T00:00:00Z");
    EXPECT_EQ(col("BillingPeriodEnd"), "2026-12-01T00:00:00Z");
    auto tags = nlohmann::json::parse(col("Tags"), nullptr, false);
    ASSERT_TRUE(tags.is_object()) << col("Tags");
    for (const auto& [k, v] : tags.items()) EXPECT_TRUE(v.is_primitive()) << k;
    std::string billed_text = col("BilledCost");
    std::size_t dot = billed_text.find('.');
    billed += std::stoll(billed_text.substr(0, dot)) * 1'000'000 + std::stoll(billed_text.substr(dot + 1));
  }
  EXPECT_EQ(billed, 3 * 2'990'000);  // BilledCost sums to the bill
  EXPECT_EQ(DecimalUsd(MicroUsd(-1)), "-0.000001");
  EXPECT_EQ(DecimalUsd(Usd(12) + MicroUsd(400'000)), "12.400000");
}

TEST(EventsCsvTest, LoadsAndRejectsWithFileLineAndField) {
  std::string path = ::testing::TempDir() + "/events_" + std::to_string(::getpid()) + ".csv";
  {
    std::ofstream f(path);
    f << "gpu_uuid,start,end,pod,namespace,pid,job,request_milli,batch_size,precision\n"
         "GPU-1,2026-11-29T00:00:00Z,2026-11-29T01:00:00Z,p,a,,j,500,32,bf16\n";
  }
  auto ev = LoadEventsCsv(path);
  ASSERT_TRUE(ev.has_value()) << ev.error().ToString();
  ASSERT_EQ(ev->size(), 1u);
  EXPECT_EQ((*ev)[0].start_ms, 1'795'910'400'000);
  EXPECT_EQ((*ev)[0].request_milli, 500);
  EXPECT_EQ((*ev)[0].precision, "bf16");
  {
    std::ofstream f(path);
    f << "gpu_uuid,start,end,pod\nGPU-1,2026-11-29T00:00:00Z,yesterday,p\n";
  }
  ev = LoadEventsCsv(path);
  ASSERT_FALSE(ev.has_value());
  EXPECT_THAT(ev.error().message(), HasSubstr(":2:"));
  EXPECT_THAT(ev.error().message(), HasSubstr("field 'end'"));
}

}  // namespace
}  // namespace seedance::ledger
