#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "seedance/batching/pareto.h"
#include "seedance/batching/replay.h"
#include "seedance/batching/scheduler.h"
#include "seedance/core/status.h"

namespace seedance::batching {

// What to do with a request longer than the model's context.
enum class OversizePolicy {
  kReject,  // reject it with the reason "exceeds model context" and count it (default)
  kError,   // fail the run: kInvalidArgument naming file:line and field
};

// The ground truth's step noise by default (docs/ARCHITECTURE.md "Inference batching"):
// log-sd 0.05 per step and 1% slow steps at 2x. Vidur's repeated kernel profiles spread far less
// (median std/mean 0.5%, p90 1.2% over the nine linear ops of mlp.csv; a max/median of 1.05 at
// p90); the cpu_overheads.csv means run up to 39% above their medians (sampler at batch 96), a
// heavy host-side tail. We take ~4x the kernel spread and a tail of rare whole-step stalls, so
// a policy that leans on exact predictions is exposed.
StepNoise DefaultStepNoise();

// The engine knobs vLLM users set (and Seedance shares).
struct EngineKnobs {
  int max_num_batched_tokens = 2048;
  int max_num_seqs = 256;
  bool chunked_prefill = true;
  PreemptionMode preemption = PreemptionMode::kRecompute;
  void ApplyTo(ContinuousConfig* c) const;
  std::string ToString() const;   // "tokens 2048, seqs 256, chunked, recompute"
};
// The best knobs of the sweep on the tuning trace (Azure conversation, FP16 KV, noisy executor;
// docs/BENCHMARKS.md "Batching knob sweep"), used by default for vLLM and for Seedance.
EngineKnobs BestVllmKnobs();
EngineKnobs BestSeedanceKnobs();
// The sweep grid: max_num_batched_tokens 512..8192 x max_num_seqs 64..512 x chunked prefill
// on/off x recompute/swap; chunked prefill off needs max_num_batched_tokens >= the context
// (vLLM refuses otherwise), so those points are left out.
std::vector<EngineKnobs> KnobGrid(int max_context);

// The inputs of `seedance batching`. Plain aggregate; the defaults are the bundled run.
struct BatchingConfig {
  std::string data_dir;          // bundled data (DataDir())
  // A path, or a bundled trace: "conv" (default, the tuning trace), "code" or "arxiv" (held
  // out). A lengths-only CSV gets Poisson arrivals (lengths_count requests at lengths_rate_rps).
  std::string trace_path;
  int kv_bits = 16;              // KV cache precision for every policy: 16 or 8 (--kv-dtype)
  StepNoise noise = DefaultStepNoise();  // ground-truth noise; its seed is `seed`
  bool split_profiles = true;    // truth fitted on the even profile points, predictor on the odd
  bool ablation = false;         // capacity with each Seedance mechanism toggled (needs sweep)
  bool knob_sweep = false;       // capacity of vLLM and Seedance over KnobGrid (slow)
  bool use_best_knobs = true;    // vLLM and Seedance at Best*Knobs (false: stock defaults)
  double lengths_rate_rps = 1.0;
  std::size_t lengths_count = 4000;
  std::string gpu = "a100";
  std::string model = "llama-2-7b";
  std::string precision = "fp16";
  std::vector<std::string> policies;  // empty: all
  double slo_ttft_s = 2.0;
  double slo_tpot_s = 0.1;
  double rate_scale = 1.0;       // arrivals compressed by this factor
  bool sweep = false;            // rate sweep + find vLLM's 90 % rate + run there
  bool multi_tenant = true;      // also run the multi-tenant mix at the headline rate
  std::uint64_t seed = 42;       // multi-tenant class draw and Poisson sweep
  double usd_per_gpu_hour = 0;   // the GPU's price (the caller looks it up)
  std::string price_source;      // where that price came from (echoed in the outputs)
  double gpu_memory_utilization = 0.9;
  OversizePolicy oversize = OversizePolicy::kReject;
  PolicySettings settings;       // engine fields are derived; knobs may be overridden
};

struct SweepPoint {
  double rate_scale = 0;
  double rate_rps = 0;
  std::vector<double> attainment;  // per policy, in results order
  std::vector<double> goodput_rps;
};

// One row of the ablation: Seedance with one mechanism toggled from its default.
struct AblationRow {
  std::string mechanism;         // MechanismNames(), or "all" (Seedance as defaulted)
  bool on = false;               // the mechanism's state in this row
  double capacity_rps = 0;       // max rate at >= 90 % attainment
  double share_of_gain = 0;      // (full - this) / (full - vllm) for a mechanism turned off
};

struct KnobPoint {
  std::string policy;
  EngineKnobs knobs;
  double capacity_rps = 0;
};

struct BatchingResults {
  BatchingConfig config;
  std::string trace_name;
  std::int64_t trace_requests = 0;
  double trace_rate_rps = 0;      // at rate_scale 1
  double headline_scale = 1;      // the rate scale the `policies` figures were measured at
  std::vector<PolicyResult> policies;
  std::vector<PolicyResult> mix;  // multi-tenant mix at the headline scale
  std::vector<SweepPoint> sweep;
  double vllm_90_scale = 0;       // rate scale where vLLM attains 90 % (0: no sweep)
  std::vector<double> capacity_rps;  // per policy: max rate with >= 90 % attainment (sweep)
  std::vector<AblationRow> ablation;   // when config.ablation
  double ablation_vllm_capacity_rps = 0;
  std::vector<KnobPoint> knob_sweep;   // when config.knob_sweep
  EngineKnobs vllm_knobs, seedance_knobs;  // the knobs the policies ran with
  bool lengths_only = false;      // the trace had no arrivals: Poisson ones were drawn
  std::vector<BatchPoint> pareto;    // decode-step candidates at the trace's mean context
  int pareto_choice = -1;
  double pareto_context = 0;
  std::vector<BatchPoint> seed_table;
  int seed_choice = -1;
  int vidur_max_batch_4k = 0;
  double decode_fit_error = 0, prefill_fit_error = 0, linear_holdout_error = 0;
  double kv_capacity_bytes = 0;
};

// The engine every policy shares on `gpu` (KV precision and capacity, the model's limits, the
// SLOs of `cfg`) and the knobs of vLLM and Seedance (Best*Knobs when cfg.use_best_knobs).
PolicySettings PrepareSettings(const BatchingConfig& cfg, const GpuSpec& gpu, const ModelSpec& model,
                               const ProfiledExecutor& exec);

// The bundled trace for a name ("conv", "code", "arxiv"), or `name` itself when it is a path.
std::string ResolveTracePath(const std::string& data_dir, const std::string& name);

// Runs the configured comparison. Progress lines go to `progress` when not null.
// Errors: kInvalidArgument / kNotFound for bad names, files or values (nothing is run).
Result<BatchingResults> RunBatching(const BatchingConfig& config, std::ostream* progress);

// S5.4 step response: Seedance (as configured in `config`, predictor/truth split and noise
// included) replays Poisson arrivals of the trace's lengths at `rate_rps` for `step_at_s`
// seconds and at twice that rate for as long again; returns the controller's ticks.
struct StepResponse {
  double rate_rps = 0;
  double step_at_s = 0;
  std::vector<CapSample> ticks;
  // Ticks after the step until the cap stays within +-10% of its final value (the median of
  // the last quarter of the ticks); -1 when it never does.
  int settle_ticks = -1;
  double max_deviation_after_settle = 0;  // relative to the final value
};
Result<StepResponse> ControllerStepResponse(const BatchingConfig& config, double rate_rps,
                                            double step_at_s);

// Median relative error of the linear-stack curve at the token counts held out of the fit
// (every `stride`-th token count, fitted on the rest).
double LinearHoldoutError(const Curve& full, int stride);

}  // namespace seedance::batching
