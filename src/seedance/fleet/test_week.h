#pragma once

// A hand-built fleet week for the engine's small tests (gang_test, nodes_test): one GPU type
// (H100), one pool, one Silver tenant with room for everything, no serving.
#include <cstdint>
#include <string>

#include "seedance/fleet/scenario.h"

namespace seedance::fleet::testing {

// One pool of `gpus` GPUs of fleet type `type` (committed when the tier is always held).
inline sim::PoolSpec Pool(int type, sim::Tier tier, int gpus, double usd_per_gpu_hour) {
  sim::PoolSpec p;
  p.type = type;
  p.tier = tier;
  p.max_gpus = gpus;
  p.usd_per_gpu_hour = usd_per_gpu_hour;
  p.committed = sim::AlwaysHeld(tier);
  return p;
}

// A tenant of cohort "fleet" with a nominal "gpu" quota.
inline tenancy::TenantConfig CohortTenant(const std::string& name, tenancy::Tier tier, double quota) {
  tenancy::TenantConfig t;
  t.name = name;
  t.cohort = "fleet";
  t.tier = tier;
  t.quota.push_back({"gpu", quota, std::nullopt, std::nullopt});
  return t;
}

inline FleetWeekScenario OnePoolWeek(const std::string& name, sim::Tier tier, int gpus, double usd_per_gpu_hour,
                                     double quota, double hours) {
  FleetWeekScenario s;
  s.name = name + " test";
  s.fleet.name = name;
  s.fleet.gpu_types = {"H100"};
  s.fleet.pools.push_back(Pool(0, tier, gpus, usd_per_gpu_hour));
  s.tenancy.tenants.push_back(CohortTenant("research", tenancy::Tier::kSilver, quota));
  s.tenancy.cycle_s = kStepS;
  s.horizon_s = hours * 3600.0;
  return s;
}

// A job of `gpus` GPUs in `pods` pods, one step per second on H100, `hours` of work, a checkpoint
// every `checkpoint_s`.
inline TrainingJob OneStepPerSecondJob(std::int64_t id, double arrival_s, int gpus, int pods, double hours,
                                       double checkpoint_s) {
  TrainingJob j;
  j.id = id;
  j.name = "job-" + std::to_string(id);
  j.kind = "history";
  j.arrival_s = arrival_s;
  j.gpus = gpus;
  j.pods = pods;
  j.steps_per_s = {1.0};
  j.total_steps = hours * 3600.0;
  j.pflop_per_step = 1;
  j.checkpoint_s = checkpoint_s;
  return j;
}

}  // namespace seedance::fleet::testing
