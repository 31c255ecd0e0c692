#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seedance::tenancy {

// Service tiers (SPEC S4.1): Gold / Silver / Bronze = QoS guaranteed / burstable / best-effort.
enum class Tier : int { kGold = 0, kSilver = 1, kBronze = 2 };
inline constexpr int kNumTiers = 3;

std::string_view TierName(Tier t);                         // "gold", "silver", "bronze"
std::optional<Tier> ParseTier(std::string_view name);      // case-insensitive; nullopt if unknown
// Priority of a tier's workloads (Kueue priority classes: gold 300, silver 200, bronze 100), the
// same in every mode: the simulator's tenancy replay and `seedance slurm` both rank by it.
int TierPriority(Tier t);

// One tier's parameters; the defaults are the seed's (SPEC S4.1, S4.2).
struct TierParams {
  // Share of the tenant's nominal quota that is guaranteed: lent quota in this part is taken
  // back from borrowers by preemption when the owner needs it.
  double guaranteed_share = 1.0;
  // Reclaim trigger: an allocation whose GPU utilization stays at or below `reclaim_util_below`
  // for `reclaim_after_s` is idle; its quota becomes lendable and it may be preempted by any
  // pending work. (Bronze's "0%" trigger is util_below 0: utilization exactly 0.)
  double reclaim_util_below = 0.05;
  double reclaim_after_s = 720;
  // Maximum tolerated idle: the reclaim sweep releases an allocation idle this long.
  double max_idle_s = 900;
  // Elastic quota base (S4.2): scale = base x (0.3 + 0.7 e^(-idle_s/300)) while idle, else
  // base x min(1.5, 1 + util x 0.5).
  double elastic_base = 1.0;
};

// The seed's values: Gold 100% / 15 min / <5% for 12 min / 1.0; Silver 80% / 5 min / <10% for
// 3 min / 0.8; Bronze 50% / 90 s / 0% for 60 s / 0.5.
std::array<TierParams, kNumTiers> DefaultTierParams();

// The elastic quota scale of S4.2 for a tenant of tier params `p`: `idle_s` > 0 while idle
// (seconds idle so far), else `util` in [0, 1] is the tenant's recent GPU utilization.
double ElasticScale(const TierParams& p, double idle_s, double util);

// Canonical resource names of a quota: "cpu" (cores), "memory" (GiB), "gpu/<catalog name>"
// (whole GPUs of one model, e.g. "gpu/A100-80G"), or "gpu" (GPUs of any model).
std::string GpuResourceName(std::string_view catalog_name);

// One resource of a tenant's quota with Kueue's semantics (docs/PROTOCOLS.md section 6): nominal quota,
// borrowing limit (unset: may borrow up to the cohort's lendable total), lending limit (unset:
// all of nominal may be lent).
struct ResourceQuota {
  std::string resource;
  double nominal = 0;
  std::optional<double> borrowing_limit;
  std::optional<double> lending_limit;
};

// A tenant (Kueue: a ClusterQueue with its LocalQueue): its cohort ("" = none), tier and quota.
struct TenantConfig {
  std::string name;
  std::string cohort;
  Tier tier = Tier::kSilver;
  std::vector<ResourceQuota> quota;
  // Kueue's spec.fairSharing.weight (Fair Sharing modes only): >= 0, default 1; 0 = an infinite
  // share whenever it borrows.
  double fair_weight = 1.0;
  int line = 0;  // config line (1-based) for error messages; 0 when built in code
};

// The `tenancy:` section of seedance-config.yaml.
struct TenancyConfig {
  std::array<TierParams, kNumTiers> tiers = DefaultTierParams();
  double cycle_s = 10;          // admission cycle period (a guarantee holds within one cycle)
  double reclaim_sweep_s = 30;  // idle-reclaim sweep period (S4.1)
  double grace_s = 0.5;         // preemption grace period (S4.4: GPU context release)
  bool fairness_compensation = true;  // S4.5
  double fairness_window_s = 7 * 86400.0;  // history the deviation from fair share is taken over
  std::vector<TenantConfig> tenants;
};

}  // namespace seedance::tenancy
