#pragma once

#include <cstdint>
#include <istream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/telemetry/sample.h"

namespace seedance::telemetry {

// Input formats of `seedance ingest --format`.
enum class InputFormat : std::uint8_t {
  kPrometheus,   // text exposition 0.0.4 (timestamps in ms)            "prom"
  kOpenMetrics,  // OpenMetrics 1.0 text (timestamps in s, # EOF)         "openmetrics"
  kDcgm,         // dcgm-exporter /metrics: 0.0.4 plus its rules below    "dcgm"
  kOtlpJson,     // OTLP/HTTP JSON ExportMetricsServiceRequest(s)         "otlp"
};

// Parses "prom" (also "prometheus"), "openmetrics" (also "om"), "dcgm", "otlp".
// Errors: kInvalidArgument listing the accepted names.
Result<InputFormat> ParseInputFormat(std::string_view name);
std::string_view InputFormatName(InputFormat format);

// One rejected line: "source:line: reason".
struct Rejection {
  std::string source;
  std::uint64_t line = 0;
  std::string reason;
  std::string ToString() const;
};

// What a parse did. Rejected lines are counted (and the first kMaxKeptRejections kept with their
// reason); the rest of the input is still parsed.
struct ParseStats {
  static constexpr std::size_t kMaxKeptRejections = 1000;

  std::uint64_t lines = 0;     // input lines (text) or JSON documents (OTLP) seen
  std::uint64_t samples = 0;   // samples handed to the sink
  std::uint64_t missing = 0;   // values dropped as "not available" (DCGM blank sentinels)
  std::uint64_t rejected = 0;  // rejected lines / data points
  std::vector<Rejection> rejections;
  // Prometheus text 0.0.4 timestamps are milliseconds; one in [1e8, 1e11) ms (1970-01-02 ..
  // 1973-03-03) is almost surely seconds (issue 38: a day of data landed in 1970). Counted, not
  // rejected (the upstream conformance cases hold small timestamps); the first one is kept.
  std::uint64_t seconds_like_timestamps = 0;
  std::string first_seconds_like;  // "file:line: timestamp N"

  void Reject(std::string_view source, std::uint64_t line, std::string reason);
  void Merge(const ParseStats& other);
};

struct ParseOptions {
  // Name used in rejections ("file:line: ...").
  std::string source = "<input>";
  // Timestamp given to samples that carry none (dcgm-exporter never sends one); kNoTimestamp
  // leaves them without.
  std::int64_t default_timestamp_ms = kNoTimestamp;
};

// ExpositionParser: a streaming parser of the Prometheus text format 0.0.4, OpenMetrics 1.0 and
// dcgm-exporter output. Feed it chunks of any size; it parses complete lines and hands accepted
// samples to the sink. Conformance: tests/data/conformance holds the upstream suites' cases;
// where they disagree, 0.0.4 follows prometheus/common's expfmt parser and OpenMetrics the
// OpenMetrics test suite (prometheus/prometheus's scrape parsers are more lenient: missing final
// line feed, labels without commas, interleaved families; deviations.tsv lists those cases).
// A line is rejected (counted in stats with "source:line: reason") for:
//   - syntax: bad metric or label name, missing '=' or quote, unterminated value, bad escape
//     (0.0.4: label values and HELP allow only \\ \" \n; OpenMetrics keeps other escapes as
//     written), a duplicate label, a `__name__` label, a label value that is not UTF-8, trailing
//     garbage. 0.0.4 allows blanks and tabs around tokens, indented lines, "name {labels}",
//     quoted (UTF-8) names in braces and in HELP/TYPE; "# HELP name" without text is a comment.
//     OpenMetrics allows exactly one space between tokens, no trailing comma in braces, no blank
//     lines and no comments other than HELP/TYPE/UNIT/EOF;
//   - values: not a float; a negative counter, histogram bucket/count or summary count. 0.0.4
//     keeps NaN and ±Inf everywhere (real exporters emit them; the ledger stores NaN as NULL);
//     OpenMetrics rejects NaN counts and a NaN/negative _sum, negative quantile values, info
//     values other than 1 and stateset values other than 0/1; dcgm mode any non-finite value; a
//     timestamp that is not an integer (0.0.4, ms) or a finite number (OpenMetrics, seconds;
//     far-out times saturate);
//   - order: a timestamp earlier than the previous sample of the same series; histogram buckets
//     whose `le` does not increase or whose counts decrease; `_count` that differs from the
//     le="+Inf" bucket. OpenMetrics also: a histogram series without le="+Inf" (written exactly
//     so), _sum without _count (or _gsum without _gcount) and the reverse, a _sum with negative
//     buckets, a negative _gsum without them, the samples of one series split by another's, a
//     repeated sample without timestamps;
//   - metadata: an unknown TYPE (0.0.4 also takes gaugehistogram), a TYPE that changes a
//     family's type, a second HELP or TYPE of a family, a TYPE after the family's samples.
//     OpenMetrics also: a second UNIT, HELP/UNIT after samples, a family whose lines are split by
//     another family's, a family name that is another family's sample name (a_created next to
//     counter a), sample names the type does not have (counter without _total, info without
//     _info, _gsum in a histogram...), exemplars other than on counter _total and histogram
//     _bucket samples or malformed (labels over 128 characters, bad value or timestamp), a UNIT
//     that is not a known unit or not a suffix of the family name, content after `# EOF`, an
//     input without `# EOF`. 0.0.4: a last line without a line feed (it may be cut short).
// Family-level OpenMetrics checks run when the family ends: they reject the line that ended it,
// after the family's samples went to the sink. Exemplars are checked and dropped.
// dcgm mode additionally drops DCGM blank sentinels (counted as missing, not rejected).
// A concatenation of scrapes (a recorded stream, 0.0.4/dcgm) is accepted: the HELP or TYPE of a
// family seen before, coming after other families' lines, starts that family's next scrape
// (so a recording of a single-family exporter with metadata reads as duplicate metadata).
// Thread-safety: one parser per thread.
class ExpositionParser {
 public:
  // REQUIRES: format != kOtlpJson. `sink` and `stats` must outlive the parser.
  ExpositionParser(InputFormat format, ParseOptions options, SampleSink& sink, ParseStats& stats);
  ~ExpositionParser();
  ExpositionParser(const ExpositionParser&) = delete;
  ExpositionParser& operator=(const ExpositionParser&) = delete;

  // Parses the complete lines in `chunk` (together with the partial line kept from before).
  void Feed(std::string_view chunk);
  // Parses a last line without a newline, and runs end-of-input checks (OpenMetrics # EOF).
  void Finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Parses one whole OTLP/HTTP JSON input: a single ExportMetricsServiceRequest document (possibly
// pretty-printed), or JSON Lines with one request per line (the OpenTelemetry collector's file
// exporter). Gauges and sums become one sample per data point (metric name as given, resource
// and data point attributes as labels); histograms become Prometheus-style `_bucket{le=...}`
// (cumulative), `_sum` and `_count` samples; summaries `{quantile=...}`, `_sum`, `_count`.
// Rejected (with "source:line: path: reason"; line = the document's line): invalid JSON, a
// metric with an unknown unit (UCUM subset: 1, %, By, KiBy, MiBy, GiBy, By/s, s, ms, us, ns, W,
// mW, J, mJ, Cel, Hz, MHz, and {annotations}), a data point without time or value, a non-finite
// or negative value in a monotonic sum or histogram, a time earlier than the series' previous
// one, bucketCounts that do not match explicitBounds.
void ParseOtlpJson(std::string_view text, const ParseOptions& options, SampleSink& sink,
                   ParseStats& stats);

// Parses a whole input in any format (convenience for tests and small inputs).
void ParseText(InputFormat format, std::string_view text, const ParseOptions& options,
               SampleSink& sink, ParseStats& stats);

// Reads `in` to the end in chunks and parses it (OTLP is read whole first).
// Errors: kUnavailable when the stream fails (other than at its end).
Status ParseStream(InputFormat format, std::istream& in, const ParseOptions& options,
                   SampleSink& sink, ParseStats& stats);

// Unix epoch milliseconds <-> "2026-11-29T10:00:00Z" (UTC, ISO 8601 extended; a fractional
// part is printed only when the time is not a whole second).
std::string FormatTimestamp(std::int64_t unix_ms);
// Accepts "2026-11-29T10:00:00Z", "2026-11-29T10:00:00.5Z", "2026-11-29" (midnight UTC) or
// Unix seconds ("1795950000"). Errors: kInvalidArgument naming the text.
Result<std::int64_t> ParseTimestamp(std::string_view text);

}  // namespace seedance::telemetry
