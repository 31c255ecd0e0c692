#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::sim {

inline constexpr double kNoDeadline = std::numeric_limits<double>::infinity();

// How urgent a job is (S3.2): critical work never runs on spot capacity.
enum class JobPriority { kNormal, kCritical };

// What a scheduler may know about a job (the information contract, docs/ARCHITECTURE.md): what
// the user submitted and the trace records at submission. Work is counted in steps; how fast a
// step runs depends on the GPU type (steps_per_s, one entry per GPU type of the workload, for the
// whole job at `gpus` GPUs; 0 means the job cannot run on that type, e.g. the model does not fit).
struct JobInfo {
  std::int64_t id = 0;         // stable, unique; ties are broken by it
  double arrival_s = 0;        // simulated seconds from the start of the trace
  std::string job_type;        // template name or class, e.g. "ResNet-50 (batch size 64)"
  int gpus = 1;                // gang size: all GPUs of one type, placed together
  std::vector<double> steps_per_s;
  double deadline_s = kNoDeadline;  // absolute; kNoDeadline when none
  JobPriority priority = JobPriority::kNormal;
  std::string tenant;               // user or virtual cluster; for cost by tenant; may be empty
  double priority_weight = 1.0;     // Gavel's priority weight (LAS)
  double user_estimate_steps = 0;   // the submitter's estimate of the work, 0 = none
};

// One training job of a workload: its public part and its true size, which only the engine (and
// the oracle reference policy, through OracleView) reads.
struct JobSpec : JobInfo {
  double total_steps = 0;  // work
};

// A workload: jobs over a set of GPU types, sorted by (arrival_s, id).
struct Workload {
  std::string name;
  std::vector<std::string> gpu_types;  // names; index = position in JobSpec::steps_per_s
  std::vector<JobSpec> jobs;

  // Index of `type` in gpu_types or -1.
  int TypeIndex(const std::string& type) const;
  // Checks the invariants above (sizes, ordering, positive work, at least one feasible type).
  Status Validate() const;
  // Keeps only jobs arriving before `duration_s` (the --duration window).
  void TruncateArrivals(double duration_s);
};

}  // namespace seedance::sim
