#pragma once

#include <cstdint>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "seedance/core/status.h"
#include "seedance/cost/node_pool.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/config.h"
#include "seedance/ledger/focus.h"
#include "seedance/ledger/ledger.h"
#include "seedance/ledger/rightsize.h"
#include "seedance/ledger/telemetry_attribution.h"

namespace seedance::cli {

// Options every ledger command shares (attribute, export focus, breaker, advise).
struct LedgerOptions {
  std::string db;
  std::string config;
  std::string prices;
  std::string from;
  std::string to;
  std::string step;  // --step: the attribution step (5m, 60s); must agree with --config step_seconds
  bool allow_unpriced = false;
  std::string fleet;  // a fleet file whose node pools price every node (docs/FLEET_FILE.md)
};
// --db (required), --config, --prices, --fleet, --from, --to, --step, --allow-unpriced.
void AddLedgerOptions(CLI::App* cmd, LedgerOptions& o);
// The same without --db and --fleet (a command that adds its own).
void AddLedgerOptionsWithoutDb(CLI::App* cmd, LedgerOptions& o);

// --step into `config`: its step when given (whole seconds); an error when --config's file states
// another step_seconds (one fact, two statements: never one silently over the other).
Status ApplyStep(const LedgerOptions& o, ledger::LedgerConfig& config);

// An opened ledger with its charges brought up to date from telemetry.
struct Prepared {
  std::unique_ptr<ledger::Ledger> ledger;
  ledger::LedgerConfig config;
  cost::PriceTable catalog;
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
  bool has_telemetry = false;
  ledger::TelemetryAttribution telemetry;
  // With --fleet: the file's node pools, each ledger node's pool (an index into pools) and
  // FOCUS's provider per node.
  std::string fleet_path;
  std::string fleet_name;
  std::vector<cost::NodePool> pools;
  std::map<std::string, std::size_t> node_pool;
  ledger::FocusNodes focus_nodes;
  // Where the prices came from, the first line of every priced output ("prices: ...").
  std::string price_source;
};
// With o.fleet every node of the ledger's GPU samples is priced by the file's node pools (by its
// kube_node_labels labels and its name); a node no pool matches, a node whose GPUs are not its
// pool's type, and a fleet file without node_pools are errors naming them.
// Errors: kInvalidArgument / kNotFound for bad options or a missing ledger (exit 2), and
// kInvalidArgument naming the GPU types when telemetry in the range is on a GPU type without a
// price (unless allow_unpriced: then those GPUs are left out and UnpricedNote() says so).
Result<Prepared> Prepare(const LedgerOptions& o);

// The node pools of --fleet as breaker and advise read them; null without --fleet.
Result<std::unique_ptr<ledger::FleetPools>> FleetPoolsOf(const Prepared& p);

// "" when every GPU step was priced, else "unpriced GPU types left out (--allow-unpriced): T (N
// GPU steps)" for the report.
std::string UnpricedNote(const Prepared& p);

}  // namespace seedance::cli
