#pragma once

// What the server's telemetry part computes from the ledger, as plain functions over one Ledger
// connection (the caller serializes): the cost breaker's evaluation (S6.7), the audit's node
// verdicts (S7), the unit cost (S1.4) and the cost report of GET /v1/cost. Each runs the same
// library steps as the CLI (AttributeStoredTelemetry, Attribute, JobHours, EvaluateBreaker,
// AuditFleet + ApplyAudit).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/audit/admission.h"
#include "seedance/audit/audit.h"
#include "seedance/core/status.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/config.h"
#include "seedance/ledger/ledger.h"
#include "seedance/server/boards.h"
#include "seedance/server/config.h"

namespace seedance::server {

inline constexpr std::int64_t kHourMs = 3'600'000;

// The ledger config the server attributes with: defaults (tenant = namespace), the breaker's job
// thresholds from the server config.
ledger::LedgerConfig LedgerConfigOf(const ServerConfig& config);

// One crossing found by the breaker.
struct BreakerCrossing {
  BreakerTrip trip;      // reason filled, tripped_ms/until_ms set
  std::int64_t hour_ms = 0;
  Money cost;
  Money threshold;
};

// Evaluates namespace and job hourly cost over the last full hour and the current one
// (at `now_ms`) against the config's thresholds. A namespace threshold is
// breaker_namespaces[ns], else breaker_default_hourly; a job threshold is breaker_jobs[job].
// The reason is "<scope> <key>: hourly cost $X > threshold $Y: <diagnosis>; suggestion: <...>",
// the diagnosis and suggestion from ledger::EvaluateBreaker (for a namespace: of its most
// expensive job in that hour). Ordered by (scope, key, hour).
Result<std::vector<BreakerCrossing>> EvaluateBreakerOnline(ledger::Ledger& ledger,
                                                           const ServerConfig& config,
                                                           const cost::PriceTable& catalog,
                                                           std::int64_t now_ms);

// The audit over every stored sample, as `seedance audit run --db` runs it, applied to
// `admission` (nodes first seen start admitted: they already run work in the cluster; an
// incomplete audit leaves a node that was never graded as it is). Returns
// each audited node's health for the HealthBoard: state, reason (the transition's or the
// verdict's evidence), grade weight normalized to the grade table's best weight.
Result<std::map<std::string, NodeHealth>> RunAuditOnline(ledger::Ledger& ledger,
                                                         const audit::AuditConfig& config,
                                                         audit::AdmissionLedger& admission,
                                                         std::int64_t now_ms);

// S1.4: C_unit = (C_total + C_opex) / effective TFLOPS x w_cooling x w_sla over [now - period,
// now), in USD per TFLOPS-hour. C_total: the ledger's bill of the period (per hour); effective
// TFLOPS: sum over the GPUs' held hours of catalog dense FP16 tensor peak x measured
// utilization, per hour of the period; w_cooling = 1 + 0.32 min(cooling$/100, 1);
// w_sla = 1 + 2.1 breach_rate.
struct UnitCost {
  std::int64_t from_ms = 0, to_ms = 0;
  double total_usd_per_hour = 0;
  double opex_usd_per_hour = 0;
  double cooling_usd_per_hour = 0;
  double effective_tflops = 0;
  double breach_rate = 0;
  double w_cooling = 1, w_sla = 1;
  double usd_per_tflops_hour = 0;  // 0 when no effective TFLOPS was measured
  nlohmann::json ToJson() const;
};
Result<UnitCost> ComputeUnitCost(ledger::Ledger& ledger, const ServerConfig& config,
                                 const cost::PriceTable& catalog, double breach_rate,
                                 std::int64_t now_ms);

// GET /v1/cost: the ledger's attribution by tenant, namespace or node over [from, to), as JSON
// {"by","from","to","rows":[{key,cost_usd,cost_micro_usd,gpu_hours}],"reconciliation":{...}}.
Result<nlohmann::json> CostReport(ledger::Ledger& ledger, const ServerConfig& config,
                                  const cost::PriceTable& catalog, ledger::Dimension by,
                                  std::int64_t from_ms, std::int64_t to_ms);

}  // namespace seedance::server
