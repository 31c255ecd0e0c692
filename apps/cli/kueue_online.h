#pragma once

// `seedance bench kueue --online`: Kueue's scheduler-performance baseline (sim/kueue_scenario.h)
// played against a running server's /v1/workloads API in wall time, as Kueue's test runner plays
// it against kube-apiserver: workloads are created on the scenario's schedule (divided by
// `speedup`), each admitted workload runs for its runtime (divided by `speedup`) and is then
// reported finished, an evicted one is reported gone at once (the server requeues it). Every
// decision crosses HTTP on loopback; wall time is measured from the first creation.
// A benchmark driver above both the simulator (the scenario) and the server (the API it plays
// against), so it lives beside the command and not in either library (issue 30).

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/core/status.h"
#include "seedance/sim/kueue_scenario.h"

namespace seedance::cli {

struct KueueOnlineOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string token;     // bearer token for the writes ("" = none)
  double speedup = 1.0;  // 1 = Kueue's real schedule; > 1 compresses creation intervals and runtimes
};

struct KueueOnlineResult {
  std::vector<sim::KueueClassResult> classes;  // admission times in wall seconds, scaled back by speedup
  double wall_s = 0;            // first creation to the last finish, wall clock
  std::int64_t admissions = 0;  // admit decisions (re-admissions included)
  std::int64_t preemptions = 0;
  std::int64_t requests = 0;    // HTTP requests sent
  double request_p50_ms = 0, request_p99_ms = 0;  // round trip of one /v1/workloads request
  double usage_pct = 0;         // Kueue's usage metric over the wall run
};

// The scenario's ClusterQueues as a seedance-config.yaml (server.admission_mode: kueue, the
// tenancy section), so the online server is configured the way a user configures it: by a file.
std::string KueueServerConfigYaml(const sim::KueueScenarioSpec& spec);

// Errors: kUnavailable when the server cannot be reached or answers an error (its message).
Result<KueueOnlineResult> RunKueueOnline(const sim::KueueScenarioSpec& spec, const KueueOnlineOptions& options);

nlohmann::json KueueOnlineJson(const KueueOnlineOptions& options, const KueueOnlineResult& r);

}  // namespace seedance::cli
