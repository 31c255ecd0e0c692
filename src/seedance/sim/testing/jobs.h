// Test helper: a job of the simulator's workloads with the fields tests set.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "seedance/sim/workload.h"

namespace seedance::sim::testing {

inline JobSpec Job(std::int64_t id, double arrival, double steps, std::vector<double> thr, int gpus = 1) {
  JobSpec j;
  j.id = id;
  j.arrival_s = arrival;
  j.job_type = "t";
  j.total_steps = steps;
  j.steps_per_s = std::move(thr);
  j.gpus = gpus;
  return j;
}

}  // namespace seedance::sim::testing
