#pragma once

#include <nlohmann/json.hpp>

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

}  // namespace seedance::fleet
