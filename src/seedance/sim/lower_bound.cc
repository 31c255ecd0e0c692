#include "seedance/sim/lower_bound.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "seedance/sim/lp.h"

namespace seedance::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kHour = 3600.0;
// Above this many (gang size, relative-speed vector) groups, speeds are rounded up to a grid.
constexpr std::size_t kMaxSpeedGroups = 48;
// Run-time bins of the service-level LP: T_j / T_max >= 1 / kRuntimeRatio within a group.
constexpr double kRuntimeRatio = 1.25;
// The plain LP has at most kPlainBuckets buckets (of at least bucket_s). The service LP's are about
// max_avg_jct / kJctBuckets long, at most kMaxServiceBuckets of them and kServiceColumns work
// columns, and never coarser than the plain LP's (GLPK's time grows fast with the JCT rows).
constexpr double kPlainBuckets = 32;
constexpr double kJctBuckets = 8;
constexpr int kMaxServiceBuckets = 96;
constexpr int kServiceColumns = 6000;

// One job in the LP's units: work T (seconds on its fastest type), arrival, due time.
struct Job {
  double work, arrival, due;
};

struct Group {
  int gpus = 1;
  std::vector<double> speed;  // relative speed per GPU type (rounded up to the grid)
  std::vector<Job> jobs;
};

// r rounded up to the geometric grid q^n (n <= 0); q = 1 keeps r.
double RoundUp(double r, double q) {
  if (r <= 0 || q <= 1.0) return r;
  return std::min(1.0, std::pow(q, std::ceil(std::log(r) / std::log(q) - 1e-9)));
}

// Jobs keyed by (gang size, relative speeds rounded to grid q).
std::map<std::pair<int, std::vector<double>>, Group> MakeGroups(const Workload& w, double horizon, double q) {
  std::map<std::pair<int, std::vector<double>>, Group> groups;
  for (const auto& j : w.jobs) {
    const double best = *std::max_element(j.steps_per_s.begin(), j.steps_per_s.end());
    std::vector<double> rel;
    rel.reserve(j.steps_per_s.size());
    for (double s : j.steps_per_s) rel.push_back(RoundUp(s / best, q));
    const double work = j.total_steps / best;
    Group& g = groups[{j.gpus, rel}];
    g.gpus = j.gpus;
    g.speed = std::move(rel);
    // A deadline (or horizon) no schedule can meet is relaxed to the earliest possible finish.
    // In hours (the LP is better conditioned in hours than in seconds).
    const double due = std::max(j.arrival_s + work, std::min(horizon, j.deadline_s));
    g.jobs.push_back({work / kHour, j.arrival_s / kHour, due / kHour});
  }
  return groups;
}

// GPU-seconds of `pool` over [s, e): its quota, or the spot series (capped by the quota).
double Capacity(const PoolSpec& pool, double s, double e) {
  if (pool.tier != Tier::kSpot || pool.spot.empty()) return pool.max_gpus * (e - s);
  double sum = 0;
  for (double t = s; t < e;) {
    const double next = std::min(e, pool.spot.NextChangeAfter(t));
    sum += std::min(pool.max_gpus, pool.spot.AvailableAt(t)) * (next - t);
    t = next;
  }
  return sum;
}

struct Solved {
  double usd = 0;
  double plain_usd = 0;  // the optimum before the service level's rows
  int columns = 0, rows = 0, groups = 0;
  std::vector<double> usd_by_pool;
};

// What `jobs` allow over [s, e): gang-seconds while active, work that may be done by e (A), and
// work that must be done by e (D), in the header's units.
struct Envelope {
  double active = 0, arrived = 0, due = 0;
};
Envelope EnvelopeAt(const std::vector<Job>& jobs, double s, double e) {
  Envelope out;
  for (const auto& j : jobs) {
    out.active += std::max(0.0, std::min(e, j.due) - std::max(s, j.arrival));
    out.arrived += std::min(j.work, std::max(0.0, e - j.arrival));
    out.due += std::max(0.0, j.work - std::max(0.0, j.due - e));
  }
  return out;
}

// Adds z_k in [D(k), A(k)] with z_k = z_{k-1} + (work in k), the last one holding all the work:
// `work` holds bucket k's terms and gets -z_k (+ z_{k-1}); the row is added here.
int AddCumulative(LinearProgram& lp, std::vector<std::pair<int, double>> work, const Envelope& env, double total,
                  bool last, int prev_z) {
  const double hi = last ? total : env.arrived;
  const double lo = last ? total : std::min(env.due, env.arrived);
  const int z = lp.AddColumn(0.0, lo, hi);
  work.emplace_back(z, -1.0);
  if (prev_z >= 0) work.emplace_back(prev_z, 1.0);
  lp.AddRow(work, 0.0, 0.0);
  return z;
}

// Builds and solves the LP of the header on K buckets of length b (K b = horizon). With a service
// level, the JCT rows (4)-(5) are written on bins of run time across the speed groups: V_nk, the
// work of bin n's jobs in bucket k, meets bin n's envelopes (3) and sum_n V_nk = sum_g U_gk.
Result<Solved> Solve(const Workload& w, const FleetSpec& fleet, double horizon, int n_buckets, double q,
                     double max_avg_jct_s) {
  const bool jct = max_avg_jct_s > 0;
  const auto groups = MakeGroups(w, horizon, q);
  // Times below are hours: columns are GPU-hours, work is hours on the fastest type.
  const double level_h = max_avg_jct_s / kHour;
  horizon /= kHour;
  const double b = horizon / n_buckets;
  const std::size_t n_pools = fleet.pools.size();
  auto start = [&](int k) { return k * b; };
  auto end = [&](int k) { return k == n_buckets - 1 ? horizon : (k + 1) * b; };
  auto bucket_of = [&](double t) { return std::clamp(static_cast<int>(t / b), 0, n_buckets - 1); };
  LinearProgram lp(LinearProgram::Sense::kMinimize);
  std::vector<std::pair<int, std::size_t>> col_pool;  // (column, pool)
  std::vector<double> col_usd;                        // each column's price per GPU-hour
  std::vector<std::vector<std::vector<std::pair<int, double>>>> cap_terms(
      n_pools, std::vector<std::vector<std::pair<int, double>>>(static_cast<std::size_t>(n_buckets)));
  // sum_g U_gk per bucket, and every column's gang-seconds (service level only).
  std::vector<std::vector<std::pair<int, double>>> work_by_bucket(static_cast<std::size_t>(n_buckets));
  std::vector<std::pair<int, double>> gang_seconds;
  for (const auto& [key, g] : groups) {
    double first_arrival = kInf, last_due = 0, total = 0;
    for (const auto& j : g.jobs) {
      first_arrival = std::min(first_arrival, j.arrival);
      last_due = std::max(last_due, j.due);
      total += j.work;
    }
    const int first = bucket_of(first_arrival);
    const int last = std::clamp(static_cast<int>(std::ceil(last_due / b)) - 1, first, n_buckets - 1);
    int prev_z = -1;
    for (int k = first; k <= last; ++k) {
      std::vector<std::pair<int, double>> gang_terms, work_terms;
      for (std::size_t p = 0; p < n_pools; ++p) {
        const PoolSpec& ps = fleet.pools[p];
        const double r = g.speed[static_cast<std::size_t>(ps.type)];
        if (r <= 0) continue;
        // A spot price series: the lowest price in force during the bucket, which no GPU-hour
        // used in it can undercut (so the optimum stays a lower bound).
        const double usd = ps.MarginalMinPriceOver(start(k) * kHour, end(k) * kHour);
        const int col = lp.AddColumn(usd, 0.0, kInf);
        col_pool.emplace_back(col, p);
        col_usd.push_back(usd);
        cap_terms[p][static_cast<std::size_t>(k)].emplace_back(col, 1.0);
        gang_terms.emplace_back(col, 1.0 / g.gpus);
        work_terms.emplace_back(col, r / g.gpus);
        if (jct) {
          work_by_bucket[static_cast<std::size_t>(k)].emplace_back(col, r / g.gpus);
          gang_seconds.emplace_back(col, 1.0 / g.gpus);
        }
      }
      if (gang_terms.empty()) return InternalError("a job group has no pool of a type it can run on");
      const Envelope env = EnvelopeAt(g.jobs, start(k), end(k));
      lp.AddRow(gang_terms, -kInf, env.active);                                   // (2)
      prev_z = AddCumulative(lp, std::move(work_terms), env, total, k == last, prev_z);  // (3)
    }
  }
  for (std::size_t p = 0; p < n_pools; ++p) {
    for (int k = 0; k < n_buckets; ++k) {
      auto& terms = cap_terms[p][static_cast<std::size_t>(k)];
      if (!terms.empty()) lp.AddRow(terms, -kInf, Capacity(fleet.pools[p], start(k) * kHour, end(k) * kHour) / kHour);  // (1)
    }
  }
  // The plain rows first; the service level's rows then start from that optimal basis.
  Status st = lp.Solve();
  const double plain_usd = st.ok() ? lp.objective() : 0.0;
  if (st.ok() && jct) {
    std::map<int, std::vector<Job>> bins;  // run-time bin -> jobs
    for (const auto& [key, g] : groups) {
      for (const auto& j : g.jobs) {
        bins[static_cast<int>(std::floor(std::log(std::max(j.work, 1.0)) / std::log(kRuntimeRatio)))].push_back(j);
      }
    }
    std::vector<std::vector<std::pair<int, double>>> bin_work(static_cast<std::size_t>(n_buckets));
    std::vector<std::pair<int, double>> jct_terms;  // sum_n y_n
    for (const auto& [bin, jobs] : bins) {
      double first_arrival = kInf, total = 0, t_max = 0, work_arrival = 0;
      for (const auto& j : jobs) {
        first_arrival = std::min(first_arrival, j.arrival);
        total += j.work;
        t_max = std::max(t_max, j.work);
        work_arrival += j.work * j.arrival;
      }
      std::vector<std::pair<int, double>> delay_terms;  // sum_k s_k V_nk / T_max
      int prev_z = -1;
      for (int k = bucket_of(first_arrival); k < n_buckets; ++k) {
        const int v = lp.AddColumn(0.0, 0.0, kInf);
        bin_work[static_cast<std::size_t>(k)].emplace_back(v, 1.0);
        if (start(k) > 0) delay_terms.emplace_back(v, start(k) / t_max);
        prev_z = AddCumulative(lp, {{v, 1.0}}, EnvelopeAt(jobs, start(k), end(k)), total, k == n_buckets - 1, prev_z);
      }
      // (4) y_n >= sum T_j (column bound); y_n >= sum T_j / 2 + (sum_k s_k V_nk - sum T_j a_j) / T_max.
      const int y = lp.AddColumn(0.0, total, kInf);
      delay_terms.emplace_back(y, -1.0);
      lp.AddRow(delay_terms, -kInf, work_arrival / t_max - 0.5 * total);
      jct_terms.emplace_back(y, 1.0);
    }
    lp.AddRow(jct_terms, -kInf, level_h * static_cast<double>(w.jobs.size()));     // (5)
    lp.AddRow(gang_seconds, -kInf, level_h * static_cast<double>(w.jobs.size()));  // (6)
    for (int k = 0; k < n_buckets; ++k) {  // sum_n V_nk = sum_g U_gk
      auto terms = bin_work[static_cast<std::size_t>(k)];
      for (const auto& [col, coef] : work_by_bucket[static_cast<std::size_t>(k)]) terms.emplace_back(col, -coef);
      if (!terms.empty()) lp.AddRow(terms, 0.0, 0.0);
    }
    st = lp.Solve();
  }
  if (!st.ok()) return InternalError("cost lower bound: " + st.message() + " (is the fleet too small for the work?)");
  Solved out;
  out.usd = lp.objective();
  out.plain_usd = plain_usd;
  out.usd_by_pool.assign(n_pools, 0.0);
  for (std::size_t i = 0; i < col_pool.size(); ++i) {
    out.usd_by_pool[col_pool[i].second] += lp.value(col_pool[i].first) * col_usd[i];
  }
  out.columns = lp.columns();
  out.rows = lp.rows();
  out.groups = static_cast<int>(groups.size());
  return out;
}

}  // namespace

Result<LowerBound> CostLowerBound(const Workload& workload, const FleetSpec& fleet,
                                  const LowerBoundOptions& options) {
  SEEDANCE_RETURN_IF_ERROR(workload.Validate());
  SEEDANCE_RETURN_IF_ERROR(fleet.Validate());
  if (!(options.bucket_s > 0)) return InvalidArgumentError("lower bound: bucket_s must be > 0");
  const auto wall0 = std::chrono::steady_clock::now();
  LowerBound out;
  out.max_avg_jct_s = options.max_avg_jct_s;
  if (workload.jobs.empty()) return out;
  double horizon = options.horizon_s;
  if (horizon <= 0) {
    horizon = workload.jobs.back().arrival_s + 30 * 86400.0;
    for (const auto& j : workload.jobs) {
      if (std::isfinite(j.deadline_s)) horizon = std::max(horizon, j.deadline_s);
      // Room for the longest job to run on its fastest type after it arrives.
      double best = *std::max_element(j.steps_per_s.begin(), j.steps_per_s.end());
      horizon = std::max(horizon, j.arrival_s + 1.5 * j.total_steps / best + 2 * options.bucket_s);
    }
  }
  out.horizon_s = horizon;
  // The speed grid: exact when the workload has few distinct (gang, speed vector) groups.
  double q = 1.0;
  for (double step : {1.05, 1.1, 1.2, 1.5, 2.0, 4.0}) {
    if (MakeGroups(workload, horizon, q).size() <= kMaxSpeedGroups) break;
    q = step;
  }
  out.speed_grid = q;
  // The plain LP: buckets of at least bucket_s, at most kPlainBuckets of them.
  const int plain_k = std::max(1, static_cast<int>(std::ceil(horizon / std::max(options.bucket_s, horizon / kPlainBuckets))));
  Solved best;
  int k = plain_k;
  if (options.max_avg_jct_s <= 0) {
    SEEDANCE_ASSIGN_OR_RETURN(best, Solve(workload, fleet, horizon, plain_k, q, 0));
  } else {
    // Buckets of about max_avg_jct / 8 within the limits above (work columns: groups x their
    // pools x buckets).
    int per_bucket = 0;
    for (const auto& [key, g] : MakeGroups(workload, horizon, q)) {
      for (const auto& p : fleet.pools) per_bucket += g.speed[static_cast<std::size_t>(p.type)] > 0 ? 1 : 0;
    }
    const int want = static_cast<int>(std::ceil(horizon / (options.max_avg_jct_s / kJctBuckets)));
    k = std::max(plain_k, std::min({want, kMaxServiceBuckets, kServiceColumns / std::max(1, per_bucket)}));
    SEEDANCE_ASSIGN_OR_RETURN(Solved sl, Solve(workload, fleet, horizon, k, q, options.max_avg_jct_s));
    // The plain bound on its own buckets (the same LP when k == plain_k: its first optimum).
    Solved plain;
    plain.usd = sl.plain_usd;
    if (k != plain_k) {
      SEEDANCE_ASSIGN_OR_RETURN(plain, Solve(workload, fleet, horizon, plain_k, q, 0));
    }
    out.plain_kept = plain.usd > sl.usd;
    if (out.plain_kept && k != plain_k) sl.usd_by_pool = plain.usd_by_pool;
    sl.usd = std::max(plain.usd, sl.usd);
    best = std::move(sl);
  }
  out.usd = best.usd;
  out.usd_by_pool = best.usd_by_pool;
  // Committed pools are paid for every GPU whether used or not; every schedule runs at least from
  // the first arrival to the last one (the simulator bills them from the first arrival to its
  // end), so that span's bill is part of every schedule's cost.
  const double span_h = (workload.jobs.back().arrival_s - workload.jobs.front().arrival_s) / kHour;
  for (std::size_t p = 0; p < fleet.pools.size(); ++p) {
    const PoolSpec& ps = fleet.pools[p];
    if (!ps.committed) continue;
    const double usd = ps.max_gpus * ps.usd_per_gpu_hour * span_h;
    out.usd += usd;
    out.usd_by_pool[p] += usd;
  }
  out.columns = best.columns;
  out.rows = best.rows;
  out.job_classes = best.groups;
  out.bucket_s = horizon / k;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return out;
}

}  // namespace seedance::sim
