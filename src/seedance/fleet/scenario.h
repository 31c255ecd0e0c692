#pragma once

#include <cstdint>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/fleet/serving.h"
#include "seedance/sim/fleet.h"
#include "seedance/tenancy/tiers.h"

// The fleet week (issue 30): one fleet, one clock, a week of every kind of work. This file builds
// the scenario (what happens); engine.h runs a stack of policies on it (what each stack decides).
namespace seedance::fleet {

inline constexpr int kGpusPerNode = 8;       // every node of the fleet week: 8 GPUs of one type
inline constexpr double kStepS = 60;         // the clock's step (admission, serving, autoscaling)
inline constexpr double kWeekS = 7 * 86400.0;
// Notebooks in use: bursts of GPU use and think time at zero use (issue 39), each exponential.
inline constexpr double kThinkBurstMeanS = 15 * 60.0;
inline constexpr double kThinkGapMeanS = 5 * 60.0;
// A notebook's GPU memory need (issue 39): log-uniform from this floor to its GPU type's memory.
inline constexpr double kNotebookMemoryFloorGb = 4;

// One training job: a gang of `gpus` GPUs of one type, in `pods` pods of gpus / pods GPUs each (1 pod:
// one node; more: pods on nodes of one pool, placed all or nothing). `total_steps` is
// the truth only the engine reads; policies see the submission (GPUs, speeds, deadline, estimate).
struct TrainingJob {
  std::int64_t id = 0;
  std::string name;            // job type, e.g. "full-7b" or "philly-vc0e4a51"
  std::string kind;            // "llm-finetune" | "philly"
  int tenant = 0;              // index into FleetWeekScenario::tenancy.tenants
  double arrival_s = 0;
  int gpus = 1;
  int pods = 1;                // REQUIRES: gpus % pods == 0
  std::vector<double> steps_per_s;  // per fleet GPU type; 0 = cannot run there
  double total_steps = 0;
  double user_estimate_steps = 0;   // 0 = none
  double pflop_per_step = 0;        // model FLOPs of one step, PFLOP (useful work)
  double deadline_s = std::numeric_limits<double>::infinity();  // absolute
  double checkpoint_s = 1800;
};

// A dev / notebook pod: one GPU of `type`, used for `active_s`, then held idle for `idle_tail_s`
// until its user closes it (the idle tail idle reclaim targets).
struct DevPod {
  std::int64_t id = 0;
  int tenant = 0;
  double arrival_s = 0;
  int type = 0;
  double active_s = 0;
  double idle_tail_s = 0;
  // Think time inside the active period: (offset into the session's active time, length) of each
  // stretch at zero GPU use between bursts of use (issue 39). A detector reading GPU activity
  // sees it as idle; a session stopped during it is a session cut while in use.
  std::vector<std::pair<double, double>> think_gaps;
  // GPU memory the notebook needs, GB (issue 39: whether it fits a MIG slice); 0 = unknown (it
  // takes a whole GPU wherever it runs).
  double memory_gb = 0;
};

struct ServingDeployment {
  DeploymentSpec spec;
  std::string tenant;         // Gold; deployments are not queued (they run outside Kueue)
  Demand demand;              // the week's true demand; controllers see only its past
  Demand history;             // the week before `demand` (whole weeks): what controllers may read at step 0
  Demand tuning_demand;       // week 1 (week 0 here) of the same seed: what every controller is tuned on
  Demand tuning_history;      // the week before the tuning week
  double tuning_peak_rps = 0; // the tuning week's peak: sizes the standard stack's single type
  ServingProfile vllm;        // one replica per GPU type under vLLM at its tuned knobs
  ServingProfile seedance;    // ... under Seedance's batching
};

struct FleetWeekScenario;

// Loads a fleet file for the week and checks it can hold the scenario: the file parses, every type
// has a price, and one type can serve the deployments. Errors: kInvalidArgument / kNotFound naming
// the file (and its line and field where the parser knows them). A non-empty `history_dir` is read
// against the fleet too (history.h; its errors name the file, line and field).
Status CheckFleetWeekFleet(const std::string& data_dir, const std::string& fleet_file,
                           const std::string& history_dir = "");

struct FleetWeekOptions {
  std::string data_dir;       // bundled data (core DataDir())
  std::string shape = "a";    // fleet shape: a (tuning) | b (held out)
  int week = 0;               // 0 = week 1 (tuning) | 1 = week 2 (held out)
  std::uint64_t seed = 0;     // 0-4 tuning, 5-9 held out
  std::string cache_dir;      // serving capacity profiles ("" = no cache)
  std::string fleet_file;     // "" = the shape's bundled file (FleetFileOf); else the user's fleet
  // "" = the bundled work; else a directory of the user's history (history.h: jobs.csv, as-run.csv,
  // services.csv) whose jobs, notebooks, services and tenants replace it (week and seed unused).
  std::string history_dir;
  // Serving profiles measured for an earlier scenario of the same data and fleet types: reused
  // instead of measured again (they depend on neither the week nor the seed).
  const FleetWeekScenario* profiles_from = nullptr;
  // Progress of serving profiles measured (not cached): a line per bucket (nullptr = none).
  std::ostream* progress = nullptr;
};

// Controller settings tuned on a deployment's tuning week, by (deployment, batching, autoscaler,
// mix): tuning depends on neither the stack's other layers nor the run, so every run of a scenario
// shares it. Runs of one scenario on several threads (the comparison's RunWeeks) hold `mu` while
// they read or fill it (not while they tune).
struct TunedServingPolicies {
  std::mutex mu;
  // The chosen policy and the share it served on the tuning week.
  std::map<std::string, std::pair<ServingPolicy, double>> by_key;
  // The share the chosen policy served on the tuning week with its replicas on nodes already up
  // (only the model load: the warm path, TuneWarmPath), by the same key.
  std::map<std::string, double> warm_share;
};

struct FleetWeekScenario {
  FleetWeekOptions options;
  std::string name;           // "fleet-week a w1 s0"
  sim::FleetSpec fleet;       // types and pools (owned / reserved first, then on-demand, spot)
  tenancy::TenancyConfig tenancy;  // tenants with "gpu" quotas in one cohort
  std::vector<TrainingJob> jobs;   // by (arrival_s, id)
  std::vector<DevPod> dev;         // by (arrival_s, id)
  std::vector<ServingDeployment> serving;
  double horizon_s = kWeekS;
  // By fleet type: an owned GPU's marginal cost of running, $ per GPU-hour (the power and cooling
  // parts of the fleet file's TCO model; 0 for a type with no owned GPUs).
  std::vector<double> owned_marginal_usd_per_gpu_hour;
  std::vector<std::string> assumptions;  // one line each, printed beside the figures
  std::shared_ptr<TunedServingPolicies> tuned = std::make_shared<TunedServingPolicies>();
};

// The price the serving controllers see for one replica GPU of fleet type `fleet_type` (issue 39):
// the type's on-demand price when the fleet has an on-demand pool of it, else its owned GPUs'
// marginal (power and cooling) cost, else 0 (reserved only: paid whether used or not).
double ServingTypePrice(const FleetWeekScenario& s, int fleet_type);

// The fleet file of a shape: data/fleets/fleet-week-<shape>.yaml.
std::string FleetFileOf(const std::string& data_dir, const std::string& shape);

// Builds the week. Errors: kInvalidArgument for an unknown shape, week or a bad bundled file.
Result<FleetWeekScenario> BuildFleetWeek(const FleetWeekOptions& options);

}  // namespace seedance::fleet
