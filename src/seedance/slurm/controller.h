#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "seedance/cluster/cluster.h"
#include "seedance/config/seedance_config.h"
#include "seedance/core/clock.h"
#include "seedance/core/rng.h"
#include "seedance/core/status.h"
#include "seedance/cost/node_pool.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/ledger.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/core/process.h"
#include "seedance/slurm/slurm_json.h"
#include "seedance/tenancy/admission.h"
#include "seedance/tenancy/fairness.h"

namespace seedance::slurm {

// `seedance slurm`: a controller beside slurmctld that drives Slurm with the same admission and
// placement steps as the simulator's tenancy replay (sim/tenancy_replay.cc) and `seedance server`.
// Jobs are submitted held (sbatch --hold, or held by deploy/slurm/job_submit.lua while the
// heartbeat this controller writes each cycle is fresh; a pending job of the managed partition
// that is not held is held first). Each Cycle:
//   1. reads nodes (sinfo --json -N) and jobs (squeue --json); a failing or malformed read ends the
//      cycle with an error before any action (the next cycle starts over: nothing is lost); jobs
//      of other partitions are only read: their GPUs on shared nodes count as taken, and a
//      running GPU job's devices are read for the bill (never a hold, release, requeue or signal);
//   2. rebuilds a cluster::ClusterState: nodes (GPU model from the GRES type), every job holding
//      GPUs (the devices Slurm gave it), jobs released but not started yet; down, drained and
//      audit-removed nodes take nothing, audit-observation nodes only Bronze;
//   3. reconciles the tenancy::Admitter with what Slurm reports: new held jobs are submitted
//      (account -> tenant, tier priority as tenancy::TierPriority, creation = submit time, request = GPUs),
//      ended jobs finish, a job Slurm requeued itself (its node died) is held and requeued in the
//      Admitter, an evicted job that is pending again is Evicted;
//   4. runs Admitter::Cycle; every admission is placed at once: the GPU model by throughput per
//      dollar (catalog FP16 peak / price table price, best first, within the job's GRES type and the
//      config's gpu_types), the node by the configured sched placement policy; a job no node takes
//      is never released;
//   5. acts: release = `scontrol update jobid=J nodelist=N[,N2,...]` (the nodes fix the GPU model; a
//      multi-node job gets N nodes of one model from sched::PlaceGang; + StartTime=now for a
//      requeued job) then `scontrol release J`; evict = `scancel --signal=USR1 --batch J` (slurm.preempt),
//      then after the grace period `scontrol requeuehold J` (at once without a signal); the breaker's
//      tripped accounts: their new jobs stay held with `comment=seedance: breaker ...` (squeue %k);
//      audit-removed nodes are drained with reason "seedance: audit ..." and resumed when
//      readmitted;
//   6. with a ledger: charges of every partition's jobs from accounting (sacct --json, or the jobcomp file) into the ledger
//      (source "slurm"; workload namespace = account, tenant = tenant). Only what changed is read
//      (sacct -S <cursor - charge_overlap_s>; the cursor, the last change sacct reported, is kept
//      in the ledger). Each incarnation is kept as a ledger::JobAllocation keyed by (cluster, job,
//      incarnation = its start), updated in place until it ends and never deleted; the node
//      intervals a change touches are recomputed from the stored allocations. Allocations,
//      charges and cursor are written in one transaction per cycle (all or nothing).
// Every action carries its reason; with dry_run the actions are returned but not taken.
struct ControllerConfig {
  config::SlurmSection slurm;
  tenancy::TenancyConfig tenancy;
  std::string admission_path;  // audit's admission ledger JSON (seedance audit run); "" = no audit
  std::string jobcomp_path;    // accounting from this jobcomp/filetxt file instead of sacct
  // sacct is read from the last change it reported minus this (slurmdbd records ends late).
  double charge_overlap_s = 600;
  bool dry_run = false;
  // Node pools of a fleet file (`seedance slurm --fleet F`, docs/FLEET_FILE.md): each node's
  // charges at its pool's price (by node name or partition), owned nodes as owned. A node no pool
  // matches is not charged and reported once (CycleReport::notes, unpriced_nodes()), never priced
  // at a list price. Empty: every node at the price table's price of its GPU model.
  std::vector<cost::NodePool> node_pools;
  std::string node_pools_source;  // the fleet file, for messages
};

enum class ActionKind { kRelease, kRequeue, kHold, kComment, kDrain, kResume, kSignal };
std::string_view ActionKindName(ActionKind k);

struct Action {
  ActionKind kind = ActionKind::kRelease;
  std::int64_t job = 0;      // 0 for node actions
  std::string node;
  std::string gpu_type;      // kRelease: the catalog model chosen
  std::string reason;
  std::vector<std::vector<std::string>> commands;
  bool ok = true;            // false: a command failed (error says which); retried next cycle
  std::string error;
};
// "release job 12 -> n2 (H100 x2): admitted (tenant gold, ...)  [scontrol ...]" for logs.
std::string FormatAction(const Action& a, bool with_commands);

struct CycleReport {
  double now_s = 0;
  std::vector<Action> actions;
  std::vector<std::string> notes;  // what changed without a Slurm action (finished, adopted, ...)
  int queued = 0;                  // jobs waiting in the Admitter
  int admitted = 0;                // released or running
  int blocked = 0;                 // held for a reason (breaker, bad request)
  std::set<std::string> tripped;   // accounts the breaker holds
  double wake_at_s = 0;            // > 0: a victim's grace period ends then; cycle again at that time
};

// `t` (Unix seconds) as sacct reads -S: "2026-12-02T13:47:08", the host's local time.
std::string SacctTime(std::int64_t unix_s);

class Controller {
 public:
  // `ledger` may be null (no charges, no breaker). `prices` and `runner` outlive the controller.
  // Errors: kInvalidArgument (mode, policy, tenants without a `gpu` quota).
  static Result<std::unique_ptr<Controller>> Create(ControllerConfig config, CommandRunner& runner,
                                                    const Clock& clock, const cost::PriceTable& prices,
                                                    ledger::Ledger* ledger);
  ~Controller();

  Result<CycleReport> Cycle();
  // A stopping controller (SIGTERM) hands back what it holds: removes the heartbeat (the job_submit
  // plugin fails open at once), then `scontrol release`s the jobs it keeps waiting (queued, or
  // admitted with no node yet; requeued ones with StartTime=now) so Slurm schedules them itself.
  // Jobs held for a reason (breaker, bad request) stay held. Nothing with dry_run.
  CycleReport Shutdown();

  // GPU models in the order the controller tries them (throughput per dollar, best first).
  const std::vector<cluster::GpuModelIndex>& gpu_order() const { return gpu_order_; }
  // Every release that Slurm accepted, in order: (job, node).
  const std::vector<std::pair<std::int64_t, std::string>>& releases() const { return releases_; }
  // With node pools: the nodes no pool matched (not charged), each with the error naming it.
  const std::map<std::string, std::string>& unpriced_nodes() const { return unpriced_nodes_; }

 private:
  class Env;
  struct Tracked;
  Controller(ControllerConfig config, CommandRunner& runner, const Clock& clock, const cost::PriceTable& prices,
             ledger::Ledger* ledger);
  Status Init();
  Result<std::string> Read(const std::vector<std::string>& argv);
  void Execute(Action& a);
  struct Request;
  Result<Request> Classify(const SlurmJob& j) const;
  Result<cluster::GpuModelIndex> ModelOfGres(const std::string& type) const;
  // Places an admitted job (GPU model by gpu_order_, node by the policy), binds it and releases
  // it on Slurm. False when no node takes it (nothing is released).
  bool Place(std::int64_t id, Tracked& t, double now, CycleReport& r, const std::string& why);
  void Release(std::int64_t id, Tracked& t, CycleReport& r, const std::string& why);
  // Preemption with a checkpoint: preempt_signal set and a grace period.
  bool Signals() const;
  // `scancel --signal=SIG --batch J`: the victim checkpoints; requeued after the grace period.
  void Signal(std::int64_t id, Tracked& t, double now, CycleReport& r);
  // `jobs`: the managed partition's; `others`: active jobs of other partitions (their GPUs on
  // shared nodes are taken all the same; they are never acted on).
  Status BuildState(const std::vector<SlurmNode>& nodes, const std::vector<SlurmJob>& jobs,
                    const std::vector<SlurmJob>& others, CycleReport& r);
  Status Charge(double now, const std::vector<SlurmNode>& nodes);
  // (cluster, job, incarnation): the key of a charge.
  using AllocKey = std::tuple<std::string, std::int64_t, std::int64_t>;
  // Accounting since the cursor; `open`: the ledger's allocations not ended yet.
  Result<std::vector<AcctRecord>> ReadAccounting(std::optional<std::int64_t> cursor,
                                                 std::map<AllocKey, std::vector<ledger::JobAllocation>>& open);
  Status ChargeInTransaction(double now, const std::vector<SlurmNode>& nodes, const std::vector<AcctRecord>& recs,
                             std::optional<std::int64_t> cursor,
                             const std::map<AllocKey, std::vector<ledger::JobAllocation>>& open);
  Status RechargeNode(const std::string& node, std::int64_t changed_ms);
  Status EvaluateBreaker(double now, CycleReport& r);
  // The GPU devices per node of running jobs whose incarnation has none yet (`scontrol show job -d`:
  // one read per job, or one for all when there are many), managed or observed; a failed read is a
  // note, retried.
  void ReadGpuDetail(CycleReport& r);
  // Running GPU jobs of the partitions the controller does not manage: `observed_` follows them
  // (read-only) so that their charges carry their devices and join their GPU telemetry.
  void Observe(const std::vector<SlurmJob>& others, CycleReport& r);
  // The devices read for incarnation `start_s` of job `id` (managed or observed); null if none.
  const std::map<std::string, std::vector<int>>* DevicesOf(std::int64_t id, std::int64_t start_s) const;
  // Each running job's idle time (Tracked::idle_s, RunningState::idle_s) from the ledger's samples
  // of its GPUs (node + device index), at its tier's reclaim_util_below.
  Status ReadGpuTelemetry(double now);

  ControllerConfig config_;
  CommandRunner& runner_;
  const Clock& clock_;
  const cost::PriceTable& prices_;
  std::map<std::string, std::string> unpriced_nodes_;  // node -> why (node pools matched none)
  std::vector<std::string> new_unpriced_;              // reported in the next CycleReport
  ledger::Ledger* ledger_;
  tenancy::TenancyMode mode_ = tenancy::TenancyMode::kSeedance;
  std::unique_ptr<tenancy::Admitter> admitter_;
  std::unique_ptr<tenancy::FairShareTracker> fair_;
  std::map<std::string, int> tenant_index_;
  int gpu_resource_ = -1;
  std::vector<cluster::GpuModelIndex> gpu_order_;
  sched::PolicyContext ctx_;
  std::unique_ptr<sched::PlacementPolicy> placer_;
  Rng placer_rng_{0};
  std::vector<std::string> node_names_;
  std::unique_ptr<cluster::ClusterState> state_;
  std::map<std::int64_t, std::unique_ptr<Tracked>> tracked_;
  // A running GPU job outside the managed partition: never acted on (no hold, release, requeue,
  // signal or comment); its devices per node are read once per incarnation, as for managed jobs.
  struct Observed {
    double start_s = 0;
    double gpu_start_s = -1;  // the start the devices belong to (-1: not read yet)
    std::map<std::string, std::vector<int>> node_gpus;
  };
  std::map<std::int64_t, Observed> observed_;
  std::vector<std::pair<std::int64_t, std::string>> releases_;
  std::set<std::string> tripped_;
  std::set<std::string> open_nodes_;  // nodes that took new work last cycle
  std::map<std::string, std::string> trip_reason_;
  std::set<std::pair<std::string, std::int64_t>> trips_recorded_;
  double last_now_ = -1;
  std::vector<double> held_, demand_;
};

}  // namespace seedance::slurm
