#pragma once

// "as run, replayed" (issue 38, "A status-quo backtest that earns trust"): the history's jobs
// replayed at their real submit times under an emulation of the scheduler the user ran, on the
// fleet's nodes, each job running for as long as it ran. Priced like the as-run bill (PriceAsRun)
// over the same window, it tells how far the simulator's status quo is from what was paid: the
// backtest's error, which no claimed saving may be smaller than.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/fleet_file.h"

namespace seedance::sim {

enum class ReplayScheduler {
  kKube,   // kube-scheduler's default profile (+ the cluster autoscaler for rented node groups)
  kKueue,  // Kueue admission by the namespaces' GPU quotas, then kube-scheduler
  kSlurm,  // Slurm: priority by age (multifactor, age only) and backfill
};
std::string_view ReplaySchedulerName(ReplayScheduler s);
// "kube", "kueue", "slurm"; kInvalidArgument naming the accepted values otherwise.
Result<ReplayScheduler> ParseReplayScheduler(std::string_view text);

enum class HistoryKind { kBatch, kService, kNotebook };

// One row of the history, times in seconds from the window's start.
struct ReplayJob {
  std::string job;        // its key in the output intervals
  std::string tenant;     // namespace (Kueue's quotas), Slurm account
  std::string gpu_type;   // canonical
  int gpus = 1;           // the whole gang's
  int pods = 1;           // a gang: all pods placed at once or none
  double submit_s = 0, start_s = 0, end_s = 0;  // submit <= start; the run lasts end - start
  bool spot = false;      // ran on spot capacity: replayed on the type's spot nodes only
  HistoryKind kind = HistoryKind::kBatch;
};

struct ReplayOptions {
  ReplayScheduler scheduler = ReplayScheduler::kKube;
  int gpus_per_node = 8;                // the owned, reserved and on-demand nodes' size (spot: gpus_per_instance)
  std::map<std::string, int> quotas;    // kKueue: namespace -> nominal GPU quota (all types); empty = none
  double scale_down_s = 600;            // cluster autoscaler's scale-down-unneeded-time (kube, kueue)
  // Rented nodes billed whole (RentedNodes::whole_nodes, the history's node inventory): the rented
  // nodes are sized as the history's (`rented_nodes`: type, tier, GPUs); with `static_rented` (the
  // history's rented nodes were up all its window) and under slurm they are the history's nodes,
  // there throughout; else the autoscaler adds nodes of the history's size within the quota.
  bool whole_nodes = false;
  bool static_rented = false;
  struct HistoryNode {
    std::string gpu_type;  // canonical
    Tier tier = Tier::kOnDemand;
    int gpus = 8;
  };
  std::vector<HistoryNode> rented_nodes;
};

struct ReplayOutcome {
  std::vector<AsRunInterval> run;       // what each job held, by tier, at its replayed times
  // whole_nodes: each rented node while it was up ("node <k>", its GPUs; end +infinity: up
  // throughout, a static node)
  std::vector<AsRunInterval> rented_up;
  std::map<std::string, double> start_s;  // job -> replayed start
  double mean_wait_s = 0, history_mean_wait_s = 0;  // batch jobs' start - submit, replayed and as run
  int delayed_fixed = 0;                // services / notebooks that could not start at their time
  std::string assumption;               // the emulation's rules, one sentence
};

// Replays `jobs` on `fleet`'s GPUs: per type, owned and reserved nodes exist throughout; on-demand
// and spot nodes (up to the quota, max_gpus) exist while needed. Services and notebooks are held as
// they ran: they go first at their real start (a higher priority class), batch jobs queue from
// their submit time. kube / kueue: pending pods in (priority, creation) order, no head-of-line
// blocking; a pod goes to the node of its type with the most GPUs free after it (NodeResourcesFit
// LeastAllocated; ties: node order); when no existing node fits, the cluster autoscaler adds a
// rented node of the type (spot for spot jobs) within its quota, and removes one empty for
// scale_down_s. slurm: jobs by age; the first that cannot start reserves the earliest time it can,
// and later jobs start now only if they do not delay it (backfill); nodes by weight (owned, then
// reserved, then rented cloud nodes), best fit. Errors: a job of a type the fleet lacks, or one
// that cannot fit in the type's whole capacity, named.
Result<ReplayOutcome> ReplayHistory(const FleetFile& fleet, const std::vector<ReplayJob>& jobs,
                                    const ReplayOptions& options);

}  // namespace seedance::sim
