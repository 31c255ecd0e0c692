#include "seedance/fleet/bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "seedance/sim/lp.h"

namespace seedance::fleet {

namespace {

// Serving work per deployment and bucket: the requests served within SLO in each of Mélange's
// buckets, at the smaller of the two profiles' shares (whichever batching served them, at least
// that many fell in the bucket), and one GPU-hour's requests of the bucket per fleet type at the
// faster of the two batchings.
struct BucketWork {
  double requests = 0;                 // served within SLO over the week
  std::vector<double> per_gpu_hour;    // [fleet type], 0 = the type cannot serve the bucket
};

Result<std::vector<BucketWork>> ServingWork(const FleetWeekScenario& s, std::size_t d, double mtok_in_slo) {
  const ServingDeployment& sd = s.serving[d];
  const ServingProfile* profiles[] = {&sd.vllm, &sd.seedance};
  const std::size_t buckets = sd.seedance.bucket_share.size();
  if (sd.vllm.bucket_share.size() != buckets || sd.vllm.bucket_names != sd.seedance.bucket_names) {
    return InternalError("deployment " + sd.spec.name + ": the vllm and seedance profiles have different buckets");
  }
  const double tokens = sd.demand.tokens_per_request;
  const double requests = tokens > 0 ? mtok_in_slo * 1e6 / tokens : 0.0;
  std::vector<BucketWork> work(buckets);
  for (std::size_t b = 0; b < buckets; ++b) {
    work[b].requests = requests * std::min(sd.vllm.bucket_share[b], sd.seedance.bucket_share[b]);
    work[b].per_gpu_hour.assign(s.fleet.gpu_types.size(), 0.0);
    for (std::size_t t = 0; t < s.fleet.gpu_types.size(); ++t) {
      for (const ServingProfile* p : profiles) {
        for (std::size_t g = 0; g < p->gpus.size(); ++g) {
          if (p->gpus[g] != s.fleet.gpu_types[t]) continue;
          work[b].per_gpu_hour[t] = std::max(work[b].per_gpu_hour[t], p->bucket_rps[g][b] * 3600.0 / p->tp[g]);
        }
      }
    }
  }
  return work;
}

}  // namespace

Result<double> FleetWeekLowerBoundUsd(const FleetWeekScenario& s, const FleetWeekOutcome& out) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::size_t types = s.fleet.gpu_types.size();
  const auto periods = static_cast<std::size_t>(std::ceil(s.horizon_s / kBoundPeriodS));
  sim::LinearProgram lp(sim::LinearProgram::Sense::kMinimize);
  // GPU-hours of each type used in each period, to be covered by the pools' GPU-hours there.
  // use[t][p] collects the work columns (coefficient -1); the pools' columns are added below.
  std::vector<std::vector<std::vector<std::pair<int, double>>>> use(types, std::vector<std::vector<std::pair<int, double>>>(periods));
  auto period_end = [&](std::size_t p) { return std::min(s.horizon_s, static_cast<double>(p + 1) * kBoundPeriodS); };

  // Training: jobs of one rate vector (PFLOP per GPU-hour on each type) are one class: the work of
  // a class's jobs is interchangeable in a fluid schedule. A class may do, by the end of period p,
  // at most the work of its jobs that arrived by then, on at most their GPUs at once.
  if (out.training_pflop > 0) {
    // Jobs whose rates agree within kBoundRateStep on every type share a class, at the highest
    // rate of its jobs on each type (optimistic: still a bound; far fewer columns).
    std::map<std::vector<long>, std::pair<std::vector<double>, std::vector<const TrainingJob*>>> classes;
    for (const TrainingJob& j : s.jobs) {
      std::vector<double> rate(types);
      std::vector<long> key(types, -1);
      for (std::size_t t = 0; t < types; ++t) {
        rate[t] = j.pflop_per_step * j.steps_per_s[t] * 3600.0 / j.gpus;
        if (rate[t] > 0) key[t] = std::lround(std::floor(std::log(rate[t]) / std::log1p(kBoundRateStep)));
      }
      auto& c = classes[key];
      if (c.first.empty()) c.first.assign(types, 0.0);
      for (std::size_t t = 0; t < types; ++t) c.first[t] = std::max(c.first[t], rate[t]);
      c.second.push_back(&j);
    }
    std::vector<std::pair<int, double>> total;
    for (const auto& [key, cls] : classes) {
      const std::vector<double>& rate = cls.first;
      const std::vector<const TrainingJob*>& jobs = cls.second;
      int prev = -1;  // the class's work done by the end of the previous period (a column)
      std::size_t next = 0;
      double arrived = 0, gpus = 0;
      for (std::size_t p = 0; p < periods; ++p) {
        for (; next < jobs.size() && jobs[next]->arrival_s < period_end(p); ++next) {
          arrived += jobs[next]->total_steps * jobs[next]->pflop_per_step;
          gpus += jobs[next]->gpus;
        }
        const int done = lp.AddColumn(0.0, 0.0, arrived);  // cumulative work by the end of p
        std::vector<std::pair<int, double>> step{{done, 1.0}}, gang;
        if (prev >= 0) step.push_back({prev, -1.0});
        for (std::size_t t = 0; t < types && gpus > 0; ++t) {
          if (rate[t] <= 0) continue;
          const int x = lp.AddColumn(0.0, 0.0, kInf);  // GPU-hours of type t in period p
          step.push_back({x, -rate[t]});
          gang.push_back({x, 1.0});
          use[t][p].push_back({x, -1.0});
        }
        lp.AddRow(step, 0.0, 0.0);
        if (!gang.empty()) lp.AddRow(gang, 0.0, gpus * (period_end(p) - static_cast<double>(p) * kBoundPeriodS) / 3600.0);
        prev = done;
      }
      total.push_back({prev, 1.0});
    }
    lp.AddRow(total, out.training_pflop, kInf);
  }

  // Serving: each deployment's requests within SLO per bucket (ServingWork), on any type at the
  // bucket's best rate, and in each period at most the requests demanded in it.
  for (std::size_t d = 0; d < s.serving.size(); ++d) {
    const double mtok = d < out.serving_mtok_in_slo_by_deployment.size() ? out.serving_mtok_in_slo_by_deployment[d] : 0.0;
    if (mtok <= 0) continue;
    SEEDANCE_ASSIGN_OR_RETURN(const std::vector<BucketWork> work, ServingWork(s, d, mtok));
    const Demand& dem = s.serving[d].demand;
    std::vector<double> demanded(periods, 0.0);
    for (std::size_t k = 0; k < dem.rps.size(); ++k) {
      const auto p = static_cast<std::size_t>(static_cast<double>(k) * dem.step_s / kBoundPeriodS);
      if (p < periods) demanded[p] += dem.rps[k] * dem.step_s;
    }
    // The largest buckets that hold kBoundServingShare of the requests; the smallest are left out
    // (less work: a weaker bound, still a bound, and a much smaller LP).
    std::vector<std::size_t> order(work.size());
    for (std::size_t b = 0; b < order.size(); ++b) order[b] = b;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return work[x].requests > work[y].requests; });
    double all = 0, kept = 0;
    for (const BucketWork& w : work) all += w.requests;
    std::vector<std::vector<std::pair<int, double>>> per_period(periods);
    for (std::size_t b : order) {
      const BucketWork& w = work[b];
      if (w.requests <= 0 || kept >= kBoundServingShare * all) continue;
      kept += w.requests;
      std::vector<std::pair<int, double>> served;
      for (std::size_t p = 0; p < periods; ++p) {
        if (demanded[p] <= 0) continue;
        for (std::size_t t = 0; t < types; ++t) {
          if (w.per_gpu_hour[t] <= 0) continue;
          const int y = lp.AddColumn(0.0, 0.0, kInf);
          served.push_back({y, w.per_gpu_hour[t]});
          per_period[p].push_back({y, w.per_gpu_hour[t]});
          use[t][p].push_back({y, -1.0});
        }
      }
      if (served.empty()) return InternalError("the fleet has no GPU type for a bucket of deployment " + s.serving[d].spec.name);
      lp.AddRow(served, w.requests, kInf);
    }
    for (std::size_t p = 0; p < periods; ++p) {
      if (!per_period[p].empty()) lp.AddRow(per_period[p], 0.0, demanded[p] * (1 + 1e-9));
    }
  }

  // Notebooks: hours in use, one GPU of any type, no earlier than their sessions begin (a session
  // in use for a while after it begins: by the end of p at most the in-use hours of the sessions
  // begun by then).
  if (out.dev_active_gpu_hours > 0) {
    int prev = -1;
    std::size_t next = 0;
    double arrived = 0;
    for (std::size_t p = 0; p < periods; ++p) {
      // (+ one clock step each: the engine ends an active period at the step after it is over)
      for (; next < s.dev.size() && s.dev[next].arrival_s < period_end(p); ++next) {
        arrived += (s.dev[next].active_s + kStepS) / 3600.0;
      }
      const int done = lp.AddColumn(0.0, 0.0, arrived);
      std::vector<std::pair<int, double>> step{{done, 1.0}};
      if (prev >= 0) step.push_back({prev, -1.0});
      for (std::size_t t = 0; t < types; ++t) {
        const int x = lp.AddColumn(0.0, 0.0, kInf);
        step.push_back({x, -1.0});
        use[t][p].push_back({x, -1.0});
      }
      lp.AddRow(step, 0.0, 0.0);
      prev = done;
    }
    lp.AddRow({{prev, 1.0}}, out.dev_active_gpu_hours, kInf);
  }

  // The pools: each period's GPU-hours at the period's lowest price (committed pools: 0, their bill
  // is paid whatever runs) and capacity (spot: the availability series' mean over the period).
  double committed = 0;
  for (const sim::PoolSpec& pool : s.fleet.pools) {
    const bool held = sim::AlwaysHeld(pool.tier);
    if (held) committed += pool.max_gpus * s.horizon_s / 3600.0 * pool.usd_per_gpu_hour;
    const auto t = static_cast<std::size_t>(pool.type);
    for (std::size_t p = 0; p < periods; ++p) {
      if (use[t][p].empty()) continue;
      double capacity_h = 0, price = kInf;
      for (double x = static_cast<double>(p) * kBoundPeriodS; x < period_end(p); x += kStepS) {
        const double gpus = pool.tier == sim::Tier::kSpot && !pool.spot.empty() ? std::min(pool.max_gpus, pool.spot.AvailableAt(x))
                                                                                : pool.max_gpus;
        capacity_h += gpus * kStepS / 3600.0;
        price = std::min(price, pool.PriceAt(x));
      }
      if (held || !std::isfinite(price)) price = 0.0;
      use[t][p].push_back({lp.AddColumn(price, 0.0, capacity_h), 1.0});
    }
  }
  for (std::size_t t = 0; t < types; ++t) {
    for (std::size_t p = 0; p < periods; ++p) {
      if (!use[t][p].empty()) lp.AddRow(use[t][p], 0.0, kInf);
    }
  }
  SEEDANCE_RETURN_IF_ERROR(lp.Solve());
  return committed + lp.objective();
}

}  // namespace seedance::fleet
