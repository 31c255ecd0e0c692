#include "seedance/kube/testing/fake_apiserver.h"

#include <httplib.h>

#include <chrono>

#include <fmt/format.h>

namespace seedance::kube::testing {
namespace {

using nlohmann::json;

struct Kind {
  const char* resource;
  const char* kind;
  const char* api_version;
  bool namespaced;
};

constexpr Kind kKinds[] = {
    {"nodes", "Node", "v1", false},
    {"pods", "Pod", "v1", true},
    {"leases", "Lease", "coordination.k8s.io/v1", true},
};

const Kind* KindOf(const std::string& resource) {
  for (const Kind& k : kKinds) {
    if (resource == k.resource) return &k;
  }
  return nullptr;
}

std::string KeyOf(const std::string& ns, const std::string& name) { return ns.empty() ? name : ns + "/" + name; }

std::string MetaString(const json& object, const char* field) {
  if (!object.contains("metadata") || !object["metadata"].is_object()) return "";
  const json& meta = object["metadata"];
  auto it = meta.find(field);
  return it != meta.end() && it->is_string() ? it->get<std::string>() : "";
}

void Reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void ReplyStatus(httplib::Response& res, int code, const std::string& reason, const std::string& message,
                 const json& details = nullptr) {
  json status = StatusObject(code, reason, message);
  if (!details.is_null()) status["details"] = details;
  Reply(res, code, status);
}

// A Status's details for a conflict on an object, as the API server writes them: name, group
// (absent for the core group) and kind (the resource, e.g. "leases" or "pods/binding").
json ConflictDetails(const std::string& name, const std::string& api_version, const std::string& kind) {
  json d = {{"name", name}};
  if (const auto slash = api_version.find('/'); slash != std::string::npos) d["group"] = api_version.substr(0, slash);
  d["kind"] = kind;
  return d;
}

std::int64_t ParseRv(const std::string& text) {
  if (text.empty()) return 0;
  try {
    return std::stoll(text);
  } catch (...) {
    return -1;
  }
}

bool Truthy(const httplib::Request& req, const char* param) {
  const std::string v = req.get_param_value(param);
  return v == "true" || v == "1";
}

}  // namespace

json StatusObject(int code, const std::string& reason, const std::string& message) {
  return json{{"kind", "Status"},   {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Failure"},
              {"message", message}, {"reason", reason},   {"code", code}};
}

struct FakeApiServer::Watch {
  std::string resource, ns;
  std::size_t next = 0;  // index into events_
  std::vector<std::string> initial;  // lines to send first
  bool bookmarks = false;
  std::chrono::steady_clock::time_point deadline;
  std::uint64_t cut_gen = 0, expire_gen = 0, bookmark_gen = 0, down_gen = 0;
  bool cut_pending = false;
  bool done = false;
};

FakeApiServer::FakeApiServer() {
  const Status s = Listen();
  SEEDANCE_CHECK(s.ok()) << s.message();
}

FakeApiServer::~FakeApiServer() {
  std::lock_guard life(lifecycle_mu_);
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  if (http_) http_->stop();
  if (thread_.joinable()) thread_.join();
}

std::string FakeApiServer::url() const { return fmt::format("http://127.0.0.1:{}", port_); }

Credentials FakeApiServer::credentials() const {
  Credentials c;
  c.server = url();
  c.token = "fake-token";
  c.source = "fake-apiserver";
  return c;
}

Status FakeApiServer::Listen() {
  auto http = std::make_unique<httplib::Server>();
  Register(*http);
  if (port_ == 0) {
    port_ = http->bind_to_any_port("127.0.0.1");
    if (port_ <= 0) return UnavailableError("fake apiserver: cannot bind 127.0.0.1");
  } else {
    bool bound = false;
    // The old socket may linger a moment after stop().
    for (int i = 0; i < 100 && !bound; ++i) {
      bound = http->bind_to_port("127.0.0.1", port_);
      if (!bound) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!bound) return UnavailableError(fmt::format("fake apiserver: cannot bind 127.0.0.1:{} again", port_));
  }
  http_ = std::move(http);
  httplib::Server* raw = http_.get();
  thread_ = std::thread([raw] { raw->listen_after_bind(); });
  // httplib's stop() does nothing until the accept loop runs: a GoDown() right after Listen()
  // would then join a thread that accepts forever. Return only once the loop runs.
  for (int i = 0; i < 5000 && !raw->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (!raw->is_running()) return UnavailableError("fake apiserver: the accept loop did not start within 5 s");
  return Status::Ok();
}

void FakeApiServer::GoDown() {
  std::lock_guard life(lifecycle_mu_);
  if (!http_) return;
  {
    std::lock_guard lock(mu_);
    down_ = true;
    ++down_gen_;
  }
  cv_.notify_all();
  http_->stop();
  if (thread_.joinable()) thread_.join();
  http_.reset();
}

Status FakeApiServer::ComeBack() {
  std::lock_guard life(lifecycle_mu_);
  if (http_) return Status::Ok();
  {
    std::lock_guard lock(mu_);
    down_ = false;
  }
  return Listen();
}

json FakeApiServer::StoreLocked(const std::string& resource, json object, const char* type, bool record_event) {
  const Kind* k = KindOf(resource);
  SEEDANCE_CHECK(k != nullptr) << "unknown resource " << resource;
  object["kind"] = k->kind;
  object["apiVersion"] = k->api_version;
  json& meta = object["metadata"];
  const std::string key = KeyOf(k->namespaced ? meta.value("namespace", "") : "", meta.value("name", ""));
  auto& objects = objects_[resource];
  auto old = objects.find(key);
  if (std::string(type) != "DELETED") {
    if (old != objects.end()) {
      meta["uid"] = old->second["metadata"]["uid"];
      meta["creationTimestamp"] = old->second["metadata"]["creationTimestamp"];
    } else {
      if (!meta.contains("uid")) meta["uid"] = fmt::format("00000000-0000-4000-8000-{:012d}", next_uid_++);
      meta["creationTimestamp"] = "2026-01-01T00:00:00Z";
    }
  }
  meta["resourceVersion"] = std::to_string(++rv_);
  const std::string event_type = std::string(type) == "DELETED" ? "DELETED" : (old == objects.end() ? "ADDED" : "MODIFIED");
  if (event_type == "DELETED") {
    objects.erase(key);
  } else {
    objects[key] = object;
  }
  if (!record_event) return json();
  events_.push_back(Event{rv_, resource, event_type, object});
  cv_.notify_all();
  return object;
}

void FakeApiServer::Load(const std::string& resource, std::vector<json> objects) {
  std::lock_guard lock(mu_);
  for (json& o : objects) {
    SEEDANCE_CHECK(!MetaString(o, "name").empty()) << "metadata.name required";
    StoreLocked(resource, std::move(o), "PUT", /*record_event=*/false);
  }
}

json FakeApiServer::Put(const std::string& resource, json object) {
  const Kind* k = KindOf(resource);
  SEEDANCE_CHECK(k != nullptr) << "unknown resource " << resource;
  SEEDANCE_CHECK(!MetaString(object, "name").empty()) << "metadata.name required";
  SEEDANCE_CHECK(!k->namespaced || !MetaString(object, "namespace").empty()) << "metadata.namespace required";
  std::lock_guard lock(mu_);
  return StoreLocked(resource, std::move(object), "PUT");
}

bool FakeApiServer::Delete(const std::string& resource, const std::string& namespace_name, const std::string& name) {
  std::lock_guard lock(mu_);
  auto& objects = objects_[resource];
  auto it = objects.find(KeyOf(namespace_name, name));
  if (it == objects.end()) return false;
  json last = it->second;
  // The DELETED object carries the deletion's metadata, as after a deletion with grace period 0.
  last["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  last["metadata"]["deletionGracePeriodSeconds"] = 0;
  StoreLocked(resource, std::move(last), "DELETED");
  return true;
}

std::optional<json> FakeApiServer::Get(const std::string& resource, const std::string& namespace_name,
                                       const std::string& name) const {
  std::lock_guard lock(mu_);
  auto r = objects_.find(resource);
  if (r == objects_.end()) return std::nullopt;
  auto it = r->second.find(KeyOf(namespace_name, name));
  if (it == r->second.end()) return std::nullopt;
  return it->second;
}

std::vector<json> FakeApiServer::List(const std::string& resource) const {
  std::lock_guard lock(mu_);
  std::vector<json> out;
  if (auto r = objects_.find(resource); r != objects_.end()) {
    for (const auto& [key, o] : r->second) out.push_back(o);
  }
  return out;
}

std::int64_t FakeApiServer::resource_version() const {
  std::lock_guard lock(mu_);
  return rv_;
}

void FakeApiServer::CutWatches() {
  std::lock_guard lock(mu_);
  ++cut_gen_;
  cv_.notify_all();
}

void FakeApiServer::ExpireWatches() {
  std::lock_guard lock(mu_);
  compacted_ = rv_;
  ++expire_gen_;
  cv_.notify_all();
}

void FakeApiServer::Compact() {
  std::lock_guard lock(mu_);
  compacted_ = rv_;
}

void FakeApiServer::SetGoneAsHttp(bool http) {
  std::lock_guard lock(mu_);
  gone_as_http_ = http;
}

void FakeApiServer::Bookmark() {
  std::lock_guard lock(mu_);
  ++bookmark_gen_;
  cv_.notify_all();
}

int FakeApiServer::list_requests(const std::string& resource) const {
  std::lock_guard lock(mu_);
  auto it = lists_.find(resource);
  return it == lists_.end() ? 0 : it->second;
}

int FakeApiServer::watch_requests(const std::string& resource) const {
  std::lock_guard lock(mu_);
  auto it = watches_.find(resource);
  return it == watches_.end() ? 0 : it->second;
}

int FakeApiServer::open_watches() const {
  std::lock_guard lock(mu_);
  return open_watches_;
}

void FakeApiServer::HandleGetCollection(const std::string& resource, const std::string& ns,
                                        const httplib::Request& req, httplib::Response& res) {
  const Kind* k = KindOf(resource);
  const std::int64_t from = ParseRv(req.get_param_value("resourceVersion"));
  if (from < 0) return ReplyStatus(res, 400, "BadRequest", "resourceVersion: not an integer");
  if (Truthy(req, "watch")) return StartWatch(resource, ns, from, req, res);
  std::lock_guard lock(mu_);
  ++lists_[resource];
  std::int64_t limit = 0;
  if (req.has_param("limit")) limit = ParseRv(req.get_param_value("limit"));
  std::string after;  // continue token: "<rv>/<last key>"
  std::int64_t list_rv = rv_;
  if (const std::string cont = req.get_param_value("continue"); !cont.empty()) {
    const std::size_t bar = cont.find('|');
    if (bar == std::string::npos) return ReplyStatus(res, 400, "BadRequest", "continue: malformed");
    list_rv = ParseRv(cont.substr(0, bar));
    after = cont.substr(bar + 1);
    if (list_rv < compacted_) {  // etcd: a compaction at R still serves reads at R
      return ReplyStatus(res, 410, "Expired", "The provided continue parameter is too old to display a consistent list result.");
    }
  }
  json items = json::array();
  std::string last;
  bool more = false;
  for (const auto& [key, o] : objects_[resource]) {
    if (!after.empty() && key <= after) continue;
    if (!ns.empty() && MetaString(o, "namespace") != ns) continue;
    if (limit > 0 && static_cast<std::int64_t>(items.size()) == limit) {
      more = true;
      break;
    }
    json item = o;
    item.erase("kind");
    item.erase("apiVersion");
    items.push_back(std::move(item));
    last = key;
  }
  json meta = {{"resourceVersion", std::to_string(list_rv)}};
  if (more) meta["continue"] = fmt::format("{}|{}", list_rv, last);
  Reply(res, 200,
        json{{"kind", std::string(k->kind) + "List"}, {"apiVersion", k->api_version}, {"metadata", meta}, {"items", items}});
}

void FakeApiServer::StartWatch(const std::string& resource, const std::string& ns, std::int64_t from,
                               const httplib::Request& req, httplib::Response& res) {
  const Kind* k = KindOf(resource);
  auto w = std::make_shared<Watch>();
  w->resource = resource;
  w->ns = ns;
  w->bookmarks = Truthy(req, "allowWatchBookmarks");
  std::int64_t timeout = req.has_param("timeoutSeconds") ? ParseRv(req.get_param_value("timeoutSeconds")) : 1800;
  if (timeout <= 0) timeout = 1800;
  w->deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  {
    std::lock_guard lock(mu_);
    ++watches_[resource];
    if (from > 0 && from < compacted_) {
      const json gone = StatusObject(
          410, "Expired", fmt::format("too old resource version: {} ({})", from, compacted_ + 1));
      if (gone_as_http_) return Reply(res, 410, gone);
      w->initial.push_back(json{{"type", "ERROR"}, {"object", gone}}.dump() + "\n");
      w->done = true;
    } else if (from <= 0) {
      for (const auto& [key, o] : objects_[resource]) {
        if (!ns.empty() && MetaString(o, "namespace") != ns) continue;
        w->initial.push_back(json{{"type", "ADDED"}, {"object", o}}.dump() + "\n");
      }
      w->next = events_.size();
    } else {
      // Events after `from` (event rvs are increasing).
      std::size_t lo = 0, hi = events_.size();
      while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        if (events_[mid].rv <= from) lo = mid + 1; else hi = mid;
      }
      w->next = lo;
    }
    w->cut_gen = cut_gen_;
    w->expire_gen = expire_gen_;
    w->bookmark_gen = bookmark_gen_;
    w->down_gen = down_gen_;
    ++open_watches_;
  }
  const std::string kind = k->kind;
  const std::string api_version = k->api_version;
  res.set_chunked_content_provider(
      "application/json",
      [this, w, kind, api_version](std::size_t, httplib::DataSink& sink) {
        std::vector<std::string> lines;
        bool cut = false, end = false, abort = false;
        {
          std::unique_lock lock(mu_);
          auto pending = [&] {
            return closing_ || w->down_gen != down_gen_ || w->cut_gen != cut_gen_ || w->expire_gen != expire_gen_ ||
                   (w->bookmarks && w->bookmark_gen != bookmark_gen_) || !w->initial.empty() || w->done ||
                   w->next < events_.size();
          };
          cv_.wait_for(lock, std::chrono::milliseconds(100), pending);
          if (closing_ || w->down_gen != down_gen_) {
            abort = true;
          } else {
            lines.swap(w->initial);
            if (w->done) end = true;
            if (w->cut_gen != cut_gen_) {
              w->cut_gen = cut_gen_;
              w->cut_pending = true;
            }
            if (!end && w->expire_gen != expire_gen_) {
              w->expire_gen = expire_gen_;
              lines.push_back(json{{"type", "ERROR"},
                                   {"object", StatusObject(410, "Expired",
                                                           fmt::format("too old resource version: {}", rv_))}}
                                  .dump() + "\n");
              end = true;
            }
            for (; !end && w->next < events_.size(); ++w->next) {
              const Event& e = events_[w->next];
              if (e.resource != w->resource) continue;
              if (!w->ns.empty() && MetaString(e.object, "namespace") != w->ns) continue;
              std::string line = json{{"type", e.type}, {"object", e.object}}.dump() + "\n";
              if (w->cut_pending) {
                line.resize(line.size() / 2);
                lines.push_back(std::move(line));
                cut = true;
                ++w->next;
                break;
              }
              lines.push_back(std::move(line));
            }
            if (!end && !cut && w->bookmarks && w->bookmark_gen != bookmark_gen_) {
              w->bookmark_gen = bookmark_gen_;
              json mark = {{"kind", kind},
                           {"apiVersion", api_version},
                           {"metadata", {{"resourceVersion", std::to_string(rv_)}}}};
              if (kind == "Pod") {  // an empty v1.Pod as Go encodes it
                mark["spec"] = {{"containers", nullptr}};
                mark["status"] = json::object();
              }
              lines.push_back(json{{"type", "BOOKMARK"}, {"object", std::move(mark)}}.dump() + "\n");
            }
            if (std::chrono::steady_clock::now() >= w->deadline) end = true;
          }
        }
        if (abort) return false;
        for (const std::string& line : lines) {
          if (!sink.write(line.data(), line.size())) return false;
        }
        if (cut) return false;
        if (end) {
          sink.done();
          return true;
        }
        return sink.is_writable();
      },
      [this](bool) {
        std::lock_guard lock(mu_);
        --open_watches_;
      });
}

void FakeApiServer::RequireToken(const std::string& token) {
  std::lock_guard lock(mu_);
  required_token_ = token;
}

std::string FakeApiServer::last_authorization() const {
  std::lock_guard lock(mu_);
  return last_authorization_;
}

void FakeApiServer::FailWatches(int code) {
  std::lock_guard lock(mu_);
  fail_watches_ = code;
}

void FakeApiServer::Register(httplib::Server& http) {
  http.set_keep_alive_max_count(1);
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard lock(mu_);
    last_authorization_ = req.get_header_value("Authorization");
    if (!required_token_.empty() && last_authorization_ != "Bearer " + required_token_) {
      ReplyStatus(res, 401, "Unauthorized", "Unauthorized");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (fail_watches_ != 0 && req.get_param_value("watch") == "true") {
      ++watches_[req.path.rfind("/api/v1/nodes", 0) == 0 ? "nodes" : "pods"];
      ReplyStatus(res, fail_watches_, "InternalError", "injected watch failure");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Collections.
  http.Get("/api/v1/nodes", [this](const httplib::Request& req, httplib::Response& res) {
    HandleGetCollection("nodes", "", req, res);
  });
  http.Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
    HandleGetCollection("pods", "", req, res);
  });
  http.Get(R"(/api/v1/namespaces/([^/]+)/pods)", [this](const httplib::Request& req, httplib::Response& res) {
    HandleGetCollection("pods", req.matches[1], req, res);
  });
  http.Get(R"(/apis/coordination\.k8s\.io/v1/namespaces/([^/]+)/leases)",
           [this](const httplib::Request& req, httplib::Response& res) {
             HandleGetCollection("leases", req.matches[1], req, res);
           });

  // One object: GET / PUT / DELETE; create by POST to its collection.
  auto get_one = [this](const std::string& resource, const std::string& ns, const std::string& name,
                        httplib::Response& res) {
    auto o = Get(resource, ns, name);
    if (!o) return ReplyStatus(res, 404, "NotFound", fmt::format("{} \"{}\" not found", resource, name));
    Reply(res, 200, *o);
  };
  auto write_one = [this](const std::string& resource, const std::string& ns, const std::string& name, bool create,
                          const httplib::Request& req, httplib::Response& res) {
    auto body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) return ReplyStatus(res, 400, "BadRequest", "body: not a JSON object");
    json& meta = body["metadata"];
    if (!meta.is_object()) return ReplyStatus(res, 400, "BadRequest", "metadata: required");
    if (!ns.empty()) {
      if (meta.contains("namespace") && meta["namespace"] != ns) {
        return ReplyStatus(res, 400, "BadRequest", "metadata.namespace: does not match the path");
      }
      meta["namespace"] = ns;
    }
    const std::string object_name = meta.value("name", "");
    if (object_name.empty() || (!create && object_name != name)) {
      return ReplyStatus(res, 400, "BadRequest", "metadata.name: required and equal to the path's name");
    }
    std::lock_guard lock(mu_);
    auto& objects = objects_[resource];
    auto it = objects.find(KeyOf(ns, object_name));
    if (create && it != objects.end()) {
      return ReplyStatus(res, 409, "AlreadyExists", fmt::format("{} \"{}\" already exists", resource, object_name));
    }
    if (!create) {
      if (it == objects.end()) {
        return ReplyStatus(res, 404, "NotFound", fmt::format("{} \"{}\" not found", resource, object_name));
      }
      const std::string want = meta.value("resourceVersion", "");
      if (!want.empty() && want != MetaString(it->second, "resourceVersion")) {
        const Kind* k = KindOf(resource);
        const std::string api_version = k != nullptr ? k->api_version : "v1";
        const std::string qualified =
            api_version.find('/') == std::string::npos ? resource : resource + "." + api_version.substr(0, api_version.find('/'));
        return ReplyStatus(res, 409, "Conflict",
                           fmt::format("Operation cannot be fulfilled on {} \"{}\": the object has been modified; "
                                       "please apply your changes to the latest version and try again",
                                       qualified, object_name),
                           ConflictDetails(object_name, api_version, resource));
      }
    }
    Reply(res, create ? 201 : 200, StoreLocked(resource, std::move(body), "PUT"));
  };
  auto delete_one = [this](const std::string& resource, const std::string& ns, const std::string& name,
                           httplib::Response& res) {
    auto o = Get(resource, ns, name);
    if (!o || !Delete(resource, ns, name)) {
      return ReplyStatus(res, 404, "NotFound", fmt::format("{} \"{}\" not found", resource, name));
    }
    Reply(res, 200, *o);
  };
  const std::string node = R"(/api/v1/nodes/([^/]+))";
  const std::string pod = R"(/api/v1/namespaces/([^/]+)/pods/([^/]+))";
  const std::string lease = R"(/apis/coordination\.k8s\.io/v1/namespaces/([^/]+)/leases/([^/]+))";
  http.Get(node, [=](const httplib::Request& req, httplib::Response& res) { get_one("nodes", "", req.matches[1], res); });
  http.Get(pod, [=](const httplib::Request& req, httplib::Response& res) {
    get_one("pods", req.matches[1], req.matches[2], res);
  });
  http.Get(lease, [=](const httplib::Request& req, httplib::Response& res) {
    get_one("leases", req.matches[1], req.matches[2], res);
  });
  http.Post("/api/v1/nodes", [=](const httplib::Request& req, httplib::Response& res) {
    write_one("nodes", "", "", true, req, res);
  });
  http.Post(R"(/api/v1/namespaces/([^/]+)/pods)", [=](const httplib::Request& req, httplib::Response& res) {
    write_one("pods", req.matches[1], "", true, req, res);
  });
  http.Post(R"(/apis/coordination\.k8s\.io/v1/namespaces/([^/]+)/leases)",
            [=](const httplib::Request& req, httplib::Response& res) {
              write_one("leases", req.matches[1], "", true, req, res);
            });
  http.Put(node, [=](const httplib::Request& req, httplib::Response& res) {
    write_one("nodes", "", req.matches[1], false, req, res);
  });
  http.Put(pod, [=](const httplib::Request& req, httplib::Response& res) {
    write_one("pods", req.matches[1], req.matches[2], false, req, res);
  });
  http.Put(lease, [=](const httplib::Request& req, httplib::Response& res) {
    write_one("leases", req.matches[1], req.matches[2], false, req, res);
  });
  http.Delete(node, [=](const httplib::Request& req, httplib::Response& res) {
    delete_one("nodes", "", req.matches[1], res);
  });
  http.Delete(pod, [=](const httplib::Request& req, httplib::Response& res) {
    delete_one("pods", req.matches[1], req.matches[2], res);
  });
  http.Delete(lease, [=](const httplib::Request& req, httplib::Response& res) {
    delete_one("leases", req.matches[1], req.matches[2], res);
  });

  // pods/binding, as the DefaultBinder posts it.
  http.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding)",
            [this](const httplib::Request& req, httplib::Response& res) {
              const std::string ns = req.matches[1], name = req.matches[2];
              auto body = json::parse(req.body, nullptr, false);
              if (!body.is_object() || body.value("kind", "") != "Binding" || !body.contains("target") ||
                  !body["target"].is_object() || body["target"].value("name", "").empty()) {
                return ReplyStatus(res, 400, "BadRequest", "body: expected a v1.Binding with target.name");
              }
              std::lock_guard lock(mu_);
              auto& pods = objects_["pods"];
              auto it = pods.find(KeyOf(ns, name));
              if (it == pods.end()) return ReplyStatus(res, 404, "NotFound", fmt::format("pods \"{}\" not found", name));
              const std::string uid = body.contains("metadata") ? MetaString(body, "uid") : "";
              if (!uid.empty() && uid != MetaString(it->second, "uid")) {
                return ReplyStatus(res, 409, "Conflict",
                                   fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": uid mismatch", name),
                                   ConflictDetails(name, "v1", "pods/binding"));
              }
              json p = it->second;
              const std::string bound = p.contains("spec") ? p["spec"].value("nodeName", "") : "";
              if (!bound.empty()) {
                return ReplyStatus(res, 409, "Conflict",
                                   fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": pod {} is already "
                                               "assigned to node \"{}\"",
                                               name, name, bound),
                                   ConflictDetails(name, "v1", "pods/binding"));
              }
              p["spec"]["nodeName"] = body["target"]["name"];
              // As the API server's binding does: a PodScheduled condition, True.
              json& conds = p["status"]["conditions"];
              if (!conds.is_array()) conds = json::array();
              json kept = json::array();
              for (const json& c : conds) {
                if (c.value("type", "") != "PodScheduled") kept.push_back(c);
              }
              conds = std::move(kept);
              conds.push_back({{"type", "PodScheduled"}, {"status", "True"}, {"lastProbeTime", nullptr},
                               {"lastTransitionTime", "2026-01-01T00:00:00Z"}});
              StoreLocked("pods", std::move(p), "PUT");
              json ok = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()},
                         {"status", "Success"}, {"code", 201}};
              Reply(res, 201, ok);
            });
}

}  // namespace seedance::kube::testing
