#include "seedance/planner/allocation.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "seedance/sim/lp.h"

namespace seedance::planner {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool Eligible(const GpuOption& g, std::size_t b) { return g.tputs[b] > 0; }

Status Validate(const AllocationProblem& p) {
  if (p.slice_factor < 1) {
    return InvalidArgumentError(fmt::format("slice_factor must be >= 1 (got {})", p.slice_factor));
  }
  if (p.gpus.empty()) return InvalidArgumentError("no GPU option to allocate");
  for (std::size_t b = 0; b < p.rate.size(); ++b) {
    if (!std::isfinite(p.rate[b]) || p.rate[b] < 0) {
      return InvalidArgumentError(fmt::format("bucket {}: rate {} is not a finite value >= 0", b, p.rate[b]));
    }
  }
  for (const GpuOption& g : p.gpus) {
    if (g.tputs.size() != p.rate.size()) {
      return InvalidArgumentError(fmt::format("GPU {}: {} throughput entries for {} buckets", g.name,
                                              g.tputs.size(), p.rate.size()));
    }
    if (!std::isfinite(g.usd_per_hour) || g.usd_per_hour < 0) {
      return InvalidArgumentError(fmt::format("GPU {}: cost {} is not a finite value >= 0", g.name, g.usd_per_hour));
    }
    for (double t : g.tputs) {
      if (!std::isfinite(t) || t < 0) {
        return InvalidArgumentError(fmt::format("GPU {}: throughput {} is not a finite value >= 0", g.name, t));
      }
    }
  }
  std::string unserved;
  for (std::size_t b = 0; b < p.rate.size(); ++b) {
    if (p.rate[b] <= 0) continue;
    bool any = false;
    for (const GpuOption& g : p.gpus) any = any || Eligible(g, b);
    if (!any) {
      unserved += fmt::format("{}{} ({:.4g} req/s)", unserved.empty() ? "" : ", ",
                              b < p.bucket_names.size() ? p.bucket_names[b] : fmt::format("bucket {}", b),
                              p.rate[b]);
    }
  }
  if (!unserved.empty()) {
    return FailedPreconditionError("no GPU option meets the SLO for traffic in " + unserved);
  }
  return Status::Ok();
}

}  // namespace

Result<Allocation> SolveAllocation(const AllocationProblem& p) {
  SEEDANCE_RETURN_IF_ERROR(Validate(p));
  const std::size_t nb = p.rate.size(), ng = p.gpus.size();
  const double f = p.slice_factor;
  sim::LinearProgram lp(sim::LinearProgram::Sense::kMinimize);
  std::vector<int> n(ng);
  for (std::size_t g = 0; g < ng; ++g) {
    const GpuOption& o = p.gpus[g];
    n[g] = lp.AddColumn(o.usd_per_hour, 0, o.max_count < 0 ? kInf : o.max_count);
    lp.SetInteger(n[g]);
  }
  // y[b][g] in {0..F}: slices of bucket b on option g (identical slices aggregated).
  std::vector<std::vector<int>> y(nb, std::vector<int>(ng, -1));
  std::vector<std::vector<std::pair<int, double>>> capacity(ng);
  for (std::size_t b = 0; b < nb; ++b) {
    if (p.rate[b] <= 0) continue;
    std::vector<std::pair<int, double>> all;
    for (std::size_t g = 0; g < ng; ++g) {
      if (!Eligible(p.gpus[g], b)) continue;
      y[b][g] = lp.AddColumn(0, 0, f);
      lp.SetInteger(y[b][g]);
      all.emplace_back(y[b][g], 1.0);
      capacity[g].emplace_back(y[b][g], p.rate[b] / (f * p.gpus[g].tputs[b]));
    }
    lp.AddRow(all, f, f);
  }
  for (std::size_t g = 0; g < ng; ++g) {
    auto terms = capacity[g];
    terms.emplace_back(n[g], -1.0);
    lp.AddRow(terms, -kInf, kLoadEpsilon);
  }
  // N-1 spot reserve: without spot option k, a fluid re-split of every bucket must fit.
  std::vector<int> lost;
  std::vector<std::vector<std::vector<int>>> z;
  if (p.spot_reserve) {
    for (std::size_t k = 0; k < ng; ++k) {
      if (!p.gpus[k].spot) continue;
      lost.push_back(static_cast<int>(k));
      auto& zk = z.emplace_back(nb, std::vector<int>(ng, -1));
      std::vector<std::vector<std::pair<int, double>>> cap(ng);
      for (std::size_t b = 0; b < nb; ++b) {
        if (p.rate[b] <= 0) continue;
        std::vector<std::pair<int, double>> all;
        for (std::size_t g = 0; g < ng; ++g) {
          if (g == k || !Eligible(p.gpus[g], b)) continue;
          zk[b][g] = lp.AddColumn(0, 0, kInf);
          all.emplace_back(zk[b][g], 1.0);
          cap[g].emplace_back(zk[b][g], 1.0 / p.gpus[g].tputs[b]);
        }
        if (all.empty()) {
          return FailedPreconditionError(fmt::format(
              "spot reserve: only spot option {} serves {}; add an on-demand type that meets the SLO",
              p.gpus[k].name, b < p.bucket_names.size() ? p.bucket_names[b] : fmt::format("bucket {}", b)));
        }
        lp.AddRow(all, p.rate[b], p.rate[b]);
      }
      for (std::size_t g = 0; g < ng; ++g) {
        if (g == k || cap[g].empty()) continue;
        auto terms = cap[g];
        terms.emplace_back(n[g], -1.0);
        lp.AddRow(terms, -kInf, kLoadEpsilon);
      }
    }
  }
  const Status st = lp.SolveInteger();
  if (!st.ok()) {
    if (st.code() == StatusCode::kFailedPrecondition) {
      return FailedPreconditionError("no allocation fits the GPU count limits");
    }
    return st;
  }
  Allocation a;
  a.count.assign(ng, 0);
  a.load.assign(ng, 0);
  a.slices.assign(nb, std::vector<int>(ng, 0));
  for (std::size_t g = 0; g < ng; ++g) {
    a.count[g] = static_cast<int>(std::lround(lp.value(n[g])));
    a.usd_per_hour += a.count[g] * p.gpus[g].usd_per_hour;
  }
  for (std::size_t b = 0; b < nb; ++b) {
    for (std::size_t g = 0; g < ng; ++g) {
      if (y[b][g] < 0) continue;
      a.slices[b][g] = static_cast<int>(std::lround(lp.value(y[b][g])));
      a.load[g] += a.slices[b][g] * p.rate[b] / (f * p.gpus[g].tputs[b]);
    }
  }
  for (std::size_t i = 0; i < lost.size(); ++i) {
    auto& out = a.failover.emplace_back(nb, std::vector<double>(ng, 0.0));
    a.failover_option.push_back(lost[i]);
    for (std::size_t b = 0; b < nb; ++b) {
      for (std::size_t g = 0; g < ng; ++g) {
        if (z[i][b][g] >= 0) out[b][g] = std::max(0.0, lp.value(z[i][b][g]));
      }
    }
  }
  return a;
}

std::vector<SingleType> SingleTypeBaselines(const AllocationProblem& p) {
  std::vector<SingleType> out;
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    SingleType s;
    s.option = static_cast<int>(g);
    s.feasible = true;
    for (std::size_t b = 0; b < p.rate.size(); ++b) {
      if (p.rate[b] <= 0) continue;
      if (!Eligible(p.gpus[g], b)) {
        s.feasible = false;
        continue;
      }
      s.load += p.rate[b] / p.gpus[g].tputs[b];
    }
    if (s.feasible) {
      s.count = static_cast<int>(std::ceil(s.load - kLoadEpsilon));
      s.usd_per_hour = s.count * p.gpus[g].usd_per_hour;
    }
    out.push_back(s);
  }
  return out;
}

const SingleType* BestSingle(const std::vector<SingleType>& baselines) {
  const SingleType* best = nullptr;
  for (const SingleType& s : baselines) {
    if (s.feasible && (best == nullptr || s.usd_per_hour < best->usd_per_hour - 1e-12)) best = &s;
  }
  return best;
}

double FluidLowerBound(const AllocationProblem& p) {
  double total = 0;
  for (std::size_t b = 0; b < p.rate.size(); ++b) {
    if (p.rate[b] <= 0) continue;
    double best = kInf;
    for (const GpuOption& g : p.gpus) {
      if (Eligible(g, b)) best = std::min(best, g.usd_per_hour / g.tputs[b]);
    }
    if (std::isfinite(best)) total += p.rate[b] * best;
  }
  return total;
}

}  // namespace seedance::planner
