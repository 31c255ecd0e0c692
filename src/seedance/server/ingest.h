#pragma once

// The server's telemetry writer: one thread owns the ledger's write connection and commits what
// the HTTP handlers and the scrapers hand it in groups (group commit). A caller blocks until its
// samples are committed (or the commit failed), so a 200 always means "durable": SQLite WAL with
// synchronous=FULL. One request is never split across transactions: nothing half-written.
//
// Storage errors are classified for HTTP: a locked database (SQLITE_BUSY/LOCKED after the busy
// timeout) -> kUnavailable "ledger locked: ...", a full disk or page limit (SQLITE_FULL) ->
// kUnavailable "ledger full: ...", an I/O error -> kUnavailable "ledger I/O error: ...";
// anything else kInternal. The server answers kUnavailable with 503 and Retry-After.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/telemetry/parse.h"
#include "seedance/telemetry/sample.h"

namespace seedance::server {

// Samples of one request, owned compactly: label strings live in one arena per batch.
class SampleBatch final : public telemetry::SampleSink {
 public:
  // Limits per series: more labels, or more label bytes, make the batch invalid (first
  // violation kept in `limit_error`).
  static constexpr std::size_t kMaxLabels = 64;
  static constexpr std::size_t kMaxLabelBytes = 16 * 1024;
  // Prometheus sets no limit on names; 1 KiB is far above any exporter's (dcgm-exporter's longest
  // is under 64 bytes) and keeps a 10 MB "name" out of the ledger.
  static constexpr std::size_t kMaxMetricNameBytes = 1024;
  // Sample times: 1970-01-01 .. 2100-01-01 (Unix ms). -2^63 and far-future times are refused.
  static constexpr std::int64_t kMinTimestampMs = 0;
  static constexpr std::int64_t kMaxTimestampMs = 4'102'444'800'000;

  void OnSample(const telemetry::SampleView& sample) override;
  std::size_t size() const { return samples_.size(); }
  const std::string& limit_error() const { return limit_error_; }
  // The part of the input limit_error() is about: "labels", "metric" or "timestamp".
  const std::string& limit_field() const { return limit_field_; }
  std::int64_t newest_ms() const { return newest_ms_; }
  // The newest value of the gauge seedance_sla_breach_ratio in the batch (NaN when absent): the
  // SLA-breach rate the unit cost (S1.4) is weighted with.
  double sla_breach_ratio() const { return breach_ratio_; }
  static constexpr std::string_view kSlaBreachMetric = "seedance_sla_breach_ratio";

  // Replays the samples into `sink` (views valid during the call).
  void Replay(telemetry::SampleSink& sink) const;

 private:
  struct Item {
    std::uint32_t metric_off, metric_len;
    std::uint32_t labels_begin, labels_end;  // into label_offs_
    telemetry::MetricType type;
    double value;
    std::int64_t ts_ms;
    std::uint64_t line;
  };
  std::string arena_;
  std::vector<std::uint32_t> label_offs_;  // (name_off, name_len, value_off, value_len) x n
  std::vector<Item> samples_;
  std::string limit_error_;
  std::string limit_field_;
  std::int64_t newest_ms_ = telemetry::kNoTimestamp;
  double breach_ratio_ = std::numeric_limits<double>::quiet_NaN();
  std::int64_t breach_ts_ = telemetry::kNoTimestamp;
};

struct IngestWriterOptions {
  std::string db;                   // SQLite ledger path
  int busy_timeout_ms = 2'000;      // how long a commit waits for a lock before 503
  std::size_t max_group_samples = 500'000;  // a group closes at this many samples
  std::int64_t max_page_count = 0;  // caps the ledger's size (SQLite pages); 0 = no cap
  std::int64_t cache_kib = 256 * 1024;  // SQLite page cache and mmap window of the writer
  std::size_t max_series = 0;       // distinct series the ledger may hold (0 = no cap); 413 past it
};

class IngestWriter {
 public:
  // Opens the ledger (creating it) and starts the writer thread.
  // Errors: those of ledger::Ledger::Open.
  static Result<std::unique_ptr<IngestWriter>> Open(IngestWriterOptions options);
  ~IngestWriter();  // commits what is queued, then stops
  IngestWriter(const IngestWriter&) = delete;
  IngestWriter& operator=(const IngestWriter&) = delete;

  // Queues `batch` under `source` (the ledger's ingests row) and blocks until it is committed.
  // Errors: kUnavailable (locked, full, I/O: the batch is not stored), kInternal.
  Status Write(const std::string& source, std::shared_ptr<const SampleBatch> batch);

  // The newest sample time committed (Unix ms), kNoTimestamp before the first.
  std::int64_t newest_committed_ms() const { return newest_ms_.load(); }
  std::uint64_t commits() const { return commits_.load(); }

 private:
  struct Pending;
  struct Impl;
  explicit IngestWriter(std::unique_ptr<Impl> impl);
  void Run();

  std::unique_ptr<Impl> impl_;
  std::atomic<std::int64_t> newest_ms_{telemetry::kNoTimestamp};
  std::atomic<std::uint64_t> commits_{0};
};

}  // namespace seedance::server
