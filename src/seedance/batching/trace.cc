#include "seedance/batching/trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "seedance/core/csv.h"
#include "seedance/core/rng.h"

namespace seedance::batching {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t DaysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? static_cast<unsigned>(-3) : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool ReadInt(std::string_view s, std::size_t pos, std::size_t len, int* out) {
  if (pos + len > s.size()) return false;
  const char* b = s.data() + pos;
  auto [p, ec] = std::from_chars(b, b + len, *out);
  return ec == std::errc() && p == b + len;
}

Trace Finish(std::string name, std::vector<Request> reqs) {
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
  const double t0 = reqs.empty() ? 0 : reqs.front().arrival_s;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    reqs[i].id = static_cast<std::uint32_t>(i);
    reqs[i].arrival_s -= t0;
  }
  return Trace{std::move(name), std::move(reqs)};
}

Result<Trace> FromTable(const CsvTable& t) {
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t ts, t.ColumnIndex("TIMESTAMP"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t ctx, t.ColumnIndex("ContextTokens"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t gen, t.ColumnIndex("GeneratedTokens"));
  const std::ptrdiff_t qos = t.FindColumn("qos");
  const std::ptrdiff_t tenant = t.FindColumn("tenant");
  std::vector<Request> reqs;
  reqs.reserve(t.rows().size());
  bool epoch_format = false;  // the first row's format; every row must use it
  for (const auto& row : t.rows()) {
    Request r;
    r.line = row.line;
    bool epoch = false;
    auto time = ParseTraceTime(t.Str(row, ts), &epoch);
    if (!time.has_value()) return t.FieldError(row, ts, time.error().message());
    if (reqs.empty()) {
      epoch_format = epoch;
    } else if (epoch != epoch_format) {
      return t.FieldError(row, ts, fmt::format("mixes {} with the {} of the first row", epoch ? "Unix-epoch seconds" : "a date",
                                               epoch_format ? "Unix-epoch seconds" : "dates"));
    }
    r.arrival_s = *time;
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t p, t.Int(row, ctx));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t o, t.Int(row, gen));
    if (p < 1) return t.FieldError(row, ctx, fmt::format("must be >= 1, got {}", p));
    if (o < 1) return t.FieldError(row, gen, fmt::format("must be >= 1, got {}", o));
    if (p > 10'000'000) return t.FieldError(row, ctx, "must be <= 10000000");
    if (o > 10'000'000) return t.FieldError(row, gen, "must be <= 10000000");
    r.prompt = static_cast<std::int32_t>(p);
    r.output = static_cast<std::int32_t>(o);
    if (qos >= 0) {
      auto q = ParseQos(t.Str(row, static_cast<std::size_t>(qos)));
      if (!q.has_value()) return t.FieldError(row, static_cast<std::size_t>(qos), q.error().message());
      r.qos = *q;
    }
    if (tenant >= 0) {
      SEEDANCE_ASSIGN_OR_RETURN(std::int64_t v, t.Int(row, static_cast<std::size_t>(tenant)));
      if (v < 0 || v > 65535) {
        return t.FieldError(row, static_cast<std::size_t>(tenant), "must be in 0..65535");
      }
      r.tenant = static_cast<std::uint16_t>(v);
    }
    reqs.push_back(r);
  }
  if (reqs.empty()) return InvalidArgumentError(t.name() + ": no requests");
  return Finish(t.name(), std::move(reqs));
}

Result<Trace> FromLengthsTable(const CsvTable& t) {
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t pre, t.ColumnIndex("num_prefill_tokens"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t dec, t.ColumnIndex("num_decode_tokens"));
  std::vector<Request> reqs;
  reqs.reserve(t.rows().size());
  for (const auto& row : t.rows()) {
    Request r;
    r.line = row.line;
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t p, t.Int(row, pre));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t o, t.Int(row, dec));
    if (p < 1 || p > 10'000'000) return t.FieldError(row, pre, fmt::format("must be in 1..10000000, got {}", p));
    if (o < 1 || o > 10'000'000) return t.FieldError(row, dec, fmt::format("must be in 1..10000000, got {}", o));
    r.prompt = static_cast<std::int32_t>(p);
    r.output = static_cast<std::int32_t>(o);
    reqs.push_back(r);
  }
  if (reqs.empty()) return InvalidArgumentError(t.name() + ": no requests");
  return Finish(t.name(), std::move(reqs));
}

}  // namespace

Result<Trace> LoadLengthsTrace(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  return FromLengthsTable(t);
}

Result<Trace> ParseLengthsTrace(std::string name, std::string text) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(std::move(name), std::move(text)));
  return FromLengthsTable(t);
}

Result<Trace> LoadAnyTrace(const std::string& path, bool* lengths_only) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  *lengths_only = t.FindColumn("TIMESTAMP") < 0 && t.FindColumn("num_prefill_tokens") >= 0;
  return *lengths_only ? FromLengthsTable(t) : FromTable(t);
}

std::string_view QosName(QosClass q) {
  switch (q) {
    case QosClass::kGuaranteed: return "guaranteed";
    case QosClass::kBurstable: return "burstable";
    case QosClass::kBestEffort: return "best-effort";
  }
  return "?";
}

Result<QosClass> ParseQos(std::string_view name) {
  for (QosClass q : {QosClass::kGuaranteed, QosClass::kBurstable, QosClass::kBestEffort}) {
    if (QosName(q) == name) return q;
  }
  return InvalidArgumentError(fmt::format(
      "unknown qos '{}' (accepted: guaranteed, burstable, best-effort)", name));
}

double Trace::Span() const {
  return requests.empty() ? 0 : requests.back().arrival_s - requests.front().arrival_s;
}

Result<double> ParseTimestamp(std::string_view s) {
  // YYYY-MM-DD HH:MM:SS[.fraction]
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  const bool ok = s.size() >= 19 && ReadInt(s, 0, 4, &y) && s[4] == '-' && ReadInt(s, 5, 2, &mo) &&
                  s[7] == '-' && ReadInt(s, 8, 2, &d) && (s[10] == ' ' || s[10] == 'T') &&
                  ReadInt(s, 11, 2, &h) && s[13] == ':' && ReadInt(s, 14, 2, &mi) &&
                  s[16] == ':' && ReadInt(s, 17, 2, &se);
  if (!ok || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) {
    return InvalidArgumentError(
        fmt::format("expected a timestamp like 2023-11-16 18:15:46.6805900, got '{}'", s));
  }
  double frac = 0;
  if (s.size() > 19) {
    if (s[19] != '.' || s.size() == 20) {
      return InvalidArgumentError(fmt::format("bad fractional seconds in '{}'", s));
    }
    double scale = 0.1;
    for (std::size_t i = 20; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') {
        return InvalidArgumentError(fmt::format("bad fractional seconds in '{}'", s));
      }
      frac += (s[i] - '0') * scale;
      scale /= 10;
    }
  }
  const std::int64_t days =
      DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return static_cast<double>(days * 86400 + h * 3600 + mi * 60 + se) + frac;
}

Result<double> ParseTraceTime(std::string_view s, bool* epoch) {
  *epoch = false;
  // Unix-epoch seconds: digits with an optional fraction (no sign, no exponent).
  const bool numeric = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
  if (numeric && s.find('-') == std::string_view::npos) {
    double v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) {
      return InvalidArgumentError(fmt::format("expected Unix-epoch seconds like 1700158546.68, got '{}'", s));
    }
    *epoch = true;
    return v;
  }
  auto t = ParseTimestamp(s);
  if (!t.has_value()) {
    return InvalidArgumentError(fmt::format(
        "expected a timestamp like 2023-11-16 18:15:46.6805900 or Unix-epoch seconds like 1700158546.68, got '{}'", s));
  }
  return t;
}

Result<Trace> LoadAzureTrace(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  return FromTable(t);
}

Result<Trace> ParseAzureTrace(std::string name, std::string text) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(std::move(name), std::move(text)));
  return FromTable(t);
}

Trace ScaleRate(const Trace& t, double scale) {
  SEEDANCE_CHECK(scale > 0);
  Trace out = t;
  for (auto& r : out.requests) r.arrival_s /= scale;
  if (scale != 1) out.name = fmt::format("{} x{:g}", t.name, scale);
  return out;
}

std::string_view TracePartName(TracePart p) {
  switch (p) {
    case TracePart::kAll: return "all";
    case TracePart::kTuning: return "tuning";
    case TracePart::kHeldOut: return "held-out";
  }
  return "all";
}

Result<TracePart> ParseTracePart(std::string_view name) {
  for (TracePart p : {TracePart::kAll, TracePart::kTuning, TracePart::kHeldOut}) {
    if (TracePartName(p) == name) return p;
  }
  return InvalidArgumentError(
      fmt::format("unknown trace part '{}' (accepted: all, tuning, held-out)", name));
}

Trace SelectTracePart(const Trace& t, TracePart part) {
  if (part == TracePart::kAll) return t;
  const auto half = static_cast<std::ptrdiff_t>(t.requests.size() / 2);
  const bool tuning = part == TracePart::kTuning;
  std::vector<Request> reqs(tuning ? t.requests.begin() : t.requests.begin() + half,
                            tuning ? t.requests.begin() + half : t.requests.end());
  return Finish(fmt::format("{} ({} half)", t.name, tuning ? "tuning, first" : "held-out, second"),
                std::move(reqs));
}

Trace PoissonTrace(const Trace& lengths, double rate_rps, std::size_t count, std::uint64_t seed) {
  SEEDANCE_CHECK(rate_rps > 0 && !lengths.requests.empty());
  Rng rng(seed);
  std::vector<Request> reqs;
  reqs.reserve(count);
  double now = 0;
  for (std::size_t i = 0; i < count; ++i) {
    now += rng.Exponential(rate_rps);
    const Request& src = lengths.requests[rng.Uniform(lengths.requests.size())];
    Request r = src;
    r.arrival_s = now;
    r.line = 0;
    reqs.push_back(r);
  }
  std::vector<Request> sorted = std::move(reqs);
  Trace t = Finish(fmt::format("poisson {:g} req/s from {} (seed {})", rate_rps, lengths.name, seed),
                   std::move(sorted));
  // Keep absolute arrivals (the first one is not at 0 in a Poisson process).
  return t;
}

Trace MultiTenantMix(const Trace& base, std::uint64_t seed) {
  Rng rng(seed);
  Trace out = base;
  out.name = base.name + " (multi-tenant mix)";
  for (auto& r : out.requests) {
    const double u = rng.UniformDouble();
    if (u < 0.20) {
      r.qos = QosClass::kGuaranteed;
      r.tenant = 0;
    } else if (u < 0.50) {
      r.qos = QosClass::kBurstable;
      r.tenant = 1;
    } else {
      r.qos = QosClass::kBestEffort;
      r.tenant = u < 0.75 ? 2 : 3;
    }
  }
  return out;
}

}  // namespace seedance::batching
