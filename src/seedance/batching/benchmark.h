#pragma once

#include <iosfwd>
#include <string>
#include <string_view>
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
// The sweep grid, the same for vLLM and Seedance: max_num_batched_tokens 128..8192 (powers of 2)
// x max_num_seqs 16..512 (powers of 2) x chunked prefill on/off, recompute preemption (vLLM V1's
// only mode). The issue asked for 32..512 sequences; Seedance's best on the code trace was 32, the
// edge, so the grid goes down to 16 (docs/BENCHMARKS.md "Batching knob sweep"). The points vLLM refuses are left out: a token budget below max_num_seqs, and
// chunked prefill off with a budget below the context (`max_context`).
std::vector<EngineKnobs> KnobGrid(int max_context);
// Whether `k` lies on the edge of `grid`: its token budget or its sequence cap is the grid's
// smallest or largest.
bool AtGridEdge(const EngineKnobs& k, const std::vector<EngineKnobs>& grid);

// The knobs vLLM and Seedance run with by default, chosen by the knob sweep on one bundled
// trace's tuning half at one KV precision (docs/BENCHMARKS.md "Batching knob sweep").
struct TunedKnobs {
  std::string_view trace;   // bundled trace name ("conv", "code")
  int kv_bits = 16;         // KV precision the sweep ran at: 16 or 8
  EngineKnobs vllm;         // vLLM's best, recompute preemption (vLLM V1 has no swap)
  EngineKnobs seedance;     // Seedance's best over the same grid
  std::string_view origin;  // the command whose sweep chose them
};
// The one table of chosen knobs, keyed by (trace, KV precision).
const std::vector<TunedKnobs>& TunedKnobTable();
// The entry for `trace` (a bundled name; "" is "conv") at `kv_bits`; a trace with no entry of
// its own (arxiv, a file) gets the tuning trace's (conversation) at that precision.
const TunedKnobs& TunedKnobsFor(std::string_view trace, int kv_bits);
// The bundled trace name of `trace_path` as `seedance batching --trace` takes it ("" -> "conv",
// a bundled file's path -> its name); "" for any other file.
std::string BundledTraceName(const std::string& data_dir, const std::string& trace_path);

// The inputs of `seedance batching`. Plain aggregate; the defaults are the bundled run.
struct BatchingConfig {
  std::string data_dir;          // bundled data (DataDir())
  // A path, or a bundled trace: "conv" (default, the tuning trace), "code" or "arxiv" (held
  // out). A lengths-only CSV gets Poisson arrivals (lengths_count requests at lengths_rate_rps).
  std::string trace_path;
  TracePart trace_part = TracePart::kAll;  // the half to replay (--trace-part)
  int kv_bits = 16;              // KV cache precision for every policy: 16 or 8 (--kv-dtype)
  StepNoise noise = DefaultStepNoise();  // ground-truth noise; its seed is `seed`
  bool split_profiles = true;    // truth fitted on the even profile points, predictor on the odd
  bool ablation = false;         // capacity with each Seedance mechanism toggled (needs sweep)
  bool knob_sweep = false;       // capacity of vLLM and Seedance over KnobGrid (slow)
  bool use_best_knobs = true;    // vLLM and Seedance at TunedKnobsFor (false: `settings` as given)
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
  std::string policy;  // "vllm", "seedance", or "vllm-swap" (the labelled swap variant)
  EngineKnobs knobs;
  double capacity_rps = 0;
};
// Points within this share of a sweep's best capacity tie with it: the capacity search resolves
// 2^-7 of its bracket (< 0.8 %), and the noisy truth moves a capacity by about as much.
inline constexpr double kKnobTie = 0.01;
// The best point of `policy` in `sweep` among the points inside `grid` (not AtGridEdge; all
// points when none is inside): the highest capacity, where the points within kKnobTie of it tie
// and a tie goes to the point nearest vLLM's stock knobs (fewest doublings from 2048 tokens and
// 256 sequences; chunked prefill as stock), then to the higher capacity. A chosen point thus has
// neighbours on every side that were measured; a higher point on the edge is reported beside it
// (FormatBatchingTable). The same rule for every policy. nullptr when `sweep` has no point of
// `policy`.
const KnobPoint* BestKnobPoint(const std::vector<KnobPoint>& sweep, std::string_view policy,
                               const std::vector<EngineKnobs>& grid);

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
  std::vector<KnobPoint> knob_sweep;   // when config.knob_sweep; the last point is vllm-swap
  std::vector<EngineKnobs> knob_grid;  // the settings each policy was swept over
  EngineKnobs vllm_knobs, seedance_knobs;  // the knobs the policies ran with
  // Where those knobs came from: "conv fp16" etc. (an entry of TunedKnobTable) or "as given".
  std::string knobs_from;
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
// SLOs of `cfg`) and the knobs of vLLM and Seedance (TunedKnobsFor the trace and KV precision
// when cfg.use_best_knobs).
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
