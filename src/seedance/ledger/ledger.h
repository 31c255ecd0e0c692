#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/core/units.h"
#include "seedance/ledger/allocation.h"
#include "seedance/ledger/config.h"
#include "seedance/telemetry/parse.h"
#include "seedance/telemetry/sample.h"

struct sqlite3;

namespace seedance::ledger {

// One ledger line as a writer (the simulator, the telemetry attribution) hands it over.
struct ChargeRecord {
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
  std::string node;
  ChargeKind kind = ChargeKind::kWorkload;
  WorkloadDims workload;  // name empty for unshared idle and for overhead
  Money cost;             // micro-USD
  std::int64_t gpu_ms = 0;
};

// What a node costs for one interval: the truth the charges must sum to.
struct NodeBill {
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
  std::string node;
  Money bill;
};

// Where charges go. Ledger implements it; tests use fakes.
class ChargeSink {
 public:
  virtual ~ChargeSink() = default;
  // Records one node interval: its bill and the charges that split it.
  // Errors: kFailedPrecondition when the charges do not sum to the bill exactly.
  virtual Status RecordNodeInterval(const NodeBill& bill, std::span<const ChargeRecord> charges) = 0;
};

// Returns kFailedPrecondition naming the node, the interval and both sums unless the charges sum
// to the bill exactly (what every ChargeSink checks).
Status CheckChargesSumToBill(const NodeBill& bill, std::span<const ChargeRecord> charges);

// Splits `n` with AllocateNodeInterval and records it in `sink` under node name `node`;
// `dims(id)` gives the dimensions of workload id (> 0). The simulator's entry point: it knows
// who held what on a node for an interval and what the node cost; the ledger does the rest.
Status RecordAllocatedInterval(ChargeSink& sink, const NodeInterval& n, IdleShare share,
                               const std::string& node,
                               const std::function<const WorkloadDims&(std::uint32_t)>& dims);
// Same, for charges already computed by AllocateNodeInterval.
Status RecordCharges(ChargeSink& sink, const NodeInterval& n, std::span<const Charge> charges,
                     const std::string& node,
                     const std::function<const WorkloadDims&(std::uint32_t)>& dims);

// A process/pod event: which workload held which GPU, when (S6.2). Optional extras feed the
// circuit breaker's evidence.
struct ProcessEvent {
  std::string gpu_uuid;
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;  // exclusive
  std::string pod;
  std::string namespace_name;
  std::string container;
  std::string pid;
  std::string job;
  std::string node;
  std::int64_t request_milli = 1000;
  std::int64_t batch_size = 0;  // 0 = unknown
  std::string precision;        // e.g. fp32, bf16, fp8; "" = unknown
};

// One job incarnation's hold on one node, as a scheduler's accounting reports it (Slurm: one
// sacct record gives one per node of the job). The ledger keeps these for good, keyed by (source,
// cluster, job, incarnation, node), so the charges they give can be recomputed after the scheduler
// has forgotten the job.
struct JobAllocation {
  std::string cluster;
  std::int64_t job_id = 0;
  std::int64_t incarnation = 0;  // Slurm: the incarnation's start, Unix seconds
  std::string node;
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;   // the end, or while running the last time it was seen running
  bool ended = false;
  int gpus = 0;              // GPUs it holds on the node
  int node_gpus = 0;         // GPUs the node has (what the node's bill covers)
  Money price_per_gpu_hour;  // the node's GPU model at the price table's price
  WorkloadDims workload;
  // The node's device indices it holds (Slurm: `scontrol show job -d`), ascending; empty = not
  // known. They join the node's GPU telemetry (hostname + gpu index) to the job
  // (job_telemetry.h).
  std::vector<int> gpu_indices;
  bool operator==(const JobAllocation&) const = default;
};
// "0,2,3" as stored, and back. Errors: kInternal naming the column.
std::string GpuIndexList(const std::vector<int>& indices);
Result<std::vector<int>> ParseGpuIndexList(std::string_view text);

// Reads events from CSV: gpu_uuid,start,end[,pod,namespace,container,pid,job,node,request_milli,
// batch_size,precision]; times as RFC 3339 or Unix seconds. Errors name file:line:column and field.
Result<std::vector<ProcessEvent>> LoadEventsCsv(const std::string& path);

struct AttributionRow {
  std::string key;              // the dimension's value
  std::int64_t hour_ms = telemetry::kNoTimestamp;  // set for hourly reports
  Money cost;
  std::int64_t gpu_ms = 0;      // GPU time the workloads held (workload lines only)
};

// bill = attributed + idle + overhead, exactly, when every node interval was recorded whole.
struct Reconciliation {
  Money bill;         // sum of node bills
  Money attributed;   // workload lines + idle shared to workloads
  Money idle;         // idle not shared
  Money overhead;
  Money idle_shared;  // part of `attributed` that is shared idle (information)
  // Part of idle_shared: idle of nodes (or steps) no workload used, spread over every workload of
  // the report (of the hour, for hourly reports) in proportion to its cost, as OpenCost's shareIdle
  // does cluster-wide. Only with Attribute's spread_empty_idle.
  Money idle_spread;
  bool exact() const { return bill == attributed + idle + overhead; }
};

struct AttributionReport {
  Dimension dimension = Dimension::kTenant;
  bool hourly = false;
  std::vector<AttributionRow> rows;  // ordered by (hour, key)
  Reconciliation reconciliation;
};

// Progress of an ingest, reported after each committed batch.
struct IngestProgress {
  std::uint64_t committed_samples = 0;  // handed to the ledger and committed so far
  std::uint64_t inserted = 0;           // new rows (re-ingested samples are not new)
  std::uint64_t duplicates = 0;         // same series, time and value as a stored sample: not new
  std::uint64_t conflicts = 0;          // same series and time, another value: the stored one kept
  std::uint64_t last_line = 0;          // input line of the last committed sample
};

// Ledger: the durable cost ledger in SQLite (WAL, schema versioned with migrations in order,
// PRAGMA user_version). Holds telemetry samples (series + samples, unique per (series, time), so
// re-ingesting a file adds nothing), process events, node bills and charges (unique per
// (source, node, interval start, kind, workload): recording the same interval again replaces it).
// Thread-safety: one Ledger per thread; several processes may open the same file (SQLite locks).
class Ledger final : public ChargeSink {
 public:
  static constexpr int kSchemaVersion = 5;

  // Opens or creates `path` and migrates it to kSchemaVersion. Errors: kUnavailable (cannot
  // open), kFailedPrecondition (the file's schema is newer than this binary), kInternal.
  static Result<std::unique_ptr<Ledger>> Open(const std::string& path);
  ~Ledger() override;
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  int schema_version() const;
  // Runs PRAGMA integrity_check; returns "ok" or the problems.
  Result<std::string> IntegrityCheck();

  // --- telemetry ---
  // A sink that writes samples in transactions of `batch_size`; call Finish() at the end.
  class SampleWriter;
  Result<std::unique_ptr<SampleWriter>> NewSampleWriter(
      std::string source, std::size_t batch_size,
      std::function<void(const IngestProgress&)> on_commit = {});
  Result<std::int64_t> CountSamples();
  // Calls fn(series key, timestamp ms, value) for every stored sample with a value, ordered by
  // (series key, time). The key is the exposition form `metric{labels}` (telemetry::SeriesKey),
  // so the samples can be replayed through the text parser (seedance audit run --db).
  Status ForEachSample(const std::function<void(std::string_view key, std::int64_t ts_ms, double value)>& fn);

  // Per stored series of counter `metric` with samples in [from, to): its workload labels and its
  // mean rate over the range (increase per second; a counter reset counts from zero), in series
  // order. E.g. cAdvisor's container_pressure_io_waiting_seconds_total: the share of time the
  // container waited on I/O (the advisor's input-stall evidence).
  struct CounterRate {
    std::string pod, namespace_name, container, job;
    double rate_per_s = 0;
    std::int64_t samples = 0;
    std::int64_t first_ms = 0, last_ms = 0;
  };
  Result<std::vector<CounterRate>> CounterRates(std::string_view metric, std::int64_t from_ms,
                                                std::int64_t to_ms);

  // Per stored series of `metric` with a sample in [from, to): its key (`metric{labels}`, every
  // label as ingested) and workload labels, in series order. E.g. kube-state-metrics'
  // kube_pod_annotations, whose `annotation_*` labels carry a pod's allow-listed annotations.
  struct SeriesInfo {
    std::string key, pod, namespace_name, job;
    std::int64_t first_ms = 0, last_ms = 0;
  };
  Result<std::vector<SeriesInfo>> SeriesOf(std::string_view metric, std::int64_t from_ms,
                                           std::int64_t to_ms);

  // --- events ---
  Status AddEvents(std::span<const ProcessEvent> events);
  Result<std::vector<ProcessEvent>> Events(std::int64_t from_ms, std::int64_t to_ms);

  // --- charges ---
  // Charges are tagged with a source ("sim" unless set) so that writers do not overwrite each
  // other. Writes go into an open transaction committed every 50,000 rows and by Flush().
  void set_source(std::string source) { source_ = std::move(source); }
  Status RecordNodeInterval(const NodeBill& bill, std::span<const ChargeRecord> charges) override;
  // Commits what was recorded. Records are durable only after Flush() returns OK; destroying
  // the Ledger rolls back what was not flushed.
  Status Flush();
  // Deletes the current source's charges and bills with start in [from, to).
  Status DeleteCharges(std::int64_t from_ms, std::int64_t to_ms);
  // Same, for one node and start >= from.
  Status DeleteNodeCharges(const std::string& node, std::int64_t from_ms);
  // Opens a transaction that nothing commits before Flush(): no intermediate commit every
  // 50,000 rows (a writer that needs all or nothing, e.g. one controller cycle).
  Status BeginTransaction();
  // Drops what was written since the last Flush().
  void Rollback();

  // --- job allocations (the current source's) ---
  // Inserts or replaces (cluster, job_id, incarnation, node).
  Status PutJobAllocation(const JobAllocation& a);
  // Every node of one incarnation, ordered by node.
  Result<std::vector<JobAllocation>> FindJobAllocations(const std::string& cluster,
                                                        std::int64_t job_id,
                                                        std::int64_t incarnation);
  // On `node` with end_ms > from_ms, ordered by (start, cluster, job, incarnation, node).
  Result<std::vector<JobAllocation>> JobAllocationsOnNode(const std::string& node,
                                                          std::int64_t from_ms);
  // The largest start or end of an allocation on `node` that is < before_ms, if any.
  Result<std::optional<std::int64_t>> LastCutBefore(const std::string& node,
                                                    std::int64_t before_ms);
  // Not ended, ordered by (cluster, job, incarnation, node).
  Result<std::vector<JobAllocation>> OpenJobAllocations();

  // --- cursors of incremental readers (written in the caller's transaction) ---
  Result<std::optional<std::int64_t>> Cursor(const std::string& name);
  Status SetCursor(const std::string& name, std::int64_t value);

  // --- queries ---
  // spread_empty_idle (with an idle_share other than none): the idle no workload shared a node with
  // (empty nodes and steps) is spread over the report's rows too, in proportion to their cost and
  // exactly (largest remainders), so bill = attributed + idle + overhead still holds to the
  // micro-dollar; idle keeps only what falls in an hour no workload ran at all.
  Result<AttributionReport> Attribute(Dimension dimension, std::int64_t from_ms,
                                      std::int64_t to_ms, bool hourly, bool spread_empty_idle = false);
  // Cost per tenant over [from, to), ordered by tenant (what cost-benchmark reports).
  Result<std::vector<AttributionRow>> CostByTenant(std::int64_t from_ms, std::int64_t to_ms,
                                                   bool spread_empty_idle = false);
  // Per (job, hour): cost and GPU time, for the breaker.
  struct JobHour {
    std::string job;
    std::string tenant;
    std::int64_t hour_ms = 0;
    Money cost;
    std::int64_t gpu_ms = 0;
    std::vector<std::string> nodes;
  };
  Result<std::vector<JobHour>> JobHours(std::int64_t from_ms, std::int64_t to_ms);
  // One FOCUS-ready line per (hour, node, kind, workload), with dims.
  struct ChargeLine {
    std::int64_t start_ms = 0;  // hour
    std::string node;
    ChargeKind kind = ChargeKind::kWorkload;
    WorkloadDims workload;
    Money cost;
    std::int64_t gpu_ms = 0;
  };
  Status ForEachChargeLine(std::int64_t from_ms, std::int64_t to_ms,
                           const std::function<void(const ChargeLine&)>& fn);
  // Time range [min start, max end) of all charges, or {0, 0}.
  Result<std::pair<std::int64_t, std::int64_t>> ChargeRange();

  // Low-level access for the module's readers (attribution from telemetry).
  sqlite3* db() { return db_; }

  Status RecordBreakerAction(const std::string& job, std::int64_t hour_ms, Money cost,
                             Money threshold, bool paused, const std::string& finding);

 private:
  explicit Ledger(sqlite3* db);
  Status Migrate();
  Result<std::int64_t> NodeId(const std::string& node);
  Result<std::int64_t> WorkloadId(const WorkloadDims& w);
  Status EnsureTransaction();

  struct Statements;
  sqlite3* db_;
  std::unique_ptr<Statements> stmts_;
  std::string source_ = "sim";
  bool in_transaction_ = false;
  bool explicit_transaction_ = false;
  std::size_t pending_ = 0;
  std::unordered_map<std::string, std::int64_t> node_ids_;
  std::unordered_map<std::string, std::int64_t> workload_ids_;
};

// The SampleSink that writes to a Ledger (see Ledger::NewSampleWriter).
class Ledger::SampleWriter final : public telemetry::SampleSink {
 public:
  ~SampleWriter() override;
  void OnSample(const telemetry::SampleView& sample) override;
  // Commits the last batch. Returns the first storage error met, if any.
  Status Finish();
  const IngestProgress& progress() const { return progress_; }
  // The first kMaxKeptRejections samples that collided with a stored sample of another value
  // (source:line, series, time, both values): duplicates are reported, never merged silently.
  const std::vector<telemetry::Rejection>& conflicts() const { return conflicts_; }
  // Caps the distinct series this writer may know (those in the ledger when it opened plus those
  // it adds); 0 = no cap. A sample of a new series past the cap fails the batch with
  // kResourceExhausted naming the cap, so the series cache (and the ledger) stay bounded.
  void set_max_series(std::size_t max_series) { max_series_ = max_series; }
  std::size_t series_cached() const { return series_.size(); }

 private:
  friend class Ledger;
  SampleWriter(Ledger& ledger, std::string source, std::size_t batch_size,
               std::function<void(const IngestProgress&)> on_commit);
  Status Begin();
  Status Commit();
  Result<std::int64_t> SeriesId(const telemetry::SampleView& s);

  Ledger& ledger_;
  std::string source_;
  std::size_t batch_size_;
  std::function<void(const IngestProgress&)> on_commit_;
  struct Stmts;
  std::unique_ptr<Stmts> stmts_;
  std::unordered_map<std::string, std::int64_t> series_;
  std::size_t in_batch_ = 0;
  std::uint64_t batch_last_line_ = 0;
  IngestProgress progress_;
  // progress_ when the last ingests row was written: each row counts its own commit only.
  std::uint64_t finished_samples_ = 0, finished_inserted_ = 0;
  std::size_t max_series_ = 0;
  std::vector<telemetry::Rejection> conflicts_;
  Status error_;
  bool open_ = false;
};

}  // namespace seedance::ledger
