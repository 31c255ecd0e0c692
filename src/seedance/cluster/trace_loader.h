#pragma once

#include <string>
#include <vector>

#include "seedance/cluster/cluster.h"
#include "seedance/core/csv.h"
#include "seedance/core/status.h"

namespace seedance::cluster {

// Loaders for the Alibaba openb CSV format (data/openb/SOURCE.md has the columns).
// Every error is kInvalidArgument (kNotFound for a missing file) and names the file, line,
// column and field.

// Node list: columns sn, cpu_milli, memory_mib, gpu, model. REQUIRES per row: non-negative
// integers, gpu in 0..16, a known model when gpu > 0, unique names. At least one node.
Result<std::vector<NodeSpec>> LoadNodes(const std::string& path);
Result<std::vector<NodeSpec>> ParseNodes(const CsvTable& table);

// Pod list: columns name, cpu_milli, memory_mib, num_gpu, gpu_milli, and optionally gpu_spec,
// qos, creation_time, deletion_time. REQUIRES per row: non-negative integers, num_gpu in 0..8,
// gpu_milli in 1..1000 when num_gpu > 0, known models in gpu_spec. At least one pod.
Result<std::vector<PodSpec>> LoadPods(const std::string& path);
Result<std::vector<PodSpec>> ParsePods(const CsvTable& table);

}  // namespace seedance::cluster
