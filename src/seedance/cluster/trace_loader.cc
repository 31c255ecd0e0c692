#include "seedance/cluster/trace_loader.h"

#include <unordered_set>

namespace seedance::cluster {
namespace {

Result<std::int64_t> NonNegative(const CsvTable& t, const CsvTable::Row& row, std::size_t col) {
  SEEDANCE_ASSIGN_OR_RETURN(std::int64_t v, t.Int(row, col));
  if (v < 0) return t.FieldError(row, col, "must be >= 0, got " + std::to_string(v));
  return v;
}

Result<std::int64_t> InRange(const CsvTable& t, const CsvTable::Row& row, std::size_t col,
                             std::int64_t lo, std::int64_t hi) {
  SEEDANCE_ASSIGN_OR_RETURN(std::int64_t v, t.Int(row, col));
  if (v < lo || v > hi) {
    return t.FieldError(row, col, "must be in " + std::to_string(lo) + ".." + std::to_string(hi) +
                                      ", got " + std::to_string(v));
  }
  return v;
}

Result<Qos> ParseQos(const CsvTable& t, const CsvTable::Row& row, std::size_t col) {
  std::string_view s = t.Str(row, col);
  if (s.empty() || s == "BE") return Qos::kBestEffort;
  if (s == "LS") return Qos::kLatencySensitive;
  if (s == "Burstable") return Qos::kBurstable;
  if (s == "Guaranteed") return Qos::kGuaranteed;
  return t.FieldError(row, col,
                      "unknown QoS '" + std::string(s) + "' (LS, BE, Burstable, Guaranteed)");
}

}  // namespace

Result<std::vector<NodeSpec>> ParseNodes(const CsvTable& t) {
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_name, t.ColumnIndex("sn"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_cpu, t.ColumnIndex("cpu_milli"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_mem, t.ColumnIndex("memory_mib"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_gpu, t.ColumnIndex("gpu"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_model, t.ColumnIndex("model"));
  if (t.rows().empty()) return InvalidArgumentError(t.name() + ": no nodes (header only)");
  std::vector<NodeSpec> nodes;
  nodes.reserve(t.rows().size());
  std::unordered_set<std::string_view> names;
  for (const auto& row : t.rows()) {
    NodeSpec n;
    n.name = std::string(t.Str(row, c_name));
    if (n.name.empty()) return t.FieldError(row, c_name, "empty node name");
    if (!names.insert(t.Str(row, c_name)).second) {
      return t.FieldError(row, c_name, "duplicate node name '" + n.name + "'");
    }
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t cpu, NonNegative(t, row, c_cpu));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t mem, NonNegative(t, row, c_mem));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t gpu, InRange(t, row, c_gpu, 0, kMaxGpusPerNode));
    n.cpu = Millicores(cpu);
    n.memory = MiB(mem);
    n.gpu_count = static_cast<int>(gpu);
    std::string_view model = t.Str(row, c_model);
    if (gpu > 0) {
      if (model.empty()) return t.FieldError(row, c_model, "a node with GPUs needs a model");
      auto m = ParseGpuModel(model);
      if (!m.has_value()) return t.FieldError(row, c_model, m.error().message());
      n.model = *m;
    } else if (!model.empty()) {
      auto m = ParseGpuModel(model);
      if (!m.has_value()) return t.FieldError(row, c_model, m.error().message());
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

Result<std::vector<NodeSpec>> LoadNodes(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  return ParseNodes(t);
}

Result<std::vector<PodSpec>> ParsePods(const CsvTable& t) {
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_name, t.ColumnIndex("name"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_cpu, t.ColumnIndex("cpu_milli"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_mem, t.ColumnIndex("memory_mib"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_ngpu, t.ColumnIndex("num_gpu"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_milli, t.ColumnIndex("gpu_milli"));
  const std::ptrdiff_t c_spec = t.FindColumn("gpu_spec");
  const std::ptrdiff_t c_qos = t.FindColumn("qos");
  const std::ptrdiff_t c_create = t.FindColumn("creation_time");
  const std::ptrdiff_t c_delete = t.FindColumn("deletion_time");
  if (t.rows().empty()) return InvalidArgumentError(t.name() + ": no pods (header only)");
  std::vector<PodSpec> pods;
  pods.reserve(t.rows().size());
  std::unordered_set<std::string_view> names;
  for (const auto& row : t.rows()) {
    PodSpec p;
    p.name = std::string(t.Str(row, c_name));
    if (p.name.empty()) return t.FieldError(row, c_name, "empty pod name");
    if (!names.insert(t.Str(row, c_name)).second) {
      return t.FieldError(row, c_name, "duplicate pod name '" + p.name + "'");
    }
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t cpu, NonNegative(t, row, c_cpu));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t mem, NonNegative(t, row, c_mem));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t ngpu, InRange(t, row, c_ngpu, 0, 8));
    p.cpu = Millicores(cpu);
    p.memory = MiB(mem);
    p.num_gpu = static_cast<int>(ngpu);
    if (ngpu > 0) {
      SEEDANCE_ASSIGN_OR_RETURN(std::int64_t milli, InRange(t, row, c_milli, 1, kMilliPerGpu));
      p.gpu_milli = static_cast<std::int32_t>(milli);
    } else {
      // CPU-only pods carry 0 here; the value is not used.
      SEEDANCE_ASSIGN_OR_RETURN(std::int64_t milli, InRange(t, row, c_milli, 0, kMilliPerGpu));
      (void)milli;
    }
    if (c_spec >= 0) {
      auto col = static_cast<std::size_t>(c_spec);
      auto set = ParseGpuModelSet(t.Str(row, col));
      if (!set.has_value()) return t.FieldError(row, col, set.error().message());
      p.allowed_models = *set;
    }
    if (c_qos >= 0) {
      SEEDANCE_ASSIGN_OR_RETURN(p.qos, ParseQos(t, row, static_cast<std::size_t>(c_qos)));
    }
    if (c_create >= 0 && !t.Str(row, static_cast<std::size_t>(c_create)).empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(p.creation_s,
                                NonNegative(t, row, static_cast<std::size_t>(c_create)));
    }
    if (c_delete >= 0 && !t.Str(row, static_cast<std::size_t>(c_delete)).empty()) {
      auto col = static_cast<std::size_t>(c_delete);
      SEEDANCE_ASSIGN_OR_RETURN(p.deletion_s, NonNegative(t, row, col));
      if (p.deletion_s < p.creation_s) {
        return t.FieldError(row, col, "deletion_time before creation_time");
      }
    }
    pods.push_back(std::move(p));
  }
  return pods;
}

Result<std::vector<PodSpec>> LoadPods(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  return ParsePods(t);
}

}  // namespace seedance::cluster
