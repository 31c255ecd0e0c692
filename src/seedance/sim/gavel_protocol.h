#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/engine.h"
#include "seedance/sim/workloads.h"

namespace seedance::sim {

// The Gavel evaluation protocol (ANCHORS.md, Gavel): 36 V100 + 36 P100 + 36 K80 owned GPUs,
// 360 s rounds, metric = average JCT of jobs 4000..4999. Cost = GPU time used x Gavel's
// on-demand prices (V100 2.85, P100 1.68, K80 0.52 $/GPU-h).
FleetSpec GavelFleet(int v100 = 36, int p100 = 36, int k80 = 36);

enum class GavelTrace { kContinuousSingle, kContinuousMultiple };
Result<GavelTrace> ParseGavelTrace(const std::string& name);

struct GavelRun {
  std::string policy;
  double rate = 0;
  std::uint64_t seed = 0;
  double avg_jct_hours = 0;
  double total_cost_usd = 0;
  double utilization = 0;
  std::int64_t jobs_simulated = 0;
  double wall_seconds = 0;
};

// Runs one cell. Seed 0 of continuous-single replays Gavel's own job stream (data/gavel_peer);
// other seeds and continuous-multiple use GenerateGavel. `first_job`..`last_job` is the measured
// window (Gavel: 4000..5000).
Result<GavelRun> RunGavelCell(const std::string& policy, GavelTrace trace, double rate,
                              std::uint64_t seed, const GavelThroughputs& thr,
                              const std::string& peer_stream_path, std::int64_t first_job = 4000,
                              std::int64_t last_job = 5000);

// Policies of the Gavel comparison: fifo, gavel-fifo, las, gavel-las, seedance.
std::vector<std::string> GavelPolicyNames();

}  // namespace seedance::sim
