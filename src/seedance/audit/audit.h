#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/audit/admission.h"
#include "seedance/audit/grade.h"
#include "seedance/audit/power_model.h"
#include "seedance/audit/series.h"
#include "seedance/cluster/gpu_model.h"
#include "seedance/core/status.h"

namespace seedance::audit {

// DCGM health categories the audit mirrors (docs/PROTOCOLS.md §2.3), with DCGM's result codes.
enum class HealthCategory : std::uint8_t { kXid, kEcc, kThermal, kPower, kPcieReplay };
inline constexpr std::size_t kHealthCategoryCount = 5;
enum class HealthResult : std::uint8_t { kPass = 0, kWarn = 10, kFail = 20 };
std::string_view HealthCategoryName(HealthCategory c);  // "xid", "ecc", "thermal", ...
std::string_view HealthResultName(HealthResult r);      // "PASS", "WARN", "FAIL"

struct CategoryVerdict {
  HealthResult result = HealthResult::kPass;
  std::string evidence;  // what decided it ("GPU-ab12: XID 79 at 2026-...", "max 91.0 C")
};

// Health thresholds. Plain aggregate with documented defaults (ours; DCGM's own watches are
// pass/warn/fail without published numbers for most categories).
struct HealthThresholds {
  // XIDs that fail a node (DBE, row-remap failure, NVLink, fallen off the bus, ...); any other
  // non-zero XID (application faults such as 13, 31, 43) is a warning.
  std::vector<int> xid_fail_codes = {48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120};
  double thermal_warn_c = 85;
  double thermal_fail_c = 90;
  double power_warn_pct = 8;       // |measured - power model| / model, recent window
  double power_fail_pct = 15;
  double power_over_tdp_pct = 10;  // mean power above the board limit by more fails
  double pcie_warn_per_min = 1;    // PCIe replays per minute, mean over the window
  double pcie_fail_per_min = 8;
  double healthy_deviation_pct = 5;  // S7.1: scheduling deviation <= 5 % is healthy
};

// Audit settings. Plain aggregate with the seed's defaults; LoadAuditConfig reads a YAML file.
struct AuditConfig {
  GradeTable grades = GradeTable::SeedDefault();
  AdmissionConfig admission;
  HealthThresholds health;
  double window_hours = 72;          // audit window; the idle decay index is its mean idleness
  double power_residual_hours = 24;  // recent window the power deviation is judged on
  double min_evidence_hours = 1;     // a shorter window is incomplete evidence
  std::int64_t max_clock_skew_s = 120;
  double diagnostics_window_hours = 6;
  bool require_scheduling_deviation = false;  // true: no schedule records = incomplete

  // Errors: kInvalidArgument naming the key.
  Status Validate() const;
};

// Parses the YAML audit configuration (every key optional; defaults above):
//   window_hours, power_residual_hours, min_evidence_hours, max_clock_skew_s,
//   diagnostics_window_hours, require_scheduling_deviation,
//   grades: [{name, energy_ratio_below | energy_ratio_at_most, deviation_pct_below |
//             deviation_pct_at_most, weight}, ...],
//   partial_evidence_cap (a grade name; see GradeTable),
//   admission: {pending_evidence_hours, removal_failures, recovery_clean_audits},
//   health: {xid_fail_codes, thermal_warn_c, thermal_fail_c, power_warn_pct, power_fail_pct,
//            power_over_tdp_pct, pcie_warn_per_min, pcie_fail_per_min, healthy_deviation_pct}.
// Errors: kInvalidArgument "name:line:col: key 'k': ..." for unknown keys, bad values and YAML
// syntax; kNotFound when the file cannot be read.
Result<AuditConfig> ParseAuditConfig(std::string_view yaml_text, const std::string& name);
Result<AuditConfig> LoadAuditConfig(const std::string& path);

// The 12 raw metrics of a node (S7.4), in RawMetricNames() order. nullopt: not measured.
struct RawMetrics {
  std::optional<double> energy_ratio_kw_per_tops;  // sum kW / sum effective TOPS
  std::optional<double> scheduling_deviation_pct;  // sum |d start| + |d runtime| / sum planned
  std::optional<double> idle_decay_index;          // window mean of 1 - GPU util
  std::optional<double> mean_power_w;              // per GPU
  std::optional<double> mean_gpu_util_pct;
  std::optional<double> mean_tensor_active;
  std::optional<double> max_gpu_temp_c;
  std::optional<double> xid_events;                // new non-zero XID values seen
  std::optional<double> ecc_uncorrectable_delta;   // increase of the uncorrectable counters
  std::optional<double> pcie_replays_per_min;      // worst GPU
  std::optional<double> power_residual_pct;        // worst GPU vs its model's fit
  std::optional<double> memory_use_ratio;          // mean over GPUs of peak used / reserved

  // (name, value) pairs in the fixed order.
  std::vector<std::pair<std::string_view, std::optional<double>>> List() const;
};
const std::vector<std::string_view>& RawMetricNames();

// What the audit computed for one GPU over the window.
struct GpuAudit {
  std::string uuid;
  std::string model_name;  // as reported
  cluster::GpuModelIndex model = cluster::kNoGpuModel;
  double dense_tops = 0;
  bool has_power = false;  // any power sample in the window
  double mean_power_w = 0;
  double mean_util_pct = 0;
  double mean_activity = 0;  // tensor pipe active (GPU util for models without tensor cores)
  double idle_index = 0;
  double max_temp_c = 0;
  std::vector<int> xid_codes;  // in order of appearance
  double ecc_delta = 0;
  double pcie_per_min = 0;
  std::optional<double> power_residual_pct;
  std::optional<double> memory_use_ratio;
  bool complete = false;
  // Power-model inputs (whole window) and the recent-window means.
  PowerAccumulator power_acc;
  std::array<double, 4> recent_sums{};  // sm, int, dram, power
  std::int64_t recent_n = 0;
};

struct Diagnostics {
  std::optional<double> cpu_gpu_correlation;  // Pearson r, CPU util vs mean GPU util
  std::optional<double> gpu_duty_cv;          // coefficient of variation of GPU util
  std::vector<std::string> findings;
};

// The audit of one node.
struct NodeAudit {
  std::string host;
  std::string driver;
  std::vector<GpuAudit> gpus;
  RawMetrics metrics;
  std::array<CategoryVerdict, kHealthCategoryCount> health{};
  std::string grade = "ungraded";  // "ungraded" when the evidence is incomplete
  double weight = 0;               // the grade's weight (after the partial-evidence cap)
  // Grade criteria that were not measured (kEnergyRatioCriterion, kDeviationCriterion), also for
  // an ungraded node, and whether they capped the grade (GradeTable's partial-evidence rule).
  std::vector<std::string> grade_missing;
  bool grade_capped = false;
  AuditOutcome outcome = AuditOutcome::kIncomplete;
  std::vector<std::string> issues;    // incomplete-evidence reasons, each naming its field
  std::vector<std::string> failures;  // why the audit failed (FAIL categories, deviation)
  double evidence_hours = 0;
  std::int64_t window_start_s = 0;
  std::int64_t window_end_s = 0;
  Diagnostics diagnostics;

  // The state machine's view: outcome, evidence span, and the failed categories or issues.
  AuditVerdict Verdict() const;
};

struct ModelPowerFit {
  cluster::GpuModelIndex model = cluster::kNoGpuModel;
  std::optional<PowerFit> fit;  // nullopt when it could not be fitted (see note)
  std::string note;
  int gpus = 0;
  int flagged = 0;  // GPUs left out of the refit for deviating
};

struct FleetAudit {
  std::int64_t now_s = 0;
  std::vector<NodeAudit> nodes;  // sorted by host
  std::vector<ModelPowerFit> power_models;
};

// Audits every node over [now_s - window, now_s]: per-GPU metrics in one pass, a power model per
// GPU model (fit, flag GPUs deviating by more than power_fail_pct, refit without them), health
// categories, grade, diagnostics and the outcome. Evidence problems (unknown GPU model, missing
// required fields, clock skew, too short a window) make that node kIncomplete with an issue
// naming the field; they are not errors. Deterministic.
// Errors: kInvalidArgument for an invalid config or a host listed twice.
Result<FleetAudit> AuditFleet(const std::vector<NodeTelemetry>& fleet, const AuditConfig& config,
                              std::int64_t now_s);

// Formats Unix seconds as "YYYY-MM-DDTHH:MM:SSZ".
std::string FormatUtc(std::int64_t unix_s);

}  // namespace seedance::audit
