#include "seedance/fleet/bound.h"

#include <algorithm>
#include <limits>
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
  const double week_h = s.horizon_s / 3600.0;
  sim::LinearProgram lp(sim::LinearProgram::Sense::kMinimize);
  // Kinds of work: training, each (deployment, bucket), notebooks; each with its demand and its
  // rate per GPU-hour on each fleet type.
  std::vector<double> demand{out.training_pflop};
  std::vector<std::vector<double>> rate;
  std::vector<double> train_rate(s.fleet.gpu_types.size(), 0.0);
  for (std::size_t t = 0; t < train_rate.size(); ++t) {
    for (const TrainingJob& j : s.jobs) {
      train_rate[t] = std::max(train_rate[t], j.pflop_per_step * j.steps_per_s[t] * 3600.0 / j.gpus);
    }
  }
  rate.push_back(train_rate);
  for (std::size_t d = 0; d < s.serving.size(); ++d) {
    const double mtok = d < out.serving_mtok_in_slo_by_deployment.size() ? out.serving_mtok_in_slo_by_deployment[d] : 0.0;
    SEEDANCE_ASSIGN_OR_RETURN(std::vector<BucketWork> work, ServingWork(s, d, mtok));
    for (BucketWork& w : work) {
      demand.push_back(w.requests);
      rate.push_back(std::move(w.per_gpu_hour));
    }
  }
  demand.push_back(out.dev_active_gpu_hours);
  rate.emplace_back(s.fleet.gpu_types.size(), 1.0);
  const std::size_t kinds = demand.size();
  std::vector<std::vector<std::pair<int, double>>> work_rows(kinds);
  double committed = 0;
  for (const sim::PoolSpec& p : s.fleet.pools) {
    const bool held = sim::AlwaysHeld(p.tier);
    double capacity_h = 0, mean_price = 0;
    for (double t = 0; t < s.horizon_s; t += kStepS) {
      const double gpus = p.tier == sim::Tier::kSpot && !p.spot.empty() ? std::min(p.max_gpus, p.spot.AvailableAt(t)) : p.max_gpus;
      capacity_h += gpus * kStepS / 3600.0;
      mean_price += p.PriceAt(t) * kStepS / s.horizon_s;
    }
    if (held) committed += p.max_gpus * week_h * p.usd_per_gpu_hour;
    const double price = held ? 0.0 : mean_price;
    std::vector<std::pair<int, double>> cap_row;
    const auto type = static_cast<std::size_t>(p.type);
    for (std::size_t k = 0; k < kinds; ++k) {
      if (demand[k] <= 0 || rate[k][type] <= 0) continue;
      const int col = lp.AddColumn(price, 0.0, capacity_h);
      work_rows[k].push_back({col, rate[k][type]});
      cap_row.push_back({col, 1.0});
    }
    if (!cap_row.empty()) lp.AddRow(cap_row, 0.0, capacity_h);
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < kinds; ++k) {
    if (demand[k] <= 0) continue;
    if (work_rows[k].empty()) return InternalError("the fleet has no GPU type for a kind of work of the week");
    lp.AddRow(work_rows[k], demand[k], kInf);
  }
  SEEDANCE_RETURN_IF_ERROR(lp.Solve());
  return committed + lp.objective();
}

}  // namespace seedance::fleet
