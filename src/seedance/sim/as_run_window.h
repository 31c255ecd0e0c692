#pragma once

// One window for every row of `cost-benchmark --as-run` (issue 38, "The same window for every
// policy"): each policy, the as-run bill and its replay are billed over the history's window
// [w0, w1] (its first submit or start to its last end), committed GPUs (owned, reserved) for all
// of it whatever runs, rented GPUs while held inside it, and the work a row has not finished by
// w1 valued at its cost to finish at the fleet's marginal price. The difference of a row to the
// as-run bill is split into horizon, cloud spend and placement, which sum to it.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/engine.h"
#include "seedance/sim/fleet.h"
#include "seedance/sim/fleet_file.h"

namespace seedance::sim {

// What one more GPU-hour of a type costs the fleet after the window (the marginal price):
// owned GPUs that are free at its end cost their power (the TCO's power and cooling share),
// else the cheapest rentable price of the type (on-demand or spot, the lower).
struct MarginalPrice {
  int owned_gpus = 0;
  double owned_power_usd = 0;  // per GPU-hour
  double rent_usd = 0;         // per GPU-hour; 0 with rentable = false
  bool rentable = false;
  double owned_tco_usd = 0;    // the owned GPU's whole TCO price (used when the type cannot be rented)
};
using MarginalPrices = std::map<std::string, MarginalPrice>;  // canonical GPU type -> price

// The marginal prices of `fleet`'s types: power share of each owned type's TCO from its `tco`
// inputs (else cost::TcoInputs' defaults) and the catalog, applied to the owned price the fleet
// bills; rentable prices from the simulator fleet `spec` (BuildFleetSpec of the same file).
Result<MarginalPrices> FleetMarginalPrices(const FleetFile& fleet, const FleetSpec& spec);

// GPUs of one type and tier used over [start_s, end_s) (`gpus` may be an average).
struct GpuUse {
  std::string gpu_type;  // canonical
  Tier tier = Tier::kOnDemand;
  double start_s = 0, end_s = 0;
  double gpus = 0;
};

struct UnfinishedWork {
  double gpu_hours = 0;      // GPU-hours run after w1
  double usd = 0;            // at the marginal price
  double owned_gpu_hours = 0;  // the part valued at owned power
};

// Values the work in `uses` after w1: per type, the GPU-hours that fit on the owned GPUs free at
// w1 (owned minus those in use then) over the tail (w1 .. the last use's end) at the owned power
// price, the rest at the cheapest rentable price (a type that cannot be rented: its owned TCO
// price). Uses of a type the prices do not list are an error naming it.
Result<UnfinishedWork> ValueUnfinished(const std::vector<GpuUse>& uses, double w1, const MarginalPrices& prices);

// How every row of the backtest bills rented (on-demand, spot) capacity: one rule for the as-run
// row, its replay and the policies.
// - whole_nodes (the history's node inventory came with it, `export workload --fleet` with node
//   pools): a rented node is paid whole while it is up, whatever its GPUs do. As run: each node for
//   the time the ledger billed it (what `attribute --fleet` bills). Replayed: each rented node from
//   the emulated cluster autoscaler's adding it to its removal after `scale_down_s` empty, or, when
//   the history's rented nodes were up all the window (`static_rented`), those nodes throughout.
//   Policies: the GPUs the simulator holds (its autoscaler requests them, and releases them
//   scale_down_delay_s after demand falls) plus the rented GPUs of the services and notebooks held
//   as they ran, rounded up at every instant to whole nodes of the pool's size.
// - otherwise (today's files, no node inventory): rented GPUs per GPU held or in use.
struct RentedNodes {
  bool whole_nodes = false;
  bool static_rented = false;
  // (canonical type, tier) -> GPUs of one node of that rented pool (the history's node size)
  std::map<std::pair<std::string, Tier>, int> gpus_per_node;
  // The services' and notebooks' rented GPUs as they ran (seconds from the window's start):
  // merged into the policies' rented nodes.
  std::vector<GpuUse> fixed;
  int GpusPerNode(const std::string& type, Tier tier) const {
    auto it = gpus_per_node.find({type, tier});
    return it == gpus_per_node.end() ? 8 : it->second;
  }
  // The rule in one sentence, for the report's assumptions.
  std::string Rule() const;
};

// Rented capacity of one pool over [w0, w1] in whole nodes: `held` (start, end, GPUs held, not
// overlapping) plus `fixed` (GPUs held as they ran, overlapping allowed), rounded up at every instant
// to nodes of `gpus_per_node`; usd at `pool`'s price in force (PoolSpec::Usd), node GPU-hours.
struct NodeBill {
  double usd = 0, gpu_hours = 0;
};
NodeBill BillWholeNodes(const PoolSpec& pool, int gpus_per_node, const std::vector<GpuUse>& held,
                        const std::vector<GpuUse>& fixed, double w0, double w1);

// A row's bill over the window.
struct WindowBill {
  double committed_usd = 0;     // owned and reserved GPUs over [w0, w1], used or not
  double cloud_usd = 0;         // on-demand and spot GPUs held inside [w0, w1]
  double cloud_gpu_hours = 0;
  double other_usd = 0;         // what a row pays besides GPUs (the simulator's cold-start idle host cost)
  UnfinishedWork unfinished;    // "unfinished work, valued"
  double TotalUsd() const { return committed_usd + cloud_usd + other_usd + unfinished.usd; }
};

// A policy's run billed over [w0, w1] of its clock from the pool intervals the engine reported
// (SimOptions::on_pool_interval, committed pools included): committed pools by their size over
// the whole window, rented intervals clipped to it (at their mean price), the jobs' GPU time
// after w1 valued by ValueUnfinished; `cold_start_idle_usd` is added as other_usd. With
// `rented` whole_nodes, each rented pool is billed by BillWholeNodes (its `fixed` uses shifted to
// start at w0) instead of per GPU held.
Result<WindowBill> BillPolicyOverWindow(const FleetSpec& fleet, const std::vector<PoolInterval>& intervals, double w0,
                                        double w1, const MarginalPrices& prices, double cold_start_idle_usd = 0,
                                        const RentedNodes* rented = nullptr);

// The difference of a row to the as-run bill (row - as run), in three parts that sum to it:
// horizon: the work each leaves past the window, valued, and any difference in committed GPUs;
// cloud spend: the change in rented GPU-hours at the as-run mean rented price (the row's own when
// the as-run rented nothing); placement: the rest (which rented pools and types took the hours,
// spot or on-demand, and costs besides GPUs).
struct Decomposition {
  double horizon_usd = 0, cloud_usd = 0, placement_usd = 0;
  double Sum() const { return horizon_usd + cloud_usd + placement_usd; }
};
Decomposition DecomposeAgainstAsRun(const WindowBill& row, const WindowBill& as_run);

}  // namespace seedance::sim
