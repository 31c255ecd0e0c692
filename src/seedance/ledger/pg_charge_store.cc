#include "seedance/ledger/pg_charge_store.h"

namespace seedance::ledger {

PgChargeStore::~PgChargeStore() {
  if (in_transaction_) (void)Exec("ROLLBACK");  // not flushed = not recorded
}

Result<std::unique_ptr<PgChargeStore>> PgChargeStore::Open(const std::string& conninfo) {
  SEEDANCE_ASSIGN_OR_RETURN(auto conn, internal::PgConn::Open(conninfo));
  return std::unique_ptr<PgChargeStore>(new PgChargeStore(std::move(conn)));
}

Status PgChargeStore::Begin() {
  if (in_transaction_) return Status::Ok();
  SEEDANCE_RETURN_IF_ERROR(Exec("BEGIN"));
  in_transaction_ = true;
  pending_ = 0;
  return Status::Ok();
}

Status PgChargeStore::Flush() {
  if (!in_transaction_) return Status::Ok();
  in_transaction_ = false;
  return Exec("COMMIT");
}

Status PgChargeStore::Clear() {
  SEEDANCE_RETURN_IF_ERROR(Flush());
  return Exec("TRUNCATE seedance_bills, seedance_charges");
}

Result<int> PgChargeStore::SchemaVersion() { return conn_->SchemaVersion(); }

Status PgChargeStore::RecordNodeInterval(const NodeBill& bill,
                                         std::span<const ChargeRecord> charges) {
  SEEDANCE_RETURN_IF_ERROR(CheckChargesSumToBill(bill, charges));
  SEEDANCE_RETURN_IF_ERROR(Begin());
  const std::string start = std::to_string(bill.start_ms);
  SEEDANCE_RETURN_IF_ERROR(
      Exec("DELETE FROM seedance_charges WHERE source=$1 AND node=$2 AND start_ms=$3",
           {source_, bill.node, start}));
  SEEDANCE_RETURN_IF_ERROR(Exec(
      "INSERT INTO seedance_bills(source,node,start_ms,end_ms,bill_micro) VALUES($1,$2,$3,$4,$5) "
      "ON CONFLICT (source,node,start_ms) DO UPDATE SET end_ms=EXCLUDED.end_ms, "
      "bill_micro=EXCLUDED.bill_micro",
      {source_, bill.node, start, std::to_string(bill.end_ms), std::to_string(bill.bill.raw())}));
  for (const ChargeRecord& c : charges) {
    const WorkloadDims& w = c.workload;
    SEEDANCE_RETURN_IF_ERROR(Exec(
        "INSERT INTO seedance_charges(source,node,start_ms,kind,workload,namespace,tenant,"
        "business_unit,task_type,data_source,sla_tier,job,end_ms,cost_micro,gpu_ms) "
        "VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15)",
        {source_, bill.node, std::to_string(c.start_ms),
         std::to_string(static_cast<int>(c.kind)), w.name, w.namespace_name, w.tenant,
         w.business_unit, w.task_type, w.data_source, w.sla_tier, w.job, std::to_string(c.end_ms),
         std::to_string(c.cost.raw()), std::to_string(c.gpu_ms)}));
  }
  pending_ += charges.size() + 1;
  if (pending_ >= 10'000) return Flush();
  return Status::Ok();
}

Result<std::vector<AttributionRow>> PgChargeStore::CostByTenant(std::int64_t from_ms,
                                                                std::int64_t to_ms) {
  SEEDANCE_RETURN_IF_ERROR(Flush());
  SEEDANCE_ASSIGN_OR_RETURN(
      auto rows,
      Query("SELECT tenant, SUM(cost_micro), SUM(CASE WHEN kind=0 THEN gpu_ms ELSE 0 END) "
            "FROM seedance_charges WHERE start_ms>=$1 AND start_ms<$2 AND workload<>'' "
            "GROUP BY tenant ORDER BY tenant",
            {std::to_string(from_ms), std::to_string(to_ms)}));
  std::vector<AttributionRow> out;
  for (const auto& r : rows) {
    AttributionRow a;
    a.key = r[0];
    a.cost = MicroUsd(std::stoll(r[1]));
    a.gpu_ms = std::stoll(r[2]);
    out.push_back(std::move(a));
  }
  return out;
}

Result<Reconciliation> PgChargeStore::Reconcile(std::int64_t from_ms, std::int64_t to_ms) {
  SEEDANCE_RETURN_IF_ERROR(Flush());
  std::vector<std::string> range = {std::to_string(from_ms), std::to_string(to_ms)};
  SEEDANCE_ASSIGN_OR_RETURN(
      auto rows,
      Query("SELECT COALESCE(SUM(CASE WHEN workload<>'' THEN cost_micro END),0), "
            "COALESCE(SUM(CASE WHEN kind=1 AND workload='' THEN cost_micro END),0), "
            "COALESCE(SUM(CASE WHEN kind=2 AND workload='' THEN cost_micro END),0), "
            "COALESCE(SUM(CASE WHEN kind=1 AND workload<>'' THEN cost_micro END),0), "
            "(SELECT COALESCE(SUM(bill_micro),0) FROM seedance_bills "
            " WHERE start_ms>=$1 AND start_ms<$2) "
            "FROM seedance_charges WHERE start_ms>=$1 AND start_ms<$2",
            range));
  Reconciliation r;
  r.attributed = MicroUsd(std::stoll(rows[0][0]));
  r.idle = MicroUsd(std::stoll(rows[0][1]));
  r.overhead = MicroUsd(std::stoll(rows[0][2]));
  r.idle_shared = MicroUsd(std::stoll(rows[0][3]));
  r.bill = MicroUsd(std::stoll(rows[0][4]));
  return r;
}

}  // namespace seedance::ledger
