// The contract every job policy keeps (like the placement contract suite in seedance/sched):
// determinism, never more GPUs than a pool has now, gang jobs whole on one feasible pool, and no
// look-ahead: rewriting the true sizes of unfinished jobs, the spot series and its price series after a time t
// leaves every decision before t byte-identical. Only the `seedance-oracle` reference may see
// the future, and a test shows that it does (so the look-ahead test can fail).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "seedance/core/rng.h"
#include "seedance/sim/engine.h"
#include "seedance/sim/policies/gavel_policies.h"
#include "seedance/sim/policies/seedance_cost_policy.h"
#include "seedance/sim/policies/skypilot_policy.h"

namespace seedance::sim {
namespace {

std::unique_ptr<JobPolicy> MakePolicy(const std::string& name) {
  if (name == "fifo") return std::make_unique<FifoOnDemandPolicy>();
  if (name == "gavel-las" || name == "gavel-las-spot") {
    auto p = std::make_unique<GavelLasPolicy>(false);
    if (name == "gavel-las") {
      p->exclude_spot = true;
    } else {
      p->spot_recovery = true;
    }
    return p;
  }
  if (name == "gavel-cost" || name == "gavel-cost-slo") {
    auto p = std::make_unique<GavelCostPolicy>(name == "gavel-cost-slo");
    p->spot_recovery = true;
    return p;
  }
  if (name == "skypilot") return std::make_unique<SkyPilotPolicy>();
  if (name == "skypilot-any-of" || name == "skypilot-spot-only") {
    SkyPilotPolicy::Options o;
    o.any_of = true;
    o.spot_only = name == "skypilot-spot-only";
    return std::make_unique<SkyPilotPolicy>(o);
  }
  config::CostAwareConfig c;
  if (name == "seedance-oracle") return std::make_unique<SeedanceCostPolicy>(c, /*oracle=*/true);
  return std::make_unique<SeedanceCostPolicy>(c);
}

// 40 jobs of three classes over two days on K80 and V100, gangs of 1, 2 and 4 GPUs.
Workload ContractWorkload(std::uint64_t seed) {
  Rng rng(seed);
  Workload w;
  w.name = "contract";
  w.gpu_types = {"K80", "V100"};
  const char* classes[] = {"resnet", "bert", "llm"};
  for (int i = 0; i < 40; ++i) {
    JobSpec j;
    j.id = i;
    j.arrival_s = i * 4000.0 + rng.UniformDouble() * 3000.0;
    j.job_type = classes[i % 3];
    j.tenant = i % 2 ? "alice" : "bob";
    j.gpus = 1 << (i % 3);
    double v100 = 1.0 + (i % 3);
    j.steps_per_s = {v100 * (0.3 + 0.2 * rng.UniformDouble()), v100};
    j.total_steps = v100 * 3600.0 * (0.3 + 8.0 * rng.UniformDouble() * rng.UniformDouble());
    if (i % 7 == 3) j.deadline_s = j.arrival_s + 40 * 3600.0;
    w.jobs.push_back(j);
  }
  return w;
}

// Half-hourly prices in [0.5, 4] $/GPU-hour from `from` to `to`, after `kept` (the points before `from`).
PriceSeries RandomPrices(Rng& rng, double from, double to, std::vector<PriceSeries::Point> kept) {
  for (double t = from; t < to; t += 1800) kept.push_back({t, 0.5 + 3.5 * rng.UniformDouble()});
  return PriceSeries(std::move(kept), std::nullopt);
}

// On-demand K80 ($0.9/h) and V100 ($3/h), 8 each, and V100 spot (a price series) following a random
// series of 30 days (no wrap-around within a run).
FleetSpec ContractFleet(std::uint64_t seed) {
  Rng rng(seed * 7 + 1);
  FleetSpec f;
  f.name = "contract";
  f.gpu_types = {"K80", "V100"};
  f.cold_start_s = 120;
  const double prices[] = {0.9, 3.0};
  for (int t = 0; t < 2; ++t) {
    PoolSpec p;
    p.type = t;
    p.tier = Tier::kOnDemand;
    p.max_gpus = 8;
    p.usd_per_gpu_hour = prices[t];
    f.pools.push_back(p);
  }
  std::vector<int> series;
  int level = 6;
  for (int k = 0; k < 30 * 240; ++k) {
    if (rng.UniformDouble() < 0.05) level = static_cast<int>(rng.Uniform(9));
    series.push_back(level);
  }
  PoolSpec spot;
  spot.type = 1;
  spot.tier = Tier::kSpot;
  spot.max_gpus = 8;
  spot.usd_per_gpu_hour = 1.0;
  spot.spot = SpotSeries(360, series, 1);
  // A price series: a new price every 30 minutes, $0.5 to $4 per GPU-hour (around V100
  // on-demand's $3, so it changes which pool is cheaper).
  spot.price = RandomPrices(rng, 0, 30 * 86400.0, {});
  spot.usd_per_gpu_hour = spot.price.At(0);
  f.pools.push_back(spot);
  return f;
}

// Checks every Schedule answer against the view it was given.
class ContractChecker : public JobPolicy {
 public:
  explicit ContractChecker(JobPolicy& inner) : inner_(inner) {}
  std::string_view name() const override { return inner_.name(); }
  std::vector<Assignment> Schedule(const SimView& view, Rng& rng) override {
    auto out = inner_.Schedule(view, rng);
    std::map<std::int64_t, const JobView*> jobs;
    for (const auto& jv : view.jobs) jobs[jv.info.id] = &jv;
    std::vector<int> used(view.pools.size(), 0);
    std::set<std::int64_t> seen;
    for (const auto& a : out) {
      ++assignments;
      auto it = jobs.find(a.job_id);
      if (it == jobs.end() || a.pool < 0 || a.pool >= static_cast<int>(view.pools.size())) {
        violations.push_back("unknown job or pool");
        continue;
      }
      const JobInfo& job = it->second->info;
      const auto p = static_cast<std::size_t>(a.pool);
      if (!seen.insert(a.job_id).second) violations.push_back("job assigned twice: gang split");
      if (job.steps_per_s[static_cast<std::size_t>(view.pools[p].info.type)] <= 0) {
        violations.push_back("job on a type it cannot run on");
      }
      used[p] += job.gpus;  // the whole gang on one pool
    }
    for (std::size_t p = 0; p < used.size(); ++p) {
      if (used[p] > view.pools[p].capacity) violations.push_back("over capacity at t=" + std::to_string(view.now));
    }
    return out;
  }
  void OnArrival(const JobInfo& j, double now) override { inner_.OnArrival(j, now); }
  void OnCompletion(const JobInfo& j, double steps, double now) override { inner_.OnCompletion(j, steps, now); }
  void OnExecuted(std::int64_t id, int pool, double s) override { inner_.OnExecuted(id, pool, s); }
  double CheckpointInterval(const JobView& j, const SimView& v) const override { return inner_.CheckpointInterval(j, v); }
  AutoscaleMode autoscale() const override { return inner_.autoscale(); }
  bool is_oracle() const override { return inner_.is_oracle(); }
  void ObserveOracle(const OracleView& o) override { inner_.ObserveOracle(o); }

  std::vector<std::string> violations;
  std::int64_t assignments = 0;

 private:
  JobPolicy& inner_;
};

struct Logged {
  SimResult result;
  std::vector<std::pair<double, std::string>> decisions;  // (time, byte-exact line)
  std::vector<Decision> raw;
};

Logged RunPolicy(const std::string& policy, const Workload& w, const FleetSpec& f, ContractChecker** checker = nullptr) {
  auto pol = MakePolicy(policy);
  static std::unique_ptr<ContractChecker> keep;
  keep = std::make_unique<ContractChecker>(*pol);
  Logged out;
  SimOptions o;
  o.seed = 3;
  o.on_decision = [&out](const Decision& d) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%a,%lld,%s,%d,%d", d.time_s, static_cast<long long>(d.job_id),
                  std::string(DecisionActionName(d.action)).c_str(), d.pool, d.gpus);
    out.decisions.emplace_back(d.time_s, buf);
    out.raw.push_back(d);
  };
  auto r = Simulate(w, f, *keep, o);
  EXPECT_TRUE(r.has_value()) << r.error().message();
  out.result = *r;
  if (checker) *checker = keep.get();
  return out;
}

// Decisions strictly before t.
std::vector<std::string> Before(const Logged& l, double t) {
  std::vector<std::string> v;
  for (const auto& [time, line] : l.decisions) {
    if (time < t) v.push_back(line);
  }
  return v;
}

// Rewrites what no policy may know at t: the true size of every job unfinished at t (never below
// the work it had done by then), the deadline of every job submitted after t (dropped, added or
// moved: it is part of a submission not yet made), the spot series from the first tick after t and
// the spot price series from its first change after t.
void ScrambleFuture(const SimResult& run, double t, std::uint64_t seed, Workload* w, FleetSpec* f) {
  Rng rng(seed);
  std::map<std::int64_t, double> finish;
  for (const auto& j : run.jobs) finish[j.id] = j.finish_s;
  for (auto& j : w->jobs) {
    auto it = finish.find(j.id);
    const bool done = it != finish.end() && it->second >= 0 && it->second <= t;
    if (done) continue;
    const double factor = j.arrival_s > t ? 0.3 + 3.0 * rng.UniformDouble() : 1.05 + 3.0 * rng.UniformDouble();
    j.total_steps *= factor;
    if (j.arrival_s > t) {
      const double u = rng.UniformDouble();
      j.deadline_s = u < 0.4 ? kNoDeadline : j.arrival_s + (2.0 + 60.0 * rng.UniformDouble()) * 3600.0;
    }
  }
  for (auto& p : f->pools) {
    if (p.spot.empty()) continue;
    std::vector<int> v;
    for (std::size_t k = 0; k < p.spot.ticks(); ++k) {
      const bool future = static_cast<double>(k) * p.spot.gap_s() > t;
      v.push_back(future ? static_cast<int>(rng.Uniform(9)) : p.spot.InstancesAtTick(k));
    }
    p.spot = SpotSeries(p.spot.gap_s(), v, p.spot.gpus_per_instance());
    if (p.price.empty()) continue;
    // The price series from its first change after t: a policy sees only the price in force now.
    std::vector<PriceSeries::Point> kept;
    for (const auto& pt : p.price.points()) {
      if (pt.t_s <= t) kept.push_back(pt);
    }
    if (kept.size() == p.price.points().size()) continue;
    const double from = p.price.points()[kept.size()].t_s;
    p.price = RandomPrices(rng, from, p.price.points().back().t_s + 1, std::move(kept));
  }
}

// Number of (seed, t) trials whose decisions before t changed after scrambling the future.
int LookAheadFailures(const std::string& policy, int trials) {
  int failures = 0;
  for (int s = 0; s < trials; ++s) {
    const auto seed = static_cast<std::uint64_t>(11 + s);
    Workload w = ContractWorkload(seed);
    FleetSpec f = ContractFleet(seed);
    Logged base = RunPolicy(policy, w, f);
    Rng rng(seed * 31);
    const double t = w.jobs.front().arrival_s + (0.2 + 0.6 * rng.UniformDouble()) * base.result.makespan_s;
    ScrambleFuture(base.result, t, seed + 100, &w, &f);
    Logged scrambled = RunPolicy(policy, w, f);
    EXPECT_FALSE(Before(base, t).empty());
    failures += Before(base, t) != Before(scrambled, t);
  }
  return failures;
}

class PolicyContract : public ::testing::TestWithParam<std::string> {};

TEST_P(PolicyContract, DeterministicForASeed) {
  Workload w = ContractWorkload(1);
  FleetSpec f = ContractFleet(1);
  Logged a = RunPolicy(GetParam(), w, f);
  Logged b = RunPolicy(GetParam(), w, f);
  EXPECT_EQ(a.decisions, b.decisions);
  EXPECT_EQ(a.result.total_cost_usd, b.result.total_cost_usd);
  EXPECT_EQ(a.result.unfinished, 0);
}

TEST_P(PolicyContract, NeverOverCapacityAndGangsWholeOnAFeasiblePool) {
  for (std::uint64_t seed : {std::uint64_t{1}, std::uint64_t{2}}) {
    ContractChecker* checker = nullptr;
    const Workload w = ContractWorkload(seed);
    Logged l = RunPolicy(GetParam(), w, ContractFleet(seed), &checker);
    EXPECT_GT(checker->assignments, 0);
    EXPECT_TRUE(checker->violations.empty()) << checker->violations.front();
    // What the engine started, stopped and moved is always a whole gang.
    for (const auto& d : l.raw) {
      if (d.job_id < 0) continue;
      EXPECT_EQ(d.gpus, w.jobs[static_cast<std::size_t>(d.job_id)].gpus) << DecisionActionName(d.action);
    }
  }
}

// The decision log carries the outcomes (issue 29): read back alone, it tells a completion from a
// decision. Every finished job has exactly one `finish`, at its finish time, on the pool it ran on;
// `interrupt` lines match the preemptions per job; each outcome falls while the job holds GPUs (after
// a start or migrate, before any stop / interrupt / finish); the log is in time order.
TEST_P(PolicyContract, DecisionLogRecordsEveryFinishAndInterruption) {
  int interrupts_seen = 0;
  for (std::uint64_t seed : {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{5}}) {
    const Workload w = ContractWorkload(seed);
    const Logged l = RunPolicy(GetParam(), w, ContractFleet(seed));
    std::map<std::int64_t, int> finishes;
    std::map<std::int64_t, int> interrupts;
    std::map<std::int64_t, int> holding;  // pool a job holds GPUs on now, -1: none
    double last = -1;
    for (const Decision& d : l.raw) {
      EXPECT_GE(d.time_s, last) << "log out of time order at " << d.time_s;
      last = std::max(last, d.time_s);
      if (d.job_id < 0) continue;
      auto [it, fresh] = holding.emplace(d.job_id, -1);
      int& on = it->second;
      switch (d.action) {
        case DecisionAction::kStart:
        case DecisionAction::kMigrate:
          on = d.pool;
          break;
        case DecisionAction::kStop:
          EXPECT_GE(on, 0) << "stop of job " << d.job_id << " that held no GPUs";
          on = -1;
          break;
        case DecisionAction::kFinish:
        case DecisionAction::kInterrupt:
          EXPECT_EQ(on, d.pool) << DecisionActionName(d.action) << " of job " << d.job_id << " at " << d.time_s;
          on = -1;
          (d.action == DecisionAction::kFinish ? finishes : interrupts)[d.job_id] += 1;
          break;
        default:
          ADD_FAILURE() << "job line with action " << DecisionActionName(d.action);
      }
      (void)fresh;
    }
    int total_interrupts = 0;
    for (const JobResult& jr : l.result.jobs) {
      EXPECT_EQ(finishes[jr.id], jr.finish_s >= 0 ? 1 : 0) << "job " << jr.id;
      EXPECT_EQ(interrupts[jr.id], jr.preemptions) << "job " << jr.id;
      total_interrupts += interrupts[jr.id];
    }
    for (const Decision& d : l.raw) {
      if (d.action == DecisionAction::kFinish) {
        EXPECT_EQ(d.time_s, l.result.jobs[static_cast<std::size_t>(d.job_id)].finish_s) << "job " << d.job_id;
      }
    }
    EXPECT_EQ(total_interrupts, l.result.spot_interruptions);
    interrupts_seen += total_interrupts;
  }
  std::printf("%s: %d interruptions logged\n", GetParam().c_str(), interrupts_seen);
  if (GetParam() == "seedance" || GetParam() == "gavel-las-spot" || GetParam() == "gavel-cost") {
    // interrupt lines are exercised
    EXPECT_GT(interrupts_seen, 0);
  }
}

TEST_P(PolicyContract, NoLookAhead) {
  if (GetParam() == "seedance-oracle") GTEST_SKIP() << "the oracle reference is exempt (see OracleSeesTheFuture)";
  EXPECT_EQ(LookAheadFailures(GetParam(), 20), 0);
}

INSTANTIATE_TEST_SUITE_P(AllJobPolicies, PolicyContract,
                         ::testing::Values("fifo", "gavel-las", "gavel-las-spot", "gavel-cost", "gavel-cost-slo",
                                           "skypilot", "skypilot-any-of",
                                           "skypilot-spot-only", "seedance",
                                           "seedance-oracle"),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           for (auto& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

// Gavel's cost policy on spot pools (issue 29): the property its paper reports for the cost
// policies (cost below a policy that ignores prices, OSDI'20 Section 7) on the contract fleet,
// against Gavel-LAS with the same spot pools and recovery.
TEST(GavelCostOnSpot, CostsLessThanGavelLasOnTheSameFleet) {
  for (std::uint64_t seed : {std::uint64_t{1}, std::uint64_t{2}}) {
    const Workload w = ContractWorkload(seed);
    const FleetSpec f = ContractFleet(seed);
    const double cost = RunPolicy("gavel-cost", w, f).result.total_cost_usd;
    const double las = RunPolicy("gavel-las-spot", w, f).result.total_cost_usd;
    std::printf("seed %llu: gavel-cost $%.2f, gavel-las-spot $%.2f\n", static_cast<unsigned long long>(seed),
                cost, las);
    EXPECT_LT(cost, las) << "seed " << seed;
  }
}

// The information contract in the types (issue 29): a policy gets value copies, so no cast of what
// it holds reaches a JobSpec's true size or a PoolSpec's future series.
static_assert(std::is_same_v<decltype(JobView::info), JobInfo>);
static_assert(std::is_same_v<decltype(PoolView::info), PoolInfo>);
static_assert(std::is_same_v<decltype(SimView::fleet), FleetInfo>);
static_assert(std::is_same_v<decltype(JobView::service_s_by_pool), std::vector<double>>);

// Records the address of every JobInfo / PoolInfo / FleetInfo a policy is handed.
class AddressProbe : public JobPolicy {
 public:
  std::string_view name() const override { return "probe"; }
  std::vector<Assignment> Schedule(const SimView& view, Rng& /*rng*/) override {
    seen.push_back(&view.fleet);
    std::vector<Assignment> out;
    for (const auto& jv : view.jobs) {
      seen.push_back(&jv.info);
      out.push_back(Assignment{jv.info.id, 0});
    }
    for (const auto& pv : view.pools) seen.push_back(&pv.info);
    return out;
  }
  void OnArrival(const JobInfo& job, double /*now*/) override { seen.push_back(&job); }
  void OnCompletion(const JobInfo& job, double /*steps*/, double /*now*/) override { seen.push_back(&job); }
  std::vector<const void*> seen;
};

TEST(PolicyContractTypes, PoliciesHoldCopiesNeverTheEnginesSpecs) {
  const Workload w = ContractWorkload(4);
  const FleetSpec f = ContractFleet(4);
  AddressProbe probe;
  ASSERT_TRUE(Simulate(w, f, probe, SimOptions{}).has_value());
  ASSERT_FALSE(probe.seen.empty());
  const auto* jobs_lo = reinterpret_cast<const char*>(w.jobs.data());
  const auto* jobs_hi = reinterpret_cast<const char*>(w.jobs.data() + w.jobs.size());
  const auto* pools_lo = reinterpret_cast<const char*>(f.pools.data());
  const auto* pools_hi = reinterpret_cast<const char*>(f.pools.data() + f.pools.size());
  for (const void* a : probe.seen) {
    const auto* c = static_cast<const char*>(a);
    EXPECT_FALSE(c >= jobs_lo && c < jobs_hi) << "a policy was handed a JobSpec";
    EXPECT_FALSE(c >= pools_lo && c < pools_hi) << "a policy was handed a PoolSpec";
    EXPECT_NE(a, static_cast<const void*>(&f)) << "a policy was handed the FleetSpec";
  }
}

// SkyPilot as its users run it (issue 29). Pools: K80 on-demand $0.9/h, V100 on-demand $3/h, V100
// spot $1/h; a 1-GPU job at 0.5 (K80) and 1 (V100) steps/s. Dollars per step: V100 spot 1, K80
// on-demand 1.8, V100 on-demand 3. One type (cheapest per step on-demand: K80) has no K80 spot, so
// it runs K80 on-demand; any_of takes V100 spot while it has room and fails over to K80 on-demand
// when it has none; spot-only waits for spot.
TEST(SkyPilotAnyOf, FailsOverDownTheOptimizersOrderAndSpotOnlyWaits) {
  SimView view;
  const double prices[] = {0.9, 3.0, 1.0};
  const int types[] = {0, 1, 1};
  const Tier tiers[] = {Tier::kOnDemand, Tier::kOnDemand, Tier::kSpot};
  for (int p = 0; p < 3; ++p) {
    PoolView pv;
    pv.info = PoolInfo{types[p], tiers[p], 4, prices[p]};
    pv.capacity = 4;
    view.pools.push_back(pv);
  }
  JobView jv;
  jv.info.id = 7;
  jv.info.gpus = 1;
  jv.info.steps_per_s = {0.5, 1.0};
  view.jobs.push_back(jv);
  Rng rng(1);
  const auto pool_of = [&](SkyPilotPolicy::Options o, int spot_room) {
    view.pools[2].capacity = spot_room;
    SkyPilotPolicy policy(o);
    const std::vector<Assignment> a = policy.Schedule(view, rng);
    return a.empty() ? -1 : a.front().pool;
  };
  SkyPilotPolicy::Options one_type;
  SkyPilotPolicy::Options any_of;
  any_of.any_of = true;
  SkyPilotPolicy::Options spot_only = any_of;
  spot_only.spot_only = true;
  EXPECT_EQ(pool_of(one_type, 4), 0);
  EXPECT_EQ(pool_of(any_of, 4), 2);
  EXPECT_EQ(pool_of(any_of, 0), 0);
  EXPECT_EQ(pool_of(spot_only, 4), 2);
  EXPECT_EQ(pool_of(spot_only, 0), -1);
}

TEST(PolicyContractPrices, ThePriceInForceReachesThePolicies) {
  // The no-look-ahead test rewrites future prices; it has teeth only if prices move decisions:
  // rewriting the whole price series (now included) changes Seedance's.
  const std::uint64_t seed = 11;
  Workload w = ContractWorkload(seed);
  FleetSpec f = ContractFleet(seed);
  Logged base = RunPolicy("seedance", w, f);
  Rng rng(99);
  for (auto& p : f.pools) {
    if (!p.price.empty()) p.price = RandomPrices(rng, 0, p.price.points().back().t_s + 1, {});
  }
  Logged other = RunPolicy("seedance", w, f);
  EXPECT_NE(base.decisions, other.decisions);
  // And the bill follows the series: spot is billed at the price in force, not the first price.
  EXPECT_NE(base.result.gpu_cost_usd, other.result.gpu_cost_usd);
}

TEST(PolicyContractOracle, OracleSeesTheFuture) {
  // The same look-ahead test catches the reference policy that reads true sizes and whole series.
  EXPECT_GT(LookAheadFailures("seedance-oracle", 6), 0);
}

}  // namespace
}  // namespace seedance::sim
