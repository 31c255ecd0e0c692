#pragma once

// The server's own metrics, rendered as Prometheus text 0.0.4 at GET /metrics. (prometheus-cpp
// is not packaged in Debian 12; this is the small subset the server needs.)
// Thread-safe: every call may come from any HTTP worker thread. A family holds at most 10,000
// series; updates of further label sets are dropped and counted in
// seedance_metrics_series_dropped_total (rendered last, once non-zero).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seedance::server {

// Label pairs in the order they are rendered, e.g. {{"verb","filter"},{"result","ok"}}.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // Families must be declared before use (name, HELP text; histograms with their upper bounds
  // in seconds). Declaring a name twice with the same type is a no-op.
  void DeclareCounter(std::string name, std::string help);
  void DeclareGauge(std::string name, std::string help);
  void DeclareHistogram(std::string name, std::string help, std::vector<double> bounds);

  void Inc(std::string_view name, const Labels& labels, double by = 1.0);
  void Set(std::string_view name, const Labels& labels, double value);
  void Observe(std::string_view name, const Labels& labels, double value);
  // Current value of a counter or gauge series (0 when absent); for tests and /v1 endpoints.
  double Value(std::string_view name, const Labels& labels) const;

  // Prometheus text format 0.0.4: HELP, TYPE, then the series sorted by labels; histograms with
  // cumulative _bucket{le}, _sum, _count. Ends with a newline.
  std::string Render() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seedance::server
