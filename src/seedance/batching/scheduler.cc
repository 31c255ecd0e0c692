#include "seedance/batching/scheduler.h"

#include <fmt/format.h>

#include "seedance/batching/policies/request_level.h"

namespace seedance::batching {

std::string_view RejectReasonName(RejectReason r) {
  switch (r) {
    case RejectReason::kNone: return "none";
    case RejectReason::kExceedsContext: return "exceeds model context";
    case RejectReason::kExceedsKvCache: return "exceeds KV cache";
    case RejectReason::kQueueFull: return "queue full (max_queue_size)";
    case RejectReason::kQueueTimeout: return "queue timeout";
  }
  return "?";
}

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> kNames = {"static", "static-bucketed", "triton", "vllm",
                                                  "seedance", "seedance-kvtiers"};
  return kNames;
}

const std::vector<std::string>& MechanismNames() {
  static const std::vector<std::string> kNames = {"ordering", "slo-budget", "admission",
                                                  "pareto-cap", "controller", "kv-tiers"};
  return kNames;
}

Status SetMechanism(ContinuousConfig* c, std::string_view name, bool on) {
  if (name == "ordering") {
    c->length_aware = on;
  } else if (name == "slo-budget") {
    c->slo_aware = on;
  } else if (name == "admission") {
    c->admit_after_preemption = on;
    c->growth_reserve = on;
  } else if (name == "pareto-cap") {
    c->pareto_cap = on;
  } else if (name == "controller") {
    c->feedback_controller = on;
  } else if (name == "kv-tiers") {
    c->kv_tiers = on;
  } else {
    return InvalidArgumentError(fmt::format("unknown mechanism '{}'", name));
  }
  return Status::Ok();
}

bool MechanismOn(const ContinuousConfig& c, std::string_view name) {
  if (name == "ordering") return c.length_aware;
  if (name == "slo-budget") return c.slo_aware;
  if (name == "admission") return c.admit_after_preemption && c.growth_reserve;
  if (name == "pareto-cap") return c.pareto_cap;
  if (name == "controller") return c.feedback_controller;
  if (name == "kv-tiers") return c.kv_tiers;
  return false;
}

// Seedance's defaults: the lossless mechanisms the ablation on the tuning trace keeps
// (docs/BENCHMARKS.md "Batching ablation"). The S5.4 controller is off: on the conversation
// trace its SM/DRAM score never leaves the 0.65..0.92 band at the rates that matter, so it
// changes no decision; the lossy KV tiers are only in seedance-kvtiers.
ContinuousConfig PolicySettings::SeedanceDefaults() {
  ContinuousConfig c;
  c.qos_priority = true;
  c.fairness = true;
  c.length_aware = true;
  c.slo_aware = true;
  c.admit_after_preemption = true;
  c.growth_reserve = true;
  c.pareto_cap = true;
  c.feedback_controller = false;
  c.kv_tiers = false;
  return c;
}

int DefaultBlockSize(std::string_view policy) { return policy == "vllm" ? 16 : 64; }

Result<std::unique_ptr<Scheduler>> MakeScheduler(std::string_view policy,
                                                 const PolicySettings& settings,
                                                 const Executor* executor,
                                                 std::vector<RequestRecord>* records) {
  SEEDANCE_CHECK(records != nullptr);
  EngineConfig e = settings.engine;
  if (e.block_size == 0) e.block_size = DefaultBlockSize(policy);
  if (e.block_size < 1 || e.kv_bytes_per_token <= 0 || e.max_context < 1) {
    return InvalidArgumentError("engine: block_size, kv_bytes_per_token and max_context must be > 0");
  }
  if (policy == "static" || policy == "static-bucketed") {
    StaticConfig c = settings.static_batching;
    c.bucketed = policy == "static-bucketed";
    if (c.max_batch < 1) return InvalidArgumentError("static: max_batch must be >= 1");
    return internal::MakeStaticScheduler(e, c, records);
  }
  if (policy == "triton") {
    const TritonConfig& c = settings.triton;
    if (c.max_batch < 1 || c.max_queue_delay_microseconds < 0 || c.priority_levels < 1) {
      return InvalidArgumentError("triton: max_batch and priority_levels must be >= 1, delay >= 0");
    }
    for (int p : c.preferred_batch_size) {
      if (p < 1 || p > c.max_batch) {
        return InvalidArgumentError(
            fmt::format("triton: preferred_batch_size {} outside 1..max_batch", p));
      }
    }
    return internal::MakeTritonScheduler(e, c, records);
  }
  if (policy == "vllm" || policy == "seedance" || policy == "seedance-kvtiers") {
    ContinuousConfig c = policy == "vllm" ? settings.vllm : settings.seedance;
    if (policy == "seedance-kvtiers") c.kv_tiers = true;
    if (e.kv_bits != 16 && e.kv_bits != 8) {
      return InvalidArgumentError(fmt::format("kv_bits {}: expected 16 or 8", e.kv_bits));
    }
    if (c.max_num_seqs < 1 || c.max_num_batched_tokens < 1) {
      return InvalidArgumentError(
          fmt::format("{}: max_num_seqs and max_num_batched_tokens must be >= 1", policy));
    }
    return internal::MakeContinuousScheduler(policy, e, c, executor, records);
  }
  std::string names;
  for (const auto& n : PolicyNames()) names += (names.empty() ? "" : ", ") + n;
  return InvalidArgumentError(fmt::format("unknown policy '{}' (accepted: {})", policy, names));
}

}  // namespace seedance::batching
