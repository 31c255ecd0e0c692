#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "seedance/advise/finding.h"
#include "seedance/core/status.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/config.h"
#include "seedance/ledger/ledger.h"
#include "seedance/ledger/rightsize.h"
#include "seedance/ledger/telemetry_attribution.h"

namespace seedance::advise {

// What the ledger knows of one job over the range (its GPU steps summed over hours).
struct JobUsage {
  std::string job;
  std::string namespace_name;
  std::string tenant;
  std::string model;           // dcgm modelName of its GPUs
  std::string node;            // the node of its GPUs (the first seen)
  double gpu_hours = 0;
  double activity = -1;        // GPU-hour-weighted mean GR_ENGINE_ACTIVE, -1 = no data
  double peak_memory_mib = -1;
  double cost_usd = 0;         // its workload charges
  std::int64_t first_ms = 0, last_ms = 0;  // hours it was seen in: [first, last)
  double input_wait = -1;      // share of time its containers waited on I/O (PSI), -1 = no data
  std::int64_t wait_samples = 0;
  // Its pods' annotations (kube-state-metrics kube_pod_annotations, see kSpotAnnotations):
  double checkpoint_interval_s = -1;  // seedance.io/checkpoint-interval, -1 = not annotated
  double deadline_slack_s = -1;       // seedance.io/deadline-slack, -1 = not annotated
  std::int64_t annotation_series = 0;
};

// A node's capacity nobody held.
struct NodeIdle {
  std::string node;
  double idle_usd = 0;
  double idle_gpu_hours = 0;
  double bill_usd = 0;
};

// Everything the fleet rules read (built from a ledger by FleetInputsFromLedger, or by a
// benchmark directly).
struct FleetInputs {
  std::int64_t from_ms = 0, to_ms = 0;
  std::int64_t step_ms = 60'000;
  std::vector<JobUsage> jobs;      // by job name
  std::vector<NodeIdle> nodes;     // by node name
  double unshared_idle_usd = 0;    // the idle pool of the range (the Monte Carlo's I)
};

// The cAdvisor PSI counter the input-stall rule reads.
inline constexpr std::string_view kInputWaitMetric = "container_pressure_io_waiting_seconds_total";

// The spot rule's evidence: two pod annotations a job's owner sets (durations: "30m", "12h"),
//   seedance.io/checkpoint-interval  how often the job checkpoints (it resumes from the last one);
//   seedance.io/deadline-slack       how much later than now it may finish;
// exported by kube-state-metrics (--metric-annotations-allowlist=pods=[seedance.io/checkpoint-interval,
// seedance.io/deadline-slack]) as labels annotation_seedance_io_checkpoint_interval and
// annotation_seedance_io_deadline_slack of kube_pod_annotations, which `seedance ingest` stores.
inline constexpr std::string_view kPodAnnotationsMetric = "kube_pod_annotations";
inline constexpr std::string_view kCheckpointIntervalLabel = "annotation_seedance_io_checkpoint_interval";
inline constexpr std::string_view kDeadlineSlackLabel = "annotation_seedance_io_deadline_slack";

// How often a held spot instance is interrupted: the instance-was-lost transitions (available ->
// unavailable) of a spot availability series (sim::LoadSpotTrace, data/spot_traces) per hour of
// availability.
struct SpotInterruptionRate {
  std::string trace;
  double per_hour = 0;
  std::int64_t interruptions = 0;
  double available_hours = 0;
};
Result<SpotInterruptionRate> SpotInterruptionRateOf(const std::string& trace_path);

// Thresholds of the fleet rules (each is an assumption stated beside the figures).
struct FleetRules {
  double idle_activity = 0.05;      // a namespace below this mean activity is idle
  double low_activity = 0.30;       // a job below this consolidates
  double stall_wait = 0.20;         // input-bound: I/O wait share at least this ...
  double stall_max_activity = 0.60; // ... and activity below this
  double headroom = ledger::RightsizeRule{}.headroom;            // a GPU is planned to at most 80% activity
  double memory_margin = ledger::RightsizeRule{}.memory_margin;  // a smaller GPU must hold the peak memory + 10%
  double min_gpu_hours = 1.0;       // evidence below this is not acted on
  double node_idle_share = 0.10;    // a node with at least 10% of its bill idle
  double unit_cost_factor = 2.0;    // a unit-cost outlier pays at least 2x its model's median ...
  int unit_cost_min_jobs = 3;       // ... over at least 3 measured jobs on that GPU model
  // Spot: off while spot_rate.per_hour < 0. Each interruption loses half a checkpoint interval of
  // work plus spot_restart_s (billed: the instance is held while the job restores).
  SpotInterruptionRate spot_rate = {"", -1, 0, 0};
  double spot_restart_s = 300;
  int mc_samples = 10'000;
  std::uint64_t seed = 42;
  std::string reproduce_prefix = "seedance advise";  // + " --explain <id>"
  // A fleet file's node pools (issue 38; advise --fleet): see FleetFindings.
  const ledger::FleetPools* fleet = nullptr;
};


// Reads the charges of [from, to) (already brought up to date from telemetry: `telemetry` is the
// attribution's result), the jobs' evidence and the PSI counters.
Result<FleetInputs> FleetInputsFromLedger(ledger::Ledger& ledger,
                                          const ledger::TelemetryAttribution& telemetry,
                                          const ledger::LedgerConfig& config, std::int64_t from_ms,
                                          std::int64_t to_ms);

// The fleet rules (docs/ARCHITECTURE.md "Advice"):
//   idle:            a namespace whose GPU-hour-weighted activity is below idle_activity: release
//                    its GPUs, saving its whole cost; a node with node_idle_share of its bill held
//                    by nobody: scale the pool down, saving the idle cost;
//   input-stall:     a job waiting on I/O at least stall_wait of the time at activity below
//                    stall_max_activity: fix the pipeline, saving cost x wait share (the GPU time
//                    spent waiting);
//   smaller-gpu:     the cheapest priced GPU that holds peak memory x memory_margin and whose FP16
//                    TFLOPS x headroom covers activity x the current GPU's (the job keeps its
//                    speed): saving GPU-hours x (price now - price there);
//   low-utilization: a job below low_activity that fits no smaller GPU: consolidate onto
//                    ceil(GPUs x activity / headroom) GPUs, saving cost x (1 - new / old GPUs);
//   spot:            a job annotated with a checkpoint interval I and a deadline slack: on spot
//                    at r = spot / on-demand price (the price table's quote, else
//                    cost::kDefaultSpotRatio) it loses f = rate x (I / 2 + restart) of each hour,
//                    so its work costs cost x r / (1 - f) and takes its hours x f / (1 - f)
//                    longer; eligible when that fits the slack; saving cost x (1 - r / (1 - f));
//   unit-cost:       a job whose $ per useful GPU-hour, cost / (GPU-hours x activity), is at least
//                    unit_cost_factor x the median of the measured jobs on the same GPU model (idle
//                    namespaces left out): saving cost x (1 - median / its own). A diagnosis, not a
//                    change: it is reported only for a job no other rule covers, so a target
//                    appears once and no waste is counted twice.
// One finding per job (the largest saving); jobs of an idle namespace are covered by it.
// With rules.fleet (node pools), savings are cash only: work on owned or reserved nodes (paid for
// the window whatever runs) gets no finding, an idle namespace saves only its jobs' rented cost, an
// idle owned / reserved node saves only its stated power-down price x its idle GPU-hours (none when
// the pool states none: the idle is opportunity, OwnedOpportunity), smaller GPUs come only from the
// fleet's rented types at their pool prices, and spot only where the fleet has a spot pool of the
// type, at its price. The total then never exceeds the cloud spend plus the idle owned GPUs' power.
// $/month = the range's saving x kHoursPerMonth / range hours. Each interval is the ledger's
// Monte Carlo (ledger::MonteCarloIntervals, the quantity "cost with idle apportioned") over the
// findings' targets and the rest of the fleet as one entity, taken relative to the target's
// point and applied to its saving.
Result<std::vector<Finding>> FleetFindings(const FleetInputs& in, const cost::PriceTable& prices,
                                           const ledger::LedgerConfig& config,
                                           const FleetRules& rules);

// Idle owned / reserved capacity as what it is (issue 38): per committed pool, the GPU-hours nobody
// held and the rented GPU-hours of the same type that could have run there instead, with what they
// cost (the most that capacity could have saved, if the times lined up; not counted as a finding),
// and the ceiling of every cash saving: the cloud spend (rented nodes' bills) plus the idle owned
// GPUs' power (the pool's stated power-down price, else the power and cooling part of its TCO).
struct PoolOpportunity {
  std::string pool;
  std::string kind;     // owned, reserved
  std::string gpu_type;
  double idle_gpu_hours = 0;
  double idle_usd = 0;              // its idle at the pool's price (already paid)
  double rented_gpu_hours = 0;      // the fleet's rented GPU-hours of the same type
  double rented_usd = 0;            // ... and their cost
  double absorbable_usd = 0;        // min(idle, rented GPU-hours) x the rented price per GPU-hour
  double power_usd = 0;             // idle GPU-hours x (stated power-down, else TCO power)
};
struct OwnedOpportunityReport {
  double range_hours = 0;
  double cloud_usd = 0;             // rented nodes' bills over the range
  double idle_power_usd = 0;        // sum of power_usd
  double ceiling_usd_per_month = 0; // (cloud + idle power) x kHoursPerMonth / range hours
  std::vector<PoolOpportunity> pools;
};
Result<OwnedOpportunityReport> OwnedOpportunity(const FleetInputs& in, const ledger::FleetPools& fleet);

}  // namespace seedance::advise
