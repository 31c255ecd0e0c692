#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "seedance/audit/series.h"
#include "seedance/core/status.h"
#include "seedance/telemetry/parse.h"
#include "seedance/telemetry/sample.h"

namespace seedance::audit {

// Builds the audit's per-GPU series from normalized telemetry samples (issue 5's parsers):
// GPU samples are keyed by (hostname, GPU UUID); dcgm-exporter fields map onto audit Fields in
// the exporter's units (GPU util back to %, the rest as LookupField canonicalizes them);
// DCGM_FI_PROF_PIPE_INT_ACTIVE is read by name; the modelName and DCGM_FI_DRIVER_VERSION labels
// give the model and driver. Samples of other metrics are ignored. Not thread-safe.
class SeriesBuilder final : public telemetry::SampleSink {
 public:
  void OnSample(const telemetry::SampleView& sample) override;

  // Returns the nodes seen, sorted by host, their GPUs by UUID, samples by time (columns
  // aligned, NaN where a scrape lacks a field; a field seen twice at one time keeps the last).
  // Errors: kInvalidArgument "source:line: field 'timestamp': ..." for the first sample without
  // a timestamp, or "field 'UUID'"/"field 'hostname'" for a GPU sample without them.
  Result<std::vector<NodeTelemetry>> Finish();

  std::uint64_t used() const { return used_; }
  std::uint64_t ignored() const { return ignored_; }

 private:
  struct Point {
    std::int64_t t_s;
    std::uint8_t field;  // Field, or kEccDbe/kRemapped below
    float value;
  };
  struct Gpu {
    std::string model_name;
    std::string driver;
    std::vector<Point> points;
  };
  std::map<std::pair<std::string, std::string>, Gpu> gpus_;  // (host, uuid)
  std::optional<Status> first_error_;
  std::uint64_t used_ = 0;
  std::uint64_t ignored_ = 0;
};

// Guesses the format from the content: '{' first -> OTLP JSON; a "# EOF" line -> OpenMetrics;
// DCGM_ metric names -> dcgm; else Prometheus text.
telemetry::InputFormat DetectFormat(std::string_view head);

// Reads telemetry files (format given or detected per file) into node series.
// Errors: kNotFound (unreadable file), kInvalidArgument for rejected lines ("file:line: reason",
// the first few) or SeriesBuilder::Finish errors. No node is returned on any error.
Result<std::vector<NodeTelemetry>> LoadTelemetryFiles(
    const std::vector<std::string>& paths, std::optional<telemetry::InputFormat> format);

// Same for telemetry already in memory (`source` names it in errors).
Result<std::vector<NodeTelemetry>> LoadTelemetryText(const std::string& text, const std::string& source,
                                                     std::optional<telemetry::InputFormat> format);

// Renders `node`'s series as dcgm-exporter text with millisecond timestamps (the exporter's
// metric names and labels: gpu, UUID, modelName, Hostname, DCGM_FI_DRIVER_VERSION).
std::string RenderDcgmExposition(const NodeTelemetry& node);

}  // namespace seedance::audit
