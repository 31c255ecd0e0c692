#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "seedance/batching/model.h"
#include "seedance/batching/profile.h"
#include "seedance/core/status.h"

namespace seedance::batching {

// One prefill chunk of one sequence in an iteration: `tokens` new prompt tokens on top of
// `kv_before` tokens already in the KV cache (chunked prefill, or recompute after preemption).
struct PrefillChunk {
  std::int32_t tokens = 0;
  std::int32_t kv_before = 0;
};

// What the model runs in one iteration. Decodes are summarised by count and total context.
struct BatchShape {
  std::vector<PrefillChunk> prefills;
  std::int32_t decodes = 0;
  // Sum of the decoding sequences' context lengths, each token weighted by KvReadFactor of the
  // precision it is stored at (plain token count for an FP16 cache).
  std::int64_t decode_kv_sum = 0;
  double extra_seconds = 0;         // swap-in / decompression time the scheduler adds

  std::int64_t Tokens() const;      // prefill tokens + decodes
  std::int32_t Sequences() const { return static_cast<std::int32_t>(prefills.size()) + decodes; }
  void Clear() {
    prefills.clear();
    decodes = 0;
    decode_kv_sum = 0;
    extra_seconds = 0;
  }
};

// Time of one iteration and the activity a DCGM-style monitor would report for it (in the
// simulation estimated from the executor's roofline: FLOPs / (0.65 x peak) and bytes /
// (0.9 x bandwidth) over the GPU time, clamped to 1).
struct StepCost {
  double seconds = 0;
  double sm_active = 0;
  double dram_active = 0;
};

// Cost of reading one KV token in decode attention, relative to an FP16 token, when the cache
// stores it at `bits` (16, 8, 6 or 4). Decode attention is memory bound, so the read shrinks
// with the bytes, but the kernel must convert every element back to FP16 before the dot
// products (there is no FP8 / INT4 tensor-core path for it on A100):
//   factor = bits / 16 + dequant(bits); dequant(16) = 0, dequant(8) = 0.10, dequant(6 or 4) = 0.25.
// FP8 (vLLM `--kv-cache-dtype fp8`): one cvt per element fused into the paged-attention
// kernel, counted as 10% of the FP16 read. 4/6-bit (the Seedance heat tiers): unpacking and
// per-group scaling on CUDA cores, counted as 25% of the FP16 read; QServe (Lin et al.,
// MLSys'25, section 5.3) reports that naive KV4 dequantization makes A100 decode attention
// compute bound, and BitDecoding (arXiv:2503.18773, section 1) that early low-bit KV kernels
// miss the bandwidth speed-up, so these are favourable to low-bit KV, not against it.
double KvReadFactor(int bits);

// Executor: the model runtime the engine drives. The simulation uses ProfiledExecutor; tests
// use a fake one. Implementations are immutable and thread-safe.
class Executor {
 public:
  virtual ~Executor() = default;
  virtual StepCost Step(const BatchShape& shape) const = 0;
};

// ProfiledExecutor: per-iteration latency fitted from the Vidur profiles (never from FLOPs):
//   t = layers x [linear(T) + attn_decode(B_d, sum kv) + sum_i attn_prefill(c_i, k_i)
//                 + 2 x allreduce(T x hidden x 2 bytes)] + cpu(B)
// at the model's tensor-parallel degree: linear(T) from the mlp.csv rows of that degree (per-rank
// GEMMs), allreduce from network/<gpu>_dgx/all_reduce.csv (NCCL inside one DGX node, TP > 1 only),
// attention from the Llama-2-7B fit scaled per rank by (kv_heads / TP) x head_dim (decode) and
// (heads / TP) x head_dim (prefill) over 32 x 128, the constant terms unscaled (an assumption:
// Vidur publishes no attention profile for the other models); cpu(B) the model's own Vidur rows
// where measured, else Llama-2-7B's.
// linear(T): the nine token-level ops of mlp.csv (QKV, O, gate+up, down GEMMs, rope, act,
// two norms, add; medians, TP1) interpolated in the total batched tokens T;
// attn_decode = d0 + d1 B + d2 sum kv and attn_prefill = p0 + p1 c + p2 c k + p3 c^2, least
// squares over attention_sampled.csv (A100; H100 scales decode by the bandwidth ratio and
// prefill by the measured linear-layer ratio at 4,096 tokens); cpu(B): sampler +
// prepare_inputs + process_model_outputs medians of cpu_overheads.csv (schedule excluded: the
// scheduler's own cost is measured by the benchmark). Weight precision scales linear(T) (see
// FactorsFor).
// L4 and A10G (GpuSpec::derived(): no Vidur profile) take the A100 curves: linear(T) scaled per
// point by w x (A100 / GPU bandwidth) + (1 - w) x (A100 / GPU FP16 peak) with w = t(1) / t(T) the
// weight-read share, decode attention by the bandwidth ratio, prefill attention by the FP16
// ratio (a modelling assumption the planner prints beside its figures).
//
// A split selects which profile points the fits use: the replay's ground truth is fitted on
// the even-numbered points and the policies' predictor on the odd-numbered ones, so that no
// policy predicts with the model that times it (both keep the first and last token count of
// the linear curve, so neither extrapolates).
enum class ProfileSplit { kAll, kEven, kOdd };
std::string_view ProfileSplitName(ProfileSplit s);

class ProfiledExecutor : public Executor {
 public:
  // Loads <data_dir>/vidur_profiles/... for the GPU and model. Errors: kNotFound for a missing
  // file, kInvalidArgument for a malformed one.
  static Result<std::unique_ptr<ProfiledExecutor>> Load(const std::string& data_dir,
                                                        const GpuSpec& gpu,
                                                        const ModelSpec& model,
                                                        Precision precision,
                                                        ProfileSplit split = ProfileSplit::kAll);

  StepCost Step(const BatchShape& shape) const override;

  // Per-layer linear-stack time (ms) at T tokens, FP16, as fitted.
  double LinearMs(double tokens) const { return linear_ms_.At(tokens); }
  // Per-layer decode attention (ms) for B decodes with `kv_sum` context tokens in total.
  double DecodeAttentionMs(double batch, double kv_sum) const;
  // Per-layer prefill attention (ms) for one chunk.
  double PrefillAttentionMs(double chunk, double kv_before) const;
  // One all-reduce of T tokens' FP16 activations over the model's TP ranks (0 at TP 1).
  double AllReduceMs(double tokens) const;
  // Predicted time of a decode-only step of `batch` sequences of context `context`.
  double DecodeStepSeconds(int batch, double context) const;

  const GpuSpec& gpu() const { return gpu_; }
  const ModelSpec& model() const { return model_; }
  const PrecisionFactors& precision() const { return factors_; }
  Precision precision_kind() const { return precision_; }
  const Curve& linear_curve() const { return linear_ms_; }
  // Median relative error of the attention fits on their own sample points (for reports).
  double decode_fit_error() const { return decode_fit_error_; }
  double prefill_fit_error() const { return prefill_fit_error_; }

 private:
  ProfiledExecutor() = default;
  double LinearMsAtPrecision(double tokens) const;

  GpuSpec gpu_;
  ModelSpec model_;
  Precision precision_ = Precision::kFp16;
  PrecisionFactors factors_;
  Curve linear_ms_;
  Curve cpu_ms_;
  std::vector<double> decode_coef_;   // d0, d1, d2
  std::vector<double> prefill_coef_;  // p0, p1, p2, p3
  double decode_scale_ = 1;
  double prefill_scale_ = 1;
  double decode_rank_scale_ = 1;   // per-rank KV heads x head_dim vs the profiled Llama-2-7B
  double prefill_rank_scale_ = 1;  // per-rank query heads x head_dim vs the profiled Llama-2-7B
  Curve all_reduce_ms_;            // ms vs bytes at the model's TP degree (TP > 1 only)
  double decode_fit_error_ = 0;
  double prefill_fit_error_ = 0;
};

// The nine mlp.csv ops summed into linear(T).
const std::vector<std::string>& LinearOpColumns();

// Path helpers for the bundled profiles.
std::string MlpProfilePath(const std::string& data_dir, const GpuSpec& gpu, const ModelSpec& m);
std::string AllReduceProfilePath(const std::string& data_dir, const GpuSpec& gpu);

}  // namespace seedance::batching
