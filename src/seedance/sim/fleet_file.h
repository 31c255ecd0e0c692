#pragma once

#include <optional>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/core/units.h"
#include "seedance/cost/node_pool.h"
#include "seedance/cost/price_table.h"
#include "seedance/cost/tco.h"
#include "seedance/sim/fleet.h"

// The fleet file (fleet.yaml, docs/FLEET_FILE.md): the user's GPUs per type — owned (billed at
// the catalog's TCO model), reserved (at their price), on-demand (quota and price) and spot pools
// (availability series in SkyPilot's spot-traces format, a price ratio or a price) — in regions.
// `cost-benchmark --fleet`, `sweep` (grid key `fleet`) and the bundled fleets (data/fleets/) read
// it; BuildFleetSpec turns it into the simulator's FleetSpec, the one fleet model.
namespace seedance::sim {

struct FleetFileSpot {
  std::string region;
  std::vector<std::string> series;  // paths as resolved (relative ones against the file's folder)
  std::vector<std::string> series_as_written;
  int gpus_per_instance = 1;
  int max_gpus = 0;
  double price_ratio = 0;           // > 0: this x the type's on-demand price
  double usd_per_gpu_hour = 0;      // > 0: this price
  // `price_series`: the price over time (CSV or AWS price history; spot_price.h), resolved path
  // and as written; the AWS rows are chosen by instance_type, availability_zone, product_description.
  std::string price_series_path;
  std::string price_series_as_written;
  AwsPriceFilter price_filter;
  PriceSeries price;
  bool borrowed = false;            // the series is another instance type's (said in the report)
  SpotSeries availability;          // the series summed
  int line = 0;
};

struct FleetFileGpu {
  std::string type;        // canonical catalog name
  std::string written;     // as the file spells it
  int line = 0;
  // Owned: `count` GPUs at the TCO model's price per GPU-hour (or the file's own price).
  int owned = 0;
  std::string owned_region;
  bool owned_tco = false;  // priced by cost::OwnedGpuTco from `tco` (else owned_usd_per_gpu_hour given)
  cost::TcoInputs tco;
  double owned_usd_per_gpu_hour = 0;
  // Reserved / committed: paid whether used or not.
  int reserved = 0;
  std::string reserved_region;
  double reserved_usd_per_gpu_hour = 0;
  // On-demand: up to `quota` GPUs, billed per second; price 0 = the price table's.
  int on_demand_quota = 0;
  bool has_on_demand = false;
  std::string on_demand_region;
  double on_demand_usd_per_gpu_hour = 0;
  std::vector<int> on_demand_node_gpus;  // `node_gpus`: shapes sold (GPUs per node), ascending; empty = not stated
  std::vector<FleetFileSpot> spot;  // pooled into one simulator pool per type (see below)
};

// `node_pools[]`: which nodes of a history are paid how (cost/node_pool.h); prices resolved by
// ResolveNodePools.
struct FleetFileNodePool {
  std::string name;
  std::string type;      // canonical catalog name
  std::string written;   // as the file spells it
  cost::PoolKind kind = cost::PoolKind::kOnDemand;
  double usd_per_gpu_hour = 0;  // 0: the default of its kind (ResolveNodePools)
  std::string provider;         // "": the default of its kind
  double power_down_usd_per_gpu_hour = 0;
  cost::NodeMatch match;
  int line = 0;
};

struct FleetFile {
  std::string path;   // as given
  std::string name;
  std::vector<std::string> regions;
  std::vector<FleetFileGpu> gpus;  // file order; at most one entry per type
  std::vector<FleetFileNodePool> node_pools;  // file order; a node takes the first that matches
  std::string on_prem_provider = "On-premises";  // FOCUS ProviderName of owned pools by default
  std::string cloud_provider;                    // of the other pools by default ("": each must say)
};

// The file's node pools with their prices and providers: a pool's own `usd_per_gpu_hour`, else
// by kind: owned at the `gpus[]` entry's owned price (its TCO or stated price), else the TCO
// model's defaults for the type; reserved at the entry's reserved price (else an error);
// on-demand at the entry's on-demand price, else `prices`'s; spot at the entry's first spot
// pool's price (or ratio), else the table's spot quote, else kDefaultSpotRatio x on-demand.
// price_source says which. Errors name the file, the pool's line and what is missing.
Result<std::vector<cost::NodePool>> ResolveNodePools(const FleetFile& file, const cost::PriceTable& prices);

// Prices the file states that are implausible for their GPU type (issue 38: a per-node price typed
// as a per-GPU one, `usd_per_gpu_hour: 98.32` for an 8-GPU H100 node): outside [kPlausibleLow,
// kPlausibleHigh] x the type's on-demand list price in `prices`. One warning per price, naming the
// file, line, key, the price and the range. Types the table does not price are not checked.
inline constexpr double kPlausibleLow = 0.05;
inline constexpr double kPlausibleHigh = 3.0;
std::vector<std::string> FleetPriceWarnings(const FleetFile& file, const cost::PriceTable& prices);

// Reads and validates a fleet file; spot series are loaded (relative paths against the file's
// folder). Errors (kInvalidArgument) name file:line and the key ("fleet.yaml:7: key
// 'gpus[0].owned.count': ..."): unknown keys, missing required keys, durations without a unit,
// GPU names the parser does not know, a type listed twice, a region not in `regions`, a value
// out of range, an unreadable or malformed series; kNotFound when the file cannot be opened.
Result<FleetFile> LoadFleetFile(const std::string& path);
// The same for text already read; `name` is used in messages, `base_dir` resolves series paths.
Result<FleetFile> ParseFleetFile(const std::string& name, const std::string& text, const std::string& base_dir);

// Builds the simulator's fleet for a workload over `gpu_types` (canonical names, the workload's
// order). Pools, in this order: owned (committed, TCO price), reserved (committed), on-demand
// per type in `gpu_types` order, then spot per type in file order. A type's spot entries in several
// regions become one pool (SkyPilot fails over across regions): their series are summed, their
// max_gpus added, and they must agree on the price (or the price series). A price series becomes
// the pool's PoolSpec::price, its time 0 the simulation's. Prices not given come from `prices`: on-demand
// from its row, spot from its spot quote, else cost::kDefaultSpotRatio x on-demand. Errors: a
// fleet type the workload has no speed for, an unpriced type, a price ratio or series mismatch.
Result<FleetSpec> BuildFleetSpec(const FleetFile& file, const std::vector<std::string>& gpu_types,
                                 const cost::PriceTable& prices);

// "A100-80G" for any spelling the GPU-name parser knows, else the text as given.
std::string CanonicalGpuType(const std::string& text);

// The as-run baseline's pricing hook (`seedance export workload` writes the period as it ran):
// GPUs a job held, of one type and tier, over [start_s, end_s).
struct AsRunInterval {
  std::string job;
  std::string gpu_type;  // any spelling the GPU-name parser knows
  Tier tier = Tier::kOnDemand;
  double start_s = 0, end_s = 0;
  int gpus = 1;
};

struct AsRunCost {
  double period_start_s = 0, period_end_s = 0;
  double total_usd = 0;
  double committed_usd = 0;         // owned (TCO) and reserved pools over the whole period, used or not
  double owned_usd = 0, reserved_usd = 0;  // committed_usd split by tier
  double committed_idle_usd = 0;    // the part of it no job used
  double on_demand_usd = 0, spot_usd = 0;
  std::vector<std::string> pool_names;  // "A100-80G owned", parallel to usd_by_pool
  std::vector<double> usd_by_pool;
  std::vector<std::pair<std::string, double>> usd_by_job;  // first-seen order; committed GPUs at their price per use

  // The tier totals from micro-dollar sums (the ledger's nodes, the as-run node inventory).
  void SetTiers(Money owned, Money reserved, Money on_demand, Money spot, Money committed_idle) {
    owned_usd = ToUsd(owned);
    reserved_usd = ToUsd(reserved);
    committed_usd = owned_usd + reserved_usd;
    on_demand_usd = ToUsd(on_demand);
    spot_usd = ToUsd(spot);
    committed_idle_usd = ToUsd(committed_idle);
  }
};

// Prices what ran by the simulator's billing rules (billing.h): committed pools cost every GPU
// for the whole period [period_start_s, period_end_s] (both 0: the first start to the last end),
// on-demand and spot per second of use at the fleet's prices (defaults from `prices`, as
// BuildFleetSpec); spot with a price series at the price in force at each instant: a series of
// wall-clock times (RFC 3339, AWS) is aligned by `unix_origin_s`, the Unix time of the run's
// time 0 (nullopt: the series' first point is time 0, as for a series in seconds from the start).
// Errors name the interval (index and job): a type or tier the fleet has no pool
// for, end before start, GPUs < 1, an interval outside the period, or more GPUs of a pool held at
// once than it has (owned / reserved count, on-demand quota, spot max_gpus); and spot time before
// a wall-clock price series begins (its price is not known).
Result<AsRunCost> PriceAsRun(const FleetFile& file, const std::vector<AsRunInterval>& run,
                             const cost::PriceTable& prices, double period_start_s = 0, double period_end_s = 0,
                             std::optional<double> unix_origin_s = std::nullopt);

// A job as history shows it (`export workload`, `cost-benchmark --as-run`): GPUs of one type held
// over [start_s, end_s), without the tier they were paid in (Kubernetes and Slurm history name
// nodes, not how they are paid for) unless `spot`: the history says they were spot capacity.
struct AsRunJob {
  std::string job;
  std::string gpu_type;  // any spelling the GPU-name parser knows
  double start_s = 0, end_s = 0;
  int gpus = 1;
  bool spot = false;
};

// Puts what ran into the fleet's pools (PriceAsRun's input): jobs in start order (ties: input
// order) take, for their whole run, the GPUs of their type that are free over all of it, first
// owned, then reserved, then on-demand up to its quota (one job may span tiers); a `spot` job
// takes the type's spot pools (their max_gpus added up) and nothing else. Errors (kInvalidArgument,
// never a silent overflow): a job on a type the fleet does not list, a spot job on a type without
// spot pools, end before start, GPUs < 1, and a job whose GPUs do not fit, naming the job, its type,
// its start and what the fleet has of that type.
Result<std::vector<AsRunInterval>> PlaceAsRun(const FleetFile& file, const std::vector<AsRunJob>& jobs);

// "owned", "reserved", "on-demand" (or "on_demand", "ondemand"), "spot"; kInvalidArgument otherwise.
Result<Tier> ParseTier(std::string_view text);

}  // namespace seedance::sim
