#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "seedance/ledger/allocation.h"

namespace seedance::ledger {

// One GPU during one attribution step, as the in-memory engine sees it.
struct GpuStep {
  std::int64_t start_ms = 0;
  std::uint32_t node = 0;                 // dense node index
  std::uint32_t workload = kNoWorkload;   // dense workload id (> 0), or nobody
  std::int64_t request_milli = 0;         // 1000 for a whole GPU assigned to the workload
  std::int64_t usage_milli = 0;           // 1000 x GR_ENGINE_ACTIVE (or GPU_UTIL / 100)
  std::int64_t price_micro_per_hour = 0;  // the GPU's price
  bool overhead = false;                  // held by an overhead namespace
};

// StepAllocator: groups GPU steps into node intervals (same start, same node), prices each node
// interval (bill = sum of GPU prices x step, rounded half up to the micro-dollar) and splits it
// with AllocateNodeInterval. Not thread-safe; reuses its buffers across calls.
class StepAllocator {
 public:
  // `workload_weight_milli[id]` is the tenant weight of workload id (kByTenantWeight); may be
  // empty (all 1000). REQUIRES: step_ms > 0, 0 <= overhead_ppm < 1e6.
  StepAllocator(std::int64_t step_ms, IdleShare share, std::int64_t overhead_ppm,
                std::vector<std::int64_t> workload_weight_milli);

  using IntervalFn = std::function<void(const NodeInterval&, std::span<const Charge>)>;
  // Allocates `steps`, which must be sorted by (start_ms, node); calls `fn` once per node
  // interval with its charges (which sum to its bill).
  void Run(std::span<const GpuStep> steps, const IntervalFn& fn);

 private:
  std::int64_t step_ms_;
  IdleShare share_;
  std::int64_t overhead_ppm_;
  std::vector<std::int64_t> weights_;
  std::vector<GpuUse> uses_;
  std::vector<Charge> charges_;
};

}  // namespace seedance::ledger
