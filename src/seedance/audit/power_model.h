#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::audit {

// The power model of S7.5: P = a·SM activity + b·integer-op ratio + c·memory bandwidth + d,
// fitted by least squares per GPU model. `d` (idle power) is not in the seed's formula; a GPU
// draws it at zero activity, and leaving it out biases a, b and c. Features are ratios 0..1
// (DCGM_FI_PROF_SM_ACTIVE, _PIPE_INT_ACTIVE, _DRAM_ACTIVE), power in W.
inline constexpr int kPowerFeatures = 3;  // sm, int, dram (plus the intercept)

// Sufficient statistics of a least-squares problem with the 3 features plus an intercept:
// X'X, X'y, y'y and n. Adding samples and merging are exact, so a fleet's fit is the sum of its
// GPUs' accumulators (one pass over the data).
struct PowerAccumulator {
  std::array<double, 16> xtx{};  // 4x4 row-major, column 3 is the intercept
  std::array<double, 4> xty{};
  double yty = 0;
  double sum_y = 0;
  std::int64_t n = 0;

  void Add(double sm, double int_ratio, double dram, double power_w) {
    const double x[4] = {sm, int_ratio, dram, 1.0};
    for (int i = 0; i < 4; ++i) {
      for (int k = i; k < 4; ++k) xtx[static_cast<std::size_t>(i * 4 + k)] += x[i] * x[k];
      xty[static_cast<std::size_t>(i)] += x[i] * power_w;
    }
    yty += power_w * power_w;
    sum_y += power_w;
    ++n;
  }
  void Merge(const PowerAccumulator& o);
  void Subtract(const PowerAccumulator& o);
};

// A fitted model.
struct PowerFit {
  std::array<double, 4> coef{};  // a, b, c, d
  double r2 = 0;                 // coefficient of determination over the fitted samples
  double rmse_w = 0;             // root mean square residual, W
  std::int64_t samples = 0;
  // Which features had variance (a constant feature is dropped, its coefficient left 0).
  std::array<bool, kPowerFeatures> used{};

  double Predict(double sm, double int_ratio, double dram) const {
    return coef[0] * sm + coef[1] * int_ratio + coef[2] * dram + coef[3];
  }
};

// Solves the normal equations (Eigen LDLT on the scaled 4x4 system). Errors: kFailedPrecondition
// when there are fewer samples than unknowns or the power does not vary.
Result<PowerFit> FitPower(const PowerAccumulator& acc);

// Residual sum of squares of `fit` on the samples summarized by `acc` (exact, from the sums).
double ResidualSumOfSquares(const PowerFit& fit, const PowerAccumulator& acc);

}  // namespace seedance::audit
