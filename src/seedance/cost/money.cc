#include "seedance/cost/money.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "seedance/core/check.h"

namespace seedance::cost {
namespace {

constexpr int kMicroDigits = 6;
constexpr int kMaxIntegerDigits = 12;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::int64_t Pow10(int n) {
  std::int64_t p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// "1234567" -> "1,234,567".
std::string GroupThousands(const std::string& digits) {
  std::string out;
  const std::size_t n = digits.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace

Result<Money> ParseUsd(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  auto bad = [&](std::string_view why) {
    std::string m = "expected a non-negative USD amount such as 2.85 (at most 6 decimals), got '" +
                    std::string(text) + "'";
    if (!why.empty()) m += ": " + std::string(why);
    return InvalidArgumentError(std::move(m));
  };
  const std::size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  const std::string_view frac =
      dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && frac.empty())) return bad("");
  for (char c : whole) {
    if (!IsDigit(c)) return bad("");
  }
  for (char c : frac) {
    if (!IsDigit(c)) return bad("");
  }
  if (whole.size() > kMaxIntegerDigits) return bad("too large");
  if (frac.size() > kMicroDigits) return bad("finer than a micro-dollar");
  std::int64_t micro = 0;
  for (char c : whole) micro = micro * 10 + (c - '0');
  std::int64_t f = 0;
  for (char c : frac) f = f * 10 + (c - '0');
  micro = micro * Pow10(kMicroDigits) + f * Pow10(kMicroDigits - static_cast<int>(frac.size()));
  return MicroUsd(micro);
}

std::string FormatUsd(Money m, int decimals) {
  SEEDANCE_CHECK(decimals >= 0 && decimals <= kMicroDigits) << "decimals " << decimals;
  SEEDANCE_CHECK(m.raw() != std::numeric_limits<std::int64_t>::min());
  const bool negative = m.raw() < 0;
  const std::int64_t abs = negative ? -m.raw() : m.raw();
  const std::int64_t step = Pow10(kMicroDigits - decimals);
  const std::int64_t rounded = (abs / step) + ((abs % step) * 2 >= step ? 1 : 0);
  const std::int64_t unit = Pow10(decimals);
  std::string out = (negative && rounded != 0) ? "-$" : "$";
  out += GroupThousands(std::to_string(rounded / unit));
  if (decimals > 0) {
    std::string frac = std::to_string(rounded % unit);
    out += '.';
    out.append(static_cast<std::size_t>(decimals) - frac.size(), '0');
    out += frac;
  }
  return out;
}

Money ScaleMoney(Money m, double factor) {
  SEEDANCE_CHECK(std::isfinite(factor)) << "factor " << factor;
  const double v = static_cast<double>(m.raw()) * factor;
  SEEDANCE_CHECK(std::abs(v) < 9.2e18) << "money overflow: " << v;
  return MicroUsd(std::llround(v));
}

}  // namespace seedance::cost
