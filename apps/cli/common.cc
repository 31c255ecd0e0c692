#include "common.h"

#include "seedance/core/duration.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>

#include "seedance/core/file_util.h"

namespace seedance::cli {

int ReportError(const Status& s) {
  std::cerr << "seedance: error: " << s.message() << "\n";
  return (s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kNotFound)
             ? kExitUsage
             : kExitFailure;
}

std::vector<std::string> SplitCommaList(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

Result<std::vector<double>> ParseNumberList(const std::string& text, const std::string& flag, bool allow_zero,
                                            const std::string& what) {
  std::vector<double> out;
  for (const auto& item : SplitCommaList(text)) {
    double v = 0;
    std::size_t pos = 0;
    try {
      v = std::stod(item, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (pos != item.size() || !std::isfinite(v) || v < 0 || (v == 0 && !allow_zero)) {
      return InvalidArgumentError(flag + ": '" + item + "' is not a " + (allow_zero ? "non-negative" : "positive") +
                                  " number (" + what + ")");
    }
    out.push_back(v);
  }
  return out;
}

Result<std::vector<std::uint64_t>> ParseSeedList(const std::string& text, const std::string& flag) {
  std::vector<std::uint64_t> out;
  auto bad = [&](const std::string& why) {
    return InvalidArgumentError(flag + " '" + text + "': " + why +
                                " (expected e.g. 42-51, 42,45 or 42)");
  };
  auto parse = [&](const std::string& s, std::uint64_t& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size() && !s.empty();
  };
  for (const std::string& item : SplitCommaList(text)) {
    std::size_t dash = item.find('-');
    std::uint64_t a = 0, b = 0;
    if (dash == std::string::npos) {
      if (!parse(item, a)) return bad("not a seed: '" + item + "'");
      out.push_back(a);
      continue;
    }
    if (!parse(item.substr(0, dash), a) || !parse(item.substr(dash + 1), b)) {
      return bad("not a range: '" + item + "'");
    }
    if (b < a) return bad("range goes backwards: '" + item + "'");
    if (b - a > 100000) return bad("range too long: '" + item + "'");
    for (std::uint64_t s = a; s <= b; ++s) out.push_back(s);
  }
  if (out.empty()) return bad("no seeds");
  return out;
}

Result<double> ParseFlagDuration(const std::string& text, const std::string& flag) {
  auto v = ParseDurationSeconds(text);
  if (!v.has_value()) return InvalidArgumentError(flag + " '" + text + "': " + v.error().message());
  if (!(*v > 0)) {
    return InvalidArgumentError(flag + " '" + text + "': must be > 0 (" + std::string(kDurationExample) + ")");
  }
  return *v;
}

std::string BundledData(const std::string& relative) { return DataDir() + "/" + relative; }

std::string PlanCacheDir() {
  if (const char* d = std::getenv("SEEDANCE_CACHE_DIR"); d != nullptr && *d != '\0') return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return std::string(x) + "/seedance/plan";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return std::string(h) + "/.cache/seedance/plan";
  return ".seedance-cache/plan";
}

}  // namespace seedance::cli
