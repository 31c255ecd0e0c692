#pragma once

// The server's configuration: seedance-config.yaml's `tenancy:` section (tenancy::TenancyConfig)
// and its `server:` section below. Without a file the server runs on Defaults(): one tenant
// ("default", Gold, no quota limit), the bundled price table, bestfit placement, seed 0.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/core/units.h"
#include "seedance/tenancy/tiers.h"

namespace seedance::server {

struct ScrapeTarget {
  std::string name;      // label attached to what it yields ("dcgm-node-1")
  std::string url;       // http://host:port/metrics (text) or http://host:port (Prometheus API)
  std::string kind;      // "exposition" (dcgm-exporter or any /metrics) | "prometheus" (query_range)
  std::string query;     // kind == prometheus: the PromQL expression
  std::int64_t interval_ms = 15'000;
};

// Caps on what requests can make the server hold or spend (docs/SECURITY.md). Read at start; the
// HTTP ones (headers, connections) are not changed by a reload.
struct ServerLimits {
  std::size_t header_bytes = 64 << 10;       // request line + headers of one request; 431 above
  std::size_t header_count = 100;            // header fields of one request; 431 above
  std::int64_t header_timeout_ms = 10'000;   // the whole header section must arrive within; 408 after
  std::int64_t request_timeout_ms = 30'000;  // headers and body of one request must arrive within; 408 after
  std::size_t connections_per_client = 16;   // open connections per client address; more are closed
  std::size_t decision_log_bytes = 64 << 20; // GET /v1/decisions' log (estimated bytes); oldest pods go first
  std::size_t seen_pod_bytes = 64 << 20;     // pods filtered but not bound, kept for bind; oldest go first
  std::size_t max_series = 500'000;          // distinct telemetry series in the ledger; 413 past it
  // Candidates (NodeNames / Nodes) per extender request: at most max(2 x the nodes known, this);
  // 413 naming the field above, counted before any per-name structure is built.
  std::size_t candidates_floor = 5'000;
};

struct ServerConfig {
  std::string source;  // file the config came from ("<defaults>" when none)

  tenancy::TenancyConfig tenancy;
  // How /v1/workloads admits (tenancy::ParseTenancyMode: strict | borrowing | seedance | kueue).
  std::string admission_mode = "seedance";
  // Live (pending, admitted, evicting) workloads /v1/workloads tracks in memory; a submission
  // past it is refused with 429. Finished and withdrawn ones leave memory (they stay in the ledger).
  std::int64_t admission_max_workloads = 100'000;

  // Placement (the same factory and seed as `bench packing`).
  std::string placement_policy = "bestfit";
  std::uint64_t seed = 0;

  // Cost breaker (S6.7): hourly thresholds per namespace and per job (0 = not watched).
  Money breaker_default_hourly;
  std::map<std::string, Money> breaker_namespaces;
  std::map<std::string, Money> breaker_jobs;
  std::int64_t breaker_cooldown_ms = 3'600'000;  // a trip clears by itself after this (0 = reset only)
  std::int64_t breaker_interval_ms = 60'000;     // how often the breaker evaluates the ledger

  // Audit (S7): how often the audit re-grades nodes from ingested telemetry.
  std::int64_t audit_interval_ms = 300'000;

  // Unit cost (S1.4): recalibration period and its inputs.
  std::int64_t unit_cost_period_ms = 900'000;
  double cooling_usd_per_hour = 0;  // C_cooling for w_cooling = 1 + 0.32 min(cooling/100, 1)
  double opex_usd_per_hour = 0;     // C_opex

  std::vector<ScrapeTarget> scrape;

  // The Kubernetes API server that /extender/bind creates Bindings in (kube-scheduler's bindVerb
  // delegates binding to the extender). Empty: bind only records the placement (tests, dry runs).
  // In a pod: https://kubernetes.default.svc with the service account's token and CA.
  std::string kube_api_url;
  std::string kube_token_file;  // bearer token (first line), e.g. /var/run/secrets/kubernetes.io/serviceaccount/token
  std::string kube_ca_file;     // CA bundle that signed the API server's certificate
  // A kubeconfig whose current context the server watches Nodes and Pods through
  // (cluster_watch.h); `seedance server --kubeconfig` overrides it. Empty: in-cluster
  // credentials when KUBERNETES_SERVICE_HOST is set, else no watch (POST /v1/nodes|pods only).
  std::string kubeconfig;

  ServerLimits limits;  // server.limits

  // kube-scheduler's full-node mode (nodeCacheCapable: false: whole v1.Node objects in every
  // filter, echoed back). Off unless configured (server.extender_full_nodes: true): an anonymous
  // request then carries megabytes of JSON the server parses and copies.
  bool extender_full_nodes = false;
  // Decide at filter (server.extender_decide_at_filter): when two or more candidates pass, the
  // filter runs the placement policy's pick over them (the node prioritize would score 10),
  // reserves it and answers only that node, so kube-scheduler, left with one feasible node, skips
  // its score phase and the prioritize call (one round trip per pod). Other score plugins' soft
  // preferences then no longer blend into the choice for the pods Seedance serves. Off unless
  // configured; deploy/ turns it on (docs/KUBERNETES.md).
  bool extender_decide_at_filter = false;

  // Errors: kNotFound (cannot open), kInvalidArgument naming file:line and the key.
  static Result<ServerConfig> LoadFile(const std::string& path);
  static Result<ServerConfig> Parse(const std::string& name, const std::string& yaml_text);
  static ServerConfig Defaults();
};

}  // namespace seedance::server
