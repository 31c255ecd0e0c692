// The admission log's PostgreSQL backend (admission_log.h): the tables of internal/pg.cc's
// migration 2, shared by the server's replicas, with the fencing epoch.

#include <fmt/format.h>

#include <charconv>

#include "seedance/ledger/admission_log.h"
#include "seedance/ledger/internal/pg.h"

namespace seedance::ledger {
namespace {

using internal::PgConn;

constexpr const char* kWorkloadColumns =
    "id,namespace,name,uid,tenant,tier,priority,request,creation_s,state,admitted_at_s,evicted_for,"
    "created_ms,updated_ms";
constexpr const char* kDecisionColumns = "seq,workload_id,namespace,name,uid,kind,reason,detail,at_ms";

std::int64_t Int(const std::string& s) {
  std::int64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

double Double(const std::string& s) { return std::strtod(s.c_str(), nullptr); }

// Shortest text that reads back as the same double (PostgreSQL 12+ prints doubles that way too).
std::string DoubleText(double d) { return fmt::format("{}", d); }

AdmissionWorkloadRow WorkloadOf(const std::vector<std::string>& r) {
  AdmissionWorkloadRow w;
  w.id = Int(r[0]);
  w.namespace_name = r[1];
  w.name = r[2];
  w.uid = r[3];
  w.tenant = r[4];
  w.tier = r[5];
  w.priority = static_cast<int>(Int(r[6]));
  w.request_json = r[7];
  w.creation_s = Double(r[8]);
  w.state = r[9];
  w.admitted_at_s = Double(r[10]);
  w.evicted_for = Int(r[11]);
  w.created_ms = Int(r[12]);
  w.updated_ms = Int(r[13]);
  return w;
}

AdmissionDecisionRow DecisionOf(const std::vector<std::string>& r) {
  AdmissionDecisionRow d;
  d.seq = Int(r[0]);
  d.workload_id = Int(r[1]);
  d.namespace_name = r[2];
  d.name = r[3];
  d.uid = r[4];
  d.kind = r[5];
  d.reason = r[6];
  d.detail_json = r[7];
  d.at_ms = Int(r[8]);
  return d;
}

class PgAdmissionLog final : public AdmissionLog {
 public:
  explicit PgAdmissionLog(std::unique_ptr<PgConn> conn) : conn_(std::move(conn)) {}

  Result<std::int64_t> TakeOver(const std::string& holder, std::int64_t now_ms) override {
    SEEDANCE_RETURN_IF_ERROR(conn_->Reconnect());
    SEEDANCE_RETURN_IF_ERROR(conn_->Exec("BEGIN"));
    // FOR UPDATE waits for every Commit holding the row FOR SHARE: once this returns, no replica
    // that took over before can commit again, and what it committed is visible to Live().
    auto bump = conn_->Query(
        "UPDATE seedance_admission_epoch SET epoch=epoch+1, holder=$1, taken_ms=$2 WHERE id=1 RETURNING epoch",
        {holder, std::to_string(now_ms)});
    if (!bump.has_value() || bump->size() != 1) {
      (void)conn_->Exec("ROLLBACK");
      return bump.has_value() ? InternalError("postgres: the admission epoch row is missing") : bump.error();
    }
    SEEDANCE_RETURN_IF_ERROR(conn_->Exec("COMMIT"));
    epoch_ = Int((*bump)[0][0]);
    holder_ = holder;
    fenced_ = false;
    return epoch_;
  }

  bool fenced() const override { return fenced_; }

  Status Commit(std::span<const AdmissionWorkloadRow> workloads, std::span<AdmissionDecisionRow> decisions) override {
    if (workloads.empty() && decisions.empty()) return Status::Ok();
    if (epoch_ <= 0)
      return FailedPreconditionError("admission log: this replica has not taken over the PostgreSQL log (TakeOver)");
    SEEDANCE_RETURN_IF_ERROR(conn_->Reconnect());
    SEEDANCE_RETURN_IF_ERROR(conn_->Exec("BEGIN"));
    Status st = Write(workloads, decisions);
    if (!st.ok()) {
      (void)conn_->Exec("ROLLBACK");
      for (auto& d : decisions) d.seq = 0;
    }
    return st;
  }

  Result<std::vector<AdmissionWorkloadRow>> Live() override {
    return Workloads(std::string("SELECT ") + kWorkloadColumns +
                         " FROM seedance_admission_workloads WHERE state IN ('pending', 'admitted', 'evicting') "
                         "ORDER BY id",
                     {});
  }

  Result<std::optional<AdmissionWorkloadRow>> Latest(const std::string& namespace_name,
                                                     const std::string& name) override {
    return First(std::string("SELECT ") + kWorkloadColumns +
                     " FROM seedance_admission_workloads WHERE namespace=$1 AND name=$2 ORDER BY id DESC LIMIT 1",
                 {namespace_name, name});
  }

  Result<std::optional<AdmissionWorkloadRow>> ByUid(const std::string& namespace_name, const std::string& name,
                                                    const std::string& uid) override {
    return First(std::string("SELECT ") + kWorkloadColumns +
                     " FROM seedance_admission_workloads WHERE namespace=$1 AND name=$2 AND uid=$3 "
                     "ORDER BY id DESC LIMIT 1",
                 {namespace_name, name, uid});
  }

  Result<std::vector<AdmissionDecisionRow>> History(std::int64_t workload_id) override {
    return Decisions(std::string("SELECT ") + kDecisionColumns +
                         " FROM seedance_admission_decisions WHERE workload_id=$1 ORDER BY seq",
                     {std::to_string(workload_id)});
  }

  Result<std::vector<AdmissionDecisionRow>> DecisionsSince(std::int64_t after, std::size_t limit) override {
    return Decisions(std::string("SELECT ") + kDecisionColumns +
                         " FROM seedance_admission_decisions WHERE seq>$1 ORDER BY seq LIMIT $2",
                     {std::to_string(after), std::to_string(limit)});
  }

  Result<std::int64_t> MaxWorkloadId() override {
    return Scalar("SELECT COALESCE(MAX(id), 0) FROM seedance_admission_workloads");
  }
  Result<std::int64_t> LastSeq() override {
    return Scalar("SELECT COALESCE(MAX(seq), 0) FROM seedance_admission_decisions");
  }

 private:
  // The statements of one Commit, inside its transaction.
  Status Write(std::span<const AdmissionWorkloadRow> workloads, std::span<AdmissionDecisionRow> decisions) {
    // FOR SHARE: a TakeOver (FOR UPDATE) waits for this transaction, and this one reads the
    // epoch a TakeOver committed before it.
    SEEDANCE_ASSIGN_OR_RETURN(
        auto epoch, conn_->Query("SELECT epoch, holder FROM seedance_admission_epoch WHERE id=1 FOR SHARE"));
    if (epoch.size() != 1) return InternalError("postgres: the admission epoch row is missing");
    if (Int(epoch[0][0]) != epoch_) {
      fenced_ = true;
      return FailedPreconditionError(fmt::format(
          "admission log fenced: replica '{}' took over the PostgreSQL admission log (epoch {}) after this "
          "replica ('{}', epoch {}); nothing was written",
          epoch[0][1], epoch[0][0], holder_, epoch_));
    }
    for (const auto& w : workloads) {
      SEEDANCE_RETURN_IF_ERROR(conn_->Exec(
          std::string("INSERT INTO seedance_admission_workloads(") + kWorkloadColumns +
              ") VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14) ON CONFLICT (id) DO UPDATE SET "
              "namespace=EXCLUDED.namespace, name=EXCLUDED.name, uid=EXCLUDED.uid, tenant=EXCLUDED.tenant, "
              "tier=EXCLUDED.tier, priority=EXCLUDED.priority, request=EXCLUDED.request, "
              "creation_s=EXCLUDED.creation_s, state=EXCLUDED.state, admitted_at_s=EXCLUDED.admitted_at_s, "
              "evicted_for=EXCLUDED.evicted_for, created_ms=EXCLUDED.created_ms, updated_ms=EXCLUDED.updated_ms",
          {std::to_string(w.id), w.namespace_name, w.name, w.uid, w.tenant, w.tier, std::to_string(w.priority),
           w.request_json, DoubleText(w.creation_s), w.state, DoubleText(w.admitted_at_s),
           std::to_string(w.evicted_for), std::to_string(w.created_ms), std::to_string(w.updated_ms)}));
    }
    for (auto& d : decisions) {
      SEEDANCE_ASSIGN_OR_RETURN(
          auto seq,
          conn_->Query("INSERT INTO seedance_admission_decisions(workload_id,namespace,name,uid,kind,reason,detail,"
                       "at_ms) VALUES($1,$2,$3,$4,$5,$6,$7,$8) RETURNING seq",
                       {std::to_string(d.workload_id), d.namespace_name, d.name, d.uid, d.kind, d.reason,
                        d.detail_json.empty() ? std::string("{}") : d.detail_json, std::to_string(d.at_ms)}));
      d.seq = Int(seq.at(0).at(0));
    }
    return conn_->Exec("COMMIT");
  }

  Result<PgConn::Rows> Read(const std::string& sql, const std::vector<std::string>& params) {
    SEEDANCE_RETURN_IF_ERROR(conn_->Reconnect());
    return conn_->Query(sql, params);
  }
  // The rows of a query, each read by `of` (WorkloadOf, DecisionOf).
  template <typename Row>
  Result<std::vector<Row>> RowsOf(const std::string& sql, const std::vector<std::string>& params,
                                  Row (*of)(const std::vector<std::string>&)) {
    SEEDANCE_ASSIGN_OR_RETURN(auto rows, Read(sql, params));
    std::vector<Row> out;
    out.reserve(rows.size());
    for (const auto& r : rows) out.push_back(of(r));
    return out;
  }
  Result<std::vector<AdmissionWorkloadRow>> Workloads(const std::string& sql, const std::vector<std::string>& params) {
    return RowsOf(sql, params, WorkloadOf);
  }
  Result<std::optional<AdmissionWorkloadRow>> First(const std::string& sql, const std::vector<std::string>& params) {
    SEEDANCE_ASSIGN_OR_RETURN(auto rows, Workloads(sql, params));
    if (rows.empty()) return std::optional<AdmissionWorkloadRow>();
    return std::optional<AdmissionWorkloadRow>(std::move(rows.front()));
  }
  Result<std::vector<AdmissionDecisionRow>> Decisions(const std::string& sql, const std::vector<std::string>& params) {
    return RowsOf(sql, params, DecisionOf);
  }
  Result<std::int64_t> Scalar(const std::string& sql) {
    SEEDANCE_ASSIGN_OR_RETURN(auto rows, Read(sql, {}));
    return rows.empty() ? 0 : Int(rows[0][0]);
  }

  std::unique_ptr<PgConn> conn_;
  std::int64_t epoch_ = 0;  // the epoch this log took over at; 0 before TakeOver
  std::string holder_;
  bool fenced_ = false;
};

}  // namespace

Result<std::unique_ptr<AdmissionLog>> OpenPgAdmissionLog(const std::string& conninfo) {
  SEEDANCE_ASSIGN_OR_RETURN(auto conn, PgConn::Open(conninfo));
  return std::unique_ptr<AdmissionLog>(std::make_unique<PgAdmissionLog>(std::move(conn)));
}

}  // namespace seedance::ledger
