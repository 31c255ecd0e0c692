#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/fleet/scenario.h"
#include "seedance/tenancy/admission.h"

// The fleet week's engine: one clock (60 s steps) over one fleet. Training jobs and notebooks are
// admitted by tenancy's Admitter, given a pool (GPU type and owned / on-demand / spot) by the
// stack's pool rule and a node by sched's placement policy (a gang of several pods: all or
// nothing in one pool, pod by pod with the same policy); serving replicas are sized by the
// deployment's controller and placed the same way; a cluster autoscaler boots on-demand and spot
// nodes for pods that fit nowhere (cold start) and removes nodes empty for the scale-down delay;
// spot nodes are taken back when the pool's availability series drops. Everything is billed per
// second of a node held; committed pools (owned, reserved) for the whole week.
namespace seedance::fleet {

// One stack: a setting of every layer. The standard stack is what a platform team runs today,
// each part at its best stated settings; Seedance switches its layers on one by one.
struct StackConfig {
  std::string name;
  // Tenancy: Kueue with borrowing and Fair Sharing (kFairSharing), or Seedance's admission
  // (kSeedance: tier guarantees, reclaim, compensation and idle reclaim of idle allocations).
  tenancy::TenancyMode tenancy = tenancy::TenancyMode::kFairSharing;
  // Placement of every pod on a node of its pool: kube-scheduler NodeResourcesFit
  // "least-allocated" (the default) or "most-allocated" (bin packing), or Seedance's "seedance".
  std::string placement = "least-allocated";
  // Pool and GPU type of a training job: false = Kueue's flavor order (owned / reserved first)
  // then SkyPilot managed jobs' any_of (cheapest $ per step among launchable spot and on-demand
  // candidates, failover down the list); true = Seedance's cost-aware choice (spot priced by its
  // observed preemption rate, deadlines and the submitter's estimate decide spot vs on-demand) and
  // moves of running jobs from cloud pools to committed GPUs that fall free.
  bool cost_aware = false;
  // ... a move goes only to a committed type at least this fast relative to the cloud type it
  // leaves (Seedance's patience for slower owned GPUs; issue 30 used 0.8).
  double migrate_min_speed = 0.8;
  // Serving: the batching engine of every replica ("vllm" at its tuned knobs, or "seedance")...
  std::string batching = "vllm";
  // ... and the fleet of replicas: false = one GPU type (the cheapest single type for the tuning
  // week's peak) with a reactive HPA; true = the planner's GPU mix resized by the forecaster
  // (`predictive`) or, with predictive off, by the same reactive rule.
  bool serving_planner = false;
  bool predictive = true;
  // The planner's forecaster is tuned to serve, on the tuning week, at least what the competent
  // base's KEDA cron + HPA served there on both paths a replica takes in the fleet: a node booted
  // for it (node cold start + model load) and a node already up (the model load only). Off: the
  // cold path only (before 2026-12-07, when Seedance's SLO fell below the base's on fleet a week 1).
  bool serving_warm_path = true;
  // One GPU type (serving_planner off) with KEDA: a cron trigger per hour of the week whose
  // desiredReplicas a platform team sets from the same hour one week back (times a headroom), and
  // the HPA on request rate beside it (KEDA scales to the largest of its scalers). That is the
  // seasonal-naive predictive controller on the single type, tuned on the tuning week like every
  // other controller (its HPA target and headroom).
  bool keda_cron = false;
  // Kueue WorkloadPriorityClass for work with a deadline (a competent team's lever, issue 39): a
  // training job with a deadline is queued and admitted at its tier's priority plus
  // kDeadlinePriorityBoost (still below the next tier), so Kueue orders it ahead of its tier's
  // other work and its withinClusterQueue / reclaimWithinCohort LowerPriority preemption may evict
  // that work for it. Queue order and quota only: pods keep their PriorityClass.
  bool deadline_priority_class = false;
  // Seedance's form of it (issue 39, round 8): the boost only once the week has shown a standing
  // backlog on the committed GPUs (the backlog rule's test at a job's arrival: the training
  // waiting then asks for more GPUs than the committed pools hold), where queue order decides
  // which deadlines are met; before, its tier's priority, so a fleet that rents the cloud for what
  // waits keeps its queue order (and its preemptions). Reads the queue at arrivals. No constant.
  bool deadline_priority_under_backlog = false;
  // Notebooks: JupyterHub's idle culler (jupyterhub-idle-culler --timeout; 0 = none): a notebook
  // whose GPU has been idle this long is stopped, whether its user is thinking or gone.
  double idle_cull_s = 0;
  // Seedance's idle reclaim: every tier's idle limits (max_idle_s, reclaim_after_s) raised to at
  // least this grace (0 = the tier defaults). Idleness is measured GPU activity, think time included.
  double idle_grace_s = 0;
  // A Gold serving replica that fits no free room: kNone boots a node for it (issue 30's stacks);
  // kPriorityClass: kube-scheduler's default preemption with PriorityClasses (Gold serving above
  // Silver and Bronze training) on any node of the replica's pools, victims by priority, blind to
  // checkpoints; kCheckpointAware (Seedance): on committed (owned / reserved) nodes first (the
  // cloud pools of the replica only when no committed one can be freed), the lowest priorities
  // first, then the training pods whose preemption loses the least work since their checkpoint.
  enum class ServingPreemption { kNone, kPriorityClass, kCheckpointAware };
  ServingPreemption serving_preemption = ServingPreemption::kNone;
  // Owned-GPU defragmentation (Seedance, issue 39): while a training gang that fits no committed
  // node waits in the queue, the committed node with the fewest GPUs in use whose training pods
  // all fit elsewhere on committed GPUs (no slower than defrag_min_speed of their type) is
  // emptied for it: each pod checkpoints and restarts on the other node (the checkpoint and the
  // restart are its cost). Never notebooks or serving replicas; at most kDefragNodesPerStep nodes
  // a step, each for a gang waiting now (the queue, not its future).
  bool defragment = false;
  double defrag_min_speed = 0.8;
  // ... and only a node with at most this share of its GPUs in use is emptied (issue 39, round 4:
  // at half a node, the up to four pods moved filled the holes Gold replicas and notebooks would
  // take, which then preempted training or booted cloud nodes: the layer alone cost +1.2 % on the
  // tuning week). Tuned (kDefragMaxBusyShareGrid).
  double defrag_max_busy_share = 0.5;
  // Cloud nodes under Karpenter (issue 39). right_size: an on-demand pool whose fleet file lists
  // the shapes the cloud sells (`on_demand.node_gpus`) boots, for a pod that fits no node, the
  // cheapest shape that holds it (every shape at the pool's one per-GPU price: the smallest);
  // otherwise nodes of kGpusPerNode. Empty cloud nodes go after consolidate_after_s (Karpenter's
  // consolidateAfter) instead of cluster-autoscaler's scale-down delay.
  bool right_size = false;
  // Underutilized cloud nodes (consolidationPolicy WhenEmptyOrUnderutilized): kKarpenter drains a
  // node whose pods all fit on the other held nodes of its pool (deletion), or on one cheaper new
  // node (replacement, pre-spun; on-demand only: spot is deletion-only by default), each evicted
  // training pod restarting from its last checkpoint (the work since is lost); kCheckpointAware
  // (Seedance) does the same for nodes with at most consolidate_max_used_share of their GPUs in
  // use, checkpointing each pod first (30 s checkpoint + restore lost). Both read only the nodes
  // now, respect a budget of 10 % of a pool's nodes (Karpenter's default) and never move
  // notebooks (do-not-disrupt), serving replicas (their PDB) or pods of multi-pod gangs.
  enum class Consolidation { kNone, kKarpenter, kCheckpointAware };
  Consolidation consolidation = Consolidation::kNone;
  double consolidate_after_s = 0;
  double consolidate_max_used_share = 1.0;
  // Seedance (issue 39 item 1): a right-sized cloud node booted for waiting training pods and
  // notebooks is theirs the step it comes up: until they are placed, no other pod (a serving
  // replica scaled up this step, a pod admitted this step) takes the GPUs they claimed while it
  // booted (Seedance's extender filters the node out for it; it boots or preempts for itself).
  // The base's kube-scheduler does not honor Karpenter's nominations: the first pod scheduled
  // takes the node, and a node right-sized to one pod leaves that pod waiting for another boot.
  bool hold_boots_for_claimants = false;
  // Seedance: training pods waiting for a node are placed (and claim booting nodes) highest tier
  // first, then in admission order, and a Gold job that has not run yet claims and boots nodes
  // only in its pools that are not spot, if it has any (the provider takes booting spot nodes
  // back first);
  // the base places them in admission order (Kueue's queue), spot boots alike.
  bool gold_first = false;
  // The base's choice: training pods annotated karpenter.sh/do-not-disrupt (Karpenter's docs
  // suggest it for long ML batch jobs): their nodes are only removed when empty.
  bool training_do_not_disrupt = false;

  // Type matching on committed GPUs (Seedance, issue 39): a job that is not Gold and has no
  // deadline does not take room on a committed type where a waiting job is relatively faster
  // (speed there / speed on the committed type with the most GPUs, the reference) and could use
  // that room now (its gang fits, its tenant within its nominal quota); it waits for the
  // reference type, which no job declines. Fine-tunes get the H100s, Philly jobs the A100s.
  bool match_types = false;

  // Fractional GPUs (Seedance, issue 39): a notebook whose memory need (DevPod::memory_gb) fits a
  // MIG slice (fractional.h) runs on one: a whole committed GPU of its own type first, then a
  // slice of a committed GPU of another MIG type whose slice has at least its type's FP16 rate,
  // then its type's on-demand pool (whole GPUs).
  // Slices pack onto GPUs already partitioned into the same profile; a GPU is partitioned only
  // when it is whole and free, and goes back to whole only when its last slice is released (MIG
  // reconfiguration needs an empty GPU). A slice is billed the GPU's price times its compute
  // fraction. The standard stacks give every notebook a whole GPU.
  bool fractional_gpus = false;
  // ... (issue 39, round 4) a notebook goes on a slice only of another type, whose slice has at
  // least the compute and bandwidth of the type it asked for: a slice of its own type gives it a
  // fraction of what it asked for (its work counts that fraction), so it takes a whole GPU of its
  // type. And a committed GPU is partitioned afresh for it only while at least this share of that
  // pool's GPUs is free: the pool's own training and serving keep the rest (a notebook asking for
  // a $0.8 L4 held a whole owned H100 a Gold replica or a fine-tune then bought on the cloud).
  // Joining a GPU already partitioned needs no free share. Tuned (kFractionalMinFreeShareGrid).
  double fractional_min_free_share = 0;

  // A standing backlog on committed GPUs (Seedance's cost-aware layer, issue 39 fleet c): while the
  // training waiting now asks for more GPUs than the committed pools hold, a job with no deadline
  // that is not Gold rents a cloud pool only where its $ per PFLOP there is no more than the
  // committed GPUs' so far. No constant; reads the queue and the past bill and work.
  bool backlog_waits_for_committed = false;
  // Under that backlog, a job with a deadline that would rent a cloud pool dearer per PFLOP than the
  // committed GPUs takes committed room from running jobs without a deadline, not Gold and of no
  // higher tier (checkpointed back to their queue; fair sharing kept) on a committed type fast
  // enough for it (Seedance's cost-aware layer, issue 39 round 7). No constant.
  bool deadline_takes_backlog_room = false;

  // The planner's GPU mix priced in the nodes a replica holds (Seedance, issue 39 round 6: one cost
  // model): a type with no committed pool, whose cloud pool sells only nodes of several GPUs, pays
  // its replicas' GPUs rounded up to whole nodes (CheapestMix's node_gpus: the smallest node the
  // pool sells that holds a replica); otherwise GPU by GPU, as before.
  bool serving_whole_nodes = false;

  // Serving's forecast room (Seedance, issue 39: "the forecast's serving headroom kept free before
  // training migrates there"): a running cloud job moves to a committed type only if the GPUs free
  // there after the move still hold what the serving controllers' forecast asks for on that type
  // within this look-ahead beyond what they ask for now (ServingController::DesiredAhead: the same
  // hours a week back, past only), so a scale-up finds room instead of preempting the job it let in.
  // 0: no room kept. Tuned (kServingRoomAheadGrid).
  double serving_room_ahead_s = 0;

  // Serving by comparative advantage (Seedance, issue 39 round 5; engine_yield.cc): while training
  // that runs fastest on a GPU type waits for it or runs on its cloud pools, a serving replica of
  // that type moves to room free now on a committed type no training waits for (never a node
  // booted, never training evicted for it), as many replicas there as serve what it served (the
  // profile's measured req/s per replica at the SLO); the old replica is drained once they are
  // ready (make before break). Only when the cloud price of the freed GPUs (what the waiting job
  // pays) exceeds the marginal (power) cost of the committed GPUs taken. No constant. On in
  // SeedanceStack() since round 5: docs/FLEET_WEEK.md "Round 5: serving by comparative advantage".
  bool serving_yields_to_training = false;
};

// The idle culler's timeout and Seedance's idle grace, each the tuning week's choice (fleet a,
// week 1, seeds 0-4; TuneIdleTimeout in comparison.h, checked by fleet_levers_test): the cheapest of
// kIdleTimeoutGrid whose notebook sessions cut while in use stay within kMaxCutInUseShare.
inline constexpr double kCullerTimeoutS = 7200;
inline constexpr double kSeedanceIdleGraceS = 3600;
// Seedance's migrate_min_speed, the tuning week's choice from kMigrateMinSpeedGrid (fleet_levers_test:
// the cheapest whose mean JCT and deadlines met are no worse than the competent base's).
inline constexpr double kMigrateMinSpeedGrid[] = {0.8, 0.6, 0.5, 0.4, 0.25, 0.0};  // 0: any type
inline constexpr double kSeedanceMigrateMinSpeed = 0.25;  // round 5 (serving yields to training): 0.25; round 4: 0.6
inline constexpr int kDefragNodesPerStep = 4;
inline constexpr int kDeadlinePriorityBoost = 50;  // tiers are 100 apart (tiers.h)
// Seedance's serving_room_ahead_s, the tuning weeks' choice (fleet_levers_test, as the patience).
inline constexpr double kServingRoomAheadGrid[] = {0, 1800, 3600, 7200};
inline constexpr double kSeedanceServingRoomAheadS = 0;
// Round 4 (2026-12-07): the most of a node in use that the defragmentation empties, and the free
// share of a committed pool below which no GPU of it is partitioned for another type's notebook;
// each the tuning week's choice (fleet_levers_test: the cheapest Seedance over the five tuning
// weeks whose mean JCT and deadlines met are no worse than the competent base's, as the patience).
inline constexpr double kDefragMaxBusyShareGrid[] = {0.125, 0.25, 0.5};
inline constexpr double kSeedanceDefragMaxBusyShare = 0.125;  // round 5 (after the consolidation moved): 1/8; round 4: 1/4
inline constexpr double kFractionalMinFreeShareGrid[] = {0.0, 0.25, 0.5, 0.75};
inline constexpr double kSeedanceFractionalMinFreeShare = 0.25;
// Karpenter's knobs in the competent base and Seedance's consolidation, each the tuning week's
// choice (fleet_levers_test's FleetWeekTuningTest, the base's swept first): the lowest unit cost over the
// tuning weeks against the competent base without Karpenter.
inline constexpr double kConsolidateAfterGrid[] = {0, 60, 300, 600, 1800};
inline constexpr double kConsolidateMaxUsedShareGrid[] = {0.5, 0.75, 1.0};
inline constexpr double kKarpenterConsolidateAfterS = 300;  // Karpenter's default is 0 s
inline constexpr bool kKarpenterTrainingDoNotDisrupt = false;
inline constexpr double kSeedanceConsolidateAfterS = 0;
inline constexpr double kSeedanceConsolidateMaxUsedShare = 0.5;  // round 5 (serving yields): 0.5; batching fixed: 0.75; round 4: 1.0

// The shipped standard stack with kube-scheduler's `placement` strategy (issue 30's rows); the
// competent 2026 standard stack (issue 39: bin packing, the JupyterHub idle culler, PriorityClass
// preemption for Gold serving, KEDA cron + HPA; the headline base); Seedance with every layer on.
StackConfig StandardStack(const std::string& placement);
StackConfig CompetentStack();
StackConfig SeedanceStack();
// The competent stack as before issue 39's Karpenter: 8-GPU cloud nodes, cluster-autoscaler's
// scale-down of empty nodes only (kept as a labelled row).
StackConfig CompetentStackWithoutKarpenter();
// The competent stack with Kueue's WorkloadPriorityClass for work with a deadline
// (deadline_priority_class): a labelled row on the owned set with a standing backlog, where queue
// order decides which deadlines are met. Not the headline base: on the tuning week it is dearer
// (unit cost 1.0011x the base's, one deadline fewer: FleetWeekTuningTest), so the sweep leaves it off.
StackConfig CompetentStackWithDeadlinePriority();

// Training job kinds in FleetWeekOutcome's decomposition: TrainingJob::kind "llm-finetune",
// "philly", anything else.
inline constexpr const char* kTrainingKinds[] = {"llm-finetune", "philly", "other"};
int TrainingKindIndex(const std::string& kind);

// GPU-hours by use, in this order, over the week (and per hour in `hourly`).
enum Use : int { kTraining = 0, kServing, kDevActive, kDevIdle, kFree, kBooting, kNumUses };
const char* UseName(int use);

struct FleetWeekOutcome {
  std::string stack;
  // The bill.
  double total_usd = 0;
  double committed_usd = 0, on_demand_usd = 0, spot_usd = 0;
  // The bill split by what it bought: each pod's GPU-seconds at its pool's price, and what no pod
  // used (free GPUs of held nodes, booting nodes, idle committed GPUs) shared pro rata.
  double training_usd = 0, serving_usd = 0, dev_usd = 0;
  double overhead_usd = 0;  // of the above: the part no pod used, before it was shared out
  // Useful work.
  double training_pflop = 0;         // model FLOPs of the steps done (work lost to preemption excluded)
  double serving_mtok_in_slo = 0;    // million tokens served within both SLOs
  double serving_mtok_demanded = 0;
  std::vector<double> serving_mtok_in_slo_by_deployment;
  double dev_active_gpu_hours = 0;   // notebook hours in use
  double UsdPerPflop() const { return training_pflop > 0 ? training_usd / training_pflop : 0; }
  double UsdPerMtok() const { return serving_mtok_in_slo > 0 ? serving_usd / serving_mtok_in_slo : 0; }
  double UsdPerDevHour() const { return dev_active_gpu_hours > 0 ? dev_usd / dev_active_gpu_hours : 0; }
  // SLOs.
  double serving_attainment = 0;     // tokens within SLO / tokens demanded
  std::vector<double> serving_attainment_by_deployment;
  int jobs = 0, jobs_finished = 0;
  // Multi-pod gangs (TrainingJob::pods > 1): how many, how many ran (every pod placed at once) and
  // finished; and the jobs that can never run on this fleet (a gang wider than every pool of its
  // GPU types, or a pod wider than a node): never submitted, counted in `jobs` as unfinished.
  int gangs = 0, gangs_run = 0, gangs_finished = 0, jobs_never_fit = 0;
  double jct_mean_h = 0, jct_p50_h = 0, jct_p90_h = 0;   // of the jobs finished within the week
  int deadlines = 0, deadlines_met = 0;                  // jobs with a deadline within the week
  int gold_checks = 0, gold_violations = 0;              // Gold arrivals within the guaranteed quota / not admitted within one cycle
  int dev_sessions = 0;
  int dev_cut_in_use = 0;                                // notebooks stopped (culled, reclaimed) in think time
  double dev_wait_p90_min = 0;
  // What happened.
  std::array<double, kNumUses> gpu_hours{};
  // The source documents' idle compute: GPU-hours free on held nodes plus held by idle notebooks,
  // over every pool and over the committed (owned / reserved) pools only.
  double idle_gpu_hours = 0, owned_idle_gpu_hours = 0;
  int spot_preemptions = 0, admission_preemptions = 0, idle_reclaims = 0;
  int serving_preemptions = 0;                           // training pods preempted by Gold serving replicas
  int nodes_booted = 0;
  int migrations = 0;                                    // cloud -> committed moves (cost-aware layer)
  int defrag_moves = 0;                                  // training pods moved to empty a committed node for a gang
  std::vector<std::array<double, kNumUses>> hourly;      // mean GPUs by use per hour
  std::string serving_description;                       // the controllers, one line
  double cpu_seconds = 0;                                // not in JSON (not deterministic)
  int consolidations = 0;                                // cloud nodes drained by consolidation (deleted or replaced)
  int consolidation_moves = 0;                           // training pods moved off them

  // Where training's GPU-hours went (issue 39, fleet c's decomposition), by fleet GPU type and job
  // kind (kTrainingKinds): GPU-hours held by running jobs, and the PFLOP their steps did before
  // any was taken back. Work lost: steps taken back (a preemption's work since the last checkpoint,
  // a move's checkpoint) in PFLOP and in the GPU-hours that did them, and GPU-hours restoring.
  std::vector<std::array<double, 3>> training_gpu_hours_by_type, training_pflop_by_type;
  std::vector<std::array<double, 3>> committed_training_gpu_hours_by_type;
  double training_lost_pflop = 0, training_lost_gpu_hours = 0, training_restore_gpu_hours = 0;
  std::vector<double> serving_gpu_hours_by_type;  // serving replicas' GPU-hours by fleet GPU type

  // Where the bill above the committed pools goes (issue 39, round 5: fleet a's dollars above the
  // bound), indexed by the fleet's GPU types (`gpu_types`): the cloud GPU-hours held by tier (0
  // on-demand, 1 spot) and Use (training, serving, notebooks in use and idle, free on held nodes,
  // booting; a MIG slice counts its compute fraction), the cloud bill by type and tier, the
  // committed GPU-hours free, and of those the ones free while training ran on a cloud node of any
  // type (owned room beside which the cloud was paid).
  std::vector<std::string> gpu_types;
  std::vector<std::array<std::array<double, kNumUses>, 2>> cloud_gpu_hours_by_type;
  std::vector<std::array<double, 2>> cloud_usd_by_type;
  std::vector<double> owned_free_gpu_hours_by_type, owned_free_while_cloud_training_gpu_hours_by_type;

  int match_requeues = 0;  // training jobs sent back to their queue (from a checkpoint) to free a node for a gang they yield to

  // Fractional GPUs (StackConfig::fractional_gpus): GPUs partitioned into MIG slices (each a
  // reconfiguration of a whole, empty GPU) and notebook placements on a slice.
  int mig_partitions = 0;
  int dev_on_slices = 0;
};

// Runs one stack on the scenario. Deterministic for (scenario, stack).
Result<FleetWeekOutcome> RunFleetWeek(const FleetWeekScenario& scenario, const StackConfig& stack);

}  // namespace seedance::fleet
