#include "seedance/cost/fleet_cost.h"

#include <algorithm>
#include <map>
#include <string>

#include "seedance/core/check.h"
#include "seedance/cost/money.h"

namespace seedance::cost {

Money FleetCost::average_usd_per_gpu_hour() const {
  SEEDANCE_CHECK(gpus > 0);
  return MicroUsd((usd_per_hour.raw() + gpus / 2) / gpus);
}

double FleetCost::proxy_share() const {
  std::int64_t proxy = 0;
  for (const FleetModelCost& m : models) {
    if (m.price.basis == PriceBasis::kProxy) proxy += m.usd_per_hour.raw();
  }
  return usd_per_hour.raw() > 0
             ? static_cast<double>(proxy) / static_cast<double>(usd_per_hour.raw())
             : 0.0;
}

Result<FleetCost> PriceFleet(const std::vector<cluster::NodeSpec>& nodes,
                             const PriceTable& prices) {
  FleetCost fleet;
  fleet.nodes = static_cast<std::int64_t>(nodes.size());
  std::map<cluster::GpuModelIndex, FleetModelCost> by_model;
  for (const cluster::NodeSpec& n : nodes) {
    if (n.gpu_count <= 0) continue;
    FleetModelCost& line = by_model[n.model];
    line.nodes += 1;
    line.gpus += n.gpu_count;
  }
  for (auto& [model, line] : by_model) {
    const GpuPrice* price = prices.Find(model);
    if (price == nullptr) {
      return InvalidArgumentError(
          prices.name() + ": no price for GPU model '" + std::string(cluster::GpuModelName(model)) +
          "' (" + std::to_string(line.gpus) +
          " GPUs of the fleet); add a row gpu_model=" + std::string(cluster::GpuModelName(model)));
    }
    line.price = *price;
    line.usd_per_hour = price->usd_per_gpu_hour * line.gpus;
    fleet.gpus += line.gpus;
    fleet.usd_per_hour += line.usd_per_hour;
    fleet.models.push_back(line);
  }
  if (fleet.gpus == 0) return InvalidArgumentError("the node list has no GPUs to price");
  std::sort(fleet.models.begin(), fleet.models.end(),
            [](const FleetModelCost& a, const FleetModelCost& b) {
              if (a.gpus != b.gpus) return a.gpus > b.gpus;
              return cluster::GpuModelName(a.price.model) < cluster::GpuModelName(b.price.model);
            });
  return fleet;
}

Money StrandedUsdPerMonth(const FleetCost& fleet, double unallocated_fraction) {
  SEEDANCE_CHECK(unallocated_fraction >= 0 && unallocated_fraction <= 1)
      << "unallocated fraction " << unallocated_fraction;
  return ScaleMoney(fleet.usd_per_month(), unallocated_fraction);
}

}  // namespace seedance::cost
