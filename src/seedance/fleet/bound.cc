#include "seedance/fleet/bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "seedance/fleet/fractional.h"
#include "seedance/sim/lp.h"

namespace seedance::fleet {

namespace {

// A job's useful work (PFLOP), its PFLOP per GPU-hour on fleet type t (0: it cannot run there),
// and its best such rate.
double JobWork(const TrainingJob& j) { return j.total_steps * j.pflop_per_step; }
double JobRate(const TrainingJob& j, std::size_t t) { return j.pflop_per_step * j.steps_per_s[t] * 3600.0 / j.gpus; }
double JobBestRate(const TrainingJob& j) {
  double best = 0;
  for (std::size_t t = 0; t < j.steps_per_s.size(); ++t) best = std::max(best, JobRate(j, t));
  return best;
}

}  // namespace

double BoundPoolGpusAt(const sim::PoolSpec& pool, double t) {
  if (pool.tier != sim::Tier::kSpot) return pool.max_gpus;
  // The engine holds spot nodes of kGpusPerNode while nodes x kGpusPerNode <= the GPUs available
  // (SpotReconcile, BootRoom): at most that many whole nodes' GPUs, and never above the pool.
  const int available = pool.spot.empty() ? pool.max_gpus : std::min(pool.max_gpus, pool.spot.AvailableAt(t));
  return std::min(pool.max_gpus, available / kGpusPerNode * kGpusPerNode);
}

namespace {

// Deadlines met may fall short of the base's count by this much in the LP (rounding only).
constexpr double kDeadlineSlack = 1e-9;

// Serving work per deployment and bucket: the requests served within SLO in each of Mélange's
// buckets, at the smaller of the two profiles' shares (whichever batching served them, at least
// that many fell in the bucket), and one GPU-hour's requests of the bucket per fleet type at the
// faster of the two batchings.
struct BucketWork {
  double requests = 0;                 // served within SLO over the week
  std::vector<double> per_gpu_hour;    // [fleet type], 0 = the type cannot serve the bucket
};

Result<std::vector<BucketWork>> ServingWork(const FleetWeekScenario& s, std::size_t d, double mtok_in_slo) {
  const ServingDeployment& sd = s.serving[d];
  const ServingProfile* profiles[] = {&sd.vllm, &sd.seedance};
  const std::size_t buckets = sd.seedance.bucket_share.size();
  if (sd.vllm.bucket_share.size() != buckets || sd.vllm.bucket_names != sd.seedance.bucket_names) {
    return InternalError("deployment " + sd.spec.name + ": the vllm and seedance profiles have different buckets");
  }
  const double tokens = sd.demand.tokens_per_request;
  const double requests = tokens > 0 ? mtok_in_slo * 1e6 / tokens : 0.0;
  std::vector<BucketWork> work(buckets);
  for (std::size_t b = 0; b < buckets; ++b) {
    work[b].requests = requests * std::min(sd.vllm.bucket_share[b], sd.seedance.bucket_share[b]);
    work[b].per_gpu_hour.assign(s.fleet.gpu_types.size(), 0.0);
    for (std::size_t t = 0; t < s.fleet.gpu_types.size(); ++t) {
      for (const ServingProfile* p : profiles) {
        for (std::size_t g = 0; g < p->gpus.size(); ++g) {
          if (p->gpus[g] != s.fleet.gpu_types[t]) continue;
          work[b].per_gpu_hour[t] = std::max(work[b].per_gpu_hour[t], p->bucket_rps[g][b] * 3600.0 / p->tp[g]);
        }
      }
    }
  }
  return work;
}

}  // namespace

const std::vector<std::string>& FleetWeekBoundConstraints() {
  static const std::vector<std::string> kConstraints = {
      "pools: per hour at most each pool's GPUs (owned and reserved fixed, on-demand quota, spot availability in whole 8-GPU nodes), at its lowest price in the hour",
      "training: a job's work only after it arrives, on at most its own GPUs, at most its GPUs times its best rate since arrival",
      "training: per class of rates (within 5 %), at the class's best rate per GPU type",
      "deadlines: sum over deadline jobs of the share done by the deadline (between arrival and deadline, on its own GPUs) >= the base's deadlines met",
      "serving: per Melange bucket at the faster batching's capacity per GPU on each type, within each hour's demand",
      "notebooks: at most one unit (an hour in use of the asked type's GPU) per session-hour in use, only after the session begins; one GPU-hour of type T supplies 1 unit on the asked type, else min(T's FP16 rate / the asked type's, 1 / T's smallest MIG slice fraction)",
  };
  return kConstraints;
}

void BoundDecomposition::Add(const BoundDecomposition& o) {
  if (gpu_types.empty()) gpu_types = o.gpu_types;
  for (auto [to, from] : {std::pair{&gpu_hours_by_use, &o.gpu_hours_by_use}, std::pair{&pool_gpu_hours, &o.pool_gpu_hours},
                          std::pair{&pool_usd, &o.pool_usd}}) {
    if (to->size() < from->size()) to->resize(from->size());
    for (std::size_t t = 0; t < from->size(); ++t) {
      for (std::size_t k = 0; k < 3; ++k) (*to)[t][k] += (*from)[t][k];
    }
  }
  committed_usd += o.committed_usd;
}

namespace {

// What the LP solves for: the least bill for `out`'s work and deadlines (the lower bound), or the
// most training work for at least `out`'s serving and deadlines, less r times the cloud bill (the
// useful-work bound; r is set by the caller through the pool columns' objective).
enum class BoundGoal { kLeastBill, kMostWork };

struct BuiltBound {
  std::unique_ptr<sim::LinearProgram> lp;
  struct UsedFor {
    int col;
    std::size_t type;
    std::size_t use;
  };
  struct PoolCol {
    int col;
    const sim::PoolSpec* pool;
    double price;
  };
  std::vector<UsedFor> used_for;   // each work column's type and use (0 training, 1 serving, 2 notebooks)
  std::vector<PoolCol> pool_cols;  // each pool column's pool and price
  std::vector<int> work_done;      // kMostWork: each class's work done by the week's end
  double committed = 0;            // the committed pools' bill
};

Result<BuiltBound> BuildBound(const FleetWeekScenario& s, const FleetWeekOutcome& out, BoundGoal goal) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const bool most_work = goal == BoundGoal::kMostWork;
  const std::size_t types = s.fleet.gpu_types.size();
  const auto periods = static_cast<std::size_t>(std::ceil(s.horizon_s / kBoundPeriodS));
  BuiltBound built;
  built.lp = std::make_unique<sim::LinearProgram>(most_work ? sim::LinearProgram::Sense::kMaximize
                                                            : sim::LinearProgram::Sense::kMinimize);
  sim::LinearProgram& lp = *built.lp;
  // GPU-hours of each type used in each period, to be covered by the pools' GPU-hours there.
  // use[t][p] collects the work columns (coefficient -1); the pools' columns are added below.
  std::vector<std::vector<std::vector<std::pair<int, double>>>> use(types, std::vector<std::vector<std::pair<int, double>>>(periods));
  auto period_end = [&](std::size_t p) { return std::min(s.horizon_s, static_cast<double>(p + 1) * kBoundPeriodS); };
  std::vector<BuiltBound::UsedFor>& used_for = built.used_for;
  std::vector<BuiltBound::PoolCol>& pool_cols = built.pool_cols;

  // Training: jobs of one rate vector (PFLOP per GPU-hour on each type) are one class: the work of
  // a class's jobs is interchangeable in a fluid schedule. A class may do, by the end of period p,
  // at most the work its jobs could have done since they arrived (each at most its own GPUs times
  // its best rate since its arrival, and at most its whole work), in each period on at most the
  // GPUs of its jobs present in it. Deadline-bearing jobs also get their own columns (below).
  if (out.training_pflop > 0 || most_work) {
    // Jobs whose rates agree within kBoundRateStep on every type share a class, at the highest
    // rate of its jobs on each type (optimistic: still a bound; far fewer columns).
    struct Class {
      std::vector<double> rate;
      std::vector<const TrainingJob*> jobs;
      std::vector<std::vector<int>> x;  // [period][type]: the class's GPU-hours there (-1: none)
    };
    std::map<std::vector<long>, Class> classes;
    std::vector<std::pair<const TrainingJob*, Class*>> deadline_jobs;
    for (const TrainingJob& j : s.jobs) {
      std::vector<double> rate(types);
      std::vector<long> key(types, -1);
      for (std::size_t t = 0; t < types; ++t) {
        rate[t] = JobRate(j, t);
        if (rate[t] > 0) key[t] = std::lround(std::floor(std::log(rate[t]) / std::log1p(kBoundRateStep)));
      }
      Class& c = classes[key];
      if (c.rate.empty()) c.rate.assign(types, 0.0);
      for (std::size_t t = 0; t < types; ++t) c.rate[t] = std::max(c.rate[t], rate[t]);
      c.jobs.push_back(&j);
      if (std::isfinite(j.deadline_s) && j.deadline_s <= s.horizon_s && j.deadline_s > j.arrival_s) deadline_jobs.push_back({&j, &c});
    }
    std::vector<std::pair<int, double>> total;
    for (auto& [key, c] : classes) {
      int prev = -1;  // the class's work done by the end of the previous period (a column)
      c.x.assign(periods, std::vector<int>(types, -1));
      for (std::size_t p = 0; p < periods; ++p) {
        const double from = static_cast<double>(p) * kBoundPeriodS, to = period_end(p);
        double reachable = 0, gpu_hours = 0;
        for (const TrainingJob* j : c.jobs) {
          if (j->arrival_s >= to) continue;  // not arrived yet
          reachable += std::min(JobWork(*j), j->gpus * JobBestRate(*j) * (to - j->arrival_s) / 3600.0);
          gpu_hours += j->gpus * (to - std::max(from, j->arrival_s)) / 3600.0;
        }
        // Cumulative work by the end of p (kMostWork: the week's end's is the objective).
        const int done = lp.AddColumn(most_work && p + 1 == periods ? 1.0 : 0.0, 0.0, reachable);
        std::vector<std::pair<int, double>> step{{done, 1.0}}, gang;
        if (prev >= 0) step.push_back({prev, -1.0});
        for (std::size_t t = 0; t < types && gpu_hours > 0; ++t) {
          if (c.rate[t] <= 0) continue;
          const int x = lp.AddColumn(0.0, 0.0, kInf);  // GPU-hours of type t in period p
          c.x[p][t] = x;
          step.push_back({x, -c.rate[t]});
          gang.push_back({x, 1.0});
          use[t][p].push_back({x, -1.0});
          used_for.push_back({x, t, 0});
        }
        // The work done in p is at most what its GPU-hours do (wasting hours never pays).
        lp.AddRow(step, -kInf, 0.0);
        if (!gang.empty()) lp.AddRow(gang, 0.0, gpu_hours);
        prev = done;
      }
      total.push_back({prev, 1.0});
      built.work_done.push_back(prev);
    }
    if (!most_work) lp.AddRow(total, out.training_pflop, kInf);

    // Deadlines (every stack meets at least the base's count): met_j, the share of job j's work
    // done by its deadline, is at most what its own GPUs at its best rate do between its arrival
    // and its deadline; that work is done inside the periods holding [arrival, deadline], on its
    // class's GPU-hours there, so for each such window the class's work in it is at least the
    // met shares' work of the class's deadline jobs whose windows lie inside it. A job that meets
    // its deadline has met_j = 1: the shares sum to at least the deadlines met.
    if (out.deadlines_met > 0) {
      struct Window {
        const TrainingJob* job;
        const Class* c;
        std::size_t first, last;  // periods holding [arrival, deadline]
        int met;
      };
      std::vector<Window> windows;
      std::vector<std::pair<int, double>> met_sum;
      for (const auto& [j, c] : deadline_jobs) {
        const double reach = j->gpus * JobBestRate(*j) * (j->deadline_s - j->arrival_s) / 3600.0;
        const int met = lp.AddColumn(0.0, 0.0, JobWork(*j) > 0 ? std::min(1.0, reach / JobWork(*j)) : 1.0);
        met_sum.push_back({met, 1.0});
        const auto first = static_cast<std::size_t>(j->arrival_s / kBoundPeriodS);
        const auto last = std::min(periods - 1, static_cast<std::size_t>(std::ceil(j->deadline_s / kBoundPeriodS)) - 1);
        windows.push_back({j, c, first, last, met});
      }
      for (const Window& w : windows) {
        std::vector<std::pair<int, double>> row;
        for (std::size_t p = w.first; p <= w.last; ++p) {
          for (std::size_t t = 0; t < types; ++t) {
            if (w.c->x[p][t] >= 0) row.push_back({w.c->x[p][t], -w.c->rate[t]});
          }
        }
        for (const Window& k : windows) {
          if (k.c == w.c && k.first >= w.first && k.last <= w.last) row.push_back({k.met, JobWork(*k.job)});
        }
        lp.AddRow(row, -kInf, 0.0);
      }
      lp.AddRow(met_sum, out.deadlines_met - kDeadlineSlack, kInf);
    }
  }

  // Serving: each deployment's requests within SLO per bucket (ServingWork), on any type at the
  // bucket's best rate, and in each period at most the requests demanded in it.
  for (std::size_t d = 0; d < s.serving.size(); ++d) {
    const double mtok = d < out.serving_mtok_in_slo_by_deployment.size() ? out.serving_mtok_in_slo_by_deployment[d] : 0.0;
    if (mtok <= 0) continue;
    SEEDANCE_ASSIGN_OR_RETURN(const std::vector<BucketWork> work, ServingWork(s, d, mtok));
    const Demand& dem = s.serving[d].demand;
    std::vector<double> demanded(periods, 0.0);
    for (std::size_t k = 0; k < dem.rps.size(); ++k) {
      const auto p = static_cast<std::size_t>(static_cast<double>(k) * dem.step_s / kBoundPeriodS);
      if (p < periods) demanded[p] += dem.rps[k] * dem.step_s;
    }
    // The largest buckets that hold kBoundServingShare of the requests; the smallest are left out
    // (less work: a weaker bound, still a bound, and a much smaller LP).
    std::vector<std::size_t> order(work.size());
    for (std::size_t b = 0; b < order.size(); ++b) order[b] = b;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return work[x].requests > work[y].requests; });
    double all = 0, kept = 0;
    for (const BucketWork& w : work) all += w.requests;
    std::vector<std::vector<std::pair<int, double>>> per_period(periods);
    for (std::size_t b : order) {
      const BucketWork& w = work[b];
      if (w.requests <= 0 || kept >= kBoundServingShare * all) continue;
      kept += w.requests;
      std::vector<std::pair<int, double>> served;
      for (std::size_t p = 0; p < periods; ++p) {
        if (demanded[p] <= 0) continue;
        for (std::size_t t = 0; t < types; ++t) {
          if (w.per_gpu_hour[t] <= 0) continue;
          const int y = lp.AddColumn(0.0, 0.0, kInf);
          served.push_back({y, w.per_gpu_hour[t]});
          per_period[p].push_back({y, w.per_gpu_hour[t]});
          use[t][p].push_back({y, -1.0});
          used_for.push_back({y, t, 1});
        }
      }
      if (served.empty()) return InternalError("the fleet has no GPU type for a bucket of deployment " + s.serving[d].spec.name);
      lp.AddRow(served, w.requests, kInf);
    }
    for (std::size_t p = 0; p < periods; ++p) {
      if (!per_period[p].empty()) lp.AddRow(per_period[p], 0.0, demanded[p] * (1 + 1e-9));
    }
  }

  // Notebooks: per type asked for, hours in use (each session at most one an hour, and no
  // earlier than it begins: by the end of p at most the in-use hours of the sessions begun by
  // then, each at most the time since it began), supplied by any type's GPU-hours at that type's
  // NotebookWorkPerGpuHour (a whole GPU of the asked type, a MIG slice of it or of another type).
  if (out.dev_active_gpu_hours > 0 && !most_work) {  // (kMostWork: notebooks left out, a looser bound)
    std::vector<std::pair<int, double>> total;
    for (std::size_t a = 0; a < types; ++a) {
      std::vector<double> per_gpu_hour(types);
      for (std::size_t t = 0; t < types; ++t) per_gpu_hour[t] = NotebookWorkPerGpuHour(s.fleet.gpu_types[a], s.fleet.gpu_types[t]);
      int prev = -1;
      for (std::size_t p = 0; p < periods; ++p) {
        // (+ one clock step each: the engine ends an active period at the step after it is over)
        double reachable = 0;
        for (const DevPod& d : s.dev) {
          if (static_cast<std::size_t>(d.type) != a || d.arrival_s >= period_end(p)) continue;
          reachable += (std::min(d.active_s, period_end(p) - d.arrival_s) + kStepS) / 3600.0;
        }
        if (reachable <= 0) continue;
        const int done = lp.AddColumn(0.0, 0.0, reachable);
        std::vector<std::pair<int, double>> step{{done, 1.0}};
        for (std::size_t t = 0; t < types; ++t) {
          if (per_gpu_hour[t] <= 0) continue;
          const int x = lp.AddColumn(0.0, 0.0, kInf);  // GPU-hours of type t for notebooks of type a
          use[t][p].push_back({x, -1.0});
          used_for.push_back({x, t, 2});
          step.push_back({x, -per_gpu_hour[t]});
        }
        if (prev >= 0) step.push_back({prev, -1.0});
        lp.AddRow(step, -kInf, 0.0);
        prev = done;
      }
      if (prev >= 0) total.push_back({prev, 1.0});
    }
    if (total.empty()) return InternalError("the week has notebook hours in use but no notebook sessions");
    lp.AddRow(total, out.dev_active_gpu_hours, kInf);
  }

  // The pools: each period's GPU-hours at the period's lowest price (committed pools: 0, their bill
  // is paid whatever runs) and capacity (spot: whole nodes within the availability series over the
  // period, BoundPoolGpusAt).
  double& committed = built.committed;
  for (const sim::PoolSpec& pool : s.fleet.pools) {
    const bool held = sim::AlwaysHeld(pool.tier);
    if (held) committed += pool.max_gpus * s.horizon_s / 3600.0 * pool.usd_per_gpu_hour;
    const auto t = static_cast<std::size_t>(pool.type);
    for (std::size_t p = 0; p < periods; ++p) {
      if (use[t][p].empty()) continue;
      double capacity_h = 0, price = kInf;
      for (double x = static_cast<double>(p) * kBoundPeriodS; x < period_end(p); x += kStepS) {
        capacity_h += BoundPoolGpusAt(pool, x) * kStepS / 3600.0;
        price = std::min(price, pool.PriceAt(x));
      }
      if (held || !std::isfinite(price)) price = 0.0;
      use[t][p].push_back({lp.AddColumn(most_work ? 0.0 : price, 0.0, capacity_h), 1.0});
      pool_cols.push_back({use[t][p].back().first, &pool, price});
    }
  }
  for (std::size_t t = 0; t < types; ++t) {
    for (std::size_t p = 0; p < periods; ++p) {
      if (!use[t][p].empty()) lp.AddRow(use[t][p], 0.0, kInf);
    }
  }
  return built;
}

}  // namespace

Result<double> FleetWeekLowerBoundUsd(const FleetWeekScenario& s, const FleetWeekOutcome& out, BoundDecomposition* by) {
  SEEDANCE_ASSIGN_OR_RETURN(BuiltBound built, BuildBound(s, out, BoundGoal::kLeastBill));
  sim::LinearProgram& lp = *built.lp;
  SEEDANCE_RETURN_IF_ERROR(lp.Solve());
  const std::size_t types = s.fleet.gpu_types.size();
  if (by != nullptr) {
    by->gpu_types = s.fleet.gpu_types;
    by->gpu_hours_by_use.assign(types, {});
    by->pool_gpu_hours.assign(types, {});
    by->pool_usd.assign(types, {});
    for (const auto& u : built.used_for) by->gpu_hours_by_use[u.type][u.use] += lp.value(u.col);
    for (const auto& c : built.pool_cols) {
      const std::size_t tier = sim::AlwaysHeld(c.pool->tier) ? 0 : c.pool->tier == sim::Tier::kSpot ? 2 : 1;
      const auto t = static_cast<std::size_t>(c.pool->type);
      by->pool_gpu_hours[t][tier] += lp.value(c.col);
      by->pool_usd[t][tier] += lp.value(c.col) * c.price;
    }
    by->committed_usd = built.committed;
  }
  return built.committed + lp.objective();
}

Result<UsefulWorkBound> FleetWeekUsefulWorkUpperBound(const std::vector<const FleetWeekScenario*>& weeks,
                                                      const std::vector<const FleetWeekOutcome*>& base) {
  if (weeks.size() != base.size() || weeks.empty()) return InternalError("useful-work bound: one base outcome per week");
  std::vector<BuiltBound> built;
  for (std::size_t i = 0; i < weeks.size(); ++i) {
    SEEDANCE_ASSIGN_OR_RETURN(BuiltBound b, BuildBound(*weeks[i], *base[i], BoundGoal::kMostWork));
    built.push_back(std::move(b));
  }
  // Dinkelbach's method on the set's PFLOP / $: maximize the PFLOP less r times the cloud bill
  // (the committed bill is paid whatever runs), set r to the solution's PFLOP per $ of its whole
  // bill, and repeat until r stops rising (it rises at every step to the optimum). r = 0 first: the
  // most work at any cloud bill.
  UsefulWorkBound best;
  double r = 0;
  for (int iteration = 0; iteration < kUsefulWorkBoundIterations; ++iteration) {
    UsefulWorkBound got;
    for (BuiltBound& b : built) {
      for (const auto& c : b.pool_cols) b.lp->SetObjective(c.col, -r * c.price);
      SEEDANCE_RETURN_IF_ERROR(b.lp->Solve());
      for (int col : b.work_done) got.pflop += b.lp->value(col);
      for (const auto& c : b.pool_cols) got.cloud_usd += b.lp->value(c.col) * c.price;
      got.committed_usd += b.committed;
    }
    got.iterations = iteration + 1;
    const bool rose = got.PflopPerUsd() > best.PflopPerUsd() * (1 + 1e-9);
    if (got.PflopPerUsd() >= best.PflopPerUsd()) best = got;
    if (!rose && iteration > 0) break;
    r = best.PflopPerUsd();
  }
  return best;
}

}  // namespace seedance::fleet
