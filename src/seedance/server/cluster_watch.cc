#include "seedance/server/cluster_watch.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "seedance/core/clock.h"
#include "seedance/core/rng.h"
#include "seedance/server/extender_codec.h"
#include "seedance/server/watch_transform.h"

namespace seedance::server {

using nlohmann::json;

Result<std::optional<kube::Credentials>> ClusterCredentials(const ServerOptions& options, const ServerConfig& config,
                                                            const kube::InClusterEnv& env) {
  const std::string& file = !options.kubeconfig.empty() ? options.kubeconfig : config.kubeconfig;
  if (!file.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(kube::Credentials c, kube::LoadKubeconfig(file));
    return std::optional<kube::Credentials>(std::move(c));
  }
  if (options.watch_in_cluster && kube::InClusterConfigured(env)) {
    SEEDANCE_ASSIGN_OR_RETURN(kube::Credentials c, kube::LoadInCluster(env));
    return std::optional<kube::Credentials>(std::move(c));
  }
  return std::optional<kube::Credentials>();
}

namespace {

constexpr const char* kNodes = "seedance_cluster_nodes";
constexpr const char* kPods = "seedance_cluster_pods_bound";
constexpr const char* kRelists = "seedance_watch_relists_total";
constexpr const char* kReconnects = "seedance_watch_reconnects_total";
constexpr const char* kEvents = "seedance_watch_events_total";
constexpr const char* kLists = "seedance_watch_lists_total";

// What the extender keeps of a watched pod (issue 40: memory per pod). Filter, prioritize and
// preempt judge the pod of the scheduler's request, never the tolerations or annotations of a
// bound or waiting one (ParsePod has read the GPU annotations into spec already); bind, quota and
// preemption read the tenant and job labels. The extender trims the pods it remembers for bind
// the same way (Admit).
Result<K8sPod> ParseKept(const json& o) {
  auto p = ParsePod(o, "pod");
  if (!p.has_value()) return p;
  p->annotations.clear();
  p->tolerations = {};
  std::erase_if(p->labels, [](const auto& kv) { return kv.first != kTenantLabel && kv.first != kJobLabel; });
  return p;
}

}  // namespace

class ClusterWatch::Impl {
 public:
  Impl(App& app, Extender& extender, kube::Credentials credentials)
      : app_(app), extender_(extender), client_(std::move(credentials)), nodes_(*this), pods_(*this) {
    app_.metrics.DeclareGauge(kNodes, "Nodes the cluster watch applied.");
    app_.metrics.DeclareGauge(kPods, "Pods bound in the extender's state (bound by any scheduler).");
    app_.metrics.DeclareCounter(kRelists, "Relists after 410 Gone / Expired or repeated watch failures, by resource.");
    app_.metrics.DeclareCounter(kReconnects, "Watch reconnects after a broken stream or a failed list, by resource.");
    app_.metrics.DeclareCounter(kEvents, "Watch events applied, by resource.");
    app_.metrics.DeclareCounter(kLists, "Lists applied (the first, relists), by resource.");
    app_.readiness.Set("cluster_watch", false, "waiting for the first list of nodes and pods");
    extender_.WatchConfirmsBinds();  // Seedance's placements are assumed until the watch shows them
    const auto backoff = std::chrono::milliseconds(std::max(1, app_.options.watch_initial_backoff_ms));
    node_reflector_ = MakeReflector("/api/v1/nodes", "nodes", nodes_, node_rng_, backoff, SlimNode);
    pod_reflector_ = MakeReflector("/api/v1/pods", "pods", pods_, pod_rng_, backoff, SlimPod);
    app_.Log("info", "cluster_watch", {{"credentials", client_.credentials().source},
                                       {"server", client_.credentials().server}});
  }

  void Start() {
    node_thread_ = std::thread([this] { node_reflector_->Run(); });
    pod_thread_ = std::thread([this] { pod_reflector_->Run(); });
  }
  void Stop() {
    node_reflector_->Stop();
    pod_reflector_->Stop();
    if (node_thread_.joinable()) node_thread_.join();
    if (pod_thread_.joinable()) pod_thread_.join();
  }
  bool synced() const { return node_reflector_->synced() && pod_reflector_->synced(); }

 private:
  // Both reflectors call into here; one mutex keeps nodes and pending pods consistent.
  struct NodeHandler final : kube::ReflectorHandler {
    explicit NodeHandler(Impl& watch) : w(watch) {}
    void OnReplace(const std::vector<json>& objects) override {
      OnReplaceEach([&](const Visit& visit) {
        for (const auto& o : objects) visit(o);
      });
    }
    void OnReplaceEach(const std::function<void(const Visit&)>& each) override { w.ReplaceNodes(each); }
    void OnAdd(const json& o) override { w.UpsertNode(o); }
    void OnUpdate(const json& o) override { w.UpsertNode(o); }
    void OnDelete(const json& o) override { w.DeleteNode(o); }
    Impl& w;
  };
  struct PodHandler final : kube::ReflectorHandler {
    explicit PodHandler(Impl& watch) : w(watch) {}
    void OnReplace(const std::vector<json>& objects) override {
      OnReplaceEach([&](const Visit& visit) {
        for (const auto& o : objects) visit(o);
      });
    }
    void OnReplaceEach(const std::function<void(const Visit&)>& each) override { w.ReplacePods(each); }
    void OnAdd(const json& o) override { w.UpsertPod(o); }
    void OnUpdate(const json& o) override { w.UpsertPod(o); }
    void OnDelete(const json& o) override { w.DeletePod(o); }
    Impl& w;
  };

  std::unique_ptr<kube::Reflector> MakeReflector(const std::string& path, const std::string& resource,
                                                 kube::ReflectorHandler& handler, Rng& rng, Duration backoff,
                                                 void (*transform)(json&)) {
    kube::ReflectorOptions o;
    o.path = path;
    o.transform = transform;  // only the fields the decisions read (watch_transform.h)
    o.resource = resource;
    o.initial_backoff = backoff;
    o.resync_period = std::chrono::minutes(10);
    kube::ReflectorHooks h;
    h.clock = &clock_;
    h.rng = &rng;
    h.count = [this, resource](std::string_view what) {
      if (what == "relist") app_.metrics.Inc(kRelists, {{"resource", resource}});
      if (what == "reconnect") app_.metrics.Inc(kReconnects, {{"resource", resource}});
      if (what == "event") app_.metrics.Inc(kEvents, {{"resource", resource}});
      if (what == "list") {
#ifdef __GLIBC__
        // A list parses pages of full objects (hundreds of MB at 50,000 pods) that the transform
        // drops at once; hand the freed pages back instead of keeping them as the process's RSS.
        // Before the list is counted: whoever reads the count sees the memory the list keeps.
        malloc_trim(0);
#endif
        app_.metrics.Inc(kLists, {{"resource", resource}});
        Synced();
      }
    };
    h.log = [this](std::string_view event, const json& fields) {
      app_.Log(event == "watch_listed" || event == "watch_relist" ? "info" : "warn", event, fields);
    };
    return std::make_unique<kube::Reflector>(client_, handler, std::move(o), std::move(h));
  }

  void Synced() {
    if (synced()) app_.readiness.Set("cluster_watch", true);
  }
  void Gauges() {
    app_.metrics.Set(kNodes, {}, static_cast<double>(extender_.num_nodes()));
    app_.metrics.Set(kPods, {}, static_cast<double>(extender_.num_bound()));
  }
  void Warn(std::string_view what, const Status& s) {
    app_.Log("warn", "cluster_watch_skipped", {{"object", what}, {"error", s.message()}});
  }

  // `each` visits the list's objects one at a time: each becomes a node as it comes.
  using Each = std::function<void(const kube::ReflectorHandler::Visit&)>;
  void ReplaceNodes(const Each& each) {
    std::lock_guard lock(mu_);
    std::vector<K8sNode> nodes;
    each([&](const json& o) {
      auto n = ParseNode(o, "node");
      if (n.has_value()) {
        nodes.push_back(std::move(*n));
      } else {
        Warn("node", n.error());
      }
    });
    (void)extender_.ReplaceNodes(nodes);
    RetryPendingLocked();
    Gauges();
  }
  void UpsertNode(const json& o) {
    std::lock_guard lock(mu_);
    auto n = ParseNode(o, "node");
    if (!n.has_value()) return Warn("node", n.error());
    (void)extender_.UpsertNodes({*n});
    RetryPendingLocked();
    Gauges();
  }
  void DeleteNode(const json& o) {
    std::lock_guard lock(mu_);
    auto n = ParseNode(o, "node");
    if (!n.has_value()) return Warn("node", n.error());
    (void)extender_.DeleteNode(n->name);  // kNotFound: never applied
    Gauges();
  }

  void ReplacePods(const Each& each) {
    std::lock_guard lock(mu_);
    std::vector<K8sPod> pods;
    each([&](const json& o) {
      auto p = ParseKept(o);
      if (p.has_value()) {
        pods.push_back(std::move(*p));
      } else {
        Warn("pod", p.error());
      }
    });
    pending_.clear();
    for (auto& [pod, status] : extender_.ReplacePods(pods)) Pending(pod, status);
    Gauges();
  }
  void UpsertPod(const json& o) {
    std::lock_guard lock(mu_);
    auto p = ParseKept(o);
    if (!p.has_value()) return Warn("pod", p.error());
    pending_.erase(p->key());
    if (Status s = extender_.UpsertPods({*p}); !s.ok()) Pending(*p, s);
    Gauges();
  }
  void DeletePod(const json& o) {
    std::lock_guard lock(mu_);
    auto p = ParseKept(o);
    if (!p.has_value()) return Warn("pod", p.error());
    pending_.erase(p->key());
    (void)extender_.DeletePod(p->key());  // kNotFound: never bound nor seen
    Gauges();
  }
  void Pending(const K8sPod& pod, const Status& s) {
    if (s.code() == StatusCode::kNotFound) {
      pending_[pod.key()] = pod;  // its node has not arrived yet
    } else {
      Warn(pod.key(), s);
    }
  }
  void RetryPendingLocked() {
    if (pending_.empty()) return;
    std::map<std::string, K8sPod> retry;
    retry.swap(pending_);
    for (auto& [key, pod] : retry) {
      if (Status s = extender_.UpsertPods({pod}); !s.ok()) Pending(pod, s);
    }
  }

  App& app_;
  Extender& extender_;
  kube::ApiClient client_;
  SteadyClock clock_;
  Rng node_rng_{SplitMix64Seed(1)}, pod_rng_{SplitMix64Seed(2)};
  NodeHandler nodes_;
  PodHandler pods_;
  std::mutex mu_;
  std::map<std::string, K8sPod> pending_;  // pods whose node is not known yet
  std::unique_ptr<kube::Reflector> node_reflector_, pod_reflector_;
  std::thread node_thread_, pod_thread_;

  static std::uint64_t SplitMix64Seed(std::uint64_t stream) {
    std::uint64_t s = 0x5eedda2ce0000000ull + stream;
    return SplitMix64(s);
  }
};

ClusterWatch::ClusterWatch(App& app, Extender& extender, kube::Credentials credentials)
    : impl_(std::make_unique<Impl>(app, extender, std::move(credentials))) {}
ClusterWatch::~ClusterWatch() { Stop(); }
void ClusterWatch::Start() { impl_->Start(); }
void ClusterWatch::Stop() { impl_->Stop(); }
bool ClusterWatch::synced() const { return impl_->synced(); }

class LeaderElection::Impl {
 public:
  Impl(App& app, kube::Credentials credentials)
      : app_(app), client_(std::move(credentials)), elector_(client_, Options(app.options), clock_, Rng(Seed(app.options))) {
    app_.metrics.DeclareGauge("seedance_leader", "1 on the replica that holds the leader Lease, else 0.");
    app_.metrics.Set("seedance_leader", {}, 0);
    app_.readiness.Set("leader_election", false, "follower: another replica holds the lease");
    elector_.on_change = [this](bool leader) {
      app_.leadership.Notify(leader);  // before readiness: a new leader rebuilds first
      app_.metrics.Set("seedance_leader", {}, leader ? 1 : 0);
      app_.readiness.Set("leader_election", leader, "follower: another replica holds the lease");
      app_.Log("info", leader ? "leader_elected" : "leader_lost", {{"identity", identity_}});
    };
  }
  void Start() {
    thread_ = std::thread([this] { elector_.Run(); });
  }
  void Stop() {
    elector_.Stop();
    if (thread_.joinable()) thread_.join();
  }
  bool leader() const { return elector_.leader(); }

 private:
  kube::LeaderElectionOptions Options(const ServerOptions& o) {
    kube::LeaderElectionOptions e;
    identity_ = ReplicaIdentity(o);
    e.identity = identity_;
    e.namespace_name = o.leader_namespace;
    if (e.namespace_name.empty()) {
      const char* ns = std::getenv("POD_NAMESPACE");
      e.namespace_name = ns != nullptr && *ns != '\0' ? ns : "default";
    }
    e.lease_duration = std::chrono::milliseconds(o.leader_lease_ms);
    e.renew_deadline = std::chrono::milliseconds(o.leader_renew_deadline_ms);
    e.retry_period = std::chrono::milliseconds(o.leader_retry_ms);
    return e;
  }
  static std::uint64_t Seed(const ServerOptions& o) {
    std::uint64_t s = std::hash<std::string>{}(ReplicaIdentity(o));
    return SplitMix64(s);
  }

  App& app_;
  std::string identity_;
  kube::ApiClient client_;
  SystemClock clock_;
  kube::LeaderElector elector_;
  std::thread thread_;
};

LeaderElection::LeaderElection(App& app, kube::Credentials credentials)
    : impl_(std::make_unique<Impl>(app, std::move(credentials))) {}
LeaderElection::~LeaderElection() { Stop(); }
void LeaderElection::Start() { impl_->Start(); }
void LeaderElection::Stop() { impl_->Stop(); }
bool LeaderElection::leader() const { return impl_->leader(); }

}  // namespace seedance::server
