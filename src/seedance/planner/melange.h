#pragma once

#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/planner/allocation.h"

// Mélange's own input format (tyler-griggs/melange-release@d46ab43 melange/config/example.json):
//   {"gpu_info": {"<name>": {"cost": $/h, "tputs": [[req/s per (input, output) bucket]]}},
//    "workload_distribution": [[fractions]], "total_request_rate": req/s, "slice_factor": F}
// Both matrices are [input bucket][output bucket] (the orientation its load balancer indexes);
// a throughput of 0 means the bucket is ineligible on that GPU (the reference code divides by it).
namespace seedance::planner {

struct MelangeConfig {
  std::vector<std::string> gpus;            // gpu_info keys, in the file's key order (sorted)
  std::vector<double> cost;                 // $/h per GPU
  std::vector<std::vector<double>> tputs;   // per GPU: flattened [in][out]
  std::vector<double> distribution;         // flattened [in][out]
  int inputs = 0, outputs = 0;
  double total_request_rate = 0;
  int slice_factor = 1;
};

// Reads and validates a Mélange config. Errors: kNotFound (cannot open); kInvalidArgument naming
// the file and the field ("gpu_info.A10G.tputs[1][0]"): not JSON, a missing or mistyped field,
// ragged or mismatched matrices, a negative value, fractions that do not sum to 1 (within 1e-6),
// a rate <= 0 or a slice factor < 1.
Result<MelangeConfig> LoadMelangeConfig(const std::string& path);
Result<MelangeConfig> ParseMelangeConfig(const std::string& name, const std::string& text);

// The allocation problem the config states (bucket rate = fraction x total rate).
AllocationProblem ToProblem(const MelangeConfig& config);

}  // namespace seedance::planner
