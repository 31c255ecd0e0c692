// The fleet file's node pools (docs/FLEET_FILE.md `node_pools`): parsing and prices.
#include <fmt/format.h>

#include <algorithm>

#include "seedance/cluster/gpu_model.h"
#include "seedance/config/yaml_fields.h"
#include "seedance/gpu/catalog.h"
#include "seedance/sim/fleet_file.h"
#include "seedance/sim/internal/fleet_file_pools.h"

namespace seedance::sim {
namespace {

using config::yaml_fields::CheckKeys;
using config::yaml_fields::Number;
using config::yaml_fields::Scalar;
using config::yaml_fields::StringMap;
using config::yaml_fields::Where;

Result<cost::PoolKind> ParseKind(const std::string& name, const YAML::Node& n, const std::string& key) {
  SEEDANCE_ASSIGN_OR_RETURN(std::string k, Scalar(name, n, key));
  if (k == "owned") return cost::PoolKind::kOwned;
  if (k == "reserved") return cost::PoolKind::kReserved;
  if (k == "on-demand" || k == "on_demand") return cost::PoolKind::kOnDemand;
  if (k == "spot") return cost::PoolKind::kSpot;
  return InvalidArgumentError(Where(name, n, key) + ": '" + k + "': expected owned, reserved, on-demand or spot");
}

Status ParsePool(const std::string& name, const YAML::Node& n, const std::string& path, FleetFileNodePool& p) {
  p.line = n.Mark().line + 1;
  if (!n.IsMap()) return InvalidArgumentError(Where(name, n, path) + ": expected a mapping");
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, n, path, {"name", "type", "kind", "usd_per_gpu_hour", "provider",
                                                     "power_down_usd_per_gpu_hour", "match"}));
  for (const char* key : {"name", "type", "kind", "match"}) {
    if (!n[key]) return InvalidArgumentError(Where(name, n, path) + ": missing key '" + key + "'");
  }
  SEEDANCE_ASSIGN_OR_RETURN(p.name, Scalar(name, n["name"], path + ".name"));
  SEEDANCE_ASSIGN_OR_RETURN(p.written, Scalar(name, n["type"], path + ".type"));
  auto idx = gpu::ParseGpuName(p.written, gpu::NameMatch::kProduct);
  if (!idx.has_value()) {
    return InvalidArgumentError(Where(name, n["type"], path + ".type") + ": " + idx.error().message());
  }
  p.type = std::string(gpu::GpuAt(*idx).name);
  SEEDANCE_ASSIGN_OR_RETURN(p.kind, ParseKind(name, n["kind"], path + ".kind"));
  if (n["usd_per_gpu_hour"]) {
    SEEDANCE_ASSIGN_OR_RETURN(p.usd_per_gpu_hour,
                              Number(name, n["usd_per_gpu_hour"], path + ".usd_per_gpu_hour", 0, 1000, true));
  }
  if (n["provider"]) {
    SEEDANCE_ASSIGN_OR_RETURN(p.provider, Scalar(name, n["provider"], path + ".provider"));
  }
  if (n["power_down_usd_per_gpu_hour"]) {
    const std::string key = path + ".power_down_usd_per_gpu_hour";
    if (!cost::IsCommitted(p.kind)) {
      return InvalidArgumentError(Where(name, n["power_down_usd_per_gpu_hour"], key) +
                                  ": only owned and reserved pools save power when idle GPUs are switched off "
                                  "(on-demand and spot nodes are released instead)");
    }
    SEEDANCE_ASSIGN_OR_RETURN(p.power_down_usd_per_gpu_hour,
                              Number(name, n["power_down_usd_per_gpu_hour"], key, 0, 1000, false));
  }
  const YAML::Node m = n["match"];
  const std::string mp = path + ".match";
  if (!m.IsMap()) return InvalidArgumentError(Where(name, m, mp) + ": expected a mapping (labels, node_name, partition)");
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, m, mp, {"labels", "node_name", "partition"}));
  if (m["labels"]) {
    SEEDANCE_ASSIGN_OR_RETURN(auto labels, StringMap(name, m["labels"], mp + ".labels"));
    p.match.labels.assign(labels.begin(), labels.end());
  }
  if (m["node_name"]) {
    SEEDANCE_ASSIGN_OR_RETURN(p.match.node_name, Scalar(name, m["node_name"], mp + ".node_name"));
  }
  if (m["partition"]) {
    SEEDANCE_ASSIGN_OR_RETURN(p.match.partition, Scalar(name, m["partition"], mp + ".partition"));
  }
  if (p.match.empty()) {
    return InvalidArgumentError(Where(name, m, mp) +
                                ": give at least one of labels, node_name, partition (a pool that matches "
                                "every node would hide a node you did not price)");
  }
  return Status::Ok();
}

const FleetFileGpu* GpuEntry(const FleetFile& f, const std::string& type) {
  for (const auto& g : f.gpus) {
    if (g.type == type) return &g;
  }
  return nullptr;
}

}  // namespace

namespace internal {

Status ParseNodePools(const std::string& name, const YAML::Node& n, FleetFile& f) {
  if (!n.IsSequence() || n.size() == 0) {
    return InvalidArgumentError(Where(name, n, "node_pools") + ": expected a non-empty list of node pools");
  }
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string path = "node_pools[" + std::to_string(i) + "]";
    FleetFileNodePool p;
    SEEDANCE_RETURN_IF_ERROR(ParsePool(name, n[i], path, p));
    for (const auto& other : f.node_pools) {
      if (other.name == p.name) {
        return InvalidArgumentError(Where(name, n[i]["name"], path + ".name") + ": '" + p.name +
                                    "' is listed already at line " + std::to_string(other.line));
      }
    }
    f.node_pools.push_back(std::move(p));
  }
  return Status::Ok();
}

}  // namespace internal

Result<std::vector<cost::NodePool>> ResolveNodePools(const FleetFile& file, const cost::PriceTable& prices) {
  std::vector<cost::NodePool> out;
  for (const FleetFileNodePool& fp : file.node_pools) {
    const auto where = [&](std::string_view what) {
      return InvalidArgumentError(fmt::format("{}:{}: key 'node_pools[{}]' ({}): {}", file.path, fp.line,
                                              out.size(), fp.name, what));
    };
    cost::NodePool p;
    p.name = fp.name;
    p.gpu_type = fp.type;
    p.kind = fp.kind;
    p.match = fp.match;
    p.line = fp.line;
    p.power_down_usd_per_gpu_hour = fp.power_down_usd_per_gpu_hour;
    const FleetFileGpu* g = GpuEntry(file, fp.type);
    auto model = cluster::ParseGpuModel(fp.type);
    const cost::GpuPrice* row = model.has_value() ? prices.Find(*model) : nullptr;
    const auto table_on_demand = [&]() -> Result<double> {
      if (g != nullptr && g->on_demand_usd_per_gpu_hour > 0) return g->on_demand_usd_per_gpu_hour;
      if (row == nullptr) return where("no on-demand price for " + fp.type + " in " + prices.name() + "; give usd_per_gpu_hour");
      return ToUsd(row->usd_per_gpu_hour);
    };
    // The owned GPU's TCO (the gpus[] entry's inputs, else the catalog's defaults for the type).
    const gpu::GpuFacts& facts = gpu::GpuAt(*gpu::ParseGpuName(fp.type, gpu::NameMatch::kCanonical));
    if (fp.kind == cost::PoolKind::kOwned) {
      auto tco = cost::OwnedGpuTco(facts, g != nullptr && g->owned_tco ? g->tco : cost::TcoInputs{});
      if (tco.has_value()) {
        p.power_usd_per_gpu_hour = tco->power_usd_per_gpu_hour;  // the TCO model's marginal part
      }
      if (fp.usd_per_gpu_hour > 0) {
        p.usd_per_gpu_hour = fp.usd_per_gpu_hour;
        p.price_source = "the pool's usd_per_gpu_hour";
      } else if (g != nullptr && g->owned > 0) {
        p.usd_per_gpu_hour = g->owned_usd_per_gpu_hour;
        p.price_source = g->owned_tco ? "gpus[" + fp.type + "].owned TCO" : "gpus[" + fp.type + "].owned.usd_per_gpu_hour";
      } else {
        if (!tco.has_value()) return where(tco.error().message());
        p.usd_per_gpu_hour = tco->usd_per_gpu_hour;
        p.price_source = "TCO model, the catalog's defaults for " + fp.type;
      }
    } else if (fp.usd_per_gpu_hour > 0) {
      p.usd_per_gpu_hour = fp.usd_per_gpu_hour;
      p.price_source = "the pool's usd_per_gpu_hour";
    } else if (fp.kind == cost::PoolKind::kReserved) {
      if (g == nullptr || g->reserved == 0) {
        return where("a reserved pool needs usd_per_gpu_hour (or a gpus[] entry of " + fp.type + " with reserved)");
      }
      p.usd_per_gpu_hour = g->reserved_usd_per_gpu_hour;
      p.price_source = "gpus[" + fp.type + "].reserved.usd_per_gpu_hour";
    } else if (fp.kind == cost::PoolKind::kOnDemand) {
      SEEDANCE_ASSIGN_OR_RETURN(p.usd_per_gpu_hour, table_on_demand());
      p.price_source = g != nullptr && g->on_demand_usd_per_gpu_hour > 0
                           ? "gpus[" + fp.type + "].on_demand.usd_per_gpu_hour"
                           : prices.name() + " (on-demand list price)";
    } else {  // spot
      const FleetFileSpot* s = g != nullptr && !g->spot.empty() ? &g->spot.front() : nullptr;
      if (s != nullptr && s->usd_per_gpu_hour > 0) {
        p.usd_per_gpu_hour = s->usd_per_gpu_hour;
        p.price_source = "gpus[" + fp.type + "].spot[0].usd_per_gpu_hour";
      } else if (s != nullptr && s->price_ratio > 0) {
        SEEDANCE_ASSIGN_OR_RETURN(double od, table_on_demand());
        p.usd_per_gpu_hour = od * s->price_ratio;
        p.price_source = "gpus[" + fp.type + "].spot[0].price_ratio x on-demand";
      } else if (row != nullptr && row->spot_usd_per_gpu_hour.raw() > 0) {
        p.usd_per_gpu_hour = ToUsd(row->spot_usd_per_gpu_hour);
        p.price_source = prices.name() + " (spot quote)";
      } else {
        SEEDANCE_ASSIGN_OR_RETURN(double od, table_on_demand());
        p.usd_per_gpu_hour = od * cost::kDefaultSpotRatio;
        p.price_source = fmt::format("{} x on-demand (the default spot ratio)", cost::kDefaultSpotRatio);
      }
    }
    if (!fp.provider.empty()) {
      p.provider = fp.provider;
    } else if (fp.kind == cost::PoolKind::kOwned) {
      p.provider = file.on_prem_provider;
    } else if (!file.cloud_provider.empty()) {
      p.provider = file.cloud_provider;
    } else {
      return where("who bills this pool? give 'provider' (AWS, Google Cloud, ...), or the file's 'cloud_provider'");
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> FleetPriceWarnings(const FleetFile& file, const cost::PriceTable& prices) {
  std::vector<std::string> out;
  const auto check = [&](const std::string& type, int line, const std::string& key, double usd) {
    if (usd <= 0) return;
    auto model = cluster::ParseGpuModel(type);
    const cost::GpuPrice* row = model.has_value() ? prices.Find(*model) : nullptr;
    if (row == nullptr) return;
    const double list = ToUsd(row->usd_per_gpu_hour);
    const double lo = list * kPlausibleLow, hi = list * kPlausibleHigh;
    if (usd >= lo && usd <= hi) return;
    out.push_back(fmt::format(
        "{}:{}: key '{}': ${:.4f} per GPU-hour is outside the plausible ${:.2f} .. ${:.2f} for one {} ({} .. {}x its "
        "list price ${:.2f} in {}){}",
        file.path, line, key, usd, lo, hi, type, kPlausibleLow, kPlausibleHigh, list, prices.name(),
        usd > hi ? "; is it the price of a whole node? divide by its GPUs" : ""));
  };
  for (std::size_t i = 0; i < file.gpus.size(); ++i) {
    const FleetFileGpu& g = file.gpus[i];
    const std::string at = fmt::format("gpus[{}]", i);
    if (g.owned > 0 && !g.owned_tco) check(g.type, g.line, at + ".owned.usd_per_gpu_hour", g.owned_usd_per_gpu_hour);
    check(g.type, g.line, at + ".reserved.usd_per_gpu_hour", g.reserved_usd_per_gpu_hour);
    check(g.type, g.line, at + ".on_demand.usd_per_gpu_hour", g.on_demand_usd_per_gpu_hour);
    for (std::size_t k = 0; k < g.spot.size(); ++k) {
      check(g.type, g.spot[k].line, fmt::format("{}.spot[{}].usd_per_gpu_hour", at, k), g.spot[k].usd_per_gpu_hour);
    }
  }
  for (std::size_t i = 0; i < file.node_pools.size(); ++i) {
    const FleetFileNodePool& p = file.node_pools[i];
    check(p.type, p.line, fmt::format("node_pools[{}].usd_per_gpu_hour", i), p.usd_per_gpu_hour);
  }
  return out;
}

}  // namespace seedance::sim
