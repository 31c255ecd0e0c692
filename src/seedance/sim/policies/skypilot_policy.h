#pragma once

#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "seedance/sim/engine.h"

namespace seedance::sim {

// SkyPilotPolicy: what a SkyPilot user runs instead of Seedance, SkyPilot managed jobs as
// documented (/work/shared/UNIFORM_PROGRESS.md S7; skypilot-org/skypilot docs/source/reference/
// yaml-spec.rst `job_recovery`, sky/jobs/recovery_strategy.py, docs managed-jobs.rst `any_of`):
// - each job requests one GPU type and never changes it (TypeChoice below);
// - resources `any_of: [{use_spot: true}, {use_spot: false}]`: the cheapest launchable option,
//   spot whenever that type's spot pool has room now, on-demand when spot cannot be launched;
// - on a preemption the job recovers with EAGER_NEXT_REGION (the default): it relaunches at once
//   elsewhere. Our spot pools sum the zones of a type into one series, so "another zone with
//   capacity" is "the pooled series has room now"; a relaunch in the zone that was just preempted
//   cannot be told apart from one in another zone. When no spot can be launched it falls back to
//   on-demand (FAILOVER's second step), which it keeps to the end (managed jobs only recover on
//   preemption; nothing moves a healthy job back to spot);
// - jobs launch independently (the jobs controller retries each one), so a job that fits starts
//   even when an earlier one waits; ties by id;
// - no size knowledge, no deadline awareness; checkpoints every checkpoint_interval_s (a user's
//   fixed choice; SkyPilot does not checkpoint for the job).
// Options::any_of (issue 29, the `skypilot-any-of` row): the job lists every feasible GPU type, spot
// and on-demand, as `resources: any_of` (docs.skypilot.co "Provisioning Compute" / auto-failover,
// managed-jobs `any_of`): SkyPilot's optimizer ranks the candidates by cost (here dollars per step:
// price x GPUs / speed, spot at its own price), and the provisioner fails over down that list when
// a candidate has no capacity; a preempted job relaunches from the top of the list again
// (EAGER_NEXT_REGION, then FAILOVER), a healthy one keeps its GPUs. Options::spot_only (the
// `skypilot-spot-only` row): only spot candidates, and a job that finds no spot room waits for spot.
class SkyPilotPolicy : public JobPolicy {
 public:
  enum class TypeChoice {
    kFastest,          // the job's fastest type (what a user asking for speed requests)
    kCheapestPerStep,  // the type with the lowest on-demand price x GPUs / speed
  };
  struct Options {
    TypeChoice type = TypeChoice::kCheapestPerStep;
    double checkpoint_interval_s = 1800;
    bool any_of = false;     // every feasible type, cheapest per step first, with failover
    bool spot_only = false;  // spot candidates only; no room: wait for spot
  };
  SkyPilotPolicy() = default;
  explicit SkyPilotPolicy(Options options) : options_(options) {}

  std::string_view name() const override { return "skypilot"; }
  std::vector<Assignment> Schedule(const SimView& view, Rng& rng) override;
  void OnCompletion(const JobInfo& job, double total_steps, double now) override;
  double CheckpointInterval(const JobView& job, const SimView& view) const override;

 private:
  int ChooseType(const SimView& view, const JobInfo& job) const;
  // any_of: the job's candidate pools in the optimizer's order (dollars per step, then pool index).
  std::vector<int> Candidates(const SimView& view, const JobInfo& job) const;

  Options options_;
  std::map<std::int64_t, int> type_of_;  // job -> requested GPU type
};

std::string_view SkyPilotTypeChoiceName(SkyPilotPolicy::TypeChoice choice);

}  // namespace seedance::sim
