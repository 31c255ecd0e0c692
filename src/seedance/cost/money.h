#pragma once

#include <string>
#include <string_view>

#include "seedance/core/status.h"
#include "seedance/core/units.h"

namespace seedance::cost {

// Parses a non-negative decimal dollar amount ("2.85", "0.5", "12") into exact micro-USD.
// Surrounding spaces are ignored. Errors: kInvalidArgument (the message has no file context;
// callers add it) for a sign, an exponent, more than 6 decimals or more than 12 integer digits.
Result<Money> ParseUsd(std::string_view text);

// Returns `m` as "$1,234.57": rounded half away from zero to `decimals` places, thousands
// grouped with commas, a leading '-' for negative amounts ("-$3"). REQUIRES: 0 <= decimals <= 6.
std::string FormatUsd(Money m, int decimals);

// Returns m x factor, rounded to the nearest micro-dollar (half away from zero).
// REQUIRES: factor is finite and the result fits in int64.
Money ScaleMoney(Money m, double factor);

}  // namespace seedance::cost
