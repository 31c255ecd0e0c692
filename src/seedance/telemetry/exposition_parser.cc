// Prometheus text 0.0.4 / OpenMetrics 1.0 / dcgm-exporter line parser. The hot path works on
// string_views into the input; a label value is copied only when it holds an escape.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <unordered_map>
#include <unordered_set>
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
  bool has_type = false;  // a TYPE line was given (in this scrape)
  bool has_type_ever = false;
  bool has_help = false;
  bool has_unit = false;
  bool has_samples = false;
  bool closed = false;  // OpenMetrics: another family followed this one
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
      if (!om_ && !eof_seen_ && line.find_first_not_of(" \t\r") != std::string::npos) {
        // The text format ends every line with '\n': a last line without one may be cut short.
        ++line_no_;
        ++stats_.lines;
        Reject("the last line has no line feed (input cut short?)");
        return;
      }
      ParseLine(line);
    }
    if (om_) CloseCurrentFamily();
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
      Reject("content after '# EOF'");
      return;
    }
    if (om_) {
      if (line.empty()) {
        Reject("blank line (not allowed in OpenMetrics)");
        return;
      }
    } else {
      // 0.0.4 allows blanks and tabs before a sample or a comment.
      std::size_t start = line.find_first_not_of(" \t");
      if (start == std::string_view::npos) return;
      line.remove_prefix(start);
    }
    if (line[0] == '#') {
      ParseComment(line);
      return;
    }
    ParseSample(line);
  }

  // Reads a metric name at line[p]: bare, or quoted (UTF-8 names). Rejects and returns false on
  // a bad one.
  bool ReadMetricName(std::string_view line, std::size_t& p, std::string_view& name,
                      std::string_view what) {
    if (p < line.size() && line[p] == '"') {
      if (!ParseQuoted(line, p, name, what)) return false;
      if (name.empty() || !internal::IsValidUtf8(name)) {
        Reject("bad quoted metric name in " + std::string(what));
        return false;
      }
      return true;
    }
    std::size_t s = p;
    while (p < line.size() && IsMetricNameChar(line[p])) ++p;
    name = line.substr(s, p - s);
    if (!internal::IsValidMetricName(name)) {
      std::size_t e = line.find_first_of(" \t", s);
      Reject("bad metric name '" + std::string(line.substr(s, e == std::string_view::npos ? e : e - s)) +
             "' in " + std::string(what));
      return false;
    }
    return true;
  }

  void ParseComment(std::string_view line) {
    if (line == "# EOF") {
      if (om_) {
        CloseCurrentFamily();
        eof_seen_ = true;
      }
      return;
    }
    std::size_t p = 1;
    std::string_view keyword;
    if (om_) {
      // OpenMetrics: exactly "# HELP|TYPE|UNIT name arg"; no other comments.
      if (line.starts_with("# HELP ") || line.starts_with("# TYPE ") || line.starts_with("# UNIT ")) {
        keyword = line.substr(2, 4);
        p = 7;
      } else {
        Reject("not an OpenMetrics line (comments other than HELP, TYPE, UNIT and EOF are not allowed)");
        return;
      }
    } else {
      // 0.0.4: '#', blanks, HELP or TYPE, blanks, name, blanks, argument; anything else is a comment.
      SkipSpaces(line, p);
      std::size_t k = p;
      while (p < line.size() && line[p] != ' ' && line[p] != '\t') ++p;
      keyword = line.substr(k, p - k);
      if (keyword != "HELP" && keyword != "TYPE") return;
      SkipSpaces(line, p);
      if (p >= line.size()) return;  // "# HELP" alone is a comment
    }
    scratch_.clear();
    if (scratch_.capacity() < line.size()) scratch_.reserve(line.size());
    std::string_view name;
    if (!ReadMetricName(line, p, name, keyword)) return;
    std::string_view arg;
    if (p < line.size()) {
      if (line[p] != ' ' && (om_ || line[p] != '\t')) {
        Reject("expected a space after the name in " + std::string(keyword));
        return;
      }
      ++p;
      if (!om_) SkipSpaces(line, p);
      arg = line.substr(p);
    } else if (!om_) {
      return;  // "# HELP name" without text is a comment in 0.0.4 (prometheus/common)
    } else {
      Reject(std::string(keyword) + " of '" + std::string(name) +
             "' needs a space and an argument (which may be empty)");
      return;
    }
    std::string family_name(name);
    Family& f = families_[family_name];
    MetricType t = MetricType::kUnknown;
    if (keyword == "TYPE") {
      if (!om_) {
        while (!arg.empty() && (arg.back() == ' ' || arg.back() == '\t')) arg.remove_suffix(1);
      }
      if (!ParseTypeName(arg, t)) {
        Reject("unknown metric type '" + std::string(arg) + "' for '" + family_name + "'");
        return;
      }
      if (f.has_type_ever && f.type != t) {
        Reject("TYPE changes '" + family_name + "' from " + std::string(MetricTypeName(f.type)) +
               " to " + std::string(MetricTypeName(t)));
        return;
      }
    }
    if (om_ && keyword == "TYPE" && !CheckNameClash(family_name, t)) return;
    if (!TouchFamilyMetadata(family_name, f, keyword)) return;
    if (keyword == "HELP") {
      for (std::size_t i = 0; i < arg.size(); ++i) {
        if (arg[i] != '\\') continue;
        char next = i + 1 < arg.size() ? arg[i + 1] : '\0';
        if (!om_ && next != '\\' && next != 'n' && next != '"') {
          Reject("bad escape '\\" + std::string(1, next) + "' in HELP of '" + family_name +
                 "' (only \\\\, \\\" and \\n are allowed)");
          return;
        }
        ++i;
      }
      f.has_help = true;
      return;
    }
    if (keyword == "UNIT") {
      f.has_unit = true;
      if (arg.empty()) return;  // an empty UNIT is allowed
      bool known = false;
      for (std::string_view u : kOpenMetricsUnits) known = known || u == arg;
      if (!known) {
        Reject("unknown unit '" + std::string(arg) + "' for '" + family_name + "'");
      } else if (!name.ends_with(arg) || name.size() <= arg.size() ||
                 name[name.size() - arg.size() - 1] != '_') {
        Reject("unit '" + std::string(arg) + "' is not a suffix of the family name '" +
               family_name + "'");
      }
      return;
    }
    f.type = t;
    f.has_type = true;
    f.has_type_ever = true;
    cached_name_.clear();
  }

  // Checks a HELP/TYPE/UNIT line's place. 0.0.4: each once per family and TYPE before the
  // family's samples; metadata of a family seen earlier, after other families, starts the
  // family's next scrape (a recorded stream concatenates scrapes). OpenMetrics: each once, before
  // the samples, and a family's lines are not interleaved with another's.
  bool TouchFamilyMetadata(const std::string& name, Family& f, std::string_view keyword) {
    if (name != current_family_) {
      if (om_) {
        if (f.closed) {
          Reject(std::string(keyword) + " of '" + name +
                 "' after another family (a family's lines must be together)");
          return false;
        }
        CloseCurrentFamily();
      } else if (f.has_help || f.has_type || f.has_samples) {
        f.has_help = f.has_type = f.has_unit = f.has_samples = false;  // the next scrape
      }
      current_family_ = name;
      current_has_samples_ = false;
    }
    bool dup = keyword == "HELP" ? f.has_help : keyword == "TYPE" ? f.has_type : f.has_unit;
    if (dup) {
      Reject("second " + std::string(keyword) + " line for '" + name + "'");
      return false;
    }
    if (f.has_samples && (om_ || keyword == "TYPE")) {
      Reject(std::string(keyword) + " of '" + name + "' after its samples");
      return false;
    }
    return true;
  }

  void CloseCurrentFamily() {
    if (current_family_.empty()) return;
    if (om_) FinishOmFamily();
    auto it = families_.find(current_family_);
    if (it != families_.end()) it->second.closed = true;
    current_family_.clear();
  }

  // Notes a sample of `family`; rejects (OpenMetrics) a family that comes back after another.
  bool NoteSampleFamily(std::string_view family, MetricType type) {
    if (family == current_family_ && current_has_samples_) return true;
    Family& f = families_[std::string(family)];
    if (family == current_family_) {
      f.has_samples = true;
      current_has_samples_ = true;
      om_family_type_ = type;
      return true;
    }
    if (om_) {
      if (f.closed) {
        Reject("sample of '" + std::string(family) +
               "' after another family (a family's lines must be together)");
        return false;
      }
      CloseCurrentFamily();
    } else if (f.has_samples && !f.has_type && !f.has_help) {
      f.has_samples = false;  // an untyped family's next scrape
    }
    f.has_samples = true;
    current_family_.assign(family);
    current_has_samples_ = true;
    om_family_type_ = type;
    return true;
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
    } else if (s == "gaugehistogram" || (!om_ && s == "gauge_histogram")) {
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

  // Resolves the family (name, type) and the sample's role from its name (cached for the last
  // name). A name belongs to a family declared by TYPE (itself or with a suffix), else to itself.
  void Resolve(std::string_view name, std::string_view& family, MetricType& type, Role& role) {
    if (name != cached_name_) {
      cached_type_ = MetricType::kUnknown;
      cached_role_ = Role::kPlain;
      cached_family_.assign(name);
      if (!families_.empty()) {
        lookup_.assign(name);
        auto it = families_.find(lookup_);
        if (it != families_.end() && it->second.has_type_ever) {
          cached_type_ = it->second.type;
          if (cached_type_ == MetricType::kCounter) cached_role_ = Role::kTotal;
        } else {
          for (const SuffixRule& r : kSuffixes) {
            if (!name.ends_with(r.suffix)) continue;
            lookup_.assign(name.substr(0, name.size() - r.suffix.size()));
            auto base = families_.find(lookup_);
            if (base == families_.end() || !base->second.has_type_ever) continue;
            cached_type_ = base->second.type;
            cached_role_ = r.role;
            cached_family_.assign(lookup_);
            break;
          }
        }
      }
      cached_name_.assign(name);
    }
    family = cached_family_;
    type = cached_type_;
    role = cached_role_;
  }

  // Parses a quoted string starting at line[p] == '"'; on success p is past the closing quote.
  bool ParseQuoted(std::string_view line, std::size_t& p, std::string_view& out,
                   std::string_view what) {
    std::size_t start = ++p;
    std::size_t n = line.size();
    unsigned high = 0;  // any byte >= 0x80: the value needs a UTF-8 check
    while (p < n && line[p] != '"' && line[p] != '\\') high |= static_cast<unsigned char>(line[p++]);
    quoted_ascii_ = (high & 0x80u) == 0;
    if (p < n && line[p] == '"') {
      out = line.substr(start, p - start);
      ++p;
      return true;
    }
    quoted_ascii_ = false;
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
        } else if (om_ && e != '\0') {
          scratch_ += '\\';  // OpenMetrics keeps an unknown escape as written
          scratch_ += e;
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
    bool after_comma = false;
    while (true) {
      if (!om_) SkipSpaces(line, p);
      if (p >= line.size()) {
        Reject("unterminated label set (missing '}')");
        return false;
      }
      if (line[p] == '}') {
        if (om_ && after_comma) {
          Reject("a ',' before '}' (not allowed in OpenMetrics)");
          return false;
        }
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
      if (!om_) SkipSpaces(line, p);
      if (metric.empty() && p < line.size() && (line[p] == ',' || line[p] == '}') && quoted) {
        metric = name;  // {"utf8.metric.name", ...}
      } else {
        if (p >= line.size() || line[p] != '=') {
          Reject("expected '=' after label '" + std::string(name) + "'");
          return false;
        }
        ++p;
        if (!om_) SkipSpaces(line, p);
        if (p >= line.size() || line[p] != '"') {
          Reject("label '" + std::string(name) + "': value must be in double quotes");
          return false;
        }
        std::string_view value;
        if (!ParseQuoted(line, p, value, "label '" + std::string(name) + "'")) return false;
        if (name == "__name__") {
          Reject("label name '__name__' is reserved");
          return false;
        }
        if (!quoted_ascii_ && !internal::IsValidUtf8(value)) {
          Reject("label '" + std::string(name) + "': value is not valid UTF-8");
          return false;
        }
        for (std::size_t i = label_scope_; i < labels_.size(); ++i) {
          if (labels_[i].name == name) {
            Reject("duplicate label '" + std::string(name) + "'");
            return false;
          }
        }
        labels_.push_back({name, value});
      }
      if (!om_) SkipSpaces(line, p);
      if (p < line.size() && line[p] == ',') {
        ++p;
        after_comma = true;
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
    if (!om_ && !metric.empty()) {
      std::size_t q = p;
      SkipSpaces(line, q);
      if (q < line.size() && line[q] == '{') p = q;  // "name {labels}" (prometheus/common)
    }
    if (p < line.size() && line[p] == '{') {
      if (!ParseLabels(line, p, metric)) return;
    }
    if (metric.empty()) {
      Reject("no metric name");
      return;
    }
    std::size_t series_end = p;
    bool has_exemplar = false;
    double value = 0.0;
    std::int64_t ts = kNoTimestamp;
    if (om_) {
      if (!ParseOmTail(line, p, metric, value, ts, has_exemplar)) return;
    } else if (!ParseTextTail(line, p, metric, value, ts)) {
      return;
    }
    MetricType type;
    Role role;
    std::string_view family;
    Resolve(metric, family, type, role);
    if (!NoteSampleFamily(family, type)) return;
    if (!CheckValue(metric, type, role, value)) return;
    if (om_ && !CheckOmSample(line.substr(0, series_end), metric, family, type, role, value,
                              ts != kNoTimestamp, has_exemplar)) {
      return;
    }
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

  // Reads a token up to the next space (OpenMetrics separates tokens by exactly one space).
  static std::string_view OmToken(std::string_view line, std::size_t& p) {
    std::size_t s = p;
    while (p < line.size() && line[p] != ' ') ++p;
    return line.substr(s, p - s);
  }

  // OpenMetrics: SP value [SP timestamp] [SP "# " exemplar]; single spaces, nothing after.
  bool ParseOmTail(std::string_view line, std::size_t& p, std::string_view metric, double& value,
                   std::int64_t& ts, bool& has_exemplar) {
    if (p >= line.size() || line[p] != ' ') {
      Reject("expected one space and a value after '" + std::string(line.substr(0, p)) + "'");
      return false;
    }
    ++p;
    std::string_view value_text = OmToken(line, p);
    if (value_text.empty() || !ParseFloatToken(value_text, value) || HasTab(value_text)) {
      Reject("value '" + std::string(value_text) + "' of '" + std::string(metric) +
             "' is not a number");
      return false;
    }
    if (p < line.size() && line.substr(p).starts_with(" # ")) {
      has_exemplar = true;
      return ParseExemplar(line, p);
    }
    if (p < line.size()) {
      ++p;  // the space
      std::string_view ts_text = OmToken(line, p);
      if (ts_text.empty() || HasTab(ts_text) || !ParseTimestampToken(ts_text, ts)) {
        if (ts_text.empty() || HasTab(ts_text)) Reject("expected a timestamp after the value");
        return false;
      }
    }
    if (p < line.size() && line.substr(p).starts_with(" # ")) {
      has_exemplar = true;
      return ParseExemplar(line, p);
    }
    if (p < line.size()) {
      Reject("unexpected text after the sample: '" + std::string(line.substr(p, 20)) + "'");
      return false;
    }
    return true;
  }

  static bool HasTab(std::string_view s) { return s.find('\t') != std::string_view::npos; }

  // " # {labels} value [timestamp]" at line[p]; the labels are checked and dropped.
  bool ParseExemplar(std::string_view line, std::size_t& p) {
    p += 3;
    if (p >= line.size() || line[p] != '{') {
      Reject("an exemplar starts with '{'");
      return false;
    }
    const std::size_t kept = labels_.size();
    std::string_view no_metric;
    label_scope_ = kept;
    const bool labels_ok = ParseLabels(line, p, no_metric);
    label_scope_ = 0;
    if (!labels_ok) return false;
    std::size_t chars = 0;
    for (std::size_t i = kept; i < labels_.size(); ++i) {
      chars += CodePoints(labels_[i].name) + CodePoints(labels_[i].value);
    }
    labels_.resize(kept);
    if (!no_metric.empty()) {
      Reject("an exemplar has no metric name");
      return false;
    }
    if (chars > 128) {
      Reject("exemplar labels have " + std::to_string(chars) + " characters (at most 128)");
      return false;
    }
    if (p >= line.size() || line[p] != ' ') {
      Reject("expected one space and a value after the exemplar's labels");
      return false;
    }
    ++p;
    double v = 0;
    std::string_view v_text = OmToken(line, p);
    if (v_text.empty() || HasTab(v_text) || !ParseFloatToken(v_text, v)) {
      Reject("exemplar value '" + std::string(v_text) + "' is not a number");
      return false;
    }
    if (p < line.size()) {
      ++p;
      std::string_view t_text = OmToken(line, p);
      double t = 0;
      if (t_text.empty() || HasTab(t_text) || !ParseFloatToken(t_text, t) || !std::isfinite(t)) {
        Reject("exemplar timestamp '" + std::string(t_text) + "' is not a finite number");
        return false;
      }
    }
    if (p < line.size()) {
      Reject("unexpected text after the exemplar");
      return false;
    }
    return true;
  }

  static std::size_t CodePoints(std::string_view s) {
    std::size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
    return n;
  }

  // The suffixes a family of `type` owns (OpenMetrics).
  static std::vector<std::string_view> OwnedSuffixes(MetricType type) {
    switch (type) {
      case MetricType::kCounter: return {"_total", "_created"};
      case MetricType::kSummary: return {"_count", "_sum", "_created"};
      case MetricType::kHistogram: return {"_bucket", "_count", "_sum", "_created"};
      case MetricType::kGaugeHistogram: return {"_bucket", "_gcount", "_gsum"};
      case MetricType::kInfo: return {"_info"};
      default: return {};
    }
  }

  // OpenMetrics: a family name must not be another family's sample name.
  bool CheckNameClash(const std::string& name, MetricType type) {
    for (std::string_view suffix : OwnedSuffixes(type)) {
      lookup_.assign(name);
      lookup_.append(suffix);
      auto it = families_.find(lookup_);
      if (it != families_.end() && it->second.has_type_ever) {
        Reject("family '" + name + "' clashes with family '" + lookup_ + "'");
        return false;
      }
    }
    for (const SuffixRule& r : kSuffixes) {
      if (!std::string_view(name).ends_with(r.suffix)) continue;
      lookup_.assign(name.substr(0, name.size() - r.suffix.size()));
      auto it = families_.find(lookup_);
      if (it == families_.end() || !it->second.has_type_ever) continue;
      for (std::string_view owned : OwnedSuffixes(it->second.type)) {
        if (owned == r.suffix) {
          Reject("family '" + name + "' clashes with the samples of family '" + lookup_ + "'");
          return false;
        }
      }
    }
    return true;
  }

  // OpenMetrics rules on one sample of the current family: sample names the type allows,
  // values, exemplar placement, a series' samples together, repeated points with timestamps.
  bool CheckOmSample(std::string_view series_text, std::string_view metric, std::string_view family,
                     MetricType type, Role role, double value, bool has_ts, bool has_exemplar) {
    const bool hist = type == MetricType::kHistogram;
    const bool ghist = type == MetricType::kGaugeHistogram;
    const bool g_suffix = metric.ends_with("_gcount") || metric.ends_with("_gsum");
    if ((hist && g_suffix) ||
        (ghist && (role == Role::kCount || role == Role::kSum) && !g_suffix) ||
        ((hist || ghist) && role == Role::kPlain) ||
        (type == MetricType::kCounter && metric == family && !metric.ends_with("_total")) ||
        (type == MetricType::kInfo && metric == family) ||
        (type == MetricType::kSummary && role == Role::kBucket)) {
      Reject("sample name '" + std::string(metric) + "' is not allowed for a " +
             std::string(MetricTypeName(type)));
      return false;
    }
    if (has_exemplar && !((type == MetricType::kCounter && role == Role::kTotal) ||
                          ((hist || ghist) && role == Role::kBucket))) {
      Reject("exemplar not allowed on '" + std::string(metric) +
             "' (only counter _total and histogram _bucket samples carry one)");
      return false;
    }
    if (type == MetricType::kInfo && value != 1.0) {
      Reject("info value of '" + std::string(metric) + "' must be 1");
      return false;
    }
    if (type == MetricType::kStateSet) {
      if (value != 0.0 && value != 1.0) {
        Reject("stateset value of '" + std::string(metric) + "' must be 0 or 1");
        return false;
      }
      if (LabelValue(family).empty() &&
          std::none_of(labels_.begin(), labels_.end(),
                       [&](const LabelView& l) { return l.name == family; })) {
        Reject("stateset sample '" + std::string(metric) + "' needs a label named '" +
               std::string(family) + "'");
        return false;
      }
    }
    // Quantile values may be NaN (no observations); sums may not.
    if ((type == MetricType::kSummary && (role == Role::kSum || role == Role::kPlain)) ||
        (hist && role == Role::kSum)) {
      if ((std::isnan(value) && role == Role::kSum) || value < 0) {
        Reject("value " + FormatValue(value) + " not allowed for " + std::string(metric) +
               " (must be >= 0)");
        return false;
      }
    }
    // Series: the labels without le (histograms) or quantile (summaries).
    std::uint64_t key = 0x51ED;
    for (const LabelView& l : labels_) {
      if (((hist || ghist) && l.name == "le") || (type == MetricType::kSummary && l.name == "quantile")) {
        continue;
      }
      key = Mix(Mix(key, l.name), l.value);
    }
    if (!om_series_started_ || key != om_current_series_) {
      if (om_series_started_) om_closed_series_.insert(om_current_series_);
      if (om_closed_series_.count(key) != 0) {
        Reject("sample '" + std::string(metric) +
               "' of a series whose samples came earlier (a series' samples must be together)");
        return false;
      }
      om_current_series_ = key;
      om_series_started_ = true;
    }
    auto [point, fresh] = om_points_.try_emplace(std::hash<std::string_view>{}(series_text), has_ts);
    if (!fresh && (!has_ts || !point->second)) {
      Reject("'" + std::string(series_text) +
             "' repeats: several points of a series need a timestamp each");
      return false;
    }
    if (hist || ghist) {
      OmHistSeries& h = om_hist_[key];
      if (role == Role::kBucket) {
        std::string_view le = LabelValue("le");
        double bound = 0;
        if (ParseFloatToken(le, bound)) {
          if (std::isinf(bound) && le != "+Inf") {
            Reject("le=\"" + std::string(le) + "\": OpenMetrics writes +Inf");
            return false;
          }
          if (bound < 0) h.negative_bucket = true;
          if (std::isinf(bound) && bound > 0) h.has_inf = true;
        }
      } else if (role == Role::kSum) {
        h.has_sum = true;
        h.negative_sum = std::isnan(value) || value < 0;
      } else if (role == Role::kCount) {
        h.has_count = true;
      }
    }
    return true;
  }

  // End of an OpenMetrics family: each histogram series has a +Inf bucket, _sum and _count come
  // together, no _sum with negative buckets (histogram), a negative _gsum only with them.
  void FinishOmFamily() {
    const bool ghist = om_family_type_ == MetricType::kGaugeHistogram;
    for (const auto& [key, h] : om_hist_) {
      const char* fault = nullptr;
      if (!h.has_inf) {
        fault = "a series without a le=\"+Inf\" bucket";
      } else if (h.has_sum != h.has_count) {
        fault = ghist ? "_gsum without _gcount or the reverse" : "_sum without _count or the reverse";
      } else if (!ghist && h.negative_bucket && h.has_sum) {
        fault = "a _sum with negative buckets";
      } else if (ghist && h.negative_sum && !h.negative_bucket) {
        fault = "a negative or NaN _gsum without negative buckets";
      }
      if (fault != nullptr) {
        Reject("histogram '" + current_family_ + "': " + fault);
        break;
      }
    }
    om_hist_.clear();
    om_points_.clear();
    om_closed_series_.clear();
    om_series_started_ = false;
    om_family_type_ = MetricType::kUnknown;
  }

  // 0.0.4: blanks or tabs, the value, and an optional integer timestamp (ms).
  bool ParseTextTail(std::string_view line, std::size_t& p, std::string_view metric, double& value,
                     std::int64_t& ts) {
    const bool glued = p > 0 && p < line.size() && line[p - 1] == '}';  // "a{}1" (common)
    if (p >= line.size() || (line[p] != ' ' && line[p] != '\t' && !glued)) {
      Reject("expected a space and a value after '" + std::string(line.substr(0, p)) + "'");
      return false;
    }
    SkipSpaces(line, p);
    std::size_t vs = p;
    while (p < line.size() && line[p] != ' ' && line[p] != '\t') ++p;
    std::string_view value_text = line.substr(vs, p - vs);
    if (value_text.empty() || !ParseFloatToken(value_text, value)) {
      Reject("value '" + std::string(value_text) + "' of '" + std::string(metric) +
             "' is not a number");
      return false;
    }
    SkipSpaces(line, p);
    if (p < line.size() && line[p] != '#') {
      std::size_t ts_start = p;
      while (p < line.size() && line[p] != ' ' && line[p] != '\t') ++p;
      std::string_view ts_text = line.substr(ts_start, p - ts_start);
      if (!ParseTimestampToken(ts_text, ts)) return false;
      SkipSpaces(line, p);
    }
    if (p < line.size()) {
      Reject("unexpected text after the sample: '" + std::string(line.substr(p, 20)) + "'");
      return false;
    }
    return true;
  }

  bool ParseTimestampToken(std::string_view text, std::int64_t& ts) {
    if (!om_) {
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), ts);
      if (ec != std::errc() || ptr != text.data() + text.size()) {
        Reject("timestamp '" + std::string(text) + "' is not an integer (milliseconds)");
        return false;
      }
      if (ts == kNoTimestamp) {  // -2^63 is the "no timestamp" marker: it would be stored as now
        Reject("timestamp '" + std::string(text) + "' is out of range (-2^63 is reserved)");
        return false;
      }
      if (ts >= 100'000'000 && ts < 100'000'000'000) {  // seconds written where milliseconds belong
        if (stats_.seconds_like_timestamps++ == 0) {
          stats_.first_seconds_like = options_.source + ":" + std::to_string(line_no_) + ": timestamp " + std::string(text);
        }
      }
      return true;
    }
    double seconds = 0.0;
    if (!ParseFloatToken(text, seconds) || !std::isfinite(seconds)) {
      Reject("timestamp '" + std::string(text) + "' is not a finite number of seconds");
      return false;
    }
    // Far-out times (the suite has 12345678901234567890.12) saturate instead of overflowing.
    ts = std::fabs(seconds) > 9e15 ? (seconds > 0 ? std::numeric_limits<std::int64_t>::max()
                                                  : std::numeric_limits<std::int64_t>::min() + 1)
                                   : std::llround(seconds * 1000.0);
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
    if (must_be_count && (value < 0 || (om_ && std::isnan(value)))) {
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
      // 0.0.4 (prometheus/common) takes any number; OpenMetrics wants [0, 1].
      if (qt.empty() || !ParseFloatToken(qt, q) || (om_ && !(q >= 0.0 && q <= 1.0))) {
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
      if (!st.has_inf && !om_) return true;  // 0.0.4 allows a histogram without +Inf bucket
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
  std::string cached_family_;
  std::string current_family_;  // the family of the last metadata line or sample
  bool current_has_samples_ = false;
  std::size_t label_scope_ = 0;
  bool quoted_ascii_ = true;  // the last ParseQuoted value was plain ASCII without escapes  // duplicate labels are looked for from here (exemplars)
  // OpenMetrics, within the current family:
  struct OmHistSeries {
    bool has_inf = false;
    bool has_sum = false;
    bool has_count = false;
    bool negative_bucket = false;
    bool negative_sum = false;
  };
  MetricType om_family_type_ = MetricType::kUnknown;
  std::unordered_map<std::uint64_t, OmHistSeries> om_hist_;
  std::unordered_map<std::uint64_t, bool> om_points_;  // name+labels text -> had a timestamp
  std::unordered_set<std::uint64_t> om_closed_series_;
  std::uint64_t om_current_series_ = 0;
  bool om_series_started_ = false;
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
