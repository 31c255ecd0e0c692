#include "seedance/ledger/admission_log.h"

#include <sqlite3.h>

#include "seedance/ledger/internal/sqlite.h"
#include "seedance/ledger/ledger.h"

namespace seedance::ledger {

using internal::Exec;
using internal::Stmt;

namespace {

constexpr const char* kWorkloadColumns =
    "id,namespace,name,uid,tenant,tier,priority,request,creation_s,state,admitted_at_s,evicted_for,"
    "created_ms,updated_ms";
constexpr const char* kDecisionColumns = "seq,workload_id,namespace,name,uid,kind,reason,detail,at_ms";

AdmissionWorkloadRow ReadWorkload(const Stmt& st) {
  AdmissionWorkloadRow w;
  w.id = st.Int(0);
  w.namespace_name = st.Text(1);
  w.name = st.Text(2);
  w.uid = st.Text(3);
  w.tenant = st.Text(4);
  w.tier = st.Text(5);
  w.priority = static_cast<int>(st.Int(6));
  w.request_json = st.Text(7);
  w.creation_s = st.Double(8);
  w.state = st.Text(9);
  w.admitted_at_s = st.Double(10);
  w.evicted_for = st.Int(11);
  w.created_ms = st.Int(12);
  w.updated_ms = st.Int(13);
  return w;
}

AdmissionDecisionRow ReadDecision(const Stmt& st) {
  AdmissionDecisionRow d;
  d.seq = st.Int(0);
  d.workload_id = st.Int(1);
  d.namespace_name = st.Text(2);
  d.name = st.Text(3);
  d.uid = st.Text(4);
  d.kind = st.Text(5);
  d.reason = st.Text(6);
  d.detail_json = st.Text(7);
  d.at_ms = st.Int(8);
  return d;
}

template <typename Row, typename Read>
Result<std::vector<Row>> ReadAll(Stmt& st, Read read) {
  std::vector<Row> out;
  while (true) {
    auto row = st.Step();
    if (!row.has_value()) {
      st.Reset();
      return row.error();
    }
    if (!*row) break;
    out.push_back(read(st));
  }
  st.Reset();
  return out;
}

// The SQLite backend: the ledger file's tables (migration 4), one replica.
class SqliteAdmissionLog final : public AdmissionLog {
 public:
  static Result<std::unique_ptr<AdmissionLog>> Open(const std::string& path);
  ~SqliteAdmissionLog() override { stmts_.reset(); }

  Result<std::int64_t> TakeOver(const std::string& /*holder*/, std::int64_t /*now_ms*/) override { return 1; }
  bool fenced() const override { return false; }
  Status Commit(std::span<const AdmissionWorkloadRow> workloads, std::span<AdmissionDecisionRow> decisions) override;
  Result<std::vector<AdmissionWorkloadRow>> Live() override;
  Result<std::optional<AdmissionWorkloadRow>> Latest(const std::string& namespace_name,
                                                     const std::string& name) override;
  Result<std::optional<AdmissionWorkloadRow>> ByUid(const std::string& namespace_name, const std::string& name,
                                                    const std::string& uid) override;
  Result<std::vector<AdmissionDecisionRow>> History(std::int64_t workload_id) override;
  Result<std::vector<AdmissionDecisionRow>> DecisionsSince(std::int64_t after, std::size_t limit) override;
  Result<std::int64_t> MaxWorkloadId() override;
  Result<std::int64_t> LastSeq() override;

 private:
  struct Statements {
    Stmt upsert_workload, insert_decision, live, latest, by_uid, history, since, max_id, last_seq;
  };
  explicit SqliteAdmissionLog(std::unique_ptr<Ledger> ledger)
      : ledger_(std::move(ledger)), stmts_(std::make_unique<Statements>()) {}
  std::unique_ptr<Ledger> ledger_;
  std::unique_ptr<Statements> stmts_;
};

}  // namespace

bool AdmissionLog::IsPostgresUrl(const std::string& path) {
  return path.rfind("postgresql://", 0) == 0 || path.rfind("postgres://", 0) == 0;
}

Result<std::unique_ptr<AdmissionLog>> AdmissionLog::Open(const std::string& path) {
  if (IsPostgresUrl(path)) {
#ifdef SEEDANCE_HAVE_POSTGRESQL
    return OpenPgAdmissionLog(path);
#else
    return FailedPreconditionError("--db " + path + ": this build has no PostgreSQL client (libpq)");
#endif
  }
  return SqliteAdmissionLog::Open(path);
}

namespace {

Result<std::unique_ptr<AdmissionLog>> SqliteAdmissionLog::Open(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(auto ledger, Ledger::Open(path));
  std::unique_ptr<SqliteAdmissionLog> log(new SqliteAdmissionLog(std::move(ledger)));
  sqlite3* db = log->ledger_->db();
  Statements& s = *log->stmts_;
  const std::string w = kWorkloadColumns, d = kDecisionColumns;
  SEEDANCE_RETURN_IF_ERROR(s.upsert_workload.Prepare(
      db, ("INSERT OR REPLACE INTO admission_workloads(" + w +
           ") VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)").c_str()));
  SEEDANCE_RETURN_IF_ERROR(s.insert_decision.Prepare(
      db, "INSERT INTO admission_decisions(workload_id,namespace,name,uid,kind,reason,detail,at_ms) "
          "VALUES(?1,?2,?3,?4,?5,?6,?7,?8)"));
  SEEDANCE_RETURN_IF_ERROR(s.live.Prepare(
      db, ("SELECT " + w +
           " FROM admission_workloads WHERE state IN ('pending', 'admitted', 'evicting') ORDER BY id").c_str()));
  SEEDANCE_RETURN_IF_ERROR(s.latest.Prepare(
      db, ("SELECT " + w + " FROM admission_workloads WHERE namespace=?1 AND name=?2 ORDER BY id DESC LIMIT 1")
              .c_str()));
  SEEDANCE_RETURN_IF_ERROR(s.by_uid.Prepare(
      db, ("SELECT " + w +
           " FROM admission_workloads WHERE namespace=?1 AND name=?2 AND uid=?3 ORDER BY id DESC LIMIT 1")
              .c_str()));
  SEEDANCE_RETURN_IF_ERROR(s.history.Prepare(
      db, ("SELECT " + d + " FROM admission_decisions WHERE workload_id=?1 ORDER BY seq").c_str()));
  SEEDANCE_RETURN_IF_ERROR(s.since.Prepare(
      db, ("SELECT " + d + " FROM admission_decisions WHERE seq>?1 ORDER BY seq LIMIT ?2").c_str()));
  SEEDANCE_RETURN_IF_ERROR(s.max_id.Prepare(db, "SELECT COALESCE(MAX(id), 0) FROM admission_workloads"));
  SEEDANCE_RETURN_IF_ERROR(s.last_seq.Prepare(db, "SELECT COALESCE(MAX(seq), 0) FROM admission_decisions"));
  return std::unique_ptr<AdmissionLog>(std::move(log));
}

Status SqliteAdmissionLog::Commit(std::span<const AdmissionWorkloadRow> workloads,
                            std::span<AdmissionDecisionRow> decisions) {
  if (workloads.empty() && decisions.empty()) return Status::Ok();
  sqlite3* db = ledger_->db();
  // IMMEDIATE: takes the write lock first, so a busy ledger fails here, before any row.
  SEEDANCE_RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE"));
  auto write = [&]() -> Status {
    Stmt& up = stmts_->upsert_workload;
    for (const auto& w : workloads) {
      up.Bind(1, w.id);
      up.Bind(2, std::string_view(w.namespace_name));
      up.Bind(3, std::string_view(w.name));
      up.Bind(4, std::string_view(w.uid));
      up.Bind(5, std::string_view(w.tenant));
      up.Bind(6, std::string_view(w.tier));
      up.Bind(7, static_cast<std::int64_t>(w.priority));
      up.Bind(8, std::string_view(w.request_json));
      up.Bind(9, w.creation_s);
      up.Bind(10, std::string_view(w.state));
      up.Bind(11, w.admitted_at_s);
      up.Bind(12, w.evicted_for);
      up.Bind(13, w.created_ms);
      up.Bind(14, w.updated_ms);
      SEEDANCE_RETURN_IF_ERROR(up.Run());
    }
    Stmt& ins = stmts_->insert_decision;
    for (auto& d : decisions) {
      ins.Bind(1, d.workload_id);
      ins.Bind(2, std::string_view(d.namespace_name));
      ins.Bind(3, std::string_view(d.name));
      ins.Bind(4, std::string_view(d.uid));
      ins.Bind(5, std::string_view(d.kind));
      ins.Bind(6, std::string_view(d.reason));
      ins.Bind(7, std::string_view(d.detail_json.empty() ? std::string_view("{}") : std::string_view(d.detail_json)));
      ins.Bind(8, d.at_ms);
      SEEDANCE_RETURN_IF_ERROR(ins.Run());
      d.seq = sqlite3_last_insert_rowid(db);
    }
    return Exec(db, "COMMIT");
  };
  Status st = write();
  if (!st.ok()) {
    (void)Exec(db, "ROLLBACK");
    for (auto& d : decisions) d.seq = 0;
  }
  return st;
}

Result<std::vector<AdmissionWorkloadRow>> SqliteAdmissionLog::Live() {
  return ReadAll<AdmissionWorkloadRow>(stmts_->live, ReadWorkload);
}

Result<std::optional<AdmissionWorkloadRow>> SqliteAdmissionLog::Latest(const std::string& namespace_name,
                                                                  const std::string& name) {
  Stmt& st = stmts_->latest;
  st.Bind(1, std::string_view(namespace_name));
  st.Bind(2, std::string_view(name));
  SEEDANCE_ASSIGN_OR_RETURN(auto rows, ReadAll<AdmissionWorkloadRow>(st, ReadWorkload));
  if (rows.empty()) return std::optional<AdmissionWorkloadRow>();
  return std::optional<AdmissionWorkloadRow>(std::move(rows.front()));
}

Result<std::optional<AdmissionWorkloadRow>> SqliteAdmissionLog::ByUid(const std::string& namespace_name,
                                                                 const std::string& name, const std::string& uid) {
  Stmt& st = stmts_->by_uid;
  st.Bind(1, std::string_view(namespace_name));
  st.Bind(2, std::string_view(name));
  st.Bind(3, std::string_view(uid));
  SEEDANCE_ASSIGN_OR_RETURN(auto rows, ReadAll<AdmissionWorkloadRow>(st, ReadWorkload));
  if (rows.empty()) return std::optional<AdmissionWorkloadRow>();
  return std::optional<AdmissionWorkloadRow>(std::move(rows.front()));
}

Result<std::vector<AdmissionDecisionRow>> SqliteAdmissionLog::History(std::int64_t workload_id) {
  Stmt& st = stmts_->history;
  st.Bind(1, workload_id);
  return ReadAll<AdmissionDecisionRow>(st, ReadDecision);
}

Result<std::vector<AdmissionDecisionRow>> SqliteAdmissionLog::DecisionsSince(std::int64_t after, std::size_t limit) {
  Stmt& st = stmts_->since;
  st.Bind(1, after);
  st.Bind(2, static_cast<std::int64_t>(limit));
  return ReadAll<AdmissionDecisionRow>(st, ReadDecision);
}

Result<std::int64_t> SqliteAdmissionLog::MaxWorkloadId() {
  Stmt& st = stmts_->max_id;
  SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
  const std::int64_t v = row ? st.Int(0) : 0;
  st.Reset();
  return v;
}

Result<std::int64_t> SqliteAdmissionLog::LastSeq() {
  Stmt& st = stmts_->last_seq;
  SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
  const std::int64_t v = row ? st.Int(0) : 0;
  st.Reset();
  return v;
}

}  // namespace
}  // namespace seedance::ledger
