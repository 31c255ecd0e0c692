#include "seedance/sim/capacity.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace seedance::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

double UsableGpus::Take(int gang, double now) {
  const int from_ready = std::min(ready, gang);
  ready -= from_ready;
  if (from_ready == gang) return now;
  next_boot += static_cast<std::size_t>(gang - from_ready);
  return boot_at[next_boot - 1];
}

Capacity::Capacity(const FleetSpec& fleet, AutoscaleMode mode, double round_s,
                   std::function<void(const Decision&)> on_decision)
    : fleet_(fleet), mode_(mode), round_s_(round_s), on_decision_(std::move(on_decision)),
      pools_(fleet.pools.size()) {
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    if (AlwaysHeld(fleet.pools[p].tier)) pools_[p].held = fleet.pools[p].max_gpus;
  }
}

int Capacity::CapacityAt(std::size_t p, double t) const {
  const PoolSpec& spec = fleet_.pools[p];
  if (spec.tier == Tier::kSpot && !spec.spot.empty()) {
    return std::min(spec.max_gpus, spec.spot.AvailableAt(t));
  }
  return spec.max_gpus;
}

int Capacity::Ready(std::size_t p, double t) {
  PoolState& ps = pools_[p];
  while (!ps.booting.empty() && ps.booting.front() <= t) ps.booting.pop_front();
  return ps.held - static_cast<int>(ps.booting.size());
}

bool Capacity::AnyCloudHeld() const {
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    if (!AlwaysHeld(fleet_.pools[p].tier) && pools_[p].held > 0) return true;
  }
  return false;
}

double Capacity::OwnedGpus() const {
  double owned = 0;
  for (const auto& spec : fleet_.pools) {
    if (AlwaysHeld(spec.tier)) owned += spec.max_gpus;
  }
  return owned;
}

void Capacity::Emit(double t, DecisionAction action, std::size_t p, int gpus) const {
  if (on_decision_ && gpus > 0) on_decision_(Decision{t, -1, action, static_cast<int>(p), gpus});
}

void Capacity::Acquire(std::size_t p, int n, double t) {
  PoolState& ps = pools_[p];
  for (int k = 0; k < n; ++k) {
    ps.booting.push_back(t + fleet_.cold_start_s);
    ++ps.held;
  }
  Emit(t, DecisionAction::kProvision, p, n);
}

void Capacity::Release(std::size_t p, int n, double t) {
  PoolState& ps = pools_[p];
  n = std::min(n, ps.held - ps.in_use);
  for (int k = 0; k < n; ++k) {
    if (!ps.booting.empty()) ps.booting.pop_back();
    --ps.held;
  }
  Emit(t, DecisionAction::kRelease, p, n);
}

void Capacity::Autoscale(const std::vector<int>& demand, double t) {
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    if (AlwaysHeld(fleet_.pools[p].tier)) continue;
    PoolState& ps = pools_[p];
    while (!ps.booting.empty() && ps.booting.front() <= t) ps.booting.pop_front();
    const int cap = CapacityAt(p, t);
    if (ps.held > cap) {  // spot taken back between rounds: nothing runs now, just shrink
      const int drop = ps.held - cap;
      for (int k = 0; k < drop; ++k) {
        if (!ps.booting.empty()) ps.booting.pop_back();
        --ps.held;
      }
      Emit(t, DecisionAction::kRelease, p, drop);
    }
    const int d = std::min(demand[p], cap);
    int target = d;
    if (mode_ == AutoscaleMode::kPredictive) {
      const auto round_index = [&](double x) { return static_cast<std::int64_t>(x / round_s_); };
      ps.demand_by_round[round_index(t)] = demand[p];
      // Seasonal-naive forecast of demand growth: what was added a day ago over the next cold
      // start is pre-warmed on top of today's demand.
      const double day = 86400.0;
      int growth = 0;
      for (double x = t + round_s_; x <= t + fleet_.cold_start_s + round_s_; x += round_s_) {
        auto now_it = ps.demand_by_round.find(round_index(x - day));
        auto prev_it = ps.demand_by_round.find(round_index(x - day) - 1);
        if (now_it != ps.demand_by_round.end() && prev_it != ps.demand_by_round.end()) {
          growth += std::max(0, now_it->second - prev_it->second);
        }
      }
      target = std::min(cap, d + growth);
      if (target > ps.held) Acquire(p, target - ps.held, t);
      if (target < ps.held) Release(p, ps.held - target, t);
    } else {
      if (target > ps.held) {
        Acquire(p, target - ps.held, t);
        ps.below_since = -1;
      } else if (target < ps.held) {
        if (ps.below_since < 0) ps.below_since = t;
        if (t - ps.below_since >= fleet_.scale_down_delay_s) {
          Release(p, ps.held - target, t);
          ps.below_since = -1;
        }
      } else {
        ps.below_since = -1;
      }
    }
  }
}

UsableGpus Capacity::Usable(std::size_t p, double t, bool ready_only) {
  UsableGpus u;
  u.ready = std::max(0, Ready(p, t));
  if (!ready_only) {
    for (double r : pools_[p].booting) {
      if (r > t && r < t + round_s_) u.boot_at.push_back(r);
    }
  }
  return u;
}

void Capacity::ReleaseAll(double t) {
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    if (AlwaysHeld(fleet_.pools[p].tier) || pools_[p].held == 0) continue;
    Emit(t, DecisionAction::kRelease, p, pools_[p].held);
    pools_[p].held = 0;
    pools_[p].booting.clear();
  }
}

void Capacity::ClearInUse() {
  for (auto& ps : pools_) ps.in_use = 0;
}

std::vector<double> Capacity::Interruptions(const std::vector<SpotRun>& runs, double t,
                                            double round_end) const {
  std::vector<double> stop_at(runs.size(), kInf);
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    const PoolSpec& spec = fleet_.pools[p];
    if (spec.tier != Tier::kSpot || spec.spot.empty() || pools_[p].in_use == 0) continue;
    std::vector<std::size_t> mine;
    for (std::size_t k = 0; k < runs.size(); ++k) {
      if (runs[k].pool == static_cast<int>(p)) mine.push_back(k);
    }
    std::sort(mine.begin(), mine.end(),
              [&](std::size_t a, std::size_t b) { return runs[a].job_id > runs[b].job_id; });
    int used = pools_[p].in_use;
    // A run that completed its work by a change gives its GPUs back before that change is
    // applied: only the GPUs still running at x count against the capacity there.
    std::vector<char> done(mine.size(), 0);
    // A drop exactly at the round's end still interrupts the jobs running into it.
    for (double x = spec.spot.NextChangeAfter(t); x <= round_end && used > 0; x = spec.spot.NextChangeAfter(x)) {
      for (std::size_t k = 0; k < mine.size(); ++k) {
        const std::size_t r = mine[k];
        if (done[k] || stop_at[r] < kInf || runs[r].completes_at > x) continue;
        done[k] = 1;
        used -= runs[r].gpus;
      }
      const int cap = std::min(spec.max_gpus, spec.spot.AvailableAt(x));
      for (std::size_t k = 0; used > cap && k < mine.size(); ++k) {
        const std::size_t r = mine[k];
        if (done[k] || stop_at[r] < kInf) continue;
        stop_at[r] = x;
        used -= runs[r].gpus;
      }
    }
  }
  return stop_at;
}

}  // namespace seedance::sim
