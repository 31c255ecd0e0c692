#include "seedance/batching/model.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seedance/gpu/catalog.h"

namespace seedance::batching {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Swap preemption copies KV blocks over the host link at this share of its x16 per-direction
// rate (an assumption: 25 GB/s on PCIe 4, 50 GB/s on PCIe 5).
constexpr double kSwapLinkEfficiency = 0.78125;

// A Vidur profile directory (data/vidur_profiles/compute/<name>) and the catalog row of the GPU
// it was measured on; every fact comes from the GPU catalog.
GpuSpec FromCatalog(std::string_view name, std::string_view profile, std::string_view model) {
  const gpu::GpuFacts& g = gpu::GpuAt(*gpu::ParseGpuName(model, gpu::NameMatch::kCanonical));
  return GpuSpec{std::string(name),
                 std::string(profile),
                 std::string(g.name),
                 g.memory_gib * kGiB,
                 g.memory_gb_s * 1e9,
                 g.fp16_tflops * 1e12,
                 g.host_link_gb_s * kSwapLinkEfficiency * 1e9,
                 g.fp8_tflops > 0};
}

std::vector<GpuSpec> Gpus() {
  return {FromCatalog("a100", "a100", "A100-80G"), FromCatalog("h100", "h100", "H100"),
          FromCatalog("l4", "a100", "L4"), FromCatalog("a10g", "a100", "A10G")};
}

}  // namespace

std::string_view PrecisionName(Precision p) {
  switch (p) {
    case Precision::kFp16: return "fp16";
    case Precision::kFp8: return "fp8";
    case Precision::kInt8: return "int8";
    case Precision::kInt4: return "int4";
  }
  return "?";
}

std::vector<std::string> KnownGpus() {
  std::vector<std::string> names;
  for (const auto& g : Gpus()) names.push_back(g.name);
  return names;
}

Result<GpuSpec> FindGpu(std::string_view name) {
  for (const auto& g : Gpus()) {
    if (g.name == name) return g;
  }
  // Any spelling the one GPU-name parser knows (a100-80g, "NVIDIA H100 80GB HBM3", ...), as the
  // fleet file and telemetry name them.
  if (auto idx = gpu::ParseGpuName(name, gpu::NameMatch::kProduct); idx.has_value()) {
    const std::string_view canonical = gpu::GpuAt(*idx).name;
    for (const auto& g : Gpus()) {
      if (g.price_model == canonical) return g;
    }
    return InvalidArgumentError(fmt::format(
        "gpu '{}' is the {}, which the batching engine has no profile for (accepted: a100 (A100-80G), h100, l4, a10g)",
        name, canonical));
  }
  return InvalidArgumentError(fmt::format("unknown gpu '{}' (accepted: a100, h100, l4, a10g)", name));
}

namespace {

// The models with bundled Vidur profiles (data/vidur_profiles/SOURCE.md); shapes and context
// from Vidur's model configs (vidur/config/model_config.py), parameter counts from the model cards.
std::vector<ModelSpec> Models() {
  return {
      // 32 layers, 32 heads (no GQA), head_dim 128; the bundled profile keeps TP 1 only.
      ModelSpec{"llama-2-7b", "meta-llama/Llama-2-7b-hf", 32, 32, 32, 128, 6.74e9, 4096, {1}, 1, ""},
      // 80 layers, 64 query / 8 KV heads (GQA), head_dim 128: 138 GB of FP16 weights.
      ModelSpec{"llama-2-70b", "meta-llama/Llama-2-70b-hf", 80, 64, 8, 128, 68.98e9, 4096, {1, 2, 4, 8}, 1, ""},
      // 48 layers, 64 query / 8 KV heads, head_dim 128, 16,384 context.
      ModelSpec{"codellama-34b", "codellama/CodeLlama-34b-Instruct-hf", 48, 64, 8, 128, 33.74e9, 16384,
                {1, 2, 4, 8}, 1, ""},
      // 32 layers, 32 heads, head_dim 80, 2,048 context; Vidur profiles it at TP 1 only.
      ModelSpec{"phi-2", "microsoft/phi-2", 32, 32, 32, 80, 2.78e9, 2048, {1}, 1, ""},
      // Llama-3 (A100 profiles only): 8B 32 layers, 32 query / 8 KV heads; 70B 80 layers, 64 / 8;
      // head_dim 128, 8,192 context.
      ModelSpec{"llama-3-8b", "meta-llama/Meta-Llama-3-8B", 32, 32, 8, 128, 8.03e9, 8192, {1, 2, 4, 8}, 1, ""},
      ModelSpec{"llama-3-70b", "meta-llama/Meta-Llama-3-70B", 80, 64, 8, 128, 70.55e9, 8192, {1, 2, 4, 8}, 1, ""},
  };
}

}  // namespace

std::vector<std::string> KnownModels() {
  std::vector<std::string> names;
  for (const auto& m : Models()) names.push_back(m.name);
  return names;
}

Result<ModelSpec> FindModel(std::string_view name) {
  for (const auto& m : Models()) {
    if (m.name == name) return m;
  }
  return InvalidArgumentError(
      fmt::format("unknown model '{}' (accepted: {})", name, fmt::join(KnownModels(), ", ")));
}

double KvReserveBytes(const ModelSpec& m) { return KvBytesPerToken(m) * m.max_context; }

namespace {

// The bytes a replica needs (FP16 weights + `kv` of KV) against the bytes it has at degree tp.
bool Fits(const GpuSpec& gpu, const ModelSpec& m, int tp, double utilization, double kv) {
  return WeightBytes(m, PrecisionFactors{}) + kv <= tp * gpu.memory_bytes * utilization;
}

}  // namespace

Status CheckTensorParallel(const GpuSpec& gpu, const ModelSpec& m, int tp, double utilization) {
  if (std::find(m.tp_degrees.begin(), m.tp_degrees.end(), tp) == m.tp_degrees.end()) {
    return InvalidArgumentError(fmt::format("--tp {}: {} is profiled at TP {} only", tp, m.name,
                                            fmt::join(m.tp_degrees, ", ")));
  }
  if (tp > 1 && gpu.derived()) {
    return InvalidArgumentError(fmt::format(
        "--tp {}: {} has no profile of its own (timed from {}) and no interconnect profile: TP 1 only", tp,
        gpu.name, gpu.profile));
  }
  if (!Fits(gpu, m, tp, utilization, KvReserveBytes(m))) {
    return FailedPreconditionError(fmt::format(
        "{} does not fit on {} x {} ({:.0f} GiB each at {:.0f}% utilization): {:.1f} GB of FP16 weights + "
        "{:.1f} GB of KV for one {}-token sequence",
        m.name, tp, gpu.name, gpu.memory_bytes / kGiB, 100 * utilization,
        WeightBytes(m, PrecisionFactors{}) / 1e9, KvReserveBytes(m) / 1e9, m.max_context));
  }
  return Status();
}

Result<int> DefaultTensorParallel(const GpuSpec& gpu, const ModelSpec& m, double utilization) {
  int tried = 0;
  for (int tp : m.tp_degrees) {
    if (tp > 1 && gpu.derived()) break;
    tried = tp;
    const double kv = std::max(KvReserveBytes(m), kDefaultKvShare * tp * gpu.memory_bytes);
    if (Fits(gpu, m, tp, utilization, kv)) return tp;
  }
  return FailedPreconditionError(fmt::format(
      "{} does not fit on {} x {} ({:.0f} GiB each at {:.0f}% utilization): {:.1f} GB of FP16 weights + a KV "
      "reserve of {:.0f}% of the memory (at least one {}-token sequence){}",
      m.name, tried, gpu.name, gpu.memory_bytes / kGiB, 100 * utilization, WeightBytes(m, PrecisionFactors{}) / 1e9,
      100 * kDefaultKvShare, m.max_context,
      gpu.derived() ? fmt::format("; {} has no interconnect profile: TP 1 only", gpu.name) : ""));
}

Result<Precision> ParsePrecision(std::string_view name) {
  for (Precision p : {Precision::kFp16, Precision::kFp8, Precision::kInt8, Precision::kInt4}) {
    if (PrecisionName(p) == name) return p;
  }
  return InvalidArgumentError(
      fmt::format("unknown precision '{}' (accepted: fp16, fp8, int8, int4)", name));
}

double AffinityScore(double bits, double nonzero_density, bool native) {
  const double s = std::min(1.0, 0.6 * 16.0 / bits + 0.4 * nonzero_density);
  return native ? s : 0.5 * s;
}

PrecisionFactors FactorsFor(Precision p, const GpuSpec& gpu) {
  PrecisionFactors f;
  switch (p) {
    case Precision::kFp16:
      break;
    case Precision::kFp8:
      f.bits = 8;
      f.weight_bytes_ratio = 0.5;
      f.compute_time_ratio = gpu.native_fp8 ? 0.5 : 1.0;
      break;
    case Precision::kInt8:
      f.bits = 8;
      f.weight_bytes_ratio = 0.5;
      f.fallback_share = 0.05;
      f.compute_time_ratio = 0.95 * 0.5 + 0.05 * 1.0;
      break;
    case Precision::kInt4:
      f.bits = 4;
      f.weight_bytes_ratio = 0.3;  // 0.25 of the bytes + scales and dequantisation
      f.compute_time_ratio = 1.1;
      break;
  }
  const bool native = p != Precision::kFp8 || gpu.native_fp8;
  f.affinity = AffinityScore(f.bits, 1.0, native);
  return f;
}

double KvBytesPerToken(const ModelSpec& m, double kv_bits) {
  return 2.0 * m.layers * m.kv_heads * m.head_dim * kv_bits / 8.0;
}

double WeightBytes(const ModelSpec& m, const PrecisionFactors& f) {
  return m.params * 2.0 * f.weight_bytes_ratio;
}

int VidurMaxBatch(const GpuSpec& gpu, const ModelSpec& m, int max_tokens) {
  const double free = gpu.memory_bytes * (1 - 0.1) - 2 * m.params;
  const double per_request = 2.0 * 2.0 * m.head_dim * m.kv_heads * max_tokens * m.layers;
  return static_cast<int>(std::floor(free / per_request));
}

std::int64_t KvBlocksFor(const GpuSpec& gpu, const ModelSpec& m, const PrecisionFactors& f,
                         double utilization, int block_size) {
  SEEDANCE_CHECK(block_size > 0);
  const double free = m.tensor_parallel * gpu.memory_bytes * utilization - WeightBytes(m, f);
  const double per_block = block_size * KvBytesPerToken(m);
  return std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor(free / per_block)));
}

}  // namespace seedance::batching
