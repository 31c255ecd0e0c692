#include "seedance/telemetry/sample.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>

#include "seedance/gpu/catalog.h"

namespace seedance::telemetry {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

template <class Str>
Str* EntitySlot(BasicEntity<Str>& e, std::string_view name) {
  struct Alias {
    std::string_view name;
    int slot;
  };
  static constexpr std::array<Alias, 30> kAliases = {{
      {"UUID", 0},           {"gpu_uuid", 0},          {"gpu.uuid", 0},
      {"hw.id", 0},          {"gpu", 1},               {"gpu_index", 1},
      {"minor_number", 1},   {"modelName", 2},         {"model_name", 2},
      {"hw.model", 2},       {"Hostname", 3},          {"node", 3},
      {"host.name", 3},      {"k8s.node.name", 3},     {"pod", 4},
      {"pod_name", 4},       {"exported_pod", 4},      {"k8s.pod.name", 4},
      {"namespace", 5},      {"pod_namespace", 5},     {"exported_namespace", 5},
      {"k8s.namespace.name", 5}, {"container", 6},     {"container_name", 6},
      {"exported_container", 6}, {"k8s.container.name", 6}, {"pid", 7},
      {"process.pid", 7},    {"hpc_job", 8},           {"k8s.job.name", 8},
  }};
  for (const Alias& a : kAliases) {
    if (!EqualsIgnoreCase(a.name, name)) continue;
    switch (a.slot) {
      case 0: return &e.gpu_uuid;
      case 1: return &e.gpu;
      case 2: return &e.model;
      case 3: return &e.hostname;
      case 4: return &e.pod;
      case 5: return &e.namespace_name;
      case 6: return &e.container;
      case 7: return &e.pid;
      default: return &e.job;
    }
  }
  if (EqualsIgnoreCase(name, "GPU_I_ID")) return &e.mig;
  return nullptr;
}

template <class Str, class L>
BasicEntity<Str> Identify(std::span<const L> labels) {
  BasicEntity<Str> e;
  for (const L& l : labels) {
    Str* slot = EntitySlot(e, l.name);
    if (slot != nullptr && slot->empty()) *slot = Str(l.value);
  }
  return e;
}

struct FieldRow {
  std::string_view metric;
  Field field;
  double scale;
};

// dcgm-exporter names (classic, which the exporter still emits) and OpenTelemetry hardware
// semantic conventions (hw.gpu.*, values in base units: ratio, bytes).
constexpr double kMiB = 1024.0 * 1024.0;
constexpr std::array<FieldRow, 38> kFieldRows = {{
    {"DCGM_FI_DEV_GPU_UTIL", Field::kGpuUtil, 0.01},
    {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", Field::kGrEngineActive, 1.0},
    {"DCGM_FI_PROF_SM_ACTIVE", Field::kSmActive, 1.0},
    {"DCGM_FI_PROF_SM_OCCUPANCY", Field::kSmOccupancy, 1.0},
    {"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", Field::kTensorActive, 1.0},
    {"DCGM_FI_PROF_DRAM_ACTIVE", Field::kDramActive, 1.0},
    {"DCGM_FI_DEV_MEM_COPY_UTIL", Field::kMemCopyUtil, 0.01},
    {"DCGM_FI_DEV_FB_USED", Field::kFbUsed, 1.0},
    {"DCGM_FI_DEV_FB_FREE", Field::kFbFree, 1.0},
    {"DCGM_FI_DEV_FB_TOTAL", Field::kFbTotal, 1.0},
    {"DCGM_FI_DEV_POWER_USAGE", Field::kPower, 1.0},
    {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Field::kEnergy, 1.0},
    {"DCGM_FI_DEV_GPU_TEMP", Field::kGpuTemp, 1.0},
    {"DCGM_FI_DEV_MEMORY_TEMP", Field::kMemoryTemp, 1.0},
    {"DCGM_FI_DEV_SM_CLOCK", Field::kSmClock, 1.0},
    {"DCGM_FI_DEV_MEM_CLOCK", Field::kMemClock, 1.0},
    {"DCGM_FI_PROF_PCIE_TX_BYTES", Field::kPcieTxBytes, 1.0},
    {"DCGM_FI_PROF_PCIE_RX_BYTES", Field::kPcieRxBytes, 1.0},
    {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", Field::kPcieReplays, 1.0},
    {"DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", Field::kNvlinkBandwidth, 1.0},
    {"DCGM_FI_DEV_XID_ERRORS", Field::kXidLastError, 1.0},
    {"DCGM_EXP_XID_ERRORS_COUNT", Field::kXidErrorsCount, 1.0},
    {"DCGM_EXP_GPU_HEALTH_STATUS", Field::kHealthStatus, 1.0},
    {"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", Field::kEccSbeTotal, 1.0},
    {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", Field::kEccDbeTotal, 1.0},
    {"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", Field::kRemappedRowsCorrectable, 1.0},
    {"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", Field::kRemappedRowsUncorrectable, 1.0},
    {"DCGM_FI_DEV_ROW_REMAP_FAILURE", Field::kRowRemapFailure, 1.0},
    {"DCGM_FI_DEV_POWER_VIOLATION", Field::kPowerViolation, 1.0},
    {"DCGM_FI_DEV_THERMAL_VIOLATION", Field::kThermalViolation, 1.0},
    {"hw.gpu.utilization", Field::kGpuUtil, 1.0},
    {"hw.gpu.memory.usage", Field::kFbUsed, 1.0 / kMiB},
    {"hw.gpu.memory.limit", Field::kFbTotal, 1.0 / kMiB},
    {"hw.gpu.memory.utilization", Field::kDramActive, 1.0},
    {"hw.power", Field::kPower, 1.0},
    {"hw.energy", Field::kEnergy, 1000.0},
    {"hw.temperature", Field::kGpuTemp, 1.0},
    {"hw.errors", Field::kXidErrorsCount, 1.0},
}};

struct FieldMeta {
  std::string_view name;
  std::string_view unit;
};
constexpr std::array<FieldMeta, static_cast<std::size_t>(Field::kCount)> kFieldMeta = {{
    {"other", ""},
    {"gpu_util", "ratio"},
    {"gr_engine_active", "ratio"},
    {"sm_active", "ratio"},
    {"sm_occupancy", "ratio"},
    {"tensor_active", "ratio"},
    {"dram_active", "ratio"},
    {"mem_copy_util", "ratio"},
    {"fb_used", "MiB"},
    {"fb_free", "MiB"},
    {"fb_total", "MiB"},
    {"power", "W"},
    {"energy", "mJ"},
    {"gpu_temp", "C"},
    {"memory_temp", "C"},
    {"sm_clock", "MHz"},
    {"mem_clock", "MHz"},
    {"pcie_tx_bytes", "bytes/s"},
    {"pcie_rx_bytes", "bytes/s"},
    {"pcie_replays", "count"},
    {"nvlink_bandwidth", "bytes"},
    {"xid_last_error", "code"},
    {"xid_errors_count", "count"},
    {"health_status", "code"},
    {"ecc_sbe_total", "count"},
    {"ecc_dbe_total", "count"},
    {"remapped_rows_correctable", "count"},
    {"remapped_rows_uncorrectable", "count"},
    {"row_remap_failure", "flag"},
    {"power_violation", "ns"},
    {"thermal_violation", "ns"},
}};

void AppendEscaped(std::string& out, std::string_view v) {
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

}  // namespace

std::string_view MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kUnknown: return "unknown";
    case MetricType::kGauge: return "gauge";
    case MetricType::kCounter: return "counter";
    case MetricType::kHistogram: return "histogram";
    case MetricType::kSummary: return "summary";
    case MetricType::kInfo: return "info";
    case MetricType::kStateSet: return "stateset";
    case MetricType::kGaugeHistogram: return "gaugehistogram";
  }
  return "unknown";
}

EntityView IdentifyEntity(std::span<const LabelView> labels) {
  return Identify<std::string_view>(labels);
}
Entity IdentifyEntity(std::span<const Label> labels) { return Identify<std::string>(labels); }

FieldMapping LookupField(std::string_view metric) {
  if (metric.empty()) return {};
  char first = metric.front();
  if (first != 'D' && first != 'h') return {};
  for (const FieldRow& r : kFieldRows) {
    if (r.metric == metric) return {r.field, r.scale};
  }
  return {};
}

std::string_view FieldName(Field field) {
  auto i = static_cast<std::size_t>(field);
  return i < kFieldMeta.size() ? kFieldMeta[i].name : "other";
}
std::string_view FieldUnit(Field field) {
  auto i = static_cast<std::size_t>(field);
  return i < kFieldMeta.size() ? kFieldMeta[i].unit : "";
}

bool IsDcgmBlank(double value) {
  // DCGM_INT64_BLANK (0x7ffffffffffffff0) and its +1..+3 siblings: as doubles they all round to
  // 2^63; anything that large is a sentinel, never a reading.
  if (value >= 9.2233720368547758e18) return true;
  // DCGM_INT32_BLANK = 0x7ffffff0 .. 0x7fffffff (exact integers only).
  if (value >= 2147483632.0 && value <= 2147483647.0 && value == std::floor(value)) return true;
  // DCGM_FP64_BLANK = 2^47 and its siblings (+1 .. +3).
  constexpr double kFp64Blank = 140737488355328.0;
  return value >= kFp64Blank && value <= kFp64Blank + 15.0;
}

std::string_view CatalogModelName(std::string_view name) {
  auto model = gpu::ParseGpuName(name, gpu::NameMatch::kProduct);
  return model.has_value() ? gpu::GpuAt(*model).name : std::string_view();
}

Sample Sample::FromView(const SampleView& view) {
  Sample s;
  s.metric = std::string(view.metric);
  s.type = view.type;
  s.labels.reserve(view.labels.size());
  for (const LabelView& l : view.labels) {
    s.labels.push_back({std::string(l.name), std::string(l.value)});
  }
  s.value = view.value;
  s.timestamp_ms = view.timestamp_ms;
  s.source = std::string(view.source);
  s.line = view.line;
  return s;
}

std::string_view Sample::LabelValue(std::string_view name) const {
  for (const auto& l : labels) {
    if (l.name == name) return l.value;
  }
  return {};
}

std::string SeriesKey(std::string_view metric, std::span<const LabelView> labels) {
  std::vector<LabelView> sorted(labels.begin(), labels.end());
  std::sort(sorted.begin(), sorted.end(), [](const LabelView& a, const LabelView& b) {
    return a.name != b.name ? a.name < b.name : a.value < b.value;
  });
  std::string out(metric);
  out += '{';
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) out += ',';
    out += sorted[i].name;
    out += "=\"";
    AppendEscaped(out, sorted[i].value);
    out += '"';
  }
  out += '}';
  return out;
}

std::string SeriesKey(const Sample& sample) {
  std::vector<LabelView> views;
  views.reserve(sample.labels.size());
  for (const auto& l : sample.labels) views.push_back({l.name, l.value});
  return SeriesKey(sample.metric, views);
}

}  // namespace seedance::telemetry
