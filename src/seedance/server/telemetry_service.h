#pragma once

// The server's telemetry part (issue 14, S6.7, S7, S1.4): ingest (OTLP/HTTP JSON at
// POST /v1/metrics, Prometheus text / OpenMetrics at POST /v1/ingest/prom, configured scrapes),
// the cost breaker acting (GET /v1/breaker, POST /v1/breaker/reset, POST /v1/breaker/evaluate),
// the audit acting (GET /v1/audit, POST /v1/audit/run), the unit cost (GET /v1/unit-cost) and
// GET /v1/cost. MakeTelemetryService(app) (app.h) uses the defaults below.

#include <cstdint>
#include <memory>
#include <string>

#include "seedance/server/app.h"

namespace seedance::server {

struct TelemetryServiceOptions {
  int busy_timeout_ms = 2'000;     // a locked ledger answers 503 after this
  bool background = true;          // run the breaker, audit, unit-cost and scrape loops
  std::string audit_config_path;   // audit YAML (seedance audit's --config); empty = defaults
  std::int64_t max_db_pages = 0;   // caps the ledger file (SQLite pages; a full ledger answers 503)
};

std::unique_ptr<Service> MakeTelemetryService(App& app, TelemetryServiceOptions options);

}  // namespace seedance::server
