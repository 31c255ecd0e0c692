#pragma once

#include <string>

#include "seedance/core/status.h"
#include "seedance/tenancy/tiers.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace seedance::tenancy {

// Reads the `tenancy:` section of seedance-config.yaml (SPEC S4.1-S4.3) into a TenancyConfig:
//   tenancy:
//     cycle: 10s               # a duration with a unit (core ParseDurationSeconds) > 0
//     reclaim_sweep: 30s       # > 0
//     grace_period: 500ms      # >= 0
//     fairness: {compensation: true, window: 7d}   # window: > 0
//     tiers:                   # each tier and each field optional; defaults DefaultTierParams()
//       gold: {guaranteed_share: [0,1], max_idle: duration >= 0, reclaim_util_below: [0,1],
//              reclaim_after: duration >= 0, elastic_base: > 0}
//       silver: {...}
//       bronze: {...}
//     tenants:
//       - name: team-a         # required, unique
//         cohort: pool-1       # optional; borrowing_limit and lending_limit need one
//         tier: gold           # gold | silver | bronze (any case), default silver
//         fair_sharing: {weight: 1}  # Kueue's spec.fairSharing.weight, >= 0 (Fair Sharing modes)
//         quota:               # in file order; each resource once
//           cpu: {nominal: 192}                      # cores
//           memory: {nominal: 2048}                  # GiB
//           gpu/A100-80G: {nominal: 16, borrowing_limit: 8, lending_limit: 4}
//           gpu: {nominal: 8}                        # GPUs of any model
// Quantities are finite and >= 0, and lending_limit <= nominal (Kueue, docs/PROTOCOLS.md section 6).
// A `gpu/<model>` key accepts every spelling gpu::ParseGpuName(kProduct) accepts and is stored as
// GpuResourceName(<catalog name>). A null `tenancy_node` (an absent or empty section) gives the
// defaults. Every key is optional except a tenant's name.
// Returns the config, or kInvalidArgument "FILE:LINE: key 'tenancy.tenants[2].quota.gpu/A100.
// lending_limit': reason" (FILE = `file_name`, LINE 1-based, tenants indexed from 0, the key as
// written in the file); unknown keys list the allowed ones. Never throws.
Result<TenancyConfig> ParseTenancyConfig(const std::string& file_name, const YAML::Node& tenancy_node);

}  // namespace seedance::tenancy
