// seedance ingest: reads telemetry (Prometheus text, OpenMetrics, dcgm-exporter, OTLP JSON) or
// process/pod events (CSV) into the cost ledger. Bad lines are rejected with file:line and reason
// and counted; the rest is ingested. Samples are committed in batches (one transaction each), and
// re-ingesting a file adds nothing (a sample is unique per series and time); a sample whose series
// and time are stored with another value is reported with file:line, never merged silently. A
// sample without a timestamp is an error unless --time gives one. With --prometheus URL it pulls
// the same series from a Prometheus server's query_range API instead of files (docs/TELEMETRY.md).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.h"
#include "common.h"
#include "seedance/core/clock.h"
#include "seedance/core/duration.h"
#include "seedance/ledger/ledger.h"
#include "seedance/prometheus/source.h"
#include "seedance/telemetry/parse.h"

namespace seedance::cli {
namespace {

// "37% (300 of 810), ETA 1m12s": the share done and the time left at the pace so far.
std::string ProgressShare(std::uint64_t done, std::uint64_t total, double elapsed_s) {
  if (total == 0) return "";
  const double f = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
  std::string eta = "ETA unknown";
  if (f > 0 && elapsed_s > 0) {
    const auto left = static_cast<std::int64_t>(std::llround(elapsed_s * (1.0 - f) / f));
    eta = left >= 60 ? fmt::format("ETA {}m{:02}s", left / 60, left % 60) : fmt::format("ETA {}s", left);
  }
  return fmt::format("{:.0f}% ({} of {}), {}", 100 * f, done, total, eta);
}

// The lines of a file (the progress' denominator); 0 when it cannot be read.
std::uint64_t CountLines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::uint64_t n = 0;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    n += static_cast<std::uint64_t>(std::count(buf, buf + in.gcount(), '\n'));
  }
  return n;
}

struct IngestOptions {
  std::string format;
  std::vector<std::string> files;
  std::string db;
  std::size_t batch = 5000;
  std::string time;
  bool progress = false;
  std::size_t max_errors = 20;
  // --prometheus
  std::string prometheus;
  std::string from, to, step = "60s";
  std::int64_t chunk_points = 360;  // 6 h at 60 s: answers stay tens of MB on a 1,000-GPU fleet
  std::string bearer_token_file, basic_auth_file, ca_file;
  bool insecure_skip_verify = false;
  std::string connect_timeout = "10s", read_timeout = "2m";
  std::vector<std::string> queries;
  bool only_queries = false;
};

// Parses a duration flag into whole milliseconds (> 0).
Result<std::int64_t> DurationMs(const std::string& flag, const std::string& text) {
  auto d = ParseDurationSeconds(text);
  if (!d.has_value()) return InvalidArgumentError(flag + ": " + d.error().message());
  const auto ms = static_cast<std::int64_t>(std::llround(*d * 1000.0));
  if (ms <= 0) return InvalidArgumentError(flag + ": must be positive");
  return ms;
}

Result<std::int64_t> TimeMs(const std::string& flag, const std::string& text) {
  if (text.empty()) return InvalidArgumentError(flag + ": required with --prometheus");
  auto t = telemetry::ParseTimestamp(text);
  if (!t.has_value()) return InvalidArgumentError(flag + ": " + t.error().message());
  return *t;
}

// seedance ingest --prometheus: every query over [from, to) into the ledger, one source per URL,
// so that pulling the same range again adds nothing (samples are unique per series and time).
int IngestPrometheus(const IngestOptions& o) {
  auto run = [&]() -> Status {
    SEEDANCE_ASSIGN_OR_RETURN(const std::int64_t from, TimeMs("--from", o.from));
    SEEDANCE_ASSIGN_OR_RETURN(const std::int64_t to, TimeMs("--to", o.to));
    SEEDANCE_ASSIGN_OR_RETURN(const std::int64_t step, DurationMs("--step", o.step));
    SEEDANCE_ASSIGN_OR_RETURN(const std::int64_t connect_ms, DurationMs("--connect-timeout", o.connect_timeout));
    SEEDANCE_ASSIGN_OR_RETURN(const std::int64_t read_ms, DurationMs("--read-timeout", o.read_timeout));
    // Check the range before connecting.
    if (auto chunks = prometheus::PlanChunks(from, to, step, o.chunk_points); !chunks.has_value()) return chunks.error();
    prometheus::SourceOptions so;
    so.url = o.prometheus;
    so.ca_file = o.ca_file;
    so.insecure_skip_verify = o.insecure_skip_verify;
    so.connect_timeout_s = static_cast<int>(std::max<std::int64_t>(1, (connect_ms + 999) / 1000));
    so.read_timeout_s = static_cast<int>(std::max<std::int64_t>(1, (read_ms + 999) / 1000));
    if (!o.bearer_token_file.empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(so.bearer_token, prometheus::ReadTokenFile(o.bearer_token_file));
    }
    if (!o.basic_auth_file.empty()) SEEDANCE_RETURN_IF_ERROR(prometheus::ReadBasicAuthFile(o.basic_auth_file, so));
    if (!o.ca_file.empty() && !std::ifstream(o.ca_file)) return NotFoundError("--ca-file " + o.ca_file + ": cannot open");
    if (o.insecure_skip_verify && o.prometheus.rfind("https://", 0) == 0) {
      std::cerr << "seedance: warning: --insecure-skip-verify: the server's certificate is not checked; anyone on the "
                   "path can read and change the answers\n";
    }
    std::vector<prometheus::Query> queries;
    if (!o.only_queries) queries = prometheus::DefaultQueries();
    for (const std::string& q : o.queries) queries.push_back({q, "--query"});
    if (queries.empty()) return InvalidArgumentError("--only-queries: give at least one --query");

    SEEDANCE_ASSIGN_OR_RETURN(auto db, ledger::Ledger::Open(o.db));
    const std::string source = "prometheus:" + o.prometheus;
    SEEDANCE_ASSIGN_OR_RETURN(auto writer, db->NewSampleWriter(source, o.batch));
    prometheus::Client client(so);
    std::function<void(const prometheus::PullProgress&)> progress;
    const SteadyClock clock;
    const Duration started = clock.Now();
    if (o.progress) {
      progress = [&](const prometheus::PullProgress& p) {
        const auto done = static_cast<std::uint64_t>(p.query_index * p.chunks + p.chunk_index + 1);
        std::cerr << fmt::format("{}: {}: query {}/{} {} chunk {}/{} ({} .. {}): {} series, {} samples\n", source,
                                 ProgressShare(done, static_cast<std::uint64_t>(p.queries * p.chunks),
                                               ToSeconds(clock.Now() - started)),
                                 p.query_index + 1, p.queries, p.query, p.chunk_index + 1, p.chunks,
                                 telemetry::FormatTimestamp(p.chunk.start_ms), telemetry::FormatTimestamp(p.chunk.end_ms),
                                 p.chunk_stats.series, p.chunk_stats.samples)
                  << std::flush;
      };
    }
    SEEDANCE_ASSIGN_OR_RETURN(prometheus::PullResult r,
                              prometheus::Pull(client, queries, from, to, step, o.chunk_points, *writer, progress));
    SEEDANCE_RETURN_IF_ERROR(writer->Finish());
    for (std::size_t i = 0; i < queries.size(); ++i) {
      if (r.per_query[i].samples == 0) {
        std::cerr << fmt::format("seedance: note: {} ({}) returned no series in the range\n", queries[i].expr,
                                 queries[i].purpose);
      }
    }
    if (r.total.samples == 0) {
      return InvalidArgumentError(fmt::format("--from/--to: {} returned no samples in {} .. {} for any query",
                                              o.prometheus, telemetry::FormatTimestamp(from),
                                              telemetry::FormatTimestamp(to)));
    }
    const ledger::IngestProgress& p = writer->progress();
    std::size_t shown = 0;
    for (const telemetry::Rejection& rej : writer->conflicts()) {
      if (shown++ >= o.max_errors) break;
      std::cerr << "seedance: rejected: " << rej.ToString() << "\n";
    }
    std::cout << fmt::format("{}: {} queries, {} series, {} samples ({} new), {} already stored, {} duplicates with "
                             "another value, {} points dropped\n",
                             source, queries.size(), r.total.series, r.total.samples, p.inserted, p.duplicates,
                             p.conflicts, r.total.dropped);
    if (p.conflicts > 0) return FailedPreconditionError(fmt::format("{} samples conflict with stored ones", p.conflicts));
    return Status::Ok();
  };
  Status s = run();
  return s.ok() ? kExitOk : ReportError(s);
}

int IngestEvents(const IngestOptions& o, ledger::Ledger& ledger) {
  for (const std::string& f : o.files) {
    auto events = ledger::LoadEventsCsv(f);
    if (!events.has_value()) return ReportError(events.error());
    Status s = ledger.AddEvents(*events);
    if (!s.ok()) return ReportError(s);
    std::cout << f << ": " << events->size() << " events\n";
  }
  return kExitOk;
}

int RunIngest(const IngestOptions& o) {
  if (!o.prometheus.empty()) {
    if (!o.files.empty() || !o.format.empty()) {
      return ReportError(InvalidArgumentError("--prometheus: give no files and no --format with it"));
    }
    if (!o.time.empty()) {
      return ReportError(InvalidArgumentError("--time: not with --prometheus (its answers carry their times)"));
    }
    return IngestPrometheus(o);
  }
  if (o.format.empty()) return ReportError(InvalidArgumentError("--format: required (or --prometheus URL)"));
  if (o.files.empty()) return ReportError(InvalidArgumentError("files: give at least one file (or --prometheus URL)"));
  std::int64_t fixed_time = telemetry::kNoTimestamp;
  if (!o.time.empty()) {
    auto t = telemetry::ParseTimestamp(o.time);
    if (!t.has_value()) return ReportError(InvalidArgumentError("--time: " + t.error().message()));
    fixed_time = *t;
  }
  bool events = o.format == "events";
  telemetry::InputFormat format = telemetry::InputFormat::kPrometheus;
  if (!events) {
    auto f = telemetry::ParseInputFormat(o.format);
    if (!f.has_value()) {
      return ReportError(InvalidArgumentError("--format: " + f.error().message() + ", events"));
    }
    format = *f;
  }
  // Check every input before touching the ledger.
  for (const std::string& f : o.files) {
    if (f != "-" && !std::ifstream(f)) return ReportError(NotFoundError(f + ": cannot open"));
  }
  auto opened = ledger::Ledger::Open(o.db);
  if (!opened.has_value()) return ReportError(opened.error());
  ledger::Ledger& ledger = **opened;
  if (events) return IngestEvents(o, ledger);

  telemetry::ParseStats total;
  std::uint64_t conflicts = 0;
  for (const std::string& f : o.files) {
    telemetry::ParseOptions popt;
    popt.source = f == "-" ? "<stdin>" : f;
    // Never the file's modification time: a copy or a checkout would move every sample.
    popt.default_timestamp_ms = fixed_time;
    std::function<void(const ledger::IngestProgress&)> on_commit;
    const SteadyClock clock;
    const Duration started = clock.Now();
    const std::uint64_t lines = o.progress && f != "-" ? CountLines(f) : 0;  // stdin: no total to divide by
    if (o.progress) {
      on_commit = [&](const ledger::IngestProgress& p) {
        std::cerr << fmt::format("{}: {}committed {} samples through line {}\n", popt.source,
                                 lines > 0 ? ProgressShare(p.last_line, lines, ToSeconds(clock.Now() - started)) + ": "
                                           : std::string(),
                                 p.committed_samples, p.last_line)
                  << std::flush;
      };
    }
    auto writer = ledger.NewSampleWriter(popt.source, o.batch, on_commit);
    if (!writer.has_value()) return ReportError(writer.error());
    telemetry::ParseStats stats;
    Status s;
    if (f == "-") {
      s = telemetry::ParseStream(format, std::cin, popt, **writer, stats);
    } else {
      std::ifstream in(f, std::ios::binary);
      s = telemetry::ParseStream(format, in, popt, **writer, stats);
    }
    if (s.ok()) s = (*writer)->Finish();
    if (!s.ok()) {
      if (s.message().find("without a timestamp") != std::string::npos) {
        return ReportError(InvalidArgumentError(s.message() + "; pass --time T to give every untimed sample time T"));
      }
      return ReportError(s);
    }
    std::size_t shown = 0;
    for (const telemetry::Rejection& r : stats.rejections) {
      if (shown++ >= o.max_errors) break;
      std::cerr << "seedance: rejected: " << r.ToString() << "\n";
    }
    if (stats.rejected > shown) {
      std::cerr << "seedance: ... and " << (stats.rejected - shown) << " more rejected in "
                << popt.source << "\n";
    }
    const ledger::IngestProgress& p = (*writer)->progress();
    shown = 0;
    for (const telemetry::Rejection& r : (*writer)->conflicts()) {
      if (shown++ >= o.max_errors) break;
      std::cerr << "seedance: rejected: " << r.ToString() << "\n";
    }
    if (p.conflicts > shown) {
      std::cerr << "seedance: ... and " << (p.conflicts - shown) << " more duplicate samples in " << popt.source << "\n";
    }
    std::cout << fmt::format(
        "{}: {} lines, {} samples ({} new), {} missing (DCGM blank), {} rejected, {} already stored, {} "
        "duplicates with another value\n",
        popt.source, stats.lines, stats.samples, p.inserted, stats.missing, stats.rejected, p.duplicates, p.conflicts);
    if (stats.seconds_like_timestamps > 0) {
      std::cerr << fmt::format(
          "seedance: warning: {} ({} samples like it): Prometheus text timestamps are milliseconds, this one reads as "
          "{} in milliseconds and is almost surely seconds; multiply the timestamps by 1000 (or export them in "
          "milliseconds) and ingest again into a fresh ledger\n",
          stats.first_seconds_like, stats.seconds_like_timestamps,
          telemetry::FormatTimestamp(std::stoll(stats.first_seconds_like.substr(stats.first_seconds_like.rfind(' ') + 1))));
    }
    total.Merge(stats);
    conflicts += p.conflicts;
  }
  // An input with nothing in it would read as an empty, $0 fleet later.
  if (total.samples == 0 && total.missing == 0) {
    return ReportError(InvalidArgumentError(fmt::format(
        "no samples in {} ({} lines{}): nothing was ingested", fmt::join(o.files, ", "), total.lines,
        total.rejected > 0 ? fmt::format(", {} rejected", total.rejected) : std::string())));
  }
  return total.rejected > 0 || conflicts > 0 || total.seconds_like_timestamps > 0 ? kExitFailure : kExitOk;
}

}  // namespace

Action RegisterIngest(CLI::App& app) {
  auto o = std::make_shared<IngestOptions>();
  CLI::App* cmd = AddCommand(
      app, "ingest", "Read GPU telemetry or pod events into the cost ledger",
      "The ledger is SQLite (created if missing). Formats: prom (text 0.0.4, ms timestamps), openmetrics (1.0, s timestamps, # EOF), dcgm "
      "(dcgm-exporter /metrics: mixed label casing, blank sentinels dropped as missing), otlp "
      "(OTLP/HTTP JSON, one request or JSON Lines), events (CSV: gpu_uuid,start,end,pod,namespace,"
      "container,pid,job,node,request_milli,batch_size,precision). '-' reads stdin. A sample without "
      "a timestamp is an error naming file:line unless --time gives one (never the file's "
      "modification time). Each bad line is rejected with file:line and reason; the rest is "
      "ingested. Re-ingesting a file adds nothing (counted as already stored); a sample whose series "
      "and time are stored with another value is rejected with file:line and both values (the "
      "stored one is kept). With --prometheus URL --from T --to T it pulls instead, by "
      "/api/v1/query_range in chunks of at most --chunk-points evaluation times (Prometheus allows "
      "11,000 per series), the dcgm-exporter, kube-state-metrics and cAdvisor PSI series of "
      "docs/TELEMETRY.md; --step should be the scrape interval. Pulling the same range again adds "
      "nothing. Exit 0: all ingested; 1: lines were rejected or Prometheus was unreachable; 2: usage "
      "or input error (a 4xx answer, a range with no samples).",
      "seedance ingest --format dcgm --db ledger.db dcgm-metrics.prom\n"
      "  seedance ingest --prometheus http://prometheus:9090 --from 2026-11-29T00:00:00Z --to 2026-11-30T00:00:00Z "
      "--db ledger.db");
  cmd->add_option("--format", o->format, "prom | openmetrics | dcgm | otlp | events");
  cmd->add_option("files", o->files, "input files ('-' for stdin)");
  cmd->add_option("--prometheus", o->prometheus, "pull from this Prometheus server: http(s)://host:port[/prefix]");
  cmd->add_option("--from", o->from, "--prometheus: start (inclusive): 2026-11-29T00:00:00Z or Unix seconds");
  cmd->add_option("--to", o->to, "--prometheus: end (exclusive)");
  cmd->add_option("--step", o->step, "--prometheus: query_range step (the scrape interval)")->capture_default_str();
  cmd->add_option("--chunk-points", o->chunk_points, "--prometheus: evaluation times per query_range call (1..11000)")
      ->capture_default_str();
  cmd->add_option("--query", o->queries, "--prometheus: one more PromQL selector to pull (repeatable)");
  cmd->add_flag("--only-queries", o->only_queries, "--prometheus: pull only the --query selectors");
  cmd->add_option("--bearer-token-file", o->bearer_token_file, "--prometheus: file holding a bearer token");
  cmd->add_option("--basic-auth-file", o->basic_auth_file, "--prometheus: file holding user:password");
  cmd->add_option("--ca-file", o->ca_file, "--prometheus: PEM CA bundle for an https:// server");
  cmd->add_flag("--insecure-skip-verify", o->insecure_skip_verify,
                "--prometheus: do not check the server's certificate (INSECURE: anyone on the path can "
                "read and alter the data)");
  cmd->add_option("--connect-timeout", o->connect_timeout, "--prometheus: per connection")->capture_default_str();
  cmd->add_option("--read-timeout", o->read_timeout, "--prometheus: per query_range answer")->capture_default_str();
  cmd->add_option("--db", o->db, "ledger file (SQLite)")->required();
  cmd->add_option("--batch", o->batch, "samples per committed transaction")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000'000));
  cmd->add_option("--time", o->time,
                  "time for samples that carry none: 2026-11-29T10:00:00Z or Unix seconds");
  cmd->add_flag("--progress", o->progress, "print a line to stderr after each committed batch (each query_range call with --prometheus)");
  cmd->add_option("--max-errors", o->max_errors, "rejections printed per file")
      ->capture_default_str();
  return [cmd, o]() { return cmd->parsed() ? RunIngest(*o) : -1; };
}

}  // namespace seedance::cli
