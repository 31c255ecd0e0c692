#pragma once

#include <cstdint>
#include <vector>

#include "seedance/cluster/cluster.h"
#include "seedance/core/status.h"
#include "seedance/core/units.h"
#include "seedance/cost/price_table.h"

namespace seedance::cost {

// Hours in the month the reports use: 365 x 24 / 12.
inline constexpr std::int64_t kHoursPerMonth = 730;

// The GPUs of one model in a fleet and what they cost at list price.
struct FleetModelCost {
  GpuPrice price;  // the price-table row used (its model is this line's model)
  std::int64_t nodes = 0;
  std::int64_t gpus = 0;
  Money usd_per_hour;  // gpus x price.usd_per_gpu_hour, exact
};

// What a fleet's GPUs cost per hour at on-demand list price. Nodes without GPUs cost nothing
// here: this is a GPU cost model.
// Invariants: usd_per_hour is the exact sum of the models' usd_per_hour; gpus is the sum of
// theirs and > 0.
struct FleetCost {
  std::int64_t nodes = 0;  // all nodes of the list, with GPUs or not
  std::int64_t gpus = 0;
  std::vector<FleetModelCost> models;  // most GPUs first, ties by model name
  Money usd_per_hour;

  // Returns usd_per_hour x kHoursPerMonth.
  Money usd_per_month() const { return usd_per_hour * kHoursPerMonth; }
  // Returns the GPU-count-weighted mean price of one GPU-hour, rounded to the micro-dollar.
  Money average_usd_per_gpu_hour() const;
  // Returns the fraction (0..1) of usd_per_hour that rests on proxy (assumed) prices.
  double proxy_share() const;
};

// Prices every GPU of `nodes` with `prices`. Errors: kInvalidArgument when the nodes have no
// GPU, or when a GPU model of the fleet has no row in `prices` (naming the table and the model).
Result<FleetCost> PriceFleet(const std::vector<cluster::NodeSpec>& nodes, const PriceTable& prices);

// Returns what `unallocated_fraction` of the fleet's GPUs cost per month when they sit idle:
// fleet.usd_per_month() x unallocated_fraction, rounded half away from zero to the micro-dollar.
// This is unallocated GPUs x fleet-average price x kHoursPerMonth, i.e. it assumes the idle
// capacity is spread over the models in proportion to their GPU counts.
// REQUIRES: 0 <= unallocated_fraction <= 1.
Money StrandedUsdPerMonth(const FleetCost& fleet, double unallocated_fraction);

}  // namespace seedance::cost
