#include "seedance/audit/telemetry_adapter.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

namespace seedance::audit {
namespace {

namespace tm = telemetry;

// Extra slot for uncorrectable remapped rows: used as the ECC field only when a GPU reports no
// DCGM_FI_DEV_ECC_DBE_VOL_TOTAL.
constexpr std::uint8_t kRemappedSlot = kFieldCount;

std::optional<std::pair<std::uint8_t, double>> MapField(const tm::SampleView& s) {
  const tm::FieldMapping m = tm::LookupField(s.metric);
  auto f = [](Field x) { return static_cast<std::uint8_t>(x); };
  switch (m.field) {
    case tm::Field::kPower:
      return std::pair{f(Field::kPowerW), m.scale};
    case tm::Field::kGpuUtil:
      return std::pair{f(Field::kGpuUtilPct), m.scale * 100.0};  // back to %
    case tm::Field::kGpuTemp:
      return std::pair{f(Field::kTempC), m.scale};
    case tm::Field::kXidLastError:
      return std::pair{f(Field::kXid), m.scale};
    case tm::Field::kPcieReplays:
      return std::pair{f(Field::kPcieReplay), m.scale};
    case tm::Field::kTensorActive:
      return std::pair{f(Field::kTensorActive), m.scale};
    case tm::Field::kEccDbeTotal:
      return std::pair{f(Field::kEccUncorrectable), m.scale};
    case tm::Field::kRemappedRowsUncorrectable:
      return std::pair{kRemappedSlot, m.scale};
    case tm::Field::kSmActive:
      return std::pair{f(Field::kSmActive), m.scale};
    case tm::Field::kDramActive:
      return std::pair{f(Field::kDramActive), m.scale};
    case tm::Field::kFbUsed:
      return std::pair{f(Field::kFbUsedMib), m.scale};
    case tm::Field::kFbFree:
      return std::pair{f(Field::kFbFreeMib), m.scale};
    default:
      break;
  }
  if (s.metric == "DCGM_FI_PROF_PIPE_INT_ACTIVE") return std::pair{f(Field::kIntActive), 1.0};
  return std::nullopt;
}

}  // namespace

void SeriesBuilder::OnSample(const tm::SampleView& s) {
  const auto mapped = MapField(s);
  if (!mapped.has_value()) {
    ++ignored_;
    return;
  }
  const tm::EntityView e = tm::IdentifyEntity(s.labels);
  if (first_error_.has_value()) return;
  const std::string where = fmt::format("{}:{}: {}", s.source, s.line, s.metric);
  if (e.gpu_uuid.empty()) {
    first_error_ = InvalidArgumentError(where + ": field 'UUID': the GPU sample has no UUID label");
    return;
  }
  if (e.hostname.empty()) {
    first_error_ =
        InvalidArgumentError(where + ": field 'hostname': the GPU sample has no Hostname label");
    return;
  }
  if (s.timestamp_ms == tm::kNoTimestamp) {
    first_error_ = InvalidArgumentError(
        where + ": field 'timestamp': the sample has none (record scrapes with timestamps)");
    return;
  }
  Gpu& g = gpus_[{std::string(e.hostname), std::string(e.gpu_uuid)}];
  if (g.model_name.empty()) g.model_name = std::string(e.model);
  if (g.driver.empty()) {
    for (const auto& l : s.labels) {
      if (l.name == "DCGM_FI_DRIVER_VERSION") g.driver = std::string(l.value);
    }
  }
  // Floor division to whole seconds (timestamps before 1970 stay ordered).
  const std::int64_t t_s =
      s.timestamp_ms >= 0 ? s.timestamp_ms / 1000 : -((-s.timestamp_ms + 999) / 1000);
  // A non-finite value (NaN or ±Inf, which the text formats allow) is a missing point.
  const float value = std::isfinite(s.value) ? static_cast<float>(s.value * mapped->second)
                                             : std::numeric_limits<float>::quiet_NaN();
  g.points.push_back(Point{t_s, mapped->first, value});
  ++used_;
}

Result<std::vector<NodeTelemetry>> SeriesBuilder::Finish() {
  if (first_error_.has_value()) return *first_error_;
  std::vector<NodeTelemetry> out;
  for (auto& [key, g] : gpus_) {
    if (out.empty() || out.back().host != key.first) {
      out.emplace_back();
      out.back().host = key.first;
    }
    GpuSeries s;
    s.uuid = key.second;
    s.model_name = g.model_name;
    s.driver = g.driver;
    std::stable_sort(g.points.begin(), g.points.end(),
                     [](const Point& a, const Point& b) { return a.t_s < b.t_s; });
    std::array<bool, kFieldCount + 1> seen{};
    for (const Point& p : g.points) {
      if (s.t_s.empty() || s.t_s.back() != p.t_s) s.t_s.push_back(p.t_s);
      seen[p.field] = true;
    }
    const std::size_t n = s.t_s.size();
    std::vector<float> remapped;
    for (std::size_t f = 0; f < kFieldCount; ++f) {
      if (seen[f]) s.columns[f].assign(n, std::nanf(""));
    }
    if (seen[kRemappedSlot]) remapped.assign(n, std::nanf(""));
    std::size_t i = 0;
    for (const Point& p : g.points) {
      while (s.t_s[i] != p.t_s) ++i;
      if (p.field == kRemappedSlot) {
        remapped[i] = p.value;
      } else {
        s.columns[p.field][i] = p.value;
      }
    }
    if (!s.has(Field::kEccUncorrectable) && !remapped.empty()) {
      s.col(Field::kEccUncorrectable) = std::move(remapped);
    }
    out.back().gpus.push_back(std::move(s));
  }
  return out;
}

tm::InputFormat DetectFormat(std::string_view head) {
  std::size_t i = head.find_first_not_of(" \t\r\n");
  if (i != std::string_view::npos && head[i] == '{') return tm::InputFormat::kOtlpJson;
  if (head.find("\n# EOF") != std::string_view::npos || head.rfind("# EOF", 0) == 0) {
    return tm::InputFormat::kOpenMetrics;
  }
  if (head.find("DCGM_") != std::string_view::npos) return tm::InputFormat::kDcgm;
  return tm::InputFormat::kPrometheus;
}

namespace {
// Parses one text into `builder`; errors name the source and the first rejected lines.
Status ParseInto(SeriesBuilder& builder, const std::string& text, const std::string& source,
                 std::optional<tm::InputFormat> format) {
  const tm::InputFormat f = format.value_or(DetectFormat(text));
  tm::ParseStats stats;
  tm::ParseOptions options;
  options.source = source;
  tm::ParseText(f, text, options, builder, stats);
  if (stats.rejected > 0) {
    std::string msg = fmt::format("{}: {} line(s) rejected as {}", source, stats.rejected, tm::InputFormatName(f));
    for (std::size_t k = 0; k < stats.rejections.size() && k < 3; ++k) {
      msg += "; " + stats.rejections[k].ToString();
    }
    return InvalidArgumentError(msg);
  }
  return Status::Ok();
}
}  // namespace

Result<std::vector<NodeTelemetry>> LoadTelemetryFiles(const std::vector<std::string>& paths,
                                                      std::optional<tm::InputFormat> format) {
  SeriesBuilder builder;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return NotFoundError(path + ": cannot open");
    std::stringstream ss;
    ss << in.rdbuf();
    SEEDANCE_RETURN_IF_ERROR(ParseInto(builder, ss.str(), path, format));
  }
  return builder.Finish();
}

Result<std::vector<NodeTelemetry>> LoadTelemetryText(const std::string& text, const std::string& source,
                                                     std::optional<tm::InputFormat> format) {
  SeriesBuilder builder;
  SEEDANCE_RETURN_IF_ERROR(ParseInto(builder, text, source, format));
  return builder.Finish();
}

std::string RenderDcgmExposition(const NodeTelemetry& node) {
  std::string out;
  for (std::size_t f = 0; f < kFieldCount; ++f) {
    const std::string_view name = FieldMetricName(static_cast<Field>(f));
    bool typed = false;
    for (std::size_t k = 0; k < node.gpus.size(); ++k) {
      const GpuSeries& g = node.gpus[k];
      const auto& c = g.columns[f];
      if (c.empty()) continue;
      if (!typed) {
        const bool counter = f == static_cast<std::size_t>(Field::kPcieReplay) ||
                             f == static_cast<std::size_t>(Field::kEccUncorrectable);
        out += fmt::format("# TYPE {} {}\n", name, counter ? "counter" : "gauge");
        typed = true;
      }
      const std::string labels = fmt::format(
          "gpu=\"{}\",UUID=\"{}\",device=\"nvidia{}\",modelName=\"{}\",Hostname=\"{}\","
          "DCGM_FI_DRIVER_VERSION=\"{}\"",
          k, g.uuid, k, g.model_name, node.host, g.driver);
      for (std::size_t i = 0; i < g.t_s.size(); ++i) {
        if (std::isnan(c[i])) continue;
        out += fmt::format("{}{{{}}} {} {}\n", name, labels, c[i], g.t_s[i] * 1000);
      }
    }
  }
  return out;
}

}  // namespace seedance::audit
