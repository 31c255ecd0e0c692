#include "seedance/ledger/node_inventory.h"

#include "seedance/ledger/internal/sqlite.h"

namespace seedance::ledger {

using internal::Stmt;

std::vector<std::pair<std::string, std::string>> KeyLabels(const std::string& key) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = key.find('{');
  if (i == std::string::npos) return out;
  ++i;
  while (i < key.size() && key[i] != '}') {
    const std::size_t eq = key.find("=\"", i);
    if (eq == std::string::npos) break;
    std::string name = key.substr(i, eq - i);
    std::string value;
    std::size_t j = eq + 2;
    for (; j < key.size() && key[j] != '"'; ++j) {
      if (key[j] == '\\' && j + 1 < key.size()) {
        ++j;
        value += key[j] == 'n' ? '\n' : key[j];
      } else {
        value += key[j];
      }
    }
    out.emplace_back(std::move(name), std::move(value));
    i = j + 1;
    if (i < key.size() && key[i] == ',') ++i;
  }
  return out;
}

Result<std::vector<LedgerNode>> LedgerNodes(Ledger& ledger) {
  SEEDANCE_RETURN_IF_ERROR(ledger.Flush());
  std::map<std::string, LedgerNode> nodes;
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      ledger.db(), "SELECT DISTINCT hostname, model FROM series WHERE gpu_uuid<>'' ORDER BY 1, 2"));
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    std::string host = st.Text(0);
    if (host.empty()) host = "unknown-node";  // as AttributeTelemetry names it
    LedgerNode& n = nodes[host];
    n.name = host;
    if (const std::string model = st.Text(1); !model.empty()) n.models.insert(model);
  }
  Stmt lb;
  SEEDANCE_RETURN_IF_ERROR(lb.Prepare(ledger.db(), "SELECT key FROM series WHERE metric='kube_node_labels' ORDER BY id"));
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, lb.Step());
    if (!row) break;
    const auto labels = KeyLabels(lb.Text(0));
    std::string node;
    for (const auto& [k, v] : labels) {
      if (k == "node") node = v;
    }
    auto it = nodes.find(node);
    if (it == nodes.end()) continue;  // a node without GPU samples costs nothing here
    for (const auto& [k, v] : labels) {
      if (k.starts_with("label_")) it->second.labels[k] = v;
    }
  }
  std::vector<LedgerNode> out;
  for (auto& [name, n] : nodes) out.push_back(std::move(n));
  return out;
}

Result<std::vector<NodeTotal>> NodeTotals(Ledger& ledger, std::int64_t from_ms, std::int64_t to_ms) {
  SEEDANCE_RETURN_IF_ERROR(ledger.Flush());
  std::map<std::string, NodeTotal> by;
  Stmt b;
  SEEDANCE_RETURN_IF_ERROR(b.Prepare(ledger.db(), "SELECT n.name, SUM(b.bill_micro) FROM bills b JOIN nodes n ON n.id=b.node_id "
                                                  "WHERE b.start_ms>=?1 AND b.start_ms<?2 GROUP BY 1"));
  b.Bind(1, from_ms);
  b.Bind(2, to_ms);
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, b.Step());
    if (!row) break;
    NodeTotal& t = by[b.Text(0)];
    t.node = b.Text(0);
    t.bill = MicroUsd(b.Int(1));
  }
  Stmt c;
  SEEDANCE_RETURN_IF_ERROR(c.Prepare(ledger.db(), "SELECT n.name, SUM(c.cost_micro), SUM(c.gpu_ms) FROM charges c JOIN nodes n "
                                                  "ON n.id=c.node_id WHERE c.kind=1 AND c.workload_id=0 AND "
                                                  "c.start_ms>=?1 AND c.start_ms<?2 GROUP BY 1"));
  c.Bind(1, from_ms);
  c.Bind(2, to_ms);
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, c.Step());
    if (!row) break;
    NodeTotal& t = by[c.Text(0)];
    t.node = c.Text(0);
    t.idle = MicroUsd(c.Int(1));
    t.idle_gpu_ms = c.Int(2);
  }
  std::vector<NodeTotal> out;
  for (auto& [name, t] : by) out.push_back(std::move(t));
  return out;
}

}  // namespace seedance::ledger
