#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seedance/cluster/gpu_model.h"
#include "seedance/core/status.h"

namespace seedance::audit {

// What the audit needs to know about a GPU model: its dense peak throughput at the precision it
// is built for (the denominator of the energy ratio, S7.1) and its board power limit.
struct GpuAuditSpec {
  cluster::GpuModelIndex model = cluster::kNoGpuModel;  // index into cluster::KnownGpuModels()
  std::string precision;  // "int8", "fp16": the precision `dense_tops` is quoted at
  double dense_tops = 0;  // tera-ops per second, dense (no structured sparsity)
  double tdp_w = 0;       // board power limit, W
};

// Returns the catalog (datasheet figures; sources in gpu_catalog.cc).
const std::vector<GpuAuditSpec>& GpuAuditCatalog();

// Returns the spec of `model`, or kNotFound naming the model when the catalog lacks it.
Result<GpuAuditSpec> FindGpuAuditSpec(cluster::GpuModelIndex model);

// Recognizes a GPU model from a dcgm-exporter `modelName` label value ("NVIDIA A100-SXM4-80GB",
// "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB", "Tesla T4") or a catalog name ("A100-80G").
// Errors: kInvalidArgument "unknown GPU model '...'" listing the recognized families.
Result<cluster::GpuModelIndex> RecognizeGpuModel(std::string_view model_name);

}  // namespace seedance::audit
