#pragma once

#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/cost/price_table.h"

namespace seedance::sim {

// The spot-with-deadlines experiment (S3.3; "Can't Be Late", NSDI'24, reports 27-84% savings):
// single-V100 jobs with a deadline, started at regular offsets over the 45-day p3.2xlarge
// availability traces (data/spot_traces/aws-02-15-2023_*). Each job runs alone on V100
// on-demand plus V100 spot; on-demand-only vs Seedance (spot while the slack allows, Young/Daly
// checkpoints, switch to on-demand when the slack on on-demand runs out).
struct SpotBenchOptions {
  double job_hours = 24;      // compute on a V100
  double slack_ratio = 0.5;   // deadline = arrival + job_hours * (1 + slack_ratio)
  int jobs_per_trace = 20;    // start offsets spread over each trace
  bool multi_zone = true;     // pool the nine zones (SkyPilot-style failover), else per zone
  double od_usd_per_hour = 3.06;  // AWS p3.2xlarge on-demand (1 V100)
  double spot_ratio = cost::kDefaultSpotRatio;  // spot price / on-demand
};

struct SpotBenchRow {
  std::string trace;  // zone, or "9 zones"
  double availability = 0;
  int jobs = 0;
  double on_demand_usd = 0;
  double seedance_usd = 0;
  double savings_pct = 0;
  int deadline_misses = 0;
  int interruptions = 0;
};

Result<std::vector<SpotBenchRow>> RunSpotDeadlineBench(const std::string& data_dir, const SpotBenchOptions& o);

}  // namespace seedance::sim
