#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/tenancy/quota.h"
#include "seedance/tenancy/tiers.h"

namespace seedance::tenancy {

// How tenants share (issue 13; the three rows of `cost-benchmark --tenancy`):
//  - kStrict: every tenant within its nominal quota, nothing borrowed (static partitions);
//  - kBorrowing: Kueue's classical semantics, as a user would configure Kueue to protect Gold:
//    borrowing within the cohort, reclaimWithinCohort LowerPriority, withinClusterQueue
//    LowerPriority, BestEffortFIFO; admission and victims on quota alone (Kueue does not see
//    nodes); an admitted pod that fits no node waits for kube-scheduler, whose default preemption
//    (fewest, lowest-priority pods on one node; blind to checkpoints) the driver models;
//  - kSeedance: borrowing plus the tiers (guaranteed shares, reclaim of idle allocations), the
//    S4.4 rule, checkpoint-aware victim sets that free a fit on one node (sched::FindVictimsForFit
//    through AdmissionEnv), the elastic quota (S4.2) and fairness compensation (S4.5) in ordering.
// kKueue: exactly Kueue's performance-test configuration (reclaimWithinCohort Any), for
// `seedance bench kueue`.
// Kueue with Fair Sharing on (issue 29; docs/PROTOCOLS.md section 6), as a baseline: every
// ClusterQueue's dominant resource share (DominantResourceShare below) orders admission (lowest
// share after admitting the head first, then priority, then creation) and decides preemption
// (reclaimWithinCohort LowerPriority as in kBorrowing, so lower tiers never preempt Gold;
// withinClusterQueue LowerPriority; borrowWithinCohort is not used, Kueue forbids it with Fair
// Sharing; a preemptor may borrow). The preemption strategy list:
//  - kFairSharing: [LessThanOrEqualToFinalShare, LessThanInitialShare] (Kueue's default);
//  - kFairSharingFinal: [LessThanOrEqualToFinalShare];
//  - kFairSharingInitial: [LessThanInitialShare].
enum class TenancyMode { kStrict, kBorrowing, kSeedance, kKueue, kFairSharing, kFairSharingFinal, kFairSharingInitial };
std::string_view TenancyModeName(TenancyMode m);
std::optional<TenancyMode> ParseTenancyMode(std::string_view s);
// True for the three Kueue Fair Sharing modes.
bool IsFairSharing(TenancyMode m);

// Kueue's dominant resource share of one ClusterQueue, before weighting (pkg/cache/scheduler/
// fair_sharing.go): `ratio` = max over resources of borrowed * 1000 / lendable in the cohort.
// Value() divides by the weight; a zero weight that borrows is +infinity. Compare orders shares
// as Kueue's CompareDRS does (two infinite shares by their unweighted ratio).
struct DominantShare {
  double ratio = 0;
  double weight = 1;
  bool borrowing = false;
  bool Infinite() const { return weight == 0 && borrowing; }
  double Value() const;
  // < 0 when a is preferred for admission (lower share), > 0 when a is preferred as a victim.
  static int Compare(const DominantShare& a, const DominantShare& b);
};

// What admission knows of a workload (the information contract): what was submitted. No size.
struct WorkloadRequest {
  std::int64_t id = 0;          // stable, unique; the last tie-breaker everywhere
  int tenant = 0;               // QuotaBook tenant index
  Tier tier = Tier::kSilver;
  int priority = 0;             // higher first (Kueue spec.priority)
  double creation_s = 0;        // queue order timestamp; kept across preemptions
  std::vector<Quantity> request;  // by QuotaBook resource index
};

// What admission sees of an admitted workload when it considers preempting it: telemetry and the
// workload's own record, never its remaining work.
struct RunningState {
  double admitted_at_s = 0;
  double executed_s = 0;       // run time since it was (last) admitted
  double lost_if_preempted = 0;  // GPU-seconds of progress since its last checkpoint
  double idle_s = 0;           // how long its utilization has been at or below its tier's trigger
};

struct VictimCandidate {
  std::int64_t id = 0;
  double cost = 0;  // what preempting it costs (the mode decides: lost work, or priority)
  int priority = 0;
};

// The driver's side: nodes and telemetry. A driver without nodes (Kueue's scenario) says every
// workload can be placed.
class AdmissionEnv {
 public:
  virtual ~AdmissionEnv() = default;
  virtual RunningState Running(std::int64_t id) const = 0;
  // True if some node can take `w` now (Seedance admits only then; Kueue's modes admit on quota
  // and leave node placement, and kube-scheduler's preemption, to the driver).
  virtual bool CanPlace(const WorkloadRequest& w) = 0;
  // The victims among `candidates` whose removal frees a fit for `w` on one node (cheapest by
  // cost); nullopt when no single node can be freed.
  virtual std::optional<std::vector<std::int64_t>> VictimsForFit(const WorkloadRequest& w,
                                                                 std::span<const VictimCandidate> candidates) = 0;
  // Called the moment `w` is admitted (before later heads of the same cycle are considered), so
  // a driver with nodes binds it at once and CanPlace stays truthful within one cycle.
  virtual void OnAdmit(const WorkloadRequest& /*w*/) {}
};

// One outcome of a cycle: admit `id`, or evict `id` to make room for `for_id`.
struct AdmissionDecision {
  enum class Kind { kAdmit, kEvict } kind = Kind::kAdmit;
  std::int64_t id = 0;
  std::int64_t for_id = -1;
  bool borrowing = false;  // admit: the workload borrows cohort quota
  bool reclaim = false;    // evict: the victim was idle past its tier's trigger (S4.1 reclaim)
};

struct AdmitterStats {
  std::int64_t cycles = 0;
  std::int64_t heads_considered = 0;
  std::int64_t admitted = 0;
  std::int64_t evictions = 0;
};

// Admitter: the admission step (SPEC S4) shared by the simulator and the online drivers.
// Workloads wait in one queue per tenant; each Cycle takes one head per tenant, decides fit /
// borrow / preempt against the QuotaBook (and the env's nodes), processes the heads in Kueue's
// classical order (non-borrowing first, then priority, then - Seedance only - the fairness- and
// elastic-weighted share, then creation time, then id), and repeats until nothing changes.
// Admitted workloads hold quota until Finished or Evicted. Deterministic; thread-compatible.
class Admitter {
 public:
  Admitter(QuotaBook book, TenancyMode mode, const TenancyConfig& config);

  const QuotaBook& book() const { return book_; }
  TenancyMode mode() const { return mode_; }

  // A new workload (or, with the same id, one that was evicted and is requeued by Evicted).
  // REQUIRES: id unknown; request sized num_resources().
  void Submit(WorkloadRequest w);
  // Runs cycles at `now` until no more decisions; appends them to `out`.
  void Cycle(double now, AdmissionEnv& env, std::vector<AdmissionDecision>* out);
  // An admitted workload ended: its quota returns; the cohort's inadmissible workloads requeue.
  void Finished(std::int64_t id);
  // An evicted workload is gone from its node: its quota returns; it rejoins its queue with its
  // original creation time unless `requeue` is false (it ended while evicting).
  void Evicted(std::int64_t id, bool requeue);
  // A workload that left before it ended normally (a user cancelled it): pending ones leave their
  // queue, admitted or evicting ones return their quota as Finished. Unknown ids are ignored.
  void Withdraw(std::int64_t id);
  // Restart (the server rebuilds its Admitter from the ledger): puts back a workload in the state
  // an earlier Admitter left it, without a cycle and without counting an admission. kPending is
  // Submit; kAdmitted holds its quota, admitted at `admitted_at_s`; kEvicting holds it until
  // Evicted, and `evicted_for` (>= 0: a workload restored before, still pending) waits for it as
  // its queue's head, its room reserved, as after the cycle that issued the eviction.
  // REQUIRES: as Submit.
  enum class RestoredState { kPending, kAdmitted, kEvicting };
  void Restore(WorkloadRequest w, RestoredState state, double admitted_at_s, std::int64_t evicted_for);
  // Node capacity grew without a quota release (a drained node resumed, a node came back): the
  // workloads that fit quota but no node, and the classes marked inadmissible, are considered
  // again at the next Cycle (as a quota release in their cohort would).
  void CapacityChanged();
  // Seedance's idle reclaim sweep (S4.1): admitted workloads idle at least their tier's
  // max_idle_s. The driver releases them (Evicted or Finished). Empty in other modes.
  std::vector<std::int64_t> IdleSweep(const AdmissionEnv& env) const;

  // Fair Sharing: tenant `t`'s dominant resource share were `extra` (sized num_resources, or
  // empty for none) added to its usage.
  DominantShare DominantResourceShare(int t, std::span<const Quantity> extra = {}) const;

  // Seedance only: the tenant's fairness compensation weight (S4.5) and elastic scale (S4.2).
  void SetCompensation(int tenant, double weight) { compensation_[static_cast<std::size_t>(tenant)] = weight; }
  void SetElasticScale(int tenant, double scale) { elastic_[static_cast<std::size_t>(tenant)] = scale; }

  std::size_t pending() const;
  bool IsAdmitted(std::int64_t id) const;
  const AdmitterStats& stats() const { return stats_; }

 private:
  // kPending: in its queue's heap or inadmissible list; kInadmissible: fits quota but no node.
  enum class State { kPending, kInadmissible, kAdmitted, kEvicting };
  struct Entry {
    WorkloadRequest w;
    State state = State::kPending;
    double admitted_at = 0;
    std::int64_t hash = 0;  // scheduling-equivalence class within its tenant
    std::int64_t evicted_for = -1;  // kEvicting: the preemptor it makes room for
    int waiting_on = 0;             // a preemptor: victims not gone yet
  };
  struct Key {
    int neg_priority;
    double creation_s;
    std::int64_t id;
    std::int64_t hash;  // the entry's equivalence class; not part of the order
    bool operator<(const Key& o) const;
  };
  // One scheduling-equivalence class of a queue (same tenant, priority and request): its waiting
  // workloads in queue order, and whether the class is inadmissible (Kueue's hashing moves the
  // whole class at once; a quota release brings it back). Flipping the flag is O(1).
  struct ClassQueue {
    std::set<Key> members;
    bool inadmissible = false;
  };
  struct Queue {
    std::map<std::int64_t, ClassQueue> classes;  // by Entry::hash; only non-empty classes
    std::int64_t sticky = -1;  // a head waiting for its victims to leave
  };
  void QueueInsert(const Entry& e);
  void QueueErase(const Entry& e);
  // The queue's head: the sticky preemptor, else the first workload of the admissible classes.
  static std::int64_t HeadOf(const Queue& q);
  enum class Nomination { kFit, kBorrow, kPreempt, kNoFit, kWait };
  struct Head {
    std::int64_t id;
    Nomination kind;
    double order_share;
    DominantShare drs;  // Fair Sharing: the queue's share were the head admitted
  };

  static Key KeyOf(const Entry& e) { return {-e.w.priority, e.w.creation_s, e.w.id, e.hash}; }
  bool CyclePass(double now, AdmissionEnv& env, std::vector<AdmissionDecision>* out);
  Nomination Nominate(const Entry& e, AdmissionEnv& env);
  // Victims for `e` (quota and/or placement), empty when none would make it admissible.
  std::vector<std::int64_t> ChooseVictims(const Entry& e, AdmissionEnv& env, bool quota_needed, bool idle_only = false);
  // Fair Sharing's preemption (Kueue pkg/scheduler/preemption: fairPreemptions with the mode's
  // strategy list): victims for `e`, empty when the strategies cannot make it fit.
  std::vector<std::int64_t> ChooseFairVictims(const Entry& e);
  bool QuotaCandidate(const Entry& preemptor, const Entry& victim, const AdmissionEnv& env) const;
  void MakeInadmissible(Queue& q, std::int64_t id);
  void RequeueCohort(int tenant);
  void Release(Entry& e);
  void Evict(Entry& victim, const Entry& preemptor, bool reclaim, std::vector<AdmissionDecision>* out);
  void Admit(Entry& e, double now);
  double OrderShare(const Entry& e) const;
  DominantShare ShareOf(const Entry& e) const;
  // The tier's guaranteed share of the tenant's nominal quota; with fairness compensation on
  // (Seedance), an under-served tenant's positive weight raises it (capped at 100%).
  double GuaranteedShare(int tenant) const;
  const TierParams& TierOf(Tier t) const { return config_.tiers[static_cast<std::size_t>(t)]; }

  QuotaBook book_;
  TenancyMode mode_;
  TenancyConfig config_;
  std::unordered_map<std::int64_t, Entry> entries_;
  std::vector<Queue> queues_;  // by tenant
  std::vector<double> compensation_, elastic_;
  std::vector<double> fair_weight_;  // by tenant: Kueue spec.fairSharing.weight (default 1)
  // Interned scheduling-equivalence classes: (tenant, priority, request) -> Entry::hash.
  std::map<std::tuple<int, int, std::vector<Quantity>>, std::int64_t> hash_ids_;
  // Admitted (not evicting) workloads by id; entries_ is node-based, so the pointers stay valid
  // until the entry is erased (which removes it from here first).
  std::map<std::int64_t, const Entry*> admitted_;
  std::vector<std::map<std::int64_t, const Entry*>> admitted_by_tenant_;  // the same, by tenant
  // Kueue's preemption order within a tenant: lower priority, most recently admitted, id.
  struct VictimKey {
    int priority;
    double neg_admitted_at;
    std::int64_t id;
    const Entry* entry;
    bool operator<(const VictimKey& o) const {
      return std::tie(priority, neg_admitted_at, id) < std::tie(o.priority, o.neg_admitted_at, o.id);
    }
  };
  static VictimKey VictimKeyOf(const Entry& e) { return {e.w.priority, -e.admitted_at, e.w.id, &e}; }
  std::vector<std::set<VictimKey>> victim_order_;  // by tenant
  std::vector<std::int64_t> unplaceable_;       // fit quota, no node: retried on any release
  std::vector<Tier> tenant_tier_;               // by tenant (config), default silver
  std::vector<std::vector<int>> cohort_members_;  // by tenant: tenants sharing its cohort (itself included)
  AdmitterStats stats_;
};

}  // namespace seedance::tenancy
