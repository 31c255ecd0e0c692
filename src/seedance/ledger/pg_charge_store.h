#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/ledger/ledger.h"

struct pg_conn;

namespace seedance::ledger {

// PgChargeStore: the charge ledger (node bills and the charges that split them) in PostgreSQL,
// for deployments where several writers share one ledger. Same contract as the SQLite Ledger's
// charge side: RecordNodeInterval refuses charges that do not sum to the bill; recording an
// interval again replaces it; writes go into one open transaction committed by Flush() (and
// every 10,000 rows). Schema versioned in table seedance_schema, migrations applied in order.
// Telemetry samples stay in the SQLite ledger.
// Thread-safety: one store per thread (one libpq connection).
class PgChargeStore final : public ChargeSink {
 public:
  static constexpr int kSchemaVersion = 1;

  // Connects with a libpq connection string ("host=127.0.0.1 port=15432 user=postgres" or a
  // postgresql:// URI) and migrates. Errors: kUnavailable (cannot connect), kInternal.
  static Result<std::unique_ptr<PgChargeStore>> Open(const std::string& conninfo);
  ~PgChargeStore() override;
  PgChargeStore(const PgChargeStore&) = delete;
  PgChargeStore& operator=(const PgChargeStore&) = delete;

  void set_source(std::string source) { source_ = std::move(source); }
  Status RecordNodeInterval(const NodeBill& bill, std::span<const ChargeRecord> charges) override;
  Status Flush();
  // Deletes every charge and bill (tests).
  Status Clear();

  Result<int> SchemaVersion();
  Result<std::vector<AttributionRow>> CostByTenant(std::int64_t from_ms, std::int64_t to_ms);
  Result<Reconciliation> Reconcile(std::int64_t from_ms, std::int64_t to_ms);

 private:
  explicit PgChargeStore(pg_conn* conn) : conn_(conn) {}
  Status Exec(const std::string& sql, const std::vector<std::string>& params = {});
  Result<std::vector<std::vector<std::string>>> Query(const std::string& sql,
                                                      const std::vector<std::string>& params);
  Status Begin();

  pg_conn* conn_;
  std::string source_ = "sim";
  bool in_transaction_ = false;
  std::size_t pending_ = 0;
};

}  // namespace seedance::ledger
