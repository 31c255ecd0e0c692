#pragma once

// Pods and nodes shaped like a production cluster's, for the memory benchmark and the watch
// transform's tests: a GPU training pod of ~6.9 KB of JSON (the size issue 40 measured: env,
// volumes, managed fields, kubectl's last-applied annotation, status with conditions and
// container statuses) and a GPU node of ~8 KB (images, managed fields, addresses, nodeInfo).
// Deterministic in `i`.

#include <string>

#include <nlohmann/json.hpp>

namespace seedance::server::testing {

inline nlohmann::json RealisticPod(int i, const std::string& node, const std::string& ns = "team-a") {
  using nlohmann::json;
  const std::string name = "trainer-" + std::to_string(i);
  json env = json::array();
  for (int e = 0; e < 28; ++e) {
    env.push_back({{"name", "TRAINER_SETTING_" + std::to_string(e)}, {"value", "value-of-setting-" + std::to_string(e * 7919 % 1000)}});
  }
  json mounts = json::array();
  json volumes = json::array();
  for (int v = 0; v < 6; ++v) {
    mounts.push_back({{"name", "vol-" + std::to_string(v)}, {"mountPath", "/mnt/data/volume-" + std::to_string(v)}, {"readOnly", v % 2 == 0}});
    volumes.push_back({{"name", "vol-" + std::to_string(v)},
                       {"persistentVolumeClaim", {{"claimName", name + "-claim-" + std::to_string(v)}}}});
  }
  json container = {{"name", "main"},
                    {"image", "registry.example.com/ml/trainer:2026.12.01-cuda12.4"},
                    {"command", {"python", "-m", "trainer.main", "--config", "/etc/trainer/config.yaml"}},
                    {"env", env},
                    {"volumeMounts", mounts},
                    {"resources", {{"requests", {{"cpu", "8"}, {"memory", "64Gi"}, {"nvidia.com/gpu", "1"}}},
                                   {"limits", {{"nvidia.com/gpu", "1"}}}}},
                    {"terminationMessagePath", "/dev/termination-log"},
                    {"terminationMessagePolicy", "File"},
                    {"imagePullPolicy", "IfNotPresent"}};
  json last_applied = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}, {"namespace", ns}}},
                       {"spec", {{"containers", json::array({{{"name", "main"}, {"env", env}}})}}}};
  json pod = {
      {"metadata",
       {{"name", name},
        {"namespace", ns},
        {"uid", "5f0c2a9e-0000-4000-8000-" + std::to_string(100000000000 + i)},
        {"resourceVersion", std::to_string(1000 + i)},
        {"creationTimestamp", "2026-12-03T14:04:27Z"},
        {"labels", {{"app", "trainer"}, {"seedance.io/tenant", ns}, {"seedance.io/job", "job-" + std::to_string(i / 8)},
                    {"pod-template-hash", "7d9f8c6b5d"}}},
        {"annotations", {{"kubectl.kubernetes.io/last-applied-configuration", last_applied.dump()},
                         {"seedance.io/gpu-milli", "1000"}}},
        {"ownerReferences", json::array({{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", "job-" + std::to_string(i / 8)},
                                          {"uid", "9a1b2c3d-0000-4000-8000-000000000001"}, {"controller", true}}})},
        {"managedFields",
         json::array({{{"manager", "kube-controller-manager"}, {"operation", "Update"}, {"apiVersion", "v1"},
                       {"time", "2026-12-03T14:04:27Z"}, {"fieldsType", "FieldsV1"},
                       {"fieldsV1", {{"f:metadata", {{"f:labels", {{".", json::object()}, {"f:app", json::object()}}}}},
                                     {"f:spec", {{"f:containers", {{"k:{\"name\":\"main\"}", {{"f:env", json::object()},
                                                                                          {"f:image", json::object()},
                                                                                          {"f:resources", json::object()}}}}}}}}}}})}}},
      {"spec",
       {{"containers", json::array({container})},
        {"volumes", volumes},
        {"restartPolicy", "Never"},
        {"terminationGracePeriodSeconds", 30},
        {"dnsPolicy", "ClusterFirst"},
        {"serviceAccountName", "trainer"},
        {"securityContext", json::object()},
        {"schedulerName", "default-scheduler"},
        {"priority", 0},
        {"tolerations", json::array({{{"key", "node.kubernetes.io/not-ready"}, {"operator", "Exists"}, {"effect", "NoExecute"}, {"tolerationSeconds", 300}},
                                     {{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})}}},
      {"status",
       {{"phase", node.empty() ? "Pending" : "Running"},
        {"conditions", json::array({{{"type", "Initialized"}, {"status", "True"}, {"lastTransitionTime", "2026-12-03T14:04:28Z"}},
                                    {{"type", "Ready"}, {"status", "True"}, {"lastTransitionTime", "2026-12-03T14:04:40Z"}},
                                    {{"type", "ContainersReady"}, {"status", "True"}, {"lastTransitionTime", "2026-12-03T14:04:40Z"}},
                                    {{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", "2026-12-03T14:04:27Z"}}})},
        {"hostIP", "10.0.3.17"},
        {"podIP", "10.244.3.91"},
        {"startTime", "2026-12-03T14:04:28Z"},
        {"containerStatuses",
         json::array({{{"name", "main"}, {"ready", true}, {"restartCount", 0}, {"image", "registry.example.com/ml/trainer:2026.12.01-cuda12.4"},
                       {"imageID", "registry.example.com/ml/trainer@sha256:0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"},
                       {"containerID", "containerd://4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"},
                       {"state", {{"running", {{"startedAt", "2026-12-03T14:04:39Z"}}}}}}})}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

inline nlohmann::json RealisticNode(int i) {
  using nlohmann::json;
  const std::string name = "gpu-node-" + std::to_string(i);
  json images = json::array();
  for (int k = 0; k < 30; ++k) {
    images.push_back({{"names", {"registry.example.com/ml/image-" + std::to_string(k) + "@sha256:" + std::string(64, 'a'),
                                 "registry.example.com/ml/image-" + std::to_string(k) + ":v1"}},
                      {"sizeBytes", 1000000000 + k}});
  }
  return json{
      {"metadata",
       {{"name", name},
        {"uid", "6eebfb04-0000-4000-8000-" + std::to_string(100000000000 + i)},
        {"resourceVersion", std::to_string(100 + i)},
        {"labels", {{"kubernetes.io/hostname", name}, {"kubernetes.io/os", "linux"}, {"node.kubernetes.io/instance-type", "p4d.24xlarge"},
                    {"topology.kubernetes.io/zone", "us-east-1a"}, {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                    {"nvidia.com/gpu.count", "8"}}},
        {"annotations", {{"node.alpha.kubernetes.io/ttl", "0"}, {"volumes.kubernetes.io/controller-managed-attach-detach", "true"}}}}},
      {"spec", {{"podCIDR", "10.244.3.0/24"}, {"providerID", "aws:///us-east-1a/i-0" + std::to_string(1000000 + i)}}},
      {"status",
       {{"capacity", {{"cpu", "96"}, {"memory", "1152Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}, {"ephemeral-storage", "7450Gi"}}},
        {"allocatable", {{"cpu", "95"}, {"memory", "1100Gi"}, {"nvidia.com/gpu", "8"}, {"pods", "110"}, {"ephemeral-storage", "7000Gi"}}},
        {"conditions", json::array({{{"type", "MemoryPressure"}, {"status", "False"}, {"reason", "KubeletHasSufficientMemory"}},
                                    {{"type", "DiskPressure"}, {"status", "False"}, {"reason", "KubeletHasNoDiskPressure"}},
                                    {{"type", "PIDPressure"}, {"status", "False"}, {"reason", "KubeletHasSufficientPID"}},
                                    {{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}, {"message", "kubelet is posting ready status"}}})},
        {"addresses", json::array({{{"type", "InternalIP"}, {"address", "10.0.3.17"}}, {{"type", "Hostname"}, {"address", name}}})},
        {"nodeInfo", {{"kubeletVersion", "v1.31.4"}, {"containerRuntimeVersion", "containerd://1.7.24"}, {"osImage", "Ubuntu 22.04.5 LTS"},
                      {"kernelVersion", "5.15.0-1071-aws"}, {"architecture", "amd64"}, {"operatingSystem", "linux"}}},
        {"images", images}}}};
}

}  // namespace seedance::server::testing
