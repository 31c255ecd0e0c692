#include "seedance/sim/workload.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace seedance::sim {

int Workload::TypeIndex(const std::string& type) const {
  for (std::size_t i = 0; i < gpu_types.size(); ++i) {
    if (gpu_types[i] == type) return static_cast<int>(i);
  }
  return -1;
}

Status Workload::Validate() const {
  if (gpu_types.empty()) return InvalidArgumentError(name + ": workload has no GPU types");
  double last_arrival = -1;
  std::int64_t last_id = std::numeric_limits<std::int64_t>::min();
  for (const JobSpec& j : jobs) {
    const std::string where = name + ": job " + std::to_string(j.id);
    if (j.steps_per_s.size() != gpu_types.size()) {
      return InvalidArgumentError(where + ": throughput list does not match the GPU types");
    }
    if (!(j.total_steps > 0) || !std::isfinite(j.total_steps)) {
      return InvalidArgumentError(where + ": field 'total_steps' must be > 0");
    }
    if (j.gpus < 1) return InvalidArgumentError(where + ": field 'gpus' must be >= 1");
    if (!(j.arrival_s >= 0)) return InvalidArgumentError(where + ": field 'arrival_s' must be >= 0");
    if (j.arrival_s < last_arrival || (j.arrival_s == last_arrival && j.id <= last_id)) {
      return InvalidArgumentError(where + ": jobs must be sorted by (arrival_s, id)");
    }
    last_arrival = j.arrival_s;
    last_id = j.id;
    bool feasible = false;
    for (double t : j.steps_per_s) {
      if (t < 0 || !std::isfinite(t)) return InvalidArgumentError(where + ": negative throughput");
      feasible = feasible || t > 0;
    }
    if (!feasible) return InvalidArgumentError(where + ": runs on no GPU type of the fleet");
    if (j.deadline_s <= j.arrival_s) {
      return InvalidArgumentError(where + ": field 'deadline_s' must be after the arrival");
    }
  }
  return Status::Ok();
}

void Workload::TruncateArrivals(double duration_s) {
  jobs.erase(std::remove_if(jobs.begin(), jobs.end(),
                            [&](const JobSpec& j) { return j.arrival_s >= duration_s; }),
             jobs.end());
}

}  // namespace seedance::sim
