#pragma once

#include <span>
#include <vector>

namespace seedance::tenancy {

// Jain's fairness index of x (>= 0): (sum x)^2 / (n sum x^2), 1 = equal; 1 for an empty or
// all-zero input.
double JainIndex(std::span<const double> x);

// Max-min fair shares (water-filling) of `capacity` among tenants with `demand` and `weight`
// (> 0): each gets weight-proportional shares, never more than it demands, leftovers are
// re-filled among the rest. Returns the allocation per tenant (sums to min(capacity, sum demand)).
std::vector<double> WaterFill(double capacity, std::span<const double> demand, std::span<const double> weight);

// S4.5 fairness compensation: the ordering weight from a tenant's historical deviation from its
// fair share, `deviation` = (attained - fair) / fair (e.g. -0.123 = 12.3% under-served). Linear
// through the seed's two points (-12.3% -> +0.18, +5.7% -> -0.07): gain 1.46 when under-served,
// 1.23 when over-served, clamped to [-0.5, 0.5].
double CompensationWeight(double deviation);

// FairShareTracker: integrates, per tenant, the GPU-time it held and the GPU-time its max-min fair
// share (WaterFill of the capacity over demands, weights = nominal quotas) would have given it,
// over a trailing window (exponential decay with time constant `window_s`). Fed by the driver
// at every state change with piecewise-constant demand and allocation.
class FairShareTracker {
 public:
  FairShareTracker(std::vector<double> weights, double window_s);
  // The interval [t0, t1) had these demands and allocations (GPUs) on `capacity` GPUs.
  void Advance(double t0, double t1, double capacity, std::span<const double> demand, std::span<const double> held);
  // (attained - fair) / fair over the window; 0 when the fair share is ~0.
  double Deviation(int tenant) const;
  // Totals over the whole run (no decay), for the report.
  const std::vector<double>& total_fair() const { return total_fair_; }
  const std::vector<double>& total_held() const { return total_held_; }

 private:
  std::vector<double> weights_;
  double window_s_;
  std::vector<double> fair_, held_, total_fair_, total_held_;
};

}  // namespace seedance::tenancy
