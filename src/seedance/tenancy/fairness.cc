#include "seedance/tenancy/fairness.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace seedance::tenancy {

double JainIndex(std::span<const double> x) {
  double s = 0, s2 = 0;
  for (double v : x) {
    s += v;
    s2 += v * v;
  }
  if (x.empty() || s2 <= 0) return 1.0;
  return s * s / (static_cast<double>(x.size()) * s2);
}

std::vector<double> WaterFill(double capacity, std::span<const double> demand, std::span<const double> weight) {
  const std::size_t n = demand.size();
  std::vector<double> alloc(n, 0.0);
  std::vector<bool> open(n);
  for (std::size_t i = 0; i < n; ++i) open[i] = demand[i] > 0;
  double left = capacity;
  // Raise every open tenant's level (allocation per unit weight) together until the capacity is
  // gone or the lowest unmet demand is reached; close the tenants that are met. At most n passes.
  for (std::size_t pass = 0; pass < n && left > 1e-12; ++pass) {
    double wsum = 0, min_need = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
      if (!open[i]) continue;
      wsum += weight[i];
      min_need = std::min(min_need, (demand[i] - alloc[i]) / weight[i]);
    }
    if (wsum <= 0) break;
    const double level = left / wsum;
    const double step = std::min(level, min_need);
    for (std::size_t i = 0; i < n; ++i) {
      if (!open[i]) continue;
      alloc[i] += step * weight[i];
      left -= step * weight[i];
      if (demand[i] - alloc[i] <= 1e-9) open[i] = false;
    }
    if (step >= level) break;
  }
  return alloc;
}

double CompensationWeight(double deviation) {
  const double w = deviation < 0 ? -1.46 * deviation : -1.23 * deviation;
  return std::clamp(w, -0.5, 0.5);
}

FairShareTracker::FairShareTracker(std::vector<double> weights, double window_s)
    : weights_(std::move(weights)), window_s_(window_s) {
  const std::size_t n = weights_.size();
  fair_.assign(n, 0);
  held_.assign(n, 0);
  total_fair_.assign(n, 0);
  total_held_.assign(n, 0);
}

void FairShareTracker::Advance(double t0, double t1, double capacity, std::span<const double> demand,
                               std::span<const double> held) {
  const double dt = t1 - t0;
  if (dt <= 0) return;
  const auto fair = WaterFill(capacity, demand, weights_);
  const double decay = std::exp(-dt / window_s_);
  for (std::size_t i = 0; i < weights_.size(); ++i) {
    fair_[i] = fair_[i] * decay + fair[i] * dt;
    held_[i] = held_[i] * decay + held[i] * dt;
    total_fair_[i] += fair[i] * dt;
    total_held_[i] += held[i] * dt;
  }
}

double FairShareTracker::Deviation(int tenant) const {
  const auto i = static_cast<std::size_t>(tenant);
  if (fair_[i] < 1e-6) return 0.0;
  return (held_[i] - fair_[i]) / fair_[i];
}

}  // namespace seedance::tenancy
