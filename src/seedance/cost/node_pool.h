#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/cost/price_table.h"

// Node pools (issue 38, docs/FLEET_FILE.md `node_pools`): which nodes are paid how. A pool maps
// nodes to a GPU type, a kind (owned, reserved, on-demand, spot), a price per GPU-hour and the
// provider that bills them, by node label (kube-state-metrics' kube_node_labels, as written or
// sanitized: `karpenter.sh/capacity-type` and `label_karpenter_sh_capacity_type` are one label),
// by node-name pattern (`*`, `?`, `[...]` as in a shell) and by Slurm partition. A node takes the
// first pool, in file order, all of whose criteria it meets; a node that meets none is an error
// naming it, never a list price. The fleet file parses pools (sim/fleet_file.h); the ledger
// commands and `export workload` price every node by them.
namespace seedance::cost {

enum class PoolKind { kOwned, kReserved, kOnDemand, kSpot };

std::string_view PoolKindName(PoolKind k);  // "owned", "reserved", "on-demand", "spot"
// Committed capacity: paid for the window whatever runs (owned, reserved).
inline bool IsCommitted(PoolKind k) { return k == PoolKind::kOwned || k == PoolKind::kReserved; }

struct NodeMatch {
  std::vector<std::pair<std::string, std::string>> labels;  // every one must hold; value "*": any value
  std::string node_name;                                     // a shell pattern; "" = any name
  std::string partition;                                     // a Slurm partition; "" = any
  bool empty() const { return labels.empty() && node_name.empty() && partition.empty(); }
};

struct NodePool {
  std::string name;
  std::string gpu_type;  // canonical catalog name
  PoolKind kind = PoolKind::kOnDemand;
  double usd_per_gpu_hour = 0;  // resolved (sim::ResolveNodePools)
  std::string price_source;     // where the price came from, for the output
  std::string provider;         // FOCUS ProviderName
  // Owned / reserved: what powering an idle GPU down saves per hour, as the user states it
  // (0: not stated; idle committed capacity then saves no cash, it is opportunity).
  double power_down_usd_per_gpu_hour = 0;
  // Owned: the power and cooling part of the TCO price (what a GPU-hour costs at the margin).
  double power_usd_per_gpu_hour = 0;
  NodeMatch match;
  int line = 0;  // in the fleet file
};

// What is known of one node: its name, labels (any spelling) and Slurm partition.
struct NodeFacts {
  std::string name;
  std::map<std::string, std::string> labels;
  std::string partition;
};

// `karpenter.sh/capacity-type` -> `karpenter_sh_capacity_type` (kube-state-metrics' form without
// its `label_` prefix): the spelling label keys are compared in.
std::string SanitizeLabelName(std::string_view key);

bool MatchesNode(const NodeMatch& match, const NodeFacts& node);

// The first pool of `pools` that `node` matches. kInvalidArgument naming the node, its labels and
// partition, and `source` (the fleet file) when none does.
Result<const NodePool*> FindNodePool(std::span<const NodePool> pools, const NodeFacts& node,
                                     std::string_view source);

// The GPU types a fleet rents (on-demand and spot pools), each at its cheapest rented pool's
// price, as a price table named `name`: what breaker and advise may suggest moving rented work to
// (never a GPU the fleet has no pool of). Empty when the fleet rents nothing.
Result<PriceTable> RentedPoolPrices(std::span<const NodePool> pools, const std::string& name);

}  // namespace seedance::cost
