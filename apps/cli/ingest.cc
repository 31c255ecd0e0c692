// seedance ingest: reads telemetry (Prometheus text, OpenMetrics, dcgm-exporter, OTLP JSON) or
// process/pod events (CSV) into the cost ledger. Bad lines are rejected with file:line and reason
// and counted; the rest is ingested. Samples are committed in batches (one transaction each), and
// re-ingesting a file adds nothing (a sample is unique per series and time); a sample whose series
// and time are stored with another value is reported with file:line, never merged silently. A
// sample without a timestamp is an error unless --time gives one.
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "common.h"
#include "seedance/ledger/ledger.h"
#include "seedance/telemetry/parse.h"

namespace seedance::cli {
namespace {

struct IngestOptions {
  std::string format;
  std::vector<std::string> files;
  std::string db;
  std::size_t batch = 5000;
  std::string time;
  bool progress = false;
  std::size_t max_errors = 20;
};

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
    if (o.progress) {
      on_commit = [&](const ledger::IngestProgress& p) {
        std::cerr << fmt::format("{}: committed {} samples through line {}\n", popt.source,
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
    total.Merge(stats);
    conflicts += p.conflicts;
  }
  return total.rejected > 0 || conflicts > 0 ? kExitFailure : kExitOk;
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
      "stored one is kept). Exit 0: all ingested; 1: lines were rejected; 2: usage or input error.",
      "seedance ingest --format dcgm --db ledger.db dcgm-metrics.prom");
  cmd->add_option("--format", o->format, "prom | openmetrics | dcgm | otlp | events")->required();
  cmd->add_option("files", o->files, "input files ('-' for stdin)")->required();
  cmd->add_option("--db", o->db, "ledger file (SQLite)")->required();
  cmd->add_option("--batch", o->batch, "samples per committed transaction")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000'000));
  cmd->add_option("--time", o->time,
                  "time for samples that carry none: 2026-11-29T10:00:00Z or Unix seconds");
  cmd->add_flag("--progress", o->progress, "print a line to stderr after each committed batch");
  cmd->add_option("--max-errors", o->max_errors, "rejections printed per file")
      ->capture_default_str();
  return [cmd, o]() { return cmd->parsed() ? RunIngest(*o) : -1; };
}

}  // namespace seedance::cli
