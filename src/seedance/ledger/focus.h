#pragma once

#include <map>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/ledger/ledger.h"

namespace seedance::ledger {

// FinOps FOCUS 1.2 export (docs/PROTOCOLS.md 1.4): one row per (hour, node, charge kind, workload).
// Mandatory columns with their formats: decimals in plain notation (6 places), Date/Time as
// YYYY-MM-DDTHH:mm:ssZ (UTC; ChargePeriodEnd exclusive), ChargeCategory "Usage", ChargeClass
// null, BillingCurrency "USD", Tags a JSON object string; our own columns use the x_ prefix
// (x_ChargeKind, x_Tenant, x_Namespace, x_Pod, x_BusinessUnit, x_TaskType, x_DataSource,
// x_SlaTier, x_Job). The billing period is the calendar month (UTC) of the charge.
const std::vector<std::string>& FocusColumns();

// Who bills a node (issue 38: a fleet file's node pools): ProviderName, PublisherName and
// InvoiceIssuerName, and the pool and its kind in Tags (`node_pool`, `capacity`).
struct FocusNode {
  std::string provider;
  std::string pool;
  std::string capacity;  // owned, reserved, on-demand, spot
};
using FocusNodes = std::map<std::string, FocusNode>;  // by node name

// Returns the CSV text (header + rows) for charges with start in [from, to). A node in `nodes`
// is billed by its provider; without `nodes` (or a node not in it) the provider is "OnPrem".
Result<std::string> FocusCsv(Ledger& ledger, std::int64_t from_ms, std::int64_t to_ms,
                             const FocusNodes* nodes = nullptr);

// Writes FocusCsv atomically to `path` (nothing is written on error).
Status ExportFocus(Ledger& ledger, std::int64_t from_ms, std::int64_t to_ms,
                   const std::string& path, const FocusNodes* nodes = nullptr);

// Micro-USD as a plain decimal with 6 places ("12.400000", "-0.000001").
std::string DecimalUsd(Money m);

}  // namespace seedance::ledger
