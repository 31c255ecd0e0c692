#include "seedance/server/extender_codec.h"

#include <gtest/gtest.h>

#include "seedance/cluster/gpu_model.h"
#include "seedance/server/k8s_quantity.h"

namespace seedance::server {
namespace {

std::int64_t Milli(std::string_view text) {
  auto q = ParseK8sQuantity(text);
  EXPECT_TRUE(q.has_value()) << text;
  auto v = q->CeilScaled(3);
  EXPECT_TRUE(v.has_value()) << text;
  return *v;
}

std::int64_t MiB(std::string_view text) { return *ParseK8sQuantity(text)->CeilMebibytes(); }

TEST(K8sQuantity, ParsesKubernetesForms) {
  EXPECT_EQ(Milli("500m"), 500);
  EXPECT_EQ(Milli("2"), 2000);
  EXPECT_EQ(Milli("1.5"), 1500);
  EXPECT_EQ(Milli("1e3"), 1'000'000);
  EXPECT_EQ(Milli("1E-3"), 1);
  EXPECT_EQ(Milli("+0.25"), 250);
  EXPECT_EQ(Milli("100M"), 100'000'000'000);
  EXPECT_EQ(Milli("1k"), 1'000'000);
  EXPECT_EQ(Milli("0"), 0);
  EXPECT_EQ(Milli(".5"), 500);
  EXPECT_EQ(Milli("250u"), 1);  // Kubernetes rounds up to the next milli
  EXPECT_EQ(Milli("1n"), 1);
  EXPECT_EQ(MiB("16Gi"), 16 * 1024);
  EXPECT_EQ(MiB("1Mi"), 1);
  EXPECT_EQ(MiB("1M"), 1);    // 1,000,000 bytes round up to 1 MiB
  EXPECT_EQ(MiB("2Ki"), 1);
  EXPECT_EQ(MiB("1Ti"), 1024 * 1024);
  EXPECT_EQ(MiB("1048576"), 1);
  EXPECT_EQ(MiB("1048577"), 2);
  EXPECT_EQ(MiB("0.5Gi"), 512);
}

TEST(K8sQuantity, RejectsMalformed) {
  for (const char* bad : {"", "m", "1.2.3", "1x", "1mi", "1KI", "--1", "1e", "1e+", "1ee3", "Gi", "1 Gi", " 1",
                          "1Gi ", "0x10", "1e9999", "abc", "1.5.Gi", "1Mm"}) {
    EXPECT_FALSE(ParseK8sQuantity(bad).has_value()) << "'" << bad << "'";
  }
  // Parses, but out of int64 range once scaled.
  auto big = ParseK8sQuantity("9E");
  ASSERT_TRUE(big.has_value());
  EXPECT_FALSE(big->CeilScaled(3).has_value());
  EXPECT_FALSE(ParseK8sQuantity("1e100")->CeilScaled(0).has_value());
}

constexpr const char* kGpuPod = R"({"metadata":{"name":"train-0","namespace":"team-a","uid":"u-1",
  "labels":{"seedance.io/tenant":"acme"},"annotations":{}},
  "spec":{"containers":[{"name":"a","resources":{"requests":{"cpu":"500m","memory":"1Gi","nvidia.com/gpu":"2"}}},
                        {"name":"b","resources":{"limits":{"cpu":"1","memory":"512Mi"}}}],
          "nodeSelector":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"},"priority":7},
  "status":{"phase":"Pending"}})";

TEST(ExtenderCodec, ParsesPod) {
  auto p = ParsePod(nlohmann::json::parse(kGpuPod), "Pod");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->key(), "team-a/train-0");
  EXPECT_EQ(p->uid, "u-1");
  EXPECT_EQ(p->tenant(), "acme");
  EXPECT_EQ(p->priority, 7);
  EXPECT_EQ(p->phase, "Pending");
  EXPECT_EQ(p->spec.cpu.raw(), 1500);       // a limit stands for a missing request
  EXPECT_EQ(p->spec.memory.raw(), 1536);
  EXPECT_EQ(p->spec.num_gpu, 2);
  EXPECT_EQ(p->spec.gpu_milli, 1000);
  EXPECT_TRUE(p->spec.allowed_models.Accepts(*cluster::ParseGpuModel("A100-80G")));
  EXPECT_FALSE(p->spec.allowed_models.Accepts(*cluster::ParseGpuModel("T4")));
}

TEST(ExtenderCodec, SharedGpuAnnotation) {
  auto p = ParsePod(nlohmann::json::parse(R"({"metadata":{"name":"s","annotations":{"seedance.io/gpu-milli":"250",
      "seedance.io/gpu-models":"T4|V100M16"}}})"), "Pod");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->namespace_name, "default");
  EXPECT_EQ(p->tenant(), "default");
  EXPECT_EQ(p->spec.num_gpu, 1);
  EXPECT_EQ(p->spec.gpu_milli, 250);
  EXPECT_TRUE(p->spec.is_share());
  EXPECT_TRUE(p->spec.allowed_models.Accepts(*cluster::ParseGpuModel("T4")));
  EXPECT_FALSE(p->spec.allowed_models.Accepts(*cluster::ParseGpuModel("A100-80G")));
}

TEST(ExtenderCodec, ParsesNodeFromAllocatableOrCapacity) {
  auto n = ParseNode(nlohmann::json::parse(R"({"metadata":{"name":"gpu-a","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"}},
      "status":{"capacity":{"cpu":"96","memory":"1Ti","nvidia.com/gpu":"8"},
                "allocatable":{"cpu":"95500m","memory":"1000Gi","nvidia.com/gpu":"8"}}})"), "node");
  ASSERT_TRUE(n.has_value()) << n.error().message();
  EXPECT_EQ(n->spec.cpu.raw(), 95'500);
  EXPECT_EQ(n->spec.memory.raw(), 1000 * 1024);
  EXPECT_EQ(n->spec.gpu_count, 8);
  EXPECT_EQ(cluster::GpuModelName(n->spec.model), "A100-80G");
}

struct BadCase {
  const char* body;
  const char* field;
};

TEST(ExtenderCodec, BadBodiesNameTheField) {
  const BadCase cases[] = {
      {"{", ""},
      {"[]", ""},
      {R"({"NodeNames":["a"]})", "Pod"},
      {R"({"Pod":{"metadata":{"name":"p"}}})", "NodeNames"},
      {R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":"a"})", "NodeNames"},
      {R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["a",3]})", "NodeNames[1]"},
      {R"({"Pod":{"metadata":{"name":7}},"NodeNames":[]})", "Pod.metadata.name"},
      {R"({"Pod":{"metadata":{}},"NodeNames":[]})", "Pod.metadata.name"},
      {R"({"Pod":{"metadata":{"name":"p","labels":{"a":1}}},"NodeNames":[]})", "Pod.metadata.labels.a"},
      {R"({"Pod":{"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"cpu":"12x"}}}]}},"NodeNames":[]})",
       "Pod.spec.containers[0].resources.requests.cpu"},
      {R"({"Pod":{"metadata":{"name":"p"},"spec":{"containers":[{"resources":{"requests":{"nvidia.com/gpu":"1.5"}}}]}},"NodeNames":[]})",
       "Pod.spec.containers[0].resources.requests.nvidia.com/gpu"},
      {R"({"Pod":{"metadata":{"name":"p"},"spec":{"priority":"high"}},"NodeNames":[]})", "Pod.spec.priority"},
      {R"({"Pod":{"metadata":{"name":"p","annotations":{"seedance.io/gpu-milli":"1500"}}},"NodeNames":[]})",
       "Pod.metadata.annotations.seedance.io/gpu-milli"},
      {R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"n"},"status":{"allocatable":{"memory":"-1Gi"}}}]}})",
       "Nodes.items[0].status.allocatable.memory"},
      {R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"n"},"status":{"allocatable":{"nvidia.com/gpu":"1"}}}]}})",
       "Nodes.items[0].metadata.labels.nvidia.com/gpu.product"},
      {R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"n","labels":{"nvidia.com/gpu.product":"Voodoo-3"}}}]}})",
       "Nodes.items[0].metadata.labels.nvidia.com/gpu.product"},
  };
  for (const auto& c : cases) {
    auto a = ParseExtenderArgs(c.body);
    ASSERT_FALSE(a.has_value()) << c.body;
    EXPECT_EQ(a.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(FieldOf(a.error()), c.field) << c.body << " -> " << a.error().message();
    EXPECT_FALSE(ReasonOf(a.error()).empty());
  }
  auto b = ParseExtenderBindingArgs(R"({"PodName":"p","Node":5})");
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(FieldOf(b.error()), "Node");
  auto pre = ParseExtenderPreemptionArgs(R"({"Pod":{"metadata":{"name":"p"}},"NodeNameToMetaVictims":{"n":{"Pods":[{"UID":1}]}}})");
  ASSERT_FALSE(pre.has_value());
  EXPECT_EQ(FieldOf(pre.error()), "NodeNameToMetaVictims.n.Pods[0].UID");
}

// NodeNames is read without a DOM when it is plain (issue 26's throughput at 5,000 names); any
// other body takes the DOM path. Both must answer alike: the same names, the same errors.
TEST(ExtenderCodec, NodeNamesTheSameOnTheFastAndTheDomPath) {
  const std::string pod = R"("Pod":{"metadata":{"name":"p","namespace":"ns","uid":"u","annotations":{"x":"[\"NodeNames\"]"}}})";
  struct Case {
    std::string body;
    std::vector<std::string> names;
    std::string field;  // "-": parsed; else the error's field ("" for malformed JSON)
  };
  const std::vector<Case> cases = {
      {"{" + pod + R"(,"NodeNames":["a","b.c","d-1"]})", {"a", "b.c", "d-1"}, "-"},
      {" {\n " + pod + " ,\t\"NodeNames\" : [ \"a\" ,\r\n\"b\" ] , \"Nodes\":null } \n", {"a", "b"}, "-"},
      {R"({"NodeNames":["a"],)" + pod + "}", {"a"}, "-"},
      {"{" + pod + R"(,"nodenames":["a"]})", {"a"}, "-"},           // case-insensitive, as the DOM path
      {"{" + pod + R"(,"NodeNames":["\u0061","b"]})", {"a", "b"}, "-"},  // an escape: the DOM path decodes it
      {"{" + pod + R"(,"NodeNames":[]})", {}, "-"},
      {"{" + pod + R"(,"NodeNames":["a","b/c"]})", {}, "NodeNames[1]"},   // not a Kubernetes name
      {"{" + pod + R"(,"NodeNames":["a",3]})", {}, "NodeNames[1]"},
      {"{" + pod + R"(,"NodeNames":["a"],"NodeNames":["b"]})", {"b"}, "-"},  // repeated: the DOM keeps the last
      {"{" + pod + R"(,"NodeNames":["a\u00e9"]})", {"a\xc3\xa9"}, "-"},  // not ASCII: decoded by the DOM path
      {"{" + pod + R"(,"NodeNames":["a b"]})", {}, "NodeNames[0]"},
      {"{" + pod + R"(,"NodeNames":["a"]} x)", {}, ""},                 // trailing bytes: malformed
      {"{" + pod + R"(,"NodeNames":["a"])", {}, ""},                    // unterminated
      {"{" + pod + R"(,"NodeNames":["a"],})", {}, ""},
      {"{\"Pod\":{\"metadata\":{\"name\":\"p\x01\"}},\"NodeNames\":[\"a\"]}", {}, ""},
  };
  for (const auto& c : cases) {
    auto a = ParseExtenderArgs(c.body);
    if (c.field != "-") {
      ASSERT_FALSE(a.has_value()) << c.body;
      EXPECT_EQ(FieldOf(a.error()), c.field) << c.body << " -> " << a.error().message();
      continue;
    }
    ASSERT_TRUE(a.has_value()) << c.body << " -> " << a.error().message();
    ASSERT_TRUE(a->node_names.has_value()) << c.body;
    EXPECT_EQ(*a->node_names, c.names) << c.body;
    EXPECT_EQ(a->pod.name, "p");
    EXPECT_EQ(a->pod.annotations.at("x"), "[\"NodeNames\"]");  // a string inside Pod is not the member
  }
}

TEST(ExtenderCodec, NodeConditionsAndTolerations) {
  const auto node = nlohmann::json::parse(R"({"metadata":{"name":"n"},
    "spec":{"unschedulable":true,"taints":[{"key":"gpu","value":"bad","effect":"NoSchedule"},
                                          {"key":"soft","effect":"PreferNoSchedule"}]},
    "status":{"conditions":[{"type":"MemoryPressure","status":"False"},{"type":"Ready","status":"Unknown"}]}})");
  auto n = ParseNode(node, "node");
  ASSERT_TRUE(n.has_value()) << n.error().message();
  EXPECT_TRUE(n->conditions.unschedulable);
  EXPECT_EQ(n->conditions.ready, "Unknown");
  ASSERT_EQ(n->conditions.taints.size(), 2u);
  EXPECT_EQ(n->conditions.taints[0].value, "bad");

  std::vector<K8sToleration> none;
  EXPECT_EQ(ScheduleBlock(n->conditions, none), "node: cordoned (spec.unschedulable)");
  std::vector<K8sToleration> tol = {{"node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule"}};
  EXPECT_EQ(ScheduleBlock(n->conditions, tol), "node: Ready condition is Unknown");
  tol.push_back({"node.kubernetes.io/unreachable", "Exists", "", ""});
  EXPECT_EQ(ScheduleBlock(n->conditions, tol), "taint: gpu=bad:NoSchedule not tolerated");
  tol.push_back({"gpu", "", "good", "NoSchedule"});  // Equal: the value must match
  EXPECT_EQ(ScheduleBlock(n->conditions, tol), "taint: gpu=bad:NoSchedule not tolerated");
  tol.back().value = "bad";
  EXPECT_EQ(ScheduleBlock(n->conditions, tol), "");  // PreferNoSchedule never blocks
  // An empty key with Exists tolerates every taint; an effect restricts it.
  EXPECT_EQ(ScheduleBlock(n->conditions, {{"", "Exists", "", "NoExecute"}}), "node: cordoned (spec.unschedulable)");
  EXPECT_EQ(ScheduleBlock(n->conditions, {{"", "Exists", "", ""}}), "");
  // Ready True, or no Ready condition at all, never blocks; False names the not-ready taint.
  NodeConditions ready;
  ready.ready = "True";
  EXPECT_EQ(ScheduleBlock(ready, none), "");
  EXPECT_EQ(ScheduleBlock(NodeConditions{}, none), "");
  ready.ready = "False";
  EXPECT_EQ(ScheduleBlock(ready, none), "node: Ready condition is False");
  EXPECT_EQ(ScheduleBlock(ready, {{"node.kubernetes.io/not-ready", "Exists", "", "NoSchedule"}}), "");
  ready.ready = "True";
  ready.taints.push_back({"evict", "", "NoExecute"});
  EXPECT_EQ(ScheduleBlock(ready, none), "taint: evict:NoExecute not tolerated");

  const auto pod = nlohmann::json::parse(R"({"metadata":{"name":"p"},"spec":{"tolerations":[
    {"key":"gpu","operator":"Equal","value":"bad","effect":"NoSchedule"},{"operator":"Exists"}]}})");
  auto p = ParsePod(pod, "Pod");
  ASSERT_TRUE(p.has_value()) << p.error().message();
  ASSERT_EQ(p->tolerations.size(), 2u);
  EXPECT_EQ(p->tolerations[1].op, "Exists");
  EXPECT_EQ(ScheduleBlock(n->conditions, p->tolerations), "");
}

TEST(ExtenderCodec, BadConditionsNameTheField) {
  auto bad = [](const char* text) {
    auto n = ParseNode(nlohmann::json::parse(text), "node");
    return n.has_value() ? std::string("accepted") : FieldOf(n.error());
  };
  EXPECT_EQ(bad(R"({"metadata":{"name":"n"},"spec":{"unschedulable":"yes"}})"), "node.spec.unschedulable");
  EXPECT_EQ(bad(R"({"metadata":{"name":"n"},"spec":{"taints":{}}})"), "node.spec.taints");
  EXPECT_EQ(bad(R"({"metadata":{"name":"n"},"spec":{"taints":[{"key":7}]}})"), "node.spec.taints[0].key");
  EXPECT_EQ(bad(R"({"metadata":{"name":"n"},"status":{"conditions":[1]}})"), "node.status.conditions[0]");
  nlohmann::json many = {{"metadata", {{"name", "n"}}}, {"spec", {{"taints", nlohmann::json::array()}}}};
  for (std::size_t i = 0; i <= kMaxTaints; ++i) many["spec"]["taints"].push_back({{"key", "k"}, {"effect", "NoSchedule"}});
  EXPECT_EQ(bad(many.dump().c_str()), "node.spec.taints");
  auto p = ParsePod(nlohmann::json::parse(R"({"metadata":{"name":"p"},"spec":{"tolerations":[{"operator":"In"}]}})"),
                    "Pod");
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(FieldOf(p.error()), "Pod.spec.tolerations[0].operator");
}

// Issue 40: a Node nesting 200,000 levels (400 KB) in full-node mode ended the server with
// SIGSEGV: the item was copied recursively for the echo. Every decoder refuses nesting past
// kMaxJsonDepth before it builds or copies a DOM, naming where.
std::string DeepFilterBody(std::size_t levels) {
  std::string body = R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"n"},"x":)";
  body += std::string(levels, '[');
  body += std::string(levels, ']');
  body += "}]}}";
  return body;
}

TEST(ExtenderCodec, DeepNestingIsRefusedBeforeAnyCopy) {
  const std::string deep = DeepFilterBody(200'000);
  auto a = ParseExtenderArgs(deep);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(ReasonOf(a.error()), "JSON nests deeper than 64 levels");
  EXPECT_EQ(FieldOf(a.error()).rfind("Nodes.items[0].x[0][0]", 0), 0u) << FieldOf(a.error());
  // With NodeNames read by the fast path too, and in every other decoder.
  const std::string names = R"({"NodeNames":["a","b"],"Pod":{"metadata":{"name":"p","labels":)" +
                            std::string(100, '[') + std::string(100, ']') + "}}}";
  auto b = ParseExtenderArgs(names);
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(FieldOf(b.error()).rfind("Pod.metadata.labels", 0), 0u) << FieldOf(b.error());
  const std::string nest = std::string(100'000, '[') + std::string(100'000, ']');
  EXPECT_FALSE(ParseExtenderPreemptionArgs(R"({"Pod":)" + nest + "}").has_value());
  EXPECT_FALSE(ParseExtenderBindingArgs(R"({"PodName":)" + nest + "}").has_value());
  EXPECT_FALSE(ParsePodOrList(R"({"items":)" + nest + "}").has_value());
  EXPECT_FALSE(ParseNodeOrList(R"({"items":)" + nest + "}").has_value());
  // 64 levels in all are still read (Kubernetes objects nest about 10).
  auto ok = ParseExtenderArgs(DeepFilterBody(64 - 4));
  EXPECT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_FALSE(ParseExtenderArgs(DeepFilterBody(64 - 3)).has_value());
}

}  // namespace
}  // namespace seedance::server
