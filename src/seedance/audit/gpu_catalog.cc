#include "seedance/audit/gpu_catalog.h"

#include <algorithm>
#include <cctype>

namespace seedance::audit {
namespace {

GpuAuditSpec Row(std::string_view name, std::string precision, double tops, double tdp) {
  return GpuAuditSpec{*cluster::ParseGpuModel(name), std::move(precision), tops, tdp};
}

std::vector<std::string> Tokens(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == ' ' || c == '-' || c == '_') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

// Dense peak throughput (no sparsity) from NVIDIA's datasheets, SXM variants where a model has
// several: T4 (INT8 130 TOPS, 70 W), P100 SXM2 (FP16 21.2 TFLOPS, 300 W), V100 SXM2 (FP16
// tensor 125 TFLOPS, 300 W), A10 (INT8 250, 150 W), A100/A800 SXM4 (INT8 624, 400 W), H100/H800
// SXM5 and H200 (INT8 1,979, 700 W), L4 (INT8 242 dense = 485 sparse / 2, 72 W), L40S (INT8 733,
// 350 W). Models without tensor INT8 are rated at FP16. PCIe variants of A100/H100 have lower
// limits; the audit uses the SXM row for them (a known approximation).
const std::vector<GpuAuditSpec>& GpuAuditCatalog() {
  static const std::vector<GpuAuditSpec> kCatalog = {
      Row("T4", "int8", 130, 70),         Row("P100", "fp16", 21.2, 300),
      Row("V100", "fp16", 125, 300),      Row("V100M16", "fp16", 125, 300),
      Row("V100M32", "fp16", 125, 300),   Row("A10", "int8", 250, 150),
      Row("A100", "int8", 624, 400),      Row("A100-80G", "int8", 624, 400),
      Row("A800", "int8", 624, 400),      Row("H100", "int8", 1979, 700),
      Row("H800", "int8", 1979, 700),     Row("H200", "int8", 1979, 700),
      Row("L4", "int8", 242, 72),         Row("L40S", "int8", 733, 350),
  };
  return kCatalog;
}

Result<GpuAuditSpec> FindGpuAuditSpec(cluster::GpuModelIndex model) {
  for (const GpuAuditSpec& s : GpuAuditCatalog()) {
    if (s.model == model) return s;
  }
  return NotFoundError("GPU model '" + std::string(cluster::GpuModelName(model)) +
                       "' has no entry in the audit catalog (no TOPS and power limit known)");
}

Result<cluster::GpuModelIndex> RecognizeGpuModel(std::string_view model_name) {
  if (auto exact = cluster::ParseGpuModel(model_name); exact.has_value()) return *exact;
  const std::vector<std::string> t = Tokens(model_name);
  auto has = [&](std::string_view tok) { return std::find(t.begin(), t.end(), tok) != t.end(); };
  auto has_mem = [&](std::string_view gb) { return has(gb) || has(std::string(gb) + "HBM3"); };
  const char* name = nullptr;
  if (has("H200")) {
    name = "H200";
  } else if (has("H800")) {
    name = "H800";
  } else if (has("H100")) {
    name = "H100";
  } else if (has("A800")) {
    name = "A800";
  } else if (has("A100")) {
    name = has_mem("80GB") ? "A100-80G" : "A100";
  } else if (has("L40S")) {
    name = "L40S";
  } else if (has("A10G")) {
    name = "A10G";
  } else if (has("A10")) {
    name = "A10";
  } else if (has("L4")) {
    name = "L4";
  } else if (has("T4")) {
    name = "T4";
  } else if (has("V100")) {
    name = has("32GB") ? "V100M32" : has("16GB") ? "V100M16" : "V100";
  } else if (has("P100")) {
    name = "P100";
  } else if (has("K80")) {
    name = "K80";
  }
  if (name == nullptr) {
    return InvalidArgumentError(
        "unknown GPU model '" + std::string(model_name) +
        "' (recognized: H200, H800, H100, A800, A100 40/80GB, L40S, A10G, A10, L4, T4, V100 "
        "16/32GB, P100, K80, or a catalog name)");
  }
  return *cluster::ParseGpuModel(name);
}

}  // namespace seedance::audit
