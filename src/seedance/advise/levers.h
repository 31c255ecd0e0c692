#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/advise/finding.h"
#include "seedance/core/status.h"

namespace seedance::advise {

// Training-side levers (what-if): each is a documented multiplier on a training step's memory
// (model state, activations), compute time and gradient bytes on the wire, with its source.
enum class Lever : std::uint8_t {
  kMixedPrecision,     // BF16/FP16 autocast with FP32 master weights
  kCheckpointing,      // gradient (activation) checkpointing, sqrt(L) segments
  kCompress8Bit,       // the seed's 8-bit stochastic-rounding gradient quantization
  kTopK,               // top-k gradient sparsification with error feedback
  kCollectiveOverlap,  // bucketed all-reduce overlapped with the backward pass
  kInputPipeline,      // input pipeline fixed: the measured input stall removed
};
inline constexpr Lever kAllLevers[] = {Lever::kMixedPrecision, Lever::kCheckpointing,
                                       Lever::kCompress8Bit,   Lever::kTopK,
                                       Lever::kCollectiveOverlap, Lever::kInputPipeline};
std::string_view LeverName(Lever lever);  // "mixed-precision", "checkpointing", ...
Result<Lever> ParseLever(std::string_view name);

// The parameters of the lever model. Defaults are the documented values; each is an assumption
// that shapes every lever figure (docs/BENCHMARKS.md lists them next to the figures).
struct LeverParams {
  int layers = 36;                // checkpoint every sqrt(layers) layers
  double mp_compute_factor = 0.5; // mixed precision: compute time x0.5 (tensor-core GEMMs; NVIDIA's
                                  // AMP guidance reports 1.5-3x end to end, we take 2x)
  double quantize_overhead = 0.01;  // 8-bit / top-k: +1% compute to (de)quantize / select
  double topk_density = 0.01;     // top-k keeps 1% of the gradient entries, 32-bit indices
  double overlap_hidden = 0.5;    // overlap hides half of the exposed communication
};

// A training step in the seed's table's terms.
struct StepFigures {
  double memory_gb = 0;       // peak memory per GPU (decimal GB)
  double step_ms = 0;         // per step
  double comm_reduction = 0;  // gradient bytes on the wire, 1 - bytes / FP32 bytes
};

// The inputs of the seed's table: its FP32 row (42.6 GB, 1,890 ms per step) and the splits the
// seed does not give, which we assume: activations are 70% of the FP32 step's memory (the rest is
// model state at 16 bytes/parameter: FP32 weights, gradients and two Adam moments), and the
// exposed gradient all-reduce is 20% of the FP32 step.
struct TrainingStep {
  double memory_gb = 42.6;
  double step_ms = 1890;
  double activation_share = 0.70;
  double comm_share = 0.20;
};

// The step with a set of levers applied (kInputPipeline has no effect here: the seed's step has
// no stall). Multipliers (sources in levers.cc):
//   mixed precision: activations x0.5, state x1 (16 B/param either way), compute x mp_compute_factor,
//     gradient bytes x0.5 (FP16 on the wire);
//   checkpointing: activations x 2/sqrt(L), compute x 4/3 (one more forward pass);
//   8-bit: 1 byte per gradient entry, compute x (1 + quantize_overhead);
//   top-k: density x (value bytes + 4 index bytes) per entry, state +4 B/param (error feedback),
//     compute x (1 + quantize_overhead);
//   overlap: exposed communication x (1 - overlap_hidden).
StepFigures EvaluateStep(const TrainingStep& step, const std::vector<Lever>& levers,
                         const LeverParams& params);

// One row of the seed-table reproduction.
struct LeverTableRow {
  std::string config;
  StepFigures ours;
  bool has_seed = false;
  StepFigures seed;
};
// FP32, each lever alone, and the seed's combination (mixed precision + checkpointing + top-k +
// 8-bit) and the same without top-k; the seed's figures beside the rows it gives.
std::vector<LeverTableRow> SeedLeverTable(const TrainingStep& step, const LeverParams& params);
// Where the seed's figures differ from what its inputs give, in sentences (what each seed figure
// would need under our multipliers).
std::vector<std::string> SeedTableDifferences(const TrainingStep& step, const LeverParams& params);

// The "seed-implied inputs": the three inputs the seed does not give, solved jointly from its
// combination row (15.3 GB, 1,620 ms, 76% less communication) by inverting the same lever model,
// then rounded to the precision they are printed at (activation share and top-k density to 0.1%,
// the mixed-precision compute speedup to 0.01x). Everything else is `step` / `params` unchanged.
// SeedImpliedLeverTable evaluates SeedLeverTable at these inputs (the model computes the rows; no
// output is written in), each row's config prefixed "seed-implied inputs: ".
struct SeedImpliedInputs {
  TrainingStep step;
  LeverParams params;
};
SeedImpliedInputs SolveSeedImpliedInputs(const TrainingStep& step, const LeverParams& params);
std::vector<LeverTableRow> SeedImpliedLeverTable(const SeedImpliedInputs& implied);
// What the implied inputs are against ours, and where the seed's rounding differs from the row
// they give.
std::vector<std::string> SeedImpliedNotes(const TrainingStep& step, const LeverParams& params,
                                          const SeedImpliedInputs& implied);

// How the llm-finetune replay maps a lever onto a job, per GPU type: the step-time multiplier
// and the multiplier on the job's training state (which decides where it fits). The baseline is
// the workload as generated: BF16 mixed precision, no checkpointing, BF16 gradients, no overlap.
// A gang of n > 1 GPUs spends `comm_share` of a step on exposed gradient all-reduce: 0.10 on
// NVLink types, 0.25 on PCIe-only types (an assumption; the generator folds it into its MFU);
// a single GPU has none. Mixed precision is in the baseline: its figure is what turning it off
// (FP32: compute x2, gradient bytes x2, LoRA's frozen weights 4 B/param) would cost.
struct JobLeverEffect {
  double step_factor = 1;    // step time multiplier (throughput / step_factor)
  double memory_factor = 1;  // training state multiplier
};
JobLeverEffect LlmJobEffect(std::string_view job_type, int gpus, std::string_view gpu_type,
                            const std::vector<Lever>& levers, const LeverParams& params);

// The replay: llm-finetune (seed, arrival window) priced under the seedance cost-aware policy
// with each lever, and the best combination (every lever that saved money alone; of 8-bit and
// top-k the better one), against the baseline under the same policy and seed.
struct ReplaySpec {
  std::string data_dir;      // bundled data root
  std::uint64_t seed = 42;   // workload and simulation seed
  double duration_s = 0;     // arrival window; 0 = the workload's default (7 days)
  std::vector<std::uint64_t> ci_seeds = {};  // more workload seeds for the interval (may be empty)
  LeverParams params;
};
struct LeverReplayRow {
  std::string name;  // lever name, or "combination: a + b + c"
  std::vector<Lever> levers;
  double cost_usd = 0;       // the replay's total cost
  double saving_usd = 0;     // baseline - this (negative: dearer)
  double usd_per_month = 0;  // saving scaled to a month: x kHoursPerMonth / arrival window hours
  double ci_low = 0, ci_high = 0;  // min / max $/month over the seed and ci_seeds
  double avg_jct_hours = 0;
  int unfinished = 0;
};
struct LeverReplay {
  std::string workload;
  std::int64_t jobs = 0;
  double window_s = 0;
  double baseline_cost_usd = 0;
  double baseline_avg_jct_hours = 0;
  std::vector<LeverReplayRow> rows;  // ranked by usd_per_month
};
Result<LeverReplay> ReplayLevers(const ReplaySpec& spec,
                                 const std::function<void(const std::string&)>& progress);

// The replay's rows as findings (kind lever, target workload/llm-finetune), positive savings
// only, with `reproduce` naming `reproduce_prefix` + " --explain <id>".
std::vector<Finding> LeverFindings(const LeverReplay& replay, const std::string& reproduce_prefix);

}  // namespace seedance::advise
