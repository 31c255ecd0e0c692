#include "seedance/fleet/bound.h"

#include <algorithm>
#include <limits>

#include "seedance/sim/lp.h"

namespace seedance::fleet {

Result<double> FleetWeekLowerBoundUsd(const FleetWeekScenario& s, const FleetWeekOutcome& out) {
  const double week_h = s.horizon_s / 3600.0;
  sim::LinearProgram lp(sim::LinearProgram::Sense::kMinimize);
  // Kinds of work: training, each deployment, notebooks.
  const std::size_t kinds = 2 + s.serving.size();
  std::vector<double> demand(kinds, 0.0);
  demand[0] = out.training_pflop;
  for (std::size_t d = 0; d < s.serving.size(); ++d) {
    demand[1 + d] = d < out.serving_mtok_in_slo_by_deployment.size() ? out.serving_mtok_in_slo_by_deployment[d] : 0.0;
  }
  demand[kinds - 1] = out.dev_active_gpu_hours;
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
    // Training: the best PFLOP per GPU-hour of any job on this type.
    double train_rate = 0;
    for (const TrainingJob& j : s.jobs) {
      train_rate = std::max(train_rate, j.pflop_per_step * j.steps_per_s[type] * 3600.0 / j.gpus);
    }
    std::vector<double> rate(kinds, 0.0);
    rate[0] = train_rate;
    for (std::size_t d = 0; d < s.serving.size(); ++d) {
      const ServingProfile& prof = s.serving[d].seedance;
      for (std::size_t g = 0; g < prof.gpus.size(); ++g) {
        if (prof.gpus[g] != s.fleet.gpu_types[type]) continue;
        rate[1 + d] = prof.replica_rps[g] * 3600.0 * s.serving[d].demand.tokens_per_request / 1e6 / prof.tp[g];
      }
    }
    rate[kinds - 1] = 1.0;
    for (std::size_t k = 0; k < kinds; ++k) {
      if (rate[k] <= 0) continue;
      const int col = lp.AddColumn(price, 0.0, capacity_h);
      work_rows[k].push_back({col, rate[k]});
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
