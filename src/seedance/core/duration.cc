#include "seedance/core/duration.h"

#include <charconv>
#include <cmath>
#include <string>

namespace seedance {

Result<double> ParseDurationSeconds(std::string_view text) {
  // The number ends at the first character no number has (an exponent's 'e' belongs to it).
  const std::size_t unit_at = text.find_first_not_of("0123456789.+-eE");
  const std::string_view number = text.substr(0, unit_at);
  double scale = 1;
  if (unit_at != std::string_view::npos && unit_at > 0) {
    struct Unit {
      std::string_view suffix;
      double seconds;
    };
    static constexpr Unit kUnits[] = {{"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
    const std::string_view unit = text.substr(unit_at);
    scale = 0;
    for (const auto& u : kUnits) {
      if (u.suffix == unit) scale = u.seconds;
    }
    if (scale == 0) {
      std::string message = "unknown unit '";
      message += unit;
      message += "' (allowed: us, ms, s, m, h, d)";
      return InvalidArgumentError(message);
    }
  }
  double v = 0;
  // from_chars takes no leading '+'.
  const std::string_view digits = !number.empty() && number.front() == '+' ? number.substr(1) : number;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size() || !std::isfinite(v)) {
    return InvalidArgumentError("not a duration (" + std::string(kDurationExample) + ")");
  }
  if (unit_at == std::string_view::npos && v != 0) {
    return InvalidArgumentError("a number needs a unit (write " + std::string(kDurationExample) +
                                "; units: us, ms, s, m, h, d)");
  }
  return v * scale;
}

}  // namespace seedance
