#include "seedance/sim/spot_price.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace seedance::sim {
namespace {

constexpr double kMaxUsdPerGpuHour = 1000;  // a typo guard, as the fleet file's prices

// Days from 1970-01-01 to y-m-d (proleptic Gregorian; Howard Hinnant's days_from_civil).
long long DaysFromCivil(int y, int m, int d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const long long yoe = y - era * 400;
  const long long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool Digits(const std::string& s, std::size_t at, std::size_t n, int* out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

std::optional<double> Number(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  double v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

// Makes the series from (time, price) rows sorted by time, shifting times to start at 0.
PriceSeries FromSorted(const std::vector<PriceSeries::Point>& rows, std::optional<double> origin) {
  std::vector<PriceSeries::Point> pts;
  for (const auto& r : rows) pts.push_back({r.t_s - rows.front().t_s, r.usd_per_gpu_hour});
  return PriceSeries(std::move(pts), origin);
}

Result<PriceSeries> LoadCsv(const std::string& path, const std::string& text) {
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  bool header = false;
  int wall_clock = -1;  // unknown, 0 = seconds, 1 = RFC 3339
  std::vector<PriceSeries::Point> rows;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string trimmed = Trim(line);
    if (trimmed.empty() || trimmed[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    const auto comma = trimmed.find(',');
    if (!header) {
      if (comma == std::string::npos || Trim(trimmed.substr(0, comma)) != "time" ||
          Trim(trimmed.substr(comma + 1)) != "usd_per_gpu_hour") {
        return InvalidArgumentError(where + "expected the header 'time,usd_per_gpu_hour'");
      }
      header = true;
      continue;
    }
    if (comma == std::string::npos || trimmed.find(',', comma + 1) != std::string::npos) {
      return InvalidArgumentError(where + "expected 2 fields (time,usd_per_gpu_hour)");
    }
    const std::string t_text = Trim(trimmed.substr(0, comma));
    const std::string p_text = Trim(trimmed.substr(comma + 1));
    double t = 0;
    if (auto secs = Number(t_text)) {
      if (wall_clock == 1) {
        return InvalidArgumentError(where + "field 'time': '" + t_text +
                                    "' is seconds, the rows above are RFC 3339 times: use one form");
      }
      wall_clock = 0;
      t = *secs;
      if (rows.empty() && t != 0) {
        return InvalidArgumentError(where + "field 'time': the first row must be at 0 s (seconds from the start)");
      }
    } else if (auto unix = ParseRfc3339(t_text)) {
      if (wall_clock == 0) {
        return InvalidArgumentError(where + "field 'time': '" + t_text +
                                    "' is an RFC 3339 time, the rows above are seconds: use one form");
      }
      wall_clock = 1;
      t = *unix;
    } else {
      return InvalidArgumentError(where + "field 'time': '" + t_text +
                                  "' is neither seconds from the start nor an RFC 3339 time (2026-12-01T00:00:00Z)");
    }
    if (!rows.empty() && !(t > rows.back().t_s)) {
      return InvalidArgumentError(where + "field 'time': '" + t_text + "' is not after the row above");
    }
    const auto price = Number(p_text);
    if (!price || !(*price > 0) || *price > kMaxUsdPerGpuHour) {
      return InvalidArgumentError(where + "field 'usd_per_gpu_hour': '" + p_text + "' is not a price in (0, " +
                                  std::to_string(static_cast<int>(kMaxUsdPerGpuHour)) + "]");
    }
    rows.push_back({t, *price});
  }
  if (!header) return InvalidArgumentError(path + ": empty; expected the header 'time,usd_per_gpu_hour' and rows");
  if (rows.empty()) return InvalidArgumentError(path + ": no rows after the header");
  return FromSorted(rows, wall_clock == 1 ? std::optional<double>(rows.front().t_s) : std::nullopt);
}

Result<PriceSeries> LoadAws(const std::string& path, const std::string& text, int gpus_per_instance,
                            const AwsPriceFilter& filter) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return InvalidArgumentError(path + ": not a JSON object");
  if (!doc.contains("SpotPriceHistory") || !doc["SpotPriceHistory"].is_array()) {
    return InvalidArgumentError(path + ": field 'SpotPriceHistory': missing or not an array "
                                "(expected `aws ec2 describe-spot-price-history` output)");
  }
  const auto& hist = doc["SpotPriceHistory"];
  std::vector<PriceSeries::Point> rows;
  std::set<std::string> types, zones, products;
  for (std::size_t i = 0; i < hist.size(); ++i) {
    const std::string at = path + ": field 'SpotPriceHistory[" + std::to_string(i) + "].";
    const auto& r = hist[i];
    if (!r.is_object()) return InvalidArgumentError(path + ": field 'SpotPriceHistory[" + std::to_string(i) + "]': not an object");
    const auto str = [&](const char* key, bool required) -> Result<std::string> {
      if (!r.contains(key)) {
        if (!required) return std::string();
        return InvalidArgumentError(at + key + "': missing");
      }
      if (!r[key].is_string()) return InvalidArgumentError(at + key + "': not a string");
      return r[key].get<std::string>();
    };
    SEEDANCE_ASSIGN_OR_RETURN(std::string type, str("InstanceType", false));
    SEEDANCE_ASSIGN_OR_RETURN(std::string zone, str("AvailabilityZone", false));
    SEEDANCE_ASSIGN_OR_RETURN(std::string product, str("ProductDescription", false));
    if (!filter.instance_type.empty() && type != filter.instance_type) continue;
    if (!filter.availability_zone.empty() && zone != filter.availability_zone) continue;
    if (!filter.product_description.empty() && product != filter.product_description) continue;
    SEEDANCE_ASSIGN_OR_RETURN(std::string ts, str("Timestamp", true));
    const auto unix = ParseRfc3339(ts);
    if (!unix) return InvalidArgumentError(at + "Timestamp': '" + ts + "' is not an RFC 3339 time");
    if (!r.contains("SpotPrice")) return InvalidArgumentError(at + "SpotPrice': missing");
    std::optional<double> price;
    if (r["SpotPrice"].is_string()) price = Number(r["SpotPrice"].get<std::string>());
    if (r["SpotPrice"].is_number()) price = r["SpotPrice"].get<double>();
    if (!price || !(*price > 0) || *price / gpus_per_instance > kMaxUsdPerGpuHour) {
      return InvalidArgumentError(at + "SpotPrice': " + r["SpotPrice"].dump() + " is not a price in (0, " +
                                  std::to_string(static_cast<int>(kMaxUsdPerGpuHour)) + "] per GPU-hour");
    }
    types.insert(type);
    zones.insert(zone);
    products.insert(product);
    rows.push_back({*unix, *price / gpus_per_instance});
  }
  const auto one = [&path](const std::set<std::string>& values, const char* what, const char* key) -> Status {
    if (values.size() <= 1) return Status::Ok();
    std::string list;
    for (const auto& v : values) list += (list.empty() ? "" : ", ") + (v.empty() ? "(none)" : v);
    return InvalidArgumentError(path + ": the price history holds " + std::to_string(values.size()) + " " + what +
                                " (" + list + "): choose one with the spot pool's '" + key + "'");
  };
  SEEDANCE_RETURN_IF_ERROR(one(types, "instance types", "instance_type"));
  SEEDANCE_RETURN_IF_ERROR(one(zones, "availability zones", "availability_zone"));
  SEEDANCE_RETURN_IF_ERROR(one(products, "product descriptions", "product_description"));
  if (rows.empty()) {
    return InvalidArgumentError(path + ": field 'SpotPriceHistory': no rows" +
                                (filter.instance_type.empty() && filter.availability_zone.empty() &&
                                         filter.product_description.empty()
                                     ? std::string()
                                     : std::string(" match the pool's instance_type / availability_zone / "
                                                   "product_description")));
  }
  // AWS lists the newest first; any order is read.
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.t_s < b.t_s; });
  for (std::size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].t_s == rows[i - 1].t_s) {
      return InvalidArgumentError(path + ": field 'SpotPriceHistory': two prices at the same Timestamp (" +
                                  std::to_string(static_cast<long long>(rows[i].t_s)) + " s after the epoch)");
    }
  }
  return FromSorted(rows, rows.front().t_s);
}

}  // namespace

PriceSeries::PriceSeries(std::vector<Point> points, std::optional<double> origin_unix_s)
    : points_(std::move(points)), origin_unix_s_(origin_unix_s) {}

std::size_t PriceSeries::IndexAt(double t) const {
  const auto it = std::upper_bound(points_.begin(), points_.end(), t,
                                   [](double x, const Point& p) { return x < p.t_s; });
  return it == points_.begin() ? 0 : static_cast<std::size_t>(it - points_.begin()) - 1;
}

double PriceSeries::At(double t) const { return points_.empty() ? 0 : points_[IndexAt(t)].usd_per_gpu_hour; }

double PriceSeries::UsdPerGpu(double t0, double t1) const {
  if (points_.empty() || !(t1 > t0)) return 0;
  double usd = 0;
  for (std::size_t i = IndexAt(t0); i < points_.size(); ++i) {
    const double s = std::max(t0, i == 0 ? t0 : points_[i].t_s);
    const double e = i + 1 < points_.size() ? std::min(t1, points_[i + 1].t_s) : t1;
    if (e > s) usd += (e - s) * points_[i].usd_per_gpu_hour;
    if (e >= t1) break;
  }
  return usd / 3600.0;
}

double PriceSeries::MinOver(double t0, double t1) const {
  if (points_.empty()) return 0;
  double lo = At(t0);
  for (std::size_t i = IndexAt(t0) + 1; i < points_.size() && points_[i].t_s < t1; ++i) {
    lo = std::min(lo, points_[i].usd_per_gpu_hour);
  }
  return lo;
}

double PriceSeries::Min() const {
  double lo = points_.empty() ? 0 : points_[0].usd_per_gpu_hour;
  for (const auto& p : points_) lo = std::min(lo, p.usd_per_gpu_hour);
  return lo;
}

double PriceSeries::Max() const {
  double hi = 0;
  for (const auto& p : points_) hi = std::max(hi, p.usd_per_gpu_hour);
  return hi;
}

std::optional<double> ParseRfc3339(const std::string& s) {
  int y, mo, d, h, mi, sec;
  if (!Digits(s, 0, 4, &y) || s.size() < 19 || s[4] != '-' || !Digits(s, 5, 2, &mo) || s[7] != '-' ||
      !Digits(s, 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !Digits(s, 11, 2, &h) ||
      s[13] != ':' || !Digits(s, 14, 2, &mi) || s[16] != ':' || !Digits(s, 17, 2, &sec)) {
    return std::nullopt;
  }
  static constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] || (mo == 2 && d == 29 && !leap) || h > 23 || mi > 59 ||
      sec > 60) {
    return std::nullopt;
  }
  std::size_t i = 19;
  double frac = 0;
  if (i < s.size() && s[i] == '.') {
    double scale = 0.1;
    ++i;
    const std::size_t first = i;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i, scale /= 10) frac += (s[i] - '0') * scale;
    if (i == first) return std::nullopt;
  }
  double offset_s = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh, om;
    if (!Digits(s, i + 1, 2, &oh) || i + 3 >= s.size() || s[i + 3] != ':' || !Digits(s, i + 4, 2, &om) || oh > 23 ||
        om > 59) {
      return std::nullopt;
    }
    offset_s = (s[i] == '+' ? 1 : -1) * (oh * 3600.0 + om * 60.0);
    i += 6;
  } else {
    return std::nullopt;  // RFC 3339 requires the offset
  }
  if (i != s.size()) return std::nullopt;
  return static_cast<double>(DaysFromCivil(y, mo, d)) * 86400.0 + h * 3600.0 + mi * 60.0 + sec + frac - offset_s;
}

Result<PriceSeries> LoadPriceSeries(const std::string& path, int gpus_per_instance, const AwsPriceFilter& filter) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open price series");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::size_t b = 0;
  while (b < text.size() && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  if (b < text.size() && text[b] == '{') return LoadAws(path, text, std::max(1, gpus_per_instance), filter);
  return LoadCsv(path, text);
}

}  // namespace seedance::sim
