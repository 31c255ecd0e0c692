#include "seedance/batching/benchmark.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <fmt/format.h>

namespace seedance::batching {
namespace {

struct Runner {
  const BatchingConfig& cfg;
  const ProfiledExecutor& exec;
  PolicySettings settings;
  ReplayOptions options;
  std::ostream* progress;

  bool fp16_kv = false;  // seedance ablation: KV tiers off

  Result<PolicyResult> Run(const Trace& trace, const std::string& policy) const {
    std::vector<RequestRecord> records(trace.requests.size());
    PolicySettings s = settings;
    if (fp16_kv) s.seedance.kv_tiers = false;
    SEEDANCE_ASSIGN_OR_RETURN(auto sched, MakeScheduler(policy, s, &exec, &records));
    return Replay(trace, *sched, exec, records, options);
  }

  Result<double> Attainment(const Trace& base, double scale, const std::string& policy) const {
    SEEDANCE_ASSIGN_OR_RETURN(PolicyResult r, Run(ScaleRate(base, scale), policy));
    return r.slo_attainment;
  }

  // Largest scale in [lo, hi] with attainment >= 0.9 (attainment(lo) >= 0.9 > attainment(hi)).
  Result<double> Bisect(const Trace& base, double lo, double hi, const std::string& policy,
                        int iterations) const {
    for (int i = 0; i < iterations; ++i) {
      const double mid = 0.5 * (lo + hi);
      SEEDANCE_ASSIGN_OR_RETURN(double a, Attainment(base, mid, policy));
      (a >= 0.9 ? lo : hi) = mid;
    }
    return lo;
  }
};

}  // namespace

double LinearHoldoutError(const Curve& full, int stride) {
  std::vector<double> fx, fy, errors;
  const auto& xs = full.xs();
  const auto& ys = full.ys();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (i % static_cast<std::size_t>(stride) != static_cast<std::size_t>(stride) - 1 ||
        i + 1 == xs.size()) {
      fx.push_back(xs[i]);
      fy.push_back(ys[i]);
    }
  }
  const Curve fit(fx, fy);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    if (i % static_cast<std::size_t>(stride) == static_cast<std::size_t>(stride) - 1 &&
        i + 1 != xs.size()) {
      errors.push_back(std::abs(fit.At(xs[i]) - ys[i]) / ys[i]);
    }
  }
  return Percentile(errors, 50);
}

Result<BatchingResults> RunBatching(const BatchingConfig& cfg, std::ostream* progress) {
  if (!(cfg.slo_ttft_s > 0) || !(cfg.slo_tpot_s > 0)) {
    return InvalidArgumentError("--slo-ttft and --slo-tpot must be > 0");
  }
  if (!(cfg.rate_scale > 0) || !std::isfinite(cfg.rate_scale)) {
    return InvalidArgumentError("--rate-scale must be > 0");
  }
  if (!(cfg.gpu_memory_utilization > 0 && cfg.gpu_memory_utilization <= 1)) {
    return InvalidArgumentError("gpu_memory_utilization must be in (0, 1]");
  }
  SEEDANCE_ASSIGN_OR_RETURN(GpuSpec gpu, FindGpu(cfg.gpu));
  SEEDANCE_ASSIGN_OR_RETURN(ModelSpec model, FindModel(cfg.model));
  SEEDANCE_ASSIGN_OR_RETURN(Precision precision, ParsePrecision(cfg.precision));
  std::vector<std::string> policies = cfg.policies;
  if (policies.empty() || (policies.size() == 1 && policies[0] == "all")) policies = PolicyNames();
  for (const auto& p : policies) {
    if (std::find(PolicyNames().begin(), PolicyNames().end(), p) == PolicyNames().end()) {
      return InvalidArgumentError(fmt::format(
          "--policies: unknown policy '{}' (accepted: all, static, static-bucketed, triton, "
          "vllm, seedance)", p));
    }
  }
  if (cfg.sweep && std::find(policies.begin(), policies.end(), "vllm") == policies.end()) {
    return InvalidArgumentError("--sweep needs the vllm policy (its 90% rate is the target)");
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto exec, ProfiledExecutor::Load(cfg.data_dir, gpu, model, precision));
  const std::string trace_path = cfg.trace_path.empty()
                                     ? cfg.data_dir + "/azure_llm/AzureLLMInferenceTrace_conv.csv"
                                     : cfg.trace_path;
  SEEDANCE_ASSIGN_OR_RETURN(Trace trace, LoadAzureTrace(trace_path));
  if (cfg.oversize == OversizePolicy::kError) {
    for (const Request& r : trace.requests) {
      if (std::int64_t{r.prompt} + r.output > model.max_context) {
        return InvalidArgumentError(fmt::format(
            "{}:{}: field 'ContextTokens': request of {} prompt + {} output tokens exceeds the "
            "{} context of {} tokens", trace.name, r.line, r.prompt, r.output, model.name,
            model.max_context));
      }
    }
  }

  BatchingResults res;
  res.config = cfg;
  res.trace_name = trace.name;
  res.trace_requests = static_cast<std::int64_t>(trace.requests.size());
  res.trace_rate_rps = trace.Span() > 0 ? static_cast<double>(trace.requests.size()) / trace.Span() : 0;
  res.decode_fit_error = exec->decode_fit_error();
  res.prefill_fit_error = exec->prefill_fit_error();
  res.linear_holdout_error = LinearHoldoutError(exec->linear_curve(), 4);
  res.vidur_max_batch_4k = VidurMaxBatch(gpu, model, 4096);

  Runner run{cfg, *exec, cfg.settings, ReplayOptions{cfg.slo_ttft_s, cfg.slo_tpot_s, cfg.usd_per_gpu_hour},
             progress};
  EngineConfig& e = run.settings.engine;
  e.kv_capacity_bytes = gpu.memory_bytes * cfg.gpu_memory_utilization - WeightBytes(model, exec->precision());
  e.kv_bytes_per_token = KvBytesPerToken(model);
  e.max_context = model.max_context;
  e.pcie_bytes_per_s = gpu.pcie_bytes_per_s;
  e.dram_bytes_per_s = gpu.dram_bytes_per_s;
  e.slo_ttft_s = cfg.slo_ttft_s;
  e.slo_tpot_s = cfg.slo_tpot_s;
  res.kv_capacity_bytes = e.kv_capacity_bytes;

  auto say = [&](const std::string& line) {
    if (progress != nullptr) *progress << line << std::endl;
  };

  res.headline_scale = cfg.rate_scale;
  if (cfg.sweep) {
    const std::vector<double> grid = {0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0};
    for (double s : grid) {
      SweepPoint pt;
      pt.rate_scale = s;
      pt.rate_rps = res.trace_rate_rps * s;
      const Trace scaled = ScaleRate(trace, s);
      for (const auto& p : policies) {
        SEEDANCE_ASSIGN_OR_RETURN(PolicyResult r, run.Run(scaled, p));
        pt.attainment.push_back(r.slo_attainment);
        pt.goodput_rps.push_back(r.goodput_rps);
      }
      say(fmt::format("sweep: rate x{:g} ({:.2f} req/s) done", s, pt.rate_rps));
      res.sweep.push_back(std::move(pt));
    }
    // Capacity per policy: bracket on the grid, then bisect.
    for (std::size_t k = 0; k < policies.size(); ++k) {
      double lo = 0, hi = 0;
      for (const auto& pt : res.sweep) {
        if (pt.attainment[k] >= 0.9) {
          lo = pt.rate_scale;
        } else if (hi == 0 && lo > 0) {
          hi = pt.rate_scale;
        }
      }
      if (lo == 0) {
        res.capacity_rps.push_back(0);
        continue;
      }
      if (hi == 0) hi = lo * 2;
      SEEDANCE_ASSIGN_OR_RETURN(double s, run.Bisect(trace, lo, hi, policies[k], 7));
      res.capacity_rps.push_back(s * res.trace_rate_rps);
      if (policies[k] == "vllm") res.vllm_90_scale = s;
      say(fmt::format("sweep: {} keeps >= 90% up to {:.2f} req/s", policies[k], s * res.trace_rate_rps));
    }
    if (res.vllm_90_scale > 0) res.headline_scale = res.vllm_90_scale;
  }

  const Trace headline = ScaleRate(trace, res.headline_scale);
  for (const auto& p : policies) {
    SEEDANCE_ASSIGN_OR_RETURN(PolicyResult r, run.Run(headline, p));
    say(fmt::format("{}: {} requests, attainment {:.3f}", p, r.requests, r.slo_attainment));
    res.policies.push_back(std::move(r));
  }
  if (std::find(policies.begin(), policies.end(), "seedance") != policies.end()) {
    Runner ablation = run;
    ablation.fp16_kv = true;
    SEEDANCE_ASSIGN_OR_RETURN(res.ablation_fp16_kv, ablation.Run(headline, "seedance"));
    res.ablation_fp16_kv.name = "seedance-fp16-kv";
    if (cfg.sweep && res.vllm_90_scale > 0) {
      SEEDANCE_ASSIGN_OR_RETURN(double a, ablation.Attainment(trace, res.vllm_90_scale, "seedance"));
      if (a >= 0.9) {
        SEEDANCE_ASSIGN_OR_RETURN(double s, ablation.Bisect(trace, res.vllm_90_scale,
                                                            4 * res.vllm_90_scale, "seedance", 8));
        res.ablation_capacity_rps = s * res.trace_rate_rps;
      }
    }
  }
  if (cfg.multi_tenant) {
    const Trace mix = MultiTenantMix(headline, cfg.seed);
    for (const auto& p : policies) {
      SEEDANCE_ASSIGN_OR_RETURN(PolicyResult r, run.Run(mix, p));
      say(fmt::format("{} (multi-tenant): guaranteed attainment {:.3f}", p,
                      r.per_class[0].attainment));
      res.mix.push_back(std::move(r));
    }
  }

  // Pareto front of decode batch sizes at the trace's mean context (prompt + half the output).
  double ctx = 0;
  for (const auto& r : trace.requests) ctx += r.prompt + 0.5 * r.output;
  ctx /= static_cast<double>(std::max<std::size_t>(1, trace.requests.size()));
  res.pareto_context = ctx;
  res.pareto = ExecutorBatchPoints(*exec, ctx, 256);
  res.pareto_choice = ChooseBatch(res.pareto, gpu.memory_bytes * cfg.gpu_memory_utilization,
                                  cfg.slo_tpot_s);
  SEEDANCE_ASSIGN_OR_RETURN(res.seed_table,
                            LoadSeedBatchTable(cfg.data_dir + "/batching/seed_batch_table.csv"));
  res.seed_choice = ChooseBatch(res.seed_table, 4.0 * 1024 * 1024 * 1024, 0.050);
  return res;
}

}  // namespace seedance::batching
