#include "seedance/server/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <mutex>

#include "seedance/core/check.h"

namespace seedance::server {
namespace {

enum class Kind : std::uint8_t { kCounter, kGauge, kHistogram };

std::string_view KindName(Kind k) {
  switch (k) {
    case Kind::kCounter: return "counter";
    case Kind::kGauge: return "gauge";
    case Kind::kHistogram: return "histogram";
  }
  return "untyped";
}

struct Series {
  double value = 0;                   // counter, gauge
  std::vector<std::uint64_t> counts;  // histogram: per bucket (not cumulative), last = +Inf
  double sum = 0;
  std::uint64_t count = 0;
};

struct Family {
  Kind kind = Kind::kCounter;
  std::string help;
  std::vector<double> bounds;
  std::map<Labels, Series> series;  // sorted by labels: a deterministic order
};

// A float as Prometheus text writes it: integers without a fraction, +Inf, -Inf, NaN.
void AppendNumber(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void AppendEscaped(std::string& out, std::string_view text, bool quote) {
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

// `{a="x",b="y"}` plus an optional extra label (le) last; nothing for no labels.
void AppendLabels(std::string& out, const Labels& labels, std::string_view extra_name = {},
                  std::string_view extra_value = {}) {
  if (labels.empty() && extra_name.empty()) return;
  out += '{';
  bool first = true;
  auto one = [&](std::string_view n, std::string_view v) {
    if (!first) out += ',';
    first = false;
    out += n;
    out += "=\"";
    AppendEscaped(out, v, true);
    out += '"';
  };
  for (const auto& [n, v] : labels) one(n, v);
  if (!extra_name.empty()) one(extra_name, extra_value);
  out += '}';
}

}  // namespace

class Metrics::Impl {
 public:
  void Declare(std::string name, std::string help, Kind kind, std::vector<double> bounds) {
    std::lock_guard lock(mu);
    auto it = families.find(name);
    if (it != families.end()) {
      SEEDANCE_CHECK(it->second.kind == kind) << "metric " << name << " declared as two types";
      return;
    }
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    if (!bounds.empty() && std::isinf(bounds.back())) bounds.pop_back();  // +Inf is implicit
    families.emplace(std::move(name), Family{kind, std::move(help), std::move(bounds), {}});
  }

  // The family `name` of kind `kind`, or nullptr (undeclared or another kind: the call is
  // ignored, a metric never takes the server down). REQUIRES: mu held.
  Family* Find(std::string_view name, Kind kind) {
    auto it = families.find(name);
    if (it == families.end() || it->second.kind != kind) return nullptr;
    return &it->second;
  }

  // The series of `f` for `labels`, created when absent, or nullptr when the family already has
  // kMaxSeries series (labels that come from requests cannot grow it without bound; the drop is
  // counted). REQUIRES: mu held.
  Series* SeriesOf(Family& f, const Labels& labels) {
    auto it = f.series.find(labels);
    if (it != f.series.end()) return &it->second;
    if (f.series.size() >= kMaxSeries) {
      ++dropped;
      return nullptr;
    }
    return &f.series[labels];
  }

  static constexpr std::size_t kMaxSeries = 10'000;
  mutable std::mutex mu;
  std::map<std::string, Family, std::less<>> families;
  std::uint64_t dropped = 0;
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;

void Metrics::DeclareCounter(std::string name, std::string help) {
  impl_->Declare(std::move(name), std::move(help), Kind::kCounter, {});
}
void Metrics::DeclareGauge(std::string name, std::string help) {
  impl_->Declare(std::move(name), std::move(help), Kind::kGauge, {});
}
void Metrics::DeclareHistogram(std::string name, std::string help, std::vector<double> bounds) {
  impl_->Declare(std::move(name), std::move(help), Kind::kHistogram, std::move(bounds));
}

void Metrics::Inc(std::string_view name, const Labels& labels, double by) {
  std::lock_guard lock(impl_->mu);
  Family* f = impl_->Find(name, Kind::kCounter);
  if (f == nullptr) f = impl_->Find(name, Kind::kGauge);
  if (f == nullptr) return;
  if (f->kind == Kind::kCounter && !(by >= 0)) return;  // counters only go up
  if (Series* series = impl_->SeriesOf(*f, labels)) series->value += by;
}

void Metrics::Set(std::string_view name, const Labels& labels, double value) {
  std::lock_guard lock(impl_->mu);
  Family* f = impl_->Find(name, Kind::kGauge);
  if (f == nullptr) return;
  if (Series* series = impl_->SeriesOf(*f, labels)) series->value = value;
}

void Metrics::Observe(std::string_view name, const Labels& labels, double value) {
  std::lock_guard lock(impl_->mu);
  Family* f = impl_->Find(name, Kind::kHistogram);
  if (f == nullptr || std::isnan(value)) return;
  Series* series = impl_->SeriesOf(*f, labels);
  if (series == nullptr) return;
  Series& s = *series;
  if (s.counts.empty()) s.counts.assign(f->bounds.size() + 1, 0);
  const auto bucket = std::lower_bound(f->bounds.begin(), f->bounds.end(), value) - f->bounds.begin();
  ++s.counts[static_cast<std::size_t>(bucket)];
  s.sum += value;
  ++s.count;
}

double Metrics::Value(std::string_view name, const Labels& labels) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->families.find(name);
  if (it == impl_->families.end()) return 0;
  auto s = it->second.series.find(labels);
  if (s == it->second.series.end()) return 0;
  return it->second.kind == Kind::kHistogram ? static_cast<double>(s->second.count) : s->second.value;
}

std::string Metrics::Render() const {
  std::lock_guard lock(impl_->mu);
  std::string out;
  out.reserve(4096);
  for (const auto& [name, f] : impl_->families) {
    out += "# HELP ";
    out += name;
    out += ' ';
    AppendEscaped(out, f.help, false);
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += KindName(f.kind);
    out += '\n';
    for (const auto& [labels, s] : f.series) {
      if (f.kind != Kind::kHistogram) {
        out += name;
        AppendLabels(out, labels);
        out += ' ';
        AppendNumber(out, s.value);
        out += '\n';
        continue;
      }
      std::uint64_t cumulative = 0;
      for (std::size_t i = 0; i < s.counts.size(); ++i) {
        cumulative += s.counts[i];
        std::string le;
        if (i < f.bounds.size()) {
          AppendNumber(le, f.bounds[i]);
        } else {
          le = "+Inf";
        }
        out += name;
        out += "_bucket";
        AppendLabels(out, labels, "le", le);
        out += ' ';
        AppendNumber(out, static_cast<double>(cumulative));
        out += '\n';
      }
      for (auto [suffix, v] : {std::pair<std::string_view, double>{"_sum", s.sum},
                               std::pair<std::string_view, double>{"_count", static_cast<double>(s.count)}}) {
        out += name;
        out += suffix;
        AppendLabels(out, labels);
        out += ' ';
        AppendNumber(out, v);
        out += '\n';
      }
    }
  }
  if (impl_->dropped > 0) {
    out += "# HELP seedance_metrics_series_dropped_total Updates dropped because their family had ";
    out += std::to_string(Impl::kMaxSeries);
    out += " series already.\n# TYPE seedance_metrics_series_dropped_total counter\n";
    out += "seedance_metrics_series_dropped_total ";
    AppendNumber(out, static_cast<double>(impl_->dropped));
    out += '\n';
  }
  return out;
}

}  // namespace seedance::server
