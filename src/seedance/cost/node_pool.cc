#include "seedance/cost/node_pool.h"

#include <fnmatch.h>

#include <fmt/format.h>

#include <algorithm>

namespace seedance::cost {

std::string_view PoolKindName(PoolKind k) {
  switch (k) {
    case PoolKind::kOwned: return "owned";
    case PoolKind::kReserved: return "reserved";
    case PoolKind::kOnDemand: return "on-demand";
    case PoolKind::kSpot: return "spot";
  }
  return "on-demand";
}

std::string SanitizeLabelName(std::string_view key) {
  if (key.starts_with("label_")) key.remove_prefix(6);
  std::string out(key);
  for (char& c : out) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    if (!keep) c = '_';
  }
  return out;
}

bool MatchesNode(const NodeMatch& match, const NodeFacts& node) {
  if (match.empty()) return false;
  if (!match.node_name.empty() && fnmatch(match.node_name.c_str(), node.name.c_str(), 0) != 0) return false;
  if (!match.partition.empty() && match.partition != node.partition) return false;
  for (const auto& [key, want] : match.labels) {
    const std::string k = SanitizeLabelName(key);
    bool found = false;
    for (const auto& [nk, nv] : node.labels) {
      if (SanitizeLabelName(nk) != k) continue;
      found = want == "*" || nv == want;
      break;
    }
    if (!found) return false;
  }
  return true;
}

Result<const NodePool*> FindNodePool(std::span<const NodePool> pools, const NodeFacts& node,
                                     std::string_view source) {
  for (const NodePool& p : pools) {
    if (MatchesNode(p.match, node)) return &p;
  }
  std::string labels;
  for (const auto& [k, v] : node.labels) labels += fmt::format("{}{}={}", labels.empty() ? "" : ", ", k, v);
  return InvalidArgumentError(fmt::format(
      "node '{}' matches no node pool of {} (labels: {}; partition: {}); add a pool whose match holds for it "
      "(node_pools[].match: labels, node_name or partition)",
      node.name, source, labels.empty() ? "none known" : labels, node.partition.empty() ? "none" : node.partition));
}

Result<PriceTable> RentedPoolPrices(std::span<const NodePool> pools, const std::string& name) {
  std::map<std::string, double> cheapest;
  for (const NodePool& p : pools) {
    if (IsCommitted(p.kind)) continue;
    auto [it, fresh] = cheapest.emplace(p.gpu_type, p.usd_per_gpu_hour);
    if (!fresh) it->second = std::min(it->second, p.usd_per_gpu_hour);
  }
  if (cheapest.empty()) return PriceTable();
  std::string csv = "gpu_model,usd_per_gpu_hour_on_demand,source\n";
  for (const auto& [type, usd] : cheapest) csv += fmt::format("{},{:.6f},the fleet's cheapest rented pool\n", type, usd);
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::Parse(name, std::move(csv)));
  return PriceTable::FromCsv(t);
}

}  // namespace seedance::cost
