#include "seedance/sim/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "seedance/sim/billing.h"
#include "seedance/sim/capacity.h"
#include "seedance/sim/event_queue.h"
#include "seedance/sim/observation.h"

namespace seedance::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// One job started on a pool for the current round.
struct Run {
  std::size_t job;
  int pool;
  double held_from;  // when its GPUs are ready
  double start;      // when progress starts (after a restart)
  double rate;       // steps per second while running
  double steps;      // steps it will do if not interrupted
  double finish;     // when those steps are done
  double ckpt_interval;
};

}  // namespace

std::string_view DecisionActionName(DecisionAction action) {
  switch (action) {
    case DecisionAction::kStart: return "start";
    case DecisionAction::kStop: return "stop";
    case DecisionAction::kMigrate: return "migrate";
    case DecisionAction::kProvision: return "provision";
    case DecisionAction::kRelease: return "release";
    case DecisionAction::kFinish: return "finish";
    case DecisionAction::kInterrupt: return "interrupt";
  }
  return "?";
}

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

// The rounds: every round the policy sees the observation layer's view and answers with
// assignments; what fits on usable GPUs starts (Capacity), spot may interrupt it, progress and
// checkpoints are applied, GPUs are billed (Billing), and finished jobs leave.
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

  const auto emit = [&options](double time_s, std::int64_t job, DecisionAction action, int pool, int gpus) {
    if (options.on_decision) options.on_decision(Decision{time_s, job, action, pool, gpus});
  };
  const AutoscaleMode mode = policy.autoscale();
  Capacity capacity(fleet, mode, options.round_s, options.on_decision);
  Billing billing(fleet, options, &res);
  Observer observer(fleet, options);

  std::vector<ActiveJob> active;  // sorted by id
  const auto& jobs = workload.jobs;
  // The future: every arrival, plus the end of the running round or the next autoscaler tick.
  EventQueue events;
  for (std::size_t i = 0; i < jobs.size(); ++i) events.Push(jobs[i].arrival_s, EventKind::kArrival, i);
  std::size_t arrivals_left = jobs.size();
  // Earliest pending arrival (between steps the queue holds only arrivals).
  const auto next_arrival_s = [&events]() { return events.empty() ? kInf : events.Top().time_s; };
  std::int64_t measured_left = -1;
  if (options.measure_first >= 0) {
    measured_left = 0;
    for (const auto& j : jobs) {
      measured_left += j.id >= options.measure_first && j.id < options.measure_last;
    }
  }

  const double owned_gpus = capacity.OwnedGpus();
  double t = jobs.empty() ? 0 : jobs.front().arrival_s;
  SimView view;
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
      ActiveJob st;
      st.spec = &js;
      st.remaining = js.total_steps;
      st.result_index = res.jobs.size();
      st.service_s_by_pool.assign(n_pools, 0.0);
      JobResult jr;
      jr.id = js.id;
      jr.arrival_s = js.arrival_s;
      jr.deadline_s = js.deadline_s;
      jr.tenant = js.tenant;
      res.jobs.push_back(jr);
      active.push_back(std::move(st));
      const JobInfo submitted = js;  // a copy: a policy's reference cannot be cast back to the JobSpec
      policy.OnArrival(submitted, t);
    }
    if (arrived) {  // completions keep the order; only arrivals can break it
      std::sort(active.begin(), active.end(),
                [](const ActiveJob& a, const ActiveJob& b) { return a.spec->id < b.spec->id; });
    }
    if (active.empty()) {
      double next_t = next_arrival_s();
      billing.ClearUses();
      if (capacity.AnyCloudHeld() || mode == AutoscaleMode::kPredictive) {
        next_t = std::min(next_t, t + options.round_s);
        std::fill(demand.begin(), demand.end(), 0);
        capacity.Autoscale(demand, t);
      }
      if (next_t < next_arrival_s()) events.Push(next_t, EventKind::kTick);
      billing.BillHeld(capacity, t, next_t);
      t = next_t;
      continue;
    }

    // Policy.
    observer.Build(t, active, capacity, &view);
    if (policy.is_oracle()) policy.ObserveOracle(observer.BuildOracle(active));
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
    capacity.Autoscale(demand, t);

    billing.ClearUses();
    // Start what fits. GPUs of each pool that can take a job this round: those ready now and,
    // outside Gavel's rounds, those that finish booting before the round ends (a pod binds as
    // soon as its node is ready, not at the next decision).
    std::vector<Run> runs;
    std::vector<UsableGpus> usable(n_pools);
    for (std::size_t p = 0; p < n_pools; ++p) usable[p] = capacity.Usable(p, t, options.gavel_rounds);
    capacity.ClearInUse();
    std::vector<char> scheduled(active.size(), 0);
    for (const auto& a : wish) {
      auto it = index_of.find(a.job_id);
      if (it == index_of.end() || a.pool < 0 || a.pool >= static_cast<int>(n_pools)) continue;
      std::size_t i = it->second;
      if (scheduled[i]) continue;
      auto p = static_cast<std::size_t>(a.pool);
      ActiveJob& st = active[i];
      double thr = st.spec->steps_per_s[static_cast<std::size_t>(fleet.pools[p].type)];
      if (thr <= 0 || usable[p].Left() < st.spec->gpus) continue;
      const double gpus_at = usable[p].Take(st.spec->gpus, t);
      capacity.AddInUse(p, st.spec->gpus);
      scheduled[i] = 1;
      if (!st.running) {
        emit(t, st.spec->id, DecisionAction::kStart, a.pool, st.spec->gpus);
      } else if (st.pool != a.pool) {
        emit(t, st.spec->id, DecisionAction::kMigrate, a.pool, st.spec->gpus);
      }
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
    for (std::size_t i = 0; i < active.size(); ++i) {
      if (!scheduled[i] && active[i].running) {
        emit(t, active[i].spec->id, DecisionAction::kStop, active[i].pool, active[i].spec->gpus);
      }
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

    // Spot interruptions inside the round.
    std::vector<SpotRun> spot_runs;
    spot_runs.reserve(runs.size());
    for (const auto& r : runs) {
      const ActiveJob& st = active[r.job];
      spot_runs.push_back(SpotRun{r.pool, st.spec->id, st.spec->gpus, r.steps >= st.remaining ? r.finish : kInf});
    }
    const std::vector<double> stop_at = capacity.Interruptions(spot_runs, t, round_end);

    // Apply progress. Outcomes (finish, interrupt) are logged after the loop, in time order.
    double busy_gpu_s = 0;
    std::vector<Decision> outcomes;
    for (std::size_t k = 0; k < runs.size(); ++k) {
      Run& r = runs[k];
      ActiveJob& st = active[r.job];
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
      st.running = !interrupted;
      st.needs_restart = false;
      st.pool = r.pool;
      st.ran_s += held_s;
      st.service_s_by_pool[static_cast<std::size_t>(r.pool)] += held_s;
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
        outcomes.push_back(Decision{stop_at[k], st.spec->id, DecisionAction::kInterrupt, r.pool, st.spec->gpus});
      } else {
        st.since_ckpt_s += progress_s;
      }
      st.remaining -= steps;
      st.attained += steps;
      if (st.remaining < 1e-9 * st.spec->total_steps + 1e-9) st.remaining = 0;
      double gpu_s = gpus * held_s;
      jr.gpu_seconds += gpu_s;
      jr.useful_gpu_seconds += gpus * useful_s;
      res.useful_gpu_seconds += gpus * useful_s;
      res.gpu_seconds_by_pool[static_cast<std::size_t>(r.pool)] += gpu_s;
      billing.AddUse(static_cast<std::size_t>(r.pool), st.spec->id, st.spec->tenant, gpu_s);
      busy_gpu_s += gpu_s;
      double usd = spec.Usd(gpus, r.held_from, end);  // at the price in force at each instant
      jr.cost_usd += usd;
      if (spec.tier == Tier::kOwned && !spec.committed) {  // by use; committed pools: Billing
        res.cost_by_pool_usd[static_cast<std::size_t>(r.pool)] += usd;
        res.gpu_cost_usd += usd;
      }
      policy.OnExecuted(st.spec->id, r.pool, held_s);
      if (st.remaining <= 0) {
        jr.finish_s = options.gavel_rounds ? r.finish : end;
        jr.deadline_missed = jr.finish_s > jr.deadline_s;
        outcomes.push_back(Decision{jr.finish_s, st.spec->id, DecisionAction::kFinish, r.pool, st.spec->gpus});
      }
    }
    std::stable_sort(outcomes.begin(), outcomes.end(),
                     [](const Decision& a, const Decision& b) { return a.time_s < b.time_s; });
    for (const Decision& d : outcomes) emit(d.time_s, d.job_id, d.action, d.pool, d.gpus);
    // Jobs that did not run lose their place (a checkpoint is taken at the round boundary).
    for (std::size_t i = 0; i < active.size(); ++i) {
      if (!scheduled[i]) active[i].running = false;
      if (!scheduled[i] && active[i].ever_ran && active[i].pool >= 0) {
        active[i].pool = -1;
        active[i].since_ckpt_s = 0;
        active[i].needs_restart = true;
      }
    }
    res.busy_gpu_seconds += busy_gpu_s;
    billing.AddOwnedRound(owned_gpus, t, round_end, busy_gpu_s);
    billing.BillHeld(capacity, t, round_end);
    // Completions.
    std::vector<ActiveJob> still;
    still.reserve(active.size());
    for (auto& st : active) {
      if (st.remaining <= 0) {
        JobResult& jr = res.jobs[st.result_index];
        const JobInfo submitted = *st.spec;
        policy.OnCompletion(submitted, st.spec->total_steps, jr.finish_s);
        if (measured_left > 0 && st.spec->id >= options.measure_first &&
            st.spec->id < options.measure_last) {
          --measured_left;
        }
      } else {
        still.push_back(std::move(st));
      }
    }
    active.swap(still);
    events.Push(round_end, EventKind::kRoundEnd);
    t = round_end;
  }

  // The reactive autoscaler keeps idle GPUs for its scale-down delay after the last job.
  if (mode == AutoscaleMode::kReactive) {
    capacity.ClearInUse();
    billing.ClearUses();
    billing.BillHeld(capacity, t, t + fleet.scale_down_delay_s);
    capacity.ReleaseAll(t + fleet.scale_down_delay_s);
  } else {
    capacity.ReleaseAll(t);
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
  billing.Finish();
  res.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return res;
}

}  // namespace seedance::sim
