#pragma once

// The as-run baseline (issue 28): the as-run CSV `seedance export workload --as-run` writes, read
// back, and the period it describes priced by a fleet file (sim::PlaceAsRun, sim::PriceAsRun).
// `export workload --fleet` and `cost-benchmark --as-run` price it through PriceAsRunOnFleet, so
// both print the same total for the same rows and fleet.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/cost/node_pool.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/workload_history.h"
#include "seedance/sim/as_run_backtest.h"
#include "seedance/sim/fleet_file.h"
#include "seedance/sim/scenarios.h"

namespace seedance::cli {

// What the as-run figures assume, for the output: sim::PlaceAsRun's rule, and that no history
// source (ledger, sacct) says which nodes were spot.
extern const char* const kAsRunAssumption;

// One job as it ran.
struct AsRunRow {
  std::uint32_t line = 0;  // its line in the CSV (0: not read from one)
  std::int64_t job_id = 0;
  std::string job;         // namespace/pod
  std::string gpu_type;    // as written
  int gpus = 0;
  std::int64_t start_ms = 0, end_ms = 0;
  bool spot = false;       // the optional `spot` column: the job ran on spot (priced by the spot pool)
  // Optional columns of the history contract (issue 38); absent: today's behaviour.
  std::optional<std::int64_t> submit = std::nullopt;  // `submit` (empty or absent: unknown, the start)
  int pods = 1;                // `pods`: a gang's pod count
  sim::HistoryKind kind = sim::HistoryKind::kBatch;  // `kind`: batch | service | notebook
  std::string tenant = {};     // the namespace
  std::string evidence = {};   // `evidence`: where the row comes from ("sacct", ...)
  // `tiers` (export workload --fleet): "owned 2 (pool) + on-demand 2": the tiers it ran in; with
  // node pools, its node's pool, as the history says.
  std::string tiers = {};
  std::int64_t SubmitMs() const { return submit.value_or(start_ms); }
};

// Reads an as-run CSV (columns job_id, namespace, pod, gpu_type, gpus, start, end by name, and
// the optional spot: true / false, added by the user who knows; the others are ignored). Errors (kInvalidArgument) name file:line:column and the field; a job_id
// listed twice, an end before its start and a file without rows are errors too.
Result<std::vector<AsRunRow>> ReadAsRunCsv(const std::string& path);

// The as-run nodes file (issue 38): the history's node inventory beside the as-run CSV, written by
// `export workload --fleet` with node_pools and found by `cost-benchmark --as-run` by its name
// ("as-run.csv" -> "as-run.nodes.csv"; AsRunNodesPath). One row per node that the ledger billed
// over the as-run period:
//   node,pool,kind,gpu_type,gpus,up_from,up_to,up_hours,usd_per_gpu_hour,bill_usd,idle_usd
// kind: owned | reserved | on-demand | spot (its node pool's); up_from / up_to: its first billed
// step's start and its last one's end (RFC 3339 UTC); up_hours: the billed time (gaps left out);
// bill_usd / idle_usd: the ledger's bill of the node and its unshared idle, to the micro-dollar
// (what `attribute --fleet` sums over the same range). With it, the as-run row is the sum of the
// bills and every row of the backtest bills rented nodes whole (sim::RentedNodes); without it,
// rented GPUs are billed per GPU in use (the files of earlier exports).
std::string AsRunNodesPath(const std::string& as_run_csv);

struct AsRunNodeRow {
  std::uint32_t line = 0;
  std::string node, pool, gpu_type;  // gpu_type canonical
  sim::Tier tier = sim::Tier::kOwned;
  int gpus = 0;
  std::int64_t up_from_ms = 0, up_to_ms = 0, up_ms = 0;
  Money bill, idle;
};

// Reads an as-run nodes file; errors name file:line:column and the field.
Result<std::vector<AsRunNodeRow>> ReadAsRunNodesCsv(const std::string& path);

// The nodes file's text: `nodes` (the ledger's, NodeUpTimes) with each node's pool (`pool_of`).
// A node without a pool is an error naming it.
Result<std::string> AsRunNodesCsv(const std::vector<ledger::NodeUpTime>& nodes,
                                  const std::function<const cost::NodePool*(const std::string&)>& pool_of);

struct FleetAsRun {
  std::int64_t period_start_ms = 0, period_end_ms = 0;  // the first start and the last end
  std::vector<sim::AsRunInterval> placed;  // the rows' GPUs in the fleet's tiers (sim::PlaceAsRun)
  sim::AsRunCost cost;                     // usd_by_job keyed by JobKey(row)
  bool by_tiers_column = false;            // placed by the CSV's tiers column (node pools), not PlaceAsRun
};

// The rows' period (the window every row of `cost-benchmark --as-run` is billed over): the first
// submit (its start when the row has none) and the last end (rows not empty).
std::pair<std::int64_t, std::int64_t> AsRunPeriod(const std::vector<AsRunRow>& rows);

// The key of a row in FleetAsRun's intervals and usd_by_job: "namespace/pod (job_id N)".
std::string JobKey(const AsRunRow& row);

// Places the rows' GPUs in `fleet`'s tiers and prices them over [first start, last end] (owned
// and reserved GPUs billed for all of it, used or not). When every row has a `tiers` column (an
// export with node pools: the tier of the node it ran on), those tiers are kept, else
// sim::PlaceAsRun places them. Errors (kInvalidArgument) are sim's,
// naming the job and the type, with times in seconds after the first start (which they state).
Result<FleetAsRun> PriceAsRunOnFleet(const sim::FleetFile& fleet, const cost::PriceTable& prices,
                                     const std::vector<AsRunRow>& rows);

// "as run, replayed" (issue 38): the rows replayed from their submit times under `options`'
// scheduler on `fleet`, priced over the rows' period like PriceAsRunOnFleet (`as_run`, its result),
// and its gap to it.
Result<sim::AsRunBaseline::Replayed> ReplayAsRunOnFleet(const sim::FleetFile& fleet, const cost::PriceTable& prices,
                                                        const std::vector<AsRunRow>& rows, const FleetAsRun& as_run,
                                                        const sim::ReplayOptions& options);

// Services and notebooks held as they ran (issue 38): their count and their rented GPUs' cost and
// GPU-hours as run (from `as_run`'s placement) into `out`.
Status HoldServicesAsRun(const sim::FleetFile& fleet, const cost::PriceTable& prices, const std::vector<AsRunRow>& rows,
                         const FleetAsRun& as_run, sim::AsRunBaseline* out);

// The scheduler the history ran under, by default: slurm when every row comes from sacct, else kube.
sim::ReplayScheduler DefaultReplayScheduler(const std::vector<AsRunRow>& rows);

// cost-benchmark's --as-run inputs.
struct AsRunInputs {
  std::string as_run;     // the as-run CSV
  std::string fleet;      // --fleet
  std::string workload;   // --workload: the jobs CSV exported with it
  std::string scheduler;  // --as-run-scheduler; empty: DefaultReplayScheduler
};

// --as-run: the as-run CSV of the jobs the policies run, priced by the same fleet file, with its
// window and its replay ("as run, replayed"). The two files must describe the same batch jobs.
Result<sim::AsRunBaseline> LoadAsRunBaseline(const AsRunInputs& o, const sim::ScenarioSpec& spec);

// Bills every policy of `run` over the as-run window (sim::ApplyAsRunWindow) on the fleet the
// policies ran on; `intervals` are their pool intervals by policy.
Status ApplyAsRunWindowOnFleet(const AsRunInputs& o, const sim::ScenarioSpec& spec,
                               const std::map<std::string, std::vector<sim::PoolInterval>>& intervals,
                               sim::ScenarioResult* run);

// Prints sim::FleetPriceWarnings of `fleet` to stderr ("seedance: warning: ...").
void WarnImplausiblePrices(const sim::FleetFile& fleet, const cost::PriceTable& prices);

// JobKey -> "owned 2 + on-demand 2": the tiers each job's GPUs were placed in.
std::map<std::string, std::string> TiersByJob(const FleetAsRun& priced);

}  // namespace seedance::cli
