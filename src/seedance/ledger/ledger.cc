#include "seedance/ledger/ledger.h"

#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <sstream>
#include <tuple>

#include "seedance/core/csv.h"
#include "seedance/ledger/internal/sqlite.h"

namespace seedance::ledger {

using internal::Exec;
using internal::SqliteError;
using internal::Stmt;

namespace {

// Migrations, in order: kMigrations[i] takes the schema from version i to i + 1.
constexpr const char* kMigrations[] = {
    // 1: telemetry, events, the charge ledger.
    R"sql(
CREATE TABLE series(
  id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, metric TEXT NOT NULL, field TEXT NOT NULL,
  gpu_uuid TEXT NOT NULL, gpu TEXT NOT NULL, model TEXT NOT NULL, hostname TEXT NOT NULL,
  pod TEXT NOT NULL, namespace TEXT NOT NULL, container TEXT NOT NULL, pid TEXT NOT NULL,
  job TEXT NOT NULL);
CREATE TABLE samples(
  series_id INTEGER NOT NULL, ts_ms INTEGER NOT NULL, value REAL,
  PRIMARY KEY(series_id, ts_ms)) WITHOUT ROWID;
CREATE TABLE ingests(
  id INTEGER PRIMARY KEY, source TEXT NOT NULL, finished INTEGER NOT NULL DEFAULT 0,
  samples INTEGER NOT NULL DEFAULT 0, inserted INTEGER NOT NULL DEFAULT 0);
CREATE TABLE events(
  gpu_uuid TEXT NOT NULL, start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL, pod TEXT NOT NULL,
  namespace TEXT NOT NULL, container TEXT NOT NULL, pid TEXT NOT NULL, job TEXT NOT NULL,
  node TEXT NOT NULL, request_milli INTEGER NOT NULL, batch_size INTEGER NOT NULL,
  precision TEXT NOT NULL, PRIMARY KEY(gpu_uuid, start_ms, pod, pid)) WITHOUT ROWID;
CREATE TABLE nodes(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE workloads(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, namespace TEXT NOT NULL, tenant TEXT NOT NULL,
  business_unit TEXT NOT NULL, task_type TEXT NOT NULL, data_source TEXT NOT NULL,
  sla_tier TEXT NOT NULL, job TEXT NOT NULL,
  UNIQUE(name, namespace, tenant, business_unit, task_type, data_source, sla_tier, job));
CREATE TABLE bills(
  source TEXT NOT NULL, node_id INTEGER NOT NULL, start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL, bill_micro INTEGER NOT NULL,
  PRIMARY KEY(source, node_id, start_ms)) WITHOUT ROWID;
CREATE TABLE charges(
  source TEXT NOT NULL, node_id INTEGER NOT NULL, start_ms INTEGER NOT NULL,
  kind INTEGER NOT NULL, workload_id INTEGER NOT NULL, end_ms INTEGER NOT NULL,
  cost_micro INTEGER NOT NULL, gpu_ms INTEGER NOT NULL,
  PRIMARY KEY(source, node_id, start_ms, kind, workload_id)) WITHOUT ROWID;
)sql",
    // 2: circuit-breaker actions; charges by time for range queries.
    R"sql(
CREATE TABLE breaker_actions(
  job TEXT NOT NULL, hour_ms INTEGER NOT NULL, cost_micro INTEGER NOT NULL,
  threshold_micro INTEGER NOT NULL, paused INTEGER NOT NULL, finding TEXT NOT NULL,
  PRIMARY KEY(job, hour_ms)) WITHOUT ROWID;
CREATE INDEX charges_by_start ON charges(start_ms);
CREATE INDEX bills_by_start ON bills(start_ms);
)sql",
    // 3: job allocations as a scheduler's accounting reports them (Slurm: one sacct record per
    // job incarnation), kept for good so that charges can be recomputed from them; the cursors
    // of incremental readers.
    R"sql(
CREATE TABLE job_allocations(
  source TEXT NOT NULL, cluster TEXT NOT NULL, job_id INTEGER NOT NULL,
  incarnation INTEGER NOT NULL, node TEXT NOT NULL, start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL, ended INTEGER NOT NULL, gpus INTEGER NOT NULL,
  node_gpus INTEGER NOT NULL, price_micro INTEGER NOT NULL, workload_id INTEGER NOT NULL,
  PRIMARY KEY(source, cluster, job_id, incarnation)) WITHOUT ROWID;
CREATE INDEX job_allocations_by_node ON job_allocations(source, node, end_ms);
CREATE INDEX job_allocations_by_node_start ON job_allocations(source, node, start_ms);
CREATE INDEX job_allocations_open ON job_allocations(source, ended);
CREATE TABLE cursors(name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
)sql",
    // 4: admission state of seedance server's /v1/workloads (admission_log.h): workloads and
    // every decision, written before a client is answered.
    R"sql(
CREATE TABLE admission_workloads(
  id INTEGER PRIMARY KEY, namespace TEXT NOT NULL, name TEXT NOT NULL, uid TEXT NOT NULL,
  tenant TEXT NOT NULL, tier TEXT NOT NULL, priority INTEGER NOT NULL, request TEXT NOT NULL,
  creation_s REAL NOT NULL, state TEXT NOT NULL, admitted_at_s REAL NOT NULL,
  evicted_for INTEGER NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL);
CREATE INDEX admission_workloads_by_name ON admission_workloads(namespace, name, id);
CREATE INDEX admission_workloads_live ON admission_workloads(id)
  WHERE state IN ('pending', 'admitted', 'evicting');
CREATE TABLE admission_decisions(
  seq INTEGER PRIMARY KEY AUTOINCREMENT, workload_id INTEGER NOT NULL, namespace TEXT NOT NULL,
  name TEXT NOT NULL, uid TEXT NOT NULL, kind TEXT NOT NULL, reason TEXT NOT NULL,
  detail TEXT NOT NULL, at_ms INTEGER NOT NULL);
CREATE INDEX admission_decisions_by_workload ON admission_decisions(workload_id, seq);
)sql",
    // 5: a job allocation per (job incarnation, node): a multi-node job holds GPUs on each of its
    // nodes; the device indices it holds there (Slurm: `scontrol show job -d`), which join GPU
    // telemetry (hostname + gpu index) to the job.
    R"sql(
CREATE TABLE job_allocations_v5(
  source TEXT NOT NULL, cluster TEXT NOT NULL, job_id INTEGER NOT NULL,
  incarnation INTEGER NOT NULL, node TEXT NOT NULL, start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL, ended INTEGER NOT NULL, gpus INTEGER NOT NULL,
  node_gpus INTEGER NOT NULL, price_micro INTEGER NOT NULL, workload_id INTEGER NOT NULL,
  gpu_indices TEXT NOT NULL,
  PRIMARY KEY(source, cluster, job_id, incarnation, node)) WITHOUT ROWID;
INSERT INTO job_allocations_v5
  SELECT source, cluster, job_id, incarnation, node, start_ms, end_ms, ended, gpus, node_gpus,
         price_micro, workload_id, '' FROM job_allocations;
DROP TABLE job_allocations;
ALTER TABLE job_allocations_v5 RENAME TO job_allocations;
CREATE INDEX job_allocations_by_node ON job_allocations(source, node, end_ms);
CREATE INDEX job_allocations_by_node_start ON job_allocations(source, node, start_ms);
CREATE INDEX job_allocations_open ON job_allocations(source, ended);
)sql",
};
static_assert(std::size(kMigrations) == Ledger::kSchemaVersion);

constexpr std::int64_t kHourMs = 3'600'000;

// The allocations (with their workload's dimensions) read through `index` ("" = the planner's
// choice) that match `where_order`.
std::string AllocationQuery(const char* index, const char* where_order) {
  return std::string(
             "SELECT a.cluster, a.job_id, a.incarnation, a.node, a.start_ms, a.end_ms, a.ended, "
             "a.gpus, a.node_gpus, a.price_micro, w.name, w.namespace, w.tenant, w.business_unit, "
             "w.task_type, w.data_source, w.sla_tier, w.job, a.gpu_indices FROM job_allocations AS a ") +
         (*index != '\0' ? std::string("INDEXED BY ") + index + " " : std::string()) +
         "LEFT JOIN workloads w ON w.id = a.workload_id " + where_order;
}

const char* DimensionColumn(Dimension d) {
  switch (d) {
    case Dimension::kTenant: return "w.tenant";
    case Dimension::kNamespace: return "w.namespace";
    case Dimension::kBusinessUnit: return "w.business_unit";
    case Dimension::kTaskType: return "w.task_type";
    case Dimension::kDataSource: return "w.data_source";
    case Dimension::kSlaTier: return "w.sla_tier";
    case Dimension::kJob: return "w.job";
    case Dimension::kWorkload: return "w.name";
    case Dimension::kNode: return "n.name";
  }
  return "w.tenant";
}

std::string WorkloadKey(const WorkloadDims& w) {
  std::string k;
  for (const std::string* s : {&w.name, &w.namespace_name, &w.tenant, &w.business_unit,
                               &w.task_type, &w.data_source, &w.sla_tier, &w.job}) {
    k += *s;
    k += '\x1f';
  }
  return k;
}

}  // namespace

struct Ledger::Statements {
  Stmt insert_bill, delete_interval, insert_charge, find_node, insert_node, find_workload,
      insert_workload, put_allocation, find_allocation, allocations_on_node, last_cut,
      delete_node_charges, delete_node_bills;
};

Ledger::Ledger(sqlite3* db) : db_(db), stmts_(std::make_unique<Statements>()) {}

Ledger::~Ledger() {
  // What was not flushed is not durable: an error half-way through leaves the ledger as it was.
  if (in_transaction_) (void)Exec(db_, "ROLLBACK");
  stmts_.reset();
  sqlite3_close(db_);
}

Result<std::unique_ptr<Ledger>> Ledger::Open(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return UnavailableError(path + ": cannot open ledger: " + msg);
  }
  std::unique_ptr<Ledger> l(new Ledger(db));
  sqlite3_busy_timeout(db, 10'000);
  // WAL: readers do not block the writer; FULL: a committed transaction survives a crash of the
  // process and of the machine. Switching a new file to WAL needs an exclusive lock; when several
  // connections try at once SQLite may answer SQLITE_BUSY without calling the busy handler (it
  // would deadlock), so the switch is retried here for as long as the busy timeout.
  Status wal = Exec(db, "PRAGMA journal_mode=WAL");
  for (int attempt = 1; !wal.ok() && attempt < 1000; ++attempt) {
    const int code = sqlite3_errcode(db);
    if (code != SQLITE_BUSY && code != SQLITE_LOCKED) break;
    sqlite3_sleep(10);
    wal = Exec(db, "PRAGMA journal_mode=WAL");
  }
  SEEDANCE_RETURN_IF_ERROR(wal);
  SEEDANCE_RETURN_IF_ERROR(Exec(db, "PRAGMA synchronous=FULL"));
  SEEDANCE_RETURN_IF_ERROR(l->Migrate());
  Statements& s = *l->stmts_;
  SEEDANCE_RETURN_IF_ERROR(s.insert_bill.Prepare(
      db, "INSERT OR REPLACE INTO bills(source,node_id,start_ms,end_ms,bill_micro) "
          "VALUES(?1,?2,?3,?4,?5)"));
  SEEDANCE_RETURN_IF_ERROR(s.delete_interval.Prepare(
      db, "DELETE FROM charges WHERE source=?1 AND node_id=?2 AND start_ms=?3"));
  SEEDANCE_RETURN_IF_ERROR(s.insert_charge.Prepare(
      db, "INSERT OR REPLACE INTO charges(source,node_id,start_ms,kind,workload_id,end_ms,"
          "cost_micro,gpu_ms) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)"));
  SEEDANCE_RETURN_IF_ERROR(s.find_node.Prepare(db, "SELECT id FROM nodes WHERE name=?1"));
  SEEDANCE_RETURN_IF_ERROR(s.insert_node.Prepare(db, "INSERT INTO nodes(name) VALUES(?1)"));
  SEEDANCE_RETURN_IF_ERROR(s.find_workload.Prepare(
      db, "SELECT id FROM workloads WHERE name=?1 AND namespace=?2 AND tenant=?3 AND "
          "business_unit=?4 AND task_type=?5 AND data_source=?6 AND sla_tier=?7 AND job=?8"));
  SEEDANCE_RETURN_IF_ERROR(s.insert_workload.Prepare(
      db, "INSERT INTO workloads(name,namespace,tenant,business_unit,task_type,data_source,"
          "sla_tier,job) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)"));
  SEEDANCE_RETURN_IF_ERROR(s.put_allocation.Prepare(
      db, "INSERT OR REPLACE INTO job_allocations(source,cluster,job_id,incarnation,node,"
          "start_ms,end_ms,ended,gpus,node_gpus,price_micro,workload_id,gpu_indices) "
          "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)"));
  SEEDANCE_RETURN_IF_ERROR(s.find_allocation.Prepare(
      db, AllocationQuery("", "WHERE a.source=?1 AND a.cluster=?2 AND a.job_id=?3 AND "
                              "a.incarnation=?4 ORDER BY a.node")
              .c_str()));
  SEEDANCE_RETURN_IF_ERROR(s.allocations_on_node.Prepare(
      db, AllocationQuery("job_allocations_by_node",
                          "WHERE a.source=?1 AND a.node=?2 AND a.end_ms>?3 "
                          "ORDER BY a.start_ms, a.cluster, a.job_id, a.incarnation, a.node")
              .c_str()));
  // Two index lookups: an end below the bound belongs to an allocation that started before it.
  SEEDANCE_RETURN_IF_ERROR(s.last_cut.Prepare(
      db, "SELECT (SELECT MAX(end_ms) FROM job_allocations INDEXED BY job_allocations_by_node "
          "WHERE source=?1 AND node=?2 AND end_ms<?3), (SELECT MAX(start_ms) FROM job_allocations "
          "INDEXED BY job_allocations_by_node_start WHERE source=?1 AND node=?2 AND start_ms<?3)"));
  SEEDANCE_RETURN_IF_ERROR(s.delete_node_charges.Prepare(
      db, "DELETE FROM charges WHERE source=?1 AND node_id=?2 AND start_ms>=?3"));
  SEEDANCE_RETURN_IF_ERROR(s.delete_node_bills.Prepare(
      db, "DELETE FROM bills WHERE source=?1 AND node_id=?2 AND start_ms>=?3"));
  return l;
}

Status Ledger::Migrate() {
  // An up-to-date ledger takes no lock (readers open it beside a running writer). Otherwise the
  // version is read again under the write lock, so two processes opening a new ledger at once do
  // not both run the same migration (the second finds it done).
  if (schema_version() == kSchemaVersion) return Status::Ok();
  while (true) {
    SEEDANCE_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE"));
    const int version = schema_version();
    if (version >= kSchemaVersion) {
      SEEDANCE_RETURN_IF_ERROR(Exec(db_, "COMMIT"));
      if (version > kSchemaVersion) {
        return FailedPreconditionError("ledger schema version " + std::to_string(version) +
                                       " is newer than this binary's " +
                                       std::to_string(kSchemaVersion));
      }
      return Status::Ok();
    }
    Status s = Exec(db_, kMigrations[version]);
    if (s.ok()) s = Exec(db_, ("PRAGMA user_version=" + std::to_string(version + 1)).c_str());
    if (!s.ok()) {
      (void)Exec(db_, "ROLLBACK");
      return s;
    }
    SEEDANCE_RETURN_IF_ERROR(Exec(db_, "COMMIT"));
  }
}

int Ledger::schema_version() const {
  Stmt st;
  if (!st.Prepare(db_, "PRAGMA user_version").ok()) return -1;
  auto row = st.Step();
  return row.has_value() && *row ? static_cast<int>(st.Int(0)) : -1;
}

Result<std::string> Ledger::IntegrityCheck() {
  SEEDANCE_RETURN_IF_ERROR(Flush());
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(db_, "PRAGMA integrity_check"));
  std::string out;
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    if (!out.empty()) out += '\n';
    out += st.Text(0);
  }
  return out;
}

Result<std::int64_t> Ledger::CountSamples() {
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(db_, "SELECT COUNT(*) FROM samples"));
  SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

Status Ledger::ForEachSample(
    const std::function<void(std::string_view key, std::int64_t ts_ms, double value)>& fn) {
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(db_,
      "SELECT s.key, x.ts_ms, x.value FROM samples x JOIN series s ON s.id = x.series_id "
      "WHERE x.value IS NOT NULL ORDER BY s.key, x.ts_ms"));
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    const std::string key = st.Text(0);
    fn(key, st.Int(1), st.Double(2));
  }
  return Status::Ok();
}

Result<std::vector<Ledger::CounterRate>> Ledger::CounterRates(std::string_view metric,
                                                              std::int64_t from_ms,
                                                              std::int64_t to_ms) {
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(db_,
      "SELECT s.id, s.pod, s.namespace, s.container, s.job, x.ts_ms, x.value FROM series s "
      "JOIN samples x ON x.series_id = s.id WHERE s.metric = ? AND x.ts_ms >= ? AND x.ts_ms < ? "
      "AND x.value IS NOT NULL ORDER BY s.id, x.ts_ms"));
  st.Bind(1, metric);
  st.Bind(2, from_ms);
  st.Bind(3, to_ms);
  std::vector<CounterRate> out;
  std::int64_t current = -1;
  double prev = 0, increase = 0;
  auto close = [&]() {
    if (current < 0) return;
    CounterRate& c = out.back();
    double secs = static_cast<double>(c.last_ms - c.first_ms) / 1000.0;
    c.rate_per_s = secs > 0 ? increase / secs : 0.0;
  };
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    std::int64_t id = st.Int(0);
    double v = st.Double(6);
    std::int64_t ts = st.Int(5);
    if (id != current) {
      close();
      current = id;
      out.push_back({st.Text(1), st.Text(2), st.Text(3), st.Text(4), 0.0, 0, ts, ts});
      increase = 0;
    } else {
      increase += v >= prev ? v - prev : v;  // a reset restarts from zero
    }
    prev = v;
    out.back().last_ms = ts;
    ++out.back().samples;
  }
  close();
  return out;
}

Result<std::vector<Ledger::SeriesInfo>> Ledger::SeriesOf(std::string_view metric, std::int64_t from_ms,
                                                          std::int64_t to_ms) {
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(db_,
      "SELECT s.key, s.pod, s.namespace, s.job, MIN(x.ts_ms), MAX(x.ts_ms) FROM series s "
      "JOIN samples x ON x.series_id = s.id WHERE s.metric = ? AND x.ts_ms >= ? AND x.ts_ms < ? "
      "GROUP BY s.id ORDER BY s.id"));
  st.Bind(1, metric);
  st.Bind(2, from_ms);
  st.Bind(3, to_ms);
  std::vector<SeriesInfo> out;
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back({st.Text(0), st.Text(1), st.Text(2), st.Text(3), st.Int(4), st.Int(5)});
  }
  return out;
}

Status Ledger::EnsureTransaction() {
  if (in_transaction_) return Status::Ok();
  SEEDANCE_RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE"));
  in_transaction_ = true;
  pending_ = 0;
  return Status::Ok();
}

Status Ledger::Flush() {
  explicit_transaction_ = false;
  if (!in_transaction_) return Status::Ok();
  in_transaction_ = false;
  return Exec(db_, "COMMIT");
}

Result<std::int64_t> Ledger::NodeId(const std::string& node) {
  if (auto it = node_ids_.find(node); it != node_ids_.end()) return it->second;
  Stmt& f = stmts_->find_node;
  f.Bind(1, node);
  SEEDANCE_ASSIGN_OR_RETURN(bool found, f.Step());
  std::int64_t id = found ? f.Int(0) : 0;
  f.Reset();
  if (!found) {
    SEEDANCE_RETURN_IF_ERROR(EnsureTransaction());
    stmts_->insert_node.Bind(1, node);
    SEEDANCE_RETURN_IF_ERROR(stmts_->insert_node.Run());
    id = sqlite3_last_insert_rowid(db_);
  }
  node_ids_.emplace(node, id);
  return id;
}

Result<std::int64_t> Ledger::WorkloadId(const WorkloadDims& w) {
  if (w.name.empty() && w.namespace_name.empty()) return std::int64_t{0};
  std::string key = WorkloadKey(w);
  if (auto it = workload_ids_.find(key); it != workload_ids_.end()) return it->second;
  const std::string* fields[] = {&w.name,        &w.namespace_name, &w.tenant,   &w.business_unit,
                                 &w.task_type,   &w.data_source,    &w.sla_tier, &w.job};
  Stmt& f = stmts_->find_workload;
  for (int i = 0; i < 8; ++i) f.Bind(i + 1, *fields[i]);
  SEEDANCE_ASSIGN_OR_RETURN(bool found, f.Step());
  std::int64_t id = found ? f.Int(0) : 0;
  f.Reset();
  if (!found) {
    SEEDANCE_RETURN_IF_ERROR(EnsureTransaction());
    for (int i = 0; i < 8; ++i) stmts_->insert_workload.Bind(i + 1, *fields[i]);
    SEEDANCE_RETURN_IF_ERROR(stmts_->insert_workload.Run());
    id = sqlite3_last_insert_rowid(db_);
  }
  workload_ids_.emplace(std::move(key), id);
  return id;
}

Status Ledger::RecordNodeInterval(const NodeBill& bill, std::span<const ChargeRecord> charges) {
  SEEDANCE_RETURN_IF_ERROR(CheckChargesSumToBill(bill, charges));
  SEEDANCE_RETURN_IF_ERROR(EnsureTransaction());
  SEEDANCE_ASSIGN_OR_RETURN(std::int64_t node, NodeId(bill.node));
  Statements& s = *stmts_;
  s.delete_interval.Bind(1, source_);
  s.delete_interval.Bind(2, node);
  s.delete_interval.Bind(3, bill.start_ms);
  SEEDANCE_RETURN_IF_ERROR(s.delete_interval.Run());
  s.insert_bill.Bind(1, source_);
  s.insert_bill.Bind(2, node);
  s.insert_bill.Bind(3, bill.start_ms);
  s.insert_bill.Bind(4, bill.end_ms);
  s.insert_bill.Bind(5, bill.bill.raw());
  SEEDANCE_RETURN_IF_ERROR(s.insert_bill.Run());
  for (const ChargeRecord& c : charges) {
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t workload, WorkloadId(c.workload));
    s.insert_charge.Bind(1, source_);
    s.insert_charge.Bind(2, node);
    s.insert_charge.Bind(3, c.start_ms);
    s.insert_charge.Bind(4, static_cast<std::int64_t>(c.kind));
    s.insert_charge.Bind(5, workload);
    s.insert_charge.Bind(6, c.end_ms);
    s.insert_charge.Bind(7, c.cost.raw());
    s.insert_charge.Bind(8, c.gpu_ms);
    SEEDANCE_RETURN_IF_ERROR(s.insert_charge.Run());
  }
  pending_ += charges.size() + 1;
  if (pending_ >= 50'000 && !explicit_transaction_) return Flush();
  return Status::Ok();
}

Status Ledger::DeleteCharges(std::int64_t from_ms, std::int64_t to_ms) {
  SEEDANCE_RETURN_IF_ERROR(EnsureTransaction());
  for (const char* sql : {"DELETE FROM charges WHERE source=?1 AND start_ms>=?2 AND start_ms<?3",
                          "DELETE FROM bills WHERE source=?1 AND start_ms>=?2 AND start_ms<?3"}) {
    Stmt st;
    SEEDANCE_RETURN_IF_ERROR(st.Prepare(db_, sql));
    st.Bind(1, source_);
    st.Bind(2, from_ms);
    st.Bind(3, to_ms);
    SEEDANCE_RETURN_IF_ERROR(st.Run());
  }
  return Status::Ok();
}

Status Ledger::DeleteNodeCharges(const std::string& node, std::int64_t from_ms) {
  SEEDANCE_RETURN_IF_ERROR(EnsureTransaction());
  SEEDANCE_ASSIGN_OR_RETURN(std::int64_t id, NodeId(node));
  for (Stmt* del : {&stmts_->delete_node_charges, &stmts_->delete_node_bills}) {
    Stmt& st = *del;
    st.Bind(1, source_);
    st.Bind(2, id);
    st.Bind(3, from_ms);
    SEEDANCE_RETURN_IF_ERROR(st.Run());
  }
  return Status::Ok();
}

Status Ledger::BeginTransaction() {
  SEEDANCE_RETURN_IF_ERROR(EnsureTransaction());
  explicit_transaction_ = true;
  return Status::Ok();
}

void Ledger::Rollback() {
  if (in_transaction_) (void)Exec(db_, "ROLLBACK");
  in_transaction_ = false;
  explicit_transaction_ = false;
  pending_ = 0;
  // Ids created in the rolled-back transaction are gone with it.
  node_ids_.clear();
  workload_ids_.clear();
}

std::string GpuIndexList(const std::vector<int>& indices) {
  std::string out;
  for (int i : indices) {
    if (!out.empty()) out.push_back(',');
    out.append(std::to_string(i));
  }
  return out;
}

Result<std::vector<int>> ParseGpuIndexList(std::string_view text) {
  std::vector<int> out;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    int v = -1;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc() || p != item.data() + item.size() || v < 0) {
      return InternalError("job_allocations.gpu_indices: bad device index list '" + std::string(text) + "'");
    }
    out.push_back(v);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return out;
}

namespace {

Result<std::vector<JobAllocation>> ReadAllocations(Stmt& st) {
  std::vector<JobAllocation> out;
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    JobAllocation a;
    a.cluster = st.Text(0);
    a.job_id = st.Int(1);
    a.incarnation = st.Int(2);
    a.node = st.Text(3);
    a.start_ms = st.Int(4);
    a.end_ms = st.Int(5);
    a.ended = st.Int(6) != 0;
    a.gpus = static_cast<int>(st.Int(7));
    a.node_gpus = static_cast<int>(st.Int(8));
    a.price_per_gpu_hour = MicroUsd(st.Int(9));
    a.workload = {st.Text(10), st.Text(11), st.Text(12), st.Text(13),
                  st.Text(14), st.Text(15), st.Text(16), st.Text(17)};
    SEEDANCE_ASSIGN_OR_RETURN(a.gpu_indices, ParseGpuIndexList(st.Text(18)));
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

Status Ledger::PutJobAllocation(const JobAllocation& a) {
  SEEDANCE_RETURN_IF_ERROR(EnsureTransaction());
  SEEDANCE_ASSIGN_OR_RETURN(std::int64_t workload, WorkloadId(a.workload));
  Stmt& st = stmts_->put_allocation;
  st.Bind(1, source_);
  st.Bind(2, a.cluster);
  st.Bind(3, a.job_id);
  st.Bind(4, a.incarnation);
  st.Bind(5, a.node);
  st.Bind(6, a.start_ms);
  st.Bind(7, a.end_ms);
  st.Bind(8, std::int64_t{a.ended ? 1 : 0});
  st.Bind(9, std::int64_t{a.gpus});
  st.Bind(10, std::int64_t{a.node_gpus});
  st.Bind(11, a.price_per_gpu_hour.raw());
  st.Bind(12, workload);
  st.Bind(13, GpuIndexList(a.gpu_indices));
  return st.Run();
}

Result<std::vector<JobAllocation>> Ledger::FindJobAllocations(const std::string& cluster,
                                                              std::int64_t job_id,
                                                              std::int64_t incarnation) {
  Stmt& st = stmts_->find_allocation;
  st.Bind(1, source_);
  st.Bind(2, cluster);
  st.Bind(3, job_id);
  st.Bind(4, incarnation);
  auto rows = ReadAllocations(st);
  st.Reset();
  return rows;
}

Result<std::vector<JobAllocation>> Ledger::JobAllocationsOnNode(const std::string& node,
                                                                std::int64_t from_ms) {
  Stmt& st = stmts_->allocations_on_node;
  st.Bind(1, source_);
  st.Bind(2, node);
  st.Bind(3, from_ms);
  auto rows = ReadAllocations(st);
  st.Reset();
  return rows;
}

Result<std::optional<std::int64_t>> Ledger::LastCutBefore(const std::string& node,
                                                          std::int64_t before_ms) {
  Stmt& st = stmts_->last_cut;
  st.Bind(1, source_);
  st.Bind(2, node);
  st.Bind(3, before_ms);
  auto row = st.Step();
  std::optional<std::int64_t> out;
  for (int col = 0; col < 2 && row.has_value() && *row; ++col) {
    if (!st.IsNull(col)) out = std::max(out.value_or(st.Int(col)), st.Int(col));
  }
  st.Reset();
  if (!row.has_value()) return row.error();
  return out;
}

Result<std::vector<JobAllocation>> Ledger::OpenJobAllocations() {
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      db_, AllocationQuery("job_allocations_open",
                           "WHERE a.source=?1 AND a.ended=0 "
                           "ORDER BY a.cluster, a.job_id, a.incarnation, a.node")
               .c_str()));
  st.Bind(1, source_);
  return ReadAllocations(st);
}

Result<std::optional<std::int64_t>> Ledger::Cursor(const std::string& name) {
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(db_, "SELECT value FROM cursors WHERE name=?1"));
  st.Bind(1, name);
  SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<std::int64_t>();
  return std::optional<std::int64_t>(st.Int(0));
}

Status Ledger::SetCursor(const std::string& name, std::int64_t value) {
  SEEDANCE_RETURN_IF_ERROR(EnsureTransaction());
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(
      st.Prepare(db_, "INSERT OR REPLACE INTO cursors(name, value) VALUES(?1, ?2)"));
  st.Bind(1, name);
  st.Bind(2, value);
  return st.Run();
}

Status Ledger::AddEvents(std::span<const ProcessEvent> events) {
  SEEDANCE_RETURN_IF_ERROR(EnsureTransaction());
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      db_, "INSERT OR REPLACE INTO events(gpu_uuid,start_ms,end_ms,pod,namespace,container,pid,"
           "job,node,request_milli,batch_size,precision) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,"
           "?11,?12)"));
  for (const ProcessEvent& e : events) {
    st.Bind(1, e.gpu_uuid);
    st.Bind(2, e.start_ms);
    st.Bind(3, e.end_ms);
    st.Bind(4, e.pod);
    st.Bind(5, e.namespace_name);
    st.Bind(6, e.container);
    st.Bind(7, e.pid);
    st.Bind(8, e.job);
    st.Bind(9, e.node);
    st.Bind(10, e.request_milli);
    st.Bind(11, e.batch_size);
    st.Bind(12, e.precision);
    SEEDANCE_RETURN_IF_ERROR(st.Run());
  }
  return Flush();
}

Result<std::vector<ProcessEvent>> Ledger::Events(std::int64_t from_ms, std::int64_t to_ms) {
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      db_, "SELECT gpu_uuid,start_ms,end_ms,pod,namespace,container,pid,job,node,request_milli,"
           "batch_size,precision FROM events WHERE end_ms>?1 AND start_ms<?2 "
           "ORDER BY gpu_uuid,start_ms,pod,pid"));
  st.Bind(1, from_ms);
  st.Bind(2, to_ms);
  std::vector<ProcessEvent> out;
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    ProcessEvent e;
    e.gpu_uuid = st.Text(0);
    e.start_ms = st.Int(1);
    e.end_ms = st.Int(2);
    e.pod = st.Text(3);
    e.namespace_name = st.Text(4);
    e.container = st.Text(5);
    e.pid = st.Text(6);
    e.job = st.Text(7);
    e.node = st.Text(8);
    e.request_milli = st.Int(9);
    e.batch_size = st.Int(10);
    e.precision = st.Text(11);
    out.push_back(std::move(e));
  }
  return out;
}

namespace {

__extension__ using Int128 = __int128;

// Splits `total` micro-USD over `rows` in proportion to their cost: floor shares, then one
// micro-dollar each to the largest remainders (ties to the earlier row). Returns what it gave.
Money SpreadByCost(Money total, std::vector<AttributionRow*>& rows) {
  Int128 weight_sum = 0;
  for (const AttributionRow* r : rows) weight_sum += std::max<std::int64_t>(r->cost.raw(), 0);
  if (total.raw() <= 0 || weight_sum <= 0) return Money();
  std::vector<std::pair<Int128, std::size_t>> remainders;
  std::int64_t given = 0;
  std::vector<std::int64_t> share(rows.size(), 0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Int128 num = static_cast<Int128>(total.raw()) * std::max<std::int64_t>(rows[i]->cost.raw(), 0);
    share[i] = static_cast<std::int64_t>(num / weight_sum);
    remainders.emplace_back(num % weight_sum, i);
    given += share[i];
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; given < total.raw() && k < remainders.size(); ++k, ++given) ++share[remainders[k].second];
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i]->cost += MicroUsd(share[i]);
  return total;
}

}  // namespace

Result<AttributionReport> Ledger::Attribute(Dimension dimension, std::int64_t from_ms,
                                            std::int64_t to_ms, bool hourly, bool spread_empty_idle) {
  SEEDANCE_RETURN_IF_ERROR(Flush());
  AttributionReport rep;
  rep.dimension = dimension;
  rep.hourly = hourly;
  std::string sql = std::string("SELECT COALESCE(") + DimensionColumn(dimension) + ",''), " +
                    (hourly ? "(c.start_ms / 3600000) * 3600000" : "0") +
                    ", SUM(c.cost_micro), SUM(CASE WHEN c.kind=0 THEN c.gpu_ms ELSE 0 END) "
                    "FROM charges c JOIN workloads w ON w.id=c.workload_id "
                    "JOIN nodes n ON n.id=c.node_id "
                    "WHERE c.start_ms>=?1 AND c.start_ms<?2 AND c.workload_id<>0 "
                    "GROUP BY 1, 2 ORDER BY 2, 1";
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(db_, sql.c_str()));
  st.Bind(1, from_ms);
  st.Bind(2, to_ms);
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    AttributionRow r;
    r.key = st.Text(0);
    r.hour_ms = hourly ? st.Int(1) : telemetry::kNoTimestamp;
    r.cost = MicroUsd(st.Int(2));
    r.gpu_ms = st.Int(3);
    rep.rows.push_back(std::move(r));
  }
  Stmt rec;
  SEEDANCE_RETURN_IF_ERROR(rec.Prepare(
      db_, "SELECT COALESCE(SUM(CASE WHEN workload_id<>0 THEN cost_micro END),0), "
           "COALESCE(SUM(CASE WHEN kind=1 AND workload_id=0 THEN cost_micro END),0), "
           "COALESCE(SUM(CASE WHEN kind=2 AND workload_id=0 THEN cost_micro END),0), "
           "COALESCE(SUM(CASE WHEN kind=1 AND workload_id<>0 THEN cost_micro END),0), "
           "(SELECT COALESCE(SUM(bill_micro),0) FROM bills WHERE start_ms>=?1 AND start_ms<?2) "
           "FROM charges WHERE start_ms>=?1 AND start_ms<?2"));
  rec.Bind(1, from_ms);
  rec.Bind(2, to_ms);
  SEEDANCE_ASSIGN_OR_RETURN(bool row, rec.Step());
  if (row) {
    rep.reconciliation.attributed = MicroUsd(rec.Int(0));
    rep.reconciliation.idle = MicroUsd(rec.Int(1));
    rep.reconciliation.overhead = MicroUsd(rec.Int(2));
    rep.reconciliation.idle_shared = MicroUsd(rec.Int(3));
    rep.reconciliation.bill = MicroUsd(rec.Int(4));
  }
  if (spread_empty_idle) {
    // The idle no workload shared a node with, per report bucket (the hour, or the whole window).
    Stmt idle;
    SEEDANCE_RETURN_IF_ERROR(idle.Prepare(
        db_, (std::string("SELECT ") + (hourly ? "(start_ms / 3600000) * 3600000" : "0") +
              ", SUM(cost_micro) FROM charges WHERE start_ms>=?1 AND start_ms<?2 AND kind=1 AND workload_id=0 "
              "GROUP BY 1 ORDER BY 1")
                 .c_str()));
    idle.Bind(1, from_ms);
    idle.Bind(2, to_ms);
    while (true) {
      SEEDANCE_ASSIGN_OR_RETURN(bool more, idle.Step());
      if (!more) break;
      const std::int64_t bucket = hourly ? idle.Int(0) : telemetry::kNoTimestamp;
      std::vector<AttributionRow*> rows;
      for (AttributionRow& r : rep.rows) {
        if (r.hour_ms == bucket) rows.push_back(&r);
      }
      const Money spread = SpreadByCost(MicroUsd(idle.Int(1)), rows);
      rep.reconciliation.idle -= spread;
      rep.reconciliation.attributed += spread;
      rep.reconciliation.idle_shared += spread;
      rep.reconciliation.idle_spread += spread;
    }
  }
  return rep;
}

Result<std::vector<AttributionRow>> Ledger::CostByTenant(std::int64_t from_ms,
                                                         std::int64_t to_ms, bool spread_empty_idle) {
  SEEDANCE_ASSIGN_OR_RETURN(AttributionReport rep,
                            Attribute(Dimension::kTenant, from_ms, to_ms, /*hourly=*/false, spread_empty_idle));
  return rep.rows;
}

Result<std::vector<Ledger::JobHour>> Ledger::JobHours(std::int64_t from_ms, std::int64_t to_ms) {
  SEEDANCE_RETURN_IF_ERROR(Flush());
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      db_, "SELECT w.job, w.tenant, (c.start_ms / 3600000) * 3600000 AS hour, SUM(c.cost_micro), "
           "SUM(CASE WHEN c.kind=0 THEN c.gpu_ms ELSE 0 END), GROUP_CONCAT(DISTINCT n.name) "
           "FROM charges c JOIN workloads w ON w.id=c.workload_id JOIN nodes n ON n.id=c.node_id "
           "WHERE c.start_ms>=?1 AND c.start_ms<?2 AND c.workload_id<>0 "
           "GROUP BY w.job, w.tenant, hour ORDER BY w.job, hour, w.tenant"));
  st.Bind(1, from_ms);
  st.Bind(2, to_ms);
  std::vector<JobHour> out;
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    JobHour j;
    j.job = st.Text(0);
    j.tenant = st.Text(1);
    j.hour_ms = st.Int(2);
    j.cost = MicroUsd(st.Int(3));
    j.gpu_ms = st.Int(4);
    std::string nodes = st.Text(5);
    for (std::size_t p = 0; p <= nodes.size();) {
      std::size_t c = nodes.find(',', p);
      if (c == std::string::npos) c = nodes.size();
      if (c > p) j.nodes.push_back(nodes.substr(p, c - p));
      p = c + 1;
    }
    std::sort(j.nodes.begin(), j.nodes.end());
    out.push_back(std::move(j));
  }
  return out;
}

Status Ledger::ForEachChargeLine(std::int64_t from_ms, std::int64_t to_ms,
                                 const std::function<void(const ChargeLine&)>& fn) {
  SEEDANCE_RETURN_IF_ERROR(Flush());
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      db_, "SELECT (c.start_ms / 3600000) * 3600000 AS hour, n.name, c.kind, "
           "COALESCE(w.name,''), COALESCE(w.namespace,''), COALESCE(w.tenant,''), "
           "COALESCE(w.business_unit,''), COALESCE(w.task_type,''), COALESCE(w.data_source,''), "
           "COALESCE(w.sla_tier,''), COALESCE(w.job,''), SUM(c.cost_micro), SUM(c.gpu_ms) "
           "FROM charges c JOIN nodes n ON n.id=c.node_id "
           "LEFT JOIN workloads w ON w.id=c.workload_id "
           "WHERE c.start_ms>=?1 AND c.start_ms<?2 "
           "GROUP BY hour, n.name, c.kind, c.workload_id ORDER BY hour, n.name, c.kind, "
           "c.workload_id"));
  st.Bind(1, from_ms);
  st.Bind(2, to_ms);
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    ChargeLine l;
    l.start_ms = st.Int(0);
    l.node = st.Text(1);
    l.kind = static_cast<ChargeKind>(st.Int(2));
    l.workload.name = st.Text(3);
    l.workload.namespace_name = st.Text(4);
    l.workload.tenant = st.Text(5);
    l.workload.business_unit = st.Text(6);
    l.workload.task_type = st.Text(7);
    l.workload.data_source = st.Text(8);
    l.workload.sla_tier = st.Text(9);
    l.workload.job = st.Text(10);
    l.cost = MicroUsd(st.Int(11));
    l.gpu_ms = st.Int(12);
    fn(l);
  }
  return Status::Ok();
}

Result<std::pair<std::int64_t, std::int64_t>> Ledger::ChargeRange() {
  SEEDANCE_RETURN_IF_ERROR(Flush());
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(
      st.Prepare(db_, "SELECT COALESCE(MIN(start_ms),0), COALESCE(MAX(end_ms),0) FROM bills"));
  SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::pair<std::int64_t, std::int64_t>{0, 0};
  return std::pair<std::int64_t, std::int64_t>{st.Int(0), st.Int(1)};
}

Status Ledger::RecordBreakerAction(const std::string& job, std::int64_t hour_ms, Money cost,
                                   Money threshold, bool paused, const std::string& finding) {
  SEEDANCE_RETURN_IF_ERROR(EnsureTransaction());
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      db_, "INSERT OR REPLACE INTO breaker_actions(job,hour_ms,cost_micro,threshold_micro,paused,"
           "finding) VALUES(?1,?2,?3,?4,?5,?6)"));
  st.Bind(1, job);
  st.Bind(2, hour_ms);
  st.Bind(3, cost.raw());
  st.Bind(4, threshold.raw());
  st.Bind(5, std::int64_t{paused ? 1 : 0});
  st.Bind(6, finding);
  return st.Run();
}

// ---------------------------------------------------------------------------------------------
// SampleWriter

struct Ledger::SampleWriter::Stmts {
  Stmt insert_series, find_series, insert_sample, find_sample, insert_ingest, finish_ingest;
};

Ledger::SampleWriter::SampleWriter(Ledger& ledger, std::string source, std::size_t batch_size,
                                   std::function<void(const IngestProgress&)> on_commit)
    : ledger_(ledger),
      source_(std::move(source)),
      batch_size_(std::max<std::size_t>(1, batch_size)),
      on_commit_(std::move(on_commit)),
      stmts_(std::make_unique<Stmts>()) {}

Ledger::SampleWriter::~SampleWriter() {
  if (open_) (void)Exec(ledger_.db_, "ROLLBACK");
}

Result<std::unique_ptr<Ledger::SampleWriter>> Ledger::NewSampleWriter(
    std::string source, std::size_t batch_size,
    std::function<void(const IngestProgress&)> on_commit) {
  SEEDANCE_RETURN_IF_ERROR(Flush());
  std::unique_ptr<SampleWriter> w(
      new SampleWriter(*this, std::move(source), batch_size, std::move(on_commit)));
  SampleWriter::Stmts& s = *w->stmts_;
  SEEDANCE_RETURN_IF_ERROR(s.insert_series.Prepare(
      db_, "INSERT OR IGNORE INTO series(key,metric,field,gpu_uuid,gpu,model,hostname,pod,"
           "namespace,container,pid,job) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)"));
  SEEDANCE_RETURN_IF_ERROR(s.find_series.Prepare(db_, "SELECT id FROM series WHERE key=?1"));
  SEEDANCE_RETURN_IF_ERROR(s.insert_sample.Prepare(
      db_, "INSERT OR IGNORE INTO samples(series_id,ts_ms,value) VALUES(?1,?2,?3)"));
  SEEDANCE_RETURN_IF_ERROR(s.find_sample.Prepare(db_, "SELECT value FROM samples WHERE series_id=?1 AND ts_ms=?2"));
  SEEDANCE_RETURN_IF_ERROR(s.finish_ingest.Prepare(
      db_, "INSERT INTO ingests(source,finished,samples,inserted) VALUES(?1,1,?2,?3)"));
  Stmt all;
  SEEDANCE_RETURN_IF_ERROR(all.Prepare(db_, "SELECT id, key FROM series"));
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, all.Step());
    if (!row) break;
    w->series_.emplace(all.Text(1), all.Int(0));
  }
  return w;
}

Status Ledger::SampleWriter::Begin() {
  SEEDANCE_RETURN_IF_ERROR(Exec(ledger_.db_, "BEGIN IMMEDIATE"));
  open_ = true;
  in_batch_ = 0;
  return Status::Ok();
}

Status Ledger::SampleWriter::Commit() {
  if (!open_) return Status::Ok();
  SEEDANCE_RETURN_IF_ERROR(Exec(ledger_.db_, "COMMIT"));
  open_ = false;
  progress_.committed_samples += in_batch_;
  progress_.last_line = batch_last_line_;
  in_batch_ = 0;
  if (on_commit_) on_commit_(progress_);
  return Status::Ok();
}

Result<std::int64_t> Ledger::SampleWriter::SeriesId(const telemetry::SampleView& s) {
  std::string key = telemetry::SeriesKey(s.metric, s.labels);
  if (auto it = series_.find(key); it != series_.end()) return it->second;
  if (max_series_ > 0 && series_.size() >= max_series_) {
    // Another writer of this ledger may have added it: known series stay writable.
    Stmt& find = stmts_->find_series;
    find.Bind(1, key);
    SEEDANCE_ASSIGN_OR_RETURN(bool row, find.Step());
    const std::int64_t id = row ? find.Int(0) : -1;
    find.Reset();
    if (id < 0) {
      return Status(StatusCode::kResourceExhausted, "series cap: the ledger holds " + std::to_string(series_.size()) +
                                    " distinct series, the cap (server.limits.max_series) is " +
                                    std::to_string(max_series_) + "; new series such as " + key.substr(0, 200) +
                                    " are refused (nothing of this batch was stored)");
    }
    series_.emplace(std::move(key), id);
    return id;
  }
  telemetry::EntityView e = telemetry::IdentifyEntity(s.labels);
  Stmt& ins = stmts_->insert_series;
  ins.Bind(1, key);
  ins.Bind(2, s.metric);
  ins.Bind(3, telemetry::FieldName(telemetry::LookupField(s.metric).field));
  std::string_view values[] = {e.gpu_uuid,       e.gpu,       e.model, e.hostname, e.pod,
                               e.namespace_name, e.container, e.pid,   e.job};
  for (int i = 0; i < 9; ++i) ins.Bind(4 + i, values[i]);
  SEEDANCE_RETURN_IF_ERROR(ins.Run());
  Stmt& find = stmts_->find_series;
  find.Bind(1, key);
  SEEDANCE_ASSIGN_OR_RETURN(bool row, find.Step());
  std::int64_t id = row ? find.Int(0) : -1;
  find.Reset();
  if (id < 0) return InternalError("series insert lost: " + key);
  series_.emplace(std::move(key), id);
  return id;
}

void Ledger::SampleWriter::OnSample(const telemetry::SampleView& s) {
  if (!error_.ok()) return;
  if (s.timestamp_ms == telemetry::kNoTimestamp) {
    error_ = InvalidArgumentError(std::string(s.source) + ":" + std::to_string(s.line) +
                                  ": sample without a timestamp (give a default time)");
    return;
  }
  if (!open_) {
    error_ = Begin();
    if (!error_.ok()) return;
  }
  auto id = SeriesId(s);
  if (!id.has_value()) {
    error_ = id.error();
    return;
  }
  Stmt& ins = stmts_->insert_sample;
  ins.Bind(1, *id);
  ins.Bind(2, s.timestamp_ms);
  if (!std::isfinite(s.value)) {  // NaN, ±Inf (text formats allow them): no value for cost
    ins.BindNull(3);
  } else {
    ins.Bind(3, s.value);
  }
  error_ = ins.Run();
  if (!error_.ok()) return;
  if (sqlite3_changes(ledger_.db_) > 0) {
    ++progress_.inserted;
  } else {
    // Already stored: the same value is a re-ingest; another value is a conflict, reported.
    Stmt& find = stmts_->find_sample;
    find.Bind(1, *id);
    find.Bind(2, s.timestamp_ms);
    auto row = find.Step();
    if (!row.has_value()) {
      error_ = row.error();
      return;
    }
    const bool stored_null = !*row || find.IsNull(0);
    const double stored = stored_null ? 0 : find.Double(0);
    find.Reset();
    const bool same = std::isfinite(s.value) ? (!stored_null && stored == s.value) : stored_null;
    if (same) {
      ++progress_.duplicates;
    } else {
      ++progress_.conflicts;
      if (conflicts_.size() < telemetry::ParseStats::kMaxKeptRejections) {
        std::ostringstream why;
        why << "duplicate sample: " << telemetry::SeriesKey(s.metric, s.labels) << " at " << s.timestamp_ms
            << " ms is already stored with value ";
        if (stored_null) {
          why << "(none)";
        } else {
          why << stored;
        }
        why << ", this line has " << s.value << " (the stored value is kept)";
        conflicts_.push_back({std::string(s.source), s.line, why.str()});
      }
    }
  }
  ++in_batch_;
  batch_last_line_ = s.line;
  if (in_batch_ >= batch_size_) error_ = Commit();
}

Status Ledger::SampleWriter::Finish() {
  SEEDANCE_RETURN_IF_ERROR(error_);
  // The ingests row goes into the last batch's transaction: one commit (one fsync), and the row
  // is durable exactly when the samples it counts are.
  if (!open_) SEEDANCE_RETURN_IF_ERROR(Begin());
  // One row per commit with that commit's counts (a writer kept across requests would otherwise
  // write running totals).
  const std::uint64_t samples = progress_.committed_samples + in_batch_;
  Stmt& fin = stmts_->finish_ingest;
  fin.Bind(1, source_);
  fin.Bind(2, static_cast<std::int64_t>(samples - finished_samples_));
  fin.Bind(3, static_cast<std::int64_t>(progress_.inserted - finished_inserted_));
  SEEDANCE_RETURN_IF_ERROR(fin.Run());
  SEEDANCE_RETURN_IF_ERROR(Commit());
  finished_samples_ = samples;
  finished_inserted_ = progress_.inserted;
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------

Status CheckChargesSumToBill(const NodeBill& bill, std::span<const ChargeRecord> charges) {
  Money sum;
  for (const ChargeRecord& c : charges) sum += c.cost;
  if (sum != bill.bill) {
    return FailedPreconditionError("charges of node " + bill.node + " at " +
                                   std::to_string(bill.start_ms) + " sum to " +
                                   std::to_string(sum.raw()) + " micro-USD, the bill is " +
                                   std::to_string(bill.bill.raw()));
  }
  return Status::Ok();
}

Status RecordCharges(ChargeSink& sink, const NodeInterval& n, std::span<const Charge> charges,
                     const std::string& node,
                     const std::function<const WorkloadDims&(std::uint32_t)>& dims) {
  thread_local std::vector<ChargeRecord> records;
  records.clear();
  for (const Charge& c : charges) {
    ChargeRecord r;
    r.start_ms = c.start_ms;
    r.end_ms = c.end_ms;
    r.node = node;
    r.kind = c.kind;
    if (c.workload != kNoWorkload) r.workload = dims(c.workload);
    r.cost = c.cost;
    r.gpu_ms = c.gpu_ms;
    records.push_back(std::move(r));
  }
  return sink.RecordNodeInterval({n.start_ms, n.end_ms, node, n.bill}, records);
}

Status RecordAllocatedInterval(ChargeSink& sink, const NodeInterval& n, IdleShare share,
                               const std::string& node,
                               const std::function<const WorkloadDims&(std::uint32_t)>& dims) {
  std::vector<Charge> charges;
  AllocateNodeInterval(n, share, charges);
  return RecordCharges(sink, n, charges, node, dims);
}

Result<std::vector<ProcessEvent>> LoadEventsCsv(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_uuid, t.ColumnIndex("gpu_uuid"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_start, t.ColumnIndex("start"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_end, t.ColumnIndex("end"));
  std::ptrdiff_t c_pod = t.FindColumn("pod"), c_ns = t.FindColumn("namespace"),
                 c_container = t.FindColumn("container"), c_pid = t.FindColumn("pid"),
                 c_job = t.FindColumn("job"), c_node = t.FindColumn("node"),
                 c_req = t.FindColumn("request_milli"), c_batch = t.FindColumn("batch_size"),
                 c_prec = t.FindColumn("precision");
  std::vector<ProcessEvent> out;
  for (const CsvTable::Row& row : t.rows()) {
    ProcessEvent e;
    e.gpu_uuid = std::string(t.Str(row, c_uuid));
    if (e.gpu_uuid.empty()) return t.FieldError(row, c_uuid, "must not be empty");
    for (auto [col, dst] : {std::pair{c_start, &e.start_ms}, std::pair{c_end, &e.end_ms}}) {
      auto ts = telemetry::ParseTimestamp(t.Str(row, col));
      if (!ts.has_value()) return t.FieldError(row, col, ts.error().message());
      *dst = *ts;
    }
    if (e.end_ms <= e.start_ms) return t.FieldError(row, c_end, "must be after start");
    auto str = [&](std::ptrdiff_t col) {
      return col < 0 ? std::string() : std::string(t.Str(row, static_cast<std::size_t>(col)));
    };
    e.pod = str(c_pod);
    e.namespace_name = str(c_ns);
    e.container = str(c_container);
    e.pid = str(c_pid);
    e.job = str(c_job);
    e.node = str(c_node);
    e.precision = str(c_prec);
    if (e.pod.empty() && e.pid.empty()) {
      return t.FieldError(row, c_uuid, "an event needs a pod or a pid");
    }
    for (auto [col, dst, lo] : {std::tuple{c_req, &e.request_milli, std::int64_t{1}},
                                std::tuple{c_batch, &e.batch_size, std::int64_t{0}}}) {
      if (col < 0 || t.Str(row, static_cast<std::size_t>(col)).empty()) continue;
      SEEDANCE_ASSIGN_OR_RETURN(std::int64_t v, t.Int(row, static_cast<std::size_t>(col)));
      if (v < lo) {
        return t.FieldError(row, static_cast<std::size_t>(col),
                            "must be >= " + std::to_string(lo));
      }
      *dst = v;
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace seedance::ledger
