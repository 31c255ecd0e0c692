#include "seedance/audit/gpu_catalog.h"

#include "seedance/gpu/catalog.h"

namespace seedance::audit {

Result<GpuAuditSpec> FindGpuAuditSpec(cluster::GpuModelIndex model) {
  if (model >= gpu::Catalog().size()) {
    return NotFoundError("no GPU model (index " + std::to_string(model) + ") in the audit catalog");
  }
  const gpu::GpuFacts& g = gpu::GpuAt(model);
  if (!g.disclosed || g.tdp_w <= 0 || g.fp16_tflops <= 0) {
    return NotFoundError("GPU model '" + std::string(g.name) +
                         "' has no entry in the audit catalog (no TOPS and power limit known)");
  }
  // Models with INT8 tensor cores are rated at INT8, the others at FP16 (the GPU catalog's FP16
  // rate: tensor cores where present, else CUDA cores).
  const bool int8 = g.int8_tops > 0;
  return GpuAuditSpec{model, int8 ? "int8" : "fp16", int8 ? g.int8_tops : g.fp16_tflops, g.tdp_w};
}

}  // namespace seedance::audit
