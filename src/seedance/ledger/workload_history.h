#pragma once

// History to a workload (issue 28): the jobs that ran, read back from what the ledger holds, so
// that `seedance export workload` can write the jobs CSV cost-benchmark reads and the as-run
// baseline (each job as it ran, priced). A job is a Kubernetes pod (namespace/pod), found in
//   - dcgm-exporter samples whose pod label names it: the GPUs it held (UUID, else node/index),
//     their model, its utilization (GR_ENGINE_ACTIVE, else GPU_UTIL/100), its peak FB_USED, and
//     its first and last sample;
//   - kube-state-metrics: kube_pod_container_resource_requests{resource="nvidia_com_gpu"} (the
//     GPUs it asked for), kube_pod_start_time / kube_pod_completion_time (its start and end),
//     kube_pod_info (its node);
//   - process/pod events (`ingest --format events`): GPUs and times when no sample names the pod.
// Where both say, kube-state-metrics' times and GPU count win over the samples' (they are exact;
// samples are only as fine as the scrape interval).
// The history's shape (issue 38, docs/WORKLOADS.md "From your own history"), from more
// kube-state-metrics series: kube_pod_created (the submit), kube_pod_owner (the controlling
// owner; kube_pod_info's created_by_* where it is absent), kube_replicaset_owner (a replica set's
// deployment), kube_job_created (a Job's creation), kube_pod_labels (notebook labels) and
// kube_node_labels (spot capacity types). ShapeJobs then folds the pods into jobs: gangs, services
// and notebook sessions.

#include <cstdint>
#include <functional>
#include <map>
#include <string_view>
#include <utility>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/core/units.h"
#include "seedance/gpu/catalog.h"
#include "seedance/ledger/ledger.h"

namespace seedance::ledger {

struct RanJob {
  std::string namespace_name, pod, node;
  std::string model_label;        // as labelled (dcgm modelName), "" = none seen
  gpu::GpuIndex gpu = 0xff;       // the catalog row of model_label; 0xff = unknown
  int gpus = 0;                   // GPUs held (requested when kube-state-metrics says)
  std::int64_t start_ms = 0, end_ms = 0;  // [start, end) inside the read window
  bool clipped = false;           // it started before the window, ran past its end, or has no completion time
  std::int64_t sampled_gpu_ms = 0;  // GPU time the samples show (distinct GPU x step)
  double mean_util = -1;          // -1 = no utilization samples
  double peak_fb_mib = -1;        // per GPU, -1 = no memory samples
  std::string evidence;           // which series said what: "dcgm+ksm", "events", ...
  // The history's shape (issue 38).
  std::int64_t submit_ms = -1;    // kube_pod_created, the owner's creation, sacct Submit; -1 = unknown
  std::string kind = "batch";     // batch | service | notebook (JobKindOf)
  std::string owner_kind, owner_name;  // the controlling owner; a service's is its Deployment when known
  int pods = 1;                   // pods folded into this row (a gang's members)
  std::vector<std::string> member_pods;  // their names (the pod itself for a pod)
  std::vector<std::string> nodes;        // every node it ran on, sorted
  // (node, GPUs) of each member pod (ShapeJobs): a gang's GPUs node by node, so that a gang
  // spanning node pools (owned and spot nodes) is priced by each node's pool. Empty: `node` holds all.
  std::vector<std::pair<std::string, int>> gpus_by_node;
  bool spot = false;              // a node of it is labelled spot (IsSpotNode)
  std::int64_t busy_ms = -1;      // time its GPUs were busy (utilization > 0.05 in a step); -1 = unknown
  int clipped_pods = 0;           // member pods that are clipped
  double gpu_hours() const { return static_cast<double>(gpus) * static_cast<double>(end_ms - start_ms) / 3.6e6; }
};

// Reads the jobs whose time overlaps [from, to) (clipped to it), ordered by (start, namespace,
// pod). `step_ms` is the sampling step (a pod's last sample covers one step). Errors: storage;
// kInvalidArgument when from >= to.
Result<std::vector<RanJob>> ReadRanJobs(Ledger& ledger, std::int64_t from_ms, std::int64_t to_ms,
                                        std::int64_t step_ms);

// The owner kinds whose pods are one gang (all-or-nothing job): Job, JobSet, PyTorchJob, RayJob,
// MPIJob (and TFJob, XGBoostJob, PaddleJob, MXJob of the Kubeflow training operator).
bool IsGangOwnerKind(std::string_view kind);

// A pod's kind from its owner and its labels (kube_pod_labels' `label_*` names): "service" for a
// ReplicaSet / Deployment owner, "notebook" for a StatefulSet owner or notebook labels
// (label_app=jupyterhub, label_component=singleuser-server, label_notebook_name), else "batch".
std::string JobKindOf(std::string_view owner_kind, const std::vector<std::pair<std::string, std::string>>& labels);

// A node's capacity type is spot by its kube_node_labels labels: karpenter.sh/capacity-type=spot,
// eks.amazonaws.com/capacityType=SPOT, cloud.google.com/gke-spot=true (sanitized names, any case).
bool IsSpotNode(const std::map<std::string, std::string>& labels);

// Folds pods (ReadRanJobs) into jobs (issue 38): the batch pods of one gang owner (IsGangOwnerKind;
// same namespace, kind and name) become one row, pod "<OwnerKind>/<name>" (a one-pod owner keeps
// its pod's name), with their GPUs summed,
// start = first start, end = last end, submit = the earliest known, nodes joined, utilization
// weighted by GPU time, clipped when any pod is; services and notebooks stay one row per pod.
// Ordered by (start, namespace, pod).
std::vector<RanJob> ShapeJobs(std::vector<RanJob> pods);

// Services over time: one row per change of a deployment's running replicas, from its replica
// pods' lifetimes (a pod still running at `to_ms` does not end there).
struct ServiceReplicas {
  std::string namespace_name, deployment, gpu_type;
  int gpus_per_replica = 0;
  std::int64_t time_ms = 0;
  int replicas = 0;
};
std::vector<ServiceReplicas> ServiceReplicasOverTime(const std::vector<RanJob>& jobs, std::int64_t to_ms);

// The speed rule of the export (docs/TELEMETRY.md, "History to a workload"): a job is 1 step per
// second on the type it ran on, for (end - start) seconds. On another type its GPU-busy share u
// (mean utilization; 1 when unknown) runs faster by r = FP16 peak(other) / FP16 peak(ran) and the
// rest does not (Amdahl): steps/s = 1 / (u / r + (1 - u)). 0 when its peak memory per GPU does
// not fit the other type's memory.
double StepsPerSecondOn(const RanJob& job, gpu::GpuIndex other);

// What one job cost as it ran.
struct AsRunPrice {
  Money usd_per_gpu_hour;
  Money cost;  // gpus x (end - start) at usd_per_gpu_hour, rounded to the micro-dollar
};
// Prices one job as it ran: `seedance export workload` uses what the ledger charges per GPU-hour
// (error naming the job and its model when it has no price). With a fleet file the period is
// priced whole instead (sim::PlaceAsRun, sim::PriceAsRun): a job's tier depends on the others.
using AsRunPricer = std::function<Result<AsRunPrice>(const RanJob& job)>;

// A node as the ledger billed it over [from, to) (issue 38, the as-run node inventory): when it was
// up (its first billed step's start, its last one's end, and the billed time, gaps left out), its
// GPUs (GPU time of its charges over the billed time) and its bill and unshared idle, exactly the
// micro-dollars `attribute` sums. `seedance export workload --fleet` writes these beside the as-run
// CSV so that cost-benchmark bills each rented node whole while it was up, as the ledger did.
struct NodeUpTime {
  std::string node;
  std::int64_t first_ms = 0, last_ms = 0, up_ms = 0;
  int gpus = 0;
  Money bill, idle;
};
// Sorted by node name; bills and charges that start in [from, to).
Result<std::vector<NodeUpTime>> NodeUpTimes(Ledger& ledger, std::int64_t from_ms, std::int64_t to_ms);

}  // namespace seedance::ledger
