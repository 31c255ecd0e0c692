#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "seedance/core/rng.h"
#include "seedance/core/status.h"

namespace seedance::ledger {

// Three-factor apportionment of a shared resource (S6.5): C_i = α·t_i + β·b_i + γ·l_i, where for
// workload i on a shared node during an interval t_i is its time-slice share (max(request,
// usage) over the node's), b_i its memory-bandwidth share (DRAM active), l_i its interconnect
// share (PCIe + NVLink bytes). α, β, γ are fitted by least squares (no intercept) against an
// observed cost driver y_i, the workload's share of the node's power draw (energy is what the
// shared node spends on it).
struct ApportionObservation {
  double t = 0;
  double b = 0;
  double l = 0;
  double y = 0;
};

struct ApportionFit {
  double alpha = 0;
  double beta = 0;
  double gamma = 0;
  double r2 = 0;           // 1 - SS_res / SS_tot (SS_tot around the mean of y)
  std::size_t observations = 0;
  // Returns the fitted (unnormalized) share α·t + β·b + γ·l.
  double Predict(double t, double b, double l) const { return alpha * t + beta * b + gamma * l; }
};

// Fits α, β, γ (Eigen, column-pivoting Householder QR). Errors: kFailedPrecondition with fewer
// than 3 observations or a rank-deficient design (e.g. all shares identical).
Result<ApportionFit> FitApportionment(std::span<const ApportionObservation> obs);

// Monte Carlo sensitivity of a tenant attribution (S6.6). The quantity, one definition for the
// point and its interval (kMonteCarloQuantity): a tenant's cost with the unshared idle pool
// apportioned, Q_i(c, d, h) = (1−h)·[B_w · W_i c_i / Σ W_j c_j + I · share_i] + h·(B_w + I)·l_i/Σl,
// with B_w the workload total, I the idle pool and share_i = d·usage_i/Σusage + (1−d)·alloc_i/Σalloc.
// Per draw:
//   conversion c_i ~ U[0.85, 1.15] per tenant (usage-to-cost conversion, ±15%),
//   decay d ~ Normal(0.72, 0.15) clipped to [0, 1] (weight of measured usage vs allocation in
//     the sharing of idle),
//   hop h ~ Beta(8, 92) (fraction of the bill that is interconnect, apportioned by l_i; 0 when no
//     tenant has interconnect data).
// The point is Q_i at the parameters' nominal values (c_i = 1, d = 0.72, h = E[Beta(8,92)] = 0.08,
// or 0 without interconnect data): the same quantity as the interval, so it lies inside it; the
// ledger's own figure W_i (idle not apportioned) is reported beside it as `ledger_usd`. The draws
// conserve the total exactly in real arithmetic. Reports the mean and the 2.5 / 97.5 percentiles.
inline constexpr std::string_view kMonteCarloQuantity = "cost with idle apportioned";
struct TenantInput {
  std::string tenant;       // or any entity: namespace, job (the advisor's targets)
  double workload_usd = 0;  // W_i
  double usage = 0;         // measured GPU use (e.g. GPU-hours x utilization)
  double alloc = 0;         // allocated GPU-hours
  double interconnect = 0;  // interconnect bytes (or any share proxy); 0 = none
};
struct TenantInterval {
  std::string tenant;
  double ledger_usd = 0;  // W_i, the ledger's figure (idle not apportioned)
  double point_usd = 0;   // Q_i at the nominal parameters (kMonteCarloQuantity)
  double mean_usd = 0;    // mean of Q_i over the draws
  double p025_usd = 0;
  double p975_usd = 0;
  // The interval relative to the point (p025 / point, p975 / point); {1, 1} when point is 0.
  std::pair<double, double> RelativeInterval() const;
};
// REQUIRES: samples > 0. Deterministic for a seed.
std::vector<TenantInterval> MonteCarloIntervals(std::span<const TenantInput> tenants,
                                                double idle_usd, int samples, Rng& rng);

// Returns a Beta(a, b) variate (Marsaglia-Tsang gamma draws). REQUIRES: a, b > 0.
double SampleBeta(double a, double b, Rng& rng);

}  // namespace seedance::ledger
