#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "seedance/config/seedance_config.h"
#include "seedance/core/status.h"
#include "seedance/cost/price_table.h"
#include "seedance/sim/as_run_window.h"
#include "seedance/sim/engine.h"
#include "seedance/sim/fleet_file.h"
#include "seedance/sim/lower_bound.h"
#include "seedance/sim/workload.h"

namespace seedance::sim {

// The cost-benchmark scenario (S2.4, S2.5, S3): a workload on a cloud fleet (on-demand quota and
// spot pools with real availability series), run under every policy, with the LP lower bound.
struct ScenarioSpec {
  std::string workload = "llm-finetune";  // llm-finetune | gavel | philly | openb | a CSV path
  double duration_s = 0;                  // arrival window; 0 = the workload's default (7 days)
  // The fleet file (sim/fleet_file.h); empty = the bundled one of a bundled workload
  // (data_dir/fleets/cloud-<workload>.yaml), or for a jobs CSV the generic cloud fleet: 64
  // on-demand GPUs of each type and spot pools where a bundled series exists.
  std::string fleet_path;
  // Overrides of the fleet (sweep's grid values): > 0 sets every on-demand pool's quota (spot
  // pools get twice as many); 0 = the fleet's.
  int on_demand_quota = 0;
  // > 0: every spot price is this fraction of its type's on-demand price; 0 = the fleet's (a
  // fleet file's, else the price table's spot quote, else cost::kDefaultSpotRatio).
  double spot_price_ratio = 0;
  seedance::config::SimConfig config;
  // Seeds the workload generators (llm-finetune, gavel: a new instance per seed) and the
  // simulation's own rng.
  std::uint64_t seed = 42;
  std::string data_dir;                   // bundled data root
  std::string prices_path;                // on-demand prices; default data_dir/prices/gpu_prices.csv
  // Extra Seedance runs, one per value of time_value_per_hour (USD per job-hour): the cost/JCT
  // frontier, named seedance-tv<value>.
  std::vector<double> frontier_time_values;
  // Non-empty: run only the policies named here (tests that need a few rows of a long sweep).
  std::vector<std::string> only_policies;
  // Optional: every billed pool interval of every policy (e.g. into the cost ledger).
  std::function<void(const std::string& policy, const PoolInterval&)> on_pool_interval;
  // Optional: every decision of every policy (cost-benchmark --decisions).
  std::function<void(const std::string& policy, const Decision&)> on_decision;
};

struct PolicyOutcome {
  std::string name;
  std::string description;
  bool baseline = false;   // what users would run instead (fifo, gavel-las, skypilot, gavel-cost, gavel-las-spot)
  bool reference = false;  // knows the future (e.g. true sizes): a reference, never a baseline
  SimResult result;
};

// One modelling assumption behind the figures, and the report sections it shapes.
struct Assumption {
  enum Section : unsigned { kCosts = 1, kCharts = 2, kBounds = 4, kLedger = 8 };
  unsigned sections = 0;  // bitmask of Section
  std::string text;       // one sentence
};

// `cost-benchmark --as-run`: the same jobs as they ran (history), priced by the same fleet file
// (PlaceAsRun, PriceAsRun). A baseline row beside the policies, not a policy: never the best
// baseline, no bound or chart of its own.
struct AsRunBaseline {
  static constexpr const char* kLabel = "as run (what you paid)";
  std::string source;      // the as-run CSV
  std::string assumption;  // how its GPUs were put in the fleet's tiers (PlaceAsRun), one sentence
  AsRunCost cost;
  // Its jobs as SimResult rows (arrival = start, finish = end as they ran) with total_cost_usd,
  // useful / busy / held GPU-seconds, so that its JCT and $/useful GPU-hour read like a policy's.
  SimResult result;
  // The one window every row is billed over (issue 38), on the policies' clock: the history's
  // first submit (or start) to its last end. `bill` is this row's bill over it.
  double window_start_s = 0, window_end_s = 0;
  WindowBill bill;
  // Each policy over the window: its bill, its difference to this row split in three, and what
  // it cost over its own horizon (its last job's end) before the window was applied.
  struct PolicyWindow {
    WindowBill bill;
    Decomposition vs_as_run;
    double own_horizon_usd = 0;
  };
  std::map<std::string, PolicyWindow> windowed;
  // Services and notebooks (kind service / notebook): held as they ran in every row, never moved
  // (cost-benchmark moves batch jobs only). Their rented GPUs as run are added to every policy's
  // window bill (cloud); the policies' simulation still sees the whole owned pool.
  int held_rows = 0;
  double held_cloud_usd = 0, held_cloud_gpu_hours = 0;
  // How every row bills rented capacity (as_run_window.h): whole nodes with the history's node
  // inventory (then the held rows' rented GPUs are in `rented.fixed`, not held_cloud_usd).
  RentedNodes rented;
  // "as run, replayed": the history under an emulation of the scheduler the user ran.
  struct Replayed {
    static constexpr const char* kLabel = "as run, replayed";
    std::string scheduler;   // kube | kueue | slurm
    std::string assumption;  // ReplayOutcome::assumption
    AsRunCost cost;          // its GPUs inside the window, priced as the as-run row (PriceAsRun)
    WindowBill bill;
    double gap_pct = 0;      // 100 (replayed - as run) / as run: the backtest's error
    double mean_wait_s = 0, history_mean_wait_s = 0;
    int delayed_fixed = 0;
  };
  std::optional<Replayed> replayed;
  // The backtest's error in percent (|gap|), 0 without a replay.
  double ErrorPct() const { return replayed ? std::abs(replayed->gap_pct) : 0.0; }
};

struct ScenarioResult {
  std::string workload;
  std::string fleet;
  std::int64_t jobs = 0;
  double duration_s = 0;
  double total_work_gpu_hours_fastest = 0;  // sum of jobs' GPU-hours on their fastest type
  std::vector<std::string> gpu_types;
  std::vector<std::string> pool_names;      // "V100 spot", ...
  std::uint64_t seed = 0;                   // the workload and simulation seed
  std::vector<PolicyOutcome> policies;      // fifo first (the baseline)
  LowerBound bound;
  double bound_horizon_s = 0;  // the LP's time span: the latest makespan of a policy that finished
  // The best baseline (BestBaseline's rule), or empty when no baseline finished every job; and the
  // cheapest baseline at least as fast as seedance on average (the matched-service view).
  std::string best_baseline;
  std::string matched_baseline;
  // Bounds for schedules whose average JCT is at most a policy's (S2.5 at a service level), on
  // the same horizon: first at the best baseline's, then at gavel-las's when it is another.
  struct ServiceBound {
    std::string policy;
    LowerBound bound;
  };
  std::vector<ServiceBound> service_bounds;
  std::vector<std::string> notes;
  std::vector<Assumption> assumptions;  // facts the figures rest on, per report section
  std::optional<AsRunBaseline> as_run;  // set by `cost-benchmark --as-run`

  const PolicyOutcome* Find(const std::string& name) const;
  // The bound at the best baseline's average JCT, or nullptr.
  const LowerBound* BoundAtBestBaseline() const;
  // "Assumes: a; b; c." for the assumptions that shape `section` (empty when none).
  std::string AssumesLine(Assumption::Section section) const;
};

// The best baseline among `policies`: the cheapest policy flagged baseline (never reference)
// that finished every job; ties go to the lower average JCT, then to the smaller name. Returns
// its index, or -1 when no baseline finished every job. With `max_avg_jct_hours` (seedance's, for
// the matched-service view): only baselines at least that fast count, and when none is, the
// fastest one.
int BestBaseline(const std::vector<PolicyOutcome>& policies,
                 double max_avg_jct_hours = std::numeric_limits<double>::infinity());

// Mean and sample standard deviation (0 for one value).
struct MeanSd {
  double mean = 0;
  double sd = 0;
};
MeanSd MeanAndSd(const std::vector<double>& values);

// `cost-benchmark --seeds`: the scenario once per workload seed, and a summary per policy.
struct SeedSweep {
  std::vector<std::uint64_t> seeds;
  std::vector<ScenarioResult> runs;  // parallel to seeds
  struct PolicySummary {
    std::string name, description;
    bool baseline = false, reference = false;
    MeanSd total_cost_usd, avg_jct_hours, p99_jct_hours;
    int unfinished_runs = 0;  // seeds where it left jobs unfinished
  };
  std::vector<PolicySummary> policies;  // in the runs' policy order
  MeanSd lower_bound_usd;
  MeanSd bound_at_best_baseline_usd;    // over the seeds that have one
  // BestBaseline's rule applied to the means, over baselines that finished every job on every
  // seed; empty when none did. And the matched-service one at seedance's mean average JCT.
  std::string best_baseline;
  std::string matched_baseline;
};

// Runs RunCostScenario for each seed (spec.seed replaced) and summarizes; spec.on_pool_interval
// sees the first seed's run only (the ledger section shows one instance).
Result<SeedSweep> RunCostScenarioSeeds(const ScenarioSpec& spec, const std::vector<std::uint64_t>& seeds,
                                       const std::function<void(const std::string&)>& progress);

// Names of the bundled workloads.
std::vector<std::string> ScenarioWorkloadNames();

// The price table `spec` reads: spec.prices_path, else data_dir/prices/gpu_prices.csv.
std::string PricePath(const ScenarioSpec& spec);
// The fleet file `spec` reads: spec.fleet_path, else data_dir/fleets/cloud-<workload>.yaml for a
// bundled workload, else "" (a jobs CSV's generic cloud fleet).
std::string FleetPath(const ScenarioSpec& spec);
// "data/prices/gpu_prices.csv" for a path under spec.data_dir, else the path as given.
std::string ShownPath(const ScenarioSpec& spec, const std::string& path);
// On-demand $/GPU-hour of GPU type `type` in `prices`; kInvalidArgument naming the table if none.
Result<double> OnDemandPrice(const cost::PriceTable& prices, const std::string& type);

// One policy of the cost scenario's roster, ready to simulate.
struct ScenarioPolicy {
  std::unique_ptr<JobPolicy> policy;
  std::string name, description;
  bool baseline = false;   // PolicyOutcome::baseline
  bool reference = false;  // PolicyOutcome::reference
};

// The policies RunCostScenario runs on `spec`, in its order (fifo first), keeping only those in
// spec.only_policies when that is not empty. Names: fifo, gavel-las, skypilot, skypilot-fastest,
// skypilot-any-of, skypilot-spot-only, gavel-cost, gavel-cost-slo, gavel-las-spot, seedance,
// seedance-oracle, seedance-<the other autoscaler>, seedance-tv<value>.
std::vector<ScenarioPolicy> ScenarioPolicies(const ScenarioSpec& spec);

// Builds the workload and fleet of `spec` (for tests and the LP benchmark).
Status BuildScenario(const ScenarioSpec& spec, Workload* workload, FleetSpec* fleet,
                     std::vector<std::string>* notes);

// Runs fifo (on-demand, heterogeneity-agnostic, reactive autoscaling), gavel-las (on-demand,
// reactive), seedance (cost-aware, spot, config's autoscaling) and seedance-reactive or
// seedance-predictive (the other autoscaler), then seedance-tv<value> for each frontier time value,
// on the scenario; then the plain bound over the latest makespan of a policy that finished every
// job, and the bound at the best baseline's average JCT on that horizon (and at gavel-las's when
// it is not the best). `progress` gets one line per step.
Result<ScenarioResult> RunCostScenario(const ScenarioSpec& spec,
                                       const std::function<void(const std::string&)>& progress);

}  // namespace seedance::sim
