#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/ledger/ledger.h"

namespace seedance::ledger {

// GPU telemetry of scheduler jobs (Slurm) that have no pod labels: the job allocations that name
// their device indices (JobAllocation::gpu_indices, from `scontrol show job -d`) are joined to the
// stored GPU samples by node (the samples' hostname label), GPU index (the gpu label) and time.

// One GPU of a node.
struct NodeGpu {
  std::string node;
  int index = 0;
  auto operator<=>(const NodeGpu&) const = default;
};

// The GPU holds of the job allocations (every source) that name device indices and overlap
// [from, to), as process events: one per (allocation, device) whose (node, index) has stored
// samples, with the GPU's UUID from those samples (one event per UUID the pair ever had), the
// allocation's interval, pod = the workload's name, namespace and job from its workload, one GPU
// requested. AttributeTelemetry joins them to the samples as it joins pod events, so a Slurm job's
// GPU-hours, utilisation and evidence (breaker, advise) come out under its workload; a GPU's
// samples outside every allocation stay unattributed (idle).
Result<std::vector<ProcessEvent>> JobAllocationEvents(Ledger& ledger, std::int64_t from_ms,
                                                      std::int64_t to_ms);

// What the samples say of a set of GPUs over [from, to): their utilisation (GR_ENGINE_ACTIVE where
// a GPU has it, else GPU_UTIL/100).
struct GpuActivity {
  std::int64_t samples = 0;
  std::int64_t first_ms = 0, last_ms = 0;  // the first and last sample (0 without samples)
  std::int64_t last_busy_ms = 0;  // the last sample above `busy_above` on any GPU; 0 = none
  double mean_utilization = -1;   // -1 without samples

  // How long the GPUs have been idle by the samples: from the later of `since_ms` and the last
  // busy sample to the last sample; 0 without samples (no telemetry: the GPUs count as busy).
  double IdleSeconds(std::int64_t since_ms) const;
};
// Errors: storage errors.
Result<GpuActivity> ReadGpuActivity(Ledger& ledger, const std::vector<NodeGpu>& gpus,
                                    std::int64_t from_ms, std::int64_t to_ms, double busy_above);

// The hostnames that have GPU samples stored (so a caller can skip the nodes without telemetry).
Result<std::vector<std::string>> TelemetryNodes(Ledger& ledger);

}  // namespace seedance::ledger
