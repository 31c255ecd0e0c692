#include "seedance/batching/executor.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace seedance::batching {
namespace {

// The one attention profile (and the CPU-overhead fallback): Llama-2-7B on A100.
constexpr const char* kAttentionProfile = "meta-llama/Llama-2-7b-hf";

double MedianOf(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct AttentionFit {
  std::vector<double> decode;
  std::vector<double> prefill;
  double decode_error = 0;
  double prefill_error = 0;
};

std::vector<double> DecodeFeatures(double b, double kv_sum) { return {1.0, b, kv_sum}; }
std::vector<double> PrefillFeatures(double c, double k) {
  return {1.0, c, c * k / 1024.0, c * c / 1024.0};
}

bool InSplit(std::size_t index, ProfileSplit split) {
  switch (split) {
    case ProfileSplit::kAll: return true;
    case ProfileSplit::kEven: return index % 2 == 0;
    case ProfileSplit::kOdd: return index % 2 == 1;
  }
  return true;
}

// The curve restricted to `split`, keeping both end points.
Curve SplitCurve(const Curve& c, ProfileSplit split) {
  if (split == ProfileSplit::kAll) return c;
  std::vector<double> xs, ys;
  for (std::size_t i = 0; i < c.xs().size(); ++i) {
    if (InSplit(i, split) || i == 0 || i + 1 == c.xs().size()) {
      xs.push_back(c.xs()[i]);
      ys.push_back(c.ys()[i]);
    }
  }
  return Curve(std::move(xs), std::move(ys));
}

Result<AttentionFit> FitAttention(const CsvTable& t, ProfileSplit split) {
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t tp, t.ColumnIndex("tp"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t is_prefill, t.ColumnIndex("is_prefill"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t batch, t.ColumnIndex("batch_size"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t chunk, t.ColumnIndex("prefill_chunk_size"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t kv, t.ColumnIndex("kv_cache_size"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t ms, t.ColumnIndex("attn_median_ms"));
  std::vector<std::vector<double>> da, pa;
  std::vector<double> db, pb;
  std::size_t index = 0;
  for (const auto& row : t.rows()) {
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t tp_v, t.Int(row, tp));
    if (tp_v != 1) continue;
    if (!InSplit(index++, split)) continue;
    SEEDANCE_ASSIGN_OR_RETURN(double b, t.Double(row, batch));
    SEEDANCE_ASSIGN_OR_RETURN(double c, t.Double(row, chunk));
    SEEDANCE_ASSIGN_OR_RETURN(double k, t.Double(row, kv));
    SEEDANCE_ASSIGN_OR_RETURN(double y, t.Double(row, ms));
    if (b < 1) return t.FieldError(row, batch, "must be >= 1");
    if (k < 0) return t.FieldError(row, kv, "must be >= 0");
    if (!(y > 0)) return t.FieldError(row, ms, "must be > 0");
    const std::string_view flag = t.Str(row, is_prefill);
    if (flag == "True") {
      pa.push_back(PrefillFeatures(c, k));
      pb.push_back(y);
    } else if (flag == "False") {
      da.push_back(DecodeFeatures(b, b * k));
      db.push_back(y);
    } else {
      return t.FieldError(row, is_prefill, "expected True or False");
    }
  }
  if (da.size() < 3 || pa.size() < 4) {
    return InvalidArgumentError(t.name() + ": too few TP1 attention rows to fit");
  }
  AttentionFit fit;
  SEEDANCE_ASSIGN_OR_RETURN(fit.decode, LeastSquares(da, db));
  SEEDANCE_ASSIGN_OR_RETURN(fit.prefill, LeastSquares(pa, pb));
  auto error = [](const std::vector<std::vector<double>>& a, const std::vector<double>& b,
                  const std::vector<double>& c) {
    std::vector<double> e;
    for (std::size_t i = 0; i < a.size(); ++i) {
      double p = 0;
      for (std::size_t j = 0; j < c.size(); ++j) p += a[i][j] * c[j];
      e.push_back(std::abs(p - b[i]) / b[i]);
    }
    return MedianOf(e);
  };
  fit.decode_error = error(da, db, fit.decode);
  fit.prefill_error = error(pa, pb, fit.prefill);
  return fit;
}

}  // namespace

double KvReadFactor(int bits) {
  if (bits >= 16) return 1.0;
  if (bits >= 8) return bits / 16.0 + 0.10;
  return bits / 16.0 + 0.25;
}

std::string_view ProfileSplitName(ProfileSplit s) {
  switch (s) {
    case ProfileSplit::kAll: return "all";
    case ProfileSplit::kEven: return "even";
    case ProfileSplit::kOdd: return "odd";
  }
  return "?";
}

std::int64_t BatchShape::Tokens() const {
  std::int64_t t = decodes;
  for (const auto& p : prefills) t += p.tokens;
  return t;
}

const std::vector<std::string>& LinearOpColumns() {
  static const std::vector<std::string> kCols = {
      "time_stats.input_layernorm.median", "time_stats.attn_pre_proj.median",
      "time_stats.attn_rope.median",       "time_stats.attn_post_proj.median",
      "time_stats.post_attention_layernorm.median", "time_stats.mlp_up_proj.median",
      "time_stats.mlp_act.median",         "time_stats.mlp_down_proj.median",
      "time_stats.add.median"};
  return kCols;
}

std::string MlpProfilePath(const std::string& data_dir, const GpuSpec& gpu, const ModelSpec& m) {
  const std::string root = m.profile_root.empty() ? data_dir + "/vidur_profiles/compute" : m.profile_root;
  return root + "/" + gpu.profile + "/" + m.profile_dir + "/mlp.csv";
}

std::string AllReduceProfilePath(const std::string& data_dir, const GpuSpec& gpu) {
  return data_dir + "/vidur_profiles/network/" + gpu.profile + "_dgx/all_reduce.csv";
}

namespace {

// The linear stack of `m` at its tensor-parallel degree from one mlp.csv, after checking that
// the profile's shape columns (when present) are the model's: a profile of another model is an
// error naming the file, line and column.
Result<Curve> LoadLinear(const std::string& path, const ModelSpec& m) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable mlp, CsvTable::ReadFile(path));
  const std::string tp = std::to_string(m.tensor_parallel);
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t tp_col, mlp.ColumnIndex("num_tensor_parallel_workers"));
  const std::pair<const char*, int> shape[] = {{"n_head", m.heads}, {"n_kv_head", m.kv_heads}, {"n_embd", m.hidden()}};
  for (const auto& row : mlp.rows()) {
    if (mlp.Str(row, tp_col) != tp) continue;
    for (const auto& [column, want] : shape) {
      const std::ptrdiff_t c = mlp.FindColumn(column);
      if (c < 0) continue;
      SEEDANCE_ASSIGN_OR_RETURN(std::int64_t v, mlp.Int(row, static_cast<std::size_t>(c)));
      if (v != want) {
        return mlp.FieldError(row, static_cast<std::size_t>(c),
                              fmt::format("is {}, but {} has {}: a profile of another model", v, m.name, want));
      }
    }
  }
  // The four GEMMs are required; a model without one of the other ops (phi-2 has no
  // post-attention norm) has no column for it.
  std::vector<std::string> cols;
  for (const std::string& c : LinearOpColumns()) {
    if (mlp.FindColumn(c) >= 0 || c.find("_proj.") != std::string::npos) cols.push_back(c);
  }
  return LoadCurve(mlp, "num_tokens", cols, "num_tensor_parallel_workers", tp);
}

}  // namespace

Result<std::unique_ptr<ProfiledExecutor>> ProfiledExecutor::Load(const std::string& data_dir,
                                                                 const GpuSpec& gpu,
                                                                 const ModelSpec& model,
                                                                 Precision precision,
                                                                 ProfileSplit split) {
  std::unique_ptr<ProfiledExecutor> e(new ProfiledExecutor());
  e->gpu_ = gpu;
  e->model_ = model;
  e->precision_ = precision;
  e->factors_ = FactorsFor(precision, gpu);
  SEEDANCE_ASSIGN_OR_RETURN(Curve linear, LoadLinear(MlpProfilePath(data_dir, gpu, model), model));
  if (gpu.derived()) {
    // No profile of this GPU (L4, A10G): the profiled GPU's linear stack (A100) scaled point by
    // point as a roofline would: the weight-read share w = t(1) / t(T) of a step by the
    // bandwidth ratio, the rest by the FP16 tensor-peak ratio (a modelling assumption).
    SEEDANCE_ASSIGN_OR_RETURN(GpuSpec base, FindGpu(gpu.profile));
    const double bw = base.dram_bytes_per_s / gpu.dram_bytes_per_s;
    const double fl = base.fp16_flops / gpu.fp16_flops;
    const double t1 = linear.At(1);
    std::vector<double> xs = linear.xs(), ys = linear.ys();
    for (std::size_t i = 0; i < ys.size(); ++i) {
      const double w = std::min(1.0, t1 / ys[i]);
      ys[i] *= w * bw + (1 - w) * fl;
    }
    linear = Curve(std::move(xs), std::move(ys));
  }
  e->linear_ms_ = SplitCurve(linear, split);
  // Attention is profiled for Llama-2-7B on A100 only (data/vidur_profiles/SOURCE.md); other
  // models and TP degrees scale it per rank (see AttentionScale).
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable attn, CsvTable::ReadFile(
      data_dir + "/vidur_profiles/compute/a100/" + kAttentionProfile + "/attention_sampled.csv"));
  SEEDANCE_ASSIGN_OR_RETURN(AttentionFit fit, FitAttention(attn, split));
  e->decode_coef_ = fit.decode;
  e->prefill_coef_ = fit.prefill;
  e->decode_fit_error_ = fit.decode_error;
  e->prefill_fit_error_ = fit.prefill_error;
  if (gpu.derived()) {
    // Decode attention reads the KV cache (bandwidth bound); prefill attention is tensor bound.
    SEEDANCE_ASSIGN_OR_RETURN(GpuSpec base, FindGpu(gpu.profile));
    e->decode_scale_ = base.dram_bytes_per_s / gpu.dram_bytes_per_s;
    e->prefill_scale_ = base.fp16_flops / gpu.fp16_flops;
  } else if (gpu.name != "a100") {
    SEEDANCE_ASSIGN_OR_RETURN(GpuSpec a100, FindGpu("a100"));
    e->decode_scale_ = a100.dram_bytes_per_s / gpu.dram_bytes_per_s;
    Result<Curve> a100_linear = LoadLinear(MlpProfilePath(data_dir, a100, model), model);
    if (a100_linear.has_value()) {
      e->prefill_scale_ = e->linear_ms_.At(4096) / a100_linear->At(4096);
    } else if (a100_linear.error().code() == StatusCode::kNotFound) {
      // No A100 profile of this model (a --profile tree with this GPU only): the FP16 peak ratio.
      e->prefill_scale_ = a100.fp16_flops / gpu.fp16_flops;
    } else {
      return a100_linear.error();
    }
  }
  // Per rank: decode attention reads (kv_heads / TP) x head_dim of KV per token, prefill
  // attention computes (heads / TP) x head_dim per token pair, against the profiled Llama-2-7B.
  const double ref = 32.0 * 128.0;
  e->decode_rank_scale_ = model.kv_heads * model.head_dim / (ref * model.tensor_parallel);
  e->prefill_rank_scale_ = model.heads * model.head_dim / (ref * model.tensor_parallel);
  if (model.tensor_parallel > 1) {
    SEEDANCE_ASSIGN_OR_RETURN(CsvTable ar, CsvTable::ReadFile(AllReduceProfilePath(data_dir, gpu)));
    SEEDANCE_ASSIGN_OR_RETURN(e->all_reduce_ms_, LoadCurve(ar, "size", {"time_stats.all_reduce.median"}, "num_workers",
                                                           std::to_string(model.tensor_parallel)));
  }
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable cpu, CsvTable::ReadFile(
      data_dir + "/vidur_profiles/cpu_overhead/a100/cpu_overheads.csv"));
  const std::vector<std::string> cpu_cols = {"sampler_e2e_median", "prepare_inputs_e2e_median",
                                             "process_model_outputs_median"};
  // The model's own engine overhead where Vidur measured it, else Llama-2-7B's.
  auto own = LoadCurve(cpu, "batch_size", cpu_cols, "model_name", model.profile_dir);
  if (own.has_value()) {
    e->cpu_ms_ = *std::move(own);
  } else {
    SEEDANCE_ASSIGN_OR_RETURN(e->cpu_ms_, LoadCurve(cpu, "batch_size", cpu_cols, "model_name", kAttentionProfile));
  }
  return e;
}

double ProfiledExecutor::DecodeAttentionMs(double batch, double kv_sum) const {
  if (batch <= 0) return 0;
  const auto f = DecodeFeatures(batch, kv_sum);
  double t = 0;
  for (std::size_t i = 0; i < f.size(); ++i) t += f[i] * decode_coef_[i];
  // The constant term (kernel launch) is per kernel; the rest scales with the rank's heads.
  return std::max(decode_coef_[0] + (t - decode_coef_[0]) * decode_rank_scale_, 0.005) * decode_scale_;
}

double ProfiledExecutor::AllReduceMs(double tokens) const {
  if (model_.tensor_parallel <= 1 || all_reduce_ms_.empty()) return 0;
  return all_reduce_ms_.At(tokens * model_.hidden() * 2.0);  // FP16 activations
}

double ProfiledExecutor::PrefillAttentionMs(double chunk, double kv_before) const {
  if (chunk <= 0) return 0;
  const auto f = PrefillFeatures(chunk, kv_before);
  double t = 0;
  for (std::size_t i = 0; i < f.size(); ++i) t += f[i] * prefill_coef_[i];
  return std::max(prefill_coef_[0] + (t - prefill_coef_[0]) * prefill_rank_scale_, 0.005) * prefill_scale_;
}

double ProfiledExecutor::LinearMsAtPrecision(double tokens) const {
  const double t16 = linear_ms_.At(tokens);
  if (precision_ == Precision::kFp16) return t16;
  // Share of the step that is weight-read bound: the single-token time is the weight read.
  const double w = std::min(1.0, linear_ms_.At(1) / t16);
  return t16 * (w * factors_.weight_bytes_ratio + (1 - w) * factors_.compute_time_ratio);
}

StepCost ProfiledExecutor::Step(const BatchShape& s) const {
  StepCost c;
  const auto tokens = static_cast<double>(s.Tokens());
  if (tokens <= 0) return c;
  double layer_ms = LinearMsAtPrecision(tokens) + DecodeAttentionMs(s.decodes, static_cast<double>(s.decode_kv_sum)) +
                    2 * AllReduceMs(tokens);
  double attn_flops = 4.0 * model_.heads * model_.head_dim * static_cast<double>(s.decode_kv_sum);
  double kv_read = static_cast<double>(s.decode_kv_sum);
  for (const auto& p : s.prefills) {
    layer_ms += PrefillAttentionMs(p.tokens, p.kv_before);
    attn_flops += 4.0 * model_.heads * model_.head_dim * p.tokens * (p.kv_before + p.tokens / 2.0);
    kv_read += p.kv_before + p.tokens;
  }
  const double gpu_s = model_.layers * layer_ms / 1e3;
  const double cpu_s = cpu_ms_.At(s.Sequences()) / 1e3;
  c.seconds = gpu_s + cpu_s + s.extra_seconds;
  const double flops = 2.0 * model_.params * tokens + model_.layers * attn_flops;
  const double bytes = WeightBytes(model_, factors_) + KvBytesPerToken(model_) * kv_read;
  const double ranks = model_.tensor_parallel;
  c.sm_active = std::min(1.0, flops / (0.65 * ranks * gpu_.fp16_flops * gpu_s));
  c.dram_active = std::min(1.0, bytes / (0.9 * ranks * gpu_.dram_bytes_per_s * gpu_s));
  return c;
}

double ProfiledExecutor::DecodeStepSeconds(int batch, double context) const {
  BatchShape s;
  s.decodes = batch;
  s.decode_kv_sum = static_cast<std::int64_t>(batch * context);
  return Step(s).seconds;
}

}  // namespace seedance::batching
