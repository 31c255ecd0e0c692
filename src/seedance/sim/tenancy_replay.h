#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/cluster/cluster.h"
#include "seedance/core/status.h"
#include "seedance/sim/scenarios.h"
#include "seedance/sim/workload.h"
#include "seedance/tenancy/admission.h"
#include "seedance/tenancy/tiers.h"

namespace seedance::sim {

// The tenancy replay (issue 13): jobs of several tenants arrive on a cluster of GPU nodes; the
// tenancy Admitter (strict / borrowing / seedance) decides admission and preemption, the
// placement module places them (sched "bestfit" for every mode) and picks victim sets on one
// node; jobs run their true length (hidden from admission), checkpoint, may hold their GPUs idle
// after their work (the idle tail the reclaim sweep targets) and lose the work since their last
// checkpoint when preempted. Deterministic for a given scenario.

// One job of the replay. `work_s`, `idle_tail_s` and `busy_util` are the truth the driver
// simulates; admission sees only the request, its tier and what telemetry reports.
struct TenancyJob {
  std::int64_t id = 0;
  int tenant = 0;  // index into TenancyScenario::config.tenants
  tenancy::Tier tier = tenancy::Tier::kSilver;
  double arrival_s = 0;
  double work_s = 0;          // run time on the scenario's GPU type
  cluster::PodSpec pod;       // what placement sees (GPUs, per-GPU milli, CPU, memory)
  double checkpoint_s = 1800;  // checkpoint interval
  double busy_util = 0.8;      // GPU utilization while working
  double idle_tail_s = 0;      // GPUs held idle (utilization 0) after the work, until released
};

struct TenancyScenario {
  std::string name;
  std::vector<cluster::NodeSpec> nodes;
  std::string gpu_type;              // catalog name, for the report
  double usd_per_gpu_hour = 0;       // the price table's on-demand price of gpu_type
  tenancy::TenancyConfig config;     // tenants (resource "gpu" quotas, one cohort) and tiers
  std::vector<TenancyJob> jobs;      // sorted by (arrival_s, id)
  double window_s = 0;               // metrics are taken over [0, window_s)
  double total_gpus = 0;
  std::vector<std::string> assumptions;  // one line each, printed beside the figures
};

// Builds the replay from a time-simulator workload: tenants = the jobs' `tenant` (a VC for
// Philly), one homogeneous cluster of the GPU type most jobs can run on (8 GPUs per node), sized
// so the offered GPU demand over the window is `target_load` of it; each tenant's nominal quota
// is its share of the offered demand (largest remainder, whole GPUs; every tenant gets >= 1), all
// in one cohort; tiers from `config.tenants` when it names the tenant, else by tenant name in turn
// gold / silver / bronze. Per job, seeded: checkpoint interval U(15, 60) min, busy utilization
// U(0.5, 1.0), and with probability `idle_tail_prob` an idle tail Exp(mean `idle_tail_mean_s`).
// Held out (issue 29): `window_start_s` > 0 replays the arrivals in [start, start + window) shifted
// to 0, with the tenants' nominal quotas (their shares of GPU demand) and the cluster size (the mean
// offered GPU demand / target_load) computed from the arrivals before `start` only; nothing of the
// window or later shapes the setup.
struct TenancyScenarioOptions {
  double target_load = 1.0;
  double window_start_s = 0;
  double idle_tail_prob = 0.25;
  double idle_tail_mean_s = 7200;
  std::uint64_t seed = 0;
};
Result<TenancyScenario> TenancyScenarioFromWorkload(const Workload& w, const tenancy::TenancyConfig& config,
                                                    double window_s, double usd_per_gpu_hour,
                                                    const TenancyScenarioOptions& options);

// The openb trace (cluster::LoadNodes / LoadPods) with QoS -> tier (LS -> Gold, Guaranteed and
// Burstable -> Silver, BE -> Bronze); each QoS class is a tenant with a nominal GPU quota equal to
// its share of the trace's GPU demand; run time = deletion - creation; the cluster is the first
// nodes of the node list (in file order) that hold `target_load` of ... see the .cc.
Result<TenancyScenario> OpenbTenancyScenario(const std::string& nodes_csv, const std::string& pods_csv,
                                             const tenancy::TenancyConfig& config, double usd_per_gpu_hour,
                                             const TenancyScenarioOptions& options);

struct TenantOutcome {
  std::string tenant;
  tenancy::Tier tier = tenancy::Tier::kSilver;
  double nominal_gpus = 0;
  int jobs = 0;
  double wait_p50_h = 0;
  double wait_p99_h = 0;
  double guaranteed_share_honoured_pct = 100;
  double borrowed_gpu_hours = 0;
  int preemptions = 0;
  double cost_usd = 0;
  double held_gpu_hours = 0;
  double fair_gpu_hours = 0;  // its max-min fair share over the window (weights = nominal quota)
};

// One start of a job in the replay (a preempted job starts again later): the release order and
// node choice the Slurm controller's parity test compares against.
struct TenancyStart {
  std::int64_t job = 0;
  double t = 0;
  std::string node;
};

struct TenancyOutcome {
  std::string mode;  // strict | borrowing | seedance | seedance-no-compensation
  double gpu_allocation_pct = 0;  // GPU-time held / GPU-time of the cluster over the window
  double busy_allocation_pct = 0;  // of which held by jobs doing work (idle tails excluded)
  double jain_index = 1;           // over tenants of held / fair GPU-hours
  int gold_guarantee_checks = 0;   // Gold arrivals that fit their tenant's unborrowed guaranteed quota
  int gold_guarantee_violations = 0;  // of which did not start within one scheduling cycle
  int gold_preempted_by_lower = 0;
  int preemptions = 0;
  int idle_reclaims = 0;           // allocations released by the idle sweep or preempted while idle
  double work_lost_gpu_hours = 0;
  int unstarted = 0;  // jobs of the window that never started (the run stops at 10x the window)
  std::int64_t admission_decisions = 0;
  std::vector<TenantOutcome> per_tenant;
  double bucket_s = 0;
  std::vector<std::vector<double>> share_gpus;  // [bucket][tenant]: mean GPUs held
  std::vector<TenancyStart> starts;  // every start, in order
};

// Runs one mode. `fairness_compensation` switches S4.5 (Seedance mode only).
Result<TenancyOutcome> RunTenancyReplay(const TenancyScenario& scenario, tenancy::TenancyMode mode,
                                        bool fairness_compensation = true);

// The tenancy section of `cost-benchmark`: the scenario's workload (spec.workload, its arrival
// window and seed; openb: OpenbTenancyScenario on the bundled trace) under each mode of `modes`
// in one run; when kSeedance is among them, also "seedance-no-compensation" (S4.5 off), the
// fairness ablation. Tenants and tiers from spec.config.tenancy. Prices from the price table.
struct TenancyComparison {
  TenancyScenario scenario;
  std::vector<TenancyOutcome> outcomes;
};
// `window_start_s` > 0: the held-out setup of TenancyScenarioOptions (not for openb).
Result<TenancyComparison> RunTenancyComparison(const ScenarioSpec& spec, const std::vector<tenancy::TenancyMode>& modes,
                                               const std::function<void(const std::string&)>& progress = {},
                                               double window_start_s = 0);

}  // namespace seedance::sim
