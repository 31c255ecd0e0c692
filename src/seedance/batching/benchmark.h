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

// The inputs of `seedance batching`. Plain aggregate; the defaults are the bundled run.
struct BatchingConfig {
  std::string data_dir;          // bundled data (DataDir())
  std::string trace_path;        // empty: data/azure_llm/AzureLLMInferenceTrace_conv.csv
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
  // Seedance with FP16 KV (S5.7 tiers off): what the lossless mechanisms alone give.
  PolicyResult ablation_fp16_kv;
  double ablation_capacity_rps = 0;
  std::vector<BatchPoint> pareto;    // decode-step candidates at the trace's mean context
  int pareto_choice = -1;
  double pareto_context = 0;
  std::vector<BatchPoint> seed_table;
  int seed_choice = -1;
  int vidur_max_batch_4k = 0;
  double decode_fit_error = 0, prefill_fit_error = 0, linear_holdout_error = 0;
  double kv_capacity_bytes = 0;
};

// Runs the configured comparison. Progress lines go to `progress` when not null.
// Errors: kInvalidArgument / kNotFound for bad names, files or values (nothing is run).
Result<BatchingResults> RunBatching(const BatchingConfig& config, std::ostream* progress);

// Median relative error of the linear-stack curve at the token counts held out of the fit
// (every `stride`-th token count, fitted on the rest).
double LinearHoldoutError(const Curve& full, int stride);

}  // namespace seedance::batching
