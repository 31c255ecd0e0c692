#pragma once

// What the cluster watch keeps of each object (issue 40): the fields ParsePod and ParseNode read,
// nothing else, applied by the reflectors before their store and the extender see an object
// (client-go's informer transform, SharedIndexInformer.SetTransform). A 6.9 KB pod becomes
// ~0.5 KB of JSON, a node loses its image list, managed fields and addresses.
//   Pod:  metadata {name, namespace, uid, resourceVersion, labels seedance.io/tenant and
//         seedance.io/job, annotations seedance.io/gpu-milli and seedance.io/gpu-models},
//         spec {nodeName, priority, tolerations, containers[].resources {requests, limits},
//         nodeSelector nvidia.com/gpu.product}, status {phase}.
//   Node: metadata {name, resourceVersion, labels nvidia.com/gpu.product}, spec {unschedulable,
//         taints}, status {allocatable, capacity, conditions: the Ready one's type and status}.
// A member of the wrong JSON type is kept as it is, so ParsePod / ParseNode still name it.
// Invariant (watch_transform_test): ParsePod(SlimPod(x)) == ParsePod(x) for every pod the API
// server can hold, the same for nodes.

#include <nlohmann/json.hpp>

namespace seedance::server {

void SlimPod(nlohmann::json& pod);
void SlimNode(nlohmann::json& node);

}  // namespace seedance::server
