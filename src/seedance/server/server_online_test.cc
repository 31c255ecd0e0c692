// The whole server (every part, as `seedance server` runs it) end to end over HTTP: telemetry
// ingested through /v1/ingest/prom drives the cost breaker and the audit, and both act on
// kube-scheduler's extender calls (issue 14, must-show 8).
#include <gtest/gtest.h>
#include <httplib.h>

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "seedance/audit/synthetic.h"
#include "seedance/audit/telemetry_adapter.h"
#include "seedance/core/rng.h"
#include "seedance/server/testing/test_server.h"

namespace seedance::server {
namespace {

using nlohmann::json;
using testing::StartTestServer;
using testing::TestDir;
using testing::WriteFile;

constexpr std::int64_t kHour = 3'600'000;
constexpr std::int64_t kT0 = 1'795'950'000'000 / kHour * kHour;

// dcgm-exporter text: `gpus` H100s of pod `pod` (namespace `ns`) on `host`, a scrape a minute.
std::string DcgmText(const std::string& host, const std::string& ns, const std::string& pod, int gpus,
                     std::int64_t start_ms, int minutes, double util) {
  std::string text;
  for (int m = 0; m < minutes; ++m) {
    const std::int64_t ts = start_ms + m * 60'000;
    for (int g = 0; g < gpus; ++g) {
      const std::string labels = fmt::format(
          R"({{gpu="{}",UUID="GPU-{}-{}",modelName="NVIDIA H100 80GB HBM3",Hostname="{}",pod="{}",namespace="{}",container="main"}})",
          g, host, g, host, pod, ns);
      text += fmt::format("DCGM_FI_PROF_GR_ENGINE_ACTIVE{} {} {}\n", labels, util, ts);
      text += fmt::format("DCGM_FI_DEV_FB_USED{} 10240 {}\n", labels, ts);
    }
  }
  return text;
}

json Node(const std::string& name) {
  return {{"metadata", {{"name", name}, {"labels", {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}}}}},
          {"status", {{"allocatable", {{"cpu", "96"}, {"memory", "1Ti"}, {"nvidia.com/gpu", "8"}}}}}};
}

json Pod(const std::string& ns, const std::string& name) {
  return {{"metadata", {{"name", name}, {"namespace", ns}, {"uid", "uid-" + ns + "-" + name}}},
          {"spec",
           {{"containers",
             {{{"name", "main"},
               {"resources", {{"requests", {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", "1"}}}}}}}}}},
          {"status", json::object()}};
}

class Client {
 public:
  explicit Client(int port) : c_("127.0.0.1", port) { c_.set_read_timeout(60); }
  json Post(const std::string& path, const std::string& body, int want = 200,
            const std::string& type = "application/json") {
    auto r = c_.Post(path.c_str(), body, type.c_str());
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    EXPECT_EQ(r->status, want) << path << ": " << r->body;
    return json::parse(r->body, nullptr, false);
  }
  json Get(const std::string& path) {
    auto r = c_.Get(path.c_str());
    EXPECT_TRUE(r) << path;
    if (!r) return {};
    EXPECT_EQ(r->status, 200) << path << ": " << r->body;
    return json::parse(r->body, nullptr, false);
  }
  json Filter(const std::string& ns, const std::string& name) {
    return Post("/extender/filter",
                json{{"Pod", Pod(ns, name)}, {"Nodes", nullptr}, {"NodeNames", {"n1", "n2"}}}.dump());
  }

 private:
  httplib::Client c_;
};

TEST(ServerOnlineTest, IngestedTelemetryTripsTheBreakerAndTheAuditAndTheExtenderObeys) {
  const std::string dir = TestDir();
  const std::string config = dir + "/seedance-config.yaml";
  WriteFile(config,
            "server:\n"
            "  breaker_namespaces: {ml: 5}\n"  // 4 H100 x $2.99/h = $11.96/h crosses it
            "  breaker_cooldown: 0\n");        // until reset
  ServerOptions o;
  o.config_path = config;
  o.db = dir + "/ledger.db";
  auto s = StartTestServer(o);
  ASSERT_NE(s, nullptr);
  s->clock_ms->store(kT0 + 2 * kHour + 10 * 60'000);
  Client c(s->port());
  c.Post("/v1/nodes", json{{"kind", "NodeList"}, {"items", {Node("n1"), Node("n2")}}}.dump());

  // Before any telemetry, both namespaces pass filter on both nodes.
  EXPECT_EQ(c.Filter("ml", "p0")["NodeNames"], json({"n1", "n2"}));

  // An hour of a 4-GPU job of namespace ml at 20% utilization; the breaker evaluates the ledger.
  json ingest = c.Post("/v1/ingest/prom", DcgmText("n1", "ml", "train-0", 4, kT0 + kHour, 60, 0.2), 200,
                       "text/plain; version=0.0.4");
  EXPECT_EQ(ingest["rejected"], 0) << ingest;
  json eval = c.Post("/v1/breaker/evaluate", "");
  ASSERT_EQ(eval["tripped"].size(), 1u) << eval;

  // The next pod of ml fails filter everywhere with the breaker's reason; web is untouched.
  json f = c.Filter("ml", "p1");
  EXPECT_EQ(f["NodeNames"], json::array()) << f;
  for (const char* node : {"n1", "n2"}) {
    const std::string reason = f["FailedAndUnresolvableNodes"].value(node, "");
    EXPECT_EQ(reason.rfind("breaker: ", 0), 0u) << reason;
    EXPECT_NE(reason.find("hourly cost $11.96 > threshold $5.00"), std::string::npos) << reason;
  }
  EXPECT_EQ(c.Filter("web", "w1")["NodeNames"], json({"n1", "n2"}));
  // The decision explains itself.
  const std::string decisions = c.Get("/v1/decisions?pod=ml/p1").dump();
  EXPECT_NE(decisions.find("breaker"), std::string::npos) << decisions;

  // Reset: ml schedules again.
  EXPECT_EQ(c.Post("/v1/breaker/reset", R"({"namespace":"ml"})")["cleared"], true);
  EXPECT_EQ(c.Filter("ml", "p2")["NodeNames"], json({"n1", "n2"}));

  // Three hours of telemetry in which n2's GPUs raise XID 79: two failed audits remove it.
  const std::int64_t start_s = kT0 / 1000;
  Rng rng(7);
  audit::SyntheticNode bad;
  bad.host = "n2";
  bad.gpus = 2;
  bad.fault = audit::SyntheticFault::kXid;
  bad.fault_start_s = start_s;
  c.Post("/v1/ingest/prom",
         audit::RenderDcgmExposition(audit::GenerateNodeTelemetry(bad, start_s, start_s + 3 * 3600, 60, rng)), 200,
         "text/plain; version=0.0.4");
  s->clock_ms->store(kT0 + 3 * kHour);
  c.Post("/v1/audit/run", "");
  s->clock_ms->fetch_add(300'000);
  c.Post("/v1/audit/run", "");
  EXPECT_EQ(c.Get("/v1/audit")["nodes"]["n2"]["state"], "removed");

  // A node graded removed receives no pod: 8 pods through filter -> prioritize -> bind fill n1.
  for (int i = 0; i < 8; ++i) {
    const std::string name = "job-" + std::to_string(i);
    json filtered = c.Filter("web", name);
    ASSERT_EQ(filtered["NodeNames"], json({"n1"})) << filtered;
    const std::string reason = filtered["FailedAndUnresolvableNodes"].value("n2", "");
    EXPECT_EQ(reason.rfind("audit: ", 0), 0u) << reason;
    json scores = c.Post("/extender/prioritize",
                         json{{"Pod", Pod("web", name)}, {"Nodes", nullptr}, {"NodeNames", filtered["NodeNames"]}}.dump());
    ASSERT_EQ(scores.size(), 1u) << scores;
    EXPECT_EQ(scores[0]["Host"], "n1");
    json bind = c.Post("/extender/bind", json{{"PodName", name},
                                              {"PodNamespace", "web"},
                                              {"PodUID", "uid-web-" + name},
                                              {"Node", scores[0]["Host"]}}
                                              .dump());
    EXPECT_EQ(bind.value("Error", "?"), "") << bind;
  }
  EXPECT_EQ(s->app().metrics.Value("seedance_pods_bound", {}), 8.0);
  // n1 is full: the next pod waits (fit; its pods are of the same priority, so preemption cannot
  // help) rather than land on the removed n2.
  json waiting = c.Filter("web", "job-8");
  EXPECT_EQ(waiting["NodeNames"], json::array()) << waiting;
  EXPECT_EQ(waiting["FailedAndUnresolvableNodes"].value("n1", "").rfind("fit: ", 0), 0u) << waiting;
  EXPECT_EQ(waiting["FailedAndUnresolvableNodes"].value("n2", "").rfind("audit: ", 0), 0u) << waiting;
}

// kube-scheduler's bindVerb hands binding to the extender: with server.kube_api_url set, bind
// creates the v1.Binding in the API server (a fake one on loopback here) and releases the pod
// again when the API server refuses.
// A fake API server on loopback that records each Binding POSTed to it (path, Authorization,
// body, the client's port: one port per connection) and refuses the pod named "taken" with 409.
struct FakeApiServer {
  httplib::Server api;
  std::mutex mu;
  std::vector<json> bindings;
  std::vector<std::string> paths, auths;
  std::vector<int> client_ports;
  std::thread thread;
  int port = 0;
  FakeApiServer() {
    api.Post(R"(/api/v1/namespaces/([^/]+)/pods/([^/]+)/binding)",
             [this](const httplib::Request& req, httplib::Response& res) {
               std::lock_guard lock(mu);
               paths.push_back(req.path);
               auths.push_back(req.get_header_value("Authorization"));
               bindings.push_back(json::parse(req.body, nullptr, false));
               client_ports.push_back(req.remote_port);
               if (req.matches[2] == "taken") {
                 res.status = 409;
                 res.set_content(R"({"kind":"Status","status":"Failure","message":"pod taken is already assigned to node n9","code":409})",
                                 "application/json");
                 return;
               }
               res.status = 201;
               res.set_content(req.body, "application/json");
             });
    port = api.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { api.listen_after_bind(); });
    for (int i = 0; i < 500 && !api.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~FakeApiServer() {
    api.stop();
    thread.join();
  }
  // Server options in `dir` whose binder creates Bindings here, with the token "t0ken" in `dir`/token.
  ServerOptions Options(const std::string& dir) const {
    WriteFile(dir + "/token", "t0ken\n");
    WriteFile(dir + "/seedance-config.yaml", "server:\n  kube_api_url: http://127.0.0.1:" + std::to_string(port) +
                                                 "\n  kube_token_file: " + dir + "/token\n");
    ServerOptions o;
    o.config_path = dir + "/seedance-config.yaml";
    o.db = dir + "/ledger.db";
    return o;
  }
};

TEST(ServerOnlineTest, BindCreatesTheBindingInTheApiServer) {
  auto fake = std::make_unique<FakeApiServer>();
  ASSERT_GT(fake->port, 0);
  auto& bindings = fake->bindings;
  auto& paths = fake->paths;
  auto& auths = fake->auths;

  const ServerOptions o = fake->Options(TestDir());
  {
    auto s = StartTestServer(o);
    ASSERT_NE(s, nullptr);
    Client c(s->port());
    c.Post("/v1/nodes", Node("n1").dump());
    for (const char* name : {"p1", "taken"}) ASSERT_EQ(c.Filter("web", name)["NodeNames"], json({"n1"}));
    json ok = c.Post("/extender/bind", json{{"PodName", "p1"}, {"PodNamespace", "web"}, {"PodUID", "uid-web-p1"},
                                            {"Node", "n1"}}.dump());
    EXPECT_EQ(ok["Error"], "") << ok;
    json refused = c.Post("/extender/bind", json{{"PodName", "taken"}, {"PodNamespace", "web"},
                                                 {"PodUID", "uid-web-taken"}, {"Node", "n1"}}.dump());
    const std::string error = refused.value("Error", "");
    EXPECT_NE(error.find("409"), std::string::npos) << error;
    EXPECT_NE(error.find("already assigned"), std::string::npos) << error;
    // The refused pod was released again: only p1 holds a GPU.
    EXPECT_EQ(s->app().metrics.Value("seedance_pods_bound", {}), 1.0);
  }
  ASSERT_EQ(bindings.size(), 2u);
  EXPECT_EQ(paths[0], "/api/v1/namespaces/web/pods/p1/binding");
  EXPECT_EQ(auths[0], "Bearer t0ken");
  EXPECT_EQ(bindings[0], json::parse(R"({"apiVersion":"v1","kind":"Binding",
      "metadata":{"name":"p1","namespace":"web","uid":"uid-web-p1"},
      "target":{"apiVersion":"v1","kind":"Node","name":"n1"}})"));
}

// kube-scheduler hands every bind to the extender (bindVerb): each used to open its own
// connection to the API server (a TCP and TLS handshake and a CA file load per pod: issue 40's
// throughput run). Binds now reuse kept-alive connections, and a rotated token is still sent on
// the connection already open.
TEST(ServerOnlineTest, BindsReuseTheApiServerConnection) {
  FakeApiServer fake;
  ASSERT_GT(fake.port, 0);
  const std::string dir = TestDir();
  auto s = StartTestServer(fake.Options(dir));
  ASSERT_NE(s, nullptr);
  Client c(s->port());
  c.Post("/v1/nodes", Node("n1").dump());
  for (int i = 0; i < 4; ++i) {
    const std::string name = "p" + std::to_string(i);
    if (i == 3) WriteFile(dir + "/token", "r0tated-t0ken\n");  // another size: the file changed
    ASSERT_EQ(c.Filter("web", name)["NodeNames"], json({"n1"}));
    json ok = c.Post("/extender/bind", json{{"PodName", name}, {"PodNamespace", "web"}, {"PodUID", "uid-web-" + name},
                                            {"Node", "n1"}}.dump());
    EXPECT_EQ(ok["Error"], "") << ok;
  }
  std::lock_guard lock(fake.mu);
  ASSERT_EQ(fake.client_ports.size(), 4u);
  for (int port : fake.client_ports) EXPECT_EQ(port, fake.client_ports[0]) << "a bind opened a new connection";
  EXPECT_EQ(fake.auths[2], "Bearer t0ken");
  EXPECT_EQ(fake.auths[3], "Bearer r0tated-t0ken");
}

}  // namespace
}  // namespace seedance::server
