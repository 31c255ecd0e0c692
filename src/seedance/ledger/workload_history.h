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

#include <cstdint>
#include <functional>
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
  double gpu_hours() const { return static_cast<double>(gpus) * static_cast<double>(end_ms - start_ms) / 3.6e6; }
};

// Reads the jobs whose time overlaps [from, to) (clipped to it), ordered by (start, namespace,
// pod). `step_ms` is the sampling step (a pod's last sample covers one step). Errors: storage;
// kInvalidArgument when from >= to.
Result<std::vector<RanJob>> ReadRanJobs(Ledger& ledger, std::int64_t from_ms, std::int64_t to_ms,
                                        std::int64_t step_ms);

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

}  // namespace seedance::ledger
