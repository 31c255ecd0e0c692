#include "seedance/server/extender.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <numeric>
#include <set>
#include <shared_mutex>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "seedance/audit/admission.h"
#include "seedance/cluster/gpu_model.h"
#include "seedance/sched/frag.h"
#include "seedance/sched/victims.h"

namespace seedance::server {

using cluster::ClusterState;
using cluster::GpuAssignment;
using cluster::NodeId;
using cluster::NodeSpec;
using cluster::PodSpec;
using nlohmann::json;
using tenancy::Quantity;
using tenancy::Tier;

namespace {

constexpr const char* kDecisions = "seedance_decisions_total";
constexpr const char* kDuration = "seedance_decision_duration_seconds";
constexpr const char* kNodesGauge = "seedance_nodes";
constexpr const char* kPodsGauge = "seedance_pods_bound";
constexpr const char* kEvicted = "seedance_extender_evictions_total";
constexpr const char* kRetainedBytes = "seedance_extender_retained_bytes";
constexpr const char* kRetainedEntries = "seedance_extender_retained_entries";

cluster::Qos QosOf(Tier t) {
  switch (t) {
    case Tier::kGold: return cluster::Qos::kGuaranteed;
    case Tier::kSilver: return cluster::Qos::kBurstable;
    case Tier::kBronze: return cluster::Qos::kBestEffort;
  }
  return cluster::Qos::kBurstable;
}

enum class Verdict { kPass, kFailed, kUnresolvable };

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
      if (s.hash == h && entries_[s.entry - 1].first == name) return &entries_[s.entry - 1];
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
  std::size_t index = kUnknown;  // the node's index in the table
  static constexpr std::size_t kUnknown = static_cast<std::size_t>(-1);

  static NodeCheck Fail(Verdict v, Rule r, std::int64_t x = 0, std::int64_t y = 0) {
    return NodeCheck{v, r, x, y, std::string(), kUnknown};
  }
  static NodeCheck Text(Verdict v, Rule r, std::string why) {
    NodeCheck c = Fail(v, r);
    c.text = std::move(why);
    return c;
  }
};

GpuAssignment ChooseGpus(const cluster::NodeState& n, const PodSpec& pod) {
  if (!pod.is_gpu()) return {};
  return pod.is_share() ? cluster::BestFitShareGpu(n, pod) : cluster::FirstFitGpus(n, pod);
}

// Why `pod` does not fit the free capacity of `n` (rule kPass when it fits).
NodeCheck FitCheck(const cluster::NodeState& n, const PodSpec& pod) {
  if (pod.cpu.raw() > n.cpu_left) return NodeCheck::Fail(Verdict::kFailed, Rule::kFreeCpu, pod.cpu.raw(), n.cpu_left);
  if (pod.memory.raw() > n.mem_left) {
    return NodeCheck::Fail(Verdict::kFailed, Rule::kFreeMemory, pod.memory.raw(), n.mem_left);
  }
  if (pod.is_gpu()) {
    const int free = cluster::CountGpusWithIdle(n, pod.gpu_milli);
    if (pod.is_share()) {
      if (free == 0) {
        std::int32_t most = 0;
        for (int i = 0; i < n.gpu_count; ++i) most = std::max(most, n.gpu_idle[static_cast<std::size_t>(i)]);
        return NodeCheck::Fail(Verdict::kFailed, Rule::kFreeShare, pod.gpu_milli, most);
      }
    } else if (free < pod.num_gpu) {
      return NodeCheck::Fail(Verdict::kFailed, Rule::kFreeGpus, pod.num_gpu, free);
    }
  }
  if (!cluster::Fits(n, pod)) return NodeCheck::Fail(Verdict::kFailed, Rule::kNoFit);
  return {};
}

// The rule's name, the key of a filter decision's "failed_by_rule" (the reason's prefix).
std::string_view RuleName(const NodeCheck& c) {
  switch (c.rule) {
    case Rule::kPass: return "";
    case Rule::kUnknown: return "unknown node";
    case Rule::kCondition: return c.text.rfind("taint:", 0) == 0 ? "taint" : "node";
    case Rule::kAudit: return "audit";
    case Rule::kTier: return "tier";
    case Rule::kBreaker: return "breaker";
    case Rule::kQuota: return "quota";
    default: return "fit";
  }
}

// A check's reason for the rules that need no lookups (everything but kBreaker and kQuota).
std::string FitText(const NodeCheck& c) {
  switch (c.rule) {
    case Rule::kPass: return "";
    case Rule::kUnknown:
      return "unknown node: not in the node table (POST /v1/nodes or the API-server watch; the Nodes of a filter "
             "request are not stored)";
    case Rule::kNodeCpu: return fmt::format("fit: needs {}m CPU, node has {}m", c.a, c.b);
    case Rule::kNodeMemory: return fmt::format("fit: needs {}Mi memory, node has {}Mi", c.a, c.b);
    case Rule::kNoGpu: return "fit: node has no GPU";
    case Rule::kModel:
      return fmt::format("fit: GPU model {} not accepted by the pod",
                         cluster::GpuModelName(static_cast<cluster::GpuModelIndex>(c.a)));
    case Rule::kNodeGpus: return fmt::format("fit: needs {} GPU, node has {}", c.a, c.b);
    case Rule::kFreeCpu: return fmt::format("fit: needs {}m CPU, {}m free", c.a, c.b);
    case Rule::kFreeMemory: return fmt::format("fit: needs {}Mi memory, {}Mi free", c.a, c.b);
    case Rule::kFreeShare: return fmt::format("fit: needs {} milli-GPU on one GPU, at most {} free", c.a, c.b);
    case Rule::kFreeGpus: return fmt::format("fit: needs {} GPU, {} free", c.a, c.b);
    case Rule::kNoFit: return "fit: does not fit";
    default: return c.text;
  }
}

// Why `pod` does not fit the free capacity of `n` ("" when it fits).
std::string FitReason(const cluster::NodeState& n, const PodSpec& pod) { return FitText(FitCheck(n, pod)); }

// Whether a node's conditions can bar any pod (a cordon, a Ready condition other than True, a
// NoSchedule or NoExecute taint); nodes without are passed without calling ScheduleBlock.
bool MayBlock(const NodeConditions& c) {
  if (c.unschedulable || (!c.ready.empty() && c.ready != "True")) return true;
  return std::any_of(c.taints.begin(), c.taints.end(),
                     [](const K8sTaint& t) { return t.effect == "NoSchedule" || t.effect == "NoExecute"; });
}

}  // namespace

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
  std::size_t assumed = 0;      // bound pods with assumed_until_ms > 0
  // Uids the watch (or an authenticated POST /v1/pods) lists as pending: the only pods filter and
  // prioritize reserve for, so an anonymous request naming an invented pod cannot hold a tenant's
  // quota. Bounded by the cluster's own pods; written under `mu` exclusive.
  std::set<std::string> listed_pending;
  bool MayReserve(const std::string& uid) const { return watch_confirms && listed_pending.count(uid) != 0; }
  std::shared_ptr<const ServerConfig> config;
  std::optional<tenancy::QuotaBook> book;
  std::vector<std::vector<bool>> named;  // [tenant][resource]: the tenant has a quota for it
  std::vector<NodeSpec> specs;
  NameIndex node_index;  // name -> index in specs (looked up per candidate)
  // By node index, beside specs: the node's conditions (cordon, Ready, taints) and whether they
  // can bar any pod (MayBlock); the watch sets Ready=True on every node, so most pass on the flag.
  std::vector<NodeConditions> conds;
  std::vector<std::uint8_t> blocks;
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

  Impl(App& a, ExtenderOptions o) : app(a), options(std::move(o)) {
    app.metrics.DeclareCounter(kDecisions, "Extender decisions by verb and result.");
    app.metrics.DeclareHistogram(kDuration, "Extender decision latency by verb.",
                                 {50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3});
    app.metrics.DeclareGauge(kNodesGauge, "Nodes the extender knows.");
    app.metrics.DeclareGauge(kPodsGauge, "Pods bound in the extender's state.");
    app.metrics.DeclareGauge(kRetainedBytes, "Estimated bytes the extender keeps, by what (seen_pods, decision_log).");
    app.metrics.DeclareGauge(kRetainedEntries,
                             "Entries the extender keeps, by what (seen_pods, decision_log, pod_names).");
    app.metrics.DeclareCounter(kEvicted,
                               "Entries dropped oldest-first at a cap (server.limits), by what: seen_pods, "
                               "seen_pod_bytes, decision_pods, decision_log_bytes.");
    cluster = std::make_unique<ClusterState>(std::vector<NodeSpec>{});
    Configure(app.config.Get(), /*reseed=*/true);
  }

  std::int64_t Now() const { return app.now_ms ? app.now_ms() : 0; }

  void Count(std::string_view verb, std::string_view result, double seconds) {
    app.metrics.Inc(kDecisions, {{"verb", std::string(verb)}, {"result", std::string(result)}});
    app.metrics.Observe(kDuration, {{"verb", std::string(verb)}}, seconds);
  }
  // REQUIRES: mu held (shared or exclusive).
  void Gauges() {
    app.metrics.Set(kNodesGauge, {}, static_cast<double>(specs.size()));
    app.metrics.Set(kPodsGauge, {}, static_cast<double>(bound.size()));
    std::size_t bytes = 0, pods = 0, names = 0, logs = 0, picked = 0;
    {
      std::lock_guard seen_lock(seen_mu);
      bytes = seen_bytes;
      pods = seen.size();
      names = uid_of.size();
      picked = picks.size();  // picks shrink with the seen pods (Admit), under seen_mu or mu exclusive
    }
    {
      std::lock_guard log_lock(log_mu);
      app.metrics.Set(kRetainedBytes, {{"what", "decision_log"}}, static_cast<double>(decision_bytes));
      logs = decisions.size();
    }
    app.metrics.Set(kRetainedBytes, {{"what", "seen_pods"}}, static_cast<double>(bytes));
    app.metrics.Set(kRetainedEntries, {{"what", "seen_pods"}}, static_cast<double>(pods));
    app.metrics.Set(kRetainedEntries, {{"what", "decision_log"}}, static_cast<double>(logs));
    app.metrics.Set(kRetainedEntries, {{"what", "pod_names"}}, static_cast<double>(names));
    app.metrics.Set(kRetainedEntries, {{"what", "picks"}}, static_cast<double>(picked));
  }

  // --- tenancy ---
  TenantInfo TenantOf(const K8sPod& pod) const {
    TenantInfo info;
    const std::string name = pod.tenant();
    const tenancy::TenantConfig* found = nullptr;
    for (const auto& t : config->tenancy.tenants) {
      if (t.name == name) found = &t;
    }
    if (found == nullptr) {
      for (const auto& t : config->tenancy.tenants) {
        if (t.name == "default") found = &t;
      }
    }
    if (found == nullptr) return info;
    info.name = found->name;
    info.tier = found->tier;
    if (book.has_value()) info.book = book->TenantIndex(found->name);
    return info;
  }

  // The pod's request by QuotaBook resource, GPUs counted against the node's model.
  // Resources a tenant names no quota for are not limited for it (counted as 0).
  std::vector<Quantity> RequestOn(const PodSpec& pod, cluster::GpuModelIndex model, int tenant) const {
    std::vector<Quantity> r(static_cast<std::size_t>(book ? book->num_resources() : 0), 0);
    if (!book || tenant < 0) return r;
    const std::vector<bool>& limited = named[static_cast<std::size_t>(tenant)];
    const std::string model_res =
        model == cluster::kNoGpuModel ? std::string() : tenancy::GpuResourceName(cluster::GpuModelName(model));
    for (int i = 0; i < book->num_resources(); ++i) {
      const std::string& name = book->resource_name(i);
      Quantity q = 0;
      if (name == "gpu" || (!model_res.empty() && name == model_res)) {
        q = pod.total_gpu_milli();
      } else if (name == "cpu") {
        q = pod.cpu.raw();
      } else if (name == "memory") {
        q = (pod.memory.raw() * 1000 + 1023) / 1024;
      }
      if (limited[static_cast<std::size_t>(i)]) r[static_cast<std::size_t>(i)] = q;
    }
    return r;
  }

  std::string QuotaReason(const TenantInfo& t, const std::vector<Quantity>& req) const {
    if (t.book < 0 || !book) return "";
    if (book->Check(t.book, req) != tenancy::FitKind::kNoFit) return "";
    for (int r = 0; r < book->num_resources(); ++r) {
      const Quantity want = req[static_cast<std::size_t>(r)];
      if (want == 0) continue;
      const Quantity use = book->usage(t.book, r);
      const Quantity avail = book->Available(t.book, r);
      if (want <= avail) continue;
      const Quantity nominal = book->nominal(t.book, r);
      const Quantity lends = std::max<Quantity>(0, avail - std::max<Quantity>(0, nominal - use));
      return fmt::format("quota: tenant {} would use {}/{} {} (nominal {}, cohort lends {})", t.name,
                         tenancy::FromQuantity(use + want), tenancy::FromQuantity(use + avail),
                         book->resource_name(r), tenancy::FromQuantity(nominal),
                         tenancy::FromQuantity(lends));
    }
    return "quota: no fit";
  }

  // --- nodes ---
  void Rebuild() {
    cluster = std::make_unique<ClusterState>(specs);
    std::vector<Bound*> order;
    for (auto& [uid, b] : bound) order.push_back(&b);
    std::sort(order.begin(), order.end(), [](const Bound* a, const Bound* b) { return a->seq < b->seq; });
    std::vector<std::string> dropped;
    for (Bound* b : order) {
      auto it = node_index.find(b->pod.node_name);
      const NodeId n(static_cast<std::uint32_t>(it->second));
      b->node = n;
      if (!cluster->CanPlace(n, b->pod.spec)) {
        dropped.push_back(b->pod.uid);
        continue;
      }
      b->gpus = ChooseGpus(cluster->node(n), b->pod.spec);
      cluster->Bind(b->pod.spec, n, b->gpus);
    }
    for (const auto& uid : dropped) {
      app.Log("warn", "extender_pod_dropped", {{"pod", bound[uid].pod.key()}, {"reason", "node shrank"}});
      Release(uid, /*unbind=*/false);
    }
    picks.clear();
    BuildPolicy();
  }

  void BuildPolicy() {
    if (options.context.has_value() && options.context->tie_rank.size() == specs.size()) {
      context = *options.context;
    } else {
      std::vector<PodSpec> pods;
      for (const auto& [uid, b] : bound) pods.push_back(b.pod.spec);
      for (const auto& [uid, p] : seen) pods.push_back(p.spec);
      context = sched::NameOrderPolicyContext(specs, pods);
    }
    auto p = sched::MakePlacementPolicy(config->placement_policy, context);
    if (!p.has_value()) p = sched::MakePlacementPolicy("bestfit", context);  // CheckConfig vetted the name
    policy = std::move(*p);
  }

  void Configure(std::shared_ptr<const ServerConfig> c, bool reseed) {
    config = std::move(c);
    auto b = tenancy::QuotaBook::Build(config->tenancy.tenants, /*allow_borrowing=*/true);
    book.reset();
    named.clear();
    if (b.has_value()) {
      book = std::move(*b);
      named.assign(static_cast<std::size_t>(book->num_tenants()),
                   std::vector<bool>(static_cast<std::size_t>(book->num_resources()), false));
      for (const auto& t : config->tenancy.tenants) {
        const int ti = book->TenantIndex(t.name);
        if (ti < 0) continue;
        for (const auto& q : t.quota) {
          const int ri = book->ResourceIndex(q.resource);
          if (ri >= 0) named[static_cast<std::size_t>(ti)][static_cast<std::size_t>(ri)] = true;
        }
      }
    }
    for (auto& [uid, x] : bound) {
      const TenantInfo t = TenantOf(x.pod);
      x.tenant = t.book;
      x.pod.spec.qos = QosOf(t.tier);
      x.request = RequestOn(x.pod.spec, specs[x.node.value()].model, x.tenant);
      if (book && x.tenant >= 0) book->Add(x.tenant, x.request);
    }
    if (reseed) rng = Rng(config->seed).Fork(1);
    BuildPolicy();
  }

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
  static std::string Reason(const NodeCheck& c, const Lookups& look) {
    switch (c.rule) {
      case Rule::kBreaker: return look.breaker;
      case Rule::kQuota: return look.quota[static_cast<std::size_t>(c.a)].second;
      default: return FitText(c);
    }
  }

  NodeCheck Check(const std::string& name, const K8sPod& pod, const TenantInfo& tenant,
                  const std::optional<BreakerTrip>& trip, Lookups& look) const {
    // kube-scheduler lists the nodes in its snapshot's order and the table holds them in the order
    // the watch's list brought them (both the API server's, by name), so a candidate is usually
    // the node after the previous one: one compare of names read in sequence, where a hash probe
    // is a cache miss per name. Anything else is looked up.
    std::size_t index = look.next;
    if (index >= specs.size() || specs[index].name != name) {
      auto it = node_index.find(name);
      if (it == node_index.end()) return NodeCheck::Fail(Verdict::kUnresolvable, Rule::kUnknown);
      index = it->second;
    }
    look.next = index + 1;
    NodeCheck c = Rules(NodeId(static_cast<std::uint32_t>(index)), name, pod, tenant, trip, look);
    c.index = index;
    return c;
  }

  // The rules for a known node `n` (named `name`). No string is built for a node that passes or
  // fails a capacity, quota or breaker rule: the check carries the rule and its numbers.
  NodeCheck Rules(NodeId n, const std::string& name, const K8sPod& pod, const TenantInfo& tenant,
                  const std::optional<BreakerTrip>& trip, Lookups& look) const {
    if (blocks[n.value()] != 0) {
      if (std::string why = ScheduleBlock(conds[n.value()], pod.tolerations); !why.empty()) {
        return NodeCheck::Text(Verdict::kUnresolvable, Rule::kCondition, std::move(why));
      }
    }
    if (const NodeHealth* h = look.health.Find(name); h != nullptr) {
      switch (audit::EligibilityOf(h->state)) {
        case cluster::NodeEligibility::kNone:
          return NodeCheck::Text(Verdict::kUnresolvable, Rule::kAudit,
                                 fmt::format("audit: node {} ({})", audit::AdmissionStateName(h->state), h->reason));
        case cluster::NodeEligibility::kBestEffortOnly:
          if (pod.spec.qos != cluster::Qos::kBestEffort) {
            return NodeCheck::Text(Verdict::kUnresolvable, Rule::kTier,
                                   fmt::format("tier: node in observation admits Bronze only ({})", h->reason));
          }
          break;
        case cluster::NodeEligibility::kAll:
          break;
      }
    }
    if (trip.has_value()) {
      if (look.breaker.empty()) look.breaker = fmt::format("breaker: {}; POST /v1/breaker/reset", trip->reason);
      return NodeCheck::Fail(Verdict::kUnresolvable, Rule::kBreaker);
    }
    const NodeSpec& s = specs[n.value()];
    const PodSpec& p = pod.spec;
    if (p.cpu.raw() > s.cpu.raw()) return NodeCheck::Fail(Verdict::kUnresolvable, Rule::kNodeCpu, p.cpu.raw(), s.cpu.raw());
    if (p.memory.raw() > s.memory.raw()) {
      return NodeCheck::Fail(Verdict::kUnresolvable, Rule::kNodeMemory, p.memory.raw(), s.memory.raw());
    }
    if (p.is_gpu()) {
      if (!p.allowed_models.Accepts(s.model)) {
        return s.model == cluster::kNoGpuModel ? NodeCheck::Fail(Verdict::kUnresolvable, Rule::kNoGpu)
                                               : NodeCheck::Fail(Verdict::kUnresolvable, Rule::kModel, s.model);
      }
      if (p.num_gpu > s.gpu_count) return NodeCheck::Fail(Verdict::kUnresolvable, Rule::kNodeGpus, p.num_gpu, s.gpu_count);
    }
    auto q = std::find_if(look.quota.begin(), look.quota.end(), [&](const auto& m) { return m.first == s.model; });
    if (q == look.quota.end()) {
      look.quota.emplace_back(s.model, QuotaReason(tenant, RequestOn(p, s.model, tenant.book)));
      q = look.quota.end() - 1;
    }
    if (!q->second.empty()) return NodeCheck::Fail(Verdict::kFailed, Rule::kQuota, q - look.quota.begin());
    return FitCheck(cluster->node(n), p);
  }

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
  Request Begin(const ExtenderArgs& args) {
    Request r;
    r.pod = Admit(args.pod, &r.tenant);
    r.trip = app.breaker.Active(r.pod.namespace_name, r.pod.job(), Now());
    return r;
  }

  // Prioritize's view of its candidates: the node's index, what the mask lets the policy place
  // there (kNone: a rule other than free capacity fails) and the audit's grade weight.
  // REQUIRES: mu held (shared or exclusive).
  struct Screen {
    std::uint64_t generation = 0;
    std::vector<std::size_t> index;
    std::vector<cluster::NodeEligibility> eligibility;
    std::vector<double> weight;
  };
  Screen ScreenForPolicy(const std::vector<std::string>& candidates, const Request& r) const {
    Screen out;
    out.generation = generation;
    out.index.assign(candidates.size(), NodeCheck::kUnknown);
    out.eligibility.assign(candidates.size(), cluster::NodeEligibility::kNone);
    out.weight.assign(candidates.size(), 1.0);
    Lookups look(app.health);
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const NodeCheck c = Check(candidates[i], r.pod, r.tenant, r.trip, look);
      out.index[i] = c.index;
      if (c.verdict == Verdict::kUnresolvable || c.rule == Rule::kQuota) continue;
      const NodeHealth* h = look.health.Find(candidates[i]);
      out.eligibility[i] = h != nullptr ? audit::EligibilityOf(h->state) : cluster::NodeEligibility::kAll;
      out.weight[i] = h != nullptr ? h->grade_weight : 1.0;
    }
    return out;
  }

  // Prepares the pod for decisions (QoS from its tier) and remembers it for bind. What is kept
  // is trimmed to what bind needs (the labels that name tenant and job; no annotations) and
  // bounded by count (options.seen_pods) and bytes (server.limits.seen_pod_bytes), oldest out.
  // A name bound under another uid is not re-pointed: the request gets its decision, and the
  // bound pod keeps its name (DELETE /v1/pods/{ns}/{name} frees the bound one).
  // REQUIRES: mu held (shared or exclusive); takes seen_mu.
  K8sPod Admit(const K8sPod& in, TenantInfo* tenant) {
    K8sPod pod = in;
    *tenant = TenantOf(pod);
    pod.spec.qos = QosOf(tenant->tier);
    if (bound.count(pod.uid) != 0) return pod;
    std::lock_guard seen_lock(seen_mu);
    if (auto u = uid_of.find(pod.key()); u != uid_of.end() && u->second != pod.uid && bound.count(u->second) != 0) {
      return pod;
    }
    K8sPod kept = pod;
    kept.annotations.clear();
    kept.tolerations.clear();  // bind does not judge conditions: the scheduler decided
    std::erase_if(kept.labels, [](const auto& kv) { return kv.first != kTenantLabel && kv.first != kJobLabel; });
    const std::size_t bytes = PodBytes(kept);
    const bool fresh = seen.count(pod.uid) == 0;
    EraseSeen(pod.uid);
    seen.emplace(pod.uid, std::move(kept));
    seen_bytes += bytes;
    uid_of[pod.key()] = pod.uid;
    if (fresh) seen_order.push_back(pod.uid);
    const std::size_t cap = SeenByteCap();
    while (!seen_order.empty() && seen_order.front() != pod.uid &&
           (seen_order.size() > options.seen_pods || seen_bytes > cap)) {
      const std::string old = std::move(seen_order.front());
      seen_order.pop_front();
      if (auto it = seen.find(old); it != seen.end()) {
        app.metrics.Inc(kEvicted, {{"what", seen_bytes > cap ? "seen_pod_bytes" : "seen_pods"}});
        if (auto u = uid_of.find(it->second.key()); u != uid_of.end() && u->second == old) uid_of.erase(u);
        EraseSeen(old);
        picks.erase(old);
      }
    }
    return pod;
  }

  // Forgets a pod remembered for bind (not its name mapping).
  void EraseSeen(const std::string& uid) {
    auto it = seen.find(uid);
    if (it == seen.end()) return;
    seen_bytes -= std::min(seen_bytes, PodBytes(it->second));
    seen.erase(it);
  }

  // Estimated heap bytes of a remembered pod with its index entries (seen_order, uid_of).
  static std::size_t PodBytes(const K8sPod& p) {
    std::size_t n = sizeof(K8sPod) + 160 + 3 * p.uid.size() + 2 * (p.name.size() + p.namespace_name.size()) +
                    p.node_name.size() + p.phase.size() + p.spec.name.size();
    for (const auto& [k, v] : p.labels) n += 64 + k.size() + v.size();
    for (const auto& [k, v] : p.annotations) n += 64 + k.size() + v.size();
    return n;
  }
  std::size_t SeenByteCap() const { return options.seen_pod_bytes.value_or(config->limits.seen_pod_bytes); }
  std::size_t DecisionByteCap() const {
    return options.decision_log_bytes.value_or(config->limits.decision_log_bytes);
  }

  // Estimated heap bytes of a JSON value.
  static std::size_t JsonBytes(const json& j) {
    std::size_t n = sizeof(json);
    if (j.is_string()) return n + j.get_ref<const std::string&>().size();
    if (j.is_object()) {
      for (auto it = j.begin(); it != j.end(); ++it) n += 48 + it.key().size() + JsonBytes(*it);
    } else if (j.is_array()) {
      for (const auto& e : j) n += JsonBytes(e);
    }
    return n;
  }

  // Appends to the pod's decision log, bounded by pods, entries per pod and bytes
  // (server.limits.decision_log_bytes): the oldest pods' logs go first.
  void Record(const std::string& key, json entry) {
    const std::size_t bytes = JsonBytes(entry) + key.size() + 96;
    std::lock_guard log_lock(log_mu);
    auto [it, inserted] = decisions.try_emplace(key);
    if (inserted) decision_order.push_back(key);
    it->second.push_back(std::move(entry));
    decision_bytes += bytes;
    decision_bytes_of[key] += bytes;
    while (it->second.size() > options.decisions_per_pod) {
      const std::size_t b = JsonBytes(it->second.front()) + key.size() + 96;
      decision_bytes -= std::min(decision_bytes, b);
      decision_bytes_of[key] -= std::min(decision_bytes_of[key], b);
      it->second.pop_front();
    }
    const std::size_t cap = DecisionByteCap();
    while (!decision_order.empty() && decision_order.front() != key &&
           (decision_order.size() > options.decision_pods || decision_bytes > cap)) {
      const std::string old = std::move(decision_order.front());
      decision_order.pop_front();
      app.metrics.Inc(kEvicted, {{"what", decision_bytes > cap ? "decision_log_bytes" : "decision_pods"}});
      decision_bytes -= std::min(decision_bytes, decision_bytes_of[old]);
      decision_bytes_of.erase(old);
      decisions.erase(old);
    }
  }

  // Releases assumed placements the watch has not confirmed within reservation_ms.
  // REQUIRES: mu held exclusively.
  void ExpireReservations() {
    if (assumed == 0) return;
    const std::int64_t now = Now();
    std::vector<std::string> expired;
    for (const auto& [uid, b] : bound) {
      if (b.assumed_until_ms > 0 && b.assumed_until_ms <= now) expired.push_back(uid);
    }
    for (const auto& uid : expired) {
      app.Log("info", "extender_reservation_expired", {{"pod", bound[uid].pod.key()}, {"node", bound[uid].pod.node_name}});
      Release(uid, /*unbind=*/true);
    }
    if (!expired.empty()) generation++;
  }

  // Whether the pod holds a reservation of its own (an assumed placement) that a new filter or
  // prioritize of it must not count against it. REQUIRES: mu held.
  bool HoldsReservation(const std::string& uid) const {
    if (assumed == 0) return false;
    auto it = bound.find(uid);
    return it != bound.end() && it->second.assumed_until_ms > 0;
  }

  // A new filter or prioritize of a pod that holds a reservation: the reservation goes (the pod
  // is being placed again), and expired ones with it. REQUIRES: mu held exclusively.
  void DropReservation(const std::string& uid) {
    ExpireReservations();
    if (HoldsReservation(uid)) {
      Release(uid, /*unbind=*/true);
      generation++;
    }
  }

  void Release(const std::string& uid, bool unbind) {
    auto it = bound.find(uid);
    if (it == bound.end()) return;
    Bound& b = it->second;
    if (b.assumed_until_ms > 0) --assumed;
    if (unbind) cluster->Unbind(b.pod.spec, b.node, b.gpus);
    if (book && b.tenant >= 0) book->Remove(b.tenant, b.request);
    uid_of.erase(b.pod.key());
    bound.erase(it);
  }

  // `assume`: Seedance placed the pod (prioritize's reservation, the bind verb); with the watch
  // on, the placement is assumed until the watch shows it (UpsertPods / ReplacePods: assume false).
  Status BindPod(K8sPod pod, const std::string& node_name, const std::string& field, bool assume = false) {
    auto it = node_index.find(node_name);
    if (it == node_index.end()) {
      return NotFoundError(fmt::format("{}: unknown node '{}'", field, node_name));
    }
    const NodeId n(static_cast<std::uint32_t>(it->second));
    const std::int64_t until = assume && watch_confirms ? Now() + std::max<std::int64_t>(1, options.reservation_ms) : 0;
    if (auto b = bound.find(pod.uid); b != bound.end()) {
      if (b->second.node == n) {
        // Confirmed by the watch, or placed again by Seedance (a new deadline while unconfirmed).
        if (b->second.assumed_until_ms > 0 && until == 0) --assumed;
        if (b->second.assumed_until_ms > 0 || until == 0) b->second.assumed_until_ms = until;
        return Status::Ok();
      }
      Release(pod.uid, /*unbind=*/true);
    }
    // The same name with a new uid is a new pod (the old one was deleted and recreated): the
    // old one's GPUs are freed first, so the name never points at a pod other than the bound one.
    if (auto u = uid_of.find(pod.key()); u != uid_of.end() && u->second != pod.uid && bound.count(u->second) != 0) {
      Release(u->second, /*unbind=*/true);
    }
    TenantInfo t;
    pod = Admit(pod, &t);
    const cluster::NodeState& ns = cluster->node(n);
    if (!cluster::Fits(ns, pod.spec)) {
      std::string why = FitReason(ns, pod.spec);
      if (!pod.spec.allowed_models.Accepts(ns.model) && pod.spec.is_gpu()) why = "fit: GPU model not accepted";
      return FailedPreconditionError(fmt::format("{}: {} on {}", field, why, node_name));
    }
    GpuAssignment gpus;
    if (auto p = picks.find(pod.uid); p != picks.end() && p->second.node == node_name &&
                                      p->second.version == cluster->version(n)) {
      gpus = p->second.gpus;
    } else {
      gpus = ChooseGpus(ns, pod.spec);
    }
    picks.erase(pod.uid);
    // The scheduler (or the cluster) decided: bind even where the audit mask would not place.
    const cluster::NodeEligibility e = cluster->eligibility(n);
    cluster->SetEligibility(n, cluster::NodeEligibility::kAll);
    cluster->Bind(pod.spec, n, gpus);
    cluster->SetEligibility(n, e);
    pod.node_name = node_name;
    Bound b;
    b.node = n;
    b.gpus = gpus;
    b.tenant = t.book;
    b.request = RequestOn(pod.spec, specs[n.value()].model, t.book);
    b.seq = next_seq++;
    b.assumed_until_ms = until;
    if (until > 0) ++assumed;
    if (book && b.tenant >= 0) book->Add(b.tenant, b.request);
    EraseSeen(pod.uid);
    uid_of[pod.key()] = pod.uid;
    b.pod = std::move(pod);
    bound.emplace(b.pod.uid, std::move(b));
    return Status::Ok();
  }

  // Conditions (cordon, Ready, taints) change which node takes new pods, never what is bound.
  void UpsertNodesLocked(const std::vector<K8sNode>& nodes) {
    bool changed = false;
    for (const auto& n : nodes) {
      auto it = node_index.find(n.name);
      std::size_t i = 0;
      if (it == node_index.end()) {
        i = specs.size();
        node_index.emplace(n.name, i);
        specs.push_back(n.spec);
        conds.emplace_back();
        blocks.push_back(0);
        changed = true;
      } else {
        i = it->second;
        NodeSpec& s = specs[i];
        if (s.cpu != n.spec.cpu || s.memory != n.spec.memory || s.gpu_count != n.spec.gpu_count ||
            s.model != n.spec.model) {
          s = n.spec;
          changed = true;
        }
      }
      conds[i] = n.conditions;
      blocks[i] = MayBlock(n.conditions) ? 1 : 0;
    }
    if (changed) Rebuild();
  }

  // Keeps the nodes whose `keep[i]` is set (specs, conditions and the name index), in order.
  void KeepNodes(const std::vector<bool>& keep) {
    std::size_t w = 0;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (!keep[i]) continue;
      if (w != i) {
        specs[w] = std::move(specs[i]);
        conds[w] = std::move(conds[i]);
        blocks[w] = blocks[i];
      }
      ++w;
    }
    specs.resize(w);
    conds.resize(w);
    blocks.resize(w);
    node_index.clear();
    for (std::size_t i = 0; i < specs.size(); ++i) node_index.emplace(specs[i].name, i);
  }
};

Extender::Extender(App& app, ExtenderOptions options)
    : impl_(std::make_unique<Impl>(app, std::move(options))) {}
Extender::~Extender() = default;

namespace {
double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

FilterResult Extender::Filter(const ExtenderArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  Impl& m = *impl_;
  bool reserved = false;
  {
    std::shared_lock probe(m.mu);
    reserved = m.HoldsReservation(args.pod.uid);
  }
  if (reserved) {
    std::unique_lock drop(m.mu);
    m.DropReservation(args.pod.uid);
  }
  std::shared_lock lock(m.mu);  // filters run side by side; only Admit's memo takes seen_mu
  const auto [pod, tenant, trip] = m.Begin(args);
  FilterResult r;
  if (args.nodes.has_value()) r.nodes.emplace();
  std::vector<std::string> scratch;
  const std::vector<std::string>& candidates = args.Candidates(&scratch);
  Impl::Lookups look(m.app.health);
  json reasons = json::object();
  std::map<std::string_view, std::int64_t> by_rule;
  std::size_t failed = 0;
  // One text per distinct (rule, numbers): a full cluster fails thousands of nodes on a handful of reasons.
  std::map<std::tuple<Rule, std::int64_t, std::int64_t>, std::string> texts;
  auto reason = [&](NodeCheck& c) -> std::string {
    if (!c.text.empty()) return std::move(c.text);
    auto [it, fresh] = texts.try_emplace({c.rule, c.a, c.b});
    if (fresh) it->second = Impl::Reason(c, look);
    return it->second;
  };
  const std::string* only = nullptr;  // the one node that passes, if exactly one does
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string& name = candidates[i];
    NodeCheck c = m.Check(name, pod, tenant, trip, look);
    if (c.verdict == Verdict::kPass) {
      only = only == nullptr && (r.nodes.has_value() ? r.nodes->empty() : r.node_names.empty()) ? &name : nullptr;
      if (r.nodes.has_value()) {
        r.nodes->push_back(args.raw_nodes[i]);
      } else {
        r.node_names.push_back(name);
      }
      continue;
    }
    by_rule[RuleName(c)] += 1;
    std::string why = reason(c);
    if (++failed <= m.options.reasons_per_decision) reasons[name] = why;
    (c.verdict == Verdict::kFailed ? r.failed : r.failed_unresolvable)[name] = std::move(why);
  }
  json rules = json::object();
  for (const auto& [rule, count] : by_rule) rules[std::string(rule)] = count;
  const std::size_t passed = r.nodes.has_value() ? r.nodes->size() : r.node_names.size();
  m.Record(pod.key(), json{{"verb", "filter"},
                           {"time_ms", m.Now()},
                           {"candidates", candidates.size()},
                           {"passed", passed},
                           {"failed_by_rule", std::move(rules)},
                           {"reasons", std::move(reasons)},
                           {"reasons_omitted", failed - std::min(failed, m.options.reasons_per_decision)}});
  m.Count("filter", passed > 0 ? "ok" : "unschedulable", Since(t0));
  m.Gauges();
  // One feasible node: kube-scheduler takes it without scoring (no prioritize follows), so the
  // reservation prioritize would make is made here.
  if (passed == 1 && only != nullptr && m.MayReserve(pod.uid)) {
    const std::string node = *only;
    lock.unlock();
    std::unique_lock reserve(m.mu);
    m.ExpireReservations();
    if (m.BindPod(pod, node, "filter", /*assume=*/true).ok()) m.generation++;
  }
  return r;
}

std::vector<HostPriority> Extender::Prioritize(const ExtenderArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  Impl& m = *impl_;
  std::vector<std::string> scratch;
  const std::vector<std::string>& candidates = args.Candidates(&scratch);
  // The rules per candidate under the shared lock (beside filters); the policy, which masks the
  // cluster and draws from the rng, under the exclusive one. A change in between (a bind, a node,
  // a config) is seen by the generation, and the rules run again.
  Impl::Request req;
  Impl::Screen screen;
  bool reserved = false;
  {
    std::shared_lock lock(m.mu);
    reserved = m.HoldsReservation(args.pod.uid);
    if (!reserved) {
      req = m.Begin(args);
      screen = m.ScreenForPolicy(candidates, req);
    }
  }
  std::unique_lock lock(m.mu);
  m.ExpireReservations();
  if (reserved || m.HoldsReservation(args.pod.uid)) {
    m.DropReservation(args.pod.uid);
    req = m.Begin(args);
  }
  if (screen.generation != m.generation || screen.index.size() != candidates.size()) {
    screen = m.ScreenForPolicy(candidates, req);
  }
  const K8sPod& pod = req.pod;
  ClusterState& cl = *m.cluster;
  // Mask: only candidates that pass the rules (fit aside: the policy checks it) may be picked.
  for (std::size_t i = 0; i < cl.size(); ++i) {
    cl.SetEligibility(NodeId(static_cast<std::uint32_t>(i)), cluster::NodeEligibility::kNone);
  }
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (screen.index[i] == NodeCheck::kUnknown || screen.eligibility[i] == cluster::NodeEligibility::kNone) continue;
    const NodeId n(static_cast<std::uint32_t>(screen.index[i]));
    cl.SetEligibility(n, screen.eligibility[i]);
    cl.SetWeight(n, screen.weight[i]);
  }
  const sched::PlacementDecision d = m.policy->Decide(cl, pod.spec, m.rng);
  std::vector<HostPriority> out;
  out.reserve(candidates.size());
  std::string chosen;
  if (d.placed()) {
    chosen = m.specs[d.node.value()].name;
    // Kept for bind only while the pod is remembered (seen, capped): anonymous prioritize calls
    // with fresh uids grew it without bound.
    if (m.seen.count(pod.uid) != 0) m.picks[pod.uid] = Impl::Pick{chosen, d.gpus, cl.version(d.node)};
  }
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    HostPriority h{candidates[i], 0};
    if (screen.index[i] != NodeCheck::kUnknown) {
      const NodeId n(static_cast<std::uint32_t>(screen.index[i]));
      if (d.placed() && n == d.node) {
        h.score = 10;
      } else if (cl.CanPlace(n, pod.spec)) {
        const cluster::NodeState& ns = cl.node(n);
        double fill = 0;
        if (pod.spec.is_gpu()) {
          const auto idle = ns.TotalGpuIdle();
          fill = idle > 0 ? static_cast<double>(pod.spec.total_gpu_milli()) / static_cast<double>(idle) : 0;
        } else if (ns.cpu_left > 0) {
          fill = static_cast<double>(pod.spec.cpu.raw()) / static_cast<double>(ns.cpu_left);
        }
        const double base = 1.0 + std::floor(8.0 * std::min(1.0, fill));
        h.score = std::clamp<std::int64_t>(std::llround(base * screen.weight[i]), 0, 9);
      }
    }
    out.push_back(std::move(h));
  }
  // Reserve the pick: quota and GPUs held until the watch shows where the pod went (or the
  // reservation expires), so the next pods of a burst see them taken.
  if (d.placed() && m.MayReserve(pod.uid)) {
    (void)m.BindPod(pod, chosen, "prioritize", /*assume=*/true);
    m.generation++;
  }
  const std::string policy_name(m.policy->Name());
  lock.unlock();
  m.Record(pod.key(), json{{"verb", "prioritize"},
                           {"time_ms", m.Now()},
                           {"candidates", candidates.size()},
                           {"chosen", chosen},
                           {"score", chosen.empty() ? 0 : 10},
                           {"policy", policy_name}});
  m.Count("prioritize", chosen.empty() ? "unschedulable" : "ok", Since(t0));
  m.Gauges();
  return out;
}

std::map<std::string, MetaVictims> Extender::Preempt(const ExtenderPreemptionArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  Impl::TenantInfo tenant;
  const K8sPod pod = m.Admit(args.pod, &tenant);
  ClusterState& cl = *m.cluster;
  const auto& tiers = m.config->tenancy.tiers;
  // Tenancy rules (S4.4, tenancy::Admitter's kSeedance mode, without the telemetry-based ones).
  auto allowed = [&](const Impl::Bound& v) {
    const Impl::TenantInfo vt = m.TenantOf(v.pod);
    if (vt.tier == Tier::kGold && tenant.tier != Tier::kGold) return false;  // never preempt Gold
    if (vt.name == tenant.name) return v.pod.priority < pod.priority;
    const bool same_cohort = m.book && tenant.book >= 0 && vt.book >= 0 && m.book->cohort_of(tenant.book) >= 0 &&
                             m.book->cohort_of(tenant.book) == m.book->cohort_of(vt.book);
    if (same_cohort && m.book->IsBorrowing(vt.book)) return true;  // borrowed capacity is never guaranteed
    if (static_cast<int>(vt.tier) <= static_cast<int>(tenant.tier)) return false;
    if (tenant.tier == Tier::kGold && m.book && tenant.book >= 0) {
      const auto req = m.RequestOn(pod.spec, cluster::kNoGpuModel, tenant.book);
      return m.book->WithinShare(tenant.book, req, tiers[0].guaranteed_share);
    }
    return tenant.tier == Tier::kGold;
  };
  std::map<std::string, MetaVictims> out;
  json reasons = json::object();
  for (const auto& [node_name, proposed] : args.victims) {
    auto it = m.node_index.find(node_name);
    if (it == m.node_index.end()) continue;
    const NodeId n(static_cast<std::uint32_t>(it->second));
    std::vector<sched::PreemptionCandidate> cands;
    std::map<std::int64_t, std::string> uid_by_id;
    for (const auto& [uid, b] : m.bound) {
      if (b.node != n || !allowed(b)) continue;
      cands.push_back({b.seq, b.node, b.pod.spec, b.gpus, 1.0 + static_cast<double>(b.pod.spec.total_gpu_milli()) / 1000.0});
      uid_by_id[b.seq] = uid;
    }
    for (std::size_t i = 0; i < cl.size(); ++i) {
      cl.SetEligibility(NodeId(static_cast<std::uint32_t>(i)), i == n.value() ? cluster::NodeEligibility::kAll
                                                                               : cluster::NodeEligibility::kNone);
    }
    auto set = sched::FindVictimsForFit(cl, pod.spec, cands);
    if (!set.has_value()) {
      reasons[node_name] = "no victim set allowed by the tenancy rules frees a fit";
      continue;
    }
    MetaVictims v;
    for (std::int64_t id : set->victims) v.uids.push_back(uid_by_id[id]);
    out.emplace(node_name, std::move(v));
  }
  m.Record(pod.key(), json{{"verb", "preempt"},
                           {"time_ms", m.Now()},
                           {"candidates", args.victims.size()},
                           {"nodes_with_victims", out.size()},
                           {"reasons", std::move(reasons)}});
  m.Count("preempt", out.empty() ? "none" : "ok", Since(t0));
  return out;
}

Status Extender::Bind(const ExtenderBindingArgs& args) {
  const auto t0 = std::chrono::steady_clock::now();
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  m.ExpireReservations();
  const std::string key = args.pod_namespace + "/" + args.pod_name;
  std::string uid = args.pod_uid;
  Status s = Status::Ok();
  if (uid.empty() || (!m.seen.count(uid) && !m.bound.count(uid))) {
    if (auto it = m.uid_of.find(key); it != m.uid_of.end()) {
      // A pod bound under another uid is not moved by a bind that names a different pod.
      if (!uid.empty() && m.bound.count(it->second) != 0) {
        s = FailedPreconditionError(
            fmt::format("PodUID: {} is bound with uid {}, not {}", key, it->second, args.pod_uid));
      }
      uid = it->second;
    }
  }
  const K8sPod* pod = nullptr;
  if (auto it = m.seen.find(uid); it != m.seen.end()) pod = &it->second;
  if (auto it = m.bound.find(uid); it != m.bound.end()) pod = &it->second.pod;
  if (s.ok()) {
    s = pod == nullptr ? NotFoundError(fmt::format("PodUID: pod {} ({}) not seen by filter nor POST /v1/pods",
                                                   key, args.pod_uid))
                       : m.BindPod(*pod, args.node, "Node", /*assume=*/true);
  }
  m.Record(key, json{{"verb", "bind"}, {"time_ms", m.Now()}, {"chosen", args.node}, {"error", s.ok() ? "" : s.message()}});
  m.Count("bind", s.ok() ? "ok" : "error", Since(t0));
  m.Gauges();
  return s;
}

Status Extender::UpsertNodes(const std::vector<K8sNode>& nodes) {
  std::unique_lock lock(impl_->mu);
  impl_->generation++;
  impl_->UpsertNodesLocked(nodes);
  impl_->Gauges();
  return Status::Ok();
}

Status Extender::DeleteNode(const std::string& name) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  auto it = m.node_index.find(name);
  if (it == m.node_index.end()) return NotFoundError(fmt::format("node: {} unknown", name));
  const std::size_t gone = it->second;
  std::vector<std::string> released;
  for (const auto& [uid, b] : m.bound) {
    if (b.node.value() == gone) released.push_back(uid);
  }
  for (const auto& uid : released) m.Release(uid, /*unbind=*/true);
  std::vector<bool> keep(m.specs.size(), true);
  keep[gone] = false;
  m.KeepNodes(keep);
  m.Rebuild();
  m.Gauges();
  m.app.Log("info", "extender_node_deleted", {{"node", name}, {"pods_released", released.size()}});
  return Status::Ok();
}

Status Extender::UpsertPods(const std::vector<K8sPod>& pods) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  m.ExpireReservations();
  Status first = Status::Ok();
  for (std::size_t i = 0; i < pods.size(); ++i) {
    const K8sPod& p = pods[i];
    const std::string field = pods.size() == 1 ? std::string("spec.nodeName") : fmt::format("items[{}].spec.nodeName", i);
    m.listed_pending.erase(p.uid);
    if (p.phase == "Succeeded" || p.phase == "Failed") {
      m.Release(p.uid, /*unbind=*/true);
      m.EraseSeen(p.uid);
      m.picks.erase(p.uid);
      if (auto u = m.uid_of.find(p.key()); u != m.uid_of.end() && u->second == p.uid) m.uid_of.erase(u);
      continue;
    }
    if (p.node_name.empty()) {
      Impl::TenantInfo t;
      m.Admit(p, &t);
      m.listed_pending.insert(p.uid);
      continue;
    }
    Status s = m.BindPod(p, p.node_name, field);
    if (!s.ok() && first.ok()) first = s;
  }
  m.Gauges();
  return first;
}

Status Extender::DeletePod(const std::string& key) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  auto it = m.uid_of.find(key);
  if (it == m.uid_of.end()) return NotFoundError(fmt::format("pod: {} unknown", key));
  const std::string uid = it->second;
  m.listed_pending.erase(uid);
  m.Release(uid, /*unbind=*/true);
  m.EraseSeen(uid);
  m.picks.erase(uid);
  m.uid_of.erase(key);
  m.Gauges();
  return Status::Ok();
}

Result<json> Extender::Decisions(const std::string& pod_key) const {
  std::shared_lock lock(impl_->mu);
  json list = json::array();
  {
    std::lock_guard log_lock(impl_->log_mu);
    auto it = impl_->decisions.find(pod_key);
    if (it == impl_->decisions.end()) return NotFoundError(fmt::format("pod: no decision recorded for {}", pod_key));
    for (const auto& d : it->second) list.push_back(d);
  }
  json out{{"pod", pod_key}, {"decisions", std::move(list)}};
  std::lock_guard seen_lock(impl_->seen_mu);
  if (auto u = impl_->uid_of.find(pod_key); u != impl_->uid_of.end()) {
    if (auto b = impl_->bound.find(u->second); b != impl_->bound.end()) out["bound_to"] = b->second.pod.node_name;
  }
  return out;
}

Status Extender::CheckConfig(const ServerConfig& config) const {
  sched::PolicyContext ctx;
  auto p = sched::MakePlacementPolicy(config.placement_policy, ctx);
  if (!p.has_value()) return InvalidArgumentError("placement_policy: " + p.error().message());
  auto b = tenancy::QuotaBook::Build(config.tenancy.tenants, true);
  if (!b.has_value()) return InvalidArgumentError("tenancy: " + b.error().message());
  return Status::Ok();
}

void Extender::ApplyConfig(const std::shared_ptr<const ServerConfig>& config) {
  std::unique_lock lock(impl_->mu);
  impl_->generation++;
  const bool reseed = config->seed != impl_->config->seed ||
                      config->placement_policy != impl_->config->placement_policy;
  impl_->Configure(config, reseed);
}

Status Extender::ReplaceNodes(const std::vector<K8sNode>& nodes) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  std::set<std::string> keep;
  for (const auto& n : nodes) keep.insert(n.name);
  std::vector<std::string> gone;
  for (const auto& s : m.specs) {
    if (!keep.count(s.name)) gone.push_back(s.name);
  }
  if (!gone.empty()) {
    std::vector<std::string> released;
    for (const auto& [uid, b] : m.bound) {
      if (!keep.count(m.specs[b.node.value()].name)) released.push_back(uid);
    }
    for (const auto& uid : released) m.Release(uid, /*unbind=*/false);
    std::vector<bool> kept(m.specs.size());
    for (std::size_t i = 0; i < m.specs.size(); ++i) kept[i] = keep.count(m.specs[i].name) != 0;
    m.KeepNodes(kept);
    m.Rebuild();
    m.app.Log("info", "extender_nodes_replaced", {{"removed", gone.size()}, {"pods_released", released.size()}});
  }
  m.UpsertNodesLocked(nodes);
  m.Gauges();
  return Status::Ok();
}

void Extender::WatchConfirmsBinds() {
  std::unique_lock lock(impl_->mu);
  impl_->watch_confirms = true;
}

std::vector<std::pair<K8sPod, Status>> Extender::ReplacePods(const std::vector<K8sPod>& pods) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.generation++;
  m.ExpireReservations();
  std::set<std::string> active, ended;
  for (const auto& p : pods) {
    if (p.phase == "Succeeded" || p.phase == "Failed") {
      ended.insert(p.uid);
    } else if (!p.node_name.empty()) {
      active.insert(p.uid);
    }
  }
  // An assumed placement the list does not show yet stays: the list (a resync replays the
  // reflector's store) may lag what Seedance just placed; its reservation deadline still holds.
  std::vector<std::string> released;
  for (const auto& [uid, b] : m.bound) {
    if (active.count(uid) != 0) continue;
    if (b.assumed_until_ms > 0 && ended.count(uid) == 0) continue;
    released.push_back(uid);
  }
  for (const auto& uid : released) m.Release(uid, /*unbind=*/true);
  std::vector<std::pair<K8sPod, Status>> failed;
  m.listed_pending.clear();
  for (const auto& p : pods) {
    if (p.phase == "Succeeded" || p.phase == "Failed") {
      m.seen.erase(p.uid);
      continue;
    }
    if (p.node_name.empty()) {
      Impl::TenantInfo t;
      m.Admit(p, &t);
      m.listed_pending.insert(p.uid);
      continue;
    }
    Status s = m.BindPod(p, p.node_name, "spec.nodeName");
    if (!s.ok()) failed.emplace_back(p, std::move(s));
  }
  m.Gauges();
  return failed;
}

json Extender::Snapshot() const {
  const Impl& m = *impl_;
  std::shared_lock lock(m.mu);
  json nodes = json::object();
  for (std::size_t i = 0; i < m.specs.size(); ++i) {
    const NodeSpec& s = m.specs[i];
    const cluster::NodeState& n = m.cluster->node(NodeId(static_cast<std::uint32_t>(i)));
    nodes[s.name] = {{"cpu_m", s.cpu.raw()},
                     {"memory_mi", s.memory.raw()},
                     {"gpus", s.gpu_count},
                     {"gpu_model", s.model == cluster::kNoGpuModel ? std::string() : std::string(cluster::GpuModelName(s.model))},
                     {"gpu_milli_used", static_cast<std::int64_t>(s.gpu_count) * cluster::kMilliPerGpu - n.TotalGpuIdle()}};
  }
  json pods = json::object();
  for (const auto& [uid, b] : m.bound) {
    pods[b.pod.key()] = {{"node", b.pod.node_name}, {"uid", uid}, {"gpu_milli", b.pod.spec.total_gpu_milli()}};
    if (b.assumed_until_ms > 0) pods[b.pod.key()]["assumed"] = true;
  }
  json quota = json::object();
  if (m.book) {
    for (int t = 0; t < m.book->num_tenants(); ++t) {
      json use = json::object();
      for (int r = 0; r < m.book->num_resources(); ++r) use[m.book->resource_name(r)] = m.book->usage(t, r);
      quota[m.book->tenant_name(t)] = std::move(use);
    }
  }
  return json{{"nodes", std::move(nodes)}, {"pods", std::move(pods)}, {"quota", std::move(quota)}};
}

std::size_t Extender::num_nodes() const {
  std::shared_lock lock(impl_->mu);
  return impl_->specs.size();
}

std::size_t Extender::num_bound() const {
  std::shared_lock lock(impl_->mu);
  return impl_->bound.size();
}

std::string Extender::BoundNode(const std::string& pod_key) const {
  std::shared_lock lock(impl_->mu);
  std::lock_guard seen_lock(impl_->seen_mu);
  auto u = impl_->uid_of.find(pod_key);
  if (u == impl_->uid_of.end()) return "";
  auto b = impl_->bound.find(u->second);
  return b == impl_->bound.end() ? "" : b->second.pod.node_name;
}

}  // namespace seedance::server
