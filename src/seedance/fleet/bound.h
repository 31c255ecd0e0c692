#pragma once

#include "seedance/core/status.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"

namespace seedance::fleet {

// A lower bound on the week's bill for `outputs`' useful work (its training PFLOP, its requests
// served within SLO per deployment and Mélange bucket, its notebook hours in use) on the
// scenario's fleet: the committed pools' bill (paid whatever runs) plus a fluid LP over GPU-hours,
// every pool's GPU-hours of the week at its mean price (committed: 0) and its capacity (spot: the
// mean of its availability series), every kind of work at the best rate it reaches on the type
// (training: the highest PFLOP per GPU-hour of any job; serving: each bucket at the faster of
// vLLM's and Seedance's measured capacity per GPU, so a mix of types that routes each bucket to
// its best type is covered; notebooks: one GPU-hour per hour in use, any type), with no cold
// start, no burst headroom and perfect foresight. No stack, however clever, pays less for the same
// work. Errors: kInternal when the LP fails (the fleet cannot hold the work).
Result<double> FleetWeekLowerBoundUsd(const FleetWeekScenario& scenario, const FleetWeekOutcome& outputs);

}  // namespace seedance::fleet
