#pragma once

#include "seedance/core/status.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"

namespace seedance::fleet {

// The time-aware lower bound (issue 39) on the week's bill for `outputs`' useful work (its
// training PFLOP, its requests served within SLO per deployment and Mélange bucket, its notebook
// hours in use) on the scenario's fleet: the committed pools' bill (paid whatever runs) plus a
// fluid LP over periods of kBoundPeriodS. In each period every pool offers its GPU-hours (spot: its
// availability series over the period) at its lowest price in the period (committed: 0). Work:
//  - training by class (jobs whose PFLOP per GPU-hour agree within kBoundRateStep on each type,
//    at the class's highest rate there): by the end
//    of a period a class has done at most the work of its jobs arrived by then, on at most their
//    GPUs at once; together the classes do the outputs' PFLOP;
//  - serving: each bucket's requests within SLO at the faster of vLLM's and Seedance's measured
//    capacity per GPU on each type (a mix that routes each bucket to its best type is covered),
//    and in each period no more requests than were demanded in it; the largest buckets holding
//    kBoundServingShare of the requests (the rest left out: less work, still a bound);
//  - notebooks: one GPU-hour of any type per hour in use, by the end of a period at most the
//    in-use hours of the sessions begun by then.
// Relaxed, so never above what a stack pays for the same work: no cold start, no burst headroom,
// no 8-GPU nodes, no gang placement, deadlines not imposed, perfect foresight within the rules
// above (jobs never run before they arrive). Errors: kInternal when the LP fails (the fleet cannot
// hold the work).
inline constexpr double kBoundPeriodS = 3600;
inline constexpr double kBoundServingShare = 0.95;
inline constexpr double kBoundRateStep = 0.05;  // training classes: rates within 5 %
Result<double> FleetWeekLowerBoundUsd(const FleetWeekScenario& scenario, const FleetWeekOutcome& outputs);

}  // namespace seedance::fleet
