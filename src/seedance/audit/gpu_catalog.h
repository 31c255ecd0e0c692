#pragma once

#include <string>

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

// Returns the spec of `model` from the GPU catalog (gpu::Catalog(): datasheet figures, cited
// there; dense INT8 TOPS where the model has INT8 tensor cores, else dense FP16 TFLOPS; the
// board power limit per GPU), or kNotFound naming the model when the catalog has no such facts
// (the openb trace's undisclosed G2/G3) or no such model (kNoGpuModel). GPU names are parsed
// by gpu::ParseGpuName.
Result<GpuAuditSpec> FindGpuAuditSpec(cluster::GpuModelIndex model);

}  // namespace seedance::audit
