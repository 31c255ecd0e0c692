#pragma once

// Prometheus as a telemetry source (issue 28): reads the series the ledger, the advisor and the
// audit need from a Prometheus server's HTTP API (/api/v1/query_range), in time chunks that stay
// under Prometheus's 11,000 points per series, with bearer-token or basic auth and TLS. What a
// query returns is handed to a telemetry::SampleSink (the ledger's SampleWriter in `seedance
// ingest --prometheus`), one sample per (series, evaluation time). docs/TELEMETRY.md is the
// metric and label contract.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/telemetry/sample.h"

namespace seedance::prometheus {

// Prometheus rejects a query_range whose (end - start) / step + 1 exceeds this.
inline constexpr std::int64_t kMaxPointsPerSeries = 11'000;

// Where and how to connect.
struct SourceOptions {
  std::string url;                // http(s)://host[:port][/path prefix]
  std::string bearer_token;       // Authorization: Bearer (from --bearer-token-file)
  std::string basic_user;         // Authorization: Basic (from --basic-auth-file)
  std::string basic_password;
  std::string ca_file;            // PEM bundle that signs the server's certificate
  bool insecure_skip_verify = false;  // TLS without checking the certificate: insecure
  int connect_timeout_s = 10;
  int read_timeout_s = 120;       // one query_range answer
};

// Reads a bearer token file (the whole file, surrounding whitespace trimmed). Errors name the
// file: unreadable (kNotFound) or empty (kInvalidArgument).
Result<std::string> ReadTokenFile(const std::string& path);
// Reads a basic-auth file: `user:password` on its first line. Errors name the file.
Status ReadBasicAuthFile(const std::string& path, SourceOptions& options);

// One query_range call: evaluation times start, start + step, ..., end (both included).
struct Chunk {
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
};

// Splits the evaluation times from_ms, from_ms + step_ms, ... (all < to_ms) into chunks of at
// most `max_points` times each (1..kMaxPointsPerSeries), in order, none shared: every time is in
// exactly one chunk. Errors: kInvalidArgument naming --from/--to (from >= to), --step (<= 0 or
// not whole milliseconds) or the point cap.
Result<std::vector<Chunk>> PlanChunks(std::int64_t from_ms, std::int64_t to_ms, std::int64_t step_ms,
                                      std::int64_t max_points);

// One query of the default set.
struct Query {
  std::string expr;     // PromQL
  std::string purpose;  // who reads it (shown in progress and docs)
};
// The series Seedance reads: dcgm-exporter (ledger, breaker, advisor, audit), kube-state-metrics
// (GPU requests, pod labels, annotations, info, phase, start and completion; issue 38: created,
// owners, node labels, replica set owners, deployments' replicas, Jobs' creation), cAdvisor PSI.
const std::vector<Query>& DefaultQueries();

// Counts of a matrix answer.
struct MatrixStats {
  std::uint64_t series = 0;
  std::uint64_t samples = 0;
  std::uint64_t dropped = 0;  // points that were not [time, "value"] or had no metric name
};

// Parses a query_range answer (`{"status":"success","data":{"resultType":"matrix","result":[...]}}`)
// into `sink`: metric name from __name__, every other label as given, value parsed from its string
// ("NaN", "+Inf" included), timestamp seconds -> ms. `source` names the query in samples and
// errors. Errors: kInvalidArgument naming the query for invalid JSON, status "error" (with
// Prometheus's errorType and error), or another result type.
Status ParseMatrix(std::string_view body, std::string_view source, telemetry::SampleSink& sink,
                   MatrixStats& stats);

// An HTTP client of one Prometheus server.
class Client {
 public:
  explicit Client(SourceOptions options);
  // GET <prefix>/api/v1/query_range for `query` over `chunk` with `step_ms` and feeds the samples
  // to `sink`. Errors name the query and the range: kUnavailable for a connection failure or a
  // 5xx, kInvalidArgument for a 4xx (401/403 included: the credentials are input), with the HTTP
  // status and Prometheus's errorType and error text.
  Status QueryRange(const std::string& query, const Chunk& chunk, std::int64_t step_ms,
                    telemetry::SampleSink& sink, MatrixStats& stats) const;
  const SourceOptions& options() const { return options_; }

 private:
  SourceOptions options_;
};

// Progress of a pull, reported after each query_range call.
struct PullProgress {
  std::size_t query_index = 0, queries = 0;
  std::size_t chunk_index = 0, chunks = 0;
  std::string query;
  Chunk chunk;
  MatrixStats chunk_stats;
};

// Totals of a pull, per query in DefaultQueries order (or the caller's).
struct PullResult {
  std::vector<MatrixStats> per_query;
  MatrixStats total;
};

// Runs every query over every chunk of [from, to) (PlanChunks) into `sink`, query by query.
// Stops at the first error.
Result<PullResult> Pull(const Client& client, const std::vector<Query>& queries, std::int64_t from_ms,
                        std::int64_t to_ms, std::int64_t step_ms, std::int64_t max_points,
                        telemetry::SampleSink& sink,
                        const std::function<void(const PullProgress&)>& on_chunk = {});

}  // namespace seedance::prometheus
