#include "seedance/audit/power_model.h"

#include <Eigen/Dense>
#include <cmath>
#include <vector>

namespace seedance::audit {

void PowerAccumulator::Merge(const PowerAccumulator& o) {
  for (std::size_t i = 0; i < xtx.size(); ++i) xtx[i] += o.xtx[i];
  for (std::size_t i = 0; i < xty.size(); ++i) xty[i] += o.xty[i];
  yty += o.yty;
  sum_y += o.sum_y;
  n += o.n;
}

void PowerAccumulator::Subtract(const PowerAccumulator& o) {
  for (std::size_t i = 0; i < xtx.size(); ++i) xtx[i] -= o.xtx[i];
  for (std::size_t i = 0; i < xty.size(); ++i) xty[i] -= o.xty[i];
  yty -= o.yty;
  sum_y -= o.sum_y;
  n -= o.n;
}

namespace {

Eigen::Matrix4d FullXtx(const PowerAccumulator& acc) {
  Eigen::Matrix4d m;
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < 4; ++k) {
      const int a = std::min(i, k), b = std::max(i, k);
      m(i, k) = acc.xtx[static_cast<std::size_t>(a * 4 + b)];
    }
  }
  return m;
}

}  // namespace

double ResidualSumOfSquares(const PowerFit& fit, const PowerAccumulator& acc) {
  const Eigen::Matrix4d xtx = FullXtx(acc);
  Eigen::Vector4d beta(fit.coef[0], fit.coef[1], fit.coef[2], fit.coef[3]);
  Eigen::Vector4d xty(acc.xty[0], acc.xty[1], acc.xty[2], acc.xty[3]);
  const double rss = acc.yty - 2.0 * beta.dot(xty) + beta.dot(xtx * beta);
  return std::max(0.0, rss);
}

Result<PowerFit> FitPower(const PowerAccumulator& acc) {
  if (acc.n < 8) {
    return FailedPreconditionError("power model: " + std::to_string(acc.n) +
                                   " samples, at least 8 are needed");
  }
  const double n = static_cast<double>(acc.n);
  const double mean_y = acc.sum_y / n;
  const double sst = acc.yty - n * mean_y * mean_y;
  if (!(sst > 1e-9 * std::max(1.0, acc.yty))) {
    return FailedPreconditionError("power model: the power does not vary");
  }
  const Eigen::Matrix4d xtx = FullXtx(acc);
  PowerFit fit;
  fit.samples = acc.n;
  // Keep the features with variance (a feature the telemetry lacks is all zero).
  std::vector<int> cols;
  for (int f = 0; f < kPowerFeatures; ++f) {
    const double mean = xtx(f, 3) / n;
    const double var = xtx(f, f) / n - mean * mean;
    fit.used[static_cast<std::size_t>(f)] = var > 1e-12;
    if (var > 1e-12) cols.push_back(f);
  }
  cols.push_back(3);
  const auto m = static_cast<Eigen::Index>(cols.size());
  Eigen::MatrixXd a(m, m);
  Eigen::VectorXd b(m);
  for (Eigen::Index i = 0; i < m; ++i) {
    b(i) = acc.xty[static_cast<std::size_t>(cols[static_cast<std::size_t>(i)])];
    for (Eigen::Index k = 0; k < m; ++k) {
      a(i, k) = xtx(cols[static_cast<std::size_t>(i)], cols[static_cast<std::size_t>(k)]);
    }
  }
  // Jacobi scaling keeps the system well conditioned when features differ in scale.
  Eigen::VectorXd d = a.diagonal().cwiseSqrt().cwiseInverse();
  const Eigen::MatrixXd as = d.asDiagonal() * a * d.asDiagonal();
  Eigen::LDLT<Eigen::MatrixXd> ldlt(as);
  if (ldlt.info() != Eigen::Success) {
    return FailedPreconditionError("power model: singular system");
  }
  const Eigen::VectorXd beta = d.asDiagonal() * ldlt.solve(d.asDiagonal() * b);
  for (Eigen::Index i = 0; i < m; ++i) {
    fit.coef[static_cast<std::size_t>(cols[static_cast<std::size_t>(i)])] = beta(i);
  }
  const double rss = ResidualSumOfSquares(fit, acc);
  fit.r2 = 1.0 - rss / sst;
  fit.rmse_w = std::sqrt(rss / n);
  return fit;
}

}  // namespace seedance::audit
