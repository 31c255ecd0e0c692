#pragma once

// The server's shared state and its parts. `seedance server` builds one App, then one Service
// per part (admin, extender, telemetry), registers their routes on one cpp-httplib server and
// runs until SIGTERM/SIGINT. Each part owns its own state; what two parts share lives here
// (metrics, the health and breaker boards, the current config).
//
// Threads: cpp-httplib calls handlers from a worker pool, so everything reachable from App is
// thread-safe (the boards and Metrics lock inside; the config is an immutable snapshot).

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/core/status.h"
#include "seedance/server/boards.h"
#include "seedance/server/config.h"
#include "seedance/server/metrics.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace seedance::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string config_path;  // empty: ServerConfig::Defaults()
  std::string db = "seedance-ledger.db";  // the SQLite ledger (telemetry, charges; admission by default)
  // The admission log (ledger::AdmissionLog): "" = `db`; a postgresql:// URL shares it between
  // replicas (the two-replica deploy; docs/KUBERNETES.md).
  std::string admission_db;
  std::string tls_cert, tls_key, client_ca;
  std::string token_file;   // bearer token for writes (first line of the file)
  std::size_t max_body_bytes = 64u << 20;  // OTLP's recommended 64 MiB; 413 above
  double rate_limit_rps = 0;   // per client address; 0 = unlimited
  double rate_limit_burst = 0;
  int threads = 0;             // HTTP worker threads; 0 = hardware concurrency x 2
  // Watch the cluster through this kubeconfig (over server.kubeconfig and in-cluster).
  std::string kubeconfig;
  // Use in-cluster credentials when KUBERNETES_SERVICE_HOST is set. `seedance server` turns it
  // on; off here so that embedding code and tests never pick up their host's environment.
  bool watch_in_cluster = false;
  int watch_initial_backoff_ms = 800;  // client-go's; tests shorten it
  // Leader election on the Lease <leader_namespace>/seedance (needs the watch's credentials): a
  // follower answers /readyz 503. Identity "": $POD_NAME, else hostname-pid; namespace "":
  // $POD_NAMESPACE, else "default". Durations are client-go's; tests shorten them.
  bool leader_elect = false;
  std::string leader_identity, leader_namespace;
  int leader_lease_ms = 15'000, leader_renew_deadline_ms = 10'000, leader_retry_ms = 2'000;
};

// Parts that are not ready to serve yet: GET /readyz answers 503 naming them (kube's
// readinessProbe keeps the pod out of its Service meanwhile). Thread-safe.
class Readiness {
 public:
  void Set(const std::string& part, bool ready, std::string why = "") {
    std::lock_guard lock(mu_);
    if (ready) {
      waiting_.erase(part);
    } else {
      waiting_[part] = std::move(why);
    }
  }
  // part -> why, empty when ready.
  std::map<std::string, std::string> Waiting() const {
    std::lock_guard lock(mu_);
    return waiting_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> waiting_;
};

// The current config: an immutable snapshot swapped as a whole on SIGHUP.
class ConfigHolder {
 public:
  std::shared_ptr<const ServerConfig> Get() const {
    std::lock_guard lock(mu_);
    return config_;
  }
  void Set(std::shared_ptr<const ServerConfig> config) {
    std::lock_guard lock(mu_);
    config_ = std::move(config);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const ServerConfig> config_ = std::make_shared<ServerConfig>(ServerConfig::Defaults());
};

// Leadership among replicas (issue 26): parts that decide only on the leader (admission)
// subscribe before the server starts; LeaderElection calls them on its thread when this replica
// gains the Lease (before /readyz can answer 200) and when it loses it. Thread-safe.
class Leadership {
 public:
  void Subscribe(std::function<void(bool leader)> f) {
    std::lock_guard lock(mu_);
    subscribers_.push_back(std::move(f));
  }
  void Notify(bool leader) const {
    std::vector<std::function<void(bool)>> subs;
    {
      std::lock_guard lock(mu_);
      subs = subscribers_;
    }
    for (const auto& f : subs) f(leader);
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::function<void(bool)>> subscribers_;
};

// This replica's name in the leader Lease and the admission log's fencing row:
// --leader-identity, else $POD_NAME, else hostname-pid.
std::string ReplicaIdentity(const ServerOptions& options);

struct App {
  ServerOptions options;
  // Wall clock, Unix milliseconds; tests inject their own.
  std::function<std::int64_t()> now_ms;
  Metrics metrics;
  HealthBoard health;
  BreakerBoard breaker;
  ConfigHolder config;
  Readiness readiness;
  Leadership leadership;

  // One structured log line on stderr: {"ts":"...","level":"info","event":"...",...fields}.
  void Log(std::string_view level, std::string_view event, nlohmann::json fields = {}) const;
};

// One part of the server.
class Service {
 public:
  virtual ~Service() = default;
  virtual void Register(httplib::Server& http) = 0;
  // SIGHUP: every part checks the new config first; only when all accept is it applied.
  virtual Status CheckConfig(const ServerConfig& /*config*/) { return Status::Ok(); }
  virtual void ApplyConfig(const std::shared_ptr<const ServerConfig>& /*config*/) {}
  // Background work (scrapes, breaker and audit loops); Stop joins it.
  virtual Status Start() { return Status::Ok(); }
  virtual void Stop() {}
};

std::unique_ptr<Service> MakeAdminService(App& app);      // /healthz, /readyz, /metrics, /v1/config
std::unique_ptr<Service> MakeExtenderService(App& app);   // /extender/*, /v1/nodes, /v1/pods, /v1/decisions
std::unique_ptr<Service> MakeTelemetryService(App& app);  // /v1/metrics, /v1/ingest/prom, /v1/breaker/*, /v1/cost, scrapes, audit loop
std::unique_ptr<Service> MakeAdmissionService(App& app);  // /v1/workloads: the tenancy Admitter driven online (Kueue's scenario)

// Replies. Errors are JSON: {"error":"<message>","field":"<request field or empty>"}.
void ReplyJson(httplib::Response& res, int status, const nlohmann::json& body);
// An answer already written as JSON text.
void ReplyJsonText(httplib::Response& res, int status, std::string body);
void ReplyError(httplib::Response& res, int status, std::string_view field, std::string_view message);
// Maps a Status to 400 (kInvalidArgument), 404, 409, 413 (kResourceExhausted), 503 (kUnavailable),
// 500 otherwise.
int HttpStatusOf(const Status& status);

}  // namespace seedance::server
