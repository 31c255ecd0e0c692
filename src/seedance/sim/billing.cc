#include "seedance/sim/billing.h"

#include <algorithm>

namespace seedance::sim {

Billing::Billing(const FleetSpec& fleet, const SimOptions& options, SimResult* result)
    : fleet_(fleet), options_(options), res_(result), pool_uses_(fleet.pools.size()) {}

void Billing::AddUtil(double t0, double t1, double held, double busy) {
  const double b = options_.utilization_bucket_s;
  while (t0 < t1) {
    auto k = static_cast<std::size_t>(t0 / b);
    double end = std::min(t1, (static_cast<double>(k) + 1) * b);
    if (util_held_.size() <= k) {
      util_held_.resize(k + 1, 0);
      util_busy_.resize(k + 1, 0);
    }
    util_held_[k] += held * (end - t0);
    util_busy_[k] += busy * (end - t0);
    t0 = end;
  }
}

void Billing::BillHeld(const Capacity& capacity, double t0, double t1) {
  if (t1 <= t0) return;
  double held_total = 0;
  for (std::size_t p = 0; p < fleet_.pools.size(); ++p) {
    const PoolSpec& spec = fleet_.pools[p];
    // Owned pools not committed are billed by use (engine.cc); always-held GPUs count as held in
    // AddOwnedRound.
    if (AlwaysHeld(spec.tier) && !spec.committed) continue;
    const int held = capacity.held(p);
    if (!AlwaysHeld(spec.tier)) held_total += held;
    if (held == 0) continue;
    // At the price in force at each instant (a spot price series integrated over the interval).
    double usd = spec.Usd(held, t0, t1);
    res_->cost_by_pool_usd[p] += usd;
    res_->gpu_cost_usd += usd;
    res_->idle_held_usd += spec.Usd(held - capacity.in_use(p), t0, t1);
    double boot_s = 0;
    for (double r : capacity.booting(p)) boot_s += std::max(0.0, std::min(r, t1) - t0);
    res_->cold_start_idle_usd += fleet_.ColdStartIdleUsd(boot_s);
    if (options_.on_pool_interval) {
      PoolInterval iv{static_cast<int>(p), t0, t1, held, spec.MeanPriceOver(t0, t1), pool_uses_[p]};
      options_.on_pool_interval(iv);
    }
  }
  res_->held_gpu_seconds += held_total * (t1 - t0);
  AddUtil(t0, t1, held_total, 0);
}

void Billing::AddUse(std::size_t p, std::int64_t job_id, const std::string& tenant, double gpu_s) {
  pool_uses_[p].push_back(PoolUse{job_id, tenant, gpu_s});
}

void Billing::ClearUses() {
  for (auto& u : pool_uses_) u.clear();
}

void Billing::AddOwnedRound(double owned_gpus, double t0, double t1, double busy_gpu_s) {
  // Owned capacity counts as held; the round's busy GPU-seconds are spread evenly over it.
  res_->held_gpu_seconds += owned_gpus * (t1 - t0);
  AddUtil(t0, t1, owned_gpus, busy_gpu_s / (t1 - t0));
}

void Billing::Finish() {
  for (std::size_t k = 0; k < util_held_.size(); ++k) {
    double b = options_.utilization_bucket_s;
    res_->utilization.push_back(
        UtilizationPoint{static_cast<double>(k) * b, util_held_[k] / b, util_busy_[k] / b});
  }
}

}  // namespace seedance::sim
