#include "seedance/sim/lower_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "seedance/sim/lp.h"

namespace seedance::sim {

Result<LowerBound> CostLowerBound(const Workload& workload, const FleetSpec& fleet,
                                  const LowerBoundOptions& options) {
  SEEDANCE_RETURN_IF_ERROR(workload.Validate());
  SEEDANCE_RETURN_IF_ERROR(fleet.Validate());
  const auto wall0 = std::chrono::steady_clock::now();
  LowerBound out;
  if (workload.jobs.empty()) return out;
  double horizon = options.horizon_s;
  if (horizon <= 0) horizon = workload.jobs.back().arrival_s + 30 * 86400.0;
  if (options.horizon_s <= 0) {
    for (const auto& j : workload.jobs) {
      if (std::isfinite(j.deadline_s)) horizon = std::max(horizon, j.deadline_s);
      // Room for the longest job to run on its fastest type after it arrives.
      double best = *std::max_element(j.steps_per_s.begin(), j.steps_per_s.end());
      horizon = std::max(horizon, j.arrival_s + 1.5 * j.total_steps / best + 2 * options.bucket_s);
    }
  }
  const bool jct = options.max_avg_jct_s > 0;
  if (jct) {
    // The open-ended bucket keeps the bound valid past any horizon, so a service-level bound
    // needs only a few average JCTs past the last arrival (finer buckets, tighter delays).
    horizon = std::min(horizon, workload.jobs.back().arrival_s + 8 * options.max_avg_jct_s);
  }
  // At most 64 buckets (160 under a service level, whose delays need a finer clock): long
  // horizons get coarser buckets (the LP stays small).
  const double want = jct ? std::max(900.0, std::min(options.bucket_s, options.max_avg_jct_s / 6.0)) : options.bucket_s;
  const double b = std::max(want, horizon / (jct ? 160.0 : 64.0));
  const auto n_buckets = static_cast<int>(std::ceil(horizon / b));
  out.bucket_s = b;
  out.max_avg_jct_s = options.max_avg_jct_s;
  struct Class {
    const JobSpec* proto;
    double work = 0;
    int jobs = 0;
    int first = 0, last = 0;  // bucket range, inclusive
    bool open_ended = false;  // may also run after the horizon (service-level bound only)
    double max_work = 0, max_arrival = 0;
    double runtime_s = 0;     // sum of the jobs' run times at their best speed
  };
  std::map<std::tuple<std::vector<double>, int, int, int, int>, Class> classes;
  for (const auto& j : workload.jobs) {
    int first = static_cast<int>(j.arrival_s / b);
    int last = std::isfinite(j.deadline_s) ? std::min(n_buckets - 1, static_cast<int>(j.deadline_s / b))
                                           : n_buckets - 1;
    const double best = *std::max_element(j.steps_per_s.begin(), j.steps_per_s.end());
    const double run_s = j.total_steps / best;
    const int bin = jct ? static_cast<int>(std::floor(std::log(std::max(run_s, 1.0)) / std::log(1.5))) : 0;
    auto& c = classes[{j.steps_per_s, j.gpus, first, last, bin}];
    c.proto = &j;
    c.work += j.total_steps;
    c.jobs += 1;
    c.first = first;
    c.last = last;
    // Relaxing a deadline in the last bucket to the open end only loosens the bound.
    c.open_ended = jct && last == n_buckets - 1;
    c.max_work = std::max(c.max_work, j.total_steps);
    c.max_arrival = std::max(c.max_arrival, j.arrival_s);
    c.runtime_s += run_s;
  }
  LinearProgram lp(LinearProgram::Sense::kMinimize);
  const std::size_t n_pools = fleet.pools.size();
  // pool_bucket_terms[p][bucket] collects columns for the capacity rows.
  std::vector<std::pair<int, std::size_t>> col_pool;  // (column, pool)
  std::vector<std::vector<std::vector<std::pair<int, double>>>> cap_terms(
      n_pools, std::vector<std::vector<std::pair<int, double>>>(static_cast<std::size_t>(n_buckets)));
  std::vector<std::pair<int, double>> jct_terms;  // sum_c y_c
  for (const auto& [key, c] : classes) {
    std::vector<std::pair<int, double>> work_terms;
    std::vector<std::vector<std::pair<int, double>>> speed_terms(static_cast<std::size_t>(n_buckets));
    std::vector<std::pair<int, double>> delay_terms;  // steps x delay / W_max
    const double gpus = c.proto->gpus;
    const int end = c.open_ended ? n_buckets : c.last;  // bucket n_buckets: after the horizon
    for (std::size_t p = 0; p < n_pools; ++p) {
      const PoolSpec& ps = fleet.pools[p];
      double thr = c.proto->steps_per_s[static_cast<std::size_t>(ps.type)];
      if (thr <= 0) continue;
      for (int k = c.first; k <= end; ++k) {
        int col = lp.AddColumn(ps.usd_per_gpu_hour / 3600.0, 0.0, std::numeric_limits<double>::infinity());
        work_terms.emplace_back(col, thr / gpus);
        col_pool.emplace_back(col, p);
        if (k < n_buckets) {
          cap_terms[p][static_cast<std::size_t>(k)].emplace_back(col, 1.0);
          speed_terms[static_cast<std::size_t>(k)].emplace_back(col, 1.0 / gpus);
        }
        const double delay = std::max(0.0, k * b - c.max_arrival);
        if (jct && delay > 0) delay_terms.emplace_back(col, thr / gpus * delay / c.max_work);
      }
    }
    lp.AddRow(work_terms, c.work, c.work);
    for (int k = c.first; k <= c.last; ++k) {
      auto& terms = speed_terms[static_cast<std::size_t>(k)];
      if (!terms.empty()) {
        lp.AddRow(terms, -std::numeric_limits<double>::infinity(), c.jobs * b);
      }
    }
    if (jct) {
      // y_c >= its run times; y_c >= half of them + the delay of its work.
      int y = lp.AddColumn(0.0, c.runtime_s, std::numeric_limits<double>::infinity());
      delay_terms.emplace_back(y, -1.0);
      lp.AddRow(delay_terms, -std::numeric_limits<double>::infinity(), -0.5 * c.runtime_s);
      jct_terms.emplace_back(y, 1.0);
    }
  }
  if (jct) {
    lp.AddRow(jct_terms, -std::numeric_limits<double>::infinity(),
              options.max_avg_jct_s * static_cast<double>(workload.jobs.size()));
  }
  for (std::size_t p = 0; p < n_pools; ++p) {
    const PoolSpec& ps = fleet.pools[p];
    for (int k = 0; k < n_buckets; ++k) {
      auto& terms = cap_terms[p][static_cast<std::size_t>(k)];
      if (terms.empty()) continue;
      double cap = ps.max_gpus;
      if (ps.tier == Tier::kSpot && !ps.spot.empty()) {
        // Average spot GPUs over the bucket.
        double sum = 0;
        int n = 0;
        for (double t = k * b; t < (k + 1) * b; t += ps.spot.gap_s()) {
          sum += std::min(ps.max_gpus, ps.spot.AvailableAt(t));
          ++n;
        }
        cap = n > 0 ? sum / n : 0;
      }
      lp.AddRow(terms, -std::numeric_limits<double>::infinity(), cap * b);
    }
  }
  Status s = lp.Solve();
  if (!s.ok()) return InternalError("cost lower bound: " + s.message() + " (is the fleet too small for the work?)");
  out.usd = lp.objective();
  out.usd_by_pool.assign(n_pools, 0.0);
  for (const auto& [col, p] : col_pool) {
    out.usd_by_pool[p] += lp.value(col) * fleet.pools[p].usd_per_gpu_hour / 3600.0;
  }
  out.columns = lp.columns();
  out.job_classes = static_cast<int>(classes.size());
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return out;
}

}  // namespace seedance::sim
