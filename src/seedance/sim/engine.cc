#include "seedance/sim/engine.h"

#include "seedance/sim/event_queue.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <unordered_map>

namespace seedance::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct JobState {
  const JobSpec* spec = nullptr;
  std::size_t result_index = 0;
  double remaining = 0;
  int pool = -1;           // pool of the last round it ran
  bool ever_ran = false;
  bool needs_restart = false;
  double since_ckpt_s = 0;  // run time since the last checkpoint (spot)
  int preemptions = 0;
  double interrupted_at_s = -1;  // last spot interruption, -1: none
  double ran_s = 0;
};

struct PoolState {
  int held = 0;
  std::deque<double> booting;  // ready times of GPUs still booting, ascending
  double below_since = -1;     // reactive: since when demand < held
  int in_use = 0;              // GPUs running jobs in the current round
  std::map<std::int64_t, int> demand_by_round;  // predictive: round index -> demand
};

int Ready(const PoolState& p, double t) {
  int booting = 0;
  for (double r : p.booting) booting += r > t;
  return p.held - booting;
}

// A pool's GPUs that can start a job within the current round.
struct UsableGpus {
  int ready = 0;                // usable now
  std::vector<double> boot_at;  // ascending: when each still-booting GPU becomes usable
  std::size_t next_boot = 0;

  int Left() const { return ready + static_cast<int>(boot_at.size() - next_boot); }
  // Takes `gang` GPUs (Left() >= gang), ready ones first; returns when the last one is usable.
  double Take(int gang, double now) {
    const int from_ready = std::min(ready, gang);
    ready -= from_ready;
    if (from_ready == gang) return now;
    next_boot += static_cast<std::size_t>(gang - from_ready);
    return boot_at[next_boot - 1];
  }
};

void DropBooted(PoolState& p, double t) {
  while (!p.booting.empty() && p.booting.front() <= t) p.booting.pop_front();
}

}  // namespace

double JobPolicy::CheckpointInterval(const JobView& /*job*/, const SimView& /*view*/) const {
  return kInf;
}

double SimResult::AvgJctHours(std::int64_t first, std::int64_t last) const {
  double sum = 0;
  std::int64_t n = 0;
  for (const auto& j : jobs) {
    if (first >= 0 && (j.id < first || j.id >= last)) continue;
    if (j.finish_s < 0) continue;
    sum += j.finish_s - j.arrival_s;
    ++n;
  }
  return n == 0 ? 0 : sum / static_cast<double>(n) / 3600.0;
}

double SimResult::P99JctHours() const {
  std::vector<double> v;
  for (const auto& j : jobs) {
    if (j.finish_s >= 0) v.push_back(j.finish_s - j.arrival_s);
  }
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto k = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size()))) - 1;
  return v[std::min(k, v.size() - 1)] / 3600.0;
}

double SimResult::Utilization() const {
  return held_gpu_seconds > 0 ? busy_gpu_seconds / held_gpu_seconds : 0;
}

Result<SimResult> Simulate(const Workload& workload, const FleetSpec& fleet, JobPolicy& policy,
                           const SimOptions& options) {
  SEEDANCE_RETURN_IF_ERROR(workload.Validate());
  SEEDANCE_RETURN_IF_ERROR(fleet.Validate());
  if (workload.gpu_types != fleet.gpu_types) {
    return InvalidArgumentError("workload '" + workload.name + "' and fleet '" + fleet.name +
                                "' list different GPU types");
  }
  const auto wall_start = std::chrono::steady_clock::now();
  Rng rng(options.seed);
  const std::size_t n_pools = fleet.pools.size();
  SimResult res;
  res.policy = std::string(policy.name());
  res.cost_by_pool_usd.assign(n_pools, 0);
  res.gpu_seconds_by_pool.assign(n_pools, 0);

  std::vector<PoolState> pools(n_pools);
  for (std::size_t p = 0; p < n_pools; ++p) {
    if (fleet.pools[p].tier == Tier::kOwned) pools[p].held = fleet.pools[p].max_gpus;
  }
  std::vector<JobState> active;  // sorted by id
  const auto& jobs = workload.jobs;
  // The future: every arrival, plus the end of the running round or the next autoscaler tick.
  EventQueue events;
  for (std::size_t i = 0; i < jobs.size(); ++i) events.Push(jobs[i].arrival_s, EventKind::kArrival, i);
  std::size_t arrivals_left = jobs.size();
  // Earliest pending arrival (between steps the queue holds only arrivals).
  const auto next_arrival_s = [&events]() {
    return events.empty() ? std::numeric_limits<double>::infinity() : events.Top().time_s;
  };
  std::int64_t measured_left = -1;
  if (options.measure_first >= 0) {
    measured_left = 0;
    for (const auto& j : jobs) {
      measured_left += j.id >= options.measure_first && j.id < options.measure_last;
    }
  }

  auto capacity = [&](std::size_t p, double t) {
    const PoolSpec& spec = fleet.pools[p];
    if (spec.tier == Tier::kSpot && !spec.spot.empty()) {
      return std::min(spec.max_gpus, spec.spot.AvailableAt(t));
    }
    return spec.max_gpus;
  };

  // Utilization buckets.
  std::vector<double> util_held, util_busy;
  auto add_util = [&](double t0, double t1, double held, double busy) {
    const double b = options.utilization_bucket_s;
    while (t0 < t1) {
      auto k = static_cast<std::size_t>(t0 / b);
      double end = std::min(t1, (static_cast<double>(k) + 1) * b);
      if (util_held.size() <= k) {
        util_held.resize(k + 1, 0);
        util_busy.resize(k + 1, 0);
      }
      util_held[k] += held * (end - t0);
      util_busy[k] += busy * (end - t0);
      t0 = end;
    }
  };

  // Jobs that held GPUs of each pool in the current round (for the ledger observer).
  std::vector<std::vector<PoolUse>> pool_uses(n_pools);
  // Bills held cloud GPUs over [t0, t1] (owned GPUs are billed by use, in the round loop).
  auto bill_held = [&](double t0, double t1) {
    if (t1 <= t0) return;
    double held_total = 0;
    for (std::size_t p = 0; p < n_pools; ++p) {
      const PoolSpec& spec = fleet.pools[p];
      PoolState& ps = pools[p];
      if (spec.tier == Tier::kOwned) continue;
      held_total += ps.held;
      if (ps.held == 0) continue;
      double gpu_s = ps.held * (t1 - t0);
      double usd = gpu_s * spec.usd_per_gpu_hour / 3600.0;
      res.cost_by_pool_usd[p] += usd;
      res.gpu_cost_usd += usd;
      res.idle_held_usd += (ps.held - ps.in_use) * (t1 - t0) * spec.usd_per_gpu_hour / 3600.0;
      double boot_s = 0;
      for (double r : ps.booting) boot_s += std::max(0.0, std::min(r, t1) - t0);
      res.cold_start_idle_usd += fleet.ColdStartIdleUsd(boot_s);
      if (options.on_pool_interval) {
        PoolInterval iv{static_cast<int>(p), t0, t1, ps.held, spec.usd_per_gpu_hour, pool_uses[p]};
        options.on_pool_interval(iv);
      }
    }
    res.held_gpu_seconds += held_total * (t1 - t0);
    add_util(t0, t1, held_total, 0);
  };

  auto release = [&](std::size_t p, int n) {
    PoolState& ps = pools[p];
    n = std::min(n, ps.held - ps.in_use);
    for (int k = 0; k < n; ++k) {
      if (!ps.booting.empty()) ps.booting.pop_back();
      --ps.held;
    }
  };
  auto acquire = [&](std::size_t p, int n, double t) {
    PoolState& ps = pools[p];
    for (int k = 0; k < n; ++k) {
      ps.booting.push_back(t + fleet.cold_start_s);
      ++ps.held;
    }
  };

  const AutoscaleMode mode = policy.autoscale();
  const auto round_index = [&](double t) { return static_cast<std::int64_t>(t / options.round_s); };
  auto autoscale = [&](const std::vector<int>& demand, double t) {
    for (std::size_t p = 0; p < n_pools; ++p) {
      const PoolSpec& spec = fleet.pools[p];
      if (spec.tier == Tier::kOwned) continue;
      PoolState& ps = pools[p];
      DropBooted(ps, t);
      int cap = capacity(p, t);
      if (ps.held > cap) {  // spot taken back between rounds: nothing runs now, just shrink
        int drop = ps.held - cap;
        for (int k = 0; k < drop; ++k) {
          if (!ps.booting.empty()) ps.booting.pop_back();
          --ps.held;
        }
      }
      int d = std::min(demand[p], cap);
      int target = d;
      if (mode == AutoscaleMode::kPredictive) {
        ps.demand_by_round[round_index(t)] = demand[p];
        // Seasonal-naive forecast of demand growth: what was added a day ago over the next cold
        // start is pre-warmed on top of today's demand.
        const double day = 86400.0;
        int growth = 0;
        for (double x = t + options.round_s; x <= t + fleet.cold_start_s + options.round_s; x += options.round_s) {
          auto now_it = ps.demand_by_round.find(round_index(x - day));
          auto prev_it = ps.demand_by_round.find(round_index(x - day) - 1);
          if (now_it != ps.demand_by_round.end() && prev_it != ps.demand_by_round.end()) {
            growth += std::max(0, now_it->second - prev_it->second);
          }
        }
        target = std::min(cap, d + growth);
        if (target > ps.held) acquire(p, target - ps.held, t);
        if (target < ps.held) release(p, ps.held - target);
      } else {
        if (target > ps.held) {
          acquire(p, target - ps.held, t);
          ps.below_since = -1;
        } else if (target < ps.held) {
          if (ps.below_since < 0) ps.below_since = t;
          if (t - ps.below_since >= fleet.scale_down_delay_s) {
            release(p, ps.held - target);
            ps.below_since = -1;
          }
        } else {
          ps.below_since = -1;
        }
      }
    }
  };

  double owned_gpus = 0;
  for (const auto& spec : fleet.pools) {
    if (spec.tier == Tier::kOwned) owned_gpus += spec.max_gpus;
  }
  double t = jobs.empty() ? 0 : jobs.front().arrival_s;
  SimView view;
  view.fleet = &fleet;
  view.round_s = options.round_s;
  std::vector<int> demand(n_pools, 0);

  while (true) {
    if (measured_left == 0) break;
    if (arrivals_left == 0 && active.empty()) break;
    if (t > options.max_sim_s) break;
    // Deliver every event due by now (arrivals since the last decision, then the round end or
    // tick that brought us here).
    bool arrived = false;
    while (!events.empty() && events.Top().time_s <= t) {
      const Event e = events.Pop();
      if (e.kind != EventKind::kArrival) continue;
      --arrivals_left;
      arrived = true;
      const JobSpec& js = jobs[e.index];
      JobState st;
      st.spec = &js;
      st.remaining = js.total_steps;
      st.result_index = res.jobs.size();
      JobResult jr;
      jr.id = js.id;
      jr.arrival_s = js.arrival_s;
      jr.deadline_s = js.deadline_s;
      jr.tenant = js.tenant;
      res.jobs.push_back(jr);
      active.push_back(st);
      policy.OnArrival(js, t);
    }
    if (arrived) {  // completions keep the order; only arrivals can break it
      std::sort(active.begin(), active.end(),
                [](const JobState& a, const JobState& b) { return a.spec->id < b.spec->id; });
    }
    if (active.empty()) {
      double next_t = next_arrival_s();
      bool any_held = false;
      for (std::size_t p = 0; p < n_pools; ++p) {
        any_held = any_held || (fleet.pools[p].tier != Tier::kOwned && pools[p].held > 0);
      }
      for (auto& u : pool_uses) u.clear();
      if (any_held || mode == AutoscaleMode::kPredictive) {
        next_t = std::min(next_t, t + options.round_s);
        std::fill(demand.begin(), demand.end(), 0);
        autoscale(demand, t);
      }
      if (next_t < next_arrival_s()) events.Push(next_t, EventKind::kTick);
      bill_held(t, next_t);
      t = next_t;
      continue;
    }

    // Policy.
    view.now = t;
    view.jobs.clear();
    for (const auto& st : active) {
      view.jobs.push_back(
          JobView{st.spec, st.remaining, st.pool, st.ever_ran, st.preemptions, st.interrupted_at_s, st.ran_s});
    }
    view.pools.clear();
    for (std::size_t p = 0; p < n_pools; ++p) {
      DropBooted(pools[p], t);
      view.pools.push_back(PoolView{&fleet.pools[p], pools[p].held, Ready(pools[p], t),
                                    capacity(p, t)});
    }
    std::vector<Assignment> wish = policy.Schedule(view, rng);
    ++res.rounds;
    res.decisions += static_cast<std::int64_t>(wish.size());

    std::unordered_map<std::int64_t, std::size_t> index_of;
    index_of.reserve(active.size() * 2);
    for (std::size_t i = 0; i < active.size(); ++i) index_of[active[i].spec->id] = i;
    std::fill(demand.begin(), demand.end(), 0);
    for (const auto& a : wish) {
      auto it = index_of.find(a.job_id);
      if (it == index_of.end() || a.pool < 0 || a.pool >= static_cast<int>(n_pools)) continue;
      demand[static_cast<std::size_t>(a.pool)] += active[it->second].spec->gpus;
    }
    autoscale(demand, t);

    for (auto& u : pool_uses) u.clear();
    // Start what fits on ready GPUs.
    struct Run {
      std::size_t job;
      int pool;
      double held_from;  // when its GPUs are ready
      double start;    // when progress starts (after a restart)
      double rate;     // steps per second while running
      double steps;    // steps it will do if not interrupted
      double finish;   // when those steps are done
      double ckpt_interval;
    };
    std::vector<Run> runs;
    // GPUs of each pool that can take a job this round: those ready now and, outside Gavel's
    // rounds, those that finish booting before the round ends (a pod binds as soon as its node is
    // ready, not at the next decision).
    std::vector<UsableGpus> usable(n_pools);
    for (std::size_t p = 0; p < n_pools; ++p) {
      usable[p].ready = std::max(0, Ready(pools[p], t));
      if (!options.gavel_rounds) {
        for (double r : pools[p].booting) {
          if (r > t && r < t + options.round_s) usable[p].boot_at.push_back(r);
        }
      }
      pools[p].in_use = 0;
    }
    std::vector<char> scheduled(active.size(), 0);
    for (const auto& a : wish) {
      auto it = index_of.find(a.job_id);
      if (it == index_of.end() || a.pool < 0 || a.pool >= static_cast<int>(n_pools)) continue;
      std::size_t i = it->second;
      if (scheduled[i]) continue;
      auto p = static_cast<std::size_t>(a.pool);
      JobState& st = active[i];
      double thr = st.spec->steps_per_s[static_cast<std::size_t>(fleet.pools[p].type)];
      if (thr <= 0 || usable[p].Left() < st.spec->gpus) continue;
      const double gpus_at = usable[p].Take(st.spec->gpus, t);
      pools[p].in_use += st.spec->gpus;
      scheduled[i] = 1;
      bool moved = st.ever_ran && st.pool != a.pool;
      double restart = (st.needs_restart || moved) ? fleet.restart_s : 0.0;
      double ckpt = kInf;
      if (fleet.pools[p].tier == Tier::kSpot) {
        ckpt = policy.CheckpointInterval(view.jobs[i], view);  // view.jobs is parallel to active
      }
      double rate = thr;
      if (std::isfinite(ckpt) && ckpt > 0) rate = thr * ckpt / (ckpt + fleet.checkpoint_cost_s);
      double run_s = std::max(0.0, t + options.round_s - gpus_at - restart);
      double steps = options.gavel_rounds ? std::floor(thr * options.round_s) : rate * run_s;
      steps = std::min(steps, st.remaining);
      double finish = gpus_at + restart + steps / rate;
      if (moved || st.pool != a.pool) st.since_ckpt_s = 0;
      runs.push_back(Run{i, a.pool, gpus_at, gpus_at + restart, rate, steps, finish, ckpt});
    }

    double round_end = t + options.round_s;
    if (options.gavel_rounds) {
      if (!runs.empty()) {
        round_end = t;
        for (const auto& r : runs) round_end = std::max(round_end, r.finish);
      } else {
        round_end = arrivals_left > 0 ? std::max(t, next_arrival_s()) : t + options.round_s;
      }
    }
    if (round_end <= t) round_end = t + 1e-6;

    // Spot interruptions inside the round: the latest-started (highest id) jobs go first.
    std::vector<double> stop_at(runs.size(), kInf);
    for (std::size_t p = 0; p < n_pools; ++p) {
      const PoolSpec& spec = fleet.pools[p];
      if (spec.tier != Tier::kSpot || spec.spot.empty() || pools[p].in_use == 0) continue;
      std::vector<std::size_t> mine;
      for (std::size_t k = 0; k < runs.size(); ++k) {
        if (runs[k].pool == static_cast<int>(p)) mine.push_back(k);
      }
      std::sort(mine.begin(), mine.end(), [&](std::size_t a, std::size_t b) {
        return active[runs[a].job].spec->id > active[runs[b].job].spec->id;
      });
      int used = pools[p].in_use;
      // A drop exactly at the round's end still interrupts the jobs running into it.
      for (double x = spec.spot.NextChangeAfter(t); x <= round_end && used > 0;
           x = spec.spot.NextChangeAfter(x)) {
        int cap = std::min(spec.max_gpus, spec.spot.AvailableAt(x));
        std::size_t k = 0;
        while (used > cap && k < mine.size()) {
          std::size_t r = mine[k++];
          bool completes = runs[r].steps >= active[runs[r].job].remaining && runs[r].finish <= x;
          if (stop_at[r] < kInf || completes) continue;
          stop_at[r] = x;
          used -= active[runs[r].job].spec->gpus;
        }
      }
    }

    // Apply progress.
    double busy_gpu_s = 0;
    for (std::size_t k = 0; k < runs.size(); ++k) {
      Run& r = runs[k];
      JobState& st = active[r.job];
      JobResult& jr = res.jobs[st.result_index];
      const PoolSpec& spec = fleet.pools[static_cast<std::size_t>(r.pool)];
      const double gpus = st.spec->gpus;
      bool interrupted = stop_at[k] < kInf;
      double end = interrupted ? stop_at[k] : std::min(r.finish, round_end);
      double progress_s = std::max(0.0, end - r.start);
      double steps = interrupted ? r.rate * progress_s : r.steps;
      double held_s = std::max(0.0, end - r.held_from);
      if (jr.first_start_s < 0) jr.first_start_s = r.held_from;
      st.ever_ran = true;
      st.needs_restart = false;
      st.pool = r.pool;
      st.ran_s += held_s;
      double useful_s = progress_s;
      if (interrupted) {
        // Work since the last checkpoint is lost.
        double period = std::isfinite(r.ckpt_interval) ? r.ckpt_interval + fleet.checkpoint_cost_s : kInf;
        double since = st.since_ckpt_s + progress_s;
        double lost_s = std::isfinite(period) ? std::fmod(since, period) : since;
        lost_s = std::min(lost_s, since);
        double lost_steps = std::min(st.spec->total_steps - st.remaining + steps, r.rate * lost_s);
        steps -= lost_steps;
        useful_s = std::max(0.0, progress_s - lost_s);
        st.since_ckpt_s = 0;
        st.needs_restart = true;
        ++st.preemptions;
        st.interrupted_at_s = stop_at[k];
        ++jr.preemptions;
        ++res.spot_interruptions;
      } else {
        st.since_ckpt_s += progress_s;
      }
      st.remaining -= steps;
      if (st.remaining < 1e-9 * st.spec->total_steps + 1e-9) st.remaining = 0;
      double gpu_s = gpus * held_s;
      jr.gpu_seconds += gpu_s;
      jr.useful_gpu_seconds += gpus * useful_s;
      res.useful_gpu_seconds += gpus * useful_s;
      res.gpu_seconds_by_pool[static_cast<std::size_t>(r.pool)] += gpu_s;
      pool_uses[static_cast<std::size_t>(r.pool)].push_back(PoolUse{st.spec->id, st.spec->tenant, gpu_s});
      busy_gpu_s += gpu_s;
      double usd = gpu_s * spec.usd_per_gpu_hour / 3600.0;
      jr.cost_usd += usd;
      if (spec.tier == Tier::kOwned) {
        res.cost_by_pool_usd[static_cast<std::size_t>(r.pool)] += usd;
        res.gpu_cost_usd += usd;
      }
      policy.OnExecuted(st.spec->id, r.pool, held_s);
      if (st.remaining <= 0) {
        jr.finish_s = options.gavel_rounds ? r.finish : end;
        jr.deadline_missed = jr.finish_s > jr.deadline_s;
      }
    }
    // Jobs that did not run lose their place (a checkpoint is taken at the round boundary).
    for (std::size_t i = 0; i < active.size(); ++i) {
      if (!scheduled[i] && active[i].ever_ran && active[i].pool >= 0) {
        active[i].pool = -1;
        active[i].since_ckpt_s = 0;
        active[i].needs_restart = true;
      }
    }
    res.busy_gpu_seconds += busy_gpu_s;
    // Owned capacity counts as held; the round's busy GPU-seconds are spread evenly over it.
    res.held_gpu_seconds += owned_gpus * (round_end - t);
    add_util(t, round_end, owned_gpus, busy_gpu_s / (round_end - t));
    bill_held(t, round_end);
    // Completions.
    std::vector<JobState> still;
    still.reserve(active.size());
    for (auto& st : active) {
      if (st.remaining <= 0) {
        JobResult& jr = res.jobs[st.result_index];
        policy.OnCompletion(*st.spec, jr.finish_s);
        if (measured_left > 0 && st.spec->id >= options.measure_first &&
            st.spec->id < options.measure_last) {
          --measured_left;
        }
      } else {
        still.push_back(st);
      }
    }
    active.swap(still);
    events.Push(round_end, EventKind::kRoundEnd);
    t = round_end;
  }

  // The reactive autoscaler keeps idle GPUs for its scale-down delay after the last job.
  if (mode == AutoscaleMode::kReactive) {
    for (auto& ps : pools) ps.in_use = 0;
    for (auto& u : pool_uses) u.clear();
    bill_held(t, t + fleet.scale_down_delay_s);
  }
  for (auto& jr : res.jobs) {
    if (jr.finish_s < 0) {
      ++res.unfinished;
    } else {
      res.makespan_s = std::max(res.makespan_s, jr.finish_s);
    }
    if (jr.deadline_missed || (jr.finish_s < 0 && jr.deadline_s < kInf)) ++res.deadline_misses;
  }
  res.total_cost_usd = res.gpu_cost_usd + res.cold_start_idle_usd;
  for (std::size_t k = 0; k < util_held.size(); ++k) {
    double b = options.utilization_bucket_s;
    res.utilization.push_back(
        UtilizationPoint{static_cast<double>(k) * b, util_held[k] / b, util_busy[k] / b});
  }
  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return res;
}

}  // namespace seedance::sim
