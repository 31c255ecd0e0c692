#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::batching {

// The GPUs the engine can time. A100 and H100 have Vidur profiles (memory 80 GiB for both:
// Vidur's device SKU table, total_memory_gb 80, used by its planner as GiB). L4 and A10G have
// none: their executor is derived from the A100 profile (`profile` = "a100"), scaled by the
// catalog's memory bandwidth and FP16 tensor peak (a modelling assumption; see
// ProfiledExecutor), with their own memory for the KV blocks.
struct GpuSpec {
  std::string name;              // "a100" | "h100" | "l4" | "a10g"
  std::string profile;           // the Vidur profile folder it is timed from ("a100" for l4/a10g)
  std::string price_model;       // the GPU model name in data/prices/gpu_prices.csv
  bool derived() const { return profile != name; }
  double memory_bytes = 0;       // HBM capacity
  double dram_bytes_per_s = 0;   // HBM bandwidth (A100-80GB SXM 2.039 TB/s, H100 SXM 3.35 TB/s)
  double fp16_flops = 0;         // dense FP16 tensor peak (312 / 989 TFLOP/s)
  double pcie_bytes_per_s = 0;   // host link used by swap preemption (PCIe 4 / 5 x16, ~25 / ~50 GB/s)
  bool native_fp8 = false;       // FP8 tensor cores (Hopper)
};

// The transformer shape that sets the KV cache size and the weights' footprint, and how it is
// deployed: `tensor_parallel` GPUs per replica (Megatron-style: every layer's GEMMs and heads
// split over the ranks, two all-reduces per layer), timed from the profile rows of that degree.
struct ModelSpec {
  std::string name;  // "llama-2-7b"
  std::string profile_dir;  // Vidur's <org>/<model>, under <profile_root>/<gpu>/
  int layers = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  double params = 0;        // parameter count
  int max_context = 0;      // tokens (prompt + output)
  std::vector<int> tp_degrees = {1};  // tensor-parallel degrees the bundled profiles measured
  int tensor_parallel = 1;  // GPUs per replica
  std::string profile_root; // compute profiles (Vidur's data/profiling/compute layout); empty:
                            // <data_dir>/vidur_profiles/compute
  int hidden() const { return heads * head_dim; }
};

enum class Precision { kFp16, kFp8, kInt8, kInt4 };

// Speed and memory of a weight precision relative to FP16 (documented in
// docs/ARCHITECTURE.md "Inference batching"): the memory-bound part of a GEMM scales with the
// weight bytes, the compute-bound part with the tensor throughput on that GPU.
struct PrecisionFactors {
  double bits = 16;                 // weight bits
  double weight_bytes_ratio = 1;    // weight bytes vs FP16 (also the memory-bound time factor)
  double compute_time_ratio = 1;    // compute-bound GEMM time vs FP16 on this GPU
  double fallback_share = 0;        // share of GEMM work run in FP16 (INT8 outlier fallback)
  double affinity = 1;              // S5.7 hardware-affinity score in [0, 1]
};

std::string_view PrecisionName(Precision p);

// Lookups by CLI spelling. Errors: kInvalidArgument listing the accepted names.
Result<GpuSpec> FindGpu(std::string_view name);
Result<ModelSpec> FindModel(std::string_view name);
std::vector<std::string> KnownModels();
Result<Precision> ParsePrecision(std::string_view name);
std::vector<std::string> KnownGpus();

// Returns the factors of `p` on `gpu`. FP8 without native support (A100) runs weight-only
// (W8A16): memory-bound part halves, compute-bound part stays FP16. INT8 is W8A8 (INT8 tensor
// cores, 2x FP16) with a 5% FP16 fallback for outlier channels, counted as a cost. INT4 is
// W4A16 (AWQ-style): a quarter of the weight bytes plus dequantisation (0.3 of FP16 time when
// memory bound, 1.1 when compute bound).
PrecisionFactors FactorsFor(Precision p, const GpuSpec& gpu);

// S5.7 seed affinity: min(1, 0.6 * 16 / bits + 0.4 * nonzero_density), halved when the GPU has
// no native unit for the format (FP8 on A100).
double AffinityScore(double bits, double nonzero_density, bool native);

// KV-cache bytes per token: 2 (K and V) x layers x kv_heads x head_dim x kv_bits / 8.
double KvBytesPerToken(const ModelSpec& m, double kv_bits = 16);
// Weight bytes: params x bits / 8.
double WeightBytes(const ModelSpec& m, const PrecisionFactors& f);

// The least KV space a replica can run with: one sequence of the full context at FP16.
double KvReserveBytes(const ModelSpec& m);

// The default TP degree's KV reserve: at least this share of the replica's memory is left to the
// KV cache (besides KvReserveBytes), so that a replica batches more than a handful of requests.
inline constexpr double kDefaultKvShare = 0.25;

// The smallest of m.tp_degrees at which the FP16 weights leave, in tp x the GPU's memory x
// `utilization`, room for max(KvReserveBytes, kDefaultKvShare x tp x memory) of KV; GPUs without
// their own profile (l4, a10g) only at TP 1 (no interconnect profile). Errors:
// kFailedPrecondition naming the model, the GPU, its memory and the bytes needed.
Result<int> DefaultTensorParallel(const GpuSpec& gpu, const ModelSpec& m, double utilization);

// Checks an explicit `tp`: a profiled degree (kInvalidArgument naming the model and listing the
// degrees; TP 1 only on l4 / a10g), whose memory holds the weights + KvReserveBytes
// (kFailedPrecondition otherwise).
Status CheckTensorParallel(const GpuSpec& gpu, const ModelSpec& m, int tp, double utilization);

// Vidur's vLLM memory planner: (memory x (1 - 0.1) - 2 x params) / (2 x 2 x head_dim x
// kv_heads x max_tokens x layers), floored; FP16 weights and KV.
int VidurMaxBatch(const GpuSpec& gpu, const ModelSpec& m, int max_tokens);

// KV blocks available on the replica: (tensor_parallel x memory x utilization - weights) / (block_size x KV bytes
// per token), floored (vLLM's gpu_memory_utilization; activations are not reserved, as in
// Vidur's planner). REQUIRES: block_size > 0.
std::int64_t KvBlocksFor(const GpuSpec& gpu, const ModelSpec& m, const PrecisionFactors& f,
                         double utilization, int block_size);

}  // namespace seedance::batching
