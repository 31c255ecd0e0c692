#pragma once

#include <string_view>

#include "seedance/core/status.h"

namespace seedance {

// Parses a duration as flags and config files write it: a number of seconds ("90", "1.5", "1e3")
// or a number with one unit suffix: us, ms, s, m, h, d ("250us", "500ms", "15m", "1.5h", "7d").
// Returns seconds; any finite value (callers bound the range they accept).
// Errors: kInvalidArgument "unknown unit 'x' (allowed: us, ms, s, m, h, d)" or "not a duration
// (seconds, or "30s", "15m", "1h")"; the caller adds the flag or key.
Result<double> ParseDurationSeconds(std::string_view text);

}  // namespace seedance
