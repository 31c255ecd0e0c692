#pragma once

// The fleet week engine's own state and class, shared by its translation units (engine.cc: setup,
// the clock and the bill; engine_pools.cc: pools, placement, the autoscaler and serving replicas;
// engine_admission.cc: tenancy's AdmissionEnv and the workloads' lifecycle). Not a public header.

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "seedance/cluster/cluster.h"
#include "seedance/core/rng.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/fractional.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/sched/victims.h"
#include "seedance/tenancy/admission.h"
#include "seedance/tenancy/fairness.h"

namespace seedance::fleet::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kModelLoadS = 60;    // a serving replica loads its model on a node that is up
inline constexpr std::int64_t kCpuPerGpu = 10000;   // milli-cores a pod asks per GPU
inline constexpr std::int64_t kMemPerGpu = 100 * 1024;  // MiB a pod asks per GPU
// Seedance's Gold preemption: a Silver victim outweighs any Bronze set (the work lost is at most
// days of GPU-seconds), as PriorityClass orders them.
inline constexpr double kSilverVictimWeight = 1e12;

// Workload id -> its index in jobs_ / devs_ (issue 39: the admitter asks Engine::Running about
// every admitted workload each cycle, and a std::map lookup there was a quarter of fleet c's run).
// A dense table over [first id, last id] when the ids are dense (the bundled weeks number their
// work 0..n-1; an imported week keeps its own ids), else the map. at() throws std::out_of_range
// for an id it does not hold, as std::map::at does.
class IdIndex {
 public:
  void Add(std::int64_t id, std::size_t index) { map_[id] = index; }
  // Call once every id is added: builds the dense table when the ids span at most 4x their count.
  void Seal() {
    table_.clear();
    if (map_.empty()) return;
    first_ = map_.begin()->first;
    const std::uint64_t span = Offset(map_.rbegin()->first);  // last - first, without overflow
    if (span >= 4 * static_cast<std::uint64_t>(map_.size()) + 64) return;
    table_.assign(static_cast<std::size_t>(span) + 1, kNone);
    for (const auto& [id, index] : map_) table_[static_cast<std::size_t>(Offset(id))] = index;
  }
  std::size_t at(std::int64_t id) const {
    if (table_.empty()) return map_.at(id);
    const std::size_t index = id >= first_ && Offset(id) < table_.size() ? table_[static_cast<std::size_t>(Offset(id))] : kNone;
    if (index == kNone) throw std::out_of_range("no workload with this id");
    return index;
  }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  // id - first_ for id >= first_, in unsigned arithmetic (ids may span the whole int64 range).
  std::uint64_t Offset(std::int64_t id) const { return static_cast<std::uint64_t>(id) - static_cast<std::uint64_t>(first_); }
  std::map<std::int64_t, std::size_t> map_;
  std::vector<std::size_t> table_;
  std::int64_t first_ = 0;
};

// Engine::Running's answer for one workload, kept for the clock step and the workload state it was
// computed from (the admitter asks about the same admitted workloads many times a cycle); the key
// is compared on every call, so a change of state or time recomputes it.
struct RunningMemo {
  double now = -1;
  int state = -1;
  double key[3] = {0, 0, 0};
  tenancy::RunningState rs;
};

enum class Phase { kDown, kBooting, kUp };
struct Slot {
  Phase phase = Phase::kDown;
  double ready_at = 0;
  double empty_since = 0;
  int gpus = kGpusPerNode;
  // Karpenter (engine_nodes.cc): the last change of the GPUs in use (consolidateAfter counts from
  // it), GPUs claimed on a booting node this step, a replacement's node, a drained node's state.
  double changed_at = 0;
  std::int64_t idle_seen = -1;
  int claimed = 0;
  int claimed_by_pods = 0;  // of `claimed`: by training jobs and notebooks (not serving replicas)
  int pod_claims_before = 0;  // claimed_by_pods of the step before (hold_boots_for_claimants)
  double claimed_step = -1;
  // StackConfig::hold_boots_for_claimants: GPUs held, from the step the node is up until the
  // waiting pods are placed, for the pods that claimed them in the step before.
  int held_for_claimants = 0;
  int replaces = -1;        // booting replacement: the node of its pool it replaces
  bool draining = false;    // cordoned, its pods leave when its replacement is up
};

struct PoolRun {
  const sim::PoolSpec* spec = nullptr;
  int index = 0;
  std::vector<Slot> slots;
  std::unique_ptr<cluster::ClusterState> state;
  sched::PolicyContext ctx;
  std::unique_ptr<sched::PlacementPolicy> policy;
  bool committed() const { return sim::AlwaysHeld(spec->tier); }
  bool right_sized = false;  // slots of every shape the fleet file lists (StackConfig::right_size)
  int held_nodes = 0;        // slots with held_for_claimants > 0 (StackConfig::hold_boots_for_claimants)
  // Spot: preemptions seen so far and GPU-seconds held (the trailing rate Seedance prices spot by).
  double held_gpu_s = 0;
  int drops = 0;
};

struct Where {
  int pool = -1;
  cluster::NodeId node;
  cluster::GpuAssignment gpus;
  bool placed() const { return pool >= 0; }
};

// kNeverFits: a gang no pool of its types can ever hold (never submitted; counted, not lost).
enum class JobState { kQueued, kPending, kRunning, kDone, kNeverFits };
struct JobRun {
  const TrainingJob* job = nullptr;
  JobState state = JobState::kQueued;
  cluster::PodSpec pod;     // one pod of the gang (each of its job->pods pods alike)
  Where where;              // pod 0's place; a gang's other pods in `gang`, all in where.pool
  std::vector<Where> gang;
  bool ran = false;         // every pod was placed at least once
  double done = 0;          // steps kept (lost work subtracted)
  double seg_start = 0;     // when the current placement started running (after restart)
  double admitted_at = -1;
  double finish = -1;
  bool gold_check = false;
  bool gold_ok = false;
  int restarts = 0;
  int kind = 0;             // TrainingKindIndex(job->kind), read every step by the accounts
};

// kAway: stopped during think time; its user starts it again when back (back_at).
enum class DevState { kQueued, kPending, kActive, kTail, kAway, kDone };
struct DevRun {
  const DevPod* dev = nullptr;
  DevState state = DevState::kQueued;
  cluster::PodSpec pod;
  Where where;
  double start = -1, tail_start = -1;  // start: of the current placement
  double active_done = 0;              // active seconds before the current placement (evictions)
  bool waited = false;                 // its first wait is recorded
  double back_at = 0;                  // kAway: when its user is back and starts it again
  // On a MIG slice (StackConfig::fractional_gpus): the partition (index into Engine::partitions_;
  // `where` is then its GPU), the slice's compute fraction (what it is billed and counted as
  // GPUs), and the useful work an hour in use on it counts for, in GPU-hours of the type the
  // notebook asked for (the slice's FP16 rate over that type's, at most 1).
  int partition = -1;
  double share = 1;
  double work = 1;
};

// One GPU partitioned into slices of one MIG profile (a homogeneous MIG layout). The GPU is held
// in the pool's cluster state by a one-GPU pod while any slice is in use.
struct Partition {
  Where gpu;
  cluster::PodSpec pod;                // the pod that holds the GPU (the first notebook's shape)
  const MigProfile* profile = nullptr;
  int used = 0;                        // slices in use; 0: the GPU is whole again (released)
};

struct Replica {
  int deployment = 0;
  int type = 0;        // index into the deployment profile's gpus
  int fleet_type = 0;  // index into fleet.gpu_types
  cluster::PodSpec pod;
  Where where;
  double ready_at = kInf;
  double requested_at = 0;
  bool drain = false;  // YieldServing: scaled down first (its replacement on another type is on its way)
};

class Engine final : public tenancy::AdmissionEnv {
 public:
  Engine(const FleetWeekScenario& s, const StackConfig& c) : s_(s), c_(c) {}
  Result<FleetWeekOutcome> Run();

  // AdmissionEnv
  tenancy::RunningState Running(std::int64_t id) const override;
  bool CanPlace(const tenancy::WorkloadRequest& w) override;
  std::optional<std::vector<std::int64_t>> VictimsForFit(const tenancy::WorkloadRequest& w,
                                                         std::span<const tenancy::VictimCandidate> c) override;
  void OnAdmit(const tenancy::WorkloadRequest& w) override;

 private:
  Status Setup();
  // Pool order for a pod (the stack's rules); types = fleet type indices the pod may use.
  std::vector<int> TrainingCandidates(const JobRun& r) const;
  std::vector<int> TypeCandidates(int fleet_type) const;
  // Training GPUs asked for by the jobs waiting now (arrived and queued, or admitted and pending).
  double WaitingTrainingGpus() const;
  // A standing backlog now: the training waiting asks for more GPUs than the committed pools hold
  // (every committed GPU will be used; what counts is which work it does).
  bool StandingBacklog() const { return WaitingTrainingGpus() > committed_gpus_; }
  // Seedance (cost_aware): whether a job that can wait skips a cloud pool at `usd_per_step` because
  // a standing backlog keeps the committed GPUs busy and the cloud's $ per PFLOP is dearer than theirs.
  bool CloudCostsMoreThanTheBacklog(const JobRun& r, double usd_per_step) const;
  // Its test without the exemptions (no deadline, not Gold), shared with TakeRoomForDeadline: a
  // standing backlog now, and `usd_per_step` dearer per PFLOP than the committed GPUs so far.
  bool BacklogAndCloudDearer(const JobRun& r, double usd_per_step) const;
  bool TryPlace(const cluster::PodSpec& pod, const std::vector<int>& cands, Where* out);
  bool CouldPlace(const cluster::PodSpec& pod, const std::vector<int>& cands);
  bool BootRoom(int pool, int gpus) const;
  // `replica`: the claim is a serving replica's (never held for it: replicas are placed first).
  bool ClaimBoot(const std::vector<int>& cands, int gpus, bool replica);
  void Release(Where& w, const cluster::PodSpec& pod);
  // A training job's gang (engine_pools.cc): every pod placed in the first pool of `cands` that
  // holds them all (pod by pod with the pool's policy, nodes shared where pods fit), or none;
  // places[0] is pod 0's.
  bool TryPlaceJob(const JobRun& r, const std::vector<int>& cands, std::vector<Where>* places);
  bool PlaceJob(JobRun& r, const std::vector<int>& cands);  // TryPlaceJob, then the job holds them
  bool JobCouldPlace(const JobRun& r, const std::vector<int>& cands);
  bool ClaimBootJob(const JobRun& r, const std::vector<int>& cands);
  void ReleaseJob(JobRun& r);
  void Hold(JobRun& r, const std::vector<Where>& places);
  bool JobOnNode(const JobRun& r, int pool, cluster::NodeId node) const;
  int BootableNodes(int pool, int gpus) const;  // nodes the autoscaler may still boot for pods of `gpus`
  int GangRoomNow(int pool, const cluster::PodSpec& pod) const;  // pods like `pod` the pool's up nodes take now
  // Victim candidates of a running job in `pool`: one entry per pod there, all with its id.
  void AddJobCandidates(const JobRun& r, int pool, double cost, std::vector<sched::PreemptionCandidate>* out) const;
  // Victims among `pc` (in `pool`) that free room for `count` pods like `pod` (sched's
  // FindVictimsForGang: a node per pod, which may free more than pods sharing a node need;
  // candidates may share a gang's id), as one set; nullopt if none.
  std::optional<sched::VictimSet> GangVictims(int pool, const cluster::PodSpec& pod, int count,
                                              std::span<const sched::PreemptionCandidate> pc) const;
  bool NeverFits(const JobRun& r) const;
  void StartJob(JobRun& r);
  // Takes back `seconds` of a running job's progress at its pool's speed (a checkpoint's cost, or
  // the work since its last checkpoint) and counts it as work lost.
  void RollBack(JobRun& r, double seconds);
  // A running job checkpoints and restarts at `to` (already bound there).
  // Checkpoint, release every pod (a gang all of them) and restart on `to` (places bound already).
  void MoveJob(JobRun& r, const std::vector<Where>& to);
  enum class PreemptedBy { kAdmission, kSpot, kServing };
  void PreemptJob(JobRun& r, PreemptedBy by);
  // Frees room for a Gold serving replica by the stack's serving preemption; true if it did.
  bool PreemptForReplica(const cluster::PodSpec& pod, const std::vector<int>& cands);
  void EndDev(DevRun& d, bool reclaimed);
  // Notebooks on whole GPUs or MIG slices (engine_fractional.cc): place one now (a slice where
  // StackConfig::fractional_gpus and its memory allow, else a whole GPU of its type), say whether
  // it could be, claim a booting node for it, and release what it holds.
  bool PlaceDev(DevRun& d);
  bool DevCouldPlace(const DevRun& d);
  void ClaimBootDev(const DevRun& d);
  void ReleaseDev(DevRun& d);
  // Where a notebook may run, in order: a pool and the MIG profile of its slice there (nullptr: a
  // whole GPU), with the useful work an hour in use counts for.
  struct DevOption {
    int pool;
    const MigProfile* profile;
    double work;
  };
  std::vector<DevOption> DevOptions(const DevRun& d) const;
  // A slice of `o` for the notebook: on a GPU partitioned into o.profile with a slice free (the
  // fullest first), else on a whole free GPU of o.pool partitioned now. dry_run: only whether it
  // could (a free slice, a free GPU, or room to boot a node).
  bool TakeSlice(DevRun& d, const DevOption& o, bool dry_run);
  // The share of a pool's GPUs (on nodes that are up) free now.
  double FreeShare(const PoolRun& p) const;
  // Seconds the notebook's GPU has been idle now (think time or its idle tail; 0 in a burst).
  double DevIdleS(const DevRun& d) const;
  // Stops an idle notebook (culler, idle reclaim): one in its idle tail ends; one in think time
  // is cut in use, and its user starts it again at the end of the think time.
  void StopIdleDev(DevRun& d);
  void StartDev(DevRun& d);
  void EvictDev(DevRun& d);
  void SpotReconcile();
  void Serving(std::size_t k);
  // StackConfig::serving_yields_to_training (engine_yield.cc): rewrites deployment d's wanted mix,
  // moving replicas off types that training waits for onto committed room free now.
  void YieldServing(std::size_t d, ServingMix* want);
  // GPUs of the training now waiting or on a cloud pool that is more than `ratio` times as fast per
  // GPU on fleet type ft as on fu (gpus_t; min_pod: the smallest pod of those), and of the rest
  // that can run on fu (gpus_u).
  // `wanting`: the training jobs now waiting or on a cloud pool (YieldServing gathers them once).
  void TrainingByAdvantage(const std::vector<const JobRun*>& wanting, int ft, int fu, double ratio, int* gpus_t,
                           int* gpus_u, int* min_pod) const;
  // The pod of one serving replica of deployment d's profile type `type` (tensor-parallel GPUs).
  cluster::PodSpec ReplicaPod(std::size_t d, std::size_t type) const;
  void PlacePending();
  void ScaleDown();
  void MigrateToCommitted(std::size_t k);
  // The decomposition's cloud row of a pool (not committed): its type's GPU-hours by use at its
  // tier (FleetWeekOutcome::cloud_gpu_hours_by_type), and that tier's index (0 on-demand, 1 spot).
  std::array<double, kNumUses>& CloudHours(int pool);
  std::size_t CloudTier(int pool) const;
  void Defragment();  // StackConfig::defragment (engine_admission.cc)
  // What is on each node of the committed pools (or of the cloud pools) now, for Defragment and
  // Consolidate (engine_nodes.cc): per pool, per node, the running one-pod training jobs (movable)
  // and whether anything else holds the node there (a gang's pod, a serving replica, a notebook;
  // with `training_stays`, one-pod training too).
  struct NodeOccupants {
    std::vector<std::vector<std::vector<std::size_t>>> movable;
    std::vector<std::vector<char>> held;
  };
  NodeOccupants Occupants(bool committed, bool training_stays) const;
  // Karpenter (engine_nodes.cc): the pool's node sizes, GPUs held, right-sized boots and claims,
  // consolidation and its replacements.
  bool RightSized(const sim::PoolSpec& ps) const;
  // The node a replica of each profile type holds (ServingController::SetNodeGpus).
  std::vector<int> ReplicaNodeGpus(const ServingProfile& prof, const std::vector<int>& fleet_type) const;
  std::vector<int> SlotSizes(const sim::PoolSpec& ps) const;
  int GpusHeld(const PoolRun& p) const;
  int ShapeFor(const PoolRun& p, int gpus) const;  // a down slot to boot for `gpus`, or -1
  bool ClaimBootingSlot(PoolRun& p, int gpus, bool replica);
  bool BootSlot(PoolRun& p, int gpus, bool replica);
  // StackConfig::hold_boots_for_claimants (engine_nodes.cc): node `s` of `p` is up now; the GPUs
  // training pods and notebooks claimed on it in the step before are held for them.
  void HoldForClaimants(PoolRun& p, Slot& s);
  // A claim on a pool of nodes of kGpusPerNode (counted per pool, boot_claimed_) noted on the
  // first booting node with room for it, for HoldForClaimants.
  void NoteClaim(PoolRun& p, int gpus, bool replica);
  void ReleaseHolds();
  // The pool's placement policy's choice for `pod`, the nodes whose free GPUs are held for
  // claimants (less than `pod` left beside them) out of its view unless placing_claimants_.
  sched::PlacementDecision Decide(PoolRun& p, const cluster::PodSpec& pod);
  void Consolidate();
  void FinishReplacements();
  // Moves a one-pod training job to `to` (bound already): evicted (work since its checkpoint
  // lost) or checkpointed first (Seedance).
  void ConsolidationMove(JobRun& r, const Where& to);

  // Where Defragment may move `r` off `pool`: committed pools at least defrag_min_speed as fast (and
  // with `to_reference`, the type matching's reference type), its own pool first, then fastest.
  std::vector<int> DefragDestinations(const JobRun& r, int pool, bool to_reference) const;
  // Moves bound already (job index, destination): with `all`, each job moves there (checkpoint,
  // restart; counted as a defragmentation move) and `on` lists it on its new committed node; else
  // the bindings are undone. Returns `all`.
  bool CommitMoves(bool all, const std::vector<std::pair<std::size_t, Where>>& moves,
                   std::vector<std::vector<std::vector<std::size_t>>>& on);
  // StackConfig::match_types (engine_match.cc): whether `r` leaves committed pool `pool` to a
  // waiting job relatively faster there; the waiting table is taken once a step.
  bool Outmatched(const JobRun& r, int pool) const;
  void EnsureMatchTable() const;
  bool MatchWaiting(const JobRun& r) const;
  void MatchPlaced(const JobRun& r);
  struct MatchClass;
  const MatchClass& MatchClassOf(const JobRun& r) const;
  // The job's comparative advantage on committed `type` (1 for a job that does not yield there):
  // the order in which it tries committed types before their speed.
  double MatchAdvantage(const JobRun& r, int type) const;
  // Whether `r` may yield committed `type` to a relatively faster job (not Gold, no deadline, able
  // to run on the reference type), and whether jobs of class `c` claim `type` from it.
  bool MatchYields(const JobRun& r, int type) const;
  bool MatchClaims(const MatchClass& c, const JobRun& r, int type) const;
  // A tenant's GPUs held (plus `more`) over its nominal quota (Kueue's Fair Sharing compares the same).
  double TenantShare(int tenant, int more) const;
  // Of `candidates` (running one-pod jobs on committed node `n` of pool `pool`, any order), the ones
  // whose GPUs, with the node's free ones, make room for a pod of `gpus`: the largest first (the
  // fewest moves); empty when they cannot. `yielded`: their GPUs.
  std::vector<std::size_t> YieldersOnNode(int pool, std::size_t n, std::vector<std::size_t> candidates, int gpus,
                                          int* yielded) const;
  // Defragment's last resort for waiting gang `w` (engine_match.cc): empties a committed node whose
  // occupants all yield to `w`; `pinned` and `on` are Defragment's view of the committed nodes.
  bool YieldNodeFor(const JobRun& w, const std::vector<std::vector<char>>& pinned,
                    std::vector<std::vector<std::vector<std::size_t>>>& on);
  // Under a standing backlog, a one-pod job `w` waiting with no room on a committed type where it
  // outmatches jobs running there: the fewest of them on one node whose GPUs (with the node's free
  // ones) make room for it yield (engine_match.cc). True if room was made.
  bool YieldRoomFor(const JobRun& w, std::vector<std::vector<std::vector<std::size_t>>>& on);
  // A running job that yields goes back to its queue from a checkpoint taken now (Kueue's
  // preemption, checkpoint-aware).
  void RequeueYielder(std::size_t i);
  // StackConfig::deadline_takes_backlog_room (engine_match.cc): pending job `r` with a deadline,
  // whose first cloud pool in `cands` is dearer per PFLOP than the committed GPUs, takes room on one
  // committed node of its `cands` from running jobs without a deadline; true if it was placed.
  bool TakeRoomForDeadline(JobRun& r, const std::vector<int>& cands);
  void Account(double dt);
  void UpdateSignals(double dt);
  int SpotAvailable(const PoolRun& p) const;
  int NodesHeld(const PoolRun& p) const;
  double PriceOf(int pool) const { return pools_[static_cast<std::size_t>(pool)].spec->PriceAt(now_); }
  bool IsJob(std::int64_t id) const { return id < dev_base_; }

  const FleetWeekScenario& s_;
  const StackConfig& c_;
  std::vector<PoolRun> pools_;
  std::vector<JobRun> jobs_;
  std::vector<DevRun> devs_;
  IdIndex job_index_, dev_index_;
  mutable std::vector<RunningMemo> job_running_, dev_running_;  // by index in jobs_ / devs_
  std::int64_t dev_base_ = 0;
  std::vector<Replica> replicas_;
  std::vector<Partition> partitions_;   // MIG-partitioned GPUs (released ones have used == 0)
  std::vector<ServingController> controllers_;
  std::vector<const ServingProfile*> profiles_;
  std::vector<std::vector<int>> profile_fleet_type_;  // [deployment][profile type] -> fleet type
  std::unique_ptr<tenancy::Admitter> admitter_;
  std::unique_ptr<tenancy::FairShareTracker> fair_;
  std::vector<std::size_t> pending_jobs_;   // admitted, waiting for a node (admission order)
  std::vector<std::size_t> pending_devs_;
  std::vector<int> boot_claimed_;           // per pool, GPUs of booting nodes claimed this step
  bool placing_claimants_ = false;          // PlacePending's waiting training pods and notebooks
  // StackConfig::gold_first: the pools a waiting job claims or boots a node in.
  std::vector<int> GoldStartBoots(const JobRun& r, const std::vector<int>& cands) const;
  int TierRank(const JobRun& r) const {  // higher tiers first
    return -tenancy::TierPriority(s_.tenancy.tenants[static_cast<std::size_t>(r.job->tenant)].tier);
  }
  Rng rng_{0x5eedf1ee7ULL};
  double now_ = 0;
  FleetWeekOutcome out_;
  std::vector<double> jct_h_;
  std::vector<double> dev_wait_min_;
  std::vector<double> mtok_in_slo_, mtok_demanded_;
  std::array<double, kNumUses> hour_acc_{};
  std::map<std::pair<std::size_t, std::vector<int>>, double> served_memo_;
  // YieldServing: per deployment, the replicas of a profile type `from` served instead by `to_n`
  // replicas of profile type `to` (at most one move per `from` type).
  struct ServingYield {
    int from = -1, to = -1, from_n = 0, to_n = 0;
  };
  std::vector<std::vector<ServingYield>> yields_;
  // Type matching (engine_match.cc): classes of jobs alike for the rule and the waiting count of
  // each, taken at `match_at_`.
  struct MatchClass {
    int tenant = 0, gpus = 0, pods = 1;
    cluster::PodSpec pod;
    std::vector<double> rel;  // per fleet type: speed / speed on the reference type
    int waiting = 0;
  };
  mutable std::vector<MatchClass> match_classes_;
  mutable std::vector<int> match_class_of_;  // per job
  mutable int match_numeraire_ = -1;
  mutable double match_at_ = -1;
  // The standing-backlog rule (CloudCostsMoreThanTheBacklog): committed GPUs, the training PFLOP
  // done on them so far, and the waiting GPUs taken at `waiting_at_`.
  double committed_gpus_ = 0, committed_pflop_ = 0;
  bool backlog_seen_ = false;  // StackConfig::deadline_priority_under_backlog: a standing backlog seen
  mutable double waiting_gpus_ = 0, waiting_at_ = -1;  // MaxServedRps by ready mix
};

}  // namespace seedance::fleet::detail
