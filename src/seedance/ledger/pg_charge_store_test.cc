// Runs against a real PostgreSQL server named by $SEEDANCE_PG_CONN (pg_test.sh starts a throwaway
// one on 127.0.0.1); skipped when the variable is unset.
#include "seedance/ledger/pg_charge_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "seedance/core/rng.h"
#include "seedance/core/testing/require_peer.h"

namespace seedance::ledger {
namespace {

const char* Conn() { return std::getenv("SEEDANCE_PG_CONN"); }

TEST(PgChargeStoreTest, UnreachableServerIsUnavailable) {
  auto s = PgChargeStore::Open("host=127.0.0.1 port=1 connect_timeout=2");
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code(), StatusCode::kUnavailable);
}

TEST(PgChargeStoreTest, RecordsReconcilesAndMatchesTheSqliteLedger) {
  SEEDANCE_SKIP_WITHOUT_PEER(Conn() == nullptr) << "SEEDANCE_PG_CONN not set (run through pg_test.sh)";
  auto pg = PgChargeStore::Open(Conn());
  ASSERT_TRUE(pg.has_value()) << pg.error().ToString();
  ASSERT_TRUE((*pg)->Clear().ok());
  EXPECT_EQ(*(*pg)->SchemaVersion(), PgChargeStore::kSchemaVersion);
  std::string dir = ::testing::TempDir() + "/pg_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::filesystem::remove(dir + "/l.db");
  auto lite = Ledger::Open(dir + "/l.db");
  ASSERT_TRUE(lite.has_value());

  // Random node intervals split by AllocateNodeInterval, written to both stores.
  Rng rng(9);
  std::vector<WorkloadDims> dims(6);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    dims[i].name = "pod-" + std::to_string(i);
    dims[i].namespace_name = "ns-" + std::to_string(i % 3);
    dims[i].tenant = "tenant-" + std::to_string(i % 2);
    dims[i].job = dims[i].name;
  }
  std::map<std::pair<int, int>, Money> bills;  // (node, t) -> bill
  for (int t = 0; t < 30; ++t) {
    for (int node = 0; node < 3; ++node) {
      std::vector<GpuUse> uses;
      for (std::uint32_t w = 1; w <= 6; ++w) {
        if (rng.Bernoulli(0.5)) {
          uses.push_back({w, rng.UniformInt(0, 2000), rng.UniformInt(0, 2000), 1000, w == 6});
        }
      }
      NodeInterval n{t * 60'000LL, (t + 1) * 60'000LL, static_cast<std::uint32_t>(node),
                     MicroUsd(rng.UniformInt(0, 5'000'000)), 8000, 400, uses};
      std::vector<Charge> cs;
      AllocateNodeInterval(n, IdleShare::kByUsage, cs);
      NodeBill bill{n.start_ms, n.end_ms, "node-" + std::to_string(node), n.bill};
      std::vector<ChargeRecord> recs;
      for (const Charge& c : cs) {
        ChargeRecord r{c.start_ms, c.end_ms, bill.node, c.kind, {}, c.cost, c.gpu_ms};
        if (c.workload != kNoWorkload) r.workload = dims[c.workload - 1];
        recs.push_back(r);
      }
      ASSERT_TRUE((*pg)->RecordNodeInterval(bill, recs).ok());
      ASSERT_TRUE((*lite)->RecordNodeInterval(bill, recs).ok());
      bills[{node, t}] = n.bill;
    }
  }
  // Re-recording an interval replaces it; a mismatched one is refused.
  NodeBill b0{0, 60'000, "node-0", Usd(1)};
  std::vector<ChargeRecord> one = {{0, 60'000, "node-0", ChargeKind::kIdle, {}, Usd(1), 60'000}};
  ASSERT_TRUE((*pg)->RecordNodeInterval(b0, one).ok());
  ASSERT_TRUE((*lite)->RecordNodeInterval(b0, one).ok());
  bills[{0, 0}] = Usd(1);
  Money total;
  for (const auto& [key, b] : bills) total += b;
  one[0].cost = Usd(2);
  EXPECT_EQ((*pg)->RecordNodeInterval(b0, one).code(), StatusCode::kFailedPrecondition);

  auto rec = (*pg)->Reconcile(0, INT64_MAX);
  ASSERT_TRUE(rec.has_value()) << rec.error().ToString();
  EXPECT_EQ(rec->bill, total);
  EXPECT_TRUE(rec->exact());
  auto lite_rep = (*lite)->Attribute(Dimension::kTenant, 0, INT64_MAX, false);
  ASSERT_TRUE(lite_rep.has_value());
  EXPECT_EQ(lite_rep->reconciliation.bill, rec->bill);
  EXPECT_EQ(lite_rep->reconciliation.attributed, rec->attributed);
  EXPECT_EQ(lite_rep->reconciliation.idle, rec->idle);
  EXPECT_EQ(lite_rep->reconciliation.overhead, rec->overhead);
  auto tenants = (*pg)->CostByTenant(0, INT64_MAX);
  ASSERT_TRUE(tenants.has_value());
  ASSERT_EQ(tenants->size(), lite_rep->rows.size());
  for (std::size_t i = 0; i < tenants->size(); ++i) {
    EXPECT_EQ((*tenants)[i].key, lite_rep->rows[i].key);
    EXPECT_EQ((*tenants)[i].cost, lite_rep->rows[i].cost);
    EXPECT_EQ((*tenants)[i].gpu_ms, lite_rep->rows[i].gpu_ms);
  }
  // Reopening migrates nothing and keeps the data.
  pg->reset();
  auto again = PgChargeStore::Open(Conn());
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ((*again)->Reconcile(0, INT64_MAX)->bill, total);
}

}  // namespace
}  // namespace seedance::ledger
