#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/batching/block_manager.h"
#include "seedance/batching/executor.h"
#include "seedance/batching/trace.h"
#include "seedance/core/status.h"

namespace seedance::batching {

enum class Outcome : std::uint8_t { kPending, kFinished, kRejected };
enum class RejectReason : std::uint8_t {
  kNone,
  kExceedsContext,   // prompt + output > the model's context: can never run
  kExceedsKvCache,   // needs more KV blocks than the whole cache: can never run
  kQueueFull,        // Triton max_queue_size
  kQueueTimeout,     // Triton queue policy timeout (REJECT)
};
std::string_view RejectReasonName(RejectReason r);

// What happened to one request; the scheduler fills it in, the replay driver reads it.
struct RequestRecord {
  double first_token_s = -1;  // simulated time the first output token was produced
  double finish_s = -1;       // time the last output token was produced
  std::int32_t generated = 0;
  std::int32_t preemptions = 0;
  Outcome outcome = Outcome::kPending;
  RejectReason reason = RejectReason::kNone;
  bool lowbit_kv = false;     // resumed from a 4/6-bit KV copy (S5.7 quality cost)
};

// One sequence's share of an iteration.
struct ScheduledItem {
  std::uint32_t seq = 0;
  std::int32_t tokens = 0;     // tokens computed this iteration (1 for a decode)
};

// The next iteration: what the model runs (shape) and for whom (items). Static batchers also
// report the padding they carry.
struct Batch {
  BatchShape shape;
  std::vector<ScheduledItem> items;
  std::int64_t padded_tokens = 0;  // token slots computed for padding
  std::int64_t useful_tokens = 0;  // token slots computed for real tokens
  void Clear() {
    shape.Clear();
    items.clear();
    padded_tokens = 0;
    useful_tokens = 0;
  }
};

struct SchedulerStats {
  std::int64_t preemptions = 0;          // all kinds
  std::int64_t recompute_preemptions = 0;
  std::int64_t swap_preemptions = 0;
  std::int64_t kv_compressions = 0;      // S5.7 cold KV kept at 4/6 bits instead of dropped
  std::int64_t recomputed_tokens = 0;
  std::int64_t padded_tokens = 0;
  std::int64_t useful_tokens = 0;
  std::int64_t controller_updates = 0;
  std::int32_t batch_cap = 0;            // current max running sequences
  std::int64_t kv_token_reads = 0;       // decode-attention KV tokens read
  std::int64_t kv_lowbit_token_reads = 0;  // of which stored at 4 or 6 bits
};

enum class PreemptionMode { kRecompute, kSwap };

// Common engine settings (the replica, the model's limits and the SLOs).
struct EngineConfig {
  double kv_capacity_bytes = 0;    // HBM left for the KV cache (see KvBlocksFor)
  int block_size = 0;              // 0: the policy's default (DefaultBlockSize)
  double watermark = 0.01;
  int max_context = 4096;
  double kv_bytes_per_token = 0;   // KV bytes per token at kv_bits
  int kv_bits = 16;                // KV cache precision for every policy: 16 (FP16) or 8 (FP8)
  double pcie_bytes_per_s = 25e9;  // swap link
  double dram_bytes_per_s = 2e12;  // decompression of cold KV
  double slo_ttft_s = 2.0;
  double slo_tpot_s = 0.1;
};

struct StaticConfig {
  int max_batch = 32;
  bool bucketed = false;  // S5.5 length buckets [0,32), [32,64), [64,128), ...
};

// Triton dynamic batcher (model config `dynamic_batching { ... }`), request-level.
struct TritonConfig {
  int max_batch = 32;
  std::vector<int> preferred_batch_size = {8, 16, 32};
  std::int64_t max_queue_delay_microseconds = 100000;
  int priority_levels = 3;          // QoS class c -> priority level c + 1 (1 = highest)
  std::int64_t default_timeout_microseconds = 0;  // 0: none; REJECT on expiry
  std::int64_t max_queue_size = 0;  // 0: unbounded
};

// Continuous (iteration-level) batching. Defaults are vLLM's (V1 engine, online serving):
// FCFS, max_num_seqs 256, max_num_batched_tokens 2048, chunked prefill, recompute preemption
// of the most recently admitted running request, watermark for admissions, no admission
// after a preemption in the same step. The benchmark replaces the knobs by the best setting
// of its sweep (docs/BENCHMARKS.md) for vLLM and Seedance alike.
struct ContinuousConfig {
  int max_num_seqs = 256;
  int max_num_batched_tokens = 2048;  // also the ceiling of Seedance's SLO budget
  bool chunked_prefill = true;
  PreemptionMode preemption = PreemptionMode::kRecompute;
  // Seedance mechanisms (all off = vLLM), each a named switch with an ablation row:
  bool qos_priority = false;      // S5.6 class order + guaranteed preempts lower classes
  bool length_aware = false;      // "ordering": shortest remaining prompt first, with aging
  double aging_tokens_per_s = 2000;  // a request gains this many tokens of priority per second
  bool slo_aware = false;         // "slo-budget": SLO token budget per step; late requests last
  bool admit_after_preemption = false;  // "admission": keep admitting in a step that preempted
  bool growth_reserve = false;    // "admission": one free block per running sequence to admit
  bool pareto_cap = false;        // S5.3 "pareto-cap": running set <= the Pareto batch size
  bool feedback_controller = false;  // S5.4 "controller": 200 ms SM/DRAM loop moves the cap
  bool kv_tiers = false;          // S5.7 "kv-tiers": lossy 4/6-bit KV for cold tokens
  double kv_tier_tau_tokens = 512;  // heat = exp(-age / tau)
  bool fairness = false;          // S4.5 tenant compensation in ordering
  bool record_cap_history = false;  // keep (time, cap) at every controller tick (tests, plots)
};

// One controller tick: the batch cap in force after it.
struct CapSample {
  double t = 0;
  int cap = 0;
  int running = 0;
};

// Scheduler: decides iteration by iteration what runs on one replica. The driver calls
// Admit for each arrival, NextBatch when the GPU is free, and ApplyStep when the iteration
// ends. All decisions use the given simulated time; ties break on request id.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual std::string_view name() const = 0;

  // Takes a request. A request that can never run (context, cache size) or that the queue
  // policy refuses is marked kRejected with a reason in its record, never dropped silently.
  virtual void Admit(const Request& r, double now) = 0;
  // Fills `batch` with the next iteration; returns false when nothing can run now.
  virtual bool NextBatch(double now, Batch* batch) = 0;
  // Applies the finished iteration (`batch` as returned by NextBatch) that ended at `end_s`.
  virtual void ApplyStep(const Batch& batch, double end_s, const StepCost& cost) = 0;
  // The earliest time after `now` at which the scheduler wants to run without a new arrival
  // (queue delay or timeout expiry); +inf when none.
  virtual double WakeupTime(double now) const {
    (void)now;
    return std::numeric_limits<double>::infinity();
  }
  virtual bool HasWork() const = 0;
  virtual const BlockManager& blocks() const = 0;
  virtual SchedulerStats stats() const = 0;
  // Controller ticks, when the policy has a controller and was asked to record them.
  virtual const std::vector<CapSample>& cap_history() const {
    static const std::vector<CapSample> kNone;
    return kNone;
  }
};

// The policy names compared in one run, in report order. "seedance-kvtiers" is Seedance with
// the lossy S5.7 KV tiers on: a labelled variant that never carries the headline.
const std::vector<std::string>& PolicyNames();

// The names of Seedance's mechanisms, in ablation order, and a switch for each.
const std::vector<std::string>& MechanismNames();
// Sets mechanism `name` (one of MechanismNames()) on or off in `c`. Errors: kInvalidArgument.
Status SetMechanism(ContinuousConfig* c, std::string_view name, bool on);
// Whether mechanism `name` is on in `c` (false for an unknown name).
bool MechanismOn(const ContinuousConfig& c, std::string_view name);

struct PolicySettings {
  EngineConfig engine;
  StaticConfig static_batching;
  TritonConfig triton;
  ContinuousConfig vllm;       // as defaulted
  ContinuousConfig seedance = SeedanceDefaults();
  static ContinuousConfig SeedanceDefaults();
};

// Creates the scheduler `policy` (one of PolicyNames()) for `num_requests` requests whose
// outcomes go to `records` (size num_requests, outliving the scheduler). `executor` predicts
// step times for policies that plan against the SLO (seedance); it must outlive the
// scheduler. Errors: kInvalidArgument for an unknown policy or an invalid setting.
Result<std::unique_ptr<Scheduler>> MakeScheduler(std::string_view policy,
                                                 const PolicySettings& settings,
                                                 const Executor* executor,
                                                 std::vector<RequestRecord>* records);

// Block size and KV memory policy per scheduler: vLLM 16-token blocks (its default); the
// others the seed's 64.
int DefaultBlockSize(std::string_view policy);

}  // namespace seedance::batching
