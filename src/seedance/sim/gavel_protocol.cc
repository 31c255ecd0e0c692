#include "seedance/sim/gavel_protocol.h"

#include "seedance/sim/policies/gavel_policies.h"
#include "seedance/sim/policies/seedance_cost_policy.h"

namespace seedance::sim {

FleetSpec GavelFleet(int v100, int p100, int k80) {
  FleetSpec f;
  f.name = "gavel-" + std::to_string(v100) + ":" + std::to_string(p100) + ":" + std::to_string(k80);
  f.gpu_types = {"V100", "P100", "K80"};
  const double prices[] = {2.85, 1.68, 0.52};
  const int counts[] = {v100, p100, k80};
  for (int t = 0; t < 3; ++t) {
    if (counts[t] <= 0) continue;
    PoolSpec p;
    p.type = t;
    p.tier = Tier::kOwned;
    p.max_gpus = counts[t];
    p.usd_per_gpu_hour = prices[t];
    f.pools.push_back(p);
  }
  f.cold_start_s = 0;
  f.restart_s = 0;  // Gavel's simulator charges no preemption overhead
  f.checkpoint_cost_s = 0;
  return f;
}

Result<GavelTrace> ParseGavelTrace(const std::string& name) {
  if (name == "continuous-single") return GavelTrace::kContinuousSingle;
  if (name == "continuous-multiple") return GavelTrace::kContinuousMultiple;
  return InvalidArgumentError("--trace: unknown Gavel trace '" + name +
                              "' (expected continuous-single or continuous-multiple)");
}

std::vector<std::string> GavelPolicyNames() {
  return {"fifo", "gavel-fifo", "las", "gavel-las", "seedance"};
}

namespace {
Result<std::unique_ptr<JobPolicy>> MakeGavelPolicy(const std::string& name) {
  if (name == "fifo") return std::unique_ptr<JobPolicy>(new GavelFifoPolicy(false, true));
  if (name == "gavel-fifo") return std::unique_ptr<JobPolicy>(new GavelFifoPolicy(true, true));
  if (name == "las") return std::unique_ptr<JobPolicy>(new GavelLasPolicy(true));
  if (name == "gavel-las") return std::unique_ptr<JobPolicy>(new GavelLasPolicy(false));
  if (name == "seedance") {
    config::CostAwareConfig c;
    c.autoscale = AutoscaleMode::kReactive;
    return std::unique_ptr<JobPolicy>(new SeedanceCostPolicy(c));
  }
  return InvalidArgumentError("--policies: unknown policy '" + name +
                              "' (expected fifo, gavel-fifo, las, gavel-las or seedance)");
}
}  // namespace

Result<GavelRun> RunGavelCell(const std::string& policy, GavelTrace trace, double rate,
                              std::uint64_t seed, const GavelThroughputs& thr,
                              const std::string& peer_stream_path, std::int64_t first_job,
                              std::int64_t last_job) {
  if (!(rate > 0)) return InvalidArgumentError("--rates: rates must be > 0");
  SEEDANCE_ASSIGN_OR_RETURN(auto pol, MakeGavelPolicy(policy));
  Workload w;
  if (trace == GavelTrace::kContinuousSingle && seed == 0 && !peer_stream_path.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(w, LoadGavelPeerStream(peer_stream_path, thr, rate));
  } else {
    w = GenerateGavel(thr, rate, last_job + 1000, trace == GavelTrace::kContinuousMultiple, seed);
  }
  FleetSpec fleet = GavelFleet();
  SimOptions opt;
  opt.gavel_rounds = true;
  opt.round_s = 360;
  opt.measure_first = first_job;
  opt.measure_last = last_job;
  opt.seed = seed + 5;
  SEEDANCE_ASSIGN_OR_RETURN(SimResult r, Simulate(w, fleet, *pol, opt));
  GavelRun run;
  run.policy = policy;
  run.rate = rate;
  run.seed = seed;
  run.avg_jct_hours = r.AvgJctHours(first_job, last_job);
  run.total_cost_usd = r.total_cost_usd;
  run.utilization = r.Utilization();
  run.jobs_simulated = static_cast<std::int64_t>(r.jobs.size());
  run.wall_seconds = r.wall_seconds;
  return run;
}

}  // namespace seedance::sim
