#include "seedance/sim/fleet_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "seedance/cluster/gpu_model.h"
#include "seedance/config/gpu_catalog_file.h"
#include "seedance/config/yaml_fields.h"
#include "seedance/gpu/catalog.h"
#include "seedance/sim/internal/fleet_file_pools.h"

namespace seedance::sim {
namespace {

using config::yaml_fields::Bool;
using config::yaml_fields::CheckKeys;
using config::yaml_fields::Duration;
using config::yaml_fields::Number;
using config::yaml_fields::Scalar;
using config::yaml_fields::Where;

constexpr double kMaxGpus = 1000000;
constexpr double kMaxUsd = 1000;  // per GPU-hour: a typo guard, not a market fact

// The whole-number count at n (0..kMaxGpus, or 1.. when positive).
Result<int> Count(const std::string& name, const YAML::Node& n, const std::string& key, bool positive) {
  SEEDANCE_ASSIGN_OR_RETURN(double v, Number(name, n, key, positive ? 1 : 0, kMaxGpus, false));
  if (v != static_cast<double>(static_cast<int>(v))) {
    return InvalidArgumentError(Where(name, n, key) + ": " + n.Scalar() + " is not a whole number of GPUs");
  }
  return static_cast<int>(v);
}

Result<double> Usd(const std::string& name, const YAML::Node& n, const std::string& key) {
  return Number(name, n, key, 0, kMaxUsd, /*lo_open=*/true);
}

// `node_gpus`: the instance shapes the cloud sells, GPUs per node, ascending without repeats.
Result<std::vector<int>> NodeGpus(const std::string& name, const YAML::Node& n, const std::string& key) {
  if (!n.IsSequence() || n.size() == 0) {
    return InvalidArgumentError(Where(name, n, key) + ": expected a non-empty list of GPUs per node, e.g. [1, 4, 8]");
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string k = key + "[" + std::to_string(i) + "]";
    SEEDANCE_ASSIGN_OR_RETURN(const int g, Count(name, n[i], k, true));
    if (!out.empty() && g <= out.back()) {
      return InvalidArgumentError(Where(name, n[i], k) + ": " + std::to_string(g) + " after " +
                                  std::to_string(out.back()) + ": list the shapes ascending, each once");
    }
    out.push_back(g);
  }
  return out;
}

Status Require(const std::string& name, const YAML::Node& map, const std::string& path, const char* key) {
  if (map[key]) return Status::Ok();
  return InvalidArgumentError(Where(name, map, path) + ": missing key '" + key + "'");
}

Result<std::string> Region(const std::string& name, const YAML::Node& map, const std::string& path,
                           const std::vector<std::string>& regions) {
  if (!map["region"]) {
    if (regions.size() == 1) return regions.front();
    return InvalidArgumentError(Where(name, map, path) + ": missing key 'region' (the fleet has " +
                                std::to_string(regions.size()) + " regions)");
  }
  SEEDANCE_ASSIGN_OR_RETURN(std::string r, Scalar(name, map["region"], path + ".region"));
  if (std::find(regions.begin(), regions.end(), r) == regions.end()) {
    std::string list;
    for (const auto& x : regions) list += (list.empty() ? "" : ", ") + x;
    return InvalidArgumentError(Where(name, map["region"], path + ".region") + ": '" + r +
                                "' is not in 'regions' (" + list + ")");
  }
  return r;
}

// A path of the file, relative ones against its folder.
std::string Resolve(const std::string& file, const std::string& base_dir) {
  const std::filesystem::path fp(file);
  return fp.is_absolute() || base_dir.empty() ? file : (std::filesystem::path(base_dir) / fp).string();
}

Status ParseOwned(const std::string& name, const YAML::Node& n, const std::string& path,
                  const std::vector<std::string>& regions, FleetFileGpu& g) {
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, n, path, {"count", "region", "tco", "usd_per_gpu_hour"}));
  SEEDANCE_RETURN_IF_ERROR(Require(name, n, path, "count"));
  SEEDANCE_ASSIGN_OR_RETURN(g.owned, Count(name, n["count"], path + ".count", true));
  SEEDANCE_ASSIGN_OR_RETURN(g.owned_region, Region(name, n, path, regions));
  if (n["tco"] && n["usd_per_gpu_hour"]) {
    return InvalidArgumentError(Where(name, n["usd_per_gpu_hour"], path + ".usd_per_gpu_hour") +
                                ": give either 'tco' (the catalog's TCO model) or 'usd_per_gpu_hour', not both");
  }
  if (n["usd_per_gpu_hour"]) {
    SEEDANCE_ASSIGN_OR_RETURN(g.owned_usd_per_gpu_hour, Usd(name, n["usd_per_gpu_hour"], path + ".usd_per_gpu_hour"));
    return Status::Ok();
  }
  // The TCO model, every input optional (the defaults of `seedance catalog`).
  g.owned_tco = true;
  const std::string tp = path + ".tco";
  const YAML::Node t = n["tco"];
  if (t) {
    if (t.IsNull()) return InvalidArgumentError(Where(name, t, tp) + ": expected a mapping");
    SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, t, tp, {"gpu_price", "life", "tflops", "watts_per_tflops", "utilization",
                                                     "usd_per_kwh", "pue", "ops"}));
    if (t["gpu_price"]) {
      SEEDANCE_ASSIGN_OR_RETURN(g.tco.gpu_price_usd, Number(name, t["gpu_price"], tp + ".gpu_price", 0, 1e7, true));
    }
    if (t["life"]) {
      SEEDANCE_ASSIGN_OR_RETURN(double s, Duration(name, t["life"], tp + ".life", 0, 50 * 365 * 86400.0, true));
      g.tco.life_years = s / (365 * 86400.0);
    }
    if (t["tflops"]) {
      SEEDANCE_ASSIGN_OR_RETURN(g.tco.tflops, Number(name, t["tflops"], tp + ".tflops", 0, 1e5, true));
    }
    if (t["watts_per_tflops"]) {
      SEEDANCE_ASSIGN_OR_RETURN(g.tco.watts_per_tflops,
                                Number(name, t["watts_per_tflops"], tp + ".watts_per_tflops", 0, 1e4, true));
    }
    if (t["utilization"]) {
      SEEDANCE_ASSIGN_OR_RETURN(g.tco.utilization, Number(name, t["utilization"], tp + ".utilization", 0, 1, false));
    }
    if (t["usd_per_kwh"]) {
      SEEDANCE_ASSIGN_OR_RETURN(g.tco.usd_per_kwh, Number(name, t["usd_per_kwh"], tp + ".usd_per_kwh", 0, 10, false));
    }
    if (t["pue"]) {
      SEEDANCE_ASSIGN_OR_RETURN(g.tco.pue, Number(name, t["pue"], tp + ".pue", 1, 5, false));
    }
    if (t["ops"]) {
      SEEDANCE_ASSIGN_OR_RETURN(g.tco.ops_usd_per_tflops_year, Number(name, t["ops"], tp + ".ops", 0, 1e4, false));
    }
  }
  const gpu::GpuFacts& facts = gpu::GpuAt(*gpu::ParseGpuName(g.type, gpu::NameMatch::kCanonical));
  auto tco = cost::OwnedGpuTco(facts, g.tco);
  if (!tco.has_value()) return InvalidArgumentError(Where(name, t ? t : n, tp) + ": " + tco.error().message());
  g.tco = tco->inputs;
  g.owned_usd_per_gpu_hour = tco->usd_per_gpu_hour;
  return Status::Ok();
}

Status ParseSpot(const std::string& name, const YAML::Node& n, const std::string& path, const std::string& base_dir,
                 const std::vector<std::string>& regions, FleetFileSpot& s) {
  s.line = n.Mark().line + 1;
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, n, path, {"region", "series", "gpus_per_instance", "max_gpus", "price_ratio",
                                                     "usd_per_gpu_hour", "borrowed", "price_series", "instance_type",
                                                     "availability_zone", "product_description"}));
  SEEDANCE_RETURN_IF_ERROR(Require(name, n, path, "series"));
  SEEDANCE_RETURN_IF_ERROR(Require(name, n, path, "max_gpus"));
  SEEDANCE_ASSIGN_OR_RETURN(s.region, Region(name, n, path, regions));
  SEEDANCE_ASSIGN_OR_RETURN(s.max_gpus, Count(name, n["max_gpus"], path + ".max_gpus", true));
  if (n["gpus_per_instance"]) {
    SEEDANCE_ASSIGN_OR_RETURN(s.gpus_per_instance, Count(name, n["gpus_per_instance"], path + ".gpus_per_instance", true));
  }
  if ((n["price_ratio"] ? 1 : 0) + (n["usd_per_gpu_hour"] ? 1 : 0) + (n["price_series"] ? 1 : 0) > 1) {
    const char* key = n["price_series"] ? "price_series" : "usd_per_gpu_hour";
    return InvalidArgumentError(Where(name, n[key], path + "." + key) +
                                ": give one of 'price_ratio', 'usd_per_gpu_hour' and 'price_series'");
  }
  for (const char* key : {"instance_type", "availability_zone", "product_description"}) {
    if (n[key] && !n["price_series"]) {
      return InvalidArgumentError(Where(name, n[key], path + "." + key) +
                                  ": chooses rows of an AWS price history; give 'price_series'");
    }
  }
  if (n["price_series"]) {
    const std::string key = path + ".price_series";
    if (n["instance_type"]) {
      SEEDANCE_ASSIGN_OR_RETURN(s.price_filter.instance_type, Scalar(name, n["instance_type"], path + ".instance_type"));
    }
    if (n["availability_zone"]) {
      SEEDANCE_ASSIGN_OR_RETURN(s.price_filter.availability_zone,
                                Scalar(name, n["availability_zone"], path + ".availability_zone"));
    }
    if (n["product_description"]) {
      SEEDANCE_ASSIGN_OR_RETURN(s.price_filter.product_description,
                                Scalar(name, n["product_description"], path + ".product_description"));
    }
    SEEDANCE_ASSIGN_OR_RETURN(s.price_series_as_written, Scalar(name, n["price_series"], key));
    s.price_series_path = Resolve(s.price_series_as_written, base_dir);
    auto loaded = LoadPriceSeries(s.price_series_path, s.gpus_per_instance, s.price_filter);
    if (!loaded.has_value()) return InvalidArgumentError(Where(name, n["price_series"], key) + ": " + loaded.error().message());
    s.price = std::move(*loaded);
  }
  if (n["price_ratio"]) {
    SEEDANCE_ASSIGN_OR_RETURN(s.price_ratio, Number(name, n["price_ratio"], path + ".price_ratio", 0, 1, true));
  }
  if (n["usd_per_gpu_hour"]) {
    SEEDANCE_ASSIGN_OR_RETURN(s.usd_per_gpu_hour, Usd(name, n["usd_per_gpu_hour"], path + ".usd_per_gpu_hour"));
  }
  if (n["borrowed"]) {
    SEEDANCE_ASSIGN_OR_RETURN(s.borrowed, Bool(name, n["borrowed"], path + ".borrowed"));
  }
  const YAML::Node series = n["series"];
  std::vector<YAML::Node> items;
  if (series.IsScalar()) {
    items.push_back(series);
  } else if (series.IsSequence() && series.size() > 0) {
    for (const auto& x : series) items.push_back(x);
  } else {
    return InvalidArgumentError(Where(name, series, path + ".series") +
                                ": expected a spot-traces JSON file or a non-empty list of them");
  }
  std::vector<SpotSeries> parts;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string key = path + ".series" + (series.IsSequence() ? "[" + std::to_string(i) + "]" : "");
    SEEDANCE_ASSIGN_OR_RETURN(std::string file, Scalar(name, items[i], key));
    const std::string resolved = Resolve(file, base_dir);
    auto loaded = SpotSeries::LoadFile(resolved, s.gpus_per_instance);
    if (!loaded.has_value()) return InvalidArgumentError(Where(name, items[i], key) + ": " + loaded.error().message());
    parts.push_back(std::move(*loaded));
    s.series.push_back(resolved);
    s.series_as_written.push_back(file);
  }
  SEEDANCE_ASSIGN_OR_RETURN(s.availability, SpotSeries::Sum(parts));
  return Status::Ok();
}

Status ParseGpu(const std::string& name, const YAML::Node& n, const std::string& path, const std::string& base_dir,
                const std::vector<std::string>& regions, FleetFileGpu& g) {
  g.line = n.Mark().line + 1;
  SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, n, path, {"type", "owned", "reserved", "on_demand", "spot"}));
  SEEDANCE_RETURN_IF_ERROR(Require(name, n, path, "type"));
  SEEDANCE_ASSIGN_OR_RETURN(g.written, Scalar(name, n["type"], path + ".type"));
  auto idx = gpu::ParseGpuName(g.written, gpu::NameMatch::kProduct);
  if (!idx.has_value()) return InvalidArgumentError(Where(name, n["type"], path + ".type") + ": " + idx.error().message());
  g.type = std::string(gpu::GpuAt(*idx).name);
  if (!n["owned"] && !n["reserved"] && !n["on_demand"] && !n["spot"]) {
    return InvalidArgumentError(Where(name, n, path) + ": no capacity: give at least one of owned, reserved, on_demand, spot");
  }
  if (n["owned"]) SEEDANCE_RETURN_IF_ERROR(ParseOwned(name, n["owned"], path + ".owned", regions, g));
  if (n["reserved"]) {
    const std::string rp = path + ".reserved";
    const YAML::Node r = n["reserved"];
    SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, r, rp, {"count", "region", "usd_per_gpu_hour"}));
    SEEDANCE_RETURN_IF_ERROR(Require(name, r, rp, "count"));
    SEEDANCE_RETURN_IF_ERROR(Require(name, r, rp, "usd_per_gpu_hour"));
    SEEDANCE_ASSIGN_OR_RETURN(g.reserved, Count(name, r["count"], rp + ".count", true));
    SEEDANCE_ASSIGN_OR_RETURN(g.reserved_region, Region(name, r, rp, regions));
    SEEDANCE_ASSIGN_OR_RETURN(g.reserved_usd_per_gpu_hour, Usd(name, r["usd_per_gpu_hour"], rp + ".usd_per_gpu_hour"));
  }
  if (n["on_demand"]) {
    const std::string op = path + ".on_demand";
    const YAML::Node o = n["on_demand"];
    SEEDANCE_RETURN_IF_ERROR(CheckKeys(name, o, op, {"quota", "region", "usd_per_gpu_hour", "node_gpus"}));
    SEEDANCE_RETURN_IF_ERROR(Require(name, o, op, "quota"));
    g.has_on_demand = true;
    SEEDANCE_ASSIGN_OR_RETURN(g.on_demand_quota, Count(name, o["quota"], op + ".quota", true));
    SEEDANCE_ASSIGN_OR_RETURN(g.on_demand_region, Region(name, o, op, regions));
    if (o["usd_per_gpu_hour"]) {
      SEEDANCE_ASSIGN_OR_RETURN(g.on_demand_usd_per_gpu_hour, Usd(name, o["usd_per_gpu_hour"], op + ".usd_per_gpu_hour"));
    }
    if (o["node_gpus"]) {
      SEEDANCE_ASSIGN_OR_RETURN(g.on_demand_node_gpus, NodeGpus(name, o["node_gpus"], op + ".node_gpus"));
    }
  }
  if (n["spot"]) {
    const YAML::Node sp = n["spot"];
    if (!sp.IsSequence() || sp.size() == 0) {
      return InvalidArgumentError(Where(name, sp, path + ".spot") + ": expected a non-empty list of spot pools");
    }
    for (std::size_t i = 0; i < sp.size(); ++i) {
      FleetFileSpot s;
      SEEDANCE_RETURN_IF_ERROR(ParseSpot(name, sp[i], path + ".spot[" + std::to_string(i) + "]", base_dir, regions, s));
      g.spot.push_back(std::move(s));
    }
  }
  return Status::Ok();
}

}  // namespace

std::string CanonicalGpuType(const std::string& text) {
  auto idx = gpu::ParseGpuName(text, gpu::NameMatch::kProduct);
  return idx.has_value() ? std::string(gpu::GpuAt(*idx).name) : text;
}

Result<FleetFile> ParseFleetFile(const std::string& name, const std::string& text, const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(name + ":" + std::to_string(e.mark.line + 1) + ": not valid YAML: " + e.msg);
  }
  if (!root.IsMap()) return InvalidArgumentError(name + ": expected a mapping with keys name, regions, gpus");
  const config::yaml_fields::NullValueLines null_lines(root);  // `key:` with no value: its own line
  SEEDANCE_RETURN_IF_ERROR(
      CheckKeys(name, root, "", {"name", "regions", "gpus", "gpu_types", "node_pools", "on_prem_provider", "cloud_provider"}));
  // GPU types the built-in catalog lacks (B200, MI300X, ...), before `gpus` and `node_pools` name them.
  if (root["gpu_types"]) SEEDANCE_RETURN_IF_ERROR(config::AddGpuTypes(name, root["gpu_types"], "gpu_types"));
  FleetFile f;
  f.path = name;
  f.name = std::filesystem::path(name).stem().string();
  if (root["name"]) {
    SEEDANCE_ASSIGN_OR_RETURN(f.name, Scalar(name, root["name"], "name"));
  }
  SEEDANCE_RETURN_IF_ERROR(Require(name, root, "regions", "regions"));
  SEEDANCE_RETURN_IF_ERROR(Require(name, root, "gpus", "gpus"));
  const YAML::Node regions = root["regions"];
  if (!regions.IsSequence() || regions.size() == 0) {
    return InvalidArgumentError(Where(name, regions, "regions") + ": expected a non-empty list of region names");
  }
  for (std::size_t i = 0; i < regions.size(); ++i) {
    SEEDANCE_ASSIGN_OR_RETURN(std::string r, Scalar(name, regions[i], "regions[" + std::to_string(i) + "]"));
    if (r.empty() || std::find(f.regions.begin(), f.regions.end(), r) != f.regions.end()) {
      return InvalidArgumentError(Where(name, regions[i], "regions[" + std::to_string(i) + "]") + ": '" + r +
                                  "' is empty or listed twice");
    }
    f.regions.push_back(r);
  }
  const YAML::Node gpus = root["gpus"];
  if (!gpus.IsSequence() || gpus.size() == 0) {
    return InvalidArgumentError(Where(name, gpus, "gpus") + ": expected a non-empty list of GPU types");
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string path = "gpus[" + std::to_string(i) + "]";
    FleetFileGpu g;
    SEEDANCE_RETURN_IF_ERROR(ParseGpu(name, gpus[i], path, base_dir, f.regions, g));
    for (const auto& other : f.gpus) {
      if (other.type == g.type) {
        return InvalidArgumentError(Where(name, gpus[i]["type"], path + ".type") + ": '" + g.written + "' is " + g.type +
                                    ", listed already at line " + std::to_string(other.line));
      }
    }
    f.gpus.push_back(std::move(g));
  }
  if (root["on_prem_provider"]) {
    SEEDANCE_ASSIGN_OR_RETURN(f.on_prem_provider, Scalar(name, root["on_prem_provider"], "on_prem_provider"));
  }
  if (root["cloud_provider"]) {
    SEEDANCE_ASSIGN_OR_RETURN(f.cloud_provider, Scalar(name, root["cloud_provider"], "cloud_provider"));
  }
  if (root["node_pools"]) SEEDANCE_RETURN_IF_ERROR(internal::ParseNodePools(name, root["node_pools"], f));
  return f;
}

Result<FleetFile> LoadFleetFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open fleet file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseFleetFile(path, ss.str(), std::filesystem::path(path).parent_path().string());
}

Result<FleetSpec> BuildFleetSpec(const FleetFile& file, const std::vector<std::string>& gpu_types,
                                 const cost::PriceTable& prices) {
  FleetSpec fleet;
  fleet.name = file.name;
  fleet.gpu_types = gpu_types;
  std::vector<const FleetFileGpu*> by_type(gpu_types.size(), nullptr);
  for (const auto& g : file.gpus) {
    std::size_t t = 0;
    while (t < gpu_types.size() && CanonicalGpuType(gpu_types[t]) != g.type) ++t;
    if (t == gpu_types.size()) {
      std::string list;
      for (const auto& x : gpu_types) list += (list.empty() ? "" : ", ") + x;
      return InvalidArgumentError(file.path + ":" + std::to_string(g.line) + ": key 'gpus[].type': '" + g.written +
                                  "' is a GPU type the workload has no speed for (its types: " + list + ")");
    }
    by_type[t] = &g;
  }
  const auto pool = [](int type, Tier tier, int max_gpus, double usd, bool committed, const std::string& region) {
    PoolSpec p;
    p.type = type;
    p.tier = tier;
    p.max_gpus = max_gpus;
    p.usd_per_gpu_hour = usd;
    p.committed = committed;
    p.region = region;
    return p;
  };
  // The type's on-demand price: the file's, else the price table's.
  const auto on_demand_usd = [&](const FleetFileGpu& g) -> Result<double> {
    if (g.on_demand_usd_per_gpu_hour > 0) return g.on_demand_usd_per_gpu_hour;
    auto model = cluster::ParseGpuModel(g.type);
    const cost::GpuPrice* p = model.has_value() ? prices.Find(*model) : nullptr;
    if (p == nullptr) {
      return InvalidArgumentError(file.path + ":" + std::to_string(g.line) + ": " + prices.name() +
                                  ": no on-demand price for GPU type '" + g.type +
                                  "' (give on_demand.usd_per_gpu_hour, or spot usd_per_gpu_hour)");
    }
    return ToUsd(p->usd_per_gpu_hour);
  };
  for (std::size_t t = 0; t < by_type.size(); ++t) {
    if (by_type[t] != nullptr && by_type[t]->owned > 0) {
      const FleetFileGpu& g = *by_type[t];
      fleet.pools.push_back(pool(static_cast<int>(t), Tier::kOwned, g.owned, g.owned_usd_per_gpu_hour, true, g.owned_region));
    }
  }
  for (std::size_t t = 0; t < by_type.size(); ++t) {
    if (by_type[t] != nullptr && by_type[t]->reserved > 0) {
      const FleetFileGpu& g = *by_type[t];
      fleet.pools.push_back(
          pool(static_cast<int>(t), Tier::kReserved, g.reserved, g.reserved_usd_per_gpu_hour, true, g.reserved_region));
    }
  }
  for (std::size_t t = 0; t < by_type.size(); ++t) {
    if (by_type[t] == nullptr || !by_type[t]->has_on_demand) continue;
    const FleetFileGpu& g = *by_type[t];
    SEEDANCE_ASSIGN_OR_RETURN(double od, on_demand_usd(g));
    fleet.pools.push_back(pool(static_cast<int>(t), Tier::kOnDemand, g.on_demand_quota, od, false, g.on_demand_region));
    fleet.pools.back().node_gpus = g.on_demand_node_gpus;
  }
  for (const auto& g : file.gpus) {
    if (g.spot.empty()) continue;
    const auto t = static_cast<int>(std::find(by_type.begin(), by_type.end(), &g) - by_type.begin());
    double usd = 0;
    int max_gpus = 0;
    std::vector<SpotSeries> parts;
    std::string regions;
    const PriceSeries* series_price = nullptr;
    for (const auto& s : g.spot) {
      if (s.price.empty() != g.spot.front().price.empty() || (series_price && !(s.price == *series_price))) {
        return InvalidArgumentError(file.path + ":" + std::to_string(s.line) + ": spot pools of " + g.type +
                                    " in several regions are pooled into one and must share a price: give them "
                                    "the same 'price_series'");
      }
      if (!s.price.empty()) series_price = &s.price;
      double price = s.price.empty() ? s.usd_per_gpu_hour : s.price.At(0);
      if (price <= 0) {
        auto model = cluster::ParseGpuModel(g.type);
        const cost::GpuPrice* row = model.has_value() ? prices.Find(*model) : nullptr;
        if (s.price_ratio > 0) {
          SEEDANCE_ASSIGN_OR_RETURN(double od, on_demand_usd(g));
          price = od * s.price_ratio;
        } else if (row != nullptr && row->spot_usd_per_gpu_hour.raw() > 0) {
          price = ToUsd(row->spot_usd_per_gpu_hour);
        } else {
          SEEDANCE_ASSIGN_OR_RETURN(double od, on_demand_usd(g));
          price = od * cost::kDefaultSpotRatio;
        }
      }
      if (usd > 0 && price != usd) {
        return InvalidArgumentError(file.path + ":" + std::to_string(s.line) + ": spot pools of " + g.type +
                                    " in several regions are pooled into one and must share a price (" +
                                    std::to_string(usd) + " vs " + std::to_string(price) + " USD per GPU-hour)");
      }
      usd = price;
      max_gpus += s.max_gpus;
      parts.push_back(s.availability);
      regions += (regions.empty() ? "" : "+") + s.region;
    }
    SEEDANCE_ASSIGN_OR_RETURN(SpotSeries series, SpotSeries::Sum(parts));
    PoolSpec p = pool(t, Tier::kSpot, max_gpus, usd, false, regions);
    p.spot = std::move(series);
    if (series_price != nullptr) p.price = *series_price;
    fleet.pools.push_back(std::move(p));
  }
  if (fleet.pools.empty()) return InvalidArgumentError(file.path + ": no pool for any GPU type of the workload");
  return fleet;
}

Result<Tier> ParseTier(std::string_view text) {
  if (text == "owned") return Tier::kOwned;
  if (text == "reserved") return Tier::kReserved;
  if (text == "on-demand" || text == "on_demand" || text == "ondemand") return Tier::kOnDemand;
  if (text == "spot") return Tier::kSpot;
  return InvalidArgumentError("unknown tier '" + std::string(text) + "' (owned, reserved, on-demand, spot)");
}

Result<AsRunCost> PriceAsRun(const FleetFile& file, const std::vector<AsRunInterval>& run,
                             const cost::PriceTable& prices, double period_start_s, double period_end_s,
                             std::optional<double> unix_origin_s) {
  std::vector<std::string> types;
  for (const auto& g : file.gpus) types.push_back(g.type);
  SEEDANCE_ASSIGN_OR_RETURN(FleetSpec fleet, BuildFleetSpec(file, types, prices));
  AsRunCost out;
  for (std::size_t i = 0; i < run.size(); ++i) {
    if (!(run[i].end_s >= run[i].start_s)) {
      return InvalidArgumentError("as-run interval " + std::to_string(i) + " (job '" + run[i].job +
                                  "'): ends before it starts");
    }
  }
  if (period_start_s == 0 && period_end_s == 0 && !run.empty()) {
    period_start_s = run.front().start_s;
    period_end_s = run.front().end_s;
    for (const auto& iv : run) {
      period_start_s = std::min(period_start_s, iv.start_s);
      period_end_s = std::max(period_end_s, iv.end_s);
    }
  }
  if (!(period_end_s >= period_start_s)) return InvalidArgumentError("as-run period: end before start");
  out.period_start_s = period_start_s;
  out.period_end_s = period_end_s;
  out.usd_by_pool.assign(fleet.pools.size(), 0.0);
  for (const auto& p : fleet.pools) {
    out.pool_names.push_back(fleet.gpu_types[static_cast<std::size_t>(p.type)] + " " + std::string(TierName(p.tier)));
  }
  // Per pool: (time, +/- GPUs) to check that no more GPUs are held at once than the pool has.
  std::vector<std::vector<std::pair<double, int>>> edges(fleet.pools.size());
  std::vector<double> used_gpu_s(fleet.pools.size(), 0.0);
  for (std::size_t i = 0; i < run.size(); ++i) {
    const AsRunInterval& iv = run[i];
    const std::string where = "as-run interval " + std::to_string(i) + " (job '" + iv.job + "')";
    const std::string type = CanonicalGpuType(iv.gpu_type);
    const auto t = std::find(types.begin(), types.end(), type) - types.begin();
    const int p = t < static_cast<std::ptrdiff_t>(types.size()) ? fleet.FindPool(static_cast<int>(t), iv.tier) : -1;
    if (p < 0) {
      return InvalidArgumentError(where + ": fleet '" + file.name + "' has no " + std::string(TierName(iv.tier)) + " " +
                                  iv.gpu_type + " GPUs");
    }
    if (iv.gpus < 1) return InvalidArgumentError(where + ": gpus " + std::to_string(iv.gpus) + " must be >= 1");
    if (iv.start_s < period_start_s || iv.end_s > period_end_s) {
      return InvalidArgumentError(where + ": outside the period");
    }
    const auto pool = static_cast<std::size_t>(p);
    const PoolSpec& ps = fleet.pools[pool];
    const double gpu_s = iv.gpus * (iv.end_s - iv.start_s);
    used_gpu_s[pool] += gpu_s;
    edges[pool].emplace_back(iv.start_s, iv.gpus);
    edges[pool].emplace_back(iv.end_s, -iv.gpus);
    double usd = gpu_s * ps.usd_per_gpu_hour / 3600.0;
    if (!ps.price.empty()) {
      // At the price in force at each instant: a wall-clock series against the history's clock.
      double shift = 0;
      if (ps.price.origin_unix_s() && unix_origin_s) {
        shift = *unix_origin_s - *ps.price.origin_unix_s();
        if (iv.start_s + shift < 0) {
          return InvalidArgumentError(where + ": spot " + iv.gpu_type + " from " +
                                      std::to_string(static_cast<long long>(*unix_origin_s + iv.start_s)) +
                                      " s after the epoch, before its price series begins (" +
                                      std::to_string(static_cast<long long>(*ps.price.origin_unix_s())) +
                                      " s): the price then is not known");
        }
      }
      usd = ps.Usd(iv.gpus, iv.start_s + shift, iv.end_s + shift);
    }
    auto job = std::find_if(out.usd_by_job.begin(), out.usd_by_job.end(),
                            [&iv](const auto& e) { return e.first == iv.job; });
    if (job == out.usd_by_job.end()) {
      out.usd_by_job.emplace_back(iv.job, usd);
    } else {
      job->second += usd;
    }
    if (ps.committed) continue;  // billed below, used or not
    out.usd_by_pool[pool] += usd;
    (ps.tier == Tier::kSpot ? out.spot_usd : out.on_demand_usd) += usd;
  }
  for (std::size_t p = 0; p < fleet.pools.size(); ++p) {
    const PoolSpec& ps = fleet.pools[p];
    auto& e = edges[p];
    std::sort(e.begin(), e.end());  // at equal times, releases (negative) before acquisitions
    int held = 0;
    for (const auto& [time, delta] : e) {
      held += delta;
      if (held > ps.max_gpus) {
        return InvalidArgumentError("as-run: " + out.pool_names[p] + " holds " + std::to_string(held) + " GPUs at " +
                                    std::to_string(time) + " s; fleet '" + file.name + "' has " +
                                    std::to_string(ps.max_gpus));
      }
    }
    if (!ps.committed) continue;
    const double usd = ps.max_gpus * (period_end_s - period_start_s) * ps.usd_per_gpu_hour / 3600.0;
    out.usd_by_pool[p] = usd;
    out.committed_usd += usd;
    (ps.tier == Tier::kOwned ? out.owned_usd : out.reserved_usd) += usd;
    out.committed_idle_usd += usd - used_gpu_s[p] * ps.usd_per_gpu_hour / 3600.0;
  }
  out.total_usd = out.committed_usd + out.on_demand_usd + out.spot_usd;
  return out;
}

namespace {

// The most GPUs `held` (start, end, GPUs) holds at once at an instant of [s, e) (at s when e <= s).
int MaxHeld(const std::vector<AsRunInterval>& held, double s, double e) {
  int at_s = 0;
  std::vector<std::pair<double, int>> edges;
  for (const AsRunInterval& h : held) {
    const bool overlaps = e > s ? h.start_s < e && s < h.end_s : h.start_s <= s && s < h.end_s;
    if (!overlaps) continue;
    if (h.start_s <= s) {
      at_s += h.gpus;
    } else {
      edges.emplace_back(h.start_s, h.gpus);
    }
    if (h.end_s < e) edges.emplace_back(h.end_s, -h.gpus);
  }
  std::sort(edges.begin(), edges.end());  // at equal times, releases before acquisitions
  int now = at_s, most = at_s;
  for (const auto& [time, delta] : edges) {
    now += delta;
    most = std::max(most, now);
  }
  return most;
}

std::string Gpus(int n) { return std::to_string(n) + (n == 1 ? " GPU" : " GPUs"); }

}  // namespace

Result<std::vector<AsRunInterval>> PlaceAsRun(const FleetFile& file, const std::vector<AsRunJob>& jobs) {
  std::vector<std::size_t> order(jobs.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&jobs](std::size_t a, std::size_t b) { return jobs[a].start_s < jobs[b].start_s; });
  // Per fleet type: its pools in the order a job takes them, with what is placed in each.
  struct Pool {
    Tier tier;
    int gpus;
    std::vector<AsRunInterval> held;
  };
  std::vector<std::vector<Pool>> pools(file.gpus.size());
  for (std::size_t t = 0; t < file.gpus.size(); ++t) {
    const FleetFileGpu& g = file.gpus[t];
    if (g.owned > 0) pools[t].push_back({Tier::kOwned, g.owned, {}});
    if (g.reserved > 0) pools[t].push_back({Tier::kReserved, g.reserved, {}});
    if (g.has_on_demand) pools[t].push_back({Tier::kOnDemand, g.on_demand_quota, {}});
    int spot = 0;
    for (const FleetFileSpot& s : g.spot) spot += s.max_gpus;
    if (spot > 0) pools[t].push_back({Tier::kSpot, spot, {}});
  }
  std::vector<std::vector<AsRunInterval>> placed(jobs.size());
  for (std::size_t i : order) {
    const AsRunJob& job = jobs[i];
    const std::string where = "as-run job '" + job.job + "'";
    if (!(job.end_s >= job.start_s)) return InvalidArgumentError(where + ": ends before it starts");
    if (job.gpus < 1) return InvalidArgumentError(where + ": gpus " + std::to_string(job.gpus) + " must be >= 1");
    const std::string type = CanonicalGpuType(job.gpu_type);
    std::size_t t = 0;
    while (t < file.gpus.size() && file.gpus[t].type != type) ++t;
    if (t == file.gpus.size()) {
      return InvalidArgumentError(where + " ran on " + job.gpu_type + ", a GPU type fleet '" + file.name + "' (" +
                                  file.path + ") does not list: add it to 'gpus'");
    }
    const FleetFileGpu& g = file.gpus[t];
    int need = job.gpus;
    std::string capacity;  // "owned 4, reserved 2, on-demand quota 8" for the error
    for (Pool& pool : pools[t]) {
      if ((pool.tier == Tier::kSpot) != job.spot) continue;
      capacity += (capacity.empty() ? "" : ", ") + std::string(TierName(pool.tier)) +
                  (pool.tier == Tier::kOnDemand ? " quota " : pool.tier == Tier::kSpot ? " max " : " ") +
                  std::to_string(pool.gpus);
      const int take = std::min(need, pool.gpus - MaxHeld(pool.held, job.start_s, job.end_s));
      if (take <= 0) continue;
      AsRunInterval iv{job.job, type, pool.tier, job.start_s, job.end_s, take};
      pool.held.push_back(iv);
      placed[i].push_back(std::move(iv));
      need -= take;
      if (need == 0) break;
    }
    if (need > 0) {
      const std::string fleet = "fleet '" + file.name + "' (" + file.path + ":" + std::to_string(g.line) + ")";
      if (capacity.empty()) {
        return InvalidArgumentError(
            job.spot ? where + " ran on spot " + type + " GPUs; " + fleet + " has no spot pool of " + type
                     : where + " ran on " + type + "; " + fleet + " has only spot pools of it, and the history does not "
                       "say the job ran on spot: give " + type + " owned, reserved or on_demand capacity");
      }
      return InvalidArgumentError(where + " holds " + Gpus(job.gpus) + " of " + type + " from " +
                                  std::to_string(static_cast<long long>(job.start_s)) + " s to " +
                                  std::to_string(static_cast<long long>(job.end_s)) + " s, " + std::to_string(need) +
                                  " more than " + fleet + " has free then (" + capacity +
                                  "): raise its capacity of " + type);
    }
  }
  std::vector<AsRunInterval> out;
  for (auto& p : placed) {
    for (auto& iv : p) out.push_back(std::move(iv));
  }
  return out;
}

}  // namespace seedance::sim
