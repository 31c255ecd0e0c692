#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::cli {

// Exit codes: 0 success, 1 runtime failure, 2 usage or input error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Prints "seedance: error: ..." to stderr and returns the exit code for `s`
// (2 for kInvalidArgument/kNotFound, 1 otherwise).
int ReportError(const Status& s);

// Parses "42-51", "42,45" or "42" (and mixes: "1,3-5"). Errors: kInvalidArgument naming `flag`.
Result<std::vector<std::uint64_t>> ParseSeedList(const std::string& text, const std::string& flag);

// A positive duration in seconds for `flag` (seedance::ParseDurationSeconds: 250us, 100ms, 2s,
// 30m, 6h, 7d; a bare number is an error). Errors: kInvalidArgument "FLAG '120': a number needs a
// unit (write e.g. 120ms, 2s, 3m; ...)" or "FLAG '0': must be > 0 (e.g. 120ms, 2s, 3m)".
Result<double> ParseFlagDuration(const std::string& text, const std::string& flag);

// The serving capacity profile cache (plan, cost-benchmark --workload fleet-week), outside --out (a
// failed run leaves no output behind, but keeps its profiles): $SEEDANCE_CACHE_DIR, else
// $XDG_CACHE_HOME/seedance/plan, else ~/.cache/seedance/plan.
std::string PlanCacheDir();

// Splits "a,b,c" (empty items dropped).
std::vector<std::string> SplitCommaList(const std::string& text);

// Parses "0.4,2,3.6": every item a number > 0 (or >= 0 with allow_zero). Errors: kInvalidArgument
// "FLAG: 'x' is not a positive number (WHAT)".
Result<std::vector<double>> ParseNumberList(const std::string& text, const std::string& flag, bool allow_zero,
                                            const std::string& what);

// Path of a bundled data file, e.g. BundledData("openb/openb_pod_list_default.csv").
std::string BundledData(const std::string& relative);

}  // namespace seedance::cli
