#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/core/units.h"
#include "seedance/ledger/ledger.h"

// The nodes a ledger knows (issue 38): the ones GPU samples name (dcgm-exporter's Hostname), each
// with its GPU models and its labels from kube-state-metrics' kube_node_labels (`label_*`), so
// that a fleet file's node pools (cost/node_pool.h) can price every node.
namespace seedance::ledger {

// Every label of a series key `metric{a="x",b="y"}` (escapes undone), in key order.
std::vector<std::pair<std::string, std::string>> KeyLabels(const std::string& key);

struct LedgerNode {
  std::string name;
  std::set<std::string> models;               // dcgm modelName values of its GPUs
  std::map<std::string, std::string> labels;  // kube_node_labels' labels, `label_` prefix kept
};

// The nodes of the ledger's GPU series, sorted by name.
Result<std::vector<LedgerNode>> LedgerNodes(Ledger& ledger);

// A node's bill and idle part over [from, to) (bills and idle charges starting in the range).
struct NodeTotal {
  std::string node;
  Money bill;
  Money idle;               // idle charges not shared out
  std::int64_t idle_gpu_ms = 0;
};
Result<std::vector<NodeTotal>> NodeTotals(Ledger& ledger, std::int64_t from_ms, std::int64_t to_ms);

}  // namespace seedance::ledger
