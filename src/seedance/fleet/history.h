#pragma once

#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/fleet/scenario.h"
#include "seedance/sim/fleet.h"
#include "seedance/tenancy/tiers.h"

// The user's own week (issue 38): `cost-benchmark --workload fleet-week --fleet F --history DIR`
// runs the history `seedance export workload` wrote (docs/FLEET_WEEK.md, "Your week") instead of
// the bundled synthetic jobs. DIR holds
//   jobs.csv      the batch jobs (sim::LoadJobsCsv's format; arrival_s = submit, from the window start);
//   as-run.csv    one row per job as it ran: namespace, pod, gpu_type, gpus, start, end and the
//                 optional kind (batch | service | notebook; default batch), busy_s, pods (a batch
//                 job's gang), submit, job_id (matches jobs.csv's, to put both files on one clock
//                 and give a job its pods);
//   services.csv  optional: namespace, deployment, gpu_type, gpus_per_replica, time, replicas and the
//                 optional requests_per_s, one row per change of a deployment's replica count.
// The mapping: batch jobs -> TrainingJob (gangs of `pods` pods, as many as the GPUs
// need at 8 a node when as-run.csv does not say; the steps_per_s_<TYPE> speeds), notebook rows ->
// DevPod sessions (in use for busy_s, then idle until the row's end), services -> serving
// deployments (demand from requests_per_s when every row of the deployment has it, else replicas x
// the measured capacity of one replica; services.csv wins over service rows of as-run.csv, which
// are otherwise grouped by namespace and GPU type), namespaces -> tenants.
namespace seedance::fleet {

inline constexpr const char* kHistoryJobsFile = "jobs.csv";
inline constexpr const char* kHistoryAsRunFile = "as-run.csv";
inline constexpr const char* kHistoryServicesFile = "services.csv";

// One deployment of the history, on the window's 60 s clock.
struct HistoryService {
  std::string name;             // "namespace/deployment"
  std::string tenant;           // the namespace
  int type = 0;                 // fleet type index of its replicas
  int gpus_per_replica = 1;
  std::vector<double> replicas;        // per step
  std::vector<double> requests_per_s;  // per step; empty = the history has no request rate
  std::string origin;           // "services.csv:4" or "as-run.csv (kind=service rows)"
};

struct UserHistory {
  std::string dir;
  double window_s = 0;          // whole hours from the first submit / start / change, at most a week
  struct Tenant {
    std::string name;           // the namespace
    tenancy::Tier tier = tenancy::Tier::kSilver;
    double nominal_gpus = 0;    // its peak GPUs held at once in the history (at least its largest gang)
  };
  std::vector<Tenant> tenants;  // sorted by name
  std::vector<TrainingJob> jobs;        // tenant = index into tenants; by (arrival_s, id)
  std::vector<DevPod> dev;              // by (arrival_s, id)
  std::vector<HistoryService> services;
  int jobs_dropped = 0;         // batch jobs that run on no type of the fleet
  int gangs = 0;                // batch jobs of more than one pod (TrainingJob::pods)
  int gangs_reshaped = 0;       // jobs whose as-run pod count was changed to split their GPUs evenly
  int rows_after_window = 0;    // rows that begin after the window (a week), left out
  std::vector<std::string> notes;       // what the mapping assumed, one line each
};

// Reads DIR against the fleet's types. Errors (kInvalidArgument / kNotFound) name the file, line
// and field: a missing file or column, a bad time or number, an unknown kind, an end before its
// start, busy_s past the run, a GPU type the fleet does not have, services.csv out of order.
Result<UserHistory> ReadUserHistory(const std::string& dir, const sim::FleetSpec& fleet);

// The scenario's work replaced by the history's: tenants, jobs, notebooks and the serving
// deployments (Llama-2-7B on the Azure conversation mix, profiled on `serving_types`; demand as
// said above), and the horizon set to the history's window. Serving controllers are tuned on and
// read the history's own week as "the week before" (a single exported week has no other; both
// stacks alike). Errors: a service whose type cannot serve the model (naming its origin).
Status ApplyUserHistory(const UserHistory& h, const std::vector<std::string>& serving_types, FleetWeekScenario* s);

}  // namespace seedance::fleet
