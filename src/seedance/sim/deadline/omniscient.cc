#include "seedance/sim/deadline/omniscient.h"

#include <algorithm>
#include <limits>
#include <span>

#include "seedance/core/check.h"
#include "seedance/sim/deadline/multi_region.h"
#include "seedance/sim/deadline/policies.h"

namespace seedance::sim::deadline {
OmniscientPlan PlanOmniscient(const SpotTrace& trace, std::int64_t start_tick, const DeadlineJob& job,
                              double upper_bound) {
  const MultiOmniscientPlan one =
      PlanOmniscientAcross(std::span(&trace, 1), start_tick, job, upper_bound, MoveOrder::kSpotFirst);
  OmniscientPlan plan;
  plan.feasible = one.feasible;
  plan.cost = one.cost;
  plan.max_labels = one.max_labels;
  plan.decisions.reserve(one.decisions.size());
  for (const MultiDecision& d : one.decisions) plan.decisions.push_back(d.instance);
  return plan;
}

void OmniscientPolicy::Start(const DeadlineJob& job, std::int64_t /*gap_s*/, std::int64_t start_tick) {
  // The bound for branch and bound: the cheapest of the online policies' schedules that meet the
  // deadline (they are feasible schedules; the plan is never worse than them).
  double best = std::numeric_limits<double>::infinity();
  for (const char* name : {"uniform-progress", "seedance", "greedy", "on-demand"}) {
    auto p = MakeOnlinePolicy(name);
    SEEDANCE_CHECK(p.has_value());
    const JobOutcome r = SimulateJob(*trace_, start_tick, job, **p);
    if (r.met_deadline) best = std::min(best, r.cost);
  }
  plan_ = PlanOmniscient(*trace_, start_tick, job, best);
}

Instance OmniscientPolicy::Decide(const Observation& obs) {
  if (!plan_.feasible) return Instance::kOnDemand;
  const auto i = static_cast<std::size_t>(obs.elapsed_s / obs.gap_s);
  return i < plan_.decisions.size() ? plan_.decisions[i] : Instance::kIdle;
}

}  // namespace seedance::sim::deadline
