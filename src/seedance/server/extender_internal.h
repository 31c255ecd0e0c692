#pragma once

// The extender's decision core inside (extender.h's Extender::Impl), shared by its files and by
// nothing else:
//   extender_rules.cc        the rules per candidate node (tenant, quota, conditions, audit, fit)
//   extender_state.cc        the state: nodes, configuration, pods seen, the decision log, metrics
//   extender_reservations.cc placements: bind, assumed placements and their expiry, release
//   extender.cc              the verbs kube-scheduler calls: filter, prioritize, preempt, bind
//   extender_cluster.cc      what the watch and the state endpoints change or read

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/server/extender.h"

namespace seedance::server {
namespace extender_internal {

using cluster::ClusterState;
using cluster::GpuAssignment;
using cluster::NodeId;
using cluster::NodeSpec;
using cluster::PodSpec;
using nlohmann::json;
using tenancy::Quantity;
using tenancy::Tier;

inline constexpr const char* kDecisions = "seedance_decisions_total";
inline constexpr const char* kDuration = "seedance_decision_duration_seconds";
inline constexpr const char* kNodesGauge = "seedance_nodes";
inline constexpr const char* kPodsGauge = "seedance_pods_bound";
inline constexpr const char* kEvicted = "seedance_extender_evictions_total";
inline constexpr const char* kRetainedBytes = "seedance_extender_retained_bytes";
inline constexpr const char* kRetainedEntries = "seedance_extender_retained_entries";

cluster::Qos QosOf(Tier t);

enum class Verdict { kPass, kFailed, kUnresolvable };

// Whether two names are equal, compared eight bytes at a time inline: a libc memcmp call per
// candidate was a twentieth of a filter's time at 5,000 names.
inline bool SameName(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  if (n < 8) {
    for (std::size_t k = 0; k < n; ++k) {
      if (a[k] != b[k]) return false;
    }
    return true;
  }
  std::uint64_t x = 0, y = 0;
  for (std::size_t k = 0; k + 8 < n; k += 8) {
    std::memcpy(&x, a.data() + k, 8);
    std::memcpy(&y, b.data() + k, 8);
    if (x != y) return false;
  }
  std::memcpy(&x, a.data() + n - 8, 8);  // the last eight bytes (overlapping the loop's)
  std::memcpy(&y, b.data() + n - 8, 8);
  return x == y;
}

// Node name -> index in specs, looked up once per candidate of every filter and prioritize (every
// node's name per request with percentageOfNodesToScore: 100). Open addressing over a
// power-of-two table of (hash, entry) slots: no prime modulo and no list nodes to chase, and a
// probe compares the stored hash before the name; std::unordered_map's lookups were most of the
// decision's time at 5,000 names. The subset of unordered_map's interface the extender uses:
// find (a pointer, end() = nullptr), emplace of an absent name, clear (a deletion rebuilds).
class NameIndex {
 public:
  using Entry = std::pair<std::string, std::size_t>;
  const Entry* find(std::string_view name) const {
    if (slots_.empty()) return nullptr;
    const std::uint64_t h = Hash(name);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.entry == 0) return nullptr;
      if (s.hash == h && SameName(entries_[s.entry - 1].first, name)) return &entries_[s.entry - 1];
    }
  }
  const Entry* end() const { return nullptr; }
  // REQUIRES: `name` is absent.
  void emplace(std::string name, std::size_t index) {
    if ((entries_.size() + 1) * 2 > slots_.size()) Grow();
    entries_.emplace_back(std::move(name), index);
    Place(Hash(entries_.back().first), static_cast<std::uint32_t>(entries_.size()));
  }
  void clear() {
    slots_.clear();
    entries_.clear();
    mask_ = 0;
  }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t entry = 0;  // 1 + the position in entries_; 0: empty
  };
  static std::uint64_t Hash(std::string_view s) { return std::hash<std::string_view>{}(s); }
  void Place(std::uint64_t h, std::uint32_t entry) {
    std::size_t i = h & mask_;
    while (slots_[i].entry != 0) i = (i + 1) & mask_;
    slots_[i] = Slot{h, entry};
  }
  void Grow() {
    const std::size_t size = std::max<std::size_t>(16, slots_.size() * 2);
    slots_.assign(size, Slot{});
    mask_ = size - 1;
    for (std::size_t e = 0; e < entries_.size(); ++e) {
      Place(Hash(entries_[e].first), static_cast<std::uint32_t>(e + 1));
    }
  }
  std::vector<Slot> slots_;
  std::vector<Entry> entries_;
  std::size_t mask_ = 0;
};

// Which rule failed. The reason text is built only where it is written (a filter's FailedNodes),
// from the rule and its numbers: prioritize, which only needs the verdict, builds none.
enum class Rule : std::uint8_t {
  kPass,
  kUnknown,     // unknown node
  kCondition,   // cordon / Ready / taint: `text` (ScheduleBlock's)
  kAudit,       // `text`
  kTier,        // `text`
  kBreaker,     // Lookups::breaker
  kNodeCpu,     // a: requested, b: the node's
  kNodeMemory,  // a, b
  kNoGpu,
  kModel,       // a: the node's model
  kNodeGpus,    // a: requested, b: the node's
  kQuota,       // Lookups::quota[a]
  kFreeCpu,     // a: requested, b: free
  kFreeMemory,  // a, b
  kFreeShare,   // a: requested milli-GPU, b: the most free on one GPU
  kFreeGpus,    // a: requested, b: free
  kNoFit,
};

struct NodeCheck {
  Verdict verdict = Verdict::kPass;
  Rule rule = Rule::kPass;
  std::int64_t a = 0, b = 0;
  std::string text;  // only for the rare rules whose reason comes from elsewhere (conditions, audit, tier)
  static constexpr std::size_t kUnknown = static_cast<std::size_t>(-1);  // no node's index in the table

  static NodeCheck Fail(Verdict v, Rule r, std::int64_t x = 0, std::int64_t y = 0) {
    return NodeCheck{v, r, x, y, std::string()};
  }
  static NodeCheck Text(Verdict v, Rule r, std::string why) {
    NodeCheck c = Fail(v, r);
    c.text = std::move(why);
    return c;
  }
};

GpuAssignment ChooseGpus(const cluster::NodeState& n, const PodSpec& pod);
// Why `pod` does not fit the free capacity of `n` (rule kPass when it fits).
NodeCheck FitCheck(const cluster::NodeState& n, const PodSpec& pod);
// The rule's name, the key of a filter decision's "failed_by_rule" (the reason's prefix).
std::string_view RuleName(const NodeCheck& c);
// A check's reason for the rules that need no lookups (everything but kBreaker and kQuota).
std::string FitText(const NodeCheck& c);
// Why `pod` does not fit the free capacity of `n` ("" when it fits).
std::string FitReason(const cluster::NodeState& n, const PodSpec& pod);
// Whether a node's conditions can bar any pod (a cordon, a Ready condition other than True, a
// NoSchedule or NoExecute taint); nodes without are passed without calling ScheduleBlock.
bool MayBlock(const NodeConditions& c);

}  // namespace extender_internal

using namespace extender_internal;  // NOLINT(google-build-using-namespace): the extender's files only

struct Extender::Impl {
  struct Bound {
    K8sPod pod;
    NodeId node;
    GpuAssignment gpus;
    int tenant = -1;  // QuotaBook index
    std::vector<Quantity> request;
    std::int64_t seq = 0;
    // > 0: placed by Seedance (a reservation of prioritize's pick, or the bind verb) and not yet
    // seen bound by the watch; released at this time (ms) unless the watch confirms it.
    std::int64_t assumed_until_ms = 0;
  };
  struct Pick {
    std::string node;
    GpuAssignment gpus;
    std::uint64_t version = 0;
  };
  struct TenantInfo {
    int book = -1;
    Tier tier = Tier::kSilver;
    std::string name;  // as configured ("" = unconfigured)
  };

  App& app;
  ExtenderOptions options;
  // Locks, taken in this order: `mu` over the cluster, the node table, bound pods, quota and
  // policy: shared by filter and by prioritize's rules, exclusive for every change (which bumps
  // `generation`) and for the policy's pick; `seen_mu` over the memo of pods seen (seen,
  // seen_order, seen_bytes, uid_of) where a holder of the shared lock adds to it (Admit);
  // `log_mu` over the decision log.
  mutable std::shared_mutex mu;
  mutable std::mutex seen_mu;
  mutable std::mutex log_mu;
  std::uint64_t generation = 0;
  bool watch_confirms = false;  // WatchConfirmsBinds: placements are assumed until the watch shows them
  // (assumed_until_ms, uid) of the bound pods with assumed_until_ms > 0, soonest first.
  std::set<std::pair<std::int64_t, std::string>> deadlines;
  // Uids the watch (or an authenticated POST /v1/pods) lists as pending: without mTLS the only pods
  // filter and prioritize reserve for, so an anonymous request naming an invented pod cannot hold a
  // tenant's quota. Bounded by the cluster's own pods; written under `mu` exclusive.
  std::set<std::string> listed_pending;
  // Under mTLS (--client-ca) every filter and prioritize comes from an authenticated caller
  // (kube-scheduler's client certificate; http_server.cc refuses the others), so its pick is
  // reserved even for a pod the watch has not listed yet: kube-scheduler's informer can be ahead
  // of ours, and the next pod of a burst must see the GPUs taken (an invented pod's reservation
  // expires after reservation_ms like any other).
  bool MayReserve(const std::string& uid) const {
    return watch_confirms && (listed_pending.count(uid) != 0 || !app.options.client_ca.empty());
  }
  std::shared_ptr<const ServerConfig> config;
  std::optional<tenancy::QuotaBook> book;
  std::vector<std::vector<bool>> named;  // [tenant][resource]: the tenant has a quota for it
  std::vector<NodeSpec> specs;
  NameIndex node_index;  // name -> index in specs (looked up per candidate)
  // By node index, beside specs: the node's conditions (cordon, Ready, taints) and whether they
  // can bar any pod (MayBlock); the watch sets Ready=True on every node, so most pass on the flag.
  std::vector<NodeConditions> conds;
  std::vector<std::uint8_t> blocks;
  // By node index: priority -> how many bound pods have it (LowerPriorityOn); kept by BindPod and
  // Release, made again by Rebuild.
  std::vector<std::map<std::int32_t, std::uint32_t>> priorities;
  std::unique_ptr<ClusterState> cluster;
  sched::PolicyContext context;
  std::unique_ptr<sched::PlacementPolicy> policy;
  Rng rng{0};
  std::map<std::string, Bound> bound;       // by uid
  std::map<std::string, std::string> uid_of;  // key -> uid (bound or seen)
  std::map<std::string, K8sPod> seen;       // by uid: pods known but not bound
  std::deque<std::string> seen_order;       // uids in first-seen order (may hold stale ones)
  std::map<std::string, Pick> picks;        // by uid: the policy's last pick, only for pods in `seen`
  std::int64_t next_seq = 0;
  std::deque<std::string> decision_order;
  std::map<std::string, std::deque<json>> decisions;
  std::map<std::string, std::size_t> decision_bytes_of;  // estimated bytes of each pod's log
  std::size_t decision_bytes = 0;                          // their sum
  std::size_t seen_bytes = 0;                              // estimated bytes of `seen`

  Impl(App& a, ExtenderOptions o);

  std::int64_t Now() const { return app.now_ms ? app.now_ms() : 0; }

  void Count(std::string_view verb, std::string_view result, double seconds);
  // REQUIRES: mu held (shared or exclusive).
  void Gauges();

  TenantInfo TenantOf(const K8sPod& pod) const;

  // The pod's request by QuotaBook resource, GPUs counted against the node's model.
  // Resources a tenant names no quota for are not limited for it (counted as 0).
  std::vector<Quantity> RequestOn(const PodSpec& pod, cluster::GpuModelIndex model, int tenant) const;

  std::string QuotaReason(const TenantInfo& t, const std::vector<Quantity>& req) const;

  void Rebuild();

  void BuildPolicy();

  void Configure(std::shared_ptr<const ServerConfig> c, bool reseed);

  // --- rules ---
  // What one filter or prioritize looks up once, not per candidate: the audit's verdicts (one
  // lock for the decision) and the tenant's quota answer per GPU model (the pod, the tenant and
  // the book do not change within a decision, and a cluster has a handful of models).
  struct Lookups {
    explicit Lookups(const HealthBoard& board) : health(board) {}
    HealthBoard::Reader health;
    std::vector<std::pair<cluster::GpuModelIndex, std::string>> quota;  // model -> QuotaReason
    std::string breaker;  // the trip's reason, built once
    std::size_t next = 0;  // the node after the previous candidate's, in the table
  };

  // The reason text of a failed check (a filter's FailedNodes), looked up or built here.
  static std::string Reason(const NodeCheck& c, const Lookups& look);

  // `index` (may be null): set to the node's index in the table when the node is known. The check
  // is returned as Rules makes it (no copy: it was a tenth of a filter's time at 5,000 names).
  NodeCheck Check(const std::string& name, const K8sPod& pod, const TenantInfo& tenant,
                  const std::optional<BreakerTrip>& trip, Lookups& look, std::size_t* index = nullptr) const;

  // The rules for a known node `n` (named `name`). No string is built for a node that passes or
  // fails a capacity, quota or breaker rule: the check carries the rule and its numbers.
  NodeCheck Rules(NodeId n, const std::string& name, const K8sPod& pod, const TenantInfo& tenant,
                  const std::optional<BreakerTrip>& trip, Lookups& look) const;

  // What filter and prioritize share: admit the pod and look up a breaker trip that blocks it.
  // Full-node mode's Nodes are candidates for this one decision and are never stored: the
  // extender verbs are unauthenticated (kube-scheduler sends no token), so a request must not
  // add, grow or shrink nodes. A candidate is judged on the node table (POST /v1/nodes, or the
  // API-server watch); a node only the request names is unknown. REQUIRES: mu held.
  struct Request {
    K8sPod pod;
    TenantInfo tenant;
    std::optional<BreakerTrip> trip;
  };
  Request Begin(const ExtenderArgs& args);

  // Prioritize's view of its candidates: the node's index, what the mask lets the policy place
  // there (kNone: a rule other than free capacity fails), the audit's grade weight and whether
  // the pod fits its free capacity (every rule passes: cluster::Fits holds).
  // REQUIRES: mu held (shared or exclusive).
  struct Screen {
    std::uint64_t generation = 0;
    std::vector<std::size_t> index;
    std::vector<cluster::NodeEligibility> eligibility;
    std::vector<double> weight;
    std::vector<std::uint8_t> fits;
  };
  Screen ScreenForPolicy(const std::vector<std::string>& candidates, const Request& r) const;
  // Appends one candidate (named `name`, at `index` in the table or NodeCheck::kUnknown) with its
  // check to a screen: ScreenForPolicy's step, and filter's for the nodes that pass.
  void ScreenNode(Screen& s, const std::string& name, std::size_t index, const NodeCheck& c, Lookups& look) const;

  // The policy's pick among `candidates` (prioritize's, and filter's under
  // server.extender_decide_at_filter): only what `screen` lets it place may be picked; a screen
  // made under another generation is made again. The pick's GPUs are kept for bind while the pod
  // is remembered. REQUIRES: mu held exclusively.
  sched::PlacementDecision Decide(const std::vector<std::string>& candidates, const Request& r, Screen& screen);

  // Whether a pod of priority lower than `priority` is bound on node `index` (kube-scheduler's
  // DefaultPreemption may evict only such pods: without one, preemption cannot make room there).
  bool LowerPriorityOn(std::size_t index, std::int32_t priority) const {
    return index < priorities.size() && !priorities[index].empty() && priorities[index].begin()->first < priority;
  }

  // Prepares the pod for decisions (QoS from its tier) and remembers it for bind. What is kept
  // is trimmed to what bind needs (the labels that name tenant and job; no annotations) and
  // bounded by count (options.seen_pods) and bytes (server.limits.seen_pod_bytes), oldest out.
  // A name bound under another uid is not re-pointed: the request gets its decision, and the
  // bound pod keeps its name (DELETE /v1/pods/{ns}/{name} frees the bound one).
  // REQUIRES: mu held (shared or exclusive); takes seen_mu.
  K8sPod Admit(const K8sPod& in, TenantInfo* tenant);

  // Forgets a pod remembered for bind (not its name mapping).
  void EraseSeen(const std::string& uid);

  // Estimated heap bytes of a remembered pod with its index entries (seen_order, uid_of).
  static std::size_t PodBytes(const K8sPod& p);
  std::size_t SeenByteCap() const { return options.seen_pod_bytes.value_or(config->limits.seen_pod_bytes); }
  std::size_t DecisionByteCap() const {
    return options.decision_log_bytes.value_or(config->limits.decision_log_bytes);
  }

  // Estimated heap bytes of a JSON value.
  static std::size_t JsonBytes(const json& j);

  // Appends to the pod's decision log, bounded by pods, entries per pod and bytes
  // (server.limits.decision_log_bytes): the oldest pods' logs go first.
  void Record(const std::string& key, json entry);

  // Releases assumed placements the watch has not confirmed within reservation_ms.
  // REQUIRES: mu held exclusively.
  void ExpireReservations();

  // Whether the pod holds a reservation of its own (an assumed placement) that a new filter or
  // prioritize of it must not count against it. REQUIRES: mu held.
  bool HoldsReservation(const std::string& uid) const;

  // A new filter or prioritize of a pod that holds a reservation: the reservation goes (the pod
  // is being placed again), and expired ones with it. REQUIRES: mu held exclusively.
  void DropReservation(const std::string& uid);

  void Release(const std::string& uid, bool unbind);

  // Sets a bound pod's reservation deadline (0: none, confirmed), keeping `deadlines` in step.
  void SetDeadline(const std::string& uid, Bound& b, std::int64_t until);

  // `assume`: Seedance placed the pod (prioritize's reservation, the bind verb); with the watch
  // on, the placement is assumed until the watch shows it (UpsertPods / ReplacePods: assume false).
  Status BindPod(K8sPod pod, const std::string& node_name, const std::string& field, bool assume = false);

  // Conditions (cordon, Ready, taints) change which node takes new pods, never what is bound.
  void UpsertNodesLocked(const std::vector<K8sNode>& nodes);

  // Keeps the nodes whose `keep[i]` is set (specs, conditions and the name index), in order.
  void KeepNodes(const std::vector<bool>& keep);
};

}  // namespace seedance::server
