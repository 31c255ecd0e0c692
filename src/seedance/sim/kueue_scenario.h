#pragma once

// `seedance bench kueue`: Kueue's scheduler-performance "baseline" scenario
// (kubernetes-sigs/kueue test/performance/scheduler/configs/baseline, read at ff69552e; summary in
// shared/KUEUE_SCENARIO.md) regenerated workload by workload and decided by tenancy::Admitter in
// TenancyMode::kKueue (reclaimWithinCohort Any, withinClusterQueue LowerPriority, BestEffortFIFO,
// classical ordering, scheduling-equivalence hashing). A discrete-event loop in simulated
// microseconds plays Kueue's test runner: a workload runs for its runtime from admission, finishing
// frees its quota at once, an evicted workload is released at once and reruns its full runtime
// when admitted again. Nothing here reads a wall clock; the CPU time of the loop is measured only
// through an injected function.

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/tenancy/admission.h"
#include "seedance/tenancy/tiers.h"

namespace seedance::sim {

// One workload set of a ClusterQueue (Kueue's WorkloadsSet with its one template).
struct KueueClassSpec {
  std::string name;        // "small", "medium", "large"
  int count_per_cq = 0;    // workloads per ClusterQueue
  int interval_ms = 0;     // creationIntervalMs: waited BEFORE each create
  double request_cpu = 0;  // cores
  int runtime_ms = 0;      // run time from admission (the runner's running-ms label)
  int priority = 0;        // spec.priority
};

// The topology and the classes. Defaults are the baseline config's (generator.yaml).
struct KueueScenarioSpec {
  int cohorts = 5;
  int queues_per_cohort = 6;
  double nominal_cpu = 20;
  double borrowing_limit_cpu = 100;
  std::vector<KueueClassSpec> classes = {
      {"small", 350, 100, 1, 200, 50},
      {"medium", 100, 500, 5, 500, 100},
      {"large", 50, 1200, 20, 1000, 200},
  };
  // Returns kInvalidArgument naming the bad field.
  Status Validate() const;
};

// One generated workload. ids are dense (0..n-1) in generation order (cohort, queue, class, i),
// and are the last tie-break everywhere (Kueue breaks ties on UID).
struct KueueWorkload {
  std::int64_t id = 0;
  std::string name;          // "<class>-<setIdx>-<i>-0", in namespace cq_name
  int cq = 0;                // ClusterQueue index (cohort-major)
  int klass = 0;             // index into spec.classes
  std::int64_t created_us = 0;
  std::int64_t runtime_us = 0;
};

// "cq-0-<q>-cohort-<c>" for ClusterQueue index cq = c * queues_per_cohort + q.
std::string KueueCqName(const KueueScenarioSpec& spec, int cq);
// Every workload, ordered by id. Arrival of the i-th (0-based) of a set: (i + 1) x interval.
std::vector<KueueWorkload> GenerateKueueWorkloads(const KueueScenarioSpec& spec);

struct KueueRunOptions {
  // kKueue (the performance test's configuration) or one of the Fair Sharing modes (issue 29:
  // Kueue with Fair Sharing on, reclaimWithinCohort LowerPriority; tenancy/admission.h).
  tenancy::TenancyMode mode = tenancy::TenancyMode::kKueue;
  // A model of the API bound, not a fit: when > 0, every admission and eviction status write
  // passes a token bucket of api_qps writes/s and api_burst tokens (minimalkueue's client: 50 QPS,
  // burst 100), in decision order. Quota is reserved at the decision; the workload counts as
  // admitted (and starts its runtime) when its write passes; an evicted one is released when its
  // write passes. 0: writes are free (the scheduler's decisions alone).
  double api_qps = 0;
  double api_burst = 100;
  // Optional: process CPU seconds (e.g. std::clock() / CLOCKS_PER_SEC), read before and after the
  // event loop. Unset: no timing is reported.
  std::function<double()> cpu_clock;
};

struct KueueClassResult {
  std::string name;
  int count = 0;
  double mean_admission_s = 0;  // mean over the class of (last admission - creation)
  double p99_admission_s = 0;   // nearest rank
  double mean_finish_s = 0;     // mean of (finish - creation)
  std::int64_t evictions = 0;   // summed over the class's workloads (Kueue's TotalEvictions)
};

struct KueueWorkloadOutcome {
  std::int64_t last_admitted_us = -1;
  std::int64_t finished_us = -1;
  int admissions = 0;
  int evictions = 0;
};

struct KueueResult {
  std::vector<KueueClassResult> classes;  // spec order
  // Kueue's CQ-class usage: integral over time of the CQs' summed quota usage, over
  // (sum of nominal quotas x elapsed); elapsed from generation start (the CQs exist, usage 0) to
  // the last usage change.
  double usage_pct = 0;
  std::int64_t preemptions = 0;  // evictions issued
  std::int64_t admissions = 0;   // admission decisions (re-admissions included)
  std::int64_t cycles = 0;       // Admitter scheduling passes
  double end_s = 0;              // simulated time of the last event
  std::vector<KueueWorkloadOutcome> workloads;  // by id
  bool timed = false;            // cpu_clock was set
  double cpu_seconds = 0;        // CPU time of the event loop (decisions and bookkeeping)
};

// The scenario's ClusterQueues as tenants: "cq-0-<q>-cohort-<c>" in cohort "cohort-<c>", cpu
// quota nominal_cpu with borrowing limit borrowing_limit_cpu (what the runs here and the online
// server are configured with).
std::vector<tenancy::TenantConfig> KueueTenants(const KueueScenarioSpec& spec);

// Per-class results (spec order) from per-workload outcomes whose times are scenario
// microseconds, as Kueue's recorder takes them: admission = last admission - creation.
std::vector<KueueClassResult> SummarizeKueueClasses(const KueueScenarioSpec& spec,
                                                    const std::vector<KueueWorkload>& workloads,
                                                    const std::vector<KueueWorkloadOutcome>& outcomes);
// [{"name","count","mean_admission_s","p99_admission_s","mean_finish_s","evictions"}...]
nlohmann::json KueueClassesJson(const std::vector<KueueClassResult>& classes);

// Runs the scenario. Errors: kInvalidArgument (spec or options), kInternal if a workload is left
// unadmitted (a bug).
Result<KueueResult> RunKueueScenario(const KueueScenarioSpec& spec, const KueueRunOptions& options);

// Kueue's published figures for the baseline (configs/baseline/rangespec.yaml, 5 Prow runs).
struct KueuePublishedClass {
  std::string name;
  double mean_admission_s;
  double max_mean_admission_s;  // the test's threshold
};
struct KueuePublished {
  std::string source = "kubernetes-sigs/kueue test/performance/scheduler/configs/baseline/rangespec.yaml @ ff69552e";
  double wall_s = 351.1164;
  double max_wall_s = 425;
  double usage_pct = 55.9;
  double min_usage_pct = 50;
  int admissions = 15000;
  double api_qps = 50, api_burst = 100;  // minimalkueue's client limit (minimalkueue/main.go)
  std::vector<KueuePublishedClass> classes = {
      {"small", 215.468, 260}, {"medium", 76.768, 90}, {"large", 16.501, 23}};
};

// kueue.json: the deterministic fields (scenario, options, classes, usage_pct, preemptions, ...)
// plus "published"; "timing" only when the run was timed (it differs between runs).
nlohmann::json KueueResultJson(const KueueScenarioSpec& spec, const KueueRunOptions& options, const KueueResult& r);

}  // namespace seedance::sim
