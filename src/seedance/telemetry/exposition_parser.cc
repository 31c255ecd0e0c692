// Prometheus text 0.0.4 / OpenMetrics 1.0 / dcgm-exporter line parser. The hot path works on
// string_views into the input; a label value is copied only when it holds an escape.
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "seedance/telemetry/parse.h"
#include "seedance/telemetry/internal/text_scan.h"

namespace seedance::telemetry {

using internal::IsLabelNameChar;
using internal::IsLabelNameStart;
using internal::IsMetricNameChar;
using internal::IsMetricNameStart;
using internal::ParseFloatToken;

namespace {

// How a sample relates to its family (from the name's suffix).
enum class Role : std::uint8_t { kPlain, kBucket, kCount, kSum, kTotal, kCreated };

struct Family {
  MetricType type = MetricType::kUnknown;
};

struct SuffixRule {
  std::string_view suffix;
  Role role;
};
constexpr SuffixRule kSuffixes[] = {
    {"_bucket", Role::kBucket}, {"_count", Role::kCount},     {"_sum", Role::kSum},
    {"_total", Role::kTotal},   {"_created", Role::kCreated}, {"_gcount", Role::kCount},
    {"_gsum", Role::kSum},      {"_info", Role::kPlain},
};

constexpr std::string_view kOpenMetricsUnits[] = {
    "seconds", "bytes", "joules",  "grams", "meters", "metres",  "ratio",
    "volts",   "amperes", "celsius", "kelvin", "watts", "hertz", "percent",
};

// Per histogram series (labels without `le`) within one scrape.
struct HistState {
  double last_le = -INFINITY;
  double last_count = 0.0;
  bool has_inf = false;
  double inf_count = 0.0;
  bool started = false;
};

std::uint64_t Mix(std::uint64_t h, std::string_view s) {
  return (h ^ std::hash<std::string_view>{}(s)) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
}

}  // namespace

class ExpositionParser::Impl {
 public:
  Impl(InputFormat format, ParseOptions options, SampleSink& sink, ParseStats& stats)
      : om_(format == InputFormat::kOpenMetrics),
        dcgm_(format == InputFormat::kDcgm),
        options_(std::move(options)),
        sink_(sink),
        stats_(stats) {
    labels_.reserve(32);
  }

  void Feed(std::string_view chunk) {
    if (!partial_.empty()) {
      std::size_t nl = chunk.find('\n');
      if (nl == std::string_view::npos) {
        partial_.append(chunk);
        return;
      }
      partial_.append(chunk.substr(0, nl));
      std::string line = std::move(partial_);
      partial_.clear();
      ParseLine(line);
      chunk.remove_prefix(nl + 1);
    }
    while (!chunk.empty()) {
      const void* found = std::memchr(chunk.data(), '\n', chunk.size());
      if (found == nullptr) {
        partial_.assign(chunk);
        return;
      }
      auto len = static_cast<std::size_t>(static_cast<const char*>(found) - chunk.data());
      ParseLine(chunk.substr(0, len));
      chunk.remove_prefix(len + 1);
    }
  }

  void Finish() {
    if (!partial_.empty()) {
      std::string line = std::move(partial_);
      partial_.clear();
      ParseLine(line);
    }
    if (om_ && !eof_seen_) {
      Reject("OpenMetrics input does not end with '# EOF'");
    }
  }

 private:
  void Reject(std::string reason) { stats_.Reject(options_.source, line_no_, std::move(reason)); }

  void ParseLine(std::string_view line) {
    ++line_no_;
    ++stats_.lines;
    if (!line.empty() && line.back() == '\r') {
      if (om_) {
        Reject("carriage return in an OpenMetrics line");
        return;
      }
      line.remove_suffix(1);
    }
    if (eof_seen_) {
      if (!line.empty()) Reject("content after '# EOF'");
      return;
    }
    if (line.empty()) return;
    if (line[0] == '#') {
      ParseComment(line);
      return;
    }
    ParseSample(line);
  }

  void ParseComment(std::string_view line) {
    if (line == "# EOF") {
      if (om_) eof_seen_ = true;
      return;
    }
    bool help = line.starts_with("# HELP ");
    bool type = line.starts_with("# TYPE ");
    bool unit = om_ && line.starts_with("# UNIT ");
    if (!help && !type && !unit) return;  // a comment
    std::string_view rest = line.substr(7);
    std::size_t sp = rest.find(' ');
    std::string_view name = rest.substr(0, sp);
    std::string_view arg = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
    if (!internal::IsValidMetricName(name)) {
      Reject("bad metric name '" + std::string(name) + "' in " + std::string(line.substr(2, 4)));
      return;
    }
    if (help) {
      for (std::size_t i = 0; i < arg.size(); ++i) {
        if (arg[i] != '\\') continue;
        char next = i + 1 < arg.size() ? arg[i + 1] : '\0';
        if (next != '\\' && next != 'n' && !(om_ && next == '"')) {
          Reject("bad escape '\\" + std::string(1, next) + "' in HELP of '" + std::string(name) +
                 "' (only \\\\ and \\n are allowed)");
          return;
        }
        ++i;
      }
      return;
    }
    if (unit) {
      bool known = false;
      for (std::string_view u : kOpenMetricsUnits) known = known || u == arg;
      if (!known) {
        Reject("unknown unit '" + std::string(arg) + "' for '" + std::string(name) + "'");
      } else if (!name.ends_with(arg) || name.size() <= arg.size() ||
                 name[name.size() - arg.size() - 1] != '_') {
        Reject("unit '" + std::string(arg) + "' is not a suffix of the family name '" +
               std::string(name) + "'");
      }
      return;
    }
    MetricType t;
    if (!ParseTypeName(arg, t)) {
      Reject("unknown metric type '" + std::string(arg) + "' for '" + std::string(name) + "'");
      return;
    }
    auto [it, inserted] = families_.try_emplace(std::string(name), Family{t});
    if (!inserted && it->second.type != t) {
      Reject("TYPE changes '" + std::string(name) + "' from " +
             std::string(MetricTypeName(it->second.type)) + " to " +
             std::string(MetricTypeName(t)));
      return;
    }
    cached_name_.clear();
  }

  bool ParseTypeName(std::string_view s, MetricType& t) const {
    if (s == "counter") {
      t = MetricType::kCounter;
    } else if (s == "gauge") {
      t = MetricType::kGauge;
    } else if (s == "histogram") {
      t = MetricType::kHistogram;
    } else if (s == "summary") {
      t = MetricType::kSummary;
    } else if (!om_ && s == "untyped") {
      t = MetricType::kUnknown;
    } else if (om_ && s == "unknown") {
      t = MetricType::kUnknown;
    } else if (om_ && s == "gaugehistogram") {
      t = MetricType::kGaugeHistogram;
    } else if (om_ && s == "stateset") {
      t = MetricType::kStateSet;
    } else if (om_ && s == "info") {
      t = MetricType::kInfo;
    } else {
      return false;
    }
    return true;
  }

  // Resolves the family type and the sample's role from its name (cached for the last name).
  void Resolve(std::string_view name, MetricType& type, Role& role) {
    if (name == cached_name_) {
      type = cached_type_;
      role = cached_role_;
      return;
    }
    type = MetricType::kUnknown;
    role = Role::kPlain;
    if (!families_.empty()) {
      lookup_.assign(name);
      auto it = families_.find(lookup_);
      if (it != families_.end()) {
        type = it->second.type;
        if (type == MetricType::kCounter) role = Role::kTotal;
      } else {
        for (const SuffixRule& r : kSuffixes) {
          if (!name.ends_with(r.suffix)) continue;
          lookup_.assign(name.substr(0, name.size() - r.suffix.size()));
          auto base = families_.find(lookup_);
          if (base == families_.end()) continue;
          type = base->second.type;
          role = r.role;
          break;
        }
      }
    }
    cached_name_.assign(name);
    cached_type_ = type;
    cached_role_ = role;
  }

  // Parses a quoted string starting at line[p] == '"'; on success p is past the closing quote.
  bool ParseQuoted(std::string_view line, std::size_t& p, std::string_view& out,
                   std::string_view what) {
    std::size_t start = ++p;
    std::size_t n = line.size();
    while (p < n && line[p] != '"' && line[p] != '\\') ++p;
    if (p < n && line[p] == '"') {
      out = line.substr(start, p - start);
      ++p;
      return true;
    }
    // Slow path: escapes. scratch_ was reserved for the whole line, so earlier views stay valid.
    std::size_t begin = scratch_.size();
    scratch_.append(line.substr(start, p - start));
    while (p < n) {
      char c = line[p];
      if (c == '"') {
        out = std::string_view(scratch_).substr(begin);
        ++p;
        return true;
      }
      if (c == '\\') {
        char e = p + 1 < n ? line[p + 1] : '\0';
        if (e == '\\') {
          scratch_ += '\\';
        } else if (e == '"') {
          scratch_ += '"';
        } else if (e == 'n') {
          scratch_ += '\n';
        } else {
          Reject(std::string(what) + ": bad escape '\\" + (e == '\0' ? std::string() : std::string(1, e)) +
                 "' (only \\\\, \\\" and \\n are allowed)");
          return false;
        }
        p += 2;
        continue;
      }
      scratch_ += c;
      ++p;
    }
    Reject(std::string(what) + ": unterminated quoted value");
    return false;
  }

  static void SkipSpaces(std::string_view line, std::size_t& p) {
    while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
  }

  bool ParseLabels(std::string_view line, std::size_t& p, std::string_view& metric) {
    ++p;  // '{'
    while (true) {
      SkipSpaces(line, p);
      if (p >= line.size()) {
        Reject("unterminated label set (missing '}')");
        return false;
      }
      if (line[p] == '}') {
        ++p;
        return true;
      }
      std::string_view name;
      bool quoted = line[p] == '"';
      if (quoted) {
        if (!ParseQuoted(line, p, name, "quoted name")) return false;
      } else if (IsLabelNameStart(line[p])) {
        std::size_t s = p;
        while (p < line.size() && IsLabelNameChar(line[p])) ++p;
        name = line.substr(s, p - s);
      } else {
        Reject("expected a label name at column " + std::to_string(p + 1));
        return false;
      }
      SkipSpaces(line, p);
      if (metric.empty() && labels_.empty() && p < line.size() &&
          (line[p] == ',' || line[p] == '}') && quoted) {
        metric = name;  // {"utf8.metric.name", ...}
      } else {
        if (p >= line.size() || line[p] != '=') {
          Reject("expected '=' after label '" + std::string(name) + "'");
          return false;
        }
        ++p;
        SkipSpaces(line, p);
        if (p >= line.size() || line[p] != '"') {
          Reject("label '" + std::string(name) + "': value must be in double quotes");
          return false;
        }
        std::string_view value;
        if (!ParseQuoted(line, p, value, "label '" + std::string(name) + "'")) return false;
        for (const LabelView& l : labels_) {
          if (l.name == name) {
            Reject("duplicate label '" + std::string(name) + "'");
            return false;
          }
        }
        labels_.push_back({name, value});
      }
      SkipSpaces(line, p);
      if (p < line.size() && line[p] == ',') {
        ++p;
        continue;
      }
      if (p < line.size() && line[p] == '}') {
        ++p;
        return true;
      }
      Reject("expected ',' or '}' after label '" + std::string(name) + "'");
      return false;
    }
  }

  std::string_view LabelValue(std::string_view name) const {
    for (const LabelView& l : labels_) {
      if (l.name == name) return l.value;
    }
    return {};
  }

  void ParseSample(std::string_view line) {
    labels_.clear();
    scratch_.clear();
    if (scratch_.capacity() < line.size()) scratch_.reserve(line.size());
    std::size_t p = 0;
    std::string_view metric;
    if (IsMetricNameStart(line[0])) {
      while (p < line.size() && IsMetricNameChar(line[p])) ++p;
      metric = line.substr(0, p);
    } else if (line[0] != '{') {
      Reject("expected a metric name, got '" + std::string(line.substr(0, 20)) + "'");
      return;
    }
    if (p < line.size() && line[p] == '{') {
      if (!ParseLabels(line, p, metric)) return;
    }
    if (metric.empty()) {
      Reject("no metric name");
      return;
    }
    std::size_t series_end = p;
    if (p >= line.size() || (line[p] != ' ' && line[p] != '\t')) {
      Reject("expected a space and a value after '" + std::string(line.substr(0, p)) + "'");
      return;
    }
    SkipSpaces(line, p);
    std::size_t vs = p;
    while (p < line.size() && line[p] != ' ' && line[p] != '\t') ++p;
    std::string_view value_text = line.substr(vs, p - vs);
    double value = 0.0;
    if (value_text.empty() || !ParseFloatToken(value_text, value)) {
      Reject("value '" + std::string(value_text) + "' of '" + std::string(metric) +
             "' is not a number");
      return;
    }
    SkipSpaces(line, p);
    std::int64_t ts = kNoTimestamp;
    if (p < line.size() && line[p] != '#') {
      std::size_t ts_start = p;
      while (p < line.size() && line[p] != ' ' && line[p] != '\t') ++p;
      std::string_view ts_text = line.substr(ts_start, p - ts_start);
      if (!ParseTimestampToken(ts_text, ts)) return;
      SkipSpaces(line, p);
    }
    if (p < line.size()) {
      if (!(om_ && line[p] == '#')) {
        Reject("unexpected text after the sample: '" + std::string(line.substr(p, 20)) + "'");
        return;
      }
      // An OpenMetrics exemplar: "# {labels} value [timestamp]". Checked for shape only.
      std::string_view ex = line.substr(p);
      if (!ex.starts_with("# {") || ex.find('}') == std::string_view::npos) {
        Reject("malformed exemplar '" + std::string(ex.substr(0, 30)) + "'");
        return;
      }
    }
    MetricType type;
    Role role;
    Resolve(metric, type, role);
    if (!CheckValue(metric, type, role, value)) return;
    if (dcgm_ && IsDcgmBlank(value)) {
      ++stats_.missing;
      return;
    }
    if (ts != kNoTimestamp) {
      std::uint64_t key = std::hash<std::string_view>{}(line.substr(0, series_end));
      auto [it, inserted] = last_ts_.try_emplace(key, ts);
      if (!inserted) {
        if (ts < it->second) {
          Reject("timestamp " + std::to_string(ts) + " goes backwards (previous sample of " +
                 std::string(metric) + " at " + std::to_string(it->second) + ")");
          return;
        }
        it->second = ts;
      }
    } else {
      ts = options_.default_timestamp_ms;
    }
    if ((type == MetricType::kHistogram || type == MetricType::kGaugeHistogram) &&
        !CheckHistogram(metric, role, value)) {
      return;
    }
    SampleView s;
    s.metric = metric;
    s.type = type;
    s.labels = labels_;
    s.value = value;
    s.timestamp_ms = ts;
    s.source = options_.source;
    s.line = line_no_;
    ++stats_.samples;
    sink_.OnSample(s);
  }

  bool ParseTimestampToken(std::string_view text, std::int64_t& ts) {
    if (!om_) {
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), ts);
      if (ec != std::errc() || ptr != text.data() + text.size()) {
        Reject("timestamp '" + std::string(text) + "' is not an integer (milliseconds)");
        return false;
      }
      return true;
    }
    double seconds = 0.0;
    if (!ParseFloatToken(text, seconds) || !std::isfinite(seconds) || std::fabs(seconds) > 9e15) {
      Reject("timestamp '" + std::string(text) + "' is not a finite number of seconds");
      return false;
    }
    ts = std::llround(seconds * 1000.0);
    return true;
  }

  bool CheckValue(std::string_view metric, MetricType type, Role role, double value) {
    bool must_be_count = false;
    switch (type) {
      case MetricType::kCounter:
        must_be_count = role == Role::kTotal || role == Role::kPlain;
        break;
      case MetricType::kHistogram:
      case MetricType::kGaugeHistogram:
        must_be_count = role == Role::kBucket || role == Role::kCount;
        break;
      case MetricType::kSummary:
        must_be_count = role == Role::kCount;
        break;
      default:
        break;
    }
    if (must_be_count && (!std::isfinite(value) || value < 0)) {
      Reject("value " + FormatValue(value) + " not allowed for " + std::string(metric) + " (a " +
             std::string(MetricTypeName(type)) + " count must be finite and >= 0)");
      return false;
    }
    if (dcgm_ && !std::isfinite(value)) {
      Reject("value " + FormatValue(value) + " of " + std::string(metric) +
             " not allowed (dcgm-exporter values are finite)");
      return false;
    }
    if (role == Role::kCreated && !std::isfinite(value)) {
      Reject("value " + FormatValue(value) + " not allowed for " + std::string(metric));
      return false;
    }
    if (type == MetricType::kSummary && role == Role::kPlain) {
      double q = 0;
      std::string_view qt = LabelValue("quantile");
      if (qt.empty() || !ParseFloatToken(qt, q) || !(q >= 0.0 && q <= 1.0)) {
        Reject("summary sample " + std::string(metric) + " needs a quantile label in [0, 1]");
        return false;
      }
    }
    return true;
  }

  static std::string FormatValue(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    return std::to_string(v);
  }

  bool CheckHistogram(std::string_view metric, Role role, double value) {
    if (role != Role::kBucket && role != Role::kCount) return true;
    std::uint64_t key = Mix(0, metric.substr(0, metric.rfind('_')));
    for (const LabelView& l : labels_) {
      if (l.name == "le") continue;
      key = Mix(Mix(key, l.name), l.value);
    }
    HistState& st = hist_[key];
    if (role == Role::kCount) {
      if (!st.has_inf) {
        Reject(std::string(metric) + " comes without a le=\"+Inf\" bucket");
        return false;
      }
      if (value != st.inf_count) {
        Reject(std::string(metric) + " " + FormatValue(value) + " differs from the le=\"+Inf\" bucket " +
               FormatValue(st.inf_count));
        st = HistState{};
        return false;
      }
      st = HistState{};
      return true;
    }
    std::string_view le_text = LabelValue("le");
    double le = 0;
    if (le_text.empty() || !ParseFloatToken(le_text, le) || std::isnan(le)) {
      Reject(std::string(metric) + " needs a numeric le label, got '" + std::string(le_text) + "'");
      return false;
    }
    if (st.has_inf) st = HistState{};  // the previous scrape of this series was complete
    if (st.started && le <= st.last_le) {
      Reject(std::string(metric) + " bucket le=\"" + std::string(le_text) +
             "\" does not increase (previous le " + FormatValue(st.last_le) + ")");
      return false;
    }
    if (st.started && value < st.last_count) {
      Reject(std::string(metric) + " bucket le=\"" + std::string(le_text) + "\" count " +
             FormatValue(value) + " is below the previous bucket's " + FormatValue(st.last_count));
      return false;
    }
    st.started = true;
    st.last_le = le;
    st.last_count = value;
    if (std::isinf(le)) {
      st.has_inf = true;
      st.inf_count = value;
    }
    return true;
  }

  bool om_;
  bool dcgm_;
  ParseOptions options_;
  SampleSink& sink_;
  ParseStats& stats_;
  std::string partial_;
  std::uint64_t line_no_ = 0;
  bool eof_seen_ = false;
  std::unordered_map<std::string, Family> families_;
  std::string lookup_;
  std::string cached_name_;
  MetricType cached_type_ = MetricType::kUnknown;
  Role cached_role_ = Role::kPlain;
  std::unordered_map<std::uint64_t, std::int64_t> last_ts_;
  std::unordered_map<std::uint64_t, HistState> hist_;
  std::vector<LabelView> labels_;
  std::string scratch_;
};

ExpositionParser::ExpositionParser(InputFormat format, ParseOptions options, SampleSink& sink,
                                   ParseStats& stats)
    : impl_(std::make_unique<Impl>(format, std::move(options), sink, stats)) {
  SEEDANCE_CHECK(format != InputFormat::kOtlpJson) << "use ParseOtlpJson";
}
ExpositionParser::~ExpositionParser() = default;
void ExpositionParser::Feed(std::string_view chunk) { impl_->Feed(chunk); }
void ExpositionParser::Finish() { impl_->Finish(); }

}  // namespace seedance::telemetry
