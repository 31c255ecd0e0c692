#pragma once

#include <map>
#include <string>
#include <vector>

#include "seedance/core/units.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/config.h"
#include "seedance/ledger/ledger.h"
#include "seedance/ledger/rightsize.h"
#include "seedance/ledger/telemetry_attribution.h"

namespace seedance::ledger {

// A job whose hourly cost crossed its threshold (S6.7), with the evidence and one concrete
// suggestion.
struct BreakerFinding {
  std::string job;
  std::string tenant;
  std::int64_t hour_ms = 0;
  Money cost;       // the job's cost in that hour
  Money threshold;  // the threshold it crossed
  JobEvidence evidence;
  std::string suggestion;
  Money saving_per_hour;  // what the suggestion saves per hour (0 when none is offered)
  bool saving_is_estimate = false;  // true for precision/batch changes (modelled, not priced)
  bool pause = false;     // the config asks to pause jobs that cross
};

// Evaluates every (job, hour) against its threshold: config.breaker_jobs[job], else
// config.breaker_default_hourly (0 = not watched). Suggestions, in order of preference:
//   1. a cheaper GPU by the rule advise's smaller-gpu finding uses (rightsize.h:
//      CheaperGpuThatFits: holds the peak memory x 1.10, FP16 TFLOPS x 80% cover utilization x
//      the current GPU's): saving = (current - new price) x GPUs;
//   2. consolidation when utilization < 50%: the work fits on ceil(GPUs x util / 0.8) GPUs
//      (raise the batch size): saving = cost x (1 - new GPUs / GPUs);
//   3. mixed precision when tensor pipes are idle (< 20%) and precision is not bf16/fp16/fp8:
//      an estimated 40% fewer GPU-hours;
//   4. otherwise "justified by utilization": no saving, raise the threshold or use spot.
// Results are ordered by (hour, job).
//
// With `fleet` (a fleet file's node pools, issue 38) the job's price is its node's pool price and
// suggestions stay inside the fleet: a cheaper GPU only among the types the fleet rents (its
// on-demand and spot pools), and only for work on rented capacity; work on owned or reserved
// capacity (paid for the window whatever runs) is never offered a cash saving for moving or
// consolidating (the GPUs it frees are named as capacity for other work), nor "spot" unless the
// fleet has a spot pool of the type.
std::vector<BreakerFinding> EvaluateBreaker(
    const std::vector<Ledger::JobHour>& job_hours,
    const std::map<std::pair<std::string, std::int64_t>, JobEvidence>& evidence,
    const LedgerConfig& config, const cost::PriceTable* catalog, const FleetPools* fleet = nullptr);

// The evidence in words: "2 x H100, utilization 20%, peak memory 10.0 GiB, tensor pipes n/a,
// batch unknown, precision unknown" (the CLI's breaker report and the server's trip reasons).
std::string DescribeEvidence(const JobEvidence& e);

}  // namespace seedance::ledger
