#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/core/units.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/allocation.h"

namespace seedance::ledger {

// The attribution dimensions of a workload (S6.4).
struct WorkloadDims {
  std::string name;            // pod (Kubernetes) or job/pid key
  std::string namespace_name;  // "" outside Kubernetes
  std::string tenant;
  std::string business_unit;
  std::string task_type;       // e.g. training, inference
  std::string data_source;
  std::string sla_tier;
  std::string job;             // job (or pod when no job is known)
  bool operator==(const WorkloadDims&) const = default;
};

// Attribution dimensions `seedance attribute --by` accepts.
enum class Dimension : std::uint8_t {
  kTenant, kNamespace, kBusinessUnit, kTaskType, kDataSource, kSlaTier, kJob, kWorkload, kNode
};
Result<Dimension> ParseDimension(std::string_view name);
// Returns the JSON/CSV column name: tenant, namespace, business_unit, task_type, data_source,
// sla_tier, job, workload, node.
std::string_view DimensionName(Dimension d);
// Returns the list "tenant, namespace, ..." for messages.
std::string DimensionList();

// What a namespace maps to. Empty fields fall back to defaults (tenant = the namespace,
// everything else "unassigned").
struct NamespaceRule {
  std::string tenant;
  std::string business_unit;
  std::string task_type;
  std::string data_source;
  std::string sla_tier;
};

// The cost-attribution configuration (`--config FILE`): YAML (docs/ATTRIBUTION.md,
// examples/attribution.yaml), or the same keys as one JSON object (a file starting with '{'):
//   namespaces: {team-a: {tenant: acme, business_unit: ads, task_type: training,
//                         data_source: clickstream, sla_tier: gold}}
//   overhead_namespaces: [kube-system, gpu-operator]
//   overhead_fraction: 0.0          # of each node's capacity, charged as overhead
//   idle_share: none                # none | usage | tenant_weight
//   tenant_weights: {acme: 2.0}     # default 1.0
//   prices_usd_per_gpu_hour: {H100: 2.99, "NVIDIA H100 80GB HBM3": 3.10}
//   step_seconds: 60                # attribution interval
//   match_tolerance_seconds: 30     # process/pod events vs samples
//   breaker: {default_hourly_usd: 0, jobs: {llm-ft: 25.0}, pause: false}
// Unknown keys are rejected (typos must not pass silently).
struct LedgerConfig {
  std::map<std::string, NamespaceRule> namespaces;
  std::vector<std::string> overhead_namespaces = {"kube-system"};
  double overhead_fraction = 0.0;
  IdleShare idle_share = IdleShare::kNone;
  std::map<std::string, double> tenant_weights;
  std::map<std::string, Money> price_overrides;  // by catalog or dcgm model name
  // Per node (issue 38): a fleet file's node pools priced each node (the CLI's --fleet); a node
  // listed here is billed at this price per GPU-hour, before any model price.
  std::map<std::string, Money> node_prices;
  std::int64_t step_ms = 60'000;
  bool step_in_file = false;  // step_seconds was given in the file (a CLI --step must then agree)
  std::int64_t match_tolerance_ms = 30'000;
  Money breaker_default_hourly;                   // 0 = no default threshold
  std::map<std::string, Money> breaker_jobs;      // per job hourly threshold
  bool breaker_pause = false;

  // Errors: kNotFound (cannot open), kInvalidArgument naming the file and the key.
  static Result<LedgerConfig> LoadFile(const std::string& path);
  static Result<LedgerConfig> Parse(std::string_view json_text, const std::string& name);
  Status Validate() const;

  // Dimensions of a workload seen as (pod, namespace[, job]).
  WorkloadDims Classify(std::string_view pod, std::string_view namespace_name,
                        std::string_view job) const;
  bool IsOverheadNamespace(std::string_view namespace_name) const;
  // Tenant weight in thousandths (default 1000).
  std::int64_t TenantWeightMilli(std::string_view tenant) const;
};

// Prices per GPU-hour for dcgm model names: the config's overrides (by the exact dcgm name, then
// the catalog name), else the catalog table. Returns nullopt-like Money(-1) when unknown.
class GpuPricer {
 public:
  GpuPricer(const LedgerConfig& config, const cost::PriceTable* catalog)
      : config_(config), catalog_(catalog) {}
  // Returns micro-USD per GPU-hour, or -1 when the model has no price.
  std::int64_t MicroUsdPerHour(std::string_view dcgm_model) const;

 private:
  const LedgerConfig& config_;
  const cost::PriceTable* catalog_;
};

}  // namespace seedance::ledger
