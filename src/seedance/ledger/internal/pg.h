#pragma once

// One libpq connection and the PostgreSQL ledger's schema (internal to ledger/): the charge
// store (PgChargeStore) and the admission log's PostgreSQL backend share the database, its
// versioned migrations (table seedance_schema) and this helper. Values travel as text.
// Thread-compatible: one connection per thread.

#include <memory>
#include <string>
#include <vector>

#include "seedance/core/status.h"

struct pg_conn;

namespace seedance::ledger::internal {

// Migrations applied in order: 1 = charges and bills, 2 = admission workloads, decisions, epoch.
inline constexpr int kPgSchemaVersion = 2;

class PgConn {
 public:
  using Rows = std::vector<std::vector<std::string>>;

  // Connects ("host=.. port=.." or a postgresql:// URI) and migrates to kPgSchemaVersion.
  // Errors: kUnavailable (cannot connect), kFailedPrecondition (a newer schema), kInternal.
  static Result<std::unique_ptr<PgConn>> Open(const std::string& conninfo);
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  // One statement with $1.. parameters. Errors: kUnavailable when the connection is down,
  // kInternal otherwise (the statement is named).
  Result<Rows> Query(const std::string& sql, const std::vector<std::string>& params = {});
  Status Exec(const std::string& sql, const std::vector<std::string>& params = {});
  Result<int> SchemaVersion();
  // Re-establishes a lost connection (no-op when up). Only between transactions: an open one is
  // gone with the old connection.
  Status Reconnect();

 private:
  explicit PgConn(pg_conn* conn) : conn_(conn) {}
  Status Migrate();
  pg_conn* conn_;
};

}  // namespace seedance::ledger::internal
