#include "seedance/tenancy/admission.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "seedance/tenancy/fairness.h"
#include "seedance/tenancy/quota.h"

namespace seedance::tenancy {
namespace {

// No nodes (Kueue's performance test has none): everything can be placed; telemetry by id.
class FakeEnv : public AdmissionEnv {
 public:
  std::map<std::int64_t, RunningState> running;
  bool place = true;
  RunningState Running(std::int64_t id) const override {
    auto it = running.find(id);
    return it == running.end() ? RunningState{} : it->second;
  }
  bool CanPlace(const WorkloadRequest&) override { return place; }
  std::optional<std::vector<std::int64_t>> VictimsForFit(const WorkloadRequest&,
                                                         std::span<const VictimCandidate>) override {
    return std::vector<std::int64_t>{};
  }
};

TenantConfig Cq(std::string name, std::string cohort, double nominal, std::optional<double> borrow = std::nullopt,
                std::optional<double> lend = std::nullopt, Tier tier = Tier::kSilver) {
  TenantConfig t;
  t.name = std::move(name);
  t.cohort = std::move(cohort);
  t.tier = tier;
  t.quota.push_back({"cpu", nominal, borrow, lend});
  return t;
}

WorkloadRequest Wl(std::int64_t id, int tenant, double cpu, int priority, double created = 0, Tier tier = Tier::kSilver) {
  return {id, tenant, tier, priority, created, {ToQuantity(cpu)}};
}

struct Harness {
  Admitter a;
  FakeEnv env;
  std::vector<AdmissionDecision> out;
  Harness(std::vector<TenantConfig> tenants, TenancyMode mode)
      : a(*QuotaBook::Build(tenants, mode != TenancyMode::kStrict), mode, Config(tenants)) {}
  static TenancyConfig Config(std::vector<TenantConfig> t) {
    TenancyConfig c;
    c.tenants = std::move(t);
    return c;
  }
  std::vector<AdmissionDecision> Cycle(double now = 0) {
    out.clear();
    a.Cycle(now, env, &out);
    return out;
  }
};

TEST(QuotaBookTest, KueueQuotaMath) {
  // Nominal 12 with lending limit 1 keeps 11 (docs/PROTOCOLS.md section 6).
  auto b = *QuotaBook::Build(std::vector<TenantConfig>{Cq("a", "c", 12, std::nullopt, 1), Cq("b", "c", 4)}, true);
  EXPECT_EQ(FromQuantity(b.Available(1, 0)), 5);  // own 4 + a's lendable 1
  EXPECT_EQ(b.Check(1, std::vector<Quantity>{ToQuantity(5)}), FitKind::kBorrow);
  EXPECT_EQ(b.Check(1, std::vector<Quantity>{ToQuantity(6)}), FitKind::kNoFit);
  EXPECT_EQ(b.Check(1, std::vector<Quantity>{ToQuantity(4)}), FitKind::kFit);
  b.Add(1, std::vector<Quantity>{ToQuantity(5)});
  EXPECT_EQ(FromQuantity(b.Available(0, 0)), 11);  // what it keeps; its lendable unit is lent
  EXPECT_TRUE(b.IsBorrowing(1));
}

TEST(QuotaBookTest, BorrowingLimitCapsBorrowing) {
  auto b = *QuotaBook::Build(std::vector<TenantConfig>{Cq("a", "c", 20, 5), Cq("b", "c", 20)}, true);
  EXPECT_EQ(FromQuantity(b.Available(0, 0)), 25);
  EXPECT_EQ(b.Check(0, std::vector<Quantity>{ToQuantity(26)}), FitKind::kNoFit);
  EXPECT_EQ(FromQuantity(b.PotentialAvailable(0, 0)), 25);
  EXPECT_EQ(FromQuantity(b.PotentialAvailable(1, 0)), 40);
}

TEST(QuotaBookTest, NoBorrowingWithoutCohortOrInStrictMode) {
  auto strict = *QuotaBook::Build(std::vector<TenantConfig>{Cq("a", "c", 20), Cq("b", "c", 20)}, false);
  EXPECT_EQ(strict.Check(0, std::vector<Quantity>{ToQuantity(21)}), FitKind::kNoFit);
  auto loner = *QuotaBook::Build(std::vector<TenantConfig>{Cq("a", "", 20), Cq("b", "c", 20)}, true);
  EXPECT_EQ(loner.Check(0, std::vector<Quantity>{ToQuantity(21)}), FitKind::kNoFit);
}

// reclaimWithinCohort: Any - a tenant back within nominal preempts a borrower of any priority.
TEST(AdmitterTest, ReclaimWithinCohortAny) {
  Harness r({Cq("a", "c", 20, 100), Cq("b", "c", 20, 100)}, TenancyMode::kKueue);
  r.a.Submit(Wl(1, 1, 40, /*priority=*/200));
  ASSERT_EQ(r.Cycle().size(), 1u);  // b borrows a's 20
  r.a.Submit(Wl(2, 0, 5, /*priority=*/50, 1));
  auto d = r.Cycle(1);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, AdmissionDecision::Kind::kEvict);
  EXPECT_EQ(d[0].id, 1);
  EXPECT_EQ(r.Cycle(1).size(), 0u);  // sticky head waits for the eviction
  r.a.Evicted(1, /*requeue=*/true);
  d = r.Cycle(2);
  ASSERT_GE(d.size(), 1u);
  EXPECT_EQ(d[0].id, 2);  // the reclaimer, non-borrowing first
}

// The borrowing mode (reclaimWithinCohort LowerPriority) keeps a higher-priority borrower.
TEST(AdmitterTest, ReclaimLowerPriorityKeepsHigherPriorityBorrower) {
  Harness r({Cq("a", "c", 20, 100), Cq("b", "c", 20, 100)}, TenancyMode::kBorrowing);
  r.a.Submit(Wl(1, 1, 40, 200));
  ASSERT_EQ(r.Cycle().size(), 1u);
  r.a.Submit(Wl(2, 0, 5, 50, 1));
  EXPECT_EQ(r.Cycle(1).size(), 0u);
}

// withinClusterQueue: LowerPriority - only strictly lower priority in the same queue.
TEST(AdmitterTest, WithinClusterQueueLowerPriority) {
  Harness r({Cq("a", "", 20)}, TenancyMode::kKueue);
  r.a.Submit(Wl(1, 0, 20, 100));
  ASSERT_EQ(r.Cycle().size(), 1u);
  r.a.Submit(Wl(2, 0, 10, 100, 1));  // equal priority: no preemption
  EXPECT_EQ(r.Cycle(1).size(), 0u);
  r.a.Submit(Wl(3, 0, 10, 150, 2));
  auto d = r.Cycle(2);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, AdmissionDecision::Kind::kEvict);
  EXPECT_EQ(d[0].for_id, 3);
}

// BestEffortFIFO: a head that does not fit steps aside; the next smaller one is admitted.
TEST(AdmitterTest, BestEffortFifoSkipsAHeadThatDoesNotFit) {
  Harness r({Cq("a", "", 20)}, TenancyMode::kKueue);
  r.a.Submit(Wl(1, 0, 15, 100));
  r.a.Submit(Wl(2, 0, 10, 100, 1));  // does not fit after 1
  r.a.Submit(Wl(3, 0, 5, 100, 2));
  auto d = r.Cycle();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].id, 1);
  EXPECT_EQ(d[1].id, 3);
  r.a.Finished(1);  // quota released: the inadmissible one returns
  d = r.Cycle(5);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 2);
}

TEST(AdmitterTest, NonBorrowingBeforeBorrowingThenPriority) {
  Harness r({Cq("a", "c", 10, 100), Cq("b", "c", 10, 100)}, TenancyMode::kKueue);
  r.a.Submit(Wl(1, 0, 15, 500));  // borrows 5, high priority
  r.a.Submit(Wl(2, 1, 10, 1, 1));  // within nominal, low priority
  auto d = r.Cycle();
  ASSERT_EQ(d.size(), 1u);  // only one fits the 20 in the cohort after the other
  EXPECT_EQ(d[0].id, 2);
}

// Borrowing limit: a queue may grow to nominal + borrowing limit, no further, even with the
// cohort idle; the one that fits is flagged as borrowing.
TEST(AdmitterTest, KueueBorrowingLimitCapsAdmission) {
  Harness r({Cq("a", "c", 20, 5), Cq("b", "c", 20, 100)}, TenancyMode::kKueue);
  r.a.Submit(Wl(1, 0, 26, 100));
  EXPECT_EQ(r.Cycle().size(), 0u);  // 26 > 20 + 5
  r.a.Submit(Wl(2, 0, 25, 100, 1));
  auto d = r.Cycle(1);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 2);
  EXPECT_TRUE(d[0].borrowing);
  EXPECT_FALSE(r.a.IsAdmitted(1));
}

// With borrowWithinCohort unset, a queue never preempts in order to borrow: a request above its
// nominal waits even though a borrower of lower priority holds the cohort's quota.
TEST(AdmitterTest, KueueDoesNotPreemptToBorrow) {
  Harness r({Cq("a", "c", 20, 100), Cq("b", "c", 20, 100)}, TenancyMode::kKueue);
  r.a.Submit(Wl(1, 1, 40, 50));
  ASSERT_EQ(r.Cycle().size(), 1u);
  r.a.Submit(Wl(2, 0, 25, 200, 1));
  EXPECT_EQ(r.Cycle(1).size(), 0u);
  EXPECT_EQ(r.a.pending(), 1u);
}

// Reclaim takes the most recently admitted borrower's workload first, and no more than needed.
TEST(AdmitterTest, KueueReclaimEvictsMostRecentlyAdmittedFirst) {
  Harness r({Cq("a", "c", 20, 100), Cq("b", "c", 20, 100)}, TenancyMode::kKueue);
  r.a.Submit(Wl(1, 1, 15, 100));
  ASSERT_EQ(r.Cycle(0).size(), 1u);
  r.a.Submit(Wl(2, 1, 15, 100, 1));
  ASSERT_EQ(r.Cycle(1).size(), 1u);  // b holds 30: borrows 10 of a's 20
  r.a.Submit(Wl(3, 0, 12, 50, 2));   // a has 10 left in the cohort: needs one victim
  auto d = r.Cycle(2);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, AdmissionDecision::Kind::kEvict);
  EXPECT_EQ(d[0].id, 2);
  EXPECT_TRUE(r.a.IsAdmitted(1));
}

// reclaimWithinCohort takes only from queues that borrow: once nobody borrows, a preemptor whose
// own queue holds nothing of lower priority waits, though its cohort-mates hold the quota.
TEST(AdmitterTest, KueueReclaimsOnlyFromBorrowers) {
  Harness r({Cq("a", "c", 20, 100), Cq("b", "c", 20, 100), Cq("x", "c", 20, 100)}, TenancyMode::kKueue);
  r.a.Submit(Wl(1, 1, 20, 100));
  r.a.Submit(Wl(3, 2, 20, 100, 2));
  r.a.Submit(Wl(4, 0, 10, 100, 3));
  ASSERT_EQ(r.Cycle(0).size(), 3u);
  r.a.Submit(Wl(2, 1, 10, 100, 1));  // b borrows a's unused 10: the cohort is full
  ASSERT_EQ(r.Cycle(1).size(), 1u);
  r.a.Submit(Wl(5, 0, 10, 200, 4));
  auto d = r.Cycle(4);
  ASSERT_EQ(d.size(), 1u);  // only b's borrowed 10 goes
  EXPECT_EQ(d[0].id, 2);
  r.a.Evicted(2, true);
  d = r.Cycle(5);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 5);
  r.a.Submit(Wl(6, 0, 5, 100, 6));  // a at nominal; b and x within theirs; nothing lower in a
  EXPECT_EQ(r.Cycle(6).size(), 0u);
  EXPECT_EQ(r.a.pending(), 2u);  // 6 and the requeued 2
}

// A preemptor holds the room it counted on while its victims leave (Kueue reserves a preempting
// entry's usage in each cycle's snapshot). Before this, a borrower took the 2 free cpu in the same
// instant, the preemptor no longer fit once its victim was gone and preempted again; in Kueue's
// baseline scenario that never ended.
TEST(AdmitterTest, KueuePreemptorKeepsItsRoomWhileVictimsLeave) {
  Harness r({Cq("a", "c", 20, 100), Cq("b", "c", 20, 100)}, TenancyMode::kKueue);
  r.a.Submit(Wl(1, 1, 20, 100));
  ASSERT_EQ(r.Cycle(0).size(), 1u);
  r.a.Submit(Wl(2, 1, 18, 100, 1));
  ASSERT_EQ(r.Cycle(1).size(), 1u);  // b holds 38 of the cohort's 40
  r.a.Submit(Wl(4, 0, 20, 200, 2));
  r.a.Submit(Wl(3, 1, 1, 50, 2.5));  // would borrow one of the 2 free cpu
  auto d = r.Cycle(3);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, AdmissionDecision::Kind::kEvict);
  EXPECT_EQ(d[0].id, 2);
  r.a.Evicted(2, true);
  d = r.Cycle(4);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, AdmissionDecision::Kind::kAdmit);
  EXPECT_EQ(d[0].id, 4);
  EXPECT_EQ(r.a.stats().evictions, 1);
}

// Scheduling-equivalence hashing: when a head does not fit, the queue's workloads of the same
// class step aside with it, so the next class is considered without re-trying each copy.
TEST(AdmitterTest, KueueEquivalentWorkloadsStepAsideTogether) {
  Harness r({Cq("a", "", 20)}, TenancyMode::kKueue);
  r.a.Submit(Wl(100, 0, 15, 100));
  ASSERT_EQ(r.Cycle().size(), 1u);
  const auto before = r.a.stats().heads_considered;
  for (int i = 0; i < 10; ++i) r.a.Submit(Wl(i + 1, 0, 10, 100, 1 + i));
  r.a.Submit(Wl(50, 0, 5, 100, 20));
  auto d = r.Cycle(1);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 50);
  EXPECT_EQ(r.a.stats().heads_considered - before, 2);  // one 10-cpu head, then the 5-cpu one
  r.a.Finished(100);  // all ten return with the release; one fits next to the 5
  d = r.Cycle(2);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 1);
}

TEST(AdmitterTest, SeedanceNeverLetsALowerTierPreemptGold) {
  Harness r({Cq("a", "c", 20, 100, std::nullopt, Tier::kGold), Cq("b", "c", 20, 100, std::nullopt, Tier::kBronze)},
        TenancyMode::kSeedance);
  r.a.Submit(Wl(1, 0, 40, 300, 0, Tier::kGold));  // Gold borrows b's quota
  ASSERT_EQ(r.Cycle().size(), 1u);
  r.a.Submit(Wl(2, 1, 5, 100, 1, Tier::kBronze));
  EXPECT_EQ(r.Cycle(1).size(), 0u);
}

TEST(AdmitterTest, SeedanceGoldReclaimsWithinOneCycle) {
  Harness r({Cq("a", "c", 20, 100, std::nullopt, Tier::kGold), Cq("b", "c", 20, 100, std::nullopt, Tier::kBronze)},
        TenancyMode::kSeedance);
  r.a.Submit(Wl(1, 1, 30, 100, 0, Tier::kBronze));
  r.a.Submit(Wl(2, 1, 10, 100, 0.5, Tier::kBronze));
  ASSERT_EQ(r.Cycle().size(), 2u);  // b holds all 40
  r.env.running[1] = {.admitted_at_s = 0, .executed_s = 100, .lost_if_preempted = 900, .idle_s = 0};
  r.env.running[2] = {.admitted_at_s = 0, .executed_s = 100, .lost_if_preempted = 50, .idle_s = 0};
  r.a.Submit(Wl(3, 0, 8, 300, 1, Tier::kGold));
  auto d = r.Cycle(1);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 2);  // the victim that loses the least work and frees enough
}

TEST(AdmitterTest, SeedanceIdleSweepUsesTierMaxIdle) {
  Harness r({Cq("a", "", 20, std::nullopt, std::nullopt, Tier::kBronze)}, TenancyMode::kSeedance);
  r.a.Submit(Wl(1, 0, 5, 100, 0, Tier::kBronze));
  r.a.Submit(Wl(2, 0, 5, 100, 0, Tier::kGold));
  ASSERT_EQ(r.Cycle().size(), 2u);
  r.env.running[1].idle_s = 91;  // Bronze tolerates 90 s
  r.env.running[2].idle_s = 600;  // Gold tolerates 15 min
  EXPECT_EQ(r.a.IdleSweep(r.env), std::vector<std::int64_t>{1});
}

TEST(FairnessTest, JainAndWaterFill) {
  EXPECT_DOUBLE_EQ(JainIndex(std::vector<double>{1, 1, 1}), 1.0);
  EXPECT_NEAR(JainIndex(std::vector<double>{1, 0}), 0.5, 1e-12);
  auto f = WaterFill(10, std::vector<double>{2, 100, 100}, std::vector<double>{1, 1, 2});
  EXPECT_NEAR(f[0], 2, 1e-9);
  EXPECT_NEAR(f[1], 8.0 / 3, 1e-9);
  EXPECT_NEAR(f[2], 16.0 / 3, 1e-9);
  EXPECT_NEAR(CompensationWeight(-0.123), 0.18, 0.001);
  EXPECT_NEAR(CompensationWeight(0.057), -0.07, 0.001);
}

TEST(TiersTest, SeedDefaultsAndElasticScale) {
  auto p = DefaultTierParams();
  EXPECT_EQ(p[0].guaranteed_share, 1.0);
  EXPECT_EQ(p[1].guaranteed_share, 0.8);
  EXPECT_EQ(p[2].guaranteed_share, 0.5);
  EXPECT_EQ(p[2].max_idle_s, 90);
  EXPECT_NEAR(ElasticScale(p[0], 300, 0), 0.3 + 0.7 / std::exp(1.0), 1e-12);
  EXPECT_NEAR(ElasticScale(p[1], 0, 1.0), 0.8 * 1.5, 1e-12);
  EXPECT_EQ(ParseTier("GOLD"), Tier::kGold);
  EXPECT_FALSE(ParseTier("platinum"));
}

}  // namespace
}  // namespace seedance::tenancy

namespace seedance::tenancy {
namespace {

TEST(AdmitterWithdrawTest, CancelledPendingWorkloadLeavesItsQueueAndFreesNothing) {
  Harness h({Cq("a", "c", 4)}, TenancyMode::kStrict);
  h.a.Submit(Wl(1, 0, 4, 0, 0));
  h.a.Submit(Wl(2, 0, 4, 0, 1));
  h.a.Submit(Wl(3, 0, 2, 0, 2));
  auto d = h.Cycle();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 1);
  h.a.Withdraw(2);  // the user cancels the waiting one
  h.a.Withdraw(99);  // unknown: ignored
  EXPECT_EQ(h.a.pending(), 1u);
  h.a.Finished(1);
  d = h.Cycle();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 3);  // 2 is gone; its quota was never taken
  h.a.Withdraw(3);        // admitted: returns its quota like Finished
  h.a.Submit(Wl(4, 0, 4, 0, 3));
  d = h.Cycle();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 4);
}

TEST(AdmitterWithdrawTest, CapacityChangedReconsidersWorkloadsNoNodeTook) {
  Harness h({Cq("a", "c", 8)}, TenancyMode::kSeedance);
  h.env.place = false;
  h.a.Submit(Wl(1, 0, 2, 0, 0));
  EXPECT_TRUE(h.Cycle().empty());
  h.env.place = true;
  EXPECT_TRUE(h.Cycle().empty());  // waits for a quota release...
  h.a.CapacityChanged();           // ...or for a node to open
  auto d = h.Cycle();
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 1);
}

// A preemptor whose victims have left, with no node for it, steps out of its queue once: it
// used to stay the sticky head, so each pass took it again (the cycle ran to its guard of a million
// passes) and, once a node opened within the same cycle, it was admitted while still listed as
// unplaceable; its release then requeued a finished workload (found by `--fleet` with a small fleet).
TEST(AdmitterWithdrawTest, APreemptorWithNoNodeStepsAsideOnce) {
  Harness h({Cq("a", "", 8, std::nullopt, std::nullopt, Tier::kGold)}, TenancyMode::kSeedance);
  h.a.Submit(Wl(1, 0, 8, 0, 0, Tier::kGold));
  ASSERT_EQ(h.Cycle(0).size(), 1u);
  h.env.running[1] = {.admitted_at_s = 0, .executed_s = 3600, .lost_if_preempted = 10, .idle_s = 0};
  h.a.Submit(Wl(2, 0, 8, 100, 1, Tier::kGold));
  auto d = h.Cycle(1);
  ASSERT_EQ(d.size(), 1u);
  ASSERT_EQ(d[0].kind, AdmissionDecision::Kind::kEvict);
  ASSERT_EQ(d[0].id, 1);
  h.a.Evicted(1, /*requeue=*/true);
  h.env.place = false;  // the victim's node went away with it
  const std::int64_t before = h.a.stats().cycles;
  EXPECT_TRUE(h.Cycle(2).empty());
  EXPECT_LE(h.a.stats().cycles - before, 4);
  EXPECT_EQ(h.a.pending(), 2u);  // 1 requeued, 2 unplaceable: each counted once
  h.env.place = true;
  h.a.CapacityChanged();
  d = h.Cycle(3);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 2);
  h.a.Finished(2);
  h.a.CapacityChanged();  // threw std::out_of_range: 2 was still listed as unplaceable
  d = h.Cycle(4);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 1);
  EXPECT_EQ(h.a.pending(), 0u);
}

}  // namespace
}  // namespace seedance::tenancy

namespace seedance::tenancy {
namespace {

// A restarted server rebuilds its Admitter with Restore from the ledger's rows: after the
// restore, the same events bring the same decisions as in the Admitter that never stopped.
TEST(AdmitterRestoreTest, RestoredAdmitterDecidesAsTheOriginal) {
  const std::vector<TenantConfig> tenants = {Cq("a", "c", 20, 100), Cq("b", "c", 20, 100)};
  Harness orig(tenants, TenancyMode::kKueue);
  orig.a.Submit(Wl(1, 1, 20, 100));
  ASSERT_EQ(orig.Cycle(0).size(), 1u);
  orig.a.Submit(Wl(2, 1, 18, 100, 1));
  ASSERT_EQ(orig.Cycle(1).size(), 1u);
  orig.a.Submit(Wl(4, 0, 20, 200, 2));
  orig.a.Submit(Wl(3, 1, 1, 50, 2.5));
  auto d = orig.Cycle(3);
  ASSERT_EQ(d.size(), 1u);
  ASSERT_EQ(d[0].kind, AdmissionDecision::Kind::kEvict);
  ASSERT_EQ(d[0].id, 2);
  ASSERT_EQ(d[0].for_id, 4);

  // What the ledger holds now: 1 admitted at 0, 2 evicting for 4, 3 and 4 pending.
  Harness back(tenants, TenancyMode::kKueue);
  back.a.Restore(Wl(3, 1, 1, 50, 2.5), Admitter::RestoredState::kPending, 0, -1);
  back.a.Restore(Wl(4, 0, 20, 200, 2), Admitter::RestoredState::kPending, 0, -1);
  back.a.Restore(Wl(1, 1, 20, 100), Admitter::RestoredState::kAdmitted, 0, -1);
  back.a.Restore(Wl(2, 1, 18, 100, 1), Admitter::RestoredState::kEvicting, 1, 4);
  EXPECT_EQ(back.a.pending(), 2u);
  EXPECT_TRUE(back.a.IsAdmitted(1));
  EXPECT_FALSE(back.a.IsAdmitted(2));
  EXPECT_EQ(back.a.stats().admitted, 0);  // counted before the restart

  // While 2 leaves, 4 keeps its room: neither takes a decision (3 may not borrow 4's room).
  EXPECT_TRUE(orig.Cycle(3.5).empty());
  EXPECT_TRUE(back.Cycle(3.5).empty());
  for (Harness* h : {&orig, &back}) {
    h->a.Evicted(2, true);
    d = h->Cycle(4);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].kind, AdmissionDecision::Kind::kAdmit);
    EXPECT_EQ(d[0].id, 4);
    h->a.Finished(1);
    d = h->Cycle(5);
    ASSERT_EQ(d.size(), 2u);  // 1's 20 cpu: 3 (priority 50) is behind 2 (100) in b's queue
    EXPECT_EQ(d[0].id, 2);
    EXPECT_EQ(d[1].id, 3);
  }
}

// Quota is not double-allocated by a restore: an admitted workload's request is in the book.
TEST(AdmitterRestoreTest, RestoredAdmissionsHoldTheirQuota) {
  Harness h({Cq("a", "", 4)}, TenancyMode::kStrict);
  h.a.Restore(Wl(1, 0, 4, 0, 0), Admitter::RestoredState::kAdmitted, 10, -1);
  h.a.Submit(Wl(2, 0, 1, 0, 1));
  EXPECT_TRUE(h.Cycle(11).empty());
  EXPECT_EQ(h.a.book().usage(0, 0), ToQuantity(4));
  h.a.Finished(1);
  auto d = h.Cycle(12);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 2);
}

// ---- Kueue Fair Sharing (issue 29): hand-worked shares, ordering and both strategies. ----

TenantConfig Weighted(TenantConfig t, double w) {
  t.fair_weight = w;
  return t;
}

// DRS = max_r max(0, usage + request - nominal) * 1000 / cohort lendable, / weight.
TEST(FairSharingTest, DominantResourceShareByHand) {
  // Cohort lendable: 10 + 10 + 20 = 40 CPUs. x lends only 5 of its 20: lendable 25.
  Harness h({Cq("a", "c", 10), Weighted(Cq("b", "c", 10), 2), Cq("x", "c", 20)}, TenancyMode::kFairSharing);
  h.a.Submit(Wl(1, 0, 16, 100));
  h.a.Submit(Wl(2, 1, 16, 100));
  ASSERT_EQ(h.Cycle().size(), 2u);
  // a borrows 6 of 40: 150; with 4 more it would borrow 10: 250.
  EXPECT_DOUBLE_EQ(h.a.DominantResourceShare(0).Value(), 150.0);
  EXPECT_DOUBLE_EQ(h.a.DominantResourceShare(0, std::vector<Quantity>{ToQuantity(4)}).Value(), 250.0);
  // b borrows the same, weight 2: 75.
  EXPECT_DOUBLE_EQ(h.a.DominantResourceShare(1).Value(), 75.0);
  EXPECT_DOUBLE_EQ(h.a.DominantResourceShare(2).Value(), 0.0);  // within nominal
  EXPECT_FALSE(h.a.DominantResourceShare(2).borrowing);

  Harness z({Weighted(Cq("a", "c", 10), 0), Cq("b", "c", 10, std::nullopt, 5.0)}, TenancyMode::kFairSharing);
  z.a.Submit(Wl(1, 0, 12, 100));
  ASSERT_EQ(z.Cycle().size(), 1u);
  // Lendable 10 + 5 = 15; weight 0 while borrowing: infinite, its ratio still 2000/15.
  const DominantShare d = z.a.DominantResourceShare(0);
  EXPECT_TRUE(std::isinf(d.Value()));
  EXPECT_NEAR(d.ratio, 2000.0 / 15.0, 1e-9);
  EXPECT_EQ(z.a.DominantResourceShare(0, std::vector<Quantity>{ToQuantity(-2)}).Value(), 0.0);  // not borrowing: 0
  EXPECT_GT(DominantShare::Compare(d, DominantShare{1e9, 1, true}), 0);  // infinite is above any finite
}

// Admission: among borrowers, the lowest share after admission goes first (classic Kueue: oldest).
TEST(FairSharingTest, LowestShareIsAdmittedFirstAndWeightsCount) {
  for (double wa : {1.0, 2.0}) {
    for (TenancyMode mode : {TenancyMode::kKueue, TenancyMode::kFairSharing}) {
      Harness h({Weighted(Cq("a", "c", 10), wa), Cq("b", "c", 10), Cq("x", "c", 10)}, mode);
      h.a.Submit(Wl(1, 0, 14, 100));
      h.a.Submit(Wl(2, 1, 10, 100));
      ASSERT_EQ(h.Cycle().size(), 2u);  // 6 of 30 left
      h.a.Submit(Wl(3, 0, 4, 100, 1));  // a -> 18: 8000/30 = 266.7 (/ wa)
      h.a.Submit(Wl(4, 1, 4, 100, 2));  // b -> 14: 4000/30 = 133.3
      auto d = h.Cycle(3);
      ASSERT_FALSE(d.empty());
      EXPECT_EQ(d[0].kind, AdmissionDecision::Kind::kAdmit);
      // Classic: the older one. Fair Sharing: b (133 < 267); with a's weight 2 they tie at 133.3
      // and the older one (a's) goes first.
      const std::int64_t want = mode == TenancyMode::kKueue || wa == 2.0 ? 3 : 4;
      EXPECT_EQ(d[0].id, want) << TenancyModeName(mode) << " wa=" << wa;
      // The other one may not preempt: its share would be above its target's final and initial.
      EXPECT_EQ(d.size(), 1u) << TenancyModeName(mode) << " wa=" << wa;
    }
  }
}

// A borrowing preemptor: classic Kueue never preempts to borrow; Fair Sharing takes from the
// queue with the higher share while LessThanOrEqualToFinalShare holds (66.7 <= 266.7).
TEST(FairSharingTest, FinalSharePreemptsForABorrower) {
  for (TenancyMode mode : {TenancyMode::kKueue, TenancyMode::kFairSharingFinal, TenancyMode::kFairSharing}) {
    Harness h({Cq("a", "c", 10), Cq("b", "c", 10), Cq("x", "c", 10)}, mode);
    h.a.Submit(Wl(1, 0, 10, 200));  // a's own: not lower than the preemptor
    ASSERT_EQ(h.Cycle().size(), 1u);
    for (int k = 0; k < 10; ++k) {  // b: 20 (borrows 10: 333.3), one admission a second
      h.a.Submit(Wl(10 + k, 1, 2, 100, k));
      ASSERT_EQ(h.Cycle(k).size(), 1u);
    }
    h.a.Submit(Wl(2, 0, 2, 200, 20));  // a -> 12: 66.7; higher priority (reclaimWithinCohort LowerPriority)
    auto d = h.Cycle(20);
    if (mode == TenancyMode::kKueue) {
      EXPECT_TRUE(d.empty());
      continue;
    }
    ASSERT_EQ(d.size(), 1u) << TenancyModeName(mode);
    EXPECT_EQ(d[0].kind, AdmissionDecision::Kind::kEvict);
    EXPECT_EQ(d[0].id, 19);  // b's most recently admitted
    EXPECT_EQ(d[0].for_id, 2);
  }
}

// reclaimWithinCohort LowerPriority: a borrower of equal priority is no candidate.
TEST(FairSharingTest, EqualPriorityBorrowerIsNotReclaimed) {
  Harness h({Cq("a", "c", 10), Cq("b", "c", 10)}, TenancyMode::kFairSharing);
  h.a.Submit(Wl(1, 1, 20, 100));
  ASSERT_EQ(h.Cycle().size(), 1u);
  h.a.Submit(Wl(2, 0, 5, 100, 1));
  EXPECT_TRUE(h.Cycle(1).empty());
  h.a.Submit(Wl(3, 0, 5, 101, 2));
  auto d = h.Cycle(2);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, AdmissionDecision::Kind::kEvict);
  EXPECT_EQ(d[0].for_id, 3);
}

// Where the final-share rule refuses (a's 100 > b's share after losing either workload), the
// initial-share rule (100 < b's 233) takes b's first candidate; [LTEFS] alone preempts nothing.
TEST(FairSharingTest, InitialShareWhereFinalShareRefuses) {
  for (TenancyMode mode : {TenancyMode::kFairSharingFinal, TenancyMode::kFairSharingInitial, TenancyMode::kFairSharing}) {
    Harness h({Cq("a", "c", 10), Cq("b", "c", 10), Cq("x", "c", 10)}, mode);
    // b: 17 (borrows 7: 233.3), the 6 its latest; 30 of 30 held.
    const std::vector<WorkloadRequest> setup = {Wl(1, 0, 10, 200), Wl(2, 1, 11, 100, 1), Wl(3, 1, 6, 100, 2),
                                                Wl(4, 2, 3, 100, 3)};
    for (const auto& w : setup) {
      h.a.Submit(w);
      ASSERT_EQ(h.Cycle(w.creation_s).size(), 1u);
    }
    h.a.Submit(Wl(5, 0, 3, 200, 4));   // a -> 13: 100; b without the 6: 33.3, without the 11: 0
    auto d = h.Cycle(4);
    if (mode == TenancyMode::kFairSharingFinal) {
      EXPECT_TRUE(d.empty());
      continue;
    }
    ASSERT_EQ(d.size(), 1u) << TenancyModeName(mode);
    EXPECT_EQ(d[0].kind, AdmissionDecision::Kind::kEvict);
    EXPECT_EQ(d[0].id, 3);
  }
}

// Fill-back: victims the preemptor turns out not to need are given back (latest but one first).
TEST(FairSharingTest, VictimsNotNeededAreKept) {
  Harness h({Cq("a", "c", 10), Cq("b", "c", 10)}, TenancyMode::kFairSharing);
  for (const auto& w : {Wl(1, 1, 2, 100, 0), Wl(2, 1, 8, 100, 1), Wl(3, 1, 10, 100, 2)}) {
    h.a.Submit(w);
    ASSERT_EQ(h.Cycle(w.creation_s).size(), 1u);
  }  // b holds 20 of 20, borrows 10: 500
  // a (share 0 with 8) takes b's latest (10) first: that frees enough; nothing more goes.
  h.a.Submit(Wl(4, 0, 8, 200, 3));
  auto d = h.Cycle(3);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].id, 3);
}

// Contract of the admission policy family, every mode: quota is never exceeded, nothing is
// evicted that was not admitted, and a drained queue admits everything.
class AdmitterContract : public ::testing::TestWithParam<TenancyMode> {};

TEST_P(AdmitterContract, QuotaHeldAndEveryWorkloadEventuallyRuns) {
  const TenancyMode mode = GetParam();
  Harness h({Cq("a", "c", 10), Cq("b", "c", 6), Cq("x", "c", 4, 2.0)}, mode);
  std::set<std::int64_t> admitted;
  std::uint64_t s = 7;
  auto rnd = [&](int n) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((s >> 33) % static_cast<std::uint64_t>(n));
  };
  int submitted = 0;
  for (int step = 0; step < 200; ++step) {
    const double now = step;
    if (step < 120) {
      const int t = rnd(3);
      h.a.Submit(Wl(1000 + step, t, 1 + rnd(4), 100 * rnd(3), now));
      ++submitted;
    }
    for (const auto& d : h.Cycle(now)) {
      if (d.kind == AdmissionDecision::Kind::kAdmit) {
        EXPECT_TRUE(admitted.insert(d.id).second);
      } else {
        ASSERT_EQ(admitted.erase(d.id), 1u) << "evicted " << d.id << " that was not admitted";
        h.a.Evicted(d.id, /*requeue=*/true);
      }
    }
    const auto& book = h.a.book();
    Quantity total = 0;
    for (int t = 0; t < book.num_tenants(); ++t) {
      total += book.usage(t, 0);
      EXPECT_LE(book.usage(t, 0), book.PotentialAvailable(t, 0)) << TenancyModeName(mode);
    }
    EXPECT_LE(total, ToQuantity(20)) << TenancyModeName(mode);  // the cohort's quota
    if (rnd(2) == 0 && !admitted.empty()) {  // the oldest admitted one ends
      const auto id = *admitted.begin();
      admitted.erase(admitted.begin());
      h.a.Finished(id);
    }
  }
  for (int k = 0; k < 500 && (h.a.pending() > 0 || !admitted.empty()); ++k) {
    for (const auto& d : h.Cycle(300 + k))
      if (d.kind == AdmissionDecision::Kind::kAdmit) admitted.insert(d.id);
      else if (admitted.erase(d.id) > 0) h.a.Evicted(d.id, true);
    while (!admitted.empty()) {
      h.a.Finished(*admitted.begin());
      admitted.erase(admitted.begin());
    }
  }
  EXPECT_EQ(h.a.pending(), 0u) << TenancyModeName(mode);
  EXPECT_EQ(h.a.stats().admitted - h.a.stats().evictions, submitted) << TenancyModeName(mode);
}

INSTANTIATE_TEST_SUITE_P(AllModes, AdmitterContract,
                         ::testing::Values(TenancyMode::kStrict, TenancyMode::kBorrowing, TenancyMode::kSeedance,
                                           TenancyMode::kKueue, TenancyMode::kFairSharing,
                                           TenancyMode::kFairSharingFinal, TenancyMode::kFairSharingInitial),
                         [](const ::testing::TestParamInfo<TenancyMode>& p) {
                           std::string n(TenancyModeName(p.param));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace seedance::tenancy
