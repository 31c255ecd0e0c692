#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "seedance/batching/benchmark.h"
#include "seedance/batching/executor.h"
#include "seedance/core/status.h"
#include "seedance/planner/workload.h"

// Capacity profiles: per GPU type and request-size bucket, the most req/s one GPU sustains at
// the SLOs, measured by the batching engine on the noisy ground-truth executor (as a real
// profiling run on the GPU would measure it), never from a hand-made table.
namespace seedance::planner {

// Bump when the engine, the probe or its defaults change: cached profiles of an older version
// are not reused.
inline constexpr int kCapacityEngineVersion = 1;

struct EngineOptions {
  std::string data_dir;
  std::string model = "llama-2-7b";
  std::string policy = "seedance";   // the batching policy every replica runs
  double slo_ttft_s = 2.0;
  double slo_tpot_s = 0.12;
  int tensor_parallel = 1;           // GPUs per replica
  std::string profile_root;          // compute profiles in Vidur's layout (empty: the bundled ones)
};

// One GPU type's serving engine (one replica: tensor_parallel GPUs): the noisy truth (even profile points), the policy's predictor
// (odd points) and the engine settings (KV blocks from the GPU's memory).
struct Engine {
  batching::GpuSpec gpu;
  batching::ModelSpec model;
  std::unique_ptr<batching::ProfiledExecutor> truth;
  std::unique_ptr<batching::ProfiledExecutor> predictor;
  batching::PolicySettings settings;
  EngineOptions options;
};
// gpu: a batching GPU name (a100, h100, l4, a10g). Errors: kInvalidArgument for unknown names
// or a TP degree the profiles lack, kNotFound for missing profiles.
Result<std::unique_ptr<Engine>> MakeEngine(const EngineOptions& options, const std::string& gpu);

struct ProbeOptions {
  double target_attainment = 0.99;  // share of a probe's requests that must meet both SLOs
  int requests = 200;               // Poisson requests per probe, at least
  double min_probe_s = 120;         // and at least this many seconds of arrivals
  int max_requests = 20000;         // but no more than this
  int bisect_steps = 6;             // after bracketing by doubling: within 2^-6 of the bracket
  std::uint64_t seed = 7;           // arrivals and step noise of the probes
};

// What one bucket measured. capacity_rps 0 = ineligible: even a lone request misses an SLO
// (lone_ttft_s / lone_tpot_s say by how much).
struct BucketCapacity {
  int prompt = 0, output = 0;       // the probe's lengths (bucket upper edges, within context)
  double capacity_rps = 0;
  double lone_ttft_s = 0, lone_tpot_s = 0;
  bool profiled = false;
};

// The probe's lengths for bucket b: the upper edges (conservative, as Mélange's profiling),
// the prompt cut to max_context - output.
void ProbeLengths(const BucketGrid& grid, int b, int max_context, int* prompt, int* output);

// Measures one bucket: a lone request first, then Poisson probes of `requests` fixed-length
// requests: rate doubled until attainment < target, then bisected.
Result<BucketCapacity> MeasureBucket(const Engine& engine, int prompt, int output, const ProbeOptions& probe);

struct CapacityTable {
  std::string gpu;                  // batching name
  std::vector<BucketCapacity> buckets;
};

// Profiles the buckets marked in `needed` (others stay unprofiled, capacity 0), reusing and
// extending the cache file in `cache_dir` (empty: no cache) keyed by model, GPU, policy, SLOs,
// grid, probe and kCapacityEngineVersion. Progress lines go to `progress` when not null.
Result<CapacityTable> ProfileCapacity(const Engine& engine, const BucketGrid& grid,
                                      const std::vector<bool>& needed, const ProbeOptions& probe,
                                      const std::string& cache_dir, std::ostream* progress);
std::string CacheFileName(const Engine& engine, const BucketGrid& grid, const ProbeOptions& probe);

}  // namespace seedance::planner
