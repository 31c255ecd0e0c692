#include "seedance/sim/policies/skypilot_policy.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace seedance::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The pool of `type` in `tier`, or -1.
int PoolOf(const SimView& view, int type, Tier tier) {
  for (std::size_t p = 0; p < view.pools.size(); ++p) {
    if (view.pools[p].info.type == type && view.pools[p].info.tier == tier) return static_cast<int>(p);
  }
  return -1;
}

}  // namespace

std::string_view SkyPilotTypeChoiceName(SkyPilotPolicy::TypeChoice choice) {
  return choice == SkyPilotPolicy::TypeChoice::kFastest ? "fastest" : "cheapest-per-step";
}

int SkyPilotPolicy::ChooseType(const SimView& view, const JobInfo& job) const {
  int best = -1;
  double best_key = kInf;
  for (std::size_t t = 0; t < job.steps_per_s.size(); ++t) {
    const double thr = job.steps_per_s[t];
    if (thr <= 0) continue;
    const int od = PoolOf(view, static_cast<int>(t), Tier::kOnDemand);
    const int spot = PoolOf(view, static_cast<int>(t), Tier::kSpot);
    if (od < 0 && spot < 0) continue;
    double key = 1.0 / thr;
    if (options_.type == TypeChoice::kCheapestPerStep) {
      const int priced = od >= 0 ? od : spot;
      key = view.pools[static_cast<std::size_t>(priced)].info.usd_per_gpu_hour * job.gpus / thr;
    }
    if (key < best_key) {  // ties: the lower type index
      best_key = key;
      best = static_cast<int>(t);
    }
  }
  return best;
}

std::vector<int> SkyPilotPolicy::Candidates(const SimView& view, const JobInfo& job) const {
  std::vector<std::pair<double, int>> ranked;
  for (std::size_t p = 0; p < view.pools.size(); ++p) {
    const PoolInfo& pool = view.pools[p].info;
    if (pool.tier == Tier::kOwned || (options_.spot_only && pool.tier != Tier::kSpot)) continue;
    const double thr = job.steps_per_s[static_cast<std::size_t>(pool.type)];
    if (thr <= 0) continue;
    ranked.emplace_back(pool.usd_per_gpu_hour * job.gpus / thr, static_cast<int>(p));
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<int> out;
  out.reserve(ranked.size());
  for (const auto& r : ranked) out.push_back(r.second);
  return out;
}

std::vector<Assignment> SkyPilotPolicy::Schedule(const SimView& view, Rng& /*rng*/) {
  std::vector<int> left(view.pools.size());
  for (std::size_t p = 0; p < view.pools.size(); ++p) left[p] = view.pools[p].capacity;
  std::vector<Assignment> out;
  // Healthy running jobs keep their GPUs.
  for (const auto& jv : view.jobs) {
    if (!jv.running || jv.pool < 0) continue;
    left[static_cast<std::size_t>(jv.pool)] -= jv.info.gpus;
    out.push_back(Assignment{jv.info.id, jv.pool});
  }
  // New, paused and preempted jobs launch: spot of their type if it has room, else on-demand.
  for (const auto& jv : view.jobs) {
    if (jv.running && jv.pool >= 0) continue;
    const JobInfo& job = jv.info;
    if (options_.any_of) {
      for (int p : Candidates(view, job)) {  // failover down the optimizer's list
        if (left[static_cast<std::size_t>(p)] < job.gpus) continue;
        left[static_cast<std::size_t>(p)] -= job.gpus;
        out.push_back(Assignment{job.id, p});
        break;
      }
      continue;
    }
    auto it = type_of_.find(job.id);
    if (it == type_of_.end()) it = type_of_.emplace(job.id, ChooseType(view, job)).first;
    if (it->second < 0) continue;
    for (Tier tier : {Tier::kSpot, Tier::kOnDemand}) {
      if (options_.spot_only && tier != Tier::kSpot) break;  // waits for spot
      const int p = PoolOf(view, it->second, tier);
      if (p < 0 || left[static_cast<std::size_t>(p)] < job.gpus) continue;
      left[static_cast<std::size_t>(p)] -= job.gpus;
      out.push_back(Assignment{job.id, p});
      break;
    }
  }
  return out;
}

void SkyPilotPolicy::OnCompletion(const JobInfo& job, double /*total_steps*/, double /*now*/) {
  type_of_.erase(job.id);
}

double SkyPilotPolicy::CheckpointInterval(const JobView& /*job*/, const SimView& /*view*/) const {
  return options_.checkpoint_interval_s;
}

}  // namespace seedance::sim
