#pragma once

#include <string_view>

#include "seedance/core/status.h"

namespace seedance {

// Parses a duration as flags and config files write it: a number with one unit suffix: us, ms, s,
// m, h, d ("250us", "500ms", "90s", "1e3s", "15m", "1.5h", "7d"). A bare number is an error
// (`--slo-tpot 120` must not silently mean 120 seconds), except "0", which needs none.
// Returns seconds; any finite value (callers bound the range they accept).
// Errors: kInvalidArgument "a number needs a unit (write e.g. 120ms, 2s, 3m; units: us, ms, s, m,
// h, d)", "unknown unit 'x' (allowed: us, ms, s, m, h, d)" or "not a duration (e.g. 120ms, 2s,
// 3m)"; the caller adds the flag or key and the text.
Result<double> ParseDurationSeconds(std::string_view text);

// The example every duration error shows.
inline constexpr std::string_view kDurationExample = "e.g. 120ms, 2s, 3m";

}  // namespace seedance
