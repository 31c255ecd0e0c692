#include "seedance/sim/spot_bench.h"

#include <algorithm>

#include "seedance/sim/engine.h"
#include "seedance/sim/policies/seedance_cost_policy.h"

namespace seedance::sim {
namespace {

const char* kZones[] = {"us-east-1a", "us-east-1c", "us-east-1d", "us-east-1f", "us-east-2a",
                        "us-east-2b", "us-west-2a", "us-west-2b", "us-west-2c"};

Result<SpotBenchRow> RunTrace(const std::string& name, const SpotSeries& series, const SpotBenchOptions& o) {
  SpotBenchRow row;
  row.trace = name;
  row.availability = series.AvailabilityFraction(1);
  const double span = series.gap_s() * static_cast<double>(series.ticks());
  const double job_s = o.job_hours * 3600.0;
  const double window = job_s * (1 + o.slack_ratio);
  FleetSpec fleet;
  fleet.name = "v100-" + name;
  fleet.gpu_types = {"V100"};
  PoolSpec od;
  od.type = 0;
  od.tier = Tier::kOnDemand;
  od.max_gpus = 1;
  od.usd_per_gpu_hour = o.od_usd_per_hour;
  PoolSpec spot = od;
  spot.tier = Tier::kSpot;
  spot.usd_per_gpu_hour = o.od_usd_per_hour * o.spot_ratio;
  spot.spot = series;
  fleet.pools = {od, spot};
  for (int k = 0; k < o.jobs_per_trace; ++k) {
    double start = (span - window) * k / std::max(1, o.jobs_per_trace - 1);
    Workload w;
    w.name = "deadline-job";
    w.gpu_types = {"V100"};
    JobSpec j;
    j.id = 0;
    j.arrival_s = start;
    j.job_type = "train";
    j.total_steps = job_s;
    j.user_estimate_steps = job_s;  // Can't Be Late's setting: the job's length is known
    j.steps_per_s = {1.0};
    j.deadline_s = start + window;
    w.jobs.push_back(j);
    CostAwareConfig c;
    c.autoscale = AutoscaleMode::kReactive;
    SeedanceCostPolicy seed_pol(c);
    FifoOnDemandPolicy od_pol;
    SimOptions opt;
    SEEDANCE_ASSIGN_OR_RETURN(SimResult a, Simulate(w, fleet, od_pol, opt));
    SEEDANCE_ASSIGN_OR_RETURN(SimResult b, Simulate(w, fleet, seed_pol, opt));
    row.on_demand_usd += a.total_cost_usd;
    row.seedance_usd += b.total_cost_usd;
    row.deadline_misses += b.deadline_misses;
    row.interruptions += b.spot_interruptions;
    ++row.jobs;
  }
  row.savings_pct = 100.0 * (1.0 - row.seedance_usd / row.on_demand_usd);
  return row;
}

}  // namespace

Result<std::vector<SpotBenchRow>> RunSpotDeadlineBench(const std::string& data_dir, const SpotBenchOptions& o) {
  if (!(o.job_hours > 0) || !(o.slack_ratio > 0) || o.jobs_per_trace < 1) {
    return InvalidArgumentError("spot bench: job hours, slack and jobs per trace must be > 0");
  }
  std::vector<SpotSeries> zones;
  for (const char* z : kZones) {
    SEEDANCE_ASSIGN_OR_RETURN(SpotSeries s, SpotSeries::LoadFile(
        data_dir + "/spot_traces/aws-02-15-2023_" + z + "_v100_1.json", 1));
    zones.push_back(std::move(s));
  }
  std::vector<SpotBenchRow> rows;
  if (o.multi_zone) {
    SEEDANCE_ASSIGN_OR_RETURN(SpotSeries pooled, SpotSeries::Sum(zones));
    SEEDANCE_ASSIGN_OR_RETURN(SpotBenchRow r, RunTrace("9 zones", pooled, o));
    rows.push_back(r);
  }
  for (std::size_t i = 0; i < zones.size(); ++i) {
    SEEDANCE_ASSIGN_OR_RETURN(SpotBenchRow r, RunTrace(kZones[i], zones[i], o));
    rows.push_back(r);
  }
  return rows;
}

}  // namespace seedance::sim
