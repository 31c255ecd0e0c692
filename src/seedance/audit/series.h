#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace seedance::audit {

// The per-GPU telemetry fields the audit reads, with the dcgm-exporter metric each comes from
// (docs/PROTOCOLS.md §2.1). Units are the exporter's: W, %, °C, ratios 0..1, MiB, counters.
enum class Field : std::uint8_t {
  kPowerW,          // DCGM_FI_DEV_POWER_USAGE
  kGpuUtilPct,      // DCGM_FI_DEV_GPU_UTIL (0..100)
  kTempC,           // DCGM_FI_DEV_GPU_TEMP
  kXid,             // DCGM_FI_DEV_XID_ERRORS (value of the last XID; 0 = none)
  kPcieReplay,      // DCGM_FI_DEV_PCIE_REPLAY_COUNTER (counter)
  kTensorActive,    // DCGM_FI_PROF_PIPE_TENSOR_ACTIVE (0..1)
  kEccUncorrectable,  // DCGM_FI_DEV_ECC_DBE_VOL_TOTAL or ..._UNCORRECTABLE_REMAPPED_ROWS (counter)
  kSmActive,        // DCGM_FI_PROF_SM_ACTIVE (0..1; off by default in dcgm-exporter)
  kIntActive,       // DCGM_FI_PROF_PIPE_INT_ACTIVE (0..1)
  kDramActive,      // DCGM_FI_PROF_DRAM_ACTIVE (0..1, share of peak memory bandwidth)
  kFbUsedMib,       // DCGM_FI_DEV_FB_USED
  kFbFreeMib,       // DCGM_FI_DEV_FB_FREE
};
inline constexpr std::size_t kFieldCount = 12;

// The dcgm-exporter metric name of `f` (the first one where two are accepted).
std::string_view FieldMetricName(Field f);
// Fields a GPU must report for an audit to count as complete evidence.
const std::vector<Field>& RequiredFields();

// One GPU's samples, column-wise: `t_s` ascending sample times (Unix seconds), and per field
// either an empty column (the field was never reported) or one value per sample time, NaN where
// that sample lacks the field.
struct GpuSeries {
  std::string uuid;        // "GPU-..." (dcgm-exporter label UUID)
  std::string model_name;  // modelName label as reported
  std::string driver;      // DCGM_FI_DRIVER_VERSION label, may be empty
  std::vector<std::int64_t> t_s;
  std::array<std::vector<float>, kFieldCount> columns;
  double memory_reserved_mib = 0;  // what the workload reserved (0: unknown -> FB total is used)

  std::vector<float>& col(Field f) { return columns[static_cast<std::size_t>(f)]; }
  const std::vector<float>& col(Field f) const { return columns[static_cast<std::size_t>(f)]; }
  bool has(Field f) const { return !col(f).empty(); }
};

// One planned-versus-actual record of a task on a node (from the ledger or the simulator).
struct ScheduleRecord {
  std::string task;
  double planned_start_s = 0;
  double actual_start_s = 0;
  double planned_runtime_s = 0;  // > 0
  double actual_runtime_s = 0;
};

// Everything the audit sees of one node.
struct NodeTelemetry {
  std::string host;
  std::vector<GpuSeries> gpus;
  // Optional host CPU utilization (0..100) for the CPU/GPU duty-cycle diagnostic.
  std::vector<std::int64_t> cpu_t_s;
  std::vector<float> cpu_util_pct;
  // Optional; without records the scheduling deviation rate is "not measured".
  std::vector<ScheduleRecord> schedule;
};

}  // namespace seedance::audit
