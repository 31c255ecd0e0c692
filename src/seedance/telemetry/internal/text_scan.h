#pragma once

#include <charconv>
#include <cmath>
#include <string_view>

// Character classes and number parsing shared by the telemetry parsers. Private to the module.
namespace seedance::telemetry::internal {

inline bool IsMetricNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
}
inline bool IsMetricNameChar(char c) { return IsMetricNameStart(c) || (c >= '0' && c <= '9'); }
inline bool IsLabelNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool IsLabelNameChar(char c) { return IsLabelNameStart(c) || (c >= '0' && c <= '9'); }

inline bool IsValidMetricName(std::string_view s) {
  if (s.empty() || !IsMetricNameStart(s[0])) return false;
  for (char c : s) {
    if (!IsMetricNameChar(c)) return false;
  }
  return true;
}

inline bool EqualsAsciiNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    if (x != b[i]) return false;
  }
  return true;
}

// Parses a Go ParseFloat-style token: decimal or exponent notation, an optional sign, and the
// case-insensitive words NaN, Inf, Infinity (with an optional sign). The whole token must match.
inline bool ParseFloatToken(std::string_view text, double& out) {
  if (text.empty()) return false;
  bool negative = false;
  std::string_view body = text;
  if (body[0] == '+' || body[0] == '-') {
    negative = body[0] == '-';
    body.remove_prefix(1);
    if (body.empty() || body[0] == '+' || body[0] == '-') return false;
  }
  if (!body.empty() && ((body[0] | 0x20) == 'i' || (body[0] | 0x20) == 'n')) {
    if (EqualsAsciiNoCase(body, "inf") || EqualsAsciiNoCase(body, "infinity")) {
      out = negative ? -INFINITY : INFINITY;
      return true;
    }
    if (EqualsAsciiNoCase(body, "nan")) {
      out = NAN;
      return true;
    }
    return false;
  }
  double v = 0.0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (ptr != body.data() + body.size()) return false;
  if (ec == std::errc::result_out_of_range) {
    v = INFINITY;  // Go returns ±Inf for overflow; treat tiny underflows the same way below
    if (body.find_first_of("eE") != std::string_view::npos) {
      std::size_t e = body.find_first_of("eE");
      if (e + 1 < body.size() && body[e + 1] == '-') v = 0.0;
    }
  } else if (ec != std::errc()) {
    return false;
  }
  out = negative ? -v : v;
  return true;
}

}  // namespace seedance::telemetry::internal

namespace seedance::telemetry::internal {

// True when `s` is well-formed UTF-8 (no overlongs, surrogates or code points above U+10FFFF).
inline bool IsValidUtf8(std::string_view s) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (std::size_t k = 1; k < len; ++k) {
      auto b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80u) || b > (k == 1 ? hi : 0xBFu)) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace seedance::telemetry::internal
