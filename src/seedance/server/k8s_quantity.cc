#include "seedance/server/k8s_quantity.h"

#include <cctype>
#include <limits>
#include <string>

namespace seedance::server {
namespace {

__extension__ typedef __int128 Wide;  // exact intermediate products
constexpr Wide kLimit = static_cast<Wide>(std::numeric_limits<std::int64_t>::max());

Status Bad(std::string_view text, std::string_view why) {
  std::string m = "quantity '";
  m += text;
  m += "': ";
  m += why;
  return InvalidArgumentError(std::move(m));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<K8sQuantity> ParseK8sQuantity(std::string_view text) {
  if (text.empty()) return Bad(text, "empty");
  if (text.size() > 64) return Bad(text.substr(0, 64), "too long");
  std::size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') {
    negative = text[i] == '-';
    ++i;
  }
  Wide mant = 0;
  int exp10 = 0;
  int digits = 0;
  bool dot = false;
  for (; i < text.size() && (IsDigit(text[i]) || text[i] == '.'); ++i) {
    if (text[i] == '.') {
      if (dot) return Bad(text, "two decimal points");
      dot = true;
      continue;
    }
    const int d = text[i] - '0';
    if (mant == 0 && d == 0) {
      if (dot) --exp10;
      continue;  // leading zeros cost no precision
    }
    if (digits >= 18) {
      // Beyond int64's precision: only zeros may follow (their place value is kept).
      if (d != 0) return Bad(text, "too many significant digits");
      if (!dot) ++exp10;
      continue;
    }
    mant = mant * 10 + d;
    ++digits;
    if (dot) --exp10;
  }
  const std::size_t number_end = i;
  bool any_digit = false;
  for (std::size_t k = 0; k < number_end; ++k) any_digit = any_digit || IsDigit(text[k]);
  if (!any_digit) return Bad(text, "no digits");
  const std::string_view suffix = text.substr(i);
  int exp2 = 0;
  if (suffix.empty()) {
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    switch (suffix[0]) {
      case 'K': exp2 = 10; break;
      case 'M': exp2 = 20; break;
      case 'G': exp2 = 30; break;
      case 'T': exp2 = 40; break;
      case 'P': exp2 = 50; break;
      case 'E': exp2 = 60; break;
      default: return Bad(text, "unknown suffix");
    }
  } else if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'n': exp10 -= 9; break;
      case 'u': exp10 -= 6; break;
      case 'm': exp10 -= 3; break;
      case 'k': exp10 += 3; break;
      case 'M': exp10 += 6; break;
      case 'G': exp10 += 9; break;
      case 'T': exp10 += 12; break;
      case 'P': exp10 += 15; break;
      case 'E': exp10 += 18; break;
      default: return Bad(text, "unknown suffix");
    }
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::size_t k = 1;
    bool eneg = false;
    if (k < suffix.size() && (suffix[k] == '+' || suffix[k] == '-')) {
      eneg = suffix[k] == '-';
      ++k;
    }
    if (k == suffix.size()) return Bad(text, "exponent without digits");
    int e = 0;
    for (; k < suffix.size(); ++k) {
      if (!IsDigit(suffix[k])) return Bad(text, "bad exponent");
      e = e * 10 + (suffix[k] - '0');
      if (e > 1000) return Bad(text, "exponent out of range");
    }
    exp10 += eneg ? -e : e;
  } else {
    return Bad(text, "unknown suffix");
  }
  K8sQuantity q;
  q.mantissa = static_cast<std::int64_t>(negative ? -mant : mant);
  q.exp10 = exp10;
  q.exp2 = exp2;
  return q;
}

namespace {

// ceil(m * 10^e10 * 2^e2 / 2^shift) with overflow checks.
Result<std::int64_t> CeilExact(std::int64_t m, int e10, int e2) {
  if (m == 0) return std::int64_t{0};
  Wide num = m < 0 ? -static_cast<Wide>(m) : static_cast<Wide>(m);
  Wide den = 1;
  const bool negative = m < 0;
  auto mul = [](Wide& x, Wide by) {
    if (x > (kLimit * 1024) / by) return false;
    x *= by;
    return true;
  };
  for (; e10 > 0; --e10)
    if (!mul(num, 10)) return OutOfRangeError("quantity out of range");
  for (; e2 > 0; --e2)
    if (!mul(num, 2)) return OutOfRangeError("quantity out of range");
  for (; e10 < 0; ++e10) {
    if (den > kLimit * 1024) return std::int64_t{negative ? 0 : 1};  // tiny: rounds up to 1
    den *= 10;
  }
  for (; e2 < 0; ++e2) den *= 2;
  Wide q = num / den;
  const bool exact = q * den == num;
  if (!negative && !exact) ++q;  // ceil for positives; truncation is the ceil for negatives
  if (q > kLimit) return OutOfRangeError("quantity out of range");
  return static_cast<std::int64_t>(negative ? -q : q);
}

}  // namespace

Result<std::int64_t> K8sQuantity::CeilScaled(int scale10) const {
  return CeilExact(mantissa, exp10 + scale10, exp2);
}

Result<std::int64_t> K8sQuantity::CeilMebibytes() const {
  return CeilExact(mantissa, exp10, exp2 - 20);
}

}  // namespace seedance::server
