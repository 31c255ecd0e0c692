#include "seedance/ledger/internal/pg.h"

#include <libpq-fe.h>

#include <iterator>

namespace seedance::ledger::internal {
namespace {

constexpr const char* kMigrations[] = {
    // 1: the charge ledger (PgChargeStore).
    R"sql(
CREATE TABLE seedance_bills(
  source TEXT NOT NULL, node TEXT NOT NULL, start_ms BIGINT NOT NULL, end_ms BIGINT NOT NULL,
  bill_micro BIGINT NOT NULL, PRIMARY KEY(source, node, start_ms));
CREATE TABLE seedance_charges(
  source TEXT NOT NULL, node TEXT NOT NULL, start_ms BIGINT NOT NULL, kind SMALLINT NOT NULL,
  workload TEXT NOT NULL, namespace TEXT NOT NULL, tenant TEXT NOT NULL,
  business_unit TEXT NOT NULL, task_type TEXT NOT NULL, data_source TEXT NOT NULL,
  sla_tier TEXT NOT NULL, job TEXT NOT NULL, end_ms BIGINT NOT NULL, cost_micro BIGINT NOT NULL,
  gpu_ms BIGINT NOT NULL,
  PRIMARY KEY(source, node, start_ms, kind, workload, namespace));
CREATE INDEX seedance_charges_by_start ON seedance_charges(start_ms);
)sql",
    // 2: the admission log shared by the server's replicas (the SQLite ledger's migration 4, plus
    // the fencing epoch: one row, bumped by each replica that takes over).
    R"sql(
CREATE TABLE seedance_admission_workloads(
  id BIGINT PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL,
  tenant TEXT NOT NULL, tier TEXT NOT NULL, priority INTEGER NOT NULL, request TEXT NOT NULL,
  creation_s DOUBLE PRECISION NOT NULL, state TEXT NOT NULL, admitted_at_s DOUBLE PRECISION NOT NULL,
  evicted_for BIGINT NOT NULL, created_ms BIGINT NOT NULL, updated_ms BIGINT NOT NULL);
CREATE INDEX seedance_admission_workloads_by_name ON seedance_admission_workloads(namespace, name, id);
CREATE INDEX seedance_admission_workloads_live ON seedance_admission_workloads(id)
  WHERE state IN ('pending', 'admitted', 'evicting');
CREATE TABLE seedance_admission_decisions(
  seq BIGSERIAL PRIMARY KEY, workload_id BIGINT NOT NULL, namespace TEXT NOT NULL,
  name TEXT NOT NULL, uid TEXT NOT NULL, kind TEXT NOT NULL, reason TEXT NOT NULL,
  detail TEXT NOT NULL, at_ms BIGINT NOT NULL);
CREATE INDEX seedance_admission_decisions_by_workload ON seedance_admission_decisions(workload_id, seq);
CREATE TABLE seedance_admission_epoch(
  id INTEGER PRIMARY KEY CHECK (id = 1), epoch BIGINT NOT NULL, holder TEXT NOT NULL,
  taken_ms BIGINT NOT NULL);
INSERT INTO seedance_admission_epoch(id, epoch, holder, taken_ms) VALUES(1, 0, '', 0);
)sql",
};
static_assert(std::size(kMigrations) == kPgSchemaVersion);

std::string Trimmed(std::string msg) {
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  return msg;
}

}  // namespace

PgConn::~PgConn() { PQfinish(conn_); }

Result<std::unique_ptr<PgConn>> PgConn::Open(const std::string& conninfo) {
  pg_conn* conn = PQconnectdb(conninfo.c_str());
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    std::string msg = conn != nullptr ? PQerrorMessage(conn) : "out of memory";
    PQfinish(conn);
    return UnavailableError("postgres: cannot connect: " + Trimmed(std::move(msg)));
  }
  std::unique_ptr<PgConn> c(new PgConn(conn));
  SEEDANCE_RETURN_IF_ERROR(c->Exec("SET client_min_messages TO WARNING"));
  SEEDANCE_RETURN_IF_ERROR(c->Migrate());
  return c;
}

Status PgConn::Migrate() {
  SEEDANCE_RETURN_IF_ERROR(Exec("BEGIN"));
  auto migrate = [&]() -> Status {
    // Serializes concurrent migrators (two replicas starting together).
    SEEDANCE_RETURN_IF_ERROR(Exec("SELECT pg_advisory_xact_lock(7361729)"));
    SEEDANCE_RETURN_IF_ERROR(Exec("CREATE TABLE IF NOT EXISTS seedance_schema(version INTEGER NOT NULL)"));
    SEEDANCE_ASSIGN_OR_RETURN(int version, SchemaVersion());
    if (version > kPgSchemaVersion)
      return FailedPreconditionError("postgres ledger schema " + std::to_string(version) +
                                     " is newer than this binary's " + std::to_string(kPgSchemaVersion));
    if (version == kPgSchemaVersion) return Exec("COMMIT");
    for (int v = version; v < kPgSchemaVersion; ++v) SEEDANCE_RETURN_IF_ERROR(Exec(kMigrations[v]));
    SEEDANCE_RETURN_IF_ERROR(Exec("DELETE FROM seedance_schema"));
    SEEDANCE_RETURN_IF_ERROR(
        Exec("INSERT INTO seedance_schema(version) VALUES($1)", {std::to_string(kPgSchemaVersion)}));
    return Exec("COMMIT");
  };
  Status st = migrate();
  if (!st.ok()) (void)Exec("ROLLBACK");
  return st;
}

Status PgConn::Reconnect() {
  if (PQstatus(conn_) == CONNECTION_OK) return Status::Ok();
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK)
    return UnavailableError("postgres: cannot reconnect: " + Trimmed(PQerrorMessage(conn_)));
  return Exec("SET client_min_messages TO WARNING");
}

Result<int> PgConn::SchemaVersion() {
  SEEDANCE_ASSIGN_OR_RETURN(auto rows, Query("SELECT version FROM seedance_schema"));
  if (rows.empty()) return 0;
  return std::stoi(rows[0][0]);
}

Status PgConn::Exec(const std::string& sql, const std::vector<std::string>& params) {
  auto r = Query(sql, params);
  return r.has_value() ? Status::Ok() : r.error();
}

Result<PgConn::Rows> PgConn::Query(const std::string& sql, const std::vector<std::string>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const std::string& p : params) values.push_back(p.c_str());
  PGresult* r = params.empty() ? PQexec(conn_, sql.c_str())
                               : PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr,
                                              values.data(), nullptr, nullptr, 0);
  const ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    std::string msg = Trimmed(r != nullptr ? PQresultErrorMessage(r) : PQerrorMessage(conn_));
    PQclear(r);
    if (PQstatus(conn_) != CONNECTION_OK) return UnavailableError("postgres: " + msg);
    return InternalError("postgres: " + msg + " in: " + sql.substr(0, 80));
  }
  Rows out;
  out.reserve(static_cast<std::size_t>(PQntuples(r)));
  for (int i = 0; i < PQntuples(r); ++i) {
    std::vector<std::string> row;
    row.reserve(static_cast<std::size_t>(PQnfields(r)));
    for (int j = 0; j < PQnfields(r); ++j) row.emplace_back(PQgetvalue(r, i, j));
    out.push_back(std::move(row));
  }
  PQclear(r);
  return out;
}

}  // namespace seedance::ledger::internal
