// The cluster watch's transform keeps what the decisions read: ParsePod / ParseNode of the slim
// object equal those of the full one (real kube-apiserver captures and production-shaped
// objects), errors keep their field, and the slim objects are small.

#include "seedance/server/watch_transform.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "seedance/server/extender_codec.h"
#include "seedance/server/testing/k8s_objects.h"

namespace seedance::server {
namespace {

using nlohmann::json;

json ReadCapture(const std::string& name) {
  std::ifstream in(std::string(SEEDANCE_TEST_DATA_DIR) + "/../tests/data/k8s/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str());
}

// The entries of a label or annotation map that Seedance reads (seedance.io/...).
json Ours(const std::map<std::string, std::string>& m) {
  json out = json::object();
  for (const auto& [k, v] : m) {
    if (k.rfind("seedance.io/", 0) == 0) out[k] = v;
  }
  return out;
}

// Every field of a parsed pod that a decision or a bind reads.
json PodFields(const Result<K8sPod>& p) {
  if (!p.has_value()) return json{{"error", p.error().message()}};
  json tols = json::array();
  for (const auto& t : p->tolerations) tols.push_back({t.key, t.op, t.value, t.effect});
  return json{{"key", p->key()},           {"uid", p->uid},
              {"labels", Ours(p->labels)}, {"annotations", Ours(p->annotations)},
              {"node", p->node_name},      {"phase", p->phase},
              {"priority", p->priority},   {"tolerations", tols},
              {"tenant", p->tenant()},     {"job", p->job()},
              {"cpu", p->spec.cpu.raw()},  {"memory", p->spec.memory.raw()},
              {"num_gpu", p->spec.num_gpu}, {"gpu_milli", p->spec.gpu_milli},
              {"models", p->spec.allowed_models.mask()}};
}

json NodeFields(const Result<K8sNode>& n) {
  if (!n.has_value()) return json{{"error", n.error().message()}};
  json taints = json::array();
  for (const auto& t : n->conditions.taints) taints.push_back({t.key, t.value, t.effect});
  return json{{"name", n->name},
              {"cpu", n->spec.cpu.raw()},
              {"memory", n->spec.memory.raw()},
              {"gpus", n->spec.gpu_count},
              {"model", n->spec.model},
              {"unschedulable", n->conditions.unschedulable},
              {"ready", n->conditions.ready},
              {"taints", taints}};
}

void ExpectSamePod(json pod) {
  const json want = PodFields(ParsePod(pod, "pod"));
  SlimPod(pod);
  EXPECT_EQ(PodFields(ParsePod(pod, "pod")), want) << pod.dump();
}

void ExpectSameNode(json node) {
  const json want = NodeFields(ParseNode(node, "node"));
  SlimNode(node);
  EXPECT_EQ(NodeFields(ParseNode(node, "node")), want) << node.dump();
}

TEST(WatchTransform, CapturedObjectsParseTheSame) {
  const json pods = ReadCapture("pods-list.json");
  ASSERT_FALSE(pods["items"].empty());
  for (const json& p : pods["items"]) ExpectSamePod(p);
  ExpectSamePod(ReadCapture("pod-bound.json"));
  const json nodes = ReadCapture("nodes-list.json");
  ASSERT_FALSE(nodes["items"].empty());
  for (const json& n : nodes["items"]) ExpectSameNode(n);
}

TEST(WatchTransform, ProductionShapedObjectsShrinkAndParseTheSame) {
  json pod = testing::RealisticPod(7, "gpu-node-1");
  EXPECT_GT(pod.dump().size(), 6'500u);
  ExpectSamePod(pod);
  SlimPod(pod);
  EXPECT_LE(pod.dump().size(), 1'000u) << pod.dump();
  ExpectSamePod(testing::RealisticPod(8, ""));  // pending
  json shared = testing::RealisticPod(9, "gpu-node-2");
  shared["metadata"]["annotations"]["seedance.io/gpu-models"] = "A100-80G,H100-80G";
  shared["spec"]["nodeSelector"] = {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}, {"disk", "ssd"}};
  shared["spec"]["priority"] = 1000;
  ExpectSamePod(shared);

  json node = testing::RealisticNode(3);
  EXPECT_GT(node.dump().size(), 6'000u);
  ExpectSameNode(node);
  node["spec"]["unschedulable"] = true;
  node["spec"]["taints"] = json::array({{{"key", "maintenance"}, {"value", "disk"}, {"effect", "NoSchedule"}}});
  node["status"]["conditions"][3]["status"] = "Unknown";
  ExpectSameNode(node);
  SlimNode(node);
  EXPECT_LE(node.dump().size(), 1'000u) << node.dump();
}

// A member of the wrong type stays, so the parse error names the same field.
TEST(WatchTransform, WrongTypesKeepTheirError) {
  json pod = testing::RealisticPod(1, "gpu-node-1");
  pod["spec"]["containers"][0]["resources"] = "8 GPUs";
  ExpectSamePod(pod);
  pod = testing::RealisticPod(1, "gpu-node-1");
  pod["metadata"]["labels"] = 5;
  ExpectSamePod(pod);
  pod = testing::RealisticPod(1, "gpu-node-1");
  pod["spec"]["tolerations"] = json::object();
  ExpectSamePod(pod);
  pod = testing::RealisticPod(1, "gpu-node-1");
  pod["spec"] = json::array();
  ExpectSamePod(pod);
  json node = testing::RealisticNode(1);
  node["status"]["conditions"] = json::array({7});
  ExpectSameNode(node);
  node = testing::RealisticNode(1);
  node["status"]["conditions"][0]["type"] = 3;
  ExpectSameNode(node);
  node = testing::RealisticNode(1);
  node["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-Unknown-9000";
  ExpectSameNode(node);
}

}  // namespace
}  // namespace seedance::server
