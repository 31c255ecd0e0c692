#include "seedance/batching/benchmark.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <fmt/format.h>

#include "seedance/core/check.h"

namespace seedance::batching {
namespace {

struct Runner {
  const BatchingConfig& cfg;
  const Executor& truth;      // times the steps (with noise)
  const Executor& predictor;  // what the policies may ask
  PolicySettings settings;
  ReplayOptions options;
  std::ostream* progress;

  Result<PolicyResult> Run(const Trace& trace, const std::string& policy,
                           const PolicySettings& s) const {
    std::vector<RequestRecord> records(trace.requests.size());
    SEEDANCE_ASSIGN_OR_RETURN(auto sched, MakeScheduler(policy, s, &predictor, &records));
    return Replay(trace, *sched, truth, records, options);
  }
  Result<PolicyResult> Run(const Trace& trace, const std::string& policy) const {
    return Run(trace, policy, settings);
  }

  Result<double> Attainment(const Trace& base, double scale, const std::string& policy,
                            const PolicySettings& s) const {
    SEEDANCE_ASSIGN_OR_RETURN(PolicyResult r, Run(ScaleRate(base, scale), policy, s));
    return r.slo_attainment;
  }

  // Largest scale in [lo, hi] with attainment >= 0.9 (attainment(lo) >= 0.9 > attainment(hi)).
  Result<double> Bisect(const Trace& base, double lo, double hi, const std::string& policy,
                        const PolicySettings& s, int iterations) const {
    for (int i = 0; i < iterations; ++i) {
      const double mid = 0.5 * (lo + hi);
      SEEDANCE_ASSIGN_OR_RETURN(double a, Attainment(base, mid, policy, s));
      (a >= 0.9 ? lo : hi) = mid;
    }
    return lo;
  }

  // The largest rate scale with >= 90 % attainment: bracket by doubling or halving from
  // `start`, then bisect to within 2^-7 of the bracket. 0 when even 1/64 fails.
  Result<double> CapacityScale(const Trace& base, const std::string& policy,
                               const PolicySettings& s, double start) const {
    double lo = 0, hi = 0;
    SEEDANCE_ASSIGN_OR_RETURN(double a, Attainment(base, start, policy, s));
    if (a >= 0.9) {
      lo = start;
      for (hi = 2 * start; hi <= 64 * start; hi *= 2) {
        SEEDANCE_ASSIGN_OR_RETURN(double b, Attainment(base, hi, policy, s));
        if (b < 0.9) break;
        lo = hi;
      }
    } else {
      hi = start;
      for (lo = start / 2; lo >= start / 64; lo /= 2) {
        SEEDANCE_ASSIGN_OR_RETURN(double b, Attainment(base, lo, policy, s));
        if (b >= 0.9) break;
        hi = lo;
      }
      if (lo < start / 64) return 0.0;
    }
    return Bisect(base, lo, hi, policy, s, 7);
  }
};

// The table entry `cfg` runs with when it asks for the tuned knobs.
const TunedKnobs& TableEntry(const BatchingConfig& cfg) {
  return TunedKnobsFor(BundledTraceName(cfg.data_dir, cfg.trace_path), cfg.kv_bits);
}

EngineKnobs KnobsOf(const ContinuousConfig& c) {
  return EngineKnobs{c.max_num_batched_tokens, c.max_num_seqs, c.chunked_prefill, c.preemption};
}

}  // namespace

PolicySettings PrepareSettings(const BatchingConfig& cfg, const GpuSpec& gpu, const ModelSpec& model,
                               const ProfiledExecutor& exec) {
  PolicySettings s = cfg.settings;
  if (cfg.use_best_knobs) {
    const TunedKnobs& k = TableEntry(cfg);
    k.vllm.ApplyTo(&s.vllm);
    k.seedance.ApplyTo(&s.seedance);
  }
  EngineConfig& e = s.engine;
  e.kv_capacity_bytes =
      model.tensor_parallel * gpu.memory_bytes * cfg.gpu_memory_utilization - WeightBytes(model, exec.precision());
  e.kv_bits = cfg.kv_bits;
  e.kv_bytes_per_token = KvBytesPerToken(model, cfg.kv_bits);
  e.max_context = model.max_context;
  e.pcie_bytes_per_s = gpu.pcie_bytes_per_s;
  e.dram_bytes_per_s = gpu.dram_bytes_per_s;
  e.slo_ttft_s = cfg.slo_ttft_s;
  e.slo_tpot_s = cfg.slo_tpot_s;
  return s;
}

namespace {

// The ground truth and the policies' predictor, fitted on disjoint profile points (or both on
// all of them without split_profiles).
struct Executors {
  std::unique_ptr<ProfiledExecutor> truth;
  std::unique_ptr<ProfiledExecutor> predictor;
};
Result<Executors> LoadExecutors(const BatchingConfig& cfg, const GpuSpec& gpu,
                                const ModelSpec& model, Precision precision) {
  Executors ex;
  SEEDANCE_ASSIGN_OR_RETURN(
      ex.truth, ProfiledExecutor::Load(cfg.data_dir, gpu, model, precision,
                                       cfg.split_profiles ? ProfileSplit::kEven : ProfileSplit::kAll));
  SEEDANCE_ASSIGN_OR_RETURN(
      ex.predictor, ProfiledExecutor::Load(cfg.data_dir, gpu, model, precision,
                                           cfg.split_profiles ? ProfileSplit::kOdd : ProfileSplit::kAll));
  return ex;
}

ReplayOptions PrepareReplay(const BatchingConfig& cfg) {
  ReplayOptions options{cfg.slo_ttft_s, cfg.slo_tpot_s, cfg.usd_per_gpu_hour, cfg.noise};
  options.noise.seed = cfg.seed;
  return options;
}

}  // namespace

StepNoise DefaultStepNoise() {
  StepNoise n;
  n.sigma = 0.05;
  n.slow_prob = 0.01;
  n.slow_factor = 2.0;
  return n;
}

void EngineKnobs::ApplyTo(ContinuousConfig* c) const {
  c->max_num_batched_tokens = max_num_batched_tokens;
  c->max_num_seqs = max_num_seqs;
  c->chunked_prefill = chunked_prefill;
  c->preemption = preemption;
}

std::string EngineKnobs::ToString() const {
  return fmt::format("tokens {}, seqs {}, {}, {}", max_num_batched_tokens, max_num_seqs,
                     chunked_prefill ? "chunked" : "whole prefill",
                     preemption == PreemptionMode::kSwap ? "swap" : "recompute");
}

std::vector<EngineKnobs> KnobGrid(int max_context) {
  std::vector<EngineKnobs> grid;
  for (int tokens : {128, 256, 512, 1024, 2048, 4096, 8192}) {
    for (int seqs : {16, 32, 64, 128, 256, 512}) {
      if (tokens < seqs) continue;  // vLLM: max_num_batched_tokens must be >= max_num_seqs
      for (bool chunked : {true, false}) {
        if (!chunked && tokens < max_context) continue;  // vLLM: a whole prompt must fit
        grid.push_back(EngineKnobs{tokens, seqs, chunked, PreemptionMode::kRecompute});
      }
    }
  }
  return grid;
}

bool AtGridEdge(const EngineKnobs& k, const std::vector<EngineKnobs>& grid) {
  if (grid.empty()) return false;
  auto [tmin, tmax] = std::minmax_element(grid.begin(), grid.end(), [](const auto& a, const auto& b) {
    return a.max_num_batched_tokens < b.max_num_batched_tokens;
  });
  auto [smin, smax] = std::minmax_element(grid.begin(), grid.end(), [](const auto& a, const auto& b) {
    return a.max_num_seqs < b.max_num_seqs;
  });
  return k.max_num_batched_tokens <= tmin->max_num_batched_tokens ||
         k.max_num_batched_tokens >= tmax->max_num_batched_tokens ||
         k.max_num_seqs <= smin->max_num_seqs || k.max_num_seqs >= smax->max_num_seqs;
}

const KnobPoint* BestKnobPoint(const std::vector<KnobPoint>& sweep, std::string_view policy,
                               const std::vector<EngineKnobs>& grid) {
  const EngineKnobs stock;
  auto distance = [&](const EngineKnobs& k) {
    return std::abs(std::log2(static_cast<double>(k.max_num_batched_tokens) / stock.max_num_batched_tokens)) +
           std::abs(std::log2(static_cast<double>(k.max_num_seqs) / stock.max_num_seqs)) +
           (k.chunked_prefill == stock.chunked_prefill ? 0.0 : 1.0);
  };
  const bool any_inside = std::any_of(sweep.begin(), sweep.end(), [&](const KnobPoint& p) {
    return p.policy == policy && !AtGridEdge(p.knobs, grid);
  });
  auto counts = [&](const KnobPoint& p) {
    return p.policy == policy && (!any_inside || !AtGridEdge(p.knobs, grid));
  };
  double top = 0;
  bool any = false;
  for (const KnobPoint& p : sweep) {
    if (!counts(p)) continue;
    top = std::max(top, p.capacity_rps);
    any = true;
  }
  if (!any) return nullptr;
  const KnobPoint* best = nullptr;
  for (const KnobPoint& p : sweep) {
    if (!counts(p) || p.capacity_rps < (1 - kKnobTie) * top) continue;
    if (best == nullptr || distance(p.knobs) < distance(best->knobs) ||
        (distance(p.knobs) == distance(best->knobs) && p.capacity_rps > best->capacity_rps)) {
      best = &p;
    }
  }
  return best;
}

// The knob table: each entry is the BestKnobPoint of vLLM and of Seedance in the sweep of its
// origin command, run on the trace's tuning half (the first half of its requests); capacity
// ratios are reported on the held-out half (docs/BENCHMARKS.md "Batching knob sweep").
const std::vector<TunedKnobs>& TunedKnobTable() {
  static const std::vector<TunedKnobs> kTable = {
      {"conv", 16, EngineKnobs{512, 256, true, PreemptionMode::kRecompute},
       EngineKnobs{2048, 256, true, PreemptionMode::kRecompute},
       "seedance batching --trace conv --trace-part tuning --kv-dtype fp16 --sweep-knobs "
       "--policies vllm,seedance --no-mix (2026-12-03)"},
      {"conv", 8, EngineKnobs{1024, 256, true, PreemptionMode::kRecompute},
       EngineKnobs{2048, 256, true, PreemptionMode::kRecompute},
       "seedance batching --trace conv --trace-part tuning --kv-dtype fp8 --sweep-knobs "
       "--policies vllm,seedance --no-mix (2026-12-03)"},
      {"code", 16, EngineKnobs{1024, 256, true, PreemptionMode::kRecompute},
       EngineKnobs{1024, 32, true, PreemptionMode::kRecompute},
       "seedance batching --trace code --trace-part tuning --kv-dtype fp16 --sweep-knobs "
       "--policies vllm,seedance --no-mix (2026-12-03)"},
      {"code", 8, EngineKnobs{1024, 256, true, PreemptionMode::kRecompute},
       EngineKnobs{4096, 256, true, PreemptionMode::kRecompute},
       "seedance batching --trace code --trace-part tuning --kv-dtype fp8 --sweep-knobs "
       "--policies vllm,seedance --no-mix (2026-12-03)"},
  };
  return kTable;
}

const TunedKnobs& TunedKnobsFor(std::string_view trace, int kv_bits) {
  const std::vector<TunedKnobs>& table = TunedKnobTable();
  const TunedKnobs* conv = nullptr;
  for (const TunedKnobs& t : table) {
    if (t.kv_bits != kv_bits) continue;
    if (t.trace == trace) return t;
    if (t.trace == "conv") conv = &t;
  }
  SEEDANCE_CHECK(conv != nullptr);
  return *conv;
}

std::string BundledTraceName(const std::string& data_dir, const std::string& trace_path) {
  if (trace_path.empty()) return "conv";
  for (const char* name : {"conv", "code", "arxiv"}) {
    if (trace_path == name || trace_path == ResolveTracePath(data_dir, name)) return name;
  }
  return "";
}

std::string ResolveTracePath(const std::string& data_dir, const std::string& name) {
  if (name.empty() || name == "conv") return data_dir + "/azure_llm/AzureLLMInferenceTrace_conv.csv";
  if (name == "code") return data_dir + "/azure_llm/AzureLLMInferenceTrace_code.csv";
  if (name == "arxiv") {
    return data_dir + "/vidur_traces/arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv";
  }
  return name;
}

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

namespace {

// The model on one GPU (the batching benchmark runs TP 1): a model that does not fit is an
// error naming it, never a run with no KV space.
Result<ModelSpec> ModelOnOneGpu(const BatchingConfig& cfg, const GpuSpec& gpu) {
  SEEDANCE_ASSIGN_OR_RETURN(ModelSpec model, FindModel(cfg.model));
  if (Status s = CheckTensorParallel(gpu, model, 1, cfg.gpu_memory_utilization); !s.ok()) {
    return InvalidArgumentError(fmt::format("--model {}: {} (the batching benchmark runs one GPU; `seedance plan "
                                            "--model {}` plans tensor-parallel replicas)",
                                            cfg.model, s.message(), cfg.model));
  }
  return model;
}

}  // namespace

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
  SEEDANCE_ASSIGN_OR_RETURN(ModelSpec model, ModelOnOneGpu(cfg, gpu));
  SEEDANCE_ASSIGN_OR_RETURN(Precision precision, ParsePrecision(cfg.precision));
  std::vector<std::string> policies = cfg.policies;
  if (policies.empty() || (policies.size() == 1 && policies[0] == "all")) policies = PolicyNames();
  auto has = [&](std::string_view name) {
    return std::find(policies.begin(), policies.end(), name) != policies.end();
  };
  for (const auto& p : policies) {
    if (std::find(PolicyNames().begin(), PolicyNames().end(), p) == PolicyNames().end()) {
      std::string names;
      for (const auto& n : PolicyNames()) {
        names += ", ";
        names += n;
      }
      return InvalidArgumentError(
          fmt::format("--policies: unknown policy '{}' (accepted: all{})", p, names));
    }
  }
  if (cfg.sweep && !has("vllm")) {
    return InvalidArgumentError("--sweep needs the vllm policy (its 90% rate is the target)");
  }
  if (cfg.ablation && (!has("vllm") || !has("seedance"))) {
    return InvalidArgumentError("--ablation needs the vllm and seedance policies");
  }
  if (cfg.kv_bits != 16 && cfg.kv_bits != 8) {
    return InvalidArgumentError("--kv-dtype: expected fp16 or fp8");
  }
  if (!(cfg.noise.sigma >= 0) || !(cfg.noise.slow_prob >= 0 && cfg.noise.slow_prob <= 1) ||
      !(cfg.noise.slow_factor >= 1)) {
    return InvalidArgumentError(
        "step noise: sigma must be >= 0, slow-step probability in [0, 1], factor >= 1");
  }
  SEEDANCE_ASSIGN_OR_RETURN(Executors ex, LoadExecutors(cfg, gpu, model, precision));
  auto& truth = ex.truth;
  auto& predictor = ex.predictor;
  const ProfiledExecutor* exec = truth.get();
  const std::string trace_path = ResolveTracePath(cfg.data_dir, cfg.trace_path);
  bool lengths_only = false;
  SEEDANCE_ASSIGN_OR_RETURN(Trace trace, LoadAnyTrace(trace_path, &lengths_only));
  if (cfg.trace_part != TracePart::kAll) {
    if (trace.requests.size() < 2) {
      return InvalidArgumentError(fmt::format("--trace-part {}: {} has {} request(s); a half needs 2",
                                              TracePartName(cfg.trace_part), trace.name,
                                              trace.requests.size()));
    }
    trace = SelectTracePart(trace, cfg.trace_part);
  }
  if (lengths_only) {
    if (!(cfg.lengths_rate_rps > 0) || cfg.lengths_count == 0) {
      return InvalidArgumentError("lengths-only trace: rate and count must be > 0");
    }
    trace = PoissonTrace(trace, cfg.lengths_rate_rps, cfg.lengths_count, cfg.seed);
  }
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
  res.lengths_only = lengths_only;
  res.trace_requests = static_cast<std::int64_t>(trace.requests.size());
  res.trace_rate_rps = trace.Span() > 0 ? static_cast<double>(trace.requests.size()) / trace.Span() : 0;
  res.decode_fit_error = exec->decode_fit_error();
  res.prefill_fit_error = exec->prefill_fit_error();
  res.linear_holdout_error = LinearHoldoutError(exec->linear_curve(), 4);
  res.vidur_max_batch_4k = VidurMaxBatch(gpu, model, 4096);

  Runner run{cfg, *truth, *predictor, PrepareSettings(cfg, gpu, model, *exec),
             PrepareReplay(cfg), progress};
  res.vllm_knobs = KnobsOf(run.settings.vllm);
  res.seedance_knobs = KnobsOf(run.settings.seedance);
  if (cfg.use_best_knobs) {
    const TunedKnobs& k = TableEntry(cfg);
    res.knobs_from = fmt::format("{} {} tuning half", k.trace, k.kv_bits == 8 ? "fp8" : "fp16");
  } else {
    res.knobs_from = "as given";
  }
  const EngineConfig& e = run.settings.engine;
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
      SEEDANCE_ASSIGN_OR_RETURN(double s, run.Bisect(trace, lo, hi, policies[k], run.settings, 7));
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
  if (cfg.ablation) {
    // Leave one out: Seedance with each mechanism toggled from its default (a mechanism that is
    // off by default, like the lossy KV tiers, is turned on in its row).
    const double start = res.vllm_90_scale > 0 ? res.vllm_90_scale : 1.0;
    SEEDANCE_ASSIGN_OR_RETURN(double v, run.CapacityScale(trace, "vllm", run.settings, start));
    res.ablation_vllm_capacity_rps = v * res.trace_rate_rps;
    SEEDANCE_ASSIGN_OR_RETURN(double full, run.CapacityScale(trace, "seedance", run.settings, start));
    res.ablation.push_back(AblationRow{"all", true, full * res.trace_rate_rps, 0});
    say(fmt::format("ablation: vllm {:.2f}, seedance {:.2f} req/s", res.ablation_vllm_capacity_rps,
                    full * res.trace_rate_rps));
    for (const std::string& m : MechanismNames()) {
      PolicySettings s = run.settings;
      const bool on = !MechanismOn(s.seedance, m);
      SEEDANCE_RETURN_IF_ERROR(SetMechanism(&s.seedance, m, on));
      SEEDANCE_ASSIGN_OR_RETURN(double c, run.CapacityScale(trace, "seedance", s, full));
      AblationRow row{m, on, c * res.trace_rate_rps, 0};
      const double gain = (full - v) * res.trace_rate_rps;
      if (!on && gain > 0) row.share_of_gain = (full * res.trace_rate_rps - row.capacity_rps) / gain;
      say(fmt::format("ablation: {} {}: {:.2f} req/s", m, on ? "on" : "off", row.capacity_rps));
      res.ablation.push_back(row);
    }
  }
  if (cfg.knob_sweep) {
    res.knob_grid = KnobGrid(model.max_context);
    const std::vector<EngineKnobs>& grid = res.knob_grid;
    for (const std::string policy : {"vllm", "seedance"}) {
      double best = 0;
      for (const EngineKnobs& k : grid) {
        PolicySettings s = run.settings;
        k.ApplyTo(policy == std::string("vllm") ? &s.vllm : &s.seedance);
        SEEDANCE_ASSIGN_OR_RETURN(double c, run.CapacityScale(trace, policy, s, 1.0));
        res.knob_sweep.push_back(KnobPoint{policy, k, c * res.trace_rate_rps});
        best = std::max(best, c * res.trace_rate_rps);
        say(fmt::format("knob sweep: {} [{}]: {:.2f} req/s (best so far {:.2f})", policy,
                        k.ToString(), c * res.trace_rate_rps, best));
      }
    }
    // The labelled variant: vLLM's best with swap preemption (vLLM V0; V1 only recomputes).
    EngineKnobs swap = BestKnobPoint(res.knob_sweep, "vllm", grid)->knobs;
    swap.preemption = PreemptionMode::kSwap;
    PolicySettings s = run.settings;
    swap.ApplyTo(&s.vllm);
    SEEDANCE_ASSIGN_OR_RETURN(double c, run.CapacityScale(trace, "vllm", s, 1.0));
    res.knob_sweep.push_back(KnobPoint{"vllm-swap", swap, c * res.trace_rate_rps});
    say(fmt::format("knob sweep: vllm-swap [{}]: {:.2f} req/s", swap.ToString(), c * res.trace_rate_rps));
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
  res.pareto = ExecutorBatchPoints(*predictor, ctx, 256);
  res.pareto_choice = ChooseBatch(res.pareto, gpu.memory_bytes * cfg.gpu_memory_utilization,
                                  cfg.slo_tpot_s);
  SEEDANCE_ASSIGN_OR_RETURN(res.seed_table,
                            LoadSeedBatchTable(cfg.data_dir + "/batching/seed_batch_table.csv"));
  res.seed_choice = ChooseBatch(res.seed_table, 4.0 * 1024 * 1024 * 1024, 0.050);
  return res;
}

}  // namespace seedance::batching

namespace seedance::batching {

Result<StepResponse> ControllerStepResponse(const BatchingConfig& cfg, double rate_rps,
                                            double step_at_s) {
  if (!(rate_rps > 0) || !(step_at_s > 0)) {
    return InvalidArgumentError("step response: rate and step time must be > 0");
  }
  SEEDANCE_ASSIGN_OR_RETURN(GpuSpec gpu, FindGpu(cfg.gpu));
  SEEDANCE_ASSIGN_OR_RETURN(ModelSpec model, ModelOnOneGpu(cfg, gpu));
  SEEDANCE_ASSIGN_OR_RETURN(Precision precision, ParsePrecision(cfg.precision));
  SEEDANCE_ASSIGN_OR_RETURN(Executors ex, LoadExecutors(cfg, gpu, model, precision));
  auto& truth = ex.truth;
  auto& predictor = ex.predictor;
  bool lengths_only = false;
  SEEDANCE_ASSIGN_OR_RETURN(Trace lengths,
                            LoadAnyTrace(ResolveTracePath(cfg.data_dir, cfg.trace_path), &lengths_only));
  // Requests that can never run are not part of a load step.
  std::erase_if(lengths.requests, [&](const Request& r) {
    return std::int64_t{r.prompt} + r.output > model.max_context;
  });
  const auto n1 = static_cast<std::size_t>(rate_rps * step_at_s);
  Trace low = PoissonTrace(lengths, rate_rps, n1, cfg.seed);
  const Trace high = PoissonTrace(lengths, 2 * rate_rps, 2 * n1, cfg.seed + 1);
  const double t0 = low.requests.empty() ? 0 : low.requests.back().arrival_s;
  for (Request r : high.requests) {
    r.arrival_s += t0;
    r.id = static_cast<std::uint32_t>(low.requests.size());
    low.requests.push_back(r);
  }
  PolicySettings settings = PrepareSettings(cfg, gpu, model, *truth);
  settings.seedance.record_cap_history = true;
  std::vector<RequestRecord> records(low.requests.size());
  SEEDANCE_ASSIGN_OR_RETURN(auto sched, MakeScheduler("seedance", settings, predictor.get(), &records));
  SEEDANCE_ASSIGN_OR_RETURN(PolicyResult ignored, Replay(low, *sched, *truth, records, PrepareReplay(cfg)));
  (void)ignored;
  StepResponse out;
  out.rate_rps = rate_rps;
  out.step_at_s = t0;
  out.ticks = sched->cap_history();
  // Ticks from the step until the arrivals end (the drain afterwards is not load).
  const double end = low.requests.back().arrival_s;
  std::vector<int> after;
  for (const CapSample& c : out.ticks) {
    if (c.t >= t0 && c.t <= end) after.push_back(c.cap);
  }
  if (after.size() < 8) return out;
  std::vector<int> tail(after.end() - static_cast<std::ptrdiff_t>(after.size() / 4), after.end());
  std::nth_element(tail.begin(), tail.begin() + static_cast<std::ptrdiff_t>(tail.size() / 2), tail.end());
  const double final_cap = tail[tail.size() / 2];
  int last_out = -1;
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (std::abs(after[i] - final_cap) > 0.1 * final_cap) last_out = static_cast<int>(i);
  }
  out.settle_ticks = last_out + 1 < static_cast<int>(after.size()) ? last_out + 1 : -1;
  for (std::size_t i = static_cast<std::size_t>(std::max(0, out.settle_ticks)); i < after.size(); ++i) {
    out.max_deviation_after_settle =
        std::max(out.max_deviation_after_settle, std::abs(after[i] - final_cap) / final_cap);
  }
  return out;
}

}  // namespace seedance::batching
