#include "seedance/ledger/step_allocator.h"

#include <algorithm>

namespace seedance::ledger {

StepAllocator::StepAllocator(std::int64_t step_ms, IdleShare share, std::int64_t overhead_ppm,
                             std::vector<std::int64_t> workload_weight_milli)
    : step_ms_(step_ms),
      share_(share),
      overhead_ppm_(overhead_ppm),
      weights_(std::move(workload_weight_milli)) {}

void StepAllocator::Run(std::span<const GpuStep> steps, const IntervalFn& fn) {
  std::size_t i = 0;
  while (i < steps.size()) {
    std::size_t j = i;
    std::int64_t price_sum = 0;
    uses_.clear();
    while (j < steps.size() && steps[j].start_ms == steps[i].start_ms &&
           steps[j].node == steps[i].node) {
      const GpuStep& g = steps[j];
      price_sum += g.price_micro_per_hour;
      if (g.workload != kNoWorkload) {
        auto it = std::find_if(uses_.begin(), uses_.end(),
                               [&](const GpuUse& u) { return u.workload == g.workload; });
        if (it == uses_.end()) {
          std::int64_t w = g.workload < weights_.size() ? weights_[g.workload] : 1000;
          uses_.push_back({g.workload, g.request_milli, g.usage_milli, w, g.overhead});
        } else {
          it->request_milli += g.request_milli;
          it->usage_milli += g.usage_milli;
        }
      }
      ++j;
    }
    NodeInterval n;
    n.start_ms = steps[i].start_ms;
    n.end_ms = n.start_ms + step_ms_;
    n.node = steps[i].node;
    // price (micro-USD per hour) x step (ms) / 3.6e6, rounded half up.
    n.bill = MicroUsd((price_sum * step_ms_ + 1'800'000) / 3'600'000);
    n.capacity_milli = static_cast<std::int64_t>(j - i) * 1000;
    n.overhead_milli = n.capacity_milli * overhead_ppm_ / 1'000'000;
    n.uses = uses_;
    charges_.clear();
    AllocateNodeInterval(n, share_, charges_);
    fn(n, charges_);
    i = j;
  }
}

}  // namespace seedance::ledger
