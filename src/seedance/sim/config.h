#pragma once

#include <string>

#include "seedance/core/status.h"
#include "seedance/sim/policies/seedance_cost_policy.h"
#include "seedance/tenancy/tiers.h"

namespace seedance::sim {

// seedance-config.yaml, the parts the simulator reads (S3.1, S3.3, S3.4):
//   scheduler:
//     cost_aware: {enabled: bool, spot_fallback: bool, max_price_ratio: (0,1],
//                  warmup_window: seconds >= 0, min_speed_ratio: (0,1], overflow_speed_ratio:
//                  [0,1], max_step_price_ratio: >= 0, spot_patience, max_spot_wait,
//                  migrate_min_restarts, migrate_after_queue: bool, spot_return_cooldown,
//                  time_value_per_hour, spot_mtbf_prior: seconds > 0}
//     autoscaling: {mode: reactive|predictive, cold_start: s, scale_down_delay: s}
//     checkpoint: {cost: s, restart: s}
//   tenancy: tiers, tenants and their quotas (S4.1-S4.3): tenancy::ParseTenancyConfig
// Every key is optional; unknown keys and bad values are errors naming file:line and the key.
struct SimConfig {
  CostAwareConfig cost_aware;
  double cold_start_s = 180;
  double scale_down_delay_s = 600;
  double checkpoint_cost_s = 30;
  double restart_s = 60;
  tenancy::TenancyConfig tenancy;
};

Result<SimConfig> LoadSimConfig(const std::string& path);
Result<SimConfig> ParseSimConfig(const std::string& name, const std::string& text);

}  // namespace seedance::sim
