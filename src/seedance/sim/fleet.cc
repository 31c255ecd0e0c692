#include "seedance/sim/fleet.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace seedance::sim {

std::string_view TierName(Tier tier) {
  switch (tier) {
    case Tier::kOwned: return "owned";
    case Tier::kOnDemand: return "on-demand";
    case Tier::kSpot: return "spot";
    case Tier::kReserved: return "reserved";
  }
  return "?";
}

SpotSeries::SpotSeries(double gap_s, std::vector<int> instances, int gpus_per_instance)
    : gap_s_(gap_s), gpus_per_instance_(gpus_per_instance), instances_(std::move(instances)) {
  std::size_t drops = 0;
  for (std::size_t k = 1; k < instances_.size(); ++k) drops += instances_[k] < instances_[k - 1];
  double span = gap_s_ * static_cast<double>(instances_.size());
  mtbf_s_ = drops == 0 ? span : span / static_cast<double>(drops);
}

Result<SpotSeries> SpotSeries::LoadFile(const std::string& path, int gpus_per_instance) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open spot series");
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return InvalidArgumentError(path + ": not a JSON object");
  }
  if (!doc.contains("metadata") || !doc["metadata"].is_object() ||
      !doc["metadata"].contains("gap_seconds") || !doc["metadata"]["gap_seconds"].is_number()) {
    return InvalidArgumentError(path + ": field 'metadata.gap_seconds': missing or not a number");
  }
  double gap = doc["metadata"]["gap_seconds"].get<double>();
  if (!(gap > 0)) return InvalidArgumentError(path + ": field 'metadata.gap_seconds': must be > 0");
  if (!doc.contains("data") || !doc["data"].is_array() || doc["data"].empty()) {
    return InvalidArgumentError(path + ": field 'data': missing, empty or not an array");
  }
  std::vector<int> values;
  values.reserve(doc["data"].size());
  std::size_t i = 0;
  for (const auto& v : doc["data"]) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > 1000000) {
      return InvalidArgumentError(path + ": field 'data[" + std::to_string(i) +
                                  "]': expected a non-negative integer");
    }
    values.push_back(static_cast<int>(v.get<std::int64_t>()));
    ++i;
  }
  return SpotSeries(gap, std::move(values), gpus_per_instance);
}

Result<SpotSeries> SpotSeries::Sum(const std::vector<SpotSeries>& parts) {
  if (parts.empty()) return InvalidArgumentError("no spot series to sum");
  std::size_t n = parts[0].ticks();
  for (const auto& p : parts) {
    if (p.gap_s() != parts[0].gap_s()) return InvalidArgumentError("spot series gaps differ");
    n = std::min(n, p.ticks());
  }
  std::vector<int> sum(n, 0);
  for (const auto& p : parts) {
    for (std::size_t k = 0; k < n; ++k) sum[k] += p.instances_[k] * p.gpus_per_instance_;
  }
  return SpotSeries(parts[0].gap_s(), std::move(sum), 1);
}

int SpotSeries::AvailableAt(double t) const {
  if (instances_.empty()) return 0;
  auto tick = static_cast<std::size_t>(std::max(0.0, std::floor(t / gap_s_)));
  return instances_[tick % instances_.size()] * gpus_per_instance_;
}

double SpotSeries::NextChangeAfter(double t) const {
  return (std::floor(t / gap_s_) + 1.0) * gap_s_;
}

double SpotSeries::AvailabilityFraction(int gpus) const {
  if (instances_.empty()) return 0;
  std::size_t ok = 0;
  for (int v : instances_) ok += v * gpus_per_instance_ >= gpus;
  return static_cast<double>(ok) / static_cast<double>(instances_.size());
}

int FleetSpec::FindPool(int type, Tier tier) const {
  for (std::size_t i = 0; i < pools.size(); ++i) {
    if (pools[i].type == type && pools[i].tier == tier) return static_cast<int>(i);
  }
  return -1;
}

Status FleetSpec::Validate() const {
  if (gpu_types.empty()) return InvalidArgumentError(name + ": fleet has no GPU types");
  if (pools.empty()) return InvalidArgumentError(name + ": fleet has no pools");
  for (const auto& p : pools) {
    if (p.type < 0 || p.type >= static_cast<int>(gpu_types.size())) {
      return InvalidArgumentError(name + ": pool with an unknown GPU type");
    }
    if (p.max_gpus <= 0) return InvalidArgumentError(name + ": pool with no GPUs");
    if (!(p.usd_per_gpu_hour >= 0)) return InvalidArgumentError(name + ": negative price");
    if (p.tier == Tier::kReserved && !p.committed) {
      return InvalidArgumentError(name + ": a reserved pool is paid whether used or not (committed)");
    }
  }
  if (cold_start_s < 0 || restart_s < 0 || checkpoint_cost_s < 0 || scale_down_delay_s < 0) {
    return InvalidArgumentError(name + ": negative time constant");
  }
  return Status::Ok();
}

double FleetInfo::ColdStartIdleUsd(double seconds) const {
  return seconds * (host_cores_per_gpu * usd_per_core_s + host_gib_per_gpu * usd_per_gib_s);
}

}  // namespace seedance::sim
