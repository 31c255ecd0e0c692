#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "seedance/core/status.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/config.h"
#include "seedance/ledger/ledger.h"
#include "seedance/ledger/telemetry_attribution.h"

namespace seedance::cli {

// Options every ledger command shares (attribute, export focus, breaker, advise).
struct LedgerOptions {
  std::string db;
  std::string config;
  std::string prices;
  std::string from;
  std::string to;
  bool allow_unpriced = false;
};
// --db (required), --config, --prices, --from, --to, --allow-unpriced.
void AddLedgerOptions(CLI::App* cmd, LedgerOptions& o);
// The same without --db (a command that adds its own).
void AddLedgerOptionsWithoutDb(CLI::App* cmd, LedgerOptions& o);

// An opened ledger with its charges brought up to date from telemetry.
struct Prepared {
  std::unique_ptr<ledger::Ledger> ledger;
  ledger::LedgerConfig config;
  cost::PriceTable catalog;
  std::int64_t from_ms = 0;
  std::int64_t to_ms = 0;
  bool has_telemetry = false;
  ledger::TelemetryAttribution telemetry;
};
// Errors: kInvalidArgument / kNotFound for bad options or a missing ledger (exit 2), and
// kInvalidArgument naming the GPU types when telemetry in the range is on a GPU type without a
// price (unless allow_unpriced: then those GPUs are left out and UnpricedNote() says so).
Result<Prepared> Prepare(const LedgerOptions& o);

// "" when every GPU step was priced, else "unpriced GPU types left out (--allow-unpriced): T (N
// GPU steps)" for the report.
std::string UnpricedNote(const Prepared& p);

}  // namespace seedance::cli
