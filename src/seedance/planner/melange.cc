#include "seedance/planner/melange.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace seedance::planner {
namespace {

using nlohmann::json;

Status FieldError(const std::string& file, const std::string& field, const std::string& what) {
  return InvalidArgumentError(fmt::format("{}: {}: {}", file, field, what));
}

// Reads a rows x cols matrix of finite numbers >= 0; rows/cols = 0 on entry means "any".
Status ReadMatrix(const std::string& file, const std::string& field, const json& j, int* rows,
                  int* cols, std::vector<double>* out) {
  if (!j.is_array() || j.empty()) return FieldError(file, field, "must be a non-empty array of rows");
  if (*rows != 0 && static_cast<int>(j.size()) != *rows) {
    return FieldError(file, field, fmt::format("has {} rows, expected {}", j.size(), *rows));
  }
  *rows = static_cast<int>(j.size());
  out->clear();
  for (std::size_t i = 0; i < j.size(); ++i) {
    const json& row = j[i];
    const std::string rf = fmt::format("{}[{}]", field, i);
    if (!row.is_array() || row.empty()) return FieldError(file, rf, "must be a non-empty array");
    if (*cols != 0 && static_cast<int>(row.size()) != *cols) {
      return FieldError(file, rf, fmt::format("has {} columns, expected {}", row.size(), *cols));
    }
    *cols = static_cast<int>(row.size());
    for (std::size_t k = 0; k < row.size(); ++k) {
      const std::string ef = fmt::format("{}[{}]", rf, k);
      if (!row[k].is_number()) return FieldError(file, ef, "must be a number");
      const double v = row[k].get<double>();
      if (!std::isfinite(v) || v < 0) return FieldError(file, ef, fmt::format("{} must be >= 0", v));
      out->push_back(v);
    }
  }
  return Status::Ok();
}

}  // namespace

Result<MelangeConfig> ParseMelangeConfig(const std::string& name, const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return InvalidArgumentError(name + ": not valid JSON");
  if (!j.is_object()) return InvalidArgumentError(name + ": the top level must be an object");
  MelangeConfig c;
  for (const char* key : {"gpu_info", "workload_distribution", "total_request_rate"}) {
    if (!j.contains(key)) return FieldError(name, key, "missing");
  }
  SEEDANCE_RETURN_IF_ERROR(ReadMatrix(name, "workload_distribution", j["workload_distribution"],
                                      &c.inputs, &c.outputs, &c.distribution));
  double sum = 0;
  for (double v : c.distribution) sum += v;
  if (std::abs(sum - 1) > 1e-6) {
    return FieldError(name, "workload_distribution", fmt::format("fractions sum to {:.9g}, not 1", sum));
  }
  const json& info = j["gpu_info"];
  if (!info.is_object() || info.empty()) return FieldError(name, "gpu_info", "must be a non-empty object");
  for (auto it = info.begin(); it != info.end(); ++it) {
    const std::string f = "gpu_info." + it.key();
    const json& g = it.value();
    if (!g.is_object()) return FieldError(name, f, "must be an object with cost and tputs");
    if (!g.contains("cost") || !g["cost"].is_number()) return FieldError(name, f + ".cost", "missing or not a number");
    const double cost = g["cost"].get<double>();
    if (!std::isfinite(cost) || cost <= 0) return FieldError(name, f + ".cost", fmt::format("{} must be > 0", cost));
    if (!g.contains("tputs")) return FieldError(name, f + ".tputs", "missing");
    std::vector<double> t;
    int rows = c.inputs, cols = c.outputs;
    SEEDANCE_RETURN_IF_ERROR(ReadMatrix(name, f + ".tputs", g["tputs"], &rows, &cols, &t));
    c.gpus.push_back(it.key());
    c.cost.push_back(cost);
    c.tputs.push_back(std::move(t));
  }
  const json& rate = j["total_request_rate"];
  if (!rate.is_number() || !(rate.get<double>() > 0) || !std::isfinite(rate.get<double>())) {
    return FieldError(name, "total_request_rate", "must be a number > 0");
  }
  c.total_request_rate = rate.get<double>();
  if (j.contains("slice_factor")) {
    const json& sf = j["slice_factor"];
    if (!sf.is_number_integer() || sf.get<long long>() < 1 || sf.get<long long>() > 1000) {
      return FieldError(name, "slice_factor", "must be an integer in 1..1000");
    }
    c.slice_factor = static_cast<int>(sf.get<long long>());
  }
  return c;
}

Result<MelangeConfig> LoadMelangeConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseMelangeConfig(path, ss.str());
}

AllocationProblem ToProblem(const MelangeConfig& c) {
  AllocationProblem p;
  p.slice_factor = c.slice_factor;
  for (int i = 0; i < c.inputs; ++i) {
    for (int o = 0; o < c.outputs; ++o) {
      p.rate.push_back(c.distribution[static_cast<std::size_t>(i * c.outputs + o)] * c.total_request_rate);
      p.bucket_names.push_back(fmt::format("bucket [in {}][out {}]", i, o));
    }
  }
  for (std::size_t g = 0; g < c.gpus.size(); ++g) {
    p.gpus.push_back(GpuOption{c.gpus[g], c.cost[g], false, c.tputs[g], -1});
  }
  return p;
}

}  // namespace seedance::planner
