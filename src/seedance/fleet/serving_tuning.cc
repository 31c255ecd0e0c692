// The serving controllers' tuning on a deployment's tuning week (serving.h: TuneReactive,
// TunePredictive, PredictiveBeats): each grid setting evaluated by EvaluateController, the cheapest
// that serves the required share chosen. Split from serving.cc (issue 39 round 6: past 800 lines).
#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "seedance/fleet/serving.h"

namespace seedance::fleet {
namespace {

constexpr double kEps = 1e-9;

int Ceil(double x) { return static_cast<int>(std::ceil(x - kEps)); }

}  // namespace

namespace {

// A setting the warm path may choose: provisioning at least what min_headroom / max_target do.
bool WarmCandidate(const TuneRow& r, const TuneWarmPath& warm) {
  return (warm.min_headroom <= 0 || r.headroom + kEps >= warm.min_headroom) &&
         (warm.max_target <= 0 || r.target_utilization <= warm.max_target + kEps);
}

Result<TuneResult> Tune(const ServingProfile& p, const ServingPolicy& base, const Demand& week0,
                        std::span<const double> history, const std::vector<double>& prices, double cold_start_s, double min_share,
                        const std::vector<double>& utilizations, const std::vector<double>& headrooms,
                        const std::vector<double>& floors, const TuneWarmPath& warm = TuneWarmPath()) {
  TuneResult out;
  std::unique_ptr<ServingController> first;
  const ServingController probe(p, base, prices, week0.Peak(), week0.step_s, cold_start_s);
  const int single = probe.single_type();
  for (double f : floors) {
    // minReplicas: the share f of the fleet that serves the tuning week's peak at full capacity.
    const int floor_replicas =
        single < 0 ? base.min_replicas
                   : std::max(base.min_replicas, Ceil(f * week0.Peak() / p.replica_rps[static_cast<std::size_t>(single)]));
    for (double u : utilizations) {
      for (double hr : headrooms) {
        ServingPolicy pol = base;
        pol.target_utilization = u;
        pol.min_replicas = floor_replicas;
        if (hr > 0) pol.headroom = hr;
        ServingController c(p, pol, prices, week0.Peak(), week0.step_s, cold_start_s);
        if (first == nullptr) {
          first = std::make_unique<ServingController>(c);
        } else {
          c.ShareCache(*first);
        }
        SEEDANCE_ASSIGN_OR_RETURN(ServingEval ev, EvaluateController(p, c, week0, prices, cold_start_s, history));
        ServingEval warm_ev;
        if (warm.on()) {  // the same controller (a function of the past only), its replicas on nodes already up
          SEEDANCE_ASSIGN_OR_RETURN(warm_ev, EvaluateController(p, c, week0, prices, warm.start_s, history));
        }
        out.rows.push_back(TuneRow{u, hr, f, floor_replicas, std::move(ev), std::move(warm_ev)});
      }
    }
  }
  for (std::size_t i = 0; i < out.rows.size(); ++i) {
    const ServingEval& e = out.rows[i].eval;
    if (e.served_share + kEps < min_share) continue;
    if (warm.on() && !WarmCandidate(out.rows[i], warm)) continue;
    if (warm.on() && out.rows[i].warm_eval.served_share + kEps < warm.min_share) continue;
    if (out.chosen < 0 || e.usd < out.rows[static_cast<std::size_t>(out.chosen)].eval.usd - kEps) out.chosen = static_cast<int>(i);
  }
  out.reached = out.chosen >= 0;
  if (!out.reached && warm.on()) {
    for (std::size_t i = 0; i < out.rows.size(); ++i) {
      if (out.rows[i].eval.served_share + kEps < min_share || !WarmCandidate(out.rows[i], warm)) continue;
      if (out.chosen < 0 ||
          out.rows[i].warm_eval.served_share > out.rows[static_cast<std::size_t>(out.chosen)].warm_eval.served_share + kEps) {
        out.chosen = static_cast<int>(i);
      }
    }
  }
  if (out.chosen < 0) {
    for (std::size_t i = 0; i < out.rows.size(); ++i) {
      if (out.chosen < 0 || out.rows[i].eval.served_share > out.rows[static_cast<std::size_t>(out.chosen)].eval.served_share + kEps) {
        out.chosen = static_cast<int>(i);
      }
    }
  }
  const TuneRow& c = out.rows[static_cast<std::size_t>(out.chosen)];
  auto inside = [](const std::vector<double>& grid, double v) {
    return grid.size() < 3 || (v > grid.front() + kEps && v < grid.back() - kEps);
  };
  out.inside_grid = inside(utilizations, c.target_utilization) && (headrooms.size() == 1 || inside(headrooms, c.headroom));
  out.policy = base;
  out.policy.target_utilization = c.target_utilization;
  out.policy.min_replicas = c.min_replicas;
  if (c.headroom > 0) out.policy.headroom = c.headroom;
  return out;
}

}  // namespace

Result<TuneResult> TuneReactive(const ServingProfile& p, const ServingPolicy& base, const Demand& week0,
                                std::span<const double> history, const std::vector<double>& usd_per_gpu_hour,
                                double cold_start_s, double min_share, std::vector<double> utilizations) {
  const bool given = !utilizations.empty();
  if (!given) utilizations = {0.5, 0.6, 0.7, 0.8, 0.9};
  ServingPolicy pol = base;
  pol.autoscaler = "reactive";
  const std::vector<double> floors = {0, 0.25, 0.5, 0.75, 1.0};
  SEEDANCE_ASSIGN_OR_RETURN(TuneResult r, Tune(p, pol, week0, history, usd_per_gpu_hour, cold_start_s, min_share,
                                               utilizations, {0.0}, floors));
  if (r.reached || given) return r;
  // No target of the standard grid reaches min_share: a platform team would lower the target.
  std::vector<double> lower = {0.4, 0.3, 0.2};
  lower.insert(lower.end(), utilizations.begin(), utilizations.end());
  SEEDANCE_ASSIGN_OR_RETURN(r, Tune(p, pol, week0, history, usd_per_gpu_hour, cold_start_s, min_share, lower, {0.0}, floors));
  r.extended = true;
  return r;
}

Result<TuneResult> TunePredictive(const ServingProfile& p, const ServingPolicy& base, const Demand& week0,
                                  std::span<const double> history, const std::vector<double>& usd_per_gpu_hour,
                                  double cold_start_s, double min_share, const TuneWarmPath& warm) {
  ServingPolicy pol = base;
  pol.autoscaler = "predictive";
  return Tune(p, pol, week0, history, usd_per_gpu_hour, cold_start_s, min_share, {0.9, 1.0, 1.25, 1.5, 2.0, 3.0},
              {1.0, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0}, {0.0}, warm);
}

bool PredictiveBeats(const ServingEval& reactive, const ServingEval& predictive, double min_share) {
  return predictive.usd_per_mtok < reactive.usd_per_mtok &&
         (predictive.served_share >= reactive.served_share || predictive.served_share >= min_share);
}

}  // namespace seedance::fleet
