#pragma once

// An in-process fake kube-apiserver on 127.0.0.1 (plain HTTP, cpp-httplib) for fault injection
// in tests. It speaks the real wire format for what seedance uses:
//   GET    /api/v1/nodes, /api/v1/pods, /api/v1/namespaces/{ns}/pods,
//          /apis/coordination.k8s.io/v1/namespaces/{ns}/leases
//            list: {"kind":"NodeList"|"PodList"|"LeaseList","apiVersion","metadata":
//            {"resourceVersion","continue"?},"items":[...]} (items without kind/apiVersion, as the
//            API server writes them), limit/continue pages;
//            ?watch=true: chunked JSON lines {"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR",
//            "object":{...}} from resourceVersion (absent or "0": ADDED for every object first),
//            BOOKMARKs when allowWatchBookmarks=true, ends after timeoutSeconds.
//   GET/PUT/DELETE one object, POST to a collection (create; 409 AlreadyExists); PUT with a
//            metadata.resourceVersion that is not the current one: 409 Conflict.
//   POST   /api/v1/namespaces/{ns}/pods/{name}/binding: a v1.Binding sets spec.nodeName and a
//          PodScheduled condition (201); 409 Conflict when the pod is already bound, 404 when it
//          does not exist.
// Errors are v1.Status objects {"kind":"Status","status":"Failure","message","reason","code"};
// 409s carry "details" {name, group (not for the core group), kind}. A DELETED event's object has
// metadata.deletionTimestamp and deletionGracePeriodSeconds 0. The shapes are checked against a
// real kube-apiserver's captures (tests/data/k8s/) by fake_apiserver_wire_test.cc.
// One resourceVersion counter for all objects (as etcd's revision); every change is an event.
// Compact() makes every resourceVersion up to now too old: a watch from one gets an ERROR event
// with a Status of code 410 reason Expired (or, with SetGoneAsHttp(true), an HTTP 410 answer).
//
// Fault knobs: CutWatches (each open watch writes the first half of its next event, then drops
// the connection), ExpireWatches (ERROR 410 on every open watch), Bookmark, GoDown / ComeBack
// (the port refuses connections in between; open watches break).
//
// Thread-safe. Tests also change objects directly through Put / Delete (as kubectl would).

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/core/status.h"
#include "seedance/kube/credentials.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace seedance::kube::testing {

class FakeApiServer {
 public:
  FakeApiServer();  // listening on an ephemeral port
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  int port() const { return port_; }
  std::string url() const;
  Credentials credentials() const;  // plain http, a token the fake accepts (it checks none)

  // resource: "nodes" | "pods" | "leases". Creates or replaces the object (metadata.name, and
  // metadata.namespace for pods and leases, required); sets kind, apiVersion, resourceVersion,
  // and on create uid and creationTimestamp. Returns the stored object.
  nlohmann::json Put(const std::string& resource, nlohmann::json object);
  // Stores every object as Put does, in one lock, but records no watch event: a cluster that
  // existed before the fake's history (a watch from "0" still gets an ADDED per object; lists see
  // them). For benchmarks of large clusters, where an event per object would double the fake's memory.
  void Load(const std::string& resource, std::vector<nlohmann::json> objects);
  // False when absent.
  bool Delete(const std::string& resource, const std::string& namespace_name, const std::string& name);
  std::optional<nlohmann::json> Get(const std::string& resource, const std::string& namespace_name,
                                    const std::string& name) const;
  std::vector<nlohmann::json> List(const std::string& resource) const;
  std::int64_t resource_version() const;

  void CutWatches();
  void ExpireWatches();
  void Compact();
  void SetGoneAsHttp(bool http);
  void Bookmark();
  void GoDown();
  // Errors: kUnavailable when the port cannot be bound again.
  Status ComeBack();

  // Bearer-token check, as the API server's authenticator: once set (non-empty), a request whose
  // Authorization header is not "Bearer <token>" gets 401 Unauthorized. "" (the default) accepts any.
  void RequireToken(const std::string& token);
  // The Authorization header of the latest request ("" before any).
  std::string last_authorization() const;
  // Answers every watch request (not lists) with HTTP `code` (a v1.Status body) while set; 0 stops.
  void FailWatches(int code);

  int list_requests(const std::string& resource) const;
  int watch_requests(const std::string& resource) const;
  int open_watches() const;

 private:
  struct Event {
    std::int64_t rv;
    std::string resource, type;
    nlohmann::json object;
  };
  struct Watch;

  void Register(httplib::Server& http);
  Status Listen();
  void HandleGetCollection(const std::string& resource, const std::string& ns, const httplib::Request& req,
                           httplib::Response& res);
  void StartWatch(const std::string& resource, const std::string& ns, std::int64_t from,
                  const httplib::Request& req, httplib::Response& res);
  nlohmann::json StoreLocked(const std::string& resource, nlohmann::json object, const char* type,
                             bool record_event = true);

  std::mutex lifecycle_mu_;  // GoDown / ComeBack / destruction, one at a time
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::map<std::string, nlohmann::json>> objects_;  // resource -> key -> object
  std::vector<Event> events_;
  std::int64_t rv_ = 1000;
  std::int64_t compacted_ = 0;
  std::int64_t next_uid_ = 1;
  bool gone_as_http_ = false;
  bool down_ = false;
  bool closing_ = false;
  std::uint64_t cut_gen_ = 0, expire_gen_ = 0, bookmark_gen_ = 0, down_gen_ = 0;
  std::map<std::string, int> lists_, watches_;
  std::string required_token_, last_authorization_;
  int fail_watches_ = 0;
  int open_watches_ = 0;

  int port_ = 0;
  std::unique_ptr<httplib::Server> http_;
  std::thread thread_;
};

// A v1.Status failure object.
nlohmann::json StatusObject(int code, const std::string& reason, const std::string& message);

}  // namespace seedance::kube::testing
