#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "seedance/fleet/bound.h"
#include "seedance/fleet/engine.h"

// Where a fleet week's bill goes, by GPU type (issue 39, round 5: fleet a's dollars above the
// bound): the committed bill, the cloud bill and GPU-hours by type, tier and use, the committed
// GPU-hours free and free while training ran on the cloud, training's and serving's GPU-hours by
// type, and the work lost to moves and preemptions.
namespace seedance::fleet {

// Adds `o`'s decomposition (every per-type vector, sized to o's types) into `sum`'s.
void AddDecomposition(const FleetWeekOutcome& o, FleetWeekOutcome* sum);

// results.json's "decomposition" of a row (sums over the set's weeks, like every GPU-hour there).
nlohmann::json DecompositionJson(const FleetWeekOutcome& o);

// results.json's decomposition of the bound's solutions (summed over the set's weeks).
nlohmann::json BoundDecompositionJson(const BoundDecomposition& b);

// The report's "where the dollars go" table: the base's, Seedance's and (when `bound` is not
// null) the bound's bill per week, split as above, each sum divided by its `weeks`. The bound's
// column has no owned GPU-hours free and no training kinds (its LP has neither).
std::string DecompositionHtml(const FleetWeekOutcome& base, double base_weeks, const FleetWeekOutcome& seedance,
                              double seedance_weeks, const BoundDecomposition* bound, double bound_weeks);

}  // namespace seedance::fleet
