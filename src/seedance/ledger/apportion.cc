#include "seedance/ledger/apportion.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace seedance::ledger {
namespace {

// Marsaglia & Tsang (2000) for shape >= 1; boosted for shape < 1.
double SampleGamma(double shape, Rng& rng) {
  if (shape < 1.0) {
    double u = rng.UniformDouble();
    return SampleGamma(shape + 1.0, rng) * std::pow(std::max(u, 1e-300), 1.0 / shape);
  }
  double d = shape - 1.0 / 3.0;
  double c = 1.0 / std::sqrt(9.0 * d);
  while (true) {
    double x = rng.Normal();
    double v = 1.0 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = rng.UniformDouble();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(std::max(u, 1e-300)) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

double Percentile(std::vector<double>& v, double p) {
  std::sort(v.begin(), v.end());
  double pos = p * static_cast<double>(v.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  std::size_t hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] * (1 - frac) + v[hi] * frac;
}

}  // namespace

double SampleBeta(double a, double b, Rng& rng) {
  double x = SampleGamma(a, rng);
  double y = SampleGamma(b, rng);
  return x / (x + y);
}

Result<ApportionFit> FitApportionment(std::span<const ApportionObservation> obs) {
  if (obs.size() < 3) {
    return FailedPreconditionError("apportionment fit needs at least 3 observations, got " +
                                   std::to_string(obs.size()));
  }
  const auto n = static_cast<Eigen::Index>(obs.size());
  Eigen::MatrixXd x(n, 3);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const ApportionObservation& o = obs[static_cast<std::size_t>(i)];
    x(i, 0) = o.t;
    x(i, 1) = o.b;
    x(i, 2) = o.l;
    y(i) = o.y;
  }
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(x);
  if (qr.rank() < 3) {
    return FailedPreconditionError("apportionment design is rank-deficient (rank " +
                                   std::to_string(qr.rank()) +
                                   "): the three shares do not vary independently");
  }
  Eigen::VectorXd coef = qr.solve(y);
  Eigen::VectorXd resid = y - x * coef;
  double mean = y.mean();
  double ss_tot = (y.array() - mean).square().sum();
  double ss_res = resid.squaredNorm();
  ApportionFit f;
  f.alpha = coef(0);
  f.beta = coef(1);
  f.gamma = coef(2);
  f.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 0.0;
  f.observations = obs.size();
  return f;
}

std::pair<double, double> TenantInterval::RelativeInterval() const {
  if (point_usd == 0) return {1.0, 1.0};
  return {p025_usd / point_usd, p975_usd / point_usd};
}

namespace {

// Q_i(c, d, h) for every tenant (see kMonteCarloQuantity), written into `out`.
struct McTotals {
  double w = 0, usage = 0, alloc = 0, l = 0;
};
void QuantityForDraw(std::span<const TenantInput> tenants, const McTotals& tot, double idle_usd,
                     std::span<const double> conv, double d, double h, std::vector<double>& out) {
  double cw = 0;
  for (std::size_t i = 0; i < tenants.size(); ++i) cw += tenants[i].workload_usd * conv[i];
  out.resize(tenants.size());
  for (std::size_t i = 0; i < tenants.size(); ++i) {
    const TenantInput& t = tenants[i];
    double w = cw > 0 ? tot.w * t.workload_usd * conv[i] / cw : 0.0;
    double u = tot.usage > 0 ? t.usage / tot.usage : 0.0;
    double a = tot.alloc > 0 ? t.alloc / tot.alloc : 0.0;
    double idle = idle_usd * (d * u + (1.0 - d) * a);
    double hop = tot.l > 0 ? (tot.w + idle_usd) * t.interconnect / tot.l : 0.0;
    out[i] = (1.0 - h) * (w + idle) + h * hop;
  }
}

}  // namespace

std::vector<TenantInterval> MonteCarloIntervals(std::span<const TenantInput> tenants,
                                                double idle_usd, int samples, Rng& rng) {
  const std::size_t k = tenants.size();
  McTotals tot;
  for (const TenantInput& t : tenants) {
    tot.w += t.workload_usd;
    tot.usage += t.usage;
    tot.alloc += t.alloc;
    tot.l += t.interconnect;
  }
  constexpr double kDecayMean = 0.72;
  constexpr double kHopMean = 8.0 / (8.0 + 92.0);  // E[Beta(8, 92)]
  std::vector<std::vector<double>> draws(k, std::vector<double>(static_cast<std::size_t>(samples)));
  std::vector<double> conv(k);
  std::vector<double> q;
  for (int s = 0; s < samples; ++s) {
    for (std::size_t i = 0; i < k; ++i) conv[i] = 0.85 + 0.30 * rng.UniformDouble();
    double d = std::clamp(kDecayMean + 0.15 * rng.Normal(), 0.0, 1.0);
    double h = tot.l > 0 ? SampleBeta(8.0, 92.0, rng) : 0.0;
    QuantityForDraw(tenants, tot, idle_usd, conv, d, h, q);
    for (std::size_t i = 0; i < k; ++i) draws[i][static_cast<std::size_t>(s)] = q[i];
  }
  std::fill(conv.begin(), conv.end(), 1.0);
  std::vector<double> point;
  QuantityForDraw(tenants, tot, idle_usd, conv, kDecayMean, tot.l > 0 ? kHopMean : 0.0, point);
  std::vector<TenantInterval> out;
  for (std::size_t i = 0; i < k; ++i) {
    TenantInterval ti;
    ti.tenant = tenants[i].tenant;
    ti.ledger_usd = tenants[i].workload_usd;
    ti.point_usd = point[i];
    double sum = 0;
    for (double v : draws[i]) sum += v;
    ti.mean_usd = sum / samples;
    ti.p025_usd = Percentile(draws[i], 0.025);
    ti.p975_usd = Percentile(draws[i], 0.975);
    out.push_back(std::move(ti));
  }
  return out;
}

}  // namespace seedance::ledger
