#pragma once

// One deadline job that may run in any of R regions' spot pools (one spot series per region, the
// same gap), with on-demand anywhere: the multi-region setting of the ADRS / Frontier-CS
// "cant_be_late_multi" benchmark, in the model of spot_job.h. A spot instance lives in one region
// and is preempted when that region's series drops (seen at the next tick). Moving a running spot
// instance to another region is a restart: the changeover d again, at the spot price. On-demand has
// no region (it never runs out), so it pays d only when the job switches onto it. Trace semantics as
// everywhere in `bench spot`: 1 = a spot instance is available in that region during the tick.
//
// Policies see a MultiObservation: the job's state, every region's availability now and its past up
// to now (MultiObservation::past; a read of the future aborts). That assumes the scheduler can probe
// every region at every tick (a spot launch attempt that fails costs nothing, or the cloud's capacity
// API); the round-robin baseline looks only at the region it is pointed at, as the ADRS harness's.

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/deadline/policies.h"
#include "seedance/sim/deadline/spot_job.h"

namespace seedance::sim::deadline {

struct MultiDecision {
  Instance instance = Instance::kIdle;
  int region = 0;  // where a spot instance runs; ignored for idle and on-demand
  bool operator==(const MultiDecision& o) const {
    return instance == o.instance && (instance != Instance::kSpot || region == o.region);
  }
};

struct MultiObservation : JobView {
  int spot_region = -1;                // region of the running spot instance, -1 when not on spot
  std::vector<bool> spot_available;    // per region, now
  std::vector<PastView> past;          // per region, the series up to now_tick
  // Per region, its spot price in units of the job's spot price (DeadlineJob::od_price is k in the
  // same unit); empty: every region at the job's spot price. A zone's price list is public: it is
  // no look into the future.
  std::vector<double> spot_price;

  // The single-region view of region `r`, for the single-region rules.
  Observation InRegion(int r) const;
};

class MultiRegionPolicy {
 public:
  virtual ~MultiRegionPolicy() = default;
  virtual std::string_view Name() const = 0;
  // `home`: the region the job is submitted to (where a region-bound policy starts looking).
  virtual void Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick, int regions, int home) = 0;
  // May return spot only in a region with spot available now.
  virtual MultiDecision Decide(const MultiObservation& obs) = 0;
};

struct MultiJobOutcome {
  JobOutcome job;                       // decisions: the instance of each tick's decision
  int region_moves = 0;                 // spot launches in a region other than the last spot region
  std::vector<MultiDecision> decisions;
};

// REQUIRES: regions non-empty, one gap_s for all.
MultiJobOutcome SimulateMultiRegionJob(const std::vector<SpotTrace>& regions, std::int64_t start_tick,
                                       const DeadlineJob& job, int home, MultiRegionPolicy& policy);

// A single-region policy pinned to the home region (the "single-region" rows).
class PinnedRegionPolicy : public MultiRegionPolicy {
 public:
  explicit PinnedRegionPolicy(std::unique_ptr<DeadlinePolicy> inner) : inner_(std::move(inner)) {}
  std::string_view Name() const override { return inner_->Name(); }
  void Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick, int regions, int home) override;
  MultiDecision Decide(const MultiObservation& obs) override;

 private:
  std::unique_ptr<DeadlinePolicy> inner_;
  int home_ = 0;
};

// Uniform progress (spot-first, with the Safety Net) extended to regions as the ADRS multi-region
// harness does.
//   kRoundRobin ("uniform-progress-round-robin"): the job looks at one region per tick; on a
//     preemption, or when the region it looks at has no spot (and it is not on spot), it decides
//     this tick from that region alone (idle or on-demand by uniform progress) and points at the
//     next region, round robin, for the next tick.
//   kFirstAvailable ("uniform-progress-any-region", sky_spot's multi_region_rc_cr_threshold): when
//     uniform progress would take spot, it tries every region in order and takes the first one
//     with spot; none: uniform progress without spot.
class MultiRegionUniformProgress : public MultiRegionPolicy {
 public:
  enum class Mode { kRoundRobin, kFirstAvailable };
  explicit MultiRegionUniformProgress(Mode mode) : mode_(mode) {}
  std::string_view Name() const override {
    return mode_ == Mode::kRoundRobin ? "uniform-progress-round-robin" : "uniform-progress-any-region";
  }
  void Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick, int regions, int home) override;
  MultiDecision Decide(const MultiObservation& obs) override;

 private:
  Mode mode_;
  UniformProgressPolicy up_{true};
  int regions_ = 1;
  int pointer_ = 0;
};

// Seedance across regions: uniform progress (rules 1-2, the Safety Net) decides when the job must
// run; a running spot instance is kept (Exploitation); otherwise, of the regions with spot now, the
// one whose open run has the highest expected benefit (ExpectedSpotBenefit on that region's own
// trailing history, conditioned on the run's age) is taken if that benefit is positive (a region
// with too little history counts as worth taking, as single-region seedance does); no such region:
// uniform progress without spot with the long on-demand hold of SeedanceDeadlineConfig. When the
// regions' spot prices differ (MultiObservation::spot_price), each region's benefit is reckoned at
// its own price (k_r = on-demand / its spot price) and compared in money, and of regions that are
// equally worth taking (too little history in each) the cheapest is taken.
class SeedanceMultiRegionPolicy : public MultiRegionPolicy {
 public:
  explicit SeedanceMultiRegionPolicy(SeedanceDeadlineConfig config = {}) : config_(config) {}
  std::string_view Name() const override { return "seedance-multi-region"; }
  void Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick, int regions, int home) override;
  MultiDecision Decide(const MultiObservation& obs) override;

 private:
  // Expected benefit of spot in region r (ExpectedSpotBenefit at r's price, in units of the job's
  // spot price); infinite when r's history is too short to judge.
  double RegionBenefit(const MultiObservation& obs, int r, bool from_on_demand) const;

  SeedanceDeadlineConfig config_;
  std::vector<SpotRunHistory> history_;
  bool committed_ = false;
};

// The offline optimum across regions with the whole future of every region known: a labelled
// reference, never a competitor. An exact dynamic programme over ticks whose state is (instance,
// spot region, changeover left, progress), keeping per (instance, region, changeover left) the
// progress/cost Pareto front, with branch and bound on a lower bound that lets the job hold spot
// wherever any region has it (one changeover per run of "some region available").
struct MultiOmniscientPlan {
  bool feasible = false;
  double cost = 0;
  std::vector<MultiDecision> decisions;
  std::size_t max_labels = 0;
};
MultiOmniscientPlan PlanMultiRegionOmniscient(const std::vector<SpotTrace>& regions, std::int64_t start_tick,
                                              const DeadlineJob& job,
                                              double upper_bound = std::numeric_limits<double>::infinity());

// The order in which the programme tries the moves at a tick. Of two schedules of equal cost it
// keeps the one found first, so the order decides ties, and only ties.
enum class MoveOrder {
  kSpotFirst,      // idle, spot in each region, on-demand: PlanOmniscient's order
  kOnDemandFirst,  // idle, on-demand, spot in each region: PlanMultiRegionOmniscient's order
};
// The programme behind both omniscient references (PlanOmniscient is its one-region case).
// REQUIRES: regions non-empty, one gap_s > 0 for all, job.od_price >= 1.
MultiOmniscientPlan PlanOmniscientAcross(std::span<const SpotTrace> regions, std::int64_t start_tick,
                                         const DeadlineJob& job, double upper_bound, MoveOrder order);

class MultiRegionOmniscientPolicy : public MultiRegionPolicy {
 public:
  explicit MultiRegionOmniscientPolicy(const std::vector<SpotTrace>* regions) : regions_(regions) {}
  std::string_view Name() const override { return "omniscient-multi-region"; }
  void Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick, int regions, int home) override;
  MultiDecision Decide(const MultiObservation& obs) override;
  const MultiOmniscientPlan& plan() const { return plan_; }

 private:
  const std::vector<SpotTrace>* regions_;
  MultiOmniscientPlan plan_;
};

// Table order: on-demand, uniform-progress (pinned to the home region), uniform-progress-round-robin,
// uniform-progress-any-region, seedance-multi-region, omniscient-multi-region.
const std::vector<std::string>& MultiRegionPolicyNames();
// Any name of MultiRegionPolicyNames(); `regions` is only read by the omniscient reference.
Result<std::unique_ptr<MultiRegionPolicy>> MakeMultiRegionPolicy(const std::string& name,
                                                                 const std::vector<SpotTrace>* regions);

}  // namespace seedance::sim::deadline
