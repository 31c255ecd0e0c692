#include "seedance/sim/deadline/sky_spot_policies.h"

namespace seedance::sim::deadline {
namespace {

std::int64_t FloorDiv(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0); }

}  // namespace

std::int64_t SkySpotTicksLeft(const Observation& obs) {
  return FloorDiv(obs.job->deadline_s - obs.elapsed_s, obs.gap_s);
}

std::int64_t SkySpotTicksNeeded(const Observation& obs, std::int64_t extra_s) {
  return (obs.remaining_compute_s + extra_s + obs.gap_s - 1) / obs.gap_s;
}

void SkySpotPolicy::Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t /*start_tick*/) {
  OnStart(job, gap_s);
}

Instance SkySpotPolicy::Decide(const Observation& obs) {
  Instance want = Choose(obs);
  if (obs.remaining_compute_s > 0 &&
      SkySpotTicksNeeded(obs, obs.job->changeover_s) >= SkySpotTicksLeft(obs)) {
    want = obs.previous == Instance::kSpot && obs.previous_changeover_left_s == 0 ? Instance::kSpot
                                                                                   : Instance::kOnDemand;
  }
  if (want == Instance::kSpot && !obs.spot_available) want = Instance::kIdle;
  return want;
}

Instance SkySpotSafetyNets(const Observation& obs, Instance request) {
  const std::int64_t d = obs.job->changeover_s;
  const std::int64_t left = SkySpotTicksLeft(obs);
  if (SkySpotTicksNeeded(obs, 2 * d) >= left && obs.current != Instance::kSpot) request = Instance::kOnDemand;
  if (SkySpotTicksNeeded(obs, d) >= left) {
    request = obs.current == Instance::kSpot && obs.previous_changeover_left_s == 0 ? Instance::kSpot
                                                                                   : Instance::kOnDemand;
    if (d == 0 && obs.spot_available) request = Instance::kSpot;
  }
  return request;
}

Instance AuthorsGreedyPolicy::Choose(const Observation& obs) {
  if (obs.remaining_compute_s <= 0) return Instance::kIdle;
  return SkySpotSafetyNets(obs, obs.spot_available ? Instance::kSpot : Instance::kIdle);
}

Instance AuthorsUniformProgressPolicy::Choose(const Observation& obs) {
  if (obs.remaining_compute_s <= 0) return Instance::kIdle;
  const DeadlineJob& j = *obs.job;
  const std::int64_t cp = j.compute_s - obs.remaining_compute_s;
  Instance request = obs.spot_available ? Instance::kSpot : Instance::kIdle;
  // Behind: cp(t) < ep(t) = C(0) t / R(0), in integers.
  if (cp * j.deadline_s < j.compute_s * obs.elapsed_s) {
    request = obs.spot_available ? Instance::kSpot : Instance::kOnDemand;
  }
  // On on-demand: keep it while no spot is available, or while cp(t) <= ep(t + 2d).
  if (obs.current == Instance::kOnDemand &&
      (!obs.spot_available || cp * j.deadline_s <= j.compute_s * (obs.elapsed_s + 2 * j.changeover_s))) {
    request = Instance::kOnDemand;
  }
  return SkySpotSafetyNets(obs, request);
}

}  // namespace seedance::sim::deadline
