#pragma once

// The as-run backtest in cost-benchmark's outputs (issue 38): the one window every row is billed
// over, the "as run, replayed" row and its gap (the backtest's error), each policy's unfinished
// work valued and its difference to the as-run bill split into horizon, cloud spend and placement.

#include <nlohmann/json.hpp>
#include <string>

#include "seedance/sim/scenarios.h"

namespace seedance::report {

// "cheaper" / "dearer" than what was paid as run by `usd`, or "within the backtest's error" when
// the difference is not larger than the replay's gap (|replayed - as run|).
std::string AsRunVerdict(const sim::AsRunBaseline& a, double usd);

// Text lines for the table: the window, the replayed row and its gap, and per policy its window
// bill (unfinished work valued) and decomposition. Empty without a window (no as-run row).
std::string AsRunWindowText(const sim::ScenarioResult& r);

// results.json: {"window": {...}, "as_run_replayed": {...}, "policies": {name: {...}}}.
nlohmann::json AsRunWindowJson(const sim::ScenarioResult& r);

// The HTML section with the same figures; empty without an as-run row.
std::string AsRunWindowHtml(const sim::ScenarioResult& r);

}  // namespace seedance::report
