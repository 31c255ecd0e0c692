#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "seedance/advise/finding.h"
#include "seedance/core/status.h"
#include "seedance/cost/price_table.h"

namespace seedance::advise {

// An inference deployment as the batching engine models it: a trace, a GPU, KV precision and
// vLLM's batch cap (max_num_seqs; 0 = the best knobs of vLLM's own sweep).
struct ServingDeployment {
  std::string data_dir;
  std::string trace = "conv";  // bundled trace name or a path (batching::ResolveTracePath)
  std::string gpu = "a100";    // a100 | h100
  int kv_bits = 16;            // 16 | 8
  int max_num_seqs = 0;
  std::vector<std::uint64_t> seeds = {42, 43};  // ground-truth noise seeds (the interval)
};

// One configuration's sustained rate and cost.
struct ServingPoint {
  std::string change;  // "as deployed", "gpu h100", "kv fp8", "batch cap 128", ...
  ServingDeployment config;
  std::vector<double> capacity_rps;  // per seed: vLLM's max rate at >= 90% SLO attainment
  double usd_per_gpu_hour = 0;
  double demand_rps = 0;  // the trace's mean arrival rate
  // Cost of serving the trace's arrival rate R for a month: R / capacity GPUs (a fleet of
  // replicas, fractional) x price x kHoursPerMonth; per seed.
  std::vector<double> usd_per_month;
};

struct ServingWhatIf {
  double demand_rps = 0;  // the trace's mean arrival rate
  std::vector<ServingPoint> points;  // [0] = as deployed
};

// The batching engine's what-if for `d`: the deployment as it is, then one knob changed at a
// time: the other GPU type, KV FP8 (when FP16), and batch caps 64 / 128 / 512; each measured by
// batching::RunBatching's rate sweep (vLLM, SLO TTFT 2 s / TPOT 100 ms) under every seed.
Result<ServingWhatIf> RunServingWhatIf(const ServingDeployment& d, std::ostream* progress);

// The cheaper configurations as findings (kind serving, target deployment/<name>): saving =
// as deployed - changed, at seeds[0]; the interval is min .. max over the seeds.
std::vector<Finding> ServingFindings(const ServingWhatIf& w, const std::string& name,
                                     const std::string& reproduce_prefix);

}  // namespace seedance::advise
