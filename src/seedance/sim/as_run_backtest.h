#pragma once

// `cost-benchmark --as-run` on one window (issue 38): the policies' runs and the history's replay
// billed over the history's window beside the as-run bill (as_run_window.h, as_run_replay.h).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/cost/price_table.h"
#include "seedance/sim/as_run_replay.h"
#include "seedance/sim/as_run_window.h"
#include "seedance/sim/scenarios.h"

namespace seedance::sim {

// The as-run bill as a WindowBill: committed (owned, reserved) and rented parts of `cost`, the
// rented GPU-hours of `placed`; nothing unfinished (the history ends inside its window).
WindowBill AsRunWindowBill(const AsRunCost& cost, const std::vector<AsRunInterval>& placed);

// Bills every policy of `r` over r->as_run's window from its pool intervals (policy name ->
// intervals on the simulator's clock), records its own-horizon total and its decomposition
// against the as-run bill in r->as_run->windowed, and sets its total_cost_usd to the window's
// total so that every table, saving and ranking of the report compares one window. A policy
// without intervals is an error naming it.
Status ApplyAsRunWindow(ScenarioResult* r, const FleetSpec& fleet, const MarginalPrices& prices,
                        const std::map<std::string, std::vector<PoolInterval>>& intervals_by_policy);

// Prices a replay (ReplayHistory) like the as-run row: its GPUs inside [0, window_s] of the
// history's clock by PriceAsRun over that window (`unix_origin_s`: the window start's Unix time,
// for wall-clock spot price series), the GPU time past window_s valued by ValueUnfinished. The
// gap is against `as_run_total_usd`. With `whole_nodes` (RentedNodes), rented GPUs are the
// replay's rented nodes while up (ReplayOutcome::rented_up), whole, instead of the jobs' GPUs.
Result<AsRunBaseline::Replayed> PriceReplay(const FleetFile& fleet, const cost::PriceTable& prices,
                                            const ReplayOutcome& replay, double window_s,
                                            std::optional<double> unix_origin_s, const MarginalPrices& marginal,
                                            double as_run_total_usd, bool whole_nodes = false);

}  // namespace seedance::sim
