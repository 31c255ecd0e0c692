// OTLP/HTTP JSON metrics (ExportMetricsServiceRequest) into the sample model, with nlohmann-json.
#include <charconv>
#include <cmath>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/core/json_depth.h"
#include "seedance/telemetry/internal/text_scan.h"
#include "seedance/telemetry/parse.h"

namespace seedance::telemetry {
namespace {

using Json = nlohmann::json;

bool KnownUnit(std::string_view u) {
  static constexpr std::string_view kUnits[] = {
      "",  "1",   "%",   "By", "KiBy", "MiBy", "GiBy", "By/s", "s",   "ms",
      "us", "ns", "W",   "mW", "J",    "mJ",   "Cel",  "Hz",   "MHz", "1/s",
  };
  for (std::string_view k : kUnits) {
    if (k == u) return true;
  }
  // Annotations ({request}, {error}) count as dimensionless.
  return u.size() >= 2 && u.front() == '{' && u.back() == '}' &&
         u.find('}') == u.size() - 1;
}

// Reads a 64-bit integer that OTLP JSON writes as a decimal string (numbers accepted too).
bool ReadInt64(const Json& j, std::int64_t& out) {
  if (j.is_number_integer()) {
    out = j.get<std::int64_t>();
    return true;
  }
  if (j.is_number_unsigned()) {
    auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(INT64_MAX)) return false;
    out = static_cast<std::int64_t>(u);
    return true;
  }
  if (!j.is_string()) return false;
  const auto& s = j.get_ref<const std::string&>();
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// A double: a JSON number, or one of the proto3 JSON strings "NaN", "Infinity", "-Infinity"
// (or a decimal string).
bool ReadDouble(const Json& j, double& out) {
  if (j.is_number()) {
    out = j.get<double>();
    return true;
  }
  if (!j.is_string()) return false;
  return internal::ParseFloatToken(j.get_ref<const std::string&>(), out);
}

std::string AnyValueText(const Json& v) {
  if (!v.is_object()) return v.dump();
  if (auto it = v.find("stringValue"); it != v.end() && it->is_string()) return it->get<std::string>();
  if (auto it = v.find("intValue"); it != v.end()) {
    return it->is_string() ? it->get<std::string>() : it->dump();
  }
  if (auto it = v.find("boolValue"); it != v.end()) return it->dump();
  if (auto it = v.find("doubleValue"); it != v.end()) return it->dump();
  if (auto it = v.find("bytesValue"); it != v.end() && it->is_string()) return it->get<std::string>();
  for (const char* k : {"arrayValue", "kvlistValue"}) {
    if (auto it = v.find(k); it != v.end()) return it->dump();
  }
  return "";
}

void AppendAttributes(const Json& obj, std::vector<Label>& labels) {
  auto it = obj.find("attributes");
  if (it == obj.end() || !it->is_array()) return;
  for (const Json& kv : *it) {
    if (!kv.is_object()) continue;
    auto k = kv.find("key");
    if (k == kv.end() || !k->is_string()) continue;
    std::string key = k->get<std::string>();
    std::string value;
    if (auto v = kv.find("value"); v != kv.end()) value = AnyValueText(*v);
    bool replaced = false;
    for (Label& l : labels) {
      if (l.name == key) {
        l.value = value;  // the data point's attribute wins over the resource's
        replaced = true;
      }
    }
    if (!replaced) labels.push_back({std::move(key), std::move(value)});
  }
}

std::string FormatLe(double b) {
  if (std::isinf(b)) return b > 0 ? "+Inf" : "-Inf";
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), b);
  (void)ec;
  return std::string(buf, p);
}

class RequestParser {
 public:
  RequestParser(const ParseOptions& options, SampleSink& sink, ParseStats& stats)
      : options_(options), sink_(sink), stats_(stats) {}

  void ParseDocument(const Json& doc, std::uint64_t line) {
    line_ = line;
    auto rms = doc.is_object() ? doc.find("resourceMetrics") : doc.end();
    if (!doc.is_object() || rms == doc.end() || !rms->is_array()) {
      Reject("", "no resourceMetrics array (not an ExportMetricsServiceRequest)");
      return;
    }
    for (std::size_t i = 0; i < rms->size(); ++i) {
      const Json& rm = (*rms)[i];
      std::string rpath = "resourceMetrics[" + std::to_string(i) + "]";
      std::vector<Label> resource_labels;
      if (auto r = rm.find("resource"); r != rm.end() && r->is_object()) {
        AppendAttributes(*r, resource_labels);
      }
      auto sms = rm.find("scopeMetrics");
      if (sms == rm.end() || !sms->is_array()) continue;
      for (std::size_t j = 0; j < sms->size(); ++j) {
        const Json& sm = (*sms)[j];
        auto ms = sm.find("metrics");
        if (ms == sm.end() || !ms->is_array()) continue;
        for (std::size_t k = 0; k < ms->size(); ++k) {
          ParseMetric((*ms)[k],
                      rpath + ".scopeMetrics[" + std::to_string(j) + "].metrics[" +
                          std::to_string(k) + "]",
                      resource_labels);
        }
      }
    }
  }

 private:
  void Reject(const std::string& path, const std::string& reason) {
    stats_.Reject(options_.source, line_, path.empty() ? reason : path + ": " + reason);
  }

  void ParseMetric(const Json& m, const std::string& path, const std::vector<Label>& base) {
    auto name_it = m.find("name");
    if (name_it == m.end() || !name_it->is_string() || name_it->get_ref<const std::string&>().empty()) {
      Reject(path, "metric without a name");
      return;
    }
    const std::string& name = name_it->get_ref<const std::string&>();
    std::string mpath = path + " '" + name + "'";
    std::string unit;
    if (auto u = m.find("unit"); u != m.end() && u->is_string()) unit = u->get<std::string>();
    if (!KnownUnit(unit)) {
      Reject(mpath, "unknown unit '" + unit + "'");
      return;
    }
    if (auto g = m.find("gauge"); g != m.end()) {
      ParseNumberPoints(*g, name, mpath, base, MetricType::kGauge, false);
    } else if (auto s = m.find("sum"); s != m.end()) {
      bool monotonic = false;
      if (auto mono = s->find("isMonotonic"); mono != s->end() && mono->is_boolean()) {
        monotonic = mono->get<bool>();
      }
      if (auto t = s->find("aggregationTemporality"); t != s->end() && !t->is_number_integer()) {
        Reject(mpath, "aggregationTemporality must be an integer enum (1 delta, 2 cumulative)");
        return;
      }
      ParseNumberPoints(*s, name, mpath, base,
                        monotonic ? MetricType::kCounter : MetricType::kGauge, monotonic);
    } else if (auto h = m.find("histogram"); h != m.end()) {
      ParseHistogramPoints(*h, name, mpath, base);
    } else if (auto sum = m.find("summary"); sum != m.end()) {
      ParseSummaryPoints(*sum, name, mpath, base);
    } else if (auto eh = m.find("exponentialHistogram"); eh != m.end()) {
      ForEachCountPoint(*eh, name, mpath, base, MetricType::kHistogram,
                        [](const Json&, const std::string&, std::int64_t, std::int64_t) {
                          return true;
                        });
    } else {
      Reject(mpath, "no gauge, sum, histogram, summary or exponentialHistogram data");
    }
  }

  const Json* Points(const Json& data, const std::string& path) {
    auto dps = data.find("dataPoints");
    if (dps == data.end() || !dps->is_array()) {
      Reject(path, "no dataPoints array");
      return nullptr;
    }
    return &*dps;
  }

  // Reads the point's labels and time; false (rejected) without a valid time.
  bool PointBasics(const Json& dp, const std::string& path, const std::vector<Label>& base,
                   std::int64_t& ts_ms) {
    labels_ = base;
    if (!dp.is_object()) {
      Reject(path, "data point is not an object");
      return false;
    }
    AppendAttributes(dp, labels_);
    std::int64_t ns = 0;
    auto t = dp.find("timeUnixNano");
    if (t == dp.end() || !ReadInt64(*t, ns) || ns <= 0) {
      Reject(path, "data point without a valid timeUnixNano");
      return false;
    }
    ts_ms = ns / 1'000'000;
    return true;
  }

  void ParseNumberPoints(const Json& data, const std::string& name, const std::string& path,
                         const std::vector<Label>& base, MetricType type, bool monotonic) {
    const Json* dps = Points(data, path);
    if (dps == nullptr) return;
    for (std::size_t i = 0; i < dps->size(); ++i) {
      const Json& dp = (*dps)[i];
      std::string dpath = path + ".dataPoints[" + std::to_string(i) + "]";
      std::int64_t ts = 0;
      if (!PointBasics(dp, dpath, base, ts)) continue;
      double value = 0;
      std::int64_t iv = 0;
      if (auto d = dp.find("asDouble"); d != dp.end()) {
        if (!ReadDouble(*d, value)) {
          Reject(dpath, "asDouble is not a number");
          continue;
        }
      } else if (auto n = dp.find("asInt"); n != dp.end()) {
        if (!ReadInt64(*n, iv)) {
          Reject(dpath, "asInt is not a 64-bit integer");
          continue;
        }
        value = static_cast<double>(iv);
      } else {
        Reject(dpath, "data point without asDouble or asInt");
        continue;
      }
      if (monotonic && (!std::isfinite(value) || value < 0)) {
        Reject(dpath, "monotonic sum value must be finite and >= 0");
        continue;
      }
      Emit(name, type, value, ts, dpath);
    }
  }

  bool ReadCountSum(const Json& dp, const std::string& dpath, std::int64_t& count, double& sum,
                    bool& has_sum) {
    if (auto c = dp.find("count"); c == dp.end() || !ReadInt64(*c, count) || count < 0) {
      Reject(dpath, "count missing or not a non-negative 64-bit integer");
      return false;
    }
    has_sum = false;
    if (auto s = dp.find("sum"); s != dp.end()) {
      if (!ReadDouble(*s, sum)) {
        Reject(dpath, "sum is not a number");
        return false;
      }
      has_sum = true;
    }
    return true;
  }

  // Runs `fn(dp, path, ts, count)` for each data point of a histogram, summary or exponential
  // histogram with a valid time and count; when fn returns true, emits `name_sum` (if present)
  // and `name_count` after fn's own samples.
  template <class Fn>
  void ForEachCountPoint(const Json& data, const std::string& name, const std::string& path,
                         const std::vector<Label>& base, MetricType type, Fn fn) {
    const Json* dps = Points(data, path);
    if (dps == nullptr) return;
    for (std::size_t i = 0; i < dps->size(); ++i) {
      const Json& dp = (*dps)[i];
      std::string dpath = path + ".dataPoints[" + std::to_string(i) + "]";
      std::int64_t ts = 0, count = 0;
      double sum = 0;
      bool has_sum = false;
      if (!PointBasics(dp, dpath, base, ts) || !ReadCountSum(dp, dpath, count, sum, has_sum)) {
        continue;
      }
      std::size_t n_labels = labels_.size();
      if (!fn(dp, dpath, ts, count)) continue;
      labels_.resize(n_labels);
      if (has_sum) Emit(name + "_sum", type, sum, ts, dpath);
      Emit(name + "_count", type, static_cast<double>(count), ts, dpath);
    }
  }

  void ParseHistogramPoints(const Json& data, const std::string& name, const std::string& path,
                            const std::vector<Label>& base) {
    auto buckets = [&](const Json& dp, const std::string& dpath, std::int64_t ts,
                       std::int64_t count) {
      std::vector<double> bounds;
      std::vector<std::int64_t> counts;
      bool ok = true;
      if (auto b = dp.find("explicitBounds"); b != dp.end() && b->is_array()) {
        for (const Json& x : *b) {
          double v = 0;
          ok = ok && ReadDouble(x, v) && std::isfinite(v) && (bounds.empty() || v > bounds.back());
          bounds.push_back(v);
        }
      }
      if (auto c = dp.find("bucketCounts"); c != dp.end() && c->is_array()) {
        for (const Json& x : *c) {
          std::int64_t v = 0;
          ok = ok && ReadInt64(x, v) && v >= 0;
          counts.push_back(v);
        }
      }
      if (!ok) {
        Reject(dpath, "explicitBounds must be finite and increasing, bucketCounts integers >= 0");
        return false;
      }
      if (!counts.empty() && counts.size() != bounds.size() + 1) {
        Reject(dpath, "bucketCounts has " + std::to_string(counts.size()) +
                          " entries, expected explicitBounds + 1 = " +
                          std::to_string(bounds.size() + 1));
        return false;
      }
      std::int64_t total = 0;
      for (std::int64_t c : counts) total += c;
      if (!counts.empty() && total != count) {
        Reject(dpath, "bucketCounts sum to " + std::to_string(total) + ", count is " +
                          std::to_string(count));
        return false;
      }
      std::int64_t cumulative = 0;
      std::size_t n_labels = labels_.size();
      for (std::size_t b = 0; b < counts.size(); ++b) {
        cumulative += counts[b];
        labels_.resize(n_labels);
        labels_.push_back({"le", b < bounds.size() ? FormatLe(bounds[b]) : "+Inf"});
        Emit(name + "_bucket", MetricType::kHistogram, static_cast<double>(cumulative), ts, dpath);
      }
      return true;
    };
    ForEachCountPoint(data, name, path, base, MetricType::kHistogram, buckets);
  }

  void ParseSummaryPoints(const Json& data, const std::string& name, const std::string& path,
                          const std::vector<Label>& base) {
    auto quantiles = [&](const Json& dp, const std::string& dpath, std::int64_t ts,
                         std::int64_t /*count*/) {
      std::size_t n_labels = labels_.size();
      if (auto qs = dp.find("quantileValues"); qs != dp.end() && qs->is_array()) {
        for (const Json& q : *qs) {
          double quantile = 0, value = 0;
          auto qi = q.is_object() ? q.find("quantile") : q.end();
          auto vi = q.is_object() ? q.find("value") : q.end();
          if (qi == q.end() || vi == q.end() || !ReadDouble(*qi, quantile) ||
              !ReadDouble(*vi, value) || !(quantile >= 0 && quantile <= 1)) {
            Reject(dpath, "quantileValues entry needs quantile in [0, 1] and a value");
            continue;
          }
          labels_.resize(n_labels);
          labels_.push_back({"quantile", FormatLe(quantile)});
          Emit(name, MetricType::kSummary, value, ts, dpath);
        }
      }
      return true;
    };
    ForEachCountPoint(data, name, path, base, MetricType::kSummary, quantiles);
  }

  void Emit(const std::string& name, MetricType type, double value, std::int64_t ts,
            const std::string& path) {
    views_.clear();
    for (const Label& l : labels_) views_.push_back({l.name, l.value});
    std::string key = SeriesKey(name, views_);
    auto [it, inserted] = last_ts_.try_emplace(key, ts);
    if (!inserted) {
      if (ts < it->second) {
        Reject(path, "timeUnixNano goes backwards for " + key);
        return;
      }
      it->second = ts;
    }
    SampleView s;
    s.metric = name;
    s.type = type;
    s.labels = views_;
    s.value = value;
    s.timestamp_ms = ts;
    s.source = options_.source;
    s.line = line_;
    ++stats_.samples;
    sink_.OnSample(s);
  }

  const ParseOptions& options_;
  SampleSink& sink_;
  ParseStats& stats_;
  std::uint64_t line_ = 1;
  std::vector<Label> labels_;
  std::vector<LabelView> views_;
  std::unordered_map<std::string, std::int64_t> last_ts_;
};

// Parses `text` as JSON; on failure returns a discarded value and the 1-based line of the error.
Json ParseJson(std::string_view text, std::uint64_t& error_line, std::string& error) {
  if (Status depth = CheckJsonDepth(text); !depth.ok()) {
    error_line = 1;
    error = depth.message();
    return Json(Json::value_t::discarded);
  }
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    std::size_t upto = std::min<std::size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    error_line = 1;
    for (std::size_t i = 0; i < upto; ++i) error_line += text[i] == '\n' ? 1u : 0u;
    error = e.what();
    return Json(Json::value_t::discarded);
  } catch (const Json::exception& e) {
    // out_of_range: a number too large for a double (found by otlp_fuzz); no position given.
    error_line = 1;
    error = e.what();
    return Json(Json::value_t::discarded);
  }
}

}  // namespace

void ParseOtlpJson(std::string_view text, const ParseOptions& options, SampleSink& sink,
                   ParseStats& stats) {
  RequestParser parser(options, sink, stats);
  // JSON Lines when the first line is a complete document by itself and more lines follow.
  std::size_t first_nl = text.find('\n');
  bool jsonl = false;
  if (first_nl != std::string_view::npos && first_nl + 1 < text.size()) {
    std::string_view first = text.substr(0, first_nl);
    jsonl = !first.empty() && Json::accept(first.begin(), first.end());
  }
  if (!jsonl) {
    std::uint64_t err_line = 0;
    std::string err;
    Json doc = ParseJson(text, err_line, err);
    ++stats.lines;
    if (doc.is_discarded()) {
      stats.Reject(options.source, err_line, "invalid JSON: " + err);
      return;
    }
    parser.ParseDocument(doc, 1);
    return;
  }
  std::uint64_t line_no = 0;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    ++stats.lines;
    std::uint64_t err_line = 0;
    std::string err;
    Json doc = ParseJson(line, err_line, err);
    if (doc.is_discarded()) {
      stats.Reject(options.source, line_no, "invalid JSON: " + err);
      continue;
    }
    parser.ParseDocument(doc, line_no);
  }
}

}  // namespace seedance::telemetry
