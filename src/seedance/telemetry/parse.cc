#include "seedance/telemetry/parse.h"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <iterator>

namespace seedance::telemetry {

Result<InputFormat> ParseInputFormat(std::string_view name) {
  if (name == "prom" || name == "prometheus") return InputFormat::kPrometheus;
  if (name == "openmetrics" || name == "om") return InputFormat::kOpenMetrics;
  if (name == "dcgm") return InputFormat::kDcgm;
  if (name == "otlp") return InputFormat::kOtlpJson;
  return InvalidArgumentError("unknown format '" + std::string(name) +
                              "' (accepted: prom, openmetrics, dcgm, otlp)");
}

std::string_view InputFormatName(InputFormat format) {
  switch (format) {
    case InputFormat::kPrometheus: return "prom";
    case InputFormat::kOpenMetrics: return "openmetrics";
    case InputFormat::kDcgm: return "dcgm";
    case InputFormat::kOtlpJson: return "otlp";
  }
  return "prom";
}

std::string Rejection::ToString() const {
  return source + ":" + std::to_string(line) + ": " + reason;
}

void ParseStats::Reject(std::string_view source, std::uint64_t line, std::string reason) {
  ++rejected;
  if (rejections.size() < kMaxKeptRejections) {
    rejections.push_back({std::string(source), line, std::move(reason)});
  }
}

void ParseStats::Merge(const ParseStats& other) {
  lines += other.lines;
  samples += other.samples;
  missing += other.missing;
  rejected += other.rejected;
  if (first_seconds_like.empty()) first_seconds_like = other.first_seconds_like;
  seconds_like_timestamps += other.seconds_like_timestamps;
  for (const Rejection& r : other.rejections) {
    if (rejections.size() >= kMaxKeptRejections) break;
    rejections.push_back(r);
  }
}

void ParseText(InputFormat format, std::string_view text, const ParseOptions& options,
               SampleSink& sink, ParseStats& stats) {
  if (format == InputFormat::kOtlpJson) {
    ParseOtlpJson(text, options, sink, stats);
    return;
  }
  ExpositionParser parser(format, options, sink, stats);
  parser.Feed(text);
  parser.Finish();
}

Status ParseStream(InputFormat format, std::istream& in, const ParseOptions& options,
                   SampleSink& sink, ParseStats& stats) {
  if (format == InputFormat::kOtlpJson) {
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) return UnavailableError(options.source + ": read error");
    ParseOtlpJson(all, options, sink, stats);
    return Status::Ok();
  }
  ExpositionParser parser(format, options, sink, stats);
  std::string buf(1 << 16, '\0');
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    std::streamsize n = in.gcount();
    if (n > 0) parser.Feed(std::string_view(buf.data(), static_cast<std::size_t>(n)));
  }
  if (in.bad()) return UnavailableError(options.source + ": read error");
  parser.Finish();
  return Status::Ok();
}

std::string FormatTimestamp(std::int64_t unix_ms) {
  using namespace std::chrono;  // NOLINT(google-build-using-namespace)
  std::int64_t secs = unix_ms >= 0 ? unix_ms / 1000 : -((-unix_ms + 999) / 1000);
  std::int64_t frac = unix_ms - secs * 1000;
  sys_seconds tp{seconds{secs}};
  sys_days day = floor<days>(tp);
  year_month_day ymd{day};
  hh_mm_ss<seconds> hms{tp - day};
  char buf[48];
  int n = std::snprintf(buf, sizeof(buf), "%04d-%02u-%02uT%02d:%02d:%02d", int(ymd.year()),
                        unsigned(ymd.month()), unsigned(ymd.day()),
                        static_cast<int>(hms.hours().count()),
                        static_cast<int>(hms.minutes().count()),
                        static_cast<int>(hms.seconds().count()));
  std::string out(buf, static_cast<std::size_t>(n));
  if (frac != 0) {
    std::snprintf(buf, sizeof(buf), ".%03d", static_cast<int>(frac));
    out += buf;
  }
  out += 'Z';
  return out;
}

Result<std::int64_t> ParseTimestamp(std::string_view text) {
  auto bad = [&] {
    return InvalidArgumentError("bad time '" + std::string(text) +
                                "' (expected 2026-11-29T10:00:00Z, 2026-11-29 or Unix seconds)");
  };
  if (text.empty()) return bad();
  if (text.find('-') == std::string_view::npos || text.find('-') == 0) {
    std::int64_t secs = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), secs);
    if (ec != std::errc() || p != text.data() + text.size()) return bad();
    return secs * 1000;
  }
  auto num = [&](std::size_t pos, std::size_t len, int& out) {
    if (pos + len > text.size()) return false;
    auto [p, ec] = std::from_chars(text.data() + pos, text.data() + pos + len, out);
    return ec == std::errc() && p == text.data() + pos + len;
  };
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0, ms = 0;
  if (!num(0, 4, y) || text.size() < 10 || text[4] != '-' || !num(5, 2, mo) || text[7] != '-' ||
      !num(8, 2, d)) {
    return bad();
  }
  if (text.size() > 10) {
    if (text.size() < 20 || text[10] != 'T' || text[13] != ':' || text[16] != ':' ||
        !num(11, 2, h) || !num(14, 2, mi) || !num(17, 2, s) || text.back() != 'Z') {
      return bad();
    }
    std::string_view rest = text.substr(19, text.size() - 20);
    if (!rest.empty()) {
      if (rest[0] != '.' || rest.size() < 2 || rest.size() > 10) return bad();
      std::string digits(rest.substr(1));
      digits.resize(3, '0');
      auto [p, ec] = std::from_chars(digits.data(), digits.data() + 3, ms);
      if (ec != std::errc() || p != digits.data() + 3) return bad();
    }
  }
  using namespace std::chrono;  // NOLINT(google-build-using-namespace)
  year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 60) return bad();
  std::int64_t days_since = sys_days(ymd).time_since_epoch().count();
  return ((days_since * 86400 + h * 3600 + mi * 60 + s) * 1000) + ms;
}

}  // namespace seedance::telemetry
