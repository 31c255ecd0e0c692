#include "seedance/sim/as_run_window.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

std::string RentedNodes::Rule() const {
  if (!whole_nodes) {
    return "rented GPUs (on-demand, spot) billed per GPU in use (as run, replayed) or held by the simulator (policies): "
           "no node inventory came with the as-run CSV (<as-run>.nodes.csv, written by `export workload --fleet` with "
           "node_pools), so the idle GPUs of rented nodes are counted by no row";
  }
  return std::string("every rented node (on-demand, spot) billed whole while it is up, whatever its GPUs do: as run, each "
                     "node for the time the ledger billed it (the as-run nodes file, = attribute --fleet); replayed, ") +
         (static_rented ? "the history's rented nodes, up all the window in the history, throughout"
                        : "each rented node from the emulated cluster autoscaler's adding it until 10 min empty") +
         "; policies, the simulator's held rented GPUs (released 10 min after demand falls) plus the services' and "
         "notebooks' rented GPUs as run, rounded up at every instant to whole nodes of the history's node size" +
         (static_rented ? ". The history kept its rented nodes up all the window and the policies' autoscaler does not: "
                          "that is part of every policy's difference to as run (see fifo's), not a scheduling gain"
                        : "");
}

NodeBill BillWholeNodes(const PoolSpec& pool, int gpus_per_node, const std::vector<GpuUse>& held,
                        const std::vector<GpuUse>& fixed, double w0, double w1) {
  std::vector<std::pair<double, double>> edges;  // (time, +/- GPUs)
  for (const auto* list : {&held, &fixed}) {
    for (const GpuUse& u : *list) {
      const double a = std::max(u.start_s, w0), b = std::min(u.end_s, w1);
      if (!(b > a) || !(u.gpus > 0)) continue;
      edges.emplace_back(a, u.gpus);
      edges.emplace_back(b, -u.gpus);
    }
  }
  std::sort(edges.begin(), edges.end());
  NodeBill out;
  const int per = std::max(1, gpus_per_node);
  double gpus = 0;
  for (std::size_t k = 0; k < edges.size(); ++k) {
    gpus += edges[k].second;
    if (k + 1 == edges.size() || !(edges[k + 1].first > edges[k].first)) continue;
    // Whole nodes for what is held now (a fractional average of a round still needs its node).
    const double nodes = std::ceil(gpus / per - 1e-9);
    if (!(nodes > 0)) continue;
    const double node_gpus = nodes * per;
    out.usd += pool.Usd(node_gpus, edges[k].first, edges[k + 1].first);
    out.gpu_hours += node_gpus * (edges[k + 1].first - edges[k].first) / 3600.0;
  }
  return out;
}

Result<WindowBill> BillPolicyOverWindow(const FleetSpec& fleet, const std::vector<PoolInterval>& intervals, double w0,
                                        double w1, const MarginalPrices& prices, double cold_start_idle_usd,
                                        const RentedNodes* rented) {
  const bool whole = rented != nullptr && rented->whole_nodes;
  if (!(w1 > w0)) return InvalidArgumentError(fmt::format("window [{}, {}] s is empty", w0, w1));
  WindowBill b;
  for (const PoolSpec& p : fleet.pools) {
    if (p.committed) b.committed_usd += p.Usd(p.max_gpus, w0, w1);
  }
  std::vector<GpuUse> uses;
  std::vector<std::vector<GpuUse>> held_by_pool(fleet.pools.size());
  for (const PoolInterval& iv : intervals) {
    if (iv.pool < 0 || static_cast<std::size_t>(iv.pool) >= fleet.pools.size()) {
      return InvalidArgumentError(fmt::format("pool interval names pool {} of {}", iv.pool, fleet.pools.size()));
    }
    const PoolSpec& p = fleet.pools[static_cast<std::size_t>(iv.pool)];
    const double len = iv.end_s - iv.start_s;
    if (!(len > 0)) continue;
    if (!p.committed && whole) {
      held_by_pool[static_cast<std::size_t>(iv.pool)].push_back(
          GpuUse{"", p.tier, iv.start_s, iv.end_s, static_cast<double>(iv.held_gpus)});
    } else if (!p.committed) {
      const double inside = std::max(0.0, std::min(iv.end_s, w1) - std::max(iv.start_s, w0));
      b.cloud_usd += iv.held_gpus * inside * iv.usd_per_gpu_hour / 3600.0;
      b.cloud_gpu_hours += iv.held_gpus * inside / 3600.0;
    }
    if (iv.end_s <= w1) continue;
    double gpu_s = 0;
    for (const PoolUse& u : iv.uses) gpu_s += u.gpu_seconds;
    if (gpu_s > 0) uses.push_back(GpuUse{fleet.gpu_types[static_cast<std::size_t>(p.type)], p.tier, iv.start_s, iv.end_s, gpu_s / len});
  }
  for (const GpuUse& u : whole ? rented->fixed : std::vector<GpuUse>{}) {
    const auto t = std::find(fleet.gpu_types.begin(), fleet.gpu_types.end(), u.gpu_type) - fleet.gpu_types.begin();
    if (fleet.FindPool(static_cast<int>(t), u.tier) < 0 || t == static_cast<std::ptrdiff_t>(fleet.gpu_types.size())) {
      return InvalidArgumentError(fmt::format("a service or notebook held as it ran on {} {} GPUs: the simulated fleet "
                                              "has no such pool to bill its node in", TierName(u.tier), u.gpu_type));
    }
  }
  for (std::size_t k = 0; whole && k < fleet.pools.size(); ++k) {
    const PoolSpec& p = fleet.pools[k];
    if (p.committed) continue;
    const std::string& type = fleet.gpu_types[static_cast<std::size_t>(p.type)];
    std::vector<GpuUse> fixed;
    for (const GpuUse& u : rented->fixed) {
      if (u.gpu_type == type && u.tier == p.tier) fixed.push_back(GpuUse{type, u.tier, u.start_s + w0, u.end_s + w0, u.gpus});
    }
    const NodeBill nb = BillWholeNodes(p, rented->GpusPerNode(type, p.tier), held_by_pool[k], fixed, w0, w1);
    b.cloud_usd += nb.usd;
    b.cloud_gpu_hours += nb.gpu_hours;
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
