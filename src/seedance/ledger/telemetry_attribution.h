#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/apportion.h"
#include "seedance/ledger/config.h"
#include "seedance/ledger/ledger.h"

namespace seedance::ledger {

// The ledger source of the charges AttributeTelemetry writes.
inline constexpr std::string_view kTelemetrySource = "telemetry";

// What the breaker needs to explain a job's cost in one hour (S6.7).
struct JobEvidence {
  std::string job;
  std::int64_t hour_ms = 0;
  std::string model;             // dcgm modelName of its GPUs (the first seen)
  std::string node;              // the node of those GPUs
  std::int64_t gpus = 0;         // distinct GPUs it held in the hour
  double gpu_hours = 0;          // GPU-hours it held
  double mean_utilization = -1;  // GR_ENGINE_ACTIVE (or GPU_UTIL/100), -1 = no data
  double peak_memory_mib = -1;   // FB_USED peak, -1 = no data
  double mean_tensor_active = -1;
  std::int64_t batch_size = 0;   // from process events, 0 = unknown
  std::string precision;         // from process events, "" = unknown
};

// The result of turning stored telemetry into charges.
struct TelemetryAttribution {
  std::int64_t gpu_steps = 0;         // (GPU, step) pairs seen
  std::int64_t node_intervals = 0;
  std::int64_t charges = 0;
  std::int64_t unpriced_gpu_steps = 0;  // GPUs whose model has no price: left out, reported
  std::vector<std::string> unpriced_models;  // their models (as labelled), sorted
  std::int64_t joined_by_labels = 0;    // GPU steps attributed from pod/namespace labels
  std::int64_t joined_by_events = 0;    // GPU steps attributed through process/pod events
  std::int64_t unmatched_samples = 0;   // samples naming a pid/pod that no event explains
  std::int64_t unmatched_events = 0;    // events that matched no sample
  Money bill;
  std::vector<ApportionObservation> apportion;  // per (node interval, workload), shared nodes
  std::map<std::pair<std::string, std::int64_t>, JobEvidence> evidence;  // by (job, hour)
  // Per tenant usage/allocation/interconnect totals for the Monte Carlo (GPU-hours, bytes).
  std::map<std::string, TenantInput> tenant_inputs;
};

// Reads the GPU samples stored in `ledger` with time in [from, to), aligns them into steps of
// config.step_ms per GPU (the holder of a step is the pod/namespace the most samples name, ties
// by name; usage is the mean GR_ENGINE_ACTIVE, else GPU_UTIL/100), joins process/pod events
// (by pod or pid, GPU UUID and time: the event widened by config.match_tolerance_ms on both
// sides must cover the step's midpoint; scheduler jobs' GPU holds by node and device index join
// the same way, see JobAllocationEvents), prices each GPU from the
// config or the catalog, allocates each node interval (AllocateNodeInterval) and records the
// charges in the ledger under source "telemetry", replacing what an earlier run wrote for the
// same range. Nodes are the samples' hostname labels ("unknown-node" when absent).
// Errors: storage errors; kInvalidArgument when from >= to.
Result<TelemetryAttribution> AttributeTelemetry(Ledger& ledger, const LedgerConfig& config,
                                                const cost::PriceTable* catalog,
                                                std::int64_t from_ms, std::int64_t to_ms);

// Returns the [min, max + 1) time range of the stored samples, or {0, 0}.
Result<std::pair<std::int64_t, std::int64_t>> SampleRange(Ledger& ledger);

// Returns the GPU samples' interval: the smallest positive gap between two samples of one GPU
// series (of the first 32 GPU series), or 0 when no GPU series has two samples. Attribution bills
// each sample for one step, so a step shorter than this interval bills only part of the time.
Result<std::int64_t> GpuSampleIntervalMs(Ledger& ledger);

// Returns the [min start, max end) range of the bills recorded by other sources than telemetry
// (the simulator, Slurm), or {0, 0}: the charges a ledger command's own telemetry step wrote are
// left out, so a read never widens the next read's range.
Result<std::pair<std::int64_t, std::int64_t>> NonTelemetryChargeRange(Ledger& ledger);

// Brings the ledger's telemetry charges of [from, to) up to date: AttributeTelemetry over the
// part of the range that holds samples (what every ledger query of the CLI and the server runs
// first). Returns nullopt when no stored sample falls in the range (nothing was charged).
Result<std::optional<TelemetryAttribution>> AttributeStoredTelemetry(
    Ledger& ledger, const LedgerConfig& config, const cost::PriceTable* catalog,
    std::int64_t from_ms, std::int64_t to_ms);

// Every stored sample as timestamped Prometheus text, one `series value ts_ms` line each,
// ordered by (series, time): what `seedance audit run --db` and the server's audit loop replay
// through the text parser. Empty when the ledger holds no samples.
Result<std::string> SamplesAsExposition(Ledger& ledger);

}  // namespace seedance::ledger
