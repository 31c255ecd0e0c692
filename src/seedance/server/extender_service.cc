// The extender part of `seedance server`: kube-scheduler's extender verbs (docs/PROTOCOLS.md
// section 5) and the state endpoints, on Extender (extender.h).
//   POST /extender/filter | /extender/prioritize | /extender/preempt | /extender/bind
//   POST /v1/nodes   (a v1.Node or v1.NodeList); DELETE /v1/nodes/{name}
//   POST /v1/pods    (a v1.Pod or v1.PodList; spec.nodeName binds, status.phase
//                     Succeeded/Failed releases)
//   DELETE /v1/pods/{namespace}/{name}
//   GET /v1/decisions?pod=<namespace>/<name>
//   GET /v1/cluster  (nodes, bound pods, GPU use and quota usage: Extender::Snapshot)
// With API-server credentials (cluster_watch.h) it watches Nodes and Pods from Start() on.
// Bad bodies answer 400 {"error","field"} with the JSON path of the field. A bind error is
// answered 200 {"Error": "..."} as the protocol wants (kube-scheduler reads it).

#include <httplib.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "seedance/server/app.h"
#include "seedance/server/cluster_watch.h"
#include "seedance/server/extender.h"
#include "seedance/server/kube_binder.h"
#include "seedance/server/extender_codec.h"

namespace seedance::server {
namespace {

// JSON values an extender request may put in a DOM (what the NodeNames fast path leaves: the
// Pod, about a hundred values), plus per candidate; full-node mode carries whole v1.Node objects
// (a few hundred values each: labels, conditions, images).
constexpr std::size_t kPodValues = 1u << 18;
constexpr std::size_t kValuesPerFullNode = 1024;

// What one extender request may make the codec build (issue 40): candidates tied to the
// cluster's size, full-node mode only when configured.
ExtenderLimits RequestLimits(const ServerConfig& config, std::size_t nodes_known) {
  ExtenderLimits l;
  l.max_candidates = std::max(2 * nodes_known, config.limits.candidates_floor);
  l.cap_reason = "max(2 x " + std::to_string(nodes_known) + " nodes known, server.limits.candidates_floor " +
                 std::to_string(config.limits.candidates_floor) + ")";
  l.full_nodes = config.extender_full_nodes;
  l.full_nodes_off =
      "full-node mode (nodeCacheCapable: false) is off; send NodeNames (nodeCacheCapable: true), or turn it on "
      "with server.extender_full_nodes: true";
  l.max_values = kPodValues + l.max_candidates * (l.full_nodes ? kValuesPerFullNode : 1);
  return l;
}

class ExtenderService : public Service {
 public:
  ExtenderService(App& app, ExtenderOptions options) : app_(app), core_(app, std::move(options)) {
    app_.metrics.DeclareCounter("seedance_rejected_inputs_total", "Requests rejected as bad input.");
    app_.metrics.DeclareCounter("seedance_bind_errors_total",
                                "Binds answered with an Error, by reason (binder, placement, api_server).");
    SetBinder(*app_.config.Get());
  }

  void Register(httplib::Server& http) override {
    http.Post("/extender/filter", [this](const httplib::Request& req, httplib::Response& res) {
      if (Follower(res)) return;
      auto args = ParseExtenderArgs(req.body, Limits());
      if (!args.has_value()) return BadRequest(res, args.error());
      ReplyJsonText(res, 200, DumpFilterResult(core_.Filter(std::move(*args))));
    });
    http.Post("/extender/prioritize", [this](const httplib::Request& req, httplib::Response& res) {
      if (Follower(res)) return;
      auto args = ParseExtenderArgs(req.body, Limits());
      if (!args.has_value()) return BadRequest(res, args.error());
      ReplyJsonText(res, 200, DumpHostPriorityList(core_.Prioritize(std::move(*args))));
    });
    http.Post("/extender/preempt", [this](const httplib::Request& req, httplib::Response& res) {
      if (Follower(res)) return;
      auto args = ParseExtenderPreemptionArgs(req.body, Limits());
      if (!args.has_value()) return BadRequest(res, args.error());
      ReplyJson(res, 200, EncodePreemptionResult(core_.Preempt(*args)));
    });
    http.Post("/extender/bind", [this](const httplib::Request& req, httplib::Response& res) {
      if (Follower(res)) return;
      auto args = ParseExtenderBindingArgs(req.body);
      if (!args.has_value()) return BadRequest(res, args.error());
      // With kube_api_url set, a binder that cannot be built (an unreadable token file) fails the
      // bind loudly: kube-scheduler sees the Error and retries; nothing is recorded.
      auto [binder, binder_error] = Binder();
      const std::string key = args->pod_namespace + "/" + args->pod_name;
      if (!binder_error.ok()) return BindFailed(res, key, "binder", binder_error);
      // Record first (it checks the pod and the fit), then create the Binding in the API server;
      // if that fails the placement is released again and kube-scheduler retries the pod.
      Status s = core_.Bind(*args);
      if (!s.ok()) return BindFailed(res, key, "placement", s);
      if (binder != nullptr) {
        s = binder->Bind(args->pod_namespace, args->pod_name, args->pod_uid, args->node);
        if (!s.ok()) {
          (void)core_.DeletePod(key);
          return BindFailed(res, key, "api_server", s);
        }
      }
      ReplyJson(res, 200, EncodeBindingResult(""));
    });
    http.Post("/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
      auto nodes = ParseNodeOrList(req.body);
      if (!nodes.has_value()) return BadRequest(res, nodes.error());
      const Status s = core_.UpsertNodes(*nodes);
      if (!s.ok()) return Fail(res, s);
      ReplyJson(res, 200, {{"nodes", nodes->size()}, {"known", core_.num_nodes()}});
    });
    http.Delete(R"(/v1/nodes/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const Status s = core_.DeleteNode(std::string(req.matches[1]));
      if (!s.ok()) return Fail(res, s);
      ReplyJson(res, 200, {{"deleted", true}, {"known", core_.num_nodes()}});
    });
    http.Post("/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
      auto pods = ParsePodOrList(req.body);
      if (!pods.has_value()) return BadRequest(res, pods.error());
      const Status s = core_.UpsertPods(*pods);
      if (!s.ok()) return Fail(res, s);
      ReplyJson(res, 200, {{"pods", pods->size()}, {"bound", core_.num_bound()}});
    });
    http.Delete(R"(/v1/pods/([^/]+)/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
      const Status s = core_.DeletePod(std::string(req.matches[1]) + "/" + std::string(req.matches[2]));
      if (!s.ok()) return Fail(res, s);
      ReplyJson(res, 200, {{"released", true}});
    });
    http.Get("/v1/cluster", [this](const httplib::Request&, httplib::Response& res) {
      ReplyJson(res, 200, core_.Snapshot());
    });
    http.Get("/v1/decisions", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string pod = req.get_param_value("pod");
      if (pod.find('/') == std::string::npos) {
        return ReplyError(res, 400, "pod", "expected pod=<namespace>/<name>");
      }
      auto d = core_.Decisions(pod);
      if (!d.has_value()) return Fail(res, d.error());
      ReplyJson(res, 200, *d);
    });
  }

  Status Start() override {
    auto credentials = ClusterCredentials(app_.options, *app_.config.Get(), kube::InClusterFromEnvironment());
    if (!credentials.has_value()) return credentials.error();
    if (credentials->has_value()) {
      if (app_.options.leader_elect) {
        leader_ = std::make_unique<LeaderElection>(app_, **credentials);
        leader_->Start();
      }
      watch_ = std::make_unique<ClusterWatch>(app_, core_, std::move(**credentials));
      watch_->Start();
    } else if (app_.options.leader_elect) {
      return InvalidArgumentError("--leader-elect: needs API-server credentials (--kubeconfig or in-cluster)");
    }
    return Status::Ok();
  }
  void Stop() override {
    if (leader_) leader_->Stop();
    if (watch_) watch_->Stop();
  }

  Status CheckConfig(const ServerConfig& config) override {
    if (!config.kube_api_url.empty()) {
      auto binder = KubeBinder::FromConfig(config);
      if (!binder.has_value()) return binder.error();
    }
    return core_.CheckConfig(config);
  }
  void ApplyConfig(const std::shared_ptr<const ServerConfig>& config) override {
    core_.ApplyConfig(config);
    SetBinder(*config);
  }

 private:
  // With --leader-elect only the leader decides: a follower reached directly (its pod IP, a
  // stale endpoint) answers every decision verb 503, and kube-scheduler retries or fails open
  // as its extender config says. Its state (the watch's) may lag, and two deciders would
  // double-book GPUs.
  bool Follower(httplib::Response& res) {
    if (!app_.options.leader_elect || (leader_ != nullptr && leader_->leader())) return false;
    app_.metrics.Inc("seedance_rejected_inputs_total", {{"reason", "follower"}});
    ReplyError(res, 503, "", "extender: this replica is a follower; the leader decides (send to the Service)");
    return true;
  }
  ExtenderLimits Limits() const { return RequestLimits(*app_.config.Get(), core_.num_nodes()); }
  // 400, or 413 for a request over a cap (kResourceExhausted).
  void BadRequest(httplib::Response& res, const Status& s) {
    app_.metrics.Inc("seedance_rejected_inputs_total", {{"endpoint", "extender"}});
    ReplyError(res, s.code() == StatusCode::kResourceExhausted ? 413 : 400, FieldOf(s), ReasonOf(s));
  }
  // A bind kube-scheduler must see fail: the protocol's Error, a log line and a metric.
  void BindFailed(httplib::Response& res, const std::string& pod, const char* reason, const Status& s) {
    app_.metrics.Inc("seedance_bind_errors_total", {{"reason", reason}});
    app_.Log("error", "bind_failed", {{"pod", pod}, {"reason", reason}, {"error", s.message()}});
    ReplyJson(res, 200, EncodeBindingResult(s.message().empty() ? std::string(reason) : s.message()));
  }
  static void Fail(httplib::Response& res, const Status& s) {
    ReplyError(res, HttpStatusOf(s), FieldOf(s), ReasonOf(s));
  }

  // The API-server binder of the current config (nullptr: bind only records). When kube_api_url
  // is set and the binder cannot be built, the error is kept and every bind fails with it until
  // a later bind finds the files readable (a token file mounted late) or a reload fixes them.
  void SetBinder(const ServerConfig& config) {
    std::shared_ptr<const KubeBinder> binder;
    Status error = Status::Ok();
    if (!config.kube_api_url.empty()) {
      auto b = KubeBinder::FromConfig(config);
      if (b.has_value()) {
        binder = std::move(*b);
      } else {
        error = UnavailableError("cannot create Bindings in " + config.kube_api_url + ": " + b.error().message());
        app_.Log("error", "kube_binder", {{"error", error.message()}});
      }
    }
    std::lock_guard lock(binder_mu_);
    binder_ = std::move(binder);
    binder_error_ = std::move(error);
  }
  std::pair<std::shared_ptr<const KubeBinder>, Status> Binder() {
    {
      std::lock_guard lock(binder_mu_);
      if (binder_error_.ok()) return {binder_, Status::Ok()};
    }
    SetBinder(*app_.config.Get());
    std::lock_guard lock(binder_mu_);
    return {binder_, binder_error_};
  }

  std::mutex binder_mu_;
  std::shared_ptr<const KubeBinder> binder_;
  Status binder_error_ = Status::Ok();
  App& app_;
  Extender core_;
  std::unique_ptr<ClusterWatch> watch_;  // after core_: stopped before it goes
  std::unique_ptr<LeaderElection> leader_;
};

}  // namespace

std::unique_ptr<Service> MakeExtenderService(App& app, ExtenderOptions options) {
  return std::make_unique<ExtenderService>(app, std::move(options));
}

std::unique_ptr<Service> MakeExtenderService(App& app) { return MakeExtenderService(app, {}); }

}  // namespace seedance::server
