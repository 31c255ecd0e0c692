#pragma once

#include <memory>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/ledger/internal/pg.h"
#include "seedance/ledger/ledger.h"

namespace seedance::ledger {

// PgChargeStore: the charge ledger (node bills and the charges that split them) in PostgreSQL,
// for deployments where several writers share one ledger. Same contract as the SQLite Ledger's
// charge side: RecordNodeInterval refuses charges that do not sum to the bill; recording an
// interval again replaces it; writes go into one open transaction committed by Flush() (and
// every 10,000 rows). Schema versioned in table seedance_schema, migrations applied in order
// (internal/pg.h; the admission log's PostgreSQL backend shares them).
// Telemetry samples stay in the SQLite ledger.
// Thread-safety: one store per thread (one libpq connection).
class PgChargeStore final : public ChargeSink {
 public:
  static constexpr int kSchemaVersion = internal::kPgSchemaVersion;

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
  explicit PgChargeStore(std::unique_ptr<internal::PgConn> conn) : conn_(std::move(conn)) {}
  Status Exec(const std::string& sql, const std::vector<std::string>& params = {}) {
    return conn_->Exec(sql, params);
  }
  Result<internal::PgConn::Rows> Query(const std::string& sql, const std::vector<std::string>& params) {
    return conn_->Query(sql, params);
  }
  Status Begin();

  std::unique_ptr<internal::PgConn> conn_;
  std::string source_ = "sim";
  bool in_transaction_ = false;
  std::size_t pending_ = 0;
};

}  // namespace seedance::ledger
