// Multi-region deadline jobs: the simulator and uniform progress round robin on hand-made 2- and
// 3-region traces (answers worked by hand), the omniscient planner against brute force and against
// the single-region planner, and the contract over every multi-region policy: no miss, never
// cheaper than the omniscient reference, and no look-ahead in any region.
#include "seedance/sim/deadline/multi_region.h"

#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "seedance/core/rng.h"
#include "seedance/sim/deadline/omniscient.h"

namespace seedance::sim::deadline {
namespace {

SpotTrace Trace(std::vector<std::uint8_t> a, std::int64_t gap = 600) {
  SpotTrace t;
  t.name = "test";
  t.gap_s = gap;
  t.available = std::move(a);
  return t;
}

constexpr Instance I = Instance::kIdle;
constexpr Instance S = Instance::kSpot;
constexpr Instance O = Instance::kOnDemand;
MultiDecision Spot(int r) { return {S, r}; }
const MultiDecision kIdle{I, 0};
const MultiDecision kOd{O, 0};

std::unique_ptr<MultiRegionPolicy> Make(const std::string& name, const std::vector<SpotTrace>* regions) {
  auto p = MakeMultiRegionPolicy(name, regions);
  EXPECT_TRUE(p.has_value()) << name;
  return std::move(*p);
}

class ScriptPolicy : public MultiRegionPolicy {
 public:
  explicit ScriptPolicy(std::vector<MultiDecision> s) : script_(std::move(s)) {}
  std::string_view Name() const override { return "script"; }
  void Start(const DeadlineJob&, std::int64_t, std::int64_t, int, int) override { i_ = 0; }
  MultiDecision Decide(const MultiObservation&) override { return i_ < script_.size() ? script_[i_++] : kIdle; }

 private:
  std::vector<MultiDecision> script_;
  std::size_t i_ = 0;
};

// Three regions, 600 s ticks, d = 300 s, 1800 s of work, deadline 7200 s (uniform progress stays
// ahead of C0 t / R0 throughout, so it never needs on-demand). Region 0 has spot for ticks 0-1,
// region 1 never, region 2 from tick 2 on. Round robin from region 0: spot there (300 + 600 s of
// work), preempted at tick 2; region 0 has none, so idle and look at region 1 next; region 1 has
// none at tick 3, idle, look at region 2; spot there at tick 4 (d, then 300 s), done at tick 5's
// end: 3600 s, two spot launches of 1200 s billed each = 2400. First-available (sky_spot) moves to
// region 2 at tick 2 and is done at 2400 s for the same cost.
TEST(MultiRegion, RoundRobinByHand) {
  const std::vector<SpotTrace> regions = {Trace({1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
                                          Trace({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}),
                                          Trace({0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})};
  const DeadlineJob job{1800, 7200, 300, 3.0};
  MultiRegionUniformProgress rr(MultiRegionUniformProgress::Mode::kRoundRobin);
  const MultiJobOutcome r = SimulateMultiRegionJob(regions, 0, job, 0, rr);
  EXPECT_EQ(r.decisions, (std::vector<MultiDecision>{Spot(0), Spot(0), kIdle, kIdle, Spot(2), Spot(2)}));
  EXPECT_EQ(r.job.finish_s, 3600);
  EXPECT_EQ(r.job.spot_billed_s, 2400);
  EXPECT_EQ(r.job.od_billed_s, 0);
  EXPECT_EQ(r.job.preemptions, 1);
  EXPECT_EQ(r.region_moves, 1);
  EXPECT_TRUE(r.job.met_deadline);

  MultiRegionUniformProgress any(MultiRegionUniformProgress::Mode::kFirstAvailable);
  const MultiJobOutcome a = SimulateMultiRegionJob(regions, 0, job, 0, any);
  EXPECT_EQ(a.decisions, (std::vector<MultiDecision>{Spot(0), Spot(0), Spot(2), Spot(2)}));
  EXPECT_EQ(a.job.finish_s, 2400);
  EXPECT_DOUBLE_EQ(a.job.cost, 2400);

  // Pinned to region 0, uniform progress waits, falls behind and finishes on-demand.
  auto pinned = Make("uniform-progress-spot-first", &regions);
  const MultiJobOutcome p = SimulateMultiRegionJob(regions, 0, job, 0, *pinned);
  EXPECT_TRUE(p.job.met_deadline);
  EXPECT_GT(p.job.od_billed_s, 0);
  EXPECT_EQ(p.region_moves, 0);
}

// Two regions where round robin must fall back to on-demand: region 0 has spot for one tick, region
// 1 none; 3000 s of work by 3900 s, d = 300 s (the Safety Net's slack is max(2d, d + tick) = 900 s).
// Tick 0: spot in 0 (d, then 300 s of work). Tick 1: preempted, slack 3300 - 2700 = 600 < 900 s, so
// uniform progress's safety rule commits to on-demand for the rest: d + 2700 s, done at 3600 s.
// Cost 600 + 3 x 3000.
TEST(MultiRegion, RoundRobinFallsBackToOnDemandByUniformProgress) {
  const std::vector<SpotTrace> regions = {Trace({1, 0, 0, 0, 0, 0, 0, 0, 0, 0}), Trace({0, 0, 0, 0, 0, 0, 0, 0, 0, 0})};
  const DeadlineJob job{3000, 3900, 300, 3.0};
  MultiRegionUniformProgress rr(MultiRegionUniformProgress::Mode::kRoundRobin);
  const MultiJobOutcome r = SimulateMultiRegionJob(regions, 0, job, 0, rr);
  EXPECT_EQ(r.decisions, (std::vector<MultiDecision>{Spot(0), kOd, kOd, kOd, kOd, kOd}));
  EXPECT_EQ(r.job.spot_billed_s, 600);
  EXPECT_EQ(r.job.od_billed_s, 3000);
  EXPECT_DOUBLE_EQ(r.job.cost, 600 + 3.0 * 3000);
  EXPECT_EQ(r.job.finish_s, 3600);
}

// Moving a running spot instance to another region is a restart: d again.
TEST(MultiRegion, MovingRegionsPaysTheChangeover) {
  const std::vector<SpotTrace> regions = {Trace({1, 1, 1, 1, 1, 1}), Trace({1, 1, 1, 1, 1, 1})};
  ScriptPolicy p({Spot(0), Spot(1), Spot(1), Spot(1)});
  const MultiJobOutcome r = SimulateMultiRegionJob(regions, 0, {1500, 6000, 300, 3.0}, 0, p);
  // Tick 0: 300 s of work; tick 1: d again, 300 s; ticks 2-3: 600 + 300.
  EXPECT_EQ(r.job.changeovers, 2);
  EXPECT_EQ(r.region_moves, 1);
  EXPECT_EQ(r.job.spot_billed_s, 2100);
  EXPECT_EQ(r.job.finish_s, 2100);
  EXPECT_EQ(r.job.preemptions, 0);
}

TEST(MultiRegion, SpotInARegionWithoutSpotIsInvalid) {
  const std::vector<SpotTrace> regions = {Trace({1, 1, 1, 1}), Trace({0, 0, 0, 0})};
  ScriptPolicy p({Spot(1), Spot(0), Spot(0)});
  const MultiJobOutcome r = SimulateMultiRegionJob(regions, 0, {600, 2400, 0, 3.0}, 0, p);
  EXPECT_EQ(r.job.invalid_requests, 1);
  EXPECT_EQ(r.job.finish_s, 1200);
}

// Issue 41, round 5: with the regions' spot prices known, Seedance reckons each region's spot
// benefit at its own price. Two regions with the same history (10-tick runs, 1-tick outages), both
// with spot now: at one price the first is taken; when the second is 5% cheaper, the second.
TEST(MultiRegion, SeedanceTakesTheCheaperOfTwoEquallyGoodRegions) {
  std::vector<std::uint8_t> a;
  for (int i = 0; i < 100; ++i) a.push_back(i % 11 != 10 ? 1 : 0);
  const std::vector<SpotTrace> regions = {Trace(a), Trace(a)};
  const DeadlineJob job{10 * 3600, 20 * 3600, 600, 3.0};
  MultiObservation obs;
  obs.job = &job;
  obs.gap_s = 600;
  obs.start_tick = 88;
  obs.now_tick = 88;  // both regions: a run starts now
  obs.remaining_compute_s = job.compute_s;
  obs.remaining_time_s = job.deadline_s;
  for (const SpotTrace& t : regions) {
    obs.spot_available.push_back(t.At(obs.now_tick));
    obs.past.emplace_back(&t, obs.now_tick);
  }
  SeedanceMultiRegionPolicy one_price;
  one_price.Start(job, 600, obs.start_tick, 2, 0);
  EXPECT_EQ(one_price.Decide(obs), Spot(0));
  obs.spot_price = {1.0, 0.95};
  SeedanceMultiRegionPolicy priced;
  priced.Start(job, 600, obs.start_tick, 2, 0);
  EXPECT_EQ(priced.Decide(obs), Spot(1));
}

// The multi-region planner is exact: it matches the cheapest of all 4^n decision sequences on two
// regions, and with one region it matches the single-region planner.
TEST(MultiRegionOmniscient, MatchesBruteForce) {
  Rng rng(5);
  for (int trial = 0; trial < 8; ++trial) {
    const int n = 6;
    std::vector<SpotTrace> regions;
    for (int r = 0; r < 2; ++r) {
      std::vector<std::uint8_t> a;
      for (int i = 0; i < n + 1; ++i) a.push_back(rng.Bernoulli(0.5) ? 1 : 0);
      regions.push_back(Trace(a));
    }
    const DeadlineJob job{static_cast<std::int64_t>(rng.UniformInt(900, 2400)), n * 600, trial % 2 == 0 ? 420 : 200,
                          3.0};
    double best = std::numeric_limits<double>::infinity();
    std::vector<MultiDecision> seq(n);
    const std::vector<MultiDecision> options = {kIdle, kOd, Spot(0), Spot(1)};
    std::function<void(int)> rec = [&](int i) {
      if (i == n) {
        ScriptPolicy p(seq);
        const MultiJobOutcome r = SimulateMultiRegionJob(regions, 0, job, 0, p);
        if (r.job.met_deadline && r.job.invalid_requests == 0) best = std::min(best, r.job.cost);
        return;
      }
      for (const MultiDecision& c : options) {
        seq[static_cast<std::size_t>(i)] = c;
        rec(i + 1);
      }
    };
    rec(0);
    const MultiOmniscientPlan plan = PlanMultiRegionOmniscient(regions, 0, job);
    ASSERT_EQ(plan.feasible, best < std::numeric_limits<double>::infinity()) << trial;
    if (!plan.feasible) continue;
    EXPECT_DOUBLE_EQ(plan.cost, best) << trial;
    MultiRegionOmniscientPolicy p(&regions);
    const MultiJobOutcome r = SimulateMultiRegionJob(regions, 0, job, 0, p);
    EXPECT_TRUE(r.job.met_deadline);
    EXPECT_DOUBLE_EQ(r.job.cost, plan.cost) << trial;
  }
}

// ---- Contract suite ----------------------------------------------------------------------------

struct Case {
  std::vector<SpotTrace> regions;
  std::int64_t start = 0;
  int home = 0;
  DeadlineJob job;
};

// 1-3 regions of random runs, jobs with the Safety Net's room.
std::vector<Case> RandomCases(std::uint64_t seed, int n) {
  Rng rng(seed);
  std::vector<Case> out;
  for (int i = 0; i < n; ++i) {
    Case c;
    const std::int64_t gap = rng.Bernoulli(0.5) ? 600 : 195;
    const auto nr = static_cast<int>(rng.UniformInt(1, 3));
    for (int r = 0; r < nr; ++r) {
      std::vector<std::uint8_t> a;
      bool up = rng.Bernoulli(0.5);
      while (a.size() < 900) {
        const auto len = rng.UniformInt(1, up ? 30 : 25);
        for (std::int64_t k = 0; k < len; ++k) a.push_back(up ? 1 : 0);
        up = !up;
      }
      a.resize(900);
      c.regions.push_back(Trace(a, gap));
    }
    c.home = static_cast<int>(rng.UniformInt(0, nr - 1));
    c.job.compute_s = rng.UniformInt(2, 16) * 1800;
    c.job.changeover_s = rng.Bernoulli(0.5) ? 72 : 720;
    const double frac = 0.5 + 0.45 * rng.UniformDouble();
    c.job.deadline_s = std::max(static_cast<std::int64_t>(static_cast<double>(c.job.compute_s) / frac),
                                c.job.compute_s + SafetyNetSlack(c.job, gap));
    c.job.od_price = 2.0 + 2.0 * rng.UniformDouble();
    const std::int64_t window = c.job.deadline_s / gap + 2;
    c.start = rng.UniformInt(0, 900 - window);
    out.push_back(std::move(c));
  }
  return out;
}

class MultiRegionContract : public ::testing::TestWithParam<std::string> {};

TEST_P(MultiRegionContract, NeverMissesNeverAsksForAbsentSpotNeverBeatsOmniscient) {
  for (const Case& c : RandomCases(31, 30)) {
    auto p = Make(GetParam(), &c.regions);
    const MultiJobOutcome r = SimulateMultiRegionJob(c.regions, c.start, c.job, c.home, *p);
    EXPECT_TRUE(r.job.met_deadline) << GetParam() << " start " << c.start;
    EXPECT_EQ(r.job.invalid_requests, 0) << GetParam();
    EXPECT_EQ(r.job.spot_compute_s + r.job.od_compute_s, c.job.compute_s);
    const MultiOmniscientPlan best = PlanMultiRegionOmniscient(c.regions, c.start, c.job);
    ASSERT_TRUE(best.feasible);
    EXPECT_GE(r.job.cost, best.cost - 1e-6) << GetParam();
  }
}

// Every region's series redrawn after tick `after`.
std::vector<SpotTrace> ScrambleAfter(const std::vector<SpotTrace>& regions, std::int64_t after, Rng& rng) {
  std::vector<SpotTrace> out = regions;
  for (SpotTrace& t : out) {
    for (std::int64_t i = after + 1; i < t.ticks(); ++i) t.available[static_cast<std::size_t>(i)] = rng.Bernoulli(0.5) ? 1 : 0;
  }
  return out;
}

// Cases in which a decision at or before the scramble point changed.
int LookAheadViolations(const std::string& policy, std::uint64_t seed) {
  int violations = 0;
  Rng rng(seed);
  for (const Case& c : RandomCases(seed, 20)) {
    auto p = Make(policy, &c.regions);
    const MultiJobOutcome a = SimulateMultiRegionJob(c.regions, c.start, c.job, c.home, *p);
    const auto t = rng.UniformInt(0, static_cast<std::int64_t>(a.decisions.size()) - 1);
    const std::vector<SpotTrace> scrambled = ScrambleAfter(c.regions, c.start + t, rng);
    auto q = Make(policy, &scrambled);
    const MultiJobOutcome b = SimulateMultiRegionJob(scrambled, c.start, c.job, c.home, *q);
    for (std::int64_t i = 0; i <= t; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (k >= b.decisions.size() || !(a.decisions[k] == b.decisions[k])) {
        ++violations;
        break;
      }
    }
  }
  return violations;
}

class MultiRegionOnline : public ::testing::TestWithParam<std::string> {};

TEST_P(MultiRegionOnline, NoLookAheadInAnyRegion) {
  for (std::uint64_t seed : {41u, 42u, 43u}) EXPECT_EQ(LookAheadViolations(GetParam(), seed), 0) << GetParam();
}

TEST_P(MultiRegionOnline, Deterministic) {
  for (const Case& c : RandomCases(44, 8)) {
    auto p = Make(GetParam(), &c.regions);
    const MultiJobOutcome a = SimulateMultiRegionJob(c.regions, c.start, c.job, c.home, *p);
    const MultiJobOutcome b = SimulateMultiRegionJob(c.regions, c.start, c.job, c.home, *p);
    EXPECT_EQ(a.decisions, b.decisions);
  }
}

// The look-ahead test can fail: the omniscient reference breaks it.
TEST(MultiRegionContractSelfCheck, OmniscientFailsTheLookAheadTest) {
  int v = 0;
  for (std::uint64_t seed : {41u, 42u, 43u}) v += LookAheadViolations("omniscient-multi-region", seed);
  EXPECT_GT(v, 0);
}

// With one region the multi-region planner is the single-region one; more regions never cost more.
TEST(MultiRegionOmniscient, OneRegionEqualsSingleRegionPlanAndMoreRegionsNeverCostMore) {
  for (const Case& c : RandomCases(51, 12)) {
    const OmniscientPlan single = PlanOmniscient(c.regions.front(), c.start, c.job);
    const MultiOmniscientPlan one = PlanMultiRegionOmniscient({c.regions.front()}, c.start, c.job);
    ASSERT_EQ(single.feasible, one.feasible);
    if (!single.feasible) continue;
    EXPECT_DOUBLE_EQ(single.cost, one.cost);
    const MultiOmniscientPlan all = PlanMultiRegionOmniscient(c.regions, c.start, c.job);
    EXPECT_LE(all.cost, one.cost + 1e-6);
  }
}

std::string TestName(const ::testing::TestParamInfo<std::string>& p) {
  std::string n = p.param;
  for (char& ch : n) {
    if (ch == '-') ch = '_';
  }
  return n;
}

std::vector<std::string> OnlineNames() {
  std::vector<std::string> v;
  for (const auto& n : MultiRegionPolicyNames()) {
    if (n != "omniscient-multi-region") v.push_back(n);
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, MultiRegionContract, ::testing::ValuesIn(MultiRegionPolicyNames()), TestName);
INSTANTIATE_TEST_SUITE_P(Online, MultiRegionOnline, ::testing::ValuesIn(OnlineNames()), TestName);

}  // namespace
}  // namespace seedance::sim::deadline
