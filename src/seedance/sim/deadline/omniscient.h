#pragma once

// Omniscient ("Can't Be Late" S5.3.1): the cheapest schedule for one job when the whole future of
// the spot series is known. A labelled reference, never a competitor: no online scheduler can
// know the future. Instead of the paper's ILP, an exact dynamic programme over ticks: at each tick
// boundary the state is (instance held, changeover left, progress) and the cost so far; for each
// (instance, changeover left) only the labels that no other label beats on both progress and cost
// are kept. It is the one-region case of the multi-region programme (PlanOmniscientAcross,
// multi_region.h). The dynamics are the simulator's (StepTick).

#include <cstdint>
#include <limits>
#include <vector>

#include "seedance/sim/deadline/spot_job.h"

namespace seedance::sim::deadline {

struct OmniscientPlan {
  bool feasible = false;           // some schedule meets the deadline
  double cost = 0;                 // spot-price seconds, as JobOutcome::cost
  std::vector<Instance> decisions;  // one per tick from the start
  std::size_t max_labels = 0;      // widest tick (for the cost of planning)
};

// `upper_bound`: the cost of a schedule known to meet the deadline (infinity: none); only used to
// prune, the plan is exact either way. REQUIRES: job.od_price >= 1, trace.gap_s > 0.
OmniscientPlan PlanOmniscient(const SpotTrace& trace, std::int64_t start_tick, const DeadlineJob& job,
                              double upper_bound = std::numeric_limits<double>::infinity());

// Replays the plan made at Start from the whole series (future included). When no schedule meets
// the deadline it runs on-demand from the start.
class OmniscientPolicy : public DeadlinePolicy {
 public:
  explicit OmniscientPolicy(const SpotTrace* trace) : trace_(trace) {}
  std::string_view Name() const override { return "omniscient"; }
  void Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick) override;
  Instance Decide(const Observation& obs) override;
  const OmniscientPlan& plan() const { return plan_; }

 private:
  const SpotTrace* trace_;
  OmniscientPlan plan_;
};

}  // namespace seedance::sim::deadline
