// Protocol fidelity (issue 14, must-show 1) and the audit/breaker acting on filter (must-show
// 8): the bodies of docs/PROTOCOLS.md section 5.2 sent over HTTP, responses checked field by field.

#include <gtest/gtest.h>

#include <string>

#include "seedance/cluster/gpu_model.h"
#include "seedance/server/testing/extender_harness.h"

namespace seedance::server {
namespace {

using nlohmann::json;
using testing::ExtenderHarness;
using testing::GpuNode;
using testing::GpuPod;
using testing::NodeJson;
using testing::PodJson;

json Keys(const json& obj) {
  json keys = json::array();
  for (auto it = obj.begin(); it != obj.end(); ++it) keys.push_back(it.key());
  return keys;
}

TEST(ExtenderProtocol, VerbatimFullNodeArgs) {
  ServerConfig config = ServerConfig::Defaults();
  config.extender_full_nodes = true;  // server.extender_full_nodes: off by default
  ExtenderHarness h(config);
  // Full-node requests never add nodes (they are unauthenticated): the node table has it.
  ASSERT_EQ(h.PostRaw("/v1/nodes", R"({"metadata":{"name":"nodename"},"spec":{},"status":{}})").first, 200);
  // Verbatim from kube-scheduler extender/v1/types_test.go (docs/PROTOCOLS.md 5.2; the elided node status is empty).
  auto [code, body] = h.PostRaw("/extender/filter",
      R"({"Pod":{"metadata":{"name":"podname"},"spec":{"containers":null},"status":{}},"Nodes":{"metadata":{},"items":[{"metadata":{"name":"nodename"},"spec":{},"status":{}}]},"NodeNames":["node1"]})");
  ASSERT_EQ(code, 200) << body;
  EXPECT_EQ(Keys(body), json({"Error", "FailedAndUnresolvableNodes", "FailedNodes", "NodeNames", "Nodes"}));
  EXPECT_EQ(body["Error"], "");
  EXPECT_TRUE(body["NodeNames"].is_null());
  ASSERT_EQ(body["Nodes"]["items"].size(), 1u);
  EXPECT_EQ(body["Nodes"]["items"][0]["metadata"]["name"], "nodename");
  EXPECT_EQ(body["FailedNodes"], json::object());
  EXPECT_EQ(body["FailedAndUnresolvableNodes"], json::object());
  auto [c2, prio] = h.PostRaw("/extender/prioritize",
      R"({"Pod":{"metadata":{"name":"podname"},"spec":{"containers":null},"status":{}},"Nodes":null,"NodeNames":["nodename"]})");
  ASSERT_EQ(c2, 200);
  ASSERT_TRUE(prio.is_array());
  EXPECT_EQ(prio, json::parse(R"([{"Host":"nodename","Score":10}])"));
  // A node only a full-node request names is unknown, and stays unknown.
  auto [c3, other] = h.PostRaw("/extender/filter",
      R"({"Pod":{"metadata":{"name":"podname"}},"Nodes":{"items":[{"metadata":{"name":"other"}}]}})");
  ASSERT_EQ(c3, 200);
  EXPECT_EQ(other["Nodes"]["items"].size(), 0u);
  EXPECT_EQ(other["FailedAndUnresolvableNodes"]["other"].get<std::string>().rfind("unknown node", 0), 0u);
  EXPECT_EQ(h.app.metrics.Value("seedance_nodes", {}), 1.0);
}

// server.extender_decide_at_filter (issue 40): among the nodes that pass, filter answers only the
// one prioritize scores 10 (in node-cache and full-node mode alike); the others are in no map.
TEST(ExtenderProtocol, DecideAtFilterAnswersPrioritizesPick) {
  ServerConfig config = ServerConfig::Defaults();
  config.extender_full_nodes = true;
  ServerConfig deciding = config;
  deciding.extender_decide_at_filter = true;
  ExtenderHarness blend(config), decide(deciding);
  const json nodes = {NodeJson(GpuNode("gpu-a", 8)), NodeJson(GpuNode("gpu-b", 8)), NodeJson(GpuNode("gpu-c", 8)),
                      NodeJson(GpuNode("gpu-d", 1))};
  json held = PodJson(GpuPod("held", 5), "ml", "uid-held");
  held["spec"]["nodeName"] = "gpu-b";
  for (ExtenderHarness* h : {&blend, &decide}) {
    ASSERT_EQ(h->Post("/v1/nodes", json{{"items", nodes}}).first, 200);
    ASSERT_EQ(h->Post("/v1/pods", held).first, 200);
  }
  const json pod = PodJson(GpuPod("train", 2), "ml", "uid-train");
  const json names = {"gpu-a", "gpu-b", "gpu-c", "gpu-d"};
  auto [pc, prio] = blend.Post("/extender/prioritize", json{{"Pod", pod}, {"NodeNames", {"gpu-a", "gpu-b", "gpu-c"}}});
  ASSERT_EQ(pc, 200);
  std::string best;
  for (const auto& hp : prio) {
    if (hp["Score"] == 10) best = hp["Host"];
  }
  EXPECT_EQ(best, "gpu-b");  // bestfit: the fullest node that fits
  // Off: every node that passes, as before.
  EXPECT_EQ(blend.Post("/extender/filter", json{{"Pod", pod}, {"NodeNames", names}}).second["NodeNames"],
            json({"gpu-a", "gpu-b", "gpu-c"}));
  // On, node-cache mode: the pick alone; gpu-a and gpu-c (passed, not picked) are in no map.
  auto [fc, f] = decide.Post("/extender/filter", json{{"Pod", pod}, {"NodeNames", names}});
  ASSERT_EQ(fc, 200) << f;
  EXPECT_EQ(f["NodeNames"], json({best})) << f;
  EXPECT_EQ(f["FailedNodes"], json::object()) << f;
  EXPECT_EQ(f["FailedAndUnresolvableNodes"], json({{"gpu-d", "fit: needs 2 GPU, node has 1"}})) << f;
  auto [dc, dec] = decide.Get("/v1/decisions?pod=ml/train");
  ASSERT_EQ(dc, 200) << dec;
  EXPECT_EQ(dec["decisions"].back()["chosen"], best);
  EXPECT_EQ(dec["decisions"].back()["passed"], 3);
  EXPECT_EQ(dec["decisions"].back()["policy"], "bestfit");
  // Full-node mode: the picked node's object alone, as sent.
  auto [nc, n] = decide.Post("/extender/filter", json{{"Pod", pod}, {"Nodes", {{"items", nodes}}}});
  ASSERT_EQ(nc, 200) << n;
  ASSERT_EQ(n["Nodes"]["items"].size(), 1u) << n;
  EXPECT_EQ(n["Nodes"]["items"][0], nodes[1]);
  // Bind takes the pick's GPUs; the next pod sees them used.
  auto [bc, b] = decide.Post("/extender/bind", json{{"PodName", "train"}, {"PodNamespace", "ml"}, {"PodUID", "uid-train"}, {"Node", best}});
  EXPECT_EQ(b["Error"], "") << b;
  EXPECT_EQ(decide.Post("/extender/filter", json{{"Pod", PodJson(GpuPod("next", 2), "ml", "uid-next")}, {"NodeNames", names}})
                .second["NodeNames"],
            json({"gpu-a"}));
}

TEST(ExtenderProtocol, NodeCacheModeFilterPrioritizeBind) {
  ExtenderHarness h;
  json list{{"kind", "NodeList"}, {"items", {NodeJson(GpuNode("gpu-a", 8)), NodeJson(GpuNode("gpu-b", 1))}}};
  auto [nc, nb] = h.Post("/v1/nodes", list);
  ASSERT_EQ(nc, 200) << nb;
  const json pod = PodJson(GpuPod("train", 2), "ml", "uid-train");
  // Lowercase top-level keys are accepted, as Go decodes them.
  auto [code, body] = h.Post("/extender/filter", json{{"pod", pod}, {"nodes", nullptr}, {"nodenames", {"gpu-a", "gpu-b", "ghost"}}});
  ASSERT_EQ(code, 200) << body;
  EXPECT_EQ(body["NodeNames"], json({"gpu-a"}));
  EXPECT_TRUE(body["Nodes"].is_null());
  EXPECT_EQ(body["FailedNodes"], json::object());
  EXPECT_EQ(body["FailedAndUnresolvableNodes"]["gpu-b"], "fit: needs 2 GPU, node has 1");
  EXPECT_EQ(body["FailedAndUnresolvableNodes"]["ghost"].get<std::string>().rfind("unknown node", 0), 0u);
  EXPECT_EQ(body["Error"], "");

  auto [pc, prio] = h.Post("/extender/prioritize", json{{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", {"gpu-a"}}});
  ASSERT_EQ(pc, 200);
  EXPECT_EQ(prio, json::parse(R"([{"Host":"gpu-a","Score":10}])"));

  auto [bc, bind] = h.Post("/extender/bind", json{{"PodName", "train"}, {"PodNamespace", "ml"}, {"PodUID", "uid-train"}, {"Node", "gpu-a"}});
  ASSERT_EQ(bc, 200);
  EXPECT_EQ(bind, json::parse(R"({"Error":""})"));
  // Binding to a node where it cannot fit answers the protocol's Error.
  auto [bc2, bind2] = h.Post("/extender/bind", json{{"PodName", "other"}, {"PodNamespace", "ml"}, {"PodUID", "nope"}, {"Node", "gpu-a"}});
  ASSERT_EQ(bc2, 200);
  EXPECT_NE(bind2["Error"], "");

  auto [dc, dec] = h.Get("/v1/decisions?pod=ml/train");
  ASSERT_EQ(dc, 200) << dec;
  EXPECT_EQ(dec["bound_to"], "gpu-a");
  ASSERT_EQ(dec["decisions"].size(), 3u);
  EXPECT_EQ(dec["decisions"][0]["verb"], "filter");
  EXPECT_EQ(dec["decisions"][0]["reasons"]["gpu-b"], "fit: needs 2 GPU, node has 1");
  EXPECT_EQ(dec["decisions"][1]["chosen"], "gpu-a");
  EXPECT_EQ(dec["decisions"][2]["verb"], "bind");
  EXPECT_EQ(h.Get("/v1/decisions?pod=ml/unknown").first, 404);
  EXPECT_EQ(h.app.metrics.Value("seedance_decisions_total", {{"verb", "filter"}, {"result", "ok"}}), 1.0);
  EXPECT_EQ(h.app.metrics.Value("seedance_pods_bound", {}), 1.0);

  // Now gpu-a has 6 free: a 7-GPU pod fails on fit. kube-scheduler's preemption evicts only pods
  // of lower priority: for a pod of train's priority it cannot help (unresolvable, no dry run),
  // for a pod of higher priority it could (FailedNodes).
  json big = PodJson(GpuPod("big", 7), "ml", "uid-big");
  auto [c3, b3] = h.Post("/extender/filter", json{{"Pod", big}, {"NodeNames", {"gpu-a"}}});
  EXPECT_EQ(b3["FailedAndUnresolvableNodes"]["gpu-a"], "fit: needs 7 GPU, 6 free") << b3;
  EXPECT_EQ(b3["FailedNodes"], json::object()) << b3;
  big["spec"]["priority"] = 5;
  auto [c3p, b3p] = h.Post("/extender/filter", json{{"Pod", big}, {"NodeNames", {"gpu-a"}}});
  EXPECT_EQ(b3p["FailedNodes"]["gpu-a"], "fit: needs 7 GPU, 6 free") << b3p;
  EXPECT_EQ(b3p["FailedAndUnresolvableNodes"], json::object()) << b3p;
  big["spec"].erase("priority");
  // Deleting a node releases its pods and makes it unknown.
  h.Post("/v1/nodes", NodeJson(GpuNode("gpu-c", 8)));
  json on_c = PodJson(GpuPod("on-c", 1), "ml", "uid-on-c");
  on_c["spec"]["nodeName"] = "gpu-c";
  ASSERT_EQ(h.Post("/v1/pods", on_c).first, 200);
  EXPECT_EQ(h.app.metrics.Value("seedance_pods_bound", {}), 2.0);
  EXPECT_EQ(h.client->Delete("/v1/nodes/gpu-c")->status, 200);
  EXPECT_EQ(h.client->Delete("/v1/nodes/gpu-c")->status, 404);
  EXPECT_EQ(h.app.metrics.Value("seedance_pods_bound", {}), 1.0);
  EXPECT_EQ(h.app.metrics.Value("seedance_nodes", {}), 2.0);
  // Release through DELETE; then it fits.
  EXPECT_EQ(h.client->Delete("/v1/pods/ml/train")->status, 200);
  auto [c4, b4] = h.Post("/extender/filter", json{{"Pod", big}, {"NodeNames", {"gpu-a"}}});
  EXPECT_EQ(b4["NodeNames"], json({"gpu-a"}));
}

// Issue 40: kube-scheduler's DefaultPreemption dry-runs every node in FailedNodes, and it can
// only evict pods of lower priority than the preemptor. A node that fails on free capacity or
// quota with no such pod bound is answered in FailedAndUnresolvableNodes (no dry run there); one
// with such a pod stays in FailedNodes. The per-node priorities follow binds, releases, a node
// added (the table rebuilt) and a node removed (the nodes after it move down the table).
TEST(ExtenderProtocol, NodesWherePreemptionCannotHelpAreUnresolvable) {
  ExtenderHarness h;
  for (const char* n : {"gpu-0", "gpu-low", "gpu-high", "gpu-mixed"}) {
    ASSERT_EQ(h.Post("/v1/nodes", NodeJson(GpuNode(n, 8))).first, 200);
  }
  auto bind = [&](const std::string& name, const std::string& node, int gpus, int priority) {
    json p = PodJson(GpuPod(name, gpus), "ml", "uid-" + name);
    p["spec"]["nodeName"] = node;
    p["spec"]["priority"] = priority;
    ASSERT_EQ(h.Post("/v1/pods", p).first, 200) << name;
  };
  bind("zero", "gpu-0", 8, 5);
  bind("low", "gpu-low", 8, 1);
  bind("high", "gpu-high", 8, 9);
  bind("mixed-high", "gpu-mixed", 4, 9);
  bind("mixed-low", "gpu-mixed", 4, 1);
  json pod = PodJson(GpuPod("want", 2), "ml", "uid-want");
  pod["spec"]["priority"] = 5;
  const json names = {"gpu-0", "gpu-low", "gpu-high", "gpu-mixed"};
  auto verdicts = [&]() {
    auto [code, body] = h.Post("/extender/filter", json{{"Pod", pod}, {"NodeNames", names}});
    EXPECT_EQ(code, 200);
    std::string out;
    for (const auto& n : names) {
      const std::string name = n.get<std::string>();
      out += name + (body["FailedNodes"].contains(name) ? ":F " : body["FailedAndUnresolvableNodes"].contains(name) ? ":U " : ":ok ");
    }
    return out;
  };
  // gpu-0: a pod of the same priority (5 is not lower than 5).
  EXPECT_EQ(verdicts(), "gpu-0:U gpu-low:F gpu-high:U gpu-mixed:F ");
  // The low pod on gpu-mixed leaves: only a higher one is left there.
  ASSERT_EQ(h.client->Delete("/v1/pods/ml/mixed-low")->status, 200);
  bind("mixed-filler", "gpu-mixed", 4, 7);
  EXPECT_EQ(verdicts(), "gpu-0:U gpu-low:F gpu-high:U gpu-mixed:U ");
  // A node added rebuilds the table; a node removed moves the ones after it down: each keeps its pods' priorities.
  ASSERT_EQ(h.Post("/v1/nodes", NodeJson(GpuNode("gpu-new", 8))).first, 200);
  EXPECT_EQ(verdicts(), "gpu-0:U gpu-low:F gpu-high:U gpu-mixed:U ");
  ASSERT_EQ(h.client->Delete("/v1/nodes/gpu-0")->status, 200);
  const std::string after = verdicts();
  EXPECT_EQ(after.substr(after.find("gpu-low")), "gpu-low:F gpu-high:U gpu-mixed:U ");
  // A pod of the lowest priority can preempt nothing anywhere.
  pod["spec"]["priority"] = 0;
  EXPECT_EQ(verdicts().substr(after.find("gpu-low")), "gpu-low:U gpu-high:U gpu-mixed:U ");
}

TEST(ExtenderProtocol, PreemptAnswersMetaVictims) {
  ServerConfig config = ServerConfig::Defaults();
  tenancy::TenantConfig gold;
  gold.name = "prod";
  gold.tier = tenancy::Tier::kGold;
  tenancy::TenantConfig bronze;
  bronze.name = "batch";
  bronze.tier = tenancy::Tier::kBronze;
  config.tenancy.tenants = {gold, bronze};
  ExtenderHarness h(config);
  h.Post("/v1/nodes", NodeJson(GpuNode("gpu-a", 4)));
  // Verbatim preemption args (unknown node "foo"): always NodeNameToMetaVictims.
  auto [c0, b0] = h.PostRaw("/extender/preempt",
      R"({"Pod":{"metadata":{"name":"podname"}},"NodeNameToVictims":{"foo":{"Pods":[{"metadata":{"name":"v","uid":"myuid"}}],"NumPDBViolations":1}},"NodeNameToMetaVictims":{"foo":{"Pods":[{"UID":"myuid"}],"NumPDBViolations":1}}})");
  ASSERT_EQ(c0, 200) << b0;
  EXPECT_EQ(b0, json::parse(R"({"NodeNameToMetaVictims":{}})"));
  // Fill gpu-a: 2 GPUs Gold (prod), 2 GPUs Bronze (batch).
  json pods{{"items", {PodJson(GpuPod("p1", 2), "prod", "u-p1"), PodJson(GpuPod("b1", 1), "batch", "u-b1"),
                       PodJson(GpuPod("b2", 1), "batch", "u-b2")}}};
  for (auto& p : pods["items"]) p["spec"]["nodeName"] = "gpu-a";
  auto [pc, pb] = h.Post("/v1/pods", pods);
  ASSERT_EQ(pc, 200) << pb;
  // A Gold pod of 2 GPUs may preempt both Bronze pods, never the Gold one.
  const json args{{"Pod", PodJson(GpuPod("p2", 2), "prod", "u-p2")},
                  {"NodeNameToMetaVictims", {{"gpu-a", {{"Pods", {{{"UID", "u-p1"}}}}, {"NumPDBViolations", 0}}}}}};
  auto [c1, b1] = h.Post("/extender/preempt", args);
  ASSERT_EQ(c1, 200);
  EXPECT_EQ(b1, json::parse(R"({"NodeNameToMetaVictims":{"gpu-a":{"Pods":[{"UID":"u-b1"},{"UID":"u-b2"}],"NumPDBViolations":0}}})"));
  // A Bronze pod of 2 GPUs finds no victim: the node is omitted.
  const json args2{{"Pod", PodJson(GpuPod("b3", 2), "batch", "u-b3")},
                   {"NodeNameToMetaVictims", {{"gpu-a", {{"Pods", json::array()}, {"NumPDBViolations", 0}}}}}};
  auto [c2, b2] = h.Post("/extender/preempt", args2);
  EXPECT_EQ(b2, json::parse(R"({"NodeNameToMetaVictims":{}})"));
}

TEST(ExtenderProtocol, BadBodiesAre400NamingTheField) {
  ExtenderHarness h;
  struct Case {
    const char* path;
    const char* body;
    const char* field;
  };
  const Case cases[] = {
      {"/extender/filter", "{not json", ""},
      {"/extender/filter", R"({"Pod":{"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"memory":"lots"}}}]}},"NodeNames":[]})",
       "Pod.spec.containers[0].resources.requests.memory"},
      {"/extender/prioritize", R"({"Pod":5,"NodeNames":[]})", "Pod"},
      {"/extender/bind", R"({"PodName":"p"})", "Node"},
      {"/extender/preempt", R"({"Pod":{"metadata":{"name":"p"}},"NodeNameToMetaVictims":[]})", "NodeNameToMetaVictims"},
      {"/v1/nodes", R"({"items":[{"metadata":{"name":"n"},"status":{"allocatable":{"cpu":true}}}]})",
       "items[0].status.allocatable.cpu"},
      {"/v1/pods", R"({"metadata":{"name":"p"},"spec":{"nodeName":3}})", "spec.nodeName"},
  };
  for (const auto& c : cases) {
    auto [code, body] = h.PostRaw(c.path, c.body);
    EXPECT_EQ(code, 400) << c.path << " " << c.body;
    EXPECT_EQ(body["field"], c.field) << body;
    EXPECT_FALSE(body["error"].get<std::string>().empty());
  }
  // A pod bound to an unknown node: 404 naming spec.nodeName.
  auto [code, body] = h.PostRaw("/v1/pods", R"({"metadata":{"name":"p"},"spec":{"nodeName":"nowhere"}})");
  EXPECT_EQ(code, 404);
  EXPECT_EQ(body["field"], "spec.nodeName");
}

// A filter over 1,000 nodes: removed, observation, full, a quota-blocked tenant and a
// breaker-tripped namespace, each node with the right reason.
TEST(ExtenderProtocol, ThousandNodeFilterReasons) {
  ServerConfig config = ServerConfig::Defaults();
  tenancy::TenantConfig team;
  team.name = "team-a";
  team.tier = tenancy::Tier::kSilver;
  team.quota.push_back({"gpu", 8, std::nullopt, std::nullopt});
  config.tenancy.tenants.push_back(team);
  ExtenderHarness h(config);
  json items = json::array();
  json names = json::array();
  for (int i = 0; i < 1000; ++i) {
    const std::string name = "node-" + std::to_string(i);
    items.push_back(NodeJson(GpuNode(name, 8)));
    names.push_back(name);
  }
  names.push_back("ghost");
  ASSERT_EQ(h.Post("/v1/nodes", json{{"items", items}}).first, 200);
  for (int i = 0; i < 100; ++i) {
    h.app.health.Set("node-" + std::to_string(i), {audit::AdmissionState::kRemoved, "XID 79", 0.0, 0});
    h.app.health.Set("node-" + std::to_string(100 + i), {audit::AdmissionState::kObservation, "power deviation 9%", 0.5, 0});
  }
  json full = json::array();
  for (int i = 200; i < 300; ++i) {
    json p = PodJson(GpuPod("fill-" + std::to_string(i), 8), "default", "fill-" + std::to_string(i));
    p["spec"]["nodeName"] = "node-" + std::to_string(i);
    full.push_back(p);
  }
  json team_pod = PodJson(GpuPod("team-held", 8), "ns-a", "team-held", {{"seedance.io/tenant", "team-a"}});
  team_pod["spec"]["nodeName"] = "node-999";
  full.push_back(team_pod);
  ASSERT_EQ(h.Post("/v1/pods", json{{"items", full}}).first, 200);
  h.app.breaker.Trip({BreakerTrip::Scope::kNamespace, "spendy", "hourly cost $41.20 > threshold $30.00", 0, 0});

  auto filter = [&](const json& pod) {
    auto [code, body] = h.Post("/extender/filter", json{{"Pod", pod}, {"NodeNames", names}});
    EXPECT_EQ(code, 200);
    return body;
  };
  auto reason_of = [](const json& body, const std::string& node) -> std::string {
    if (body["FailedAndUnresolvableNodes"].contains(node)) return "U " + body["FailedAndUnresolvableNodes"][node].get<std::string>();
    if (body["FailedNodes"].contains(node)) return "F " + body["FailedNodes"][node].get<std::string>();
    return "ok";
  };
  // A default-tenant (Gold, no quota) pod, of the bound pods' priority and of a higher one.
  const json gold = filter(PodJson(GpuPod("g", 1), "default", "g"));
  json high = PodJson(GpuPod("h", 1), "default", "h");
  high["spec"]["priority"] = 1;
  const json gold_high = filter(high);
  // A team-a pod: over quota (8/8 used); of a higher priority than team-held.
  const json quota = filter(PodJson(GpuPod("q", 1), "ns-a", "q", {{"seedance.io/tenant", "team-a"}}));
  json quota_pod_high = PodJson(GpuPod("qh", 1), "ns-a", "qh", {{"seedance.io/tenant", "team-a"}});
  quota_pod_high["spec"]["priority"] = 1;
  const json quota_high = filter(quota_pod_high);
  // A pod of the tripped namespace.
  const json spendy = filter(PodJson(GpuPod("s", 1), "spendy", "s"));
  for (int i = 0; i < 1000; ++i) {
    const std::string n = "node-" + std::to_string(i);
    if (i < 100) {
      for (const json* b : {&gold, &quota, &spendy}) EXPECT_EQ(reason_of(*b, n), "U audit: node removed (XID 79)") << n;
    } else if (i < 200) {
      for (const json* b : {&gold, &quota, &spendy}) {
        EXPECT_EQ(reason_of(*b, n), "U tier: node in observation admits Bronze only (power deviation 9%)") << n;
      }
    } else {
      EXPECT_EQ(reason_of(spendy, n), "U breaker: hourly cost $41.20 > threshold $30.00; POST /v1/breaker/reset") << n;
      // Failed only where a pod of lower priority is bound (preemption could make room there),
      // else unresolvable.
      if (i < 300 || i == 999) {  // filled, and node-999 holds team-a's 8 GPUs
        EXPECT_EQ(reason_of(gold, n), "U fit: needs 1 GPU, 0 free") << n;
        EXPECT_EQ(reason_of(gold_high, n), "F fit: needs 1 GPU, 0 free") << n;
      } else {
        EXPECT_EQ(reason_of(gold, n), "ok") << n;
      }
      if (i >= 300) {
        const std::string why = "quota: tenant team-a would use 9/8 gpu (nominal 8, cohort lends 0)";
        EXPECT_EQ(reason_of(quota, n), "U " + why) << n;
        EXPECT_EQ(reason_of(quota_high, n), (i == 999 ? "F " : "U ") + why) << n;
      }
    }
  }
  EXPECT_EQ(reason_of(gold, "ghost").substr(0, 14), "U unknown node");
  EXPECT_EQ(gold["NodeNames"].size(), 699u);
  EXPECT_EQ(quota["NodeNames"].size(), 0u);
  EXPECT_EQ(spendy["NodeNames"].size(), 0u);
}

// Must-show 8: a node graded removed never receives a pod; a tripped namespace fails filter
// with the breaker's reason and passes after the reset.
TEST(ExtenderProtocol, RemovedNodeGetsNoPodAndBreakerResets) {
  ExtenderHarness h;
  json items = json::array();
  json names = json::array();
  for (int i = 0; i < 4; ++i) {
    items.push_back(NodeJson(GpuNode("n" + std::to_string(i), 8)));
    names.push_back("n" + std::to_string(i));
  }
  h.Post("/v1/nodes", json{{"items", items}});
  h.app.health.Set("n1", {audit::AdmissionState::kRemoved, "HBM remap failure", 0.0, 0});
  h.app.health.Set("n2", {audit::AdmissionState::kAdmitted, "excellent", 1.25, 0});
  int placed = 0;
  for (int k = 0; k < 40; ++k) {
    const std::string name = "p" + std::to_string(k);
    const json pod = PodJson(GpuPod(name, 1), "default", name);
    auto [fc, f] = h.Post("/extender/filter", json{{"Pod", pod}, {"NodeNames", names}});
    EXPECT_EQ(f["FailedAndUnresolvableNodes"]["n1"], "audit: node removed (HBM remap failure)");
    if (f["NodeNames"].empty()) break;
    auto [pc, prio] = h.Post("/extender/prioritize", json{{"Pod", pod}, {"NodeNames", f["NodeNames"]}});
    std::string best;
    std::int64_t best_score = -1;
    for (const auto& hp : prio) {
      if (hp["Score"].get<std::int64_t>() > best_score) {
        best_score = hp["Score"].get<std::int64_t>();
        best = hp["Host"].get<std::string>();
      }
    }
    ASSERT_NE(best, "n1");
    auto [bc, b] = h.Post("/extender/bind", json{{"PodName", name}, {"PodNamespace", "default"}, {"PodUID", name}, {"Node", best}});
    ASSERT_EQ(b["Error"], "");
    ++placed;
  }
  EXPECT_EQ(placed, 24);  // 3 healthy nodes x 8 GPUs; n1 took none

  h.app.breaker.Trip({BreakerTrip::Scope::kNamespace, "spendy", "hourly cost $41.20 > threshold $30.00", 0, 0});
  h.Post("/v1/pods", json{{"metadata", {{"name", "done"}, {"namespace", "default"}, {"uid", "p0"}}}, {"status", {{"phase", "Succeeded"}}}});
  const json pod = PodJson(GpuPod("s", 1), "spendy", "s");
  auto [c1, f1] = h.Post("/extender/filter", json{{"Pod", pod}, {"NodeNames", names}});
  EXPECT_TRUE(f1["NodeNames"].empty());
  EXPECT_EQ(f1["FailedAndUnresolvableNodes"]["n0"], "breaker: hourly cost $41.20 > threshold $30.00; POST /v1/breaker/reset");
  EXPECT_TRUE(h.app.breaker.Reset(BreakerTrip::Scope::kNamespace, "spendy"));
  auto [c2, f2] = h.Post("/extender/filter", json{{"Pod", pod}, {"NodeNames", names}});
  EXPECT_EQ(f2["NodeNames"].size(), 1u);  // the GPU p0 released
}

// Prioritize: the policy's pick scores 10, other feasible nodes 1..9 scaled by their grade
// weight, infeasible candidates 0; an observation node takes Bronze work.
TEST(ExtenderProtocol, PrioritizeScores) {
  ExtenderHarness h;
  json items = json::array();
  for (const auto& [name, gpus] : std::vector<std::pair<std::string, int>>{{"a", 2}, {"b", 8}, {"c", 8}, {"d", 1}}) {
    items.push_back(NodeJson(GpuNode(name, gpus)));
  }
  h.Post("/v1/nodes", json{{"items", items}});
  h.app.health.Set("c", {audit::AdmissionState::kAdmitted, "fair", 0.5, 0});
  const json pod = PodJson(GpuPod("two", 2), "default", "two");
  auto [code, prio] = h.Post("/extender/prioritize", json{{"Pod", pod}, {"NodeNames", {"a", "b", "c", "d"}}});
  ASSERT_EQ(code, 200);
  // bestfit picks the tightest node (a: 2 of 2); b fills 2/8 -> 1 + floor(8 * 0.25) = 3; c the
  // same times 0.5 -> 2 (rounded half away from zero: 1.5 -> 2); d cannot take 2 GPUs.
  EXPECT_EQ(prio, json::parse(R"([{"Host":"a","Score":10},{"Host":"b","Score":3},{"Host":"c","Score":2},{"Host":"d","Score":0}])"));
}

// SIGHUP: a bad config is rejected by CheckConfig; a good one changes quotas for the next pod
// while bound pods stay bound.
TEST(ExtenderProtocol, ConfigReload) {
  ServerConfig config = ServerConfig::Defaults();
  tenancy::TenantConfig team;
  team.name = "team-a";
  team.quota.push_back({"gpu", 4, std::nullopt, std::nullopt});
  config.tenancy.tenants.push_back(team);
  ExtenderHarness h(config);
  h.Post("/v1/nodes", NodeJson(GpuNode("gpu-a", 8)));
  json held = PodJson(GpuPod("held", 3), "team-a", "held");
  held["spec"]["nodeName"] = "gpu-a";
  ASSERT_EQ(h.Post("/v1/pods", held).first, 200);
  const json pod = PodJson(GpuPod("next", 2), "team-a", "next");
  EXPECT_EQ(h.Post("/extender/filter", json{{"Pod", pod}, {"NodeNames", {"gpu-a"}}}).second["FailedAndUnresolvableNodes"]["gpu-a"],
            "quota: tenant team-a would use 5/4 gpu (nominal 4, cohort lends 0)");

  ServerConfig bad = config;
  bad.placement_policy = "no-such-policy";
  const Status s = h.service->CheckConfig(bad);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("placement_policy"), std::string::npos);

  ServerConfig more = config;
  more.tenancy.tenants[1].quota[0].nominal = 6;
  more.placement_policy = "fgd";
  ASSERT_TRUE(h.service->CheckConfig(more).ok());
  h.service->ApplyConfig(std::make_shared<const ServerConfig>(more));
  auto [c, f] = h.Post("/extender/filter", json{{"Pod", pod}, {"NodeNames", {"gpu-a"}}});
  EXPECT_EQ(f["NodeNames"], json({"gpu-a"}));
  auto [pc, prio] = h.Post("/extender/prioritize", json{{"Pod", pod}, {"NodeNames", {"gpu-a"}}});
  EXPECT_EQ(prio, json::parse(R"([{"Host":"gpu-a","Score":10}])"));
  auto [dc, dec] = h.Get("/v1/decisions?pod=team-a/next");
  EXPECT_EQ(dec["decisions"].back()["policy"], "fgd");
  EXPECT_EQ(h.Get("/v1/decisions?pod=team-a/held").first, 404);  // bound by POST, no decision
}

}  // namespace
}  // namespace seedance::server
