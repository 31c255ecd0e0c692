#include "seedance/sim/as_run_window.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "seedance/cost/tco.h"
#include "seedance/gpu/catalog.h"

namespace seedance::sim {

Result<MarginalPrices> FleetMarginalPrices(const FleetFile& fleet, const FleetSpec& spec) {
  MarginalPrices out;
  for (const FleetFileGpu& g : fleet.gpus) {
    MarginalPrice& m = out[g.type];
    m.owned_gpus = g.owned;
    if (g.owned > 0) {
      auto id = gpu::ParseGpuName(g.type, gpu::NameMatch::kCanonical);
      if (!id.has_value()) return InvalidArgumentError("marginal price: unknown GPU type '" + g.type + "'");
      auto tco = cost::OwnedGpuTco(gpu::GpuAt(*id), g.owned_tco ? g.tco : cost::TcoInputs{});
      if (!tco.has_value()) return InvalidArgumentError("marginal price of owned " + g.type + ": " + tco.error().message());
      const double share = tco->total > 0 ? (tco->power + tco->cooling) / tco->total : 0;
      m.owned_tco_usd = g.owned_usd_per_gpu_hour;
      m.owned_power_usd = g.owned_usd_per_gpu_hour * share;
    }
  }
  for (const PoolSpec& p : spec.pools) {
    if (p.committed || p.type < 0 || static_cast<std::size_t>(p.type) >= spec.gpu_types.size()) continue;
    MarginalPrice& m = out[spec.gpu_types[static_cast<std::size_t>(p.type)]];
    const double price = p.price.empty() ? p.usd_per_gpu_hour : p.MinPriceOver(0, std::numeric_limits<double>::max());
    if (!m.rentable || price < m.rent_usd) m.rent_usd = price;
    m.rentable = true;
  }
  return out;
}

Result<UnfinishedWork> ValueUnfinished(const std::vector<GpuUse>& uses, double w1, const MarginalPrices& prices) {
  struct PerType {
    double owned_in_use = 0, gpu_hours = 0, tail_end = 0;
  };
  std::map<std::string, PerType> by_type;
  for (const GpuUse& u : uses) {
    if (!(u.end_s > w1)) continue;
    if (!prices.count(u.gpu_type)) {
      return InvalidArgumentError(fmt::format("unfinished work: GPU type '{}' has no price in the fleet", u.gpu_type));
    }
    PerType& t = by_type[u.gpu_type];
    t.gpu_hours += u.gpus * (u.end_s - std::max(u.start_s, w1)) / 3600.0;
    t.tail_end = std::max(t.tail_end, u.end_s);
    if (u.tier == Tier::kOwned && u.start_s <= w1) t.owned_in_use += u.gpus;
  }
  UnfinishedWork out;
  for (const auto& [type, t] : by_type) {
    const MarginalPrice& m = prices.at(type);
    const double free_owned = std::max(0.0, m.owned_gpus - t.owned_in_use);
    const double on_owned = std::min(t.gpu_hours, free_owned * (t.tail_end - w1) / 3600.0);
    const double rest = t.gpu_hours - on_owned;
    out.gpu_hours += t.gpu_hours;
    out.owned_gpu_hours += on_owned;
    out.usd += on_owned * m.owned_power_usd + rest * (m.rentable ? m.rent_usd : m.owned_tco_usd);
  }
  return out;
}

Result<WindowBill> BillPolicyOverWindow(const FleetSpec& fleet, const std::vector<PoolInterval>& intervals, double w0,
                                        double w1, const MarginalPrices& prices, double cold_start_idle_usd) {
  if (!(w1 > w0)) return InvalidArgumentError(fmt::format("window [{}, {}] s is empty", w0, w1));
  WindowBill b;
  for (const PoolSpec& p : fleet.pools) {
    if (p.committed) b.committed_usd += p.Usd(p.max_gpus, w0, w1);
  }
  std::vector<GpuUse> uses;
  for (const PoolInterval& iv : intervals) {
    if (iv.pool < 0 || static_cast<std::size_t>(iv.pool) >= fleet.pools.size()) {
      return InvalidArgumentError(fmt::format("pool interval names pool {} of {}", iv.pool, fleet.pools.size()));
    }
    const PoolSpec& p = fleet.pools[static_cast<std::size_t>(iv.pool)];
    const double len = iv.end_s - iv.start_s;
    if (!(len > 0)) continue;
    if (!p.committed) {
      const double inside = std::max(0.0, std::min(iv.end_s, w1) - std::max(iv.start_s, w0));
      b.cloud_usd += iv.held_gpus * inside * iv.usd_per_gpu_hour / 3600.0;
      b.cloud_gpu_hours += iv.held_gpus * inside / 3600.0;
    }
    if (iv.end_s <= w1) continue;
    double gpu_s = 0;
    for (const PoolUse& u : iv.uses) gpu_s += u.gpu_seconds;
    if (gpu_s > 0) uses.push_back(GpuUse{fleet.gpu_types[static_cast<std::size_t>(p.type)], p.tier, iv.start_s, iv.end_s, gpu_s / len});
  }
  SEEDANCE_ASSIGN_OR_RETURN(b.unfinished, ValueUnfinished(uses, w1, prices));
  b.other_usd = cold_start_idle_usd;
  return b;
}

Decomposition DecomposeAgainstAsRun(const WindowBill& row, const WindowBill& as_run) {
  Decomposition d;
  d.horizon_usd = (row.unfinished.usd - as_run.unfinished.usd) + (row.committed_usd - as_run.committed_usd);
  const double ref = as_run.cloud_gpu_hours > 0   ? as_run.cloud_usd / as_run.cloud_gpu_hours
                     : row.cloud_gpu_hours > 0 ? row.cloud_usd / row.cloud_gpu_hours
                                               : 0.0;
  d.cloud_usd = (row.cloud_gpu_hours - as_run.cloud_gpu_hours) * ref;
  const double total = row.TotalUsd() - as_run.TotalUsd();
  d.placement_usd = total - d.horizon_usd - d.cloud_usd;
  return d;
}

}  // namespace seedance::sim
