#include "seedance/server/ingest.h"

#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "seedance/ledger/ledger.h"

namespace seedance::server {

// --- SampleBatch -------------------------------------------------------------------------------

namespace {
std::uint32_t Append(std::string& arena, std::string_view s) {
  auto off = static_cast<std::uint32_t>(arena.size());
  arena.append(s);
  return off;
}
}  // namespace

void SampleBatch::OnSample(const telemetry::SampleView& s) {
  if (!limit_error_.empty()) return;
  std::size_t bytes = 0;
  for (const auto& l : s.labels) bytes += l.name.size() + l.value.size();
  if (s.labels.size() > kMaxLabels || bytes > kMaxLabelBytes) {
    limit_error_ = fmt::format("series {} (line {}) has {} labels, {} bytes: at most {} labels and {} "
                               "bytes per series",
                               s.metric.substr(0, 128), s.line, s.labels.size(), bytes, kMaxLabels, kMaxLabelBytes);
    limit_field_ = "labels";
    return;
  }
  if (s.metric.size() > kMaxMetricNameBytes) {
    limit_error_ = fmt::format("metric name of {} bytes (line {}, starting '{}'): at most {} bytes", s.metric.size(),
                               s.line, s.metric.substr(0, 64), kMaxMetricNameBytes);
    limit_field_ = "metric";
    return;
  }
  if (s.timestamp_ms < kMinTimestampMs || s.timestamp_ms >= kMaxTimestampMs) {
    limit_error_ = fmt::format("series {} (line {}): timestamp {} ms is outside 1970-01-01 .. 2100-01-01",
                               s.metric.substr(0, 128), s.line, s.timestamp_ms);
    limit_field_ = "timestamp";
    return;
  }
  Item it{};
  it.metric_off = Append(arena_, s.metric);
  it.metric_len = static_cast<std::uint32_t>(s.metric.size());
  it.labels_begin = static_cast<std::uint32_t>(label_offs_.size());
  for (const auto& l : s.labels) {
    label_offs_.push_back(Append(arena_, l.name));
    label_offs_.push_back(static_cast<std::uint32_t>(l.name.size()));
    label_offs_.push_back(Append(arena_, l.value));
    label_offs_.push_back(static_cast<std::uint32_t>(l.value.size()));
  }
  it.labels_end = static_cast<std::uint32_t>(label_offs_.size());
  it.type = s.type;
  it.value = s.value;
  it.ts_ms = s.timestamp_ms;
  it.line = s.line;
  samples_.push_back(it);
  if (s.timestamp_ms != telemetry::kNoTimestamp) newest_ms_ = std::max(newest_ms_, s.timestamp_ms);
  if (s.metric.size() == kSlaBreachMetric.size() && s.metric == kSlaBreachMetric &&
      s.timestamp_ms >= breach_ts_) {
    breach_ts_ = s.timestamp_ms;
    breach_ratio_ = s.value;
  }
}

void SampleBatch::Replay(telemetry::SampleSink& sink) const {
  std::vector<telemetry::LabelView> labels;
  std::string_view arena(arena_);
  for (const Item& it : samples_) {
    labels.clear();
    for (std::uint32_t i = it.labels_begin; i < it.labels_end; i += 4) {
      labels.push_back({arena.substr(label_offs_[i], label_offs_[i + 1]),
                        arena.substr(label_offs_[i + 2], label_offs_[i + 3])});
    }
    telemetry::SampleView v;
    v.metric = arena.substr(it.metric_off, it.metric_len);
    v.type = it.type;
    v.labels = labels;
    v.value = it.value;
    v.timestamp_ms = it.ts_ms;
    v.source = "<http>";
    v.line = it.line;
    sink.OnSample(v);
  }
}

// --- IngestWriter ------------------------------------------------------------------------------

struct IngestWriter::Pending {
  std::string source;
  std::shared_ptr<const SampleBatch> batch;
  bool done = false;
  Status status;
};

struct IngestWriter::Impl {
  IngestWriterOptions options;
  std::unique_ptr<ledger::Ledger> ledger;
  std::map<std::string, std::unique_ptr<ledger::Ledger::SampleWriter>> writers;  // by source
  std::mutex mu;
  std::condition_variable work_cv;
  std::condition_variable done_cv;
  std::deque<Pending*> queue;
  bool stopping = false;
  std::thread thread;
};

namespace {

// Classifies a failed write by SQLite's error code on the connection.
Status Classify(sqlite3* db, const Status& s) {
  int code = sqlite3_errcode(db) & 0xff;
  switch (code) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return UnavailableError(
          fmt::format("ledger locked: another writer holds the database; retry later ({})", s.message()));
    case SQLITE_FULL:
      return UnavailableError(fmt::format(
          "ledger full: the disk or the database size limit is reached; nothing of this request was "
          "stored ({})", s.message()));
    case SQLITE_IOERR:
      return UnavailableError(
          fmt::format("ledger I/O error: nothing of this request was stored ({})", s.message()));
    default:
      break;
  }
  if (s.code() == StatusCode::kUnavailable) return UnavailableError(fmt::format("ledger locked: {}", s.message()));
  return s;
}

}  // namespace

IngestWriter::IngestWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<IngestWriter>> IngestWriter::Open(IngestWriterOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  SEEDANCE_ASSIGN_OR_RETURN(impl->ledger, ledger::Ledger::Open(impl->options.db));
  sqlite3_busy_timeout(impl->ledger->db(), impl->options.busy_timeout_ms);
  // The samples B-tree outgrows SQLite's default 2 MiB page cache within minutes of ingest; every
  // insert then re-reads pages through read() (half the writer's time in the kernel, measured with
  // perf). A larger cache and memory-mapped reads keep the hot pages in this process. A checkpoint
  // every 64 MiB of WAL instead of SQLite's 4 MiB copies each hot page back once per checkpoint,
  // not many times (durability is the same: synchronous=FULL fsyncs the WAL at every commit).
  {
    const std::string pragmas =
        fmt::format("PRAGMA cache_size=-{}; PRAGMA mmap_size={}; PRAGMA wal_autocheckpoint=16384",
                    impl->options.cache_kib, impl->options.cache_kib * 1024);
    if (sqlite3_exec(impl->ledger->db(), pragmas.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      return InternalError(impl->options.db + ": " + sqlite3_errmsg(impl->ledger->db()));
    }
  }
  if (impl->options.max_page_count > 0) {
    std::string pragma = fmt::format("PRAGMA max_page_count={}", impl->options.max_page_count);
    if (sqlite3_exec(impl->ledger->db(), pragma.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
      return InternalError(impl->options.db + ": " + sqlite3_errmsg(impl->ledger->db()));
    }
  }
  std::unique_ptr<IngestWriter> w(new IngestWriter(std::move(impl)));
  w->impl_->thread = std::thread([p = w.get()] { p->Run(); });
  return w;
}

IngestWriter::~IngestWriter() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->work_cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

Status IngestWriter::Write(const std::string& source, std::shared_ptr<const SampleBatch> batch) {
  if (batch == nullptr || batch->size() == 0) return Status::Ok();
  Pending p;
  p.source = source;
  p.batch = std::move(batch);
  std::unique_lock lock(impl_->mu);
  if (impl_->stopping) return UnavailableError("server is stopping");
  impl_->queue.push_back(&p);
  impl_->work_cv.notify_one();
  impl_->done_cv.wait(lock, [&p] { return p.done; });
  return p.status;
}

void IngestWriter::Run() {
  Impl& m = *impl_;
  std::vector<Pending*> group;
  while (true) {
    group.clear();
    {
      std::unique_lock lock(m.mu);
      m.work_cv.wait(lock, [&m] { return m.stopping || !m.queue.empty(); });
      if (m.queue.empty() && m.stopping) return;
      std::size_t n = 0;
      while (!m.queue.empty() && (group.empty() || n < m.options.max_group_samples)) {
        n += m.queue.front()->batch->size();
        group.push_back(m.queue.front());
        m.queue.pop_front();
      }
    }
    // One transaction per source in the group; requests of a source commit together.
    std::stable_sort(group.begin(), group.end(),
                     [](const Pending* a, const Pending* b) { return a->source < b->source; });
    std::int64_t newest = telemetry::kNoTimestamp;
    for (std::size_t i = 0; i < group.size();) {
      std::size_t j = i;
      while (j < group.size() && group[j]->source == group[i]->source) ++j;
      const std::string& source = group[i]->source;
      Status s;
      auto& writer = m.writers[source];
      if (writer == nullptr) {
        auto w = m.ledger->NewSampleWriter(source, SIZE_MAX);
        if (w.has_value()) {
          writer = std::move(*w);
          writer->set_max_series(m.options.max_series);
        } else {
          s = Classify(m.ledger->db(), w.error());
        }
      }
      if (s.ok()) {
        for (std::size_t k = i; k < j; ++k) group[k]->batch->Replay(*writer);
        s = writer->Finish();
        if (!s.ok()) {
          s = Classify(m.ledger->db(), s);
          // Nothing half-written: roll back, and forget the writer (its series cache may name
          // rows the rollback removed).
          if (sqlite3_get_autocommit(m.ledger->db()) == 0) {
            (void)sqlite3_exec(m.ledger->db(), "ROLLBACK", nullptr, nullptr, nullptr);
          }
          m.writers.erase(source);
        }
      }
      if (s.ok()) {
        for (std::size_t k = i; k < j; ++k) newest = std::max(newest, group[k]->batch->newest_ms());
      }
      for (std::size_t k = i; k < j; ++k) group[k]->status = s;
      i = j;
    }
    if (newest != telemetry::kNoTimestamp && newest > newest_ms_.load()) newest_ms_.store(newest);
    commits_.fetch_add(1);
    {
      std::lock_guard lock(m.mu);
      for (Pending* p : group) p->done = true;
    }
    m.done_cv.notify_all();
  }
}

}  // namespace seedance::server
