#include "seedance/sim/policies/gavel_policies.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>

#include "seedance/sim/lp.h"

namespace seedance::sim {

void GavelRoundPolicy::OnArrival(const JobInfo& job, double /*now*/) {
  std::size_t n = pool_time_.size();
  // Pool count is known only once Schedule has run; size lazily there.
  job_time_[job.id] = std::vector<double>(n, round_s_ / 2.0);
  deficit_[job.id] = std::vector<double>(n, 0.0);
  need_update_ = true;
}

double GavelRoundPolicy::CheckpointInterval(const JobView& /*job*/, const SimView& /*view*/) const {
  return spot_checkpoint_interval_s;
}

void GavelRoundPolicy::OnCompletion(const JobInfo& job, double /*total_steps*/, double /*now*/) {
  job_time_.erase(job.id);
  deficit_.erase(job.id);
  allocation_.erase(job.id);
  need_update_ = true;
}

void GavelRoundPolicy::OnExecuted(std::int64_t job_id, int pool, double seconds) {
  auto it = job_time_.find(job_id);
  auto p = static_cast<std::size_t>(pool);
  if (it != job_time_.end()) it->second[p] += seconds;
  pool_time_[p] += seconds;
}

void GavelRoundPolicy::ResetTimeRunSoFar(double now, std::size_t n_pools) {
  double elapsed = now - last_reset_;
  for (std::size_t p = 0; p < n_pools; ++p) {
    pool_time_[p] = 0;
    for (auto& [id, times] : job_time_) {
      double received = times[p] - round_s_ / 2.0;
      auto a = allocation_.find(id);
      double should = a == allocation_.end() ? 0.0 : a->second[p] * elapsed;
      deficit_[id][p] += should - received;
      times[p] = round_s_ / 2.0;
      pool_time_[p] += times[p];
    }
  }
  last_reset_ = now;
}

std::vector<Assignment> GavelRoundPolicy::Schedule(const SimView& view, Rng& rng) {
  const std::size_t n_pools = view.pools.size();
  round_s_ = view.round_s;
  if (pool_time_.size() != n_pools) {
    pool_time_.assign(n_pools, 0.0);
    for (auto& [id, v] : job_time_) v.assign(n_pools, round_s_ / 2.0);
    for (auto& [id, v] : deficit_) v.assign(n_pools, 0.0);
  }
  const double now = view.now;
  SimView capped;
  const SimView* v = &view;
  if (exclude_spot) {
    capped = view;
    for (auto& p : capped.pools) {
      if (p.info.tier == Tier::kSpot) p.capacity = 0;
    }
    v = &capped;
  }
  if (need_update_ && (!reset_once_ || now - last_reset_ >= min_reset_s)) {
    ResetTimeRunSoFar(now, n_pools);
    allocation_ = ComputeAllocation(*v, rng);
    need_update_ = false;
    reset_once_ = true;
  }
  // Priorities.
  std::map<std::int64_t, std::vector<double>> priority;
  for (const auto& jv : view.jobs) {
    std::vector<double> pr(n_pools, 0.0);
    auto a = allocation_.find(jv.info.id);
    const auto& times = job_time_[jv.info.id];
    if (a != allocation_.end()) {
      for (std::size_t p = 0; p < n_pools; ++p) {
        double x = a->second[p];
        double thr = jv.info.steps_per_s[static_cast<std::size_t>(view.pools[p].info.type)];
        if (x == 0.0 || thr == 0.0) continue;
        double fraction = pool_time_[p] == 0.0 ? 0.0 : times[p] / pool_time_[p];
        pr[p] = fraction > 0 ? x / fraction : x * 1e9;
      }
    }
    priority[jv.info.id] = std::move(pr);
  }
  // Pool order: committed pools first (owned, reserved: paid already), then fastest-first (Gavel:
  // v100, p100, k80), here by price then index; shuffled for heterogeneity-agnostic policies.
  std::vector<std::size_t> order(n_pools);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const PoolInfo& x = view.pools[a].info;
    const PoolInfo& y = view.pools[b].info;
    if (x.committed != y.committed) return x.committed;
    return x.usd_per_gpu_hour > y.usd_per_gpu_hour;
  });
  if (shuffle_pool_order()) {
    rng.Shuffle(order);
    std::stable_partition(order.begin(), order.end(), [&](std::size_t p) { return view.pools[p].info.committed; });
  }

  struct Entry {
    std::int64_t id;
    const JobInfo* info;
    std::size_t pool;
    double priority, deficit, allocation;
  };
  std::vector<Entry> queue;
  for (std::size_t p : order) {
    std::vector<Entry> per_pool;
    for (const auto& jv : view.jobs) {
      auto a = allocation_.find(jv.info.id);
      double x = a == allocation_.end() ? 0.0 : a->second[p];
      per_pool.push_back(Entry{jv.info.id, &jv.info, p, priority[jv.info.id][p],
                               deficit_[jv.info.id][p], x});
    }
    std::stable_sort(per_pool.begin(), per_pool.end(), [](const Entry& a, const Entry& b) {
      if (a.priority != b.priority) return a.priority > b.priority;
      if (a.deficit != b.deficit) return a.deficit > b.deficit;
      return a.allocation > b.allocation;
    });
    queue.insert(queue.end(), per_pool.begin(), per_pool.end());
  }
  std::vector<int> left(n_pools);
  for (std::size_t p = 0; p < n_pools; ++p) left[p] = v->pools[p].capacity;
  std::map<std::int64_t, bool> done;
  std::vector<Assignment> out;
  for (const auto& e : queue) {
    if (left[e.pool] == 0 || done.count(e.id)) continue;
    double thr = e.info->steps_per_s[static_cast<std::size_t>(view.pools[e.pool].info.type)];
    if (thr <= 0) continue;
    if (skip_zero_priority() && e.priority <= 0) continue;
    if (e.info->gpus > left[e.pool]) continue;
    left[e.pool] -= e.info->gpus;
    done[e.id] = true;
    out.push_back(Assignment{e.id, static_cast<int>(e.pool)});
  }
  if (spot_recovery) {
    // Spot could not take the job this round: the on-demand pool of the same type instead.
    for (const auto& jv : view.jobs) {
      const JobInfo& job = jv.info;
      auto a = allocation_.find(job.id);
      if (done.count(job.id) || a == allocation_.end()) continue;
      for (std::size_t p = 0; p < n_pools; ++p) {
        const PoolInfo& spot = view.pools[p].info;
        if (spot.tier != Tier::kSpot || a->second[p] <= 0 || left[p] >= job.gpus) continue;
        int od = -1;
        for (std::size_t q = 0; q < n_pools; ++q) {
          if (view.pools[q].info.type == spot.type && view.pools[q].info.tier == Tier::kOnDemand) od = static_cast<int>(q);
        }
        if (od < 0 || left[static_cast<std::size_t>(od)] < job.gpus) continue;
        left[static_cast<std::size_t>(od)] -= job.gpus;
        done[job.id] = true;
        out.push_back(Assignment{job.id, od});
        break;
      }
    }
  }
  return out;
}

namespace {
std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

GavelRoundPolicy::Allocation GavelFifoPolicy::ComputeAllocation(const SimView& view, Rng& rng) {
  const std::size_t n_pools = view.pools.size();
  std::vector<int> available(n_pools);
  for (std::size_t p = 0; p < n_pools; ++p) available[p] = view.pools[p].capacity;
  if (perf_) assigned_.clear();
  std::map<std::int64_t, const JobInfo*> active;
  for (const auto& jv : view.jobs) active[jv.info.id] = &jv.info;
  std::vector<std::int64_t> queue;
  for (const auto& [id, spec] : active) {
    if (!assigned_.count(id)) queue.push_back(id);
  }
  std::size_t qhead = 0;
  // Completed jobs hand their type to the next queued job (if it fits there).
  for (auto it = assigned_.begin(); it != assigned_.end();) {
    auto p = static_cast<std::size_t>(it->second);
    if (!active.count(it->first)) {
      if (qhead < queue.size()) {
        std::int64_t next = queue[qhead++];
        if (active[next]->gpus <= available[p]) {
          assigned_[next] = it->second;  // next > it->first is not guaranteed; map insert is safe
          available[p] -= active[next]->gpus;
        }
      }
      it = assigned_.erase(it);
    } else {
      available[p] -= active[it->first]->gpus;
      ++it;
    }
  }
  // Available types in name order (Gavel sorts worker-type names).
  std::vector<std::size_t> types;
  for (std::size_t p = 0; p < n_pools; ++p) {
    if (available[p] > 0) types.push_back(p);
  }
  std::sort(types.begin(), types.end(), [&](std::size_t a, std::size_t b) {
    return Lower(view.fleet.gpu_types[static_cast<std::size_t>(view.pools[a].info.type)]) <
           Lower(view.fleet.gpu_types[static_cast<std::size_t>(view.pools[b].info.type)]);
  });
  while (qhead < queue.size() && !types.empty()) {
    std::int64_t id = queue[qhead++];
    if (assigned_.count(id)) continue;
    const JobInfo* spec = active[id];
    std::vector<std::size_t> cands, orig;
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (available[types[i]] >= spec->gpus) {
        cands.push_back(types[i]);
        orig.push_back(i);
      }
    }
    if (cands.empty()) break;
    std::size_t idx = 0;
    std::size_t pool = 0;
    if (!perf_) {
      idx = static_cast<std::size_t>(rng.Uniform(cands.size()));
      pool = gavel_compat_ ? types.back() : cands[idx];
    } else {
      double best = -1;
      for (std::size_t i = 0; i < cands.size(); ++i) {
        double thr = spec->steps_per_s[static_cast<std::size_t>(view.pools[cands[i]].info.type)];
        if (thr > best) {
          best = thr;
          pool = cands[i];
          idx = i;
        }
      }
    }
    assigned_[id] = static_cast<int>(pool);
    available[pool] -= spec->gpus;
    if (available[pool] == 0) types.erase(types.begin() + static_cast<std::ptrdiff_t>(orig[idx]));
  }
  Allocation alloc;
  for (const auto& [id, pool] : assigned_) {
    std::vector<double> x(n_pools, 0.0);
    x[static_cast<std::size_t>(pool)] = 1.0;
    alloc[id] = std::move(x);
  }
  return alloc;
}

GavelRoundPolicy::Allocation GavelLasPolicy::ComputeAllocation(const SimView& view, Rng& /*rng*/) {
  const std::size_t n_pools = view.pools.size();
  const std::size_t n = view.jobs.size();
  Allocation alloc;
  if (n == 0) return alloc;
  // Coefficients: throughput / throughput on an equal share of every type (Gavel's isolated
  // allocation; its LP is symmetric across types, so the share is equal) x scale / weight.
  std::vector<std::vector<double>> c(n, std::vector<double>(n_pools, 0.0));
  for (std::size_t i = 0; i < n; ++i) {
    const JobInfo* s = &view.jobs[i].info;
    double iso = 0;
    for (std::size_t p = 0; p < n_pools; ++p) {
      double thr = agnostic_ ? 1.0 : s->steps_per_s[static_cast<std::size_t>(view.pools[p].info.type)];
      iso += thr / static_cast<double>(n_pools);
    }
    for (std::size_t p = 0; p < n_pools; ++p) {
      double thr = agnostic_ ? 1.0 : s->steps_per_s[static_cast<std::size_t>(view.pools[p].info.type)];
      c[i][p] = iso > 0 ? thr / iso * s->gpus / s->priority_weight : 0.0;
    }
  }
  LinearProgram lp(LinearProgram::Sense::kMaximize);
  std::vector<std::vector<int>> x(n, std::vector<int>(n_pools));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t p = 0; p < n_pools; ++p) x[i][p] = lp.AddColumn(0.0, 0.0, 1.0);
  }
  int tcol = lp.AddColumn(1.0, 0.0, std::numeric_limits<double>::infinity());
  std::vector<int> fair_rows(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::pair<int, double>> terms;
    for (std::size_t p = 0; p < n_pools; ++p) terms.emplace_back(x[i][p], c[i][p]);
    terms.emplace_back(tcol, -1.0);
    fair_rows[i] = lp.AddRow(terms, 0.0, std::numeric_limits<double>::infinity());
    std::vector<std::pair<int, double>> one;
    for (std::size_t p = 0; p < n_pools; ++p) one.emplace_back(x[i][p], 1.0);
    lp.AddRow(one, -std::numeric_limits<double>::infinity(), 1.0);
  }
  for (std::size_t p = 0; p < n_pools; ++p) {
    std::vector<std::pair<int, double>> terms;
    for (std::size_t i = 0; i < n; ++i) terms.emplace_back(x[i][p], view.jobs[i].info.gpus);
    lp.AddRow(terms, -std::numeric_limits<double>::infinity(), view.pools[p].capacity);
  }
  if (!lp.Solve().ok()) return alloc;
  double tstar = lp.value(tcol);
  // Second stage: fix t >= t* and maximize total normalized throughput.
  LinearProgram lp2(LinearProgram::Sense::kMaximize);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t p = 0; p < n_pools; ++p) x[i][p] = lp2.AddColumn(c[i][p], 0.0, 1.0);
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::pair<int, double>> terms, one;
    for (std::size_t p = 0; p < n_pools; ++p) {
      terms.emplace_back(x[i][p], c[i][p]);
      one.emplace_back(x[i][p], 1.0);
    }
    lp2.AddRow(terms, tstar * (1 - 1e-7), std::numeric_limits<double>::infinity());
    lp2.AddRow(one, -std::numeric_limits<double>::infinity(), 1.0);
  }
  for (std::size_t p = 0; p < n_pools; ++p) {
    std::vector<std::pair<int, double>> terms;
    for (std::size_t i = 0; i < n; ++i) terms.emplace_back(x[i][p], view.jobs[i].info.gpus);
    lp2.AddRow(terms, -std::numeric_limits<double>::infinity(), view.pools[p].capacity);
  }
  const LinearProgram* sol = &lp2;
  if (!lp2.Solve().ok()) sol = &lp;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> v(n_pools);
    for (std::size_t p = 0; p < n_pools; ++p) v[p] = std::clamp(sol->value(x[i][p]), 0.0, 1.0);
    alloc[view.jobs[i].info.id] = std::move(v);
  }
  return alloc;
}

Result<GavelCostSolution> SolveGavelCost(const GavelCostProblem& problem) {
  const std::size_t n = problem.throughput.size();
  const std::size_t k_types = problem.workers.size();
  GavelCostSolution out;
  if (n == 0) return out;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  auto solve = [&](bool with_slos, std::vector<std::vector<double>>* x, double* objective) -> Status {
    LinearProgram lp(LinearProgram::Sense::kMaximize);
    std::vector<std::vector<int>> col(n, std::vector<int>(k_types));
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t k = 0; k < k_types; ++k) {
        const double thr = problem.throughput[j][k];
        // A type the job cannot run on (throughput 0) adds nothing to the objective or to an SLO
        // row and would only take capacity: fixed at 0.
        col[j][k] = lp.AddColumn(thr / problem.cost[k], 0.0, thr > 0 ? 1.0 : 0.0);
      }
    }
    for (std::size_t j = 0; j < n; ++j) {
      std::vector<std::pair<int, double>> one;
      for (std::size_t k = 0; k < k_types; ++k) one.emplace_back(col[j][k], 1.0);
      lp.AddRow(one, -kInf, 1.0);
    }
    for (std::size_t k = 0; k < k_types; ++k) {
      std::vector<std::pair<int, double>> terms;
      for (std::size_t j = 0; j < n; ++j) terms.emplace_back(col[j][k], problem.scale_factor[j]);
      lp.AddRow(terms, -kInf, problem.workers[k]);
    }
    if (with_slos) {
      for (std::size_t j = 0; j < n && j < problem.min_throughput.size(); ++j) {
        if (!(problem.min_throughput[j] > 0)) continue;
        std::vector<std::pair<int, double>> terms;
        for (std::size_t k = 0; k < k_types; ++k) terms.emplace_back(col[j][k], problem.throughput[j][k]);
        lp.AddRow(terms, problem.min_throughput[j], kInf);
      }
    }
    SEEDANCE_RETURN_IF_ERROR(lp.Solve());
    x->assign(n, std::vector<double>(k_types, 0.0));
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t k = 0; k < k_types; ++k) (*x)[j][k] = std::clamp(lp.value(col[j][k]), 0.0, 1.0);
    }
    *objective = lp.objective();
    return Status::Ok();
  };
  const bool has_slos = std::any_of(problem.min_throughput.begin(), problem.min_throughput.end(),
                                    [](double v) { return v > 0; });
  if (has_slos && solve(true, &out.x, &out.objective).ok()) return out;
  out.slos_dropped = has_slos;
  SEEDANCE_RETURN_IF_ERROR(solve(false, &out.x, &out.objective));
  return out;
}

void GavelCostPolicy::OnCompletion(const JobInfo& job, double total_steps, double now) {
  estimator_.Observe(job, total_steps);
  GavelRoundPolicy::OnCompletion(job, total_steps, now);
}

GavelRoundPolicy::Allocation GavelCostPolicy::ComputeAllocation(const SimView& view, Rng& /*rng*/) {
  const std::size_t n_pools = view.pools.size();
  GavelCostProblem problem;
  double cheapest = std::numeric_limits<double>::infinity();
  for (const auto& p : view.pools) {
    if (p.info.MarginalUsdPerGpuHour() > 0) cheapest = std::min(cheapest, p.info.MarginalUsdPerGpuHour());
  }
  if (!std::isfinite(cheapest)) cheapest = 1.0;  // every pool committed: any equal positive price
  for (const auto& p : view.pools) {
    const double price = p.info.MarginalUsdPerGpuHour();
    problem.cost.push_back(price > 0 ? price : 0.01 * cheapest);
    problem.workers.push_back(p.capacity);
  }
  for (const auto& jv : view.jobs) {
    std::vector<double> thr(n_pools);
    for (std::size_t p = 0; p < n_pools; ++p) {
      thr[p] = jv.info.steps_per_s[static_cast<std::size_t>(view.pools[p].info.type)];
    }
    problem.throughput.push_back(std::move(thr));
    problem.scale_factor.push_back(jv.info.gpus);
    double need = 0;
    const double time_left = jv.info.deadline_s - view.now;
    if (slos_ && std::isfinite(jv.info.deadline_s) && time_left > 0) {
      need = estimator_.EstimateRemaining(jv.info, jv.attained_steps).remaining_steps / time_left;
    }
    problem.min_throughput.push_back(need);
  }
  Allocation alloc;
  auto solution = SolveGavelCost(problem);
  if (!solution.has_value()) return alloc;  // as LAS: no allocation this time, retried on the next change
  for (std::size_t j = 0; j < view.jobs.size(); ++j) alloc[view.jobs[j].info.id] = std::move(solution->x[j]);
  return alloc;
}

}  // namespace seedance::sim
