#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace seedance::telemetry {

// The normalized telemetry sample model shared by every parser (Prometheus text 0.0.4,
// OpenMetrics 1.0, dcgm-exporter, OTLP/HTTP JSON) and by its consumers (the cost ledger, the
// health audit). A sample is one value of one series at one time; the series is its metric name
// plus labels. The entity a sample describes (a GPU, a process or a pod on a GPU) is read from
// well-known labels by IdentifyEntity(), whatever casing or naming convention the exporter used.

// Metric family type, as declared by `# TYPE` (or the OTLP data kind).
enum class MetricType : std::uint8_t {
  kUnknown = 0,  // no TYPE line, 0.0.4 "untyped", OpenMetrics "unknown"
  kGauge,
  kCounter,
  kHistogram,
  kSummary,
  kInfo,
  kStateSet,
  kGaugeHistogram,
};

// Returns "unknown", "gauge", "counter", ... (OpenMetrics spelling).
std::string_view MetricTypeName(MetricType type);

// Timestamp value meaning "the exposition gave none".
inline constexpr std::int64_t kNoTimestamp = std::numeric_limits<std::int64_t>::min();

// One label, owning.
struct Label {
  std::string name;
  std::string value;
  friend bool operator==(const Label&, const Label&) = default;
};

// One label, viewing a parser's buffers; valid only during SampleSink::OnSample.
struct LabelView {
  std::string_view name;
  std::string_view value;
};

// What a sample is about: read from labels by IdentifyEntity(). Empty fields were absent.
// Label names are matched case-insensitively, and every known spelling is accepted:
//   gpu_uuid   UUID, uuid, gpu_uuid, gpu.uuid, hw.id
//   gpu        gpu, gpu_index, minor_number
//   model      modelName, model_name, hw.model
//   hostname   Hostname / hostname (dcgm-exporter before/after 2026-05), node, host.name,
//              k8s.node.name
//   pod        pod, pod_name, exported_pod, k8s.pod.name
//   namespace  namespace, pod_namespace, exported_namespace, k8s.namespace.name
//   container  container, container_name, exported_container, k8s.container.name
//   pid        pid, process.pid
//   job        hpc_job, k8s.job.name
//   mig        GPU_I_ID (MIG instance id)
template <class Str>
struct BasicEntity {
  Str gpu_uuid;
  Str gpu;
  Str model;
  Str hostname;
  Str pod;
  Str namespace_name;
  Str container;
  Str pid;
  Str job;
  Str mig;
};
using EntityView = BasicEntity<std::string_view>;
using Entity = BasicEntity<std::string>;

// Returns the entity named by `labels` (the first match per field wins).
EntityView IdentifyEntity(std::span<const LabelView> labels);
Entity IdentifyEntity(std::span<const Label> labels);

// GPU telemetry fields the product understands, with a canonical unit each. Everything else is
// kOther and kept under its metric name.
enum class Field : std::uint8_t {
  kOther = 0,
  kGpuUtil,             // ratio 0..1 (DCGM_FI_DEV_GPU_UTIL is a percentage: scaled by 0.01)
  kGrEngineActive,      // ratio 0..1 (what OpenCost uses as GPU usage)
  kSmActive,            // ratio
  kSmOccupancy,         // ratio
  kTensorActive,        // ratio
  kDramActive,          // ratio (memory-bandwidth share)
  kMemCopyUtil,         // ratio
  kFbUsed,              // MiB
  kFbFree,              // MiB
  kFbTotal,             // MiB
  kPower,               // W
  kEnergy,              // mJ since boot (counter)
  kGpuTemp,             // degrees C
  kMemoryTemp,          // degrees C
  kSmClock,             // MHz
  kMemClock,            // MHz
  kPcieTxBytes,         // bytes/s
  kPcieRxBytes,         // bytes/s
  kPcieReplays,         // count (counter)
  kNvlinkBandwidth,     // bytes (counter, all lanes)
  kXidLastError,        // the last XID error code
  kXidErrorsCount,      // XID errors in the exporter's window (label xid)
  kHealthStatus,        // 0 pass, 10 warn, 20 fail (label health_watch)
  kEccSbeTotal,         // count
  kEccDbeTotal,         // count
  kRemappedRowsCorrectable,
  kRemappedRowsUncorrectable,
  kRowRemapFailure,
  kPowerViolation,      // ns (counter)
  kThermalViolation,    // ns (counter)
  kCount,               // number of fields; not a field
};

// A metric name's meaning: the field and the factor that turns its value into the field's
// canonical unit.
struct FieldMapping {
  Field field = Field::kOther;
  double scale = 1.0;
};

// Returns the mapping for a dcgm-exporter name (DCGM_FI_DEV_GPU_UTIL, DCGM_EXP_...) or an
// OpenTelemetry hardware semantic-convention name (hw.gpu.utilization, ...); kOther otherwise.
FieldMapping LookupField(std::string_view metric);
// Returns the field's identifier, e.g. "gpu_util", "fb_used".
std::string_view FieldName(Field field);
// Returns the field's canonical unit, e.g. "ratio", "MiB", "W".
std::string_view FieldUnit(Field field);

// DCGM "blank" values: unsupported, not found or not permitted fields are reported as huge
// sentinels (dcgm_structs.h: DCGM_INT64_BLANK = 0x7ffffffffffffff0 and up, DCGM_INT32_BLANK =
// 0x7ffffff0 and up, DCGM_FP64_BLANK = 2^47 and up). Returns true for such a value.
bool IsDcgmBlank(double value);

// Maps a dcgm-exporter modelName ("NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB") to the
// catalog's model name ("H100", "V100M32"), or "" when it is not recognised. The rules are
// gpu::ParseGpuName's (NameMatch::kProduct).
std::string_view CatalogModelName(std::string_view dcgm_model_name);

// One sample, viewing the parser's buffers: valid only during SampleSink::OnSample. Copy what
// you keep (Sample::FromView).
struct SampleView {
  std::string_view metric;
  MetricType type = MetricType::kUnknown;
  std::span<const LabelView> labels;  // in exposition order
  double value = 0.0;                 // as exposed (see LookupField for canonical units)
  std::int64_t timestamp_ms = kNoTimestamp;  // Unix epoch milliseconds
  std::string_view source;            // file name or "<stdin>"
  std::uint64_t line = 0;             // 1-based line of the sample in the source
};

// One sample, owning.
struct Sample {
  std::string metric;
  MetricType type = MetricType::kUnknown;
  std::vector<Label> labels;  // in exposition order
  double value = 0.0;
  std::int64_t timestamp_ms = kNoTimestamp;
  std::string source;
  std::uint64_t line = 0;

  static Sample FromView(const SampleView& view);
  // Returns the label's value, or "" when absent (exact name match).
  std::string_view LabelValue(std::string_view name) const;
  Entity entity() const { return IdentifyEntity(labels); }
  FieldMapping field() const { return LookupField(metric); }
};

// Returns the canonical series key: `metric{a="x",b="y"}` with labels sorted by name and values
// escaped as in the text format (\\, \", \n). Equal series give equal keys.
std::string SeriesKey(std::string_view metric, std::span<const LabelView> labels);
std::string SeriesKey(const Sample& sample);

// Receives the samples a parser accepts, in input order.
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  virtual void OnSample(const SampleView& sample) = 0;
};

// A sink that keeps owning copies (tests, small inputs).
class CollectingSink final : public SampleSink {
 public:
  void OnSample(const SampleView& sample) override { samples.push_back(Sample::FromView(sample)); }
  std::vector<Sample> samples;
};

}  // namespace seedance::telemetry
