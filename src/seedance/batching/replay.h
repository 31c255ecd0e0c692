#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "seedance/batching/executor.h"
#include "seedance/batching/scheduler.h"
#include "seedance/batching/trace.h"
#include "seedance/core/status.h"

namespace seedance::batching {

// Per-iteration latency noise of the ground truth: each step's time is multiplied by a
// lognormal factor of mean 1 and log-sd `sigma`, and with probability `slow_prob` by
// `slow_factor` as well (a slow step: a host-side stall). Drawn from a stream seeded with
// `seed`, one draw per step, so a replay is deterministic. Zero sigma and slow_prob: none.
struct StepNoise {
  double sigma = 0;
  double slow_prob = 0;
  double slow_factor = 1;
  std::uint64_t seed = 0;
  bool enabled() const { return sigma > 0 || slow_prob > 0; }
};

struct ReplayOptions {
  double slo_ttft_s = 2.0;
  double slo_tpot_s = 0.1;
  double usd_per_gpu_hour = 0;  // price of the replica's GPU
  StepNoise noise;              // applied to the executor's step times
};

struct ClassResult {
  std::int64_t requests = 0;  // servable requests of the class
  std::int64_t finished = 0;
  std::int64_t met = 0;       // finished within both SLOs
  double attainment = 0;      // met / requests (1 when the class has none)
};

// One policy's figures on one trace (simulated time; deterministic).
struct PolicyResult {
  std::string name;
  std::int64_t requests = 0;
  std::int64_t rejected_context = 0;  // can never fit the model: rejected with that reason
  std::int64_t rejected_kv = 0;       // can never fit the KV cache
  std::int64_t rejected_queue = 0;    // refused or timed out by the queue policy
  std::int64_t servable = 0;          // requests - rejected_context - rejected_kv
  std::int64_t finished = 0;
  std::int64_t met = 0;
  double makespan_s = 0;              // last finish - first arrival
  double throughput_rps = 0;          // finished / makespan
  double tokens_per_s = 0;            // prompt + output tokens of finished requests / makespan
  double output_tokens_per_s = 0;
  double goodput_rps = 0;             // met / makespan
  double slo_attainment = 0;          // met / servable
  double ttft_p50_s = 0, ttft_p99_s = 0, tpot_p50_s = 0, tpot_p99_s = 0;
  std::array<ClassResult, kNumQosClasses> per_class{};
  double kv_use_mean = 0;             // time-weighted share of KV blocks in use
  double kv_use_peak = 0;
  std::int64_t preemptions = 0;
  std::int64_t kv_compressions = 0;
  std::int64_t recomputed_tokens = 0;
  double padding_share = 0;           // padded / (padded + useful) token slots
  double lowbit_kv_share = 0;         // finished requests that read some 4/6-bit KV (S5.7)
  double lowbit_kv_token_share = 0;   // share of decode KV token reads at 4/6 bits
  double usd_per_mtok = 0;            // GPU $ over makespan / million (prompt + output) tokens
  std::int64_t steps = 0;
};

// Replays `trace` through `scheduler` on `executor` in simulated time: arrivals are admitted
// at their time, an iteration starts whenever the GPU is free and the scheduler has work,
// idle time jumps to the next arrival or scheduler wake-up. `records` must have one entry per
// request (fresh). Errors: kInternal if the scheduler stalls with work left.
Result<PolicyResult> Replay(const Trace& trace, Scheduler& scheduler, const Executor& executor,
                            std::vector<RequestRecord>& records, const ReplayOptions& options);

// The p-th percentile (0..100, nearest rank) of `v` (copied); 0 for an empty vector.
double Percentile(std::vector<double> v, double p);

}  // namespace seedance::batching
