// The as-run backtest (issue 38): one window for every row, unfinished work valued at the fleet's
// marginal price, the decomposition of a row's difference to as run, and the replay of a history
// under the kube-scheduler, Kueue and Slurm emulations.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "seedance/sim/as_run_backtest.h"

namespace seedance::sim {
namespace {

// 16 owned H100 at $1.00/GPU-h (stated), on-demand quota 16 at $4.00.
constexpr const char* kFleet =
    "name: t\nregions: [r]\ngpus:\n"
    "  - {type: H100, owned: {count: 16, usd_per_gpu_hour: 1.0}, on_demand: {quota: 16, usd_per_gpu_hour: 4.0}}\n";

FleetFile Fleet(const char* text = kFleet) {
  auto f = ParseFleetFile("fleet.yaml", text, ".");
  EXPECT_TRUE(f.has_value()) << f.error().message();
  return *f;
}

struct Priced {
  FleetSpec spec;
  MarginalPrices marginal;
};
Priced Prices(const FleetFile& f) {
  Priced p;
  auto spec = BuildFleetSpec(f, {"H100"}, cost::PriceTable{});
  EXPECT_TRUE(spec.has_value()) << spec.error().message();
  p.spec = *spec;
  auto m = FleetMarginalPrices(f, p.spec);
  EXPECT_TRUE(m.has_value()) << m.error().message();
  p.marginal = *m;
  return p;
}

ReplayJob Job(const std::string& name, int gpus, double submit, double start, double end, int pods = 1) {
  ReplayJob j;
  j.job = name;
  j.tenant = "team";
  j.gpu_type = "H100";
  j.gpus = gpus;
  j.pods = pods;
  j.submit_s = submit;
  j.start_s = start;
  j.end_s = end;
  return j;
}

std::map<std::string, std::string> Tiers(const ReplayOutcome& o) {
  std::map<std::string, std::string> out;
  for (const AsRunInterval& iv : o.run) out[iv.job] += std::string(TierName(iv.tier)) + " " + std::to_string(iv.gpus) + ";";
  return out;
}

TEST(AsRunWindow, MarginalPriceOfOwnedIsItsPowerShareAndRentedTheCheapestRate) {
  const FleetFile f = Fleet();
  const Priced p = Prices(f);
  const MarginalPrice& m = p.marginal.at("H100");
  EXPECT_EQ(m.owned_gpus, 16);
  EXPECT_TRUE(m.rentable);
  EXPECT_DOUBLE_EQ(m.rent_usd, 4.0);
  EXPECT_GT(m.owned_power_usd, 0.0);
  EXPECT_LT(m.owned_power_usd, 1.0);  // power and cooling only, not the whole TCO price
}

TEST(AsRunWindow, CommittedBilledForTheWindowRentedClippedUnfinishedValued) {
  const FleetFile f = Fleet();
  const Priced p = Prices(f);
  const int owned = p.spec.FindPool(0, Tier::kOwned), od = p.spec.FindPool(0, Tier::kOnDemand);
  ASSERT_GE(owned, 0);
  ASSERT_GE(od, 0);
  // The policy ran until 3 h; the window is [0, 2 h]. 8 owned GPUs busy until 3 h, 4 on-demand
  // GPUs held 1 h .. 3 h.
  std::vector<PoolInterval> ivs = {
      {owned, 0, 10800, 16, 1.0, {PoolUse{1, "t", 8 * 10800.0}}},
      {od, 3600, 10800, 4, 4.0, {PoolUse{2, "t", 4 * 7200.0}}},
  };
  auto b = BillPolicyOverWindow(p.spec, ivs, 0, 7200, p.marginal);
  ASSERT_TRUE(b.has_value()) << b.error().message();
  EXPECT_NEAR(b->committed_usd, 16 * 2 * 1.0, 1e-9);  // the window, not the policy's 3 h
  EXPECT_NEAR(b->cloud_usd, 4 * 1 * 4.0, 1e-9);       // 1 h of the 2 h held falls inside
  EXPECT_NEAR(b->cloud_gpu_hours, 4.0, 1e-9);
  // After 2 h: 8 owned GPU-h and 4 on-demand GPU-h of work. 8 owned GPUs are free at 2 h, so over
  // the 1 h tail 8 GPU-h fit on owned at power; the other 4 at the cheapest rentable $4.
  EXPECT_NEAR(b->unfinished.gpu_hours, 12.0, 1e-9);
  EXPECT_NEAR(b->unfinished.owned_gpu_hours, 8.0, 1e-9);
  const MarginalPrice& m = p.marginal.at("H100");
  EXPECT_NEAR(b->unfinished.usd, 8 * m.owned_power_usd + 4 * 4.0, 1e-9);
  EXPECT_NEAR(b->TotalUsd(), 32 + 16 + b->unfinished.usd, 1e-9);
}

TEST(AsRunWindow, DecompositionSumsToTheDifference) {
  WindowBill as_run;
  as_run.committed_usd = 100;
  as_run.cloud_usd = 40;
  as_run.cloud_gpu_hours = 10;
  for (double cloud_h : {0.0, 5.0, 10.0, 30.0}) {
    for (double price : {1.0, 4.0, 9.0}) {
      WindowBill row;
      row.committed_usd = 100;
      row.cloud_gpu_hours = cloud_h;
      row.cloud_usd = cloud_h * price;
      row.other_usd = 3;
      row.unfinished.usd = 7;
      const Decomposition d = DecomposeAgainstAsRun(row, as_run);
      EXPECT_NEAR(d.Sum(), row.TotalUsd() - as_run.TotalUsd(), 1e-9) << cloud_h << " h at " << price;
      EXPECT_NEAR(d.horizon_usd, 7, 1e-9);
      EXPECT_NEAR(d.cloud_usd, (cloud_h - 10) * 4.0, 1e-9);  // at the as-run mean rented price
    }
  }
  // The as-run row rented nothing: the row's own mean price.
  WindowBill none;
  none.committed_usd = 100;
  WindowBill row;
  row.committed_usd = 100;
  row.cloud_gpu_hours = 2;
  row.cloud_usd = 8;
  const Decomposition d = DecomposeAgainstAsRun(row, none);
  EXPECT_NEAR(d.cloud_usd, 8, 1e-9);
  EXPECT_NEAR(d.Sum(), 8, 1e-9);
}

TEST(AsRunReplay, KubeReproducesQueueingAndGangsAndRentsOnlyWhenOwnedIsFull) {
  const FleetFile f = Fleet();
  ReplayOptions o;
  // a, b fill the 16 owned GPUs (two nodes of 8) for 1 h. c (a gang of 2 pods x 8) is submitted at
  // 10 min: no node fits a pod, so the autoscaler adds two rented nodes. d (8 GPUs) is submitted at
  // 20 min while the 16 rented GPUs are taken: it waits for a or b (1 h).
  std::vector<ReplayJob> jobs = {Job("a", 8, 0, 0, 3600), Job("b", 8, 0, 0, 3600), Job("c", 16, 600, 600, 4200, 2),
                                 Job("d", 8, 1200, 3600, 7200)};
  auto r = ReplayHistory(f, jobs, o);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  auto t = Tiers(*r);
  EXPECT_EQ(t["a"], "owned 8;");
  EXPECT_EQ(t["b"], "owned 8;");
  EXPECT_EQ(t["c"], "on-demand 16;");
  EXPECT_EQ(t["d"], "owned 8;");
  EXPECT_DOUBLE_EQ(r->start_s.at("c"), 600);
  EXPECT_DOUBLE_EQ(r->start_s.at("d"), 3600);  // the history's queueing, reproduced
  EXPECT_NEAR(r->mean_wait_s, r->history_mean_wait_s, 1e-9);
  // A gang that cannot be placed whole does not start in part: 24 GPUs > 16 owned + 16 rented - 16 held.
  std::vector<ReplayJob> big = {Job("x", 16, 0, 0, 3600), Job("y", 24, 0, 0, 3600, 3)};
  auto g = ReplayHistory(f, big, o);
  ASSERT_TRUE(g.has_value()) << g.error().message();
  EXPECT_DOUBLE_EQ(g->start_s.at("y"), 3600);  // waits for x, all three pods at once
  // A job bigger than the type's whole capacity is an error naming it.
  auto too_big = ReplayHistory(f, {Job("z", 40, 0, 0, 60)}, o);
  ASSERT_FALSE(too_big.has_value());
  EXPECT_NE(too_big.error().message().find("job z needs 40 H100 GPUs"), std::string::npos) << too_big.error().message();
}

TEST(AsRunReplay, KubeScoresLeastAllocated) {
  // One owned node of 8: two 2-GPU pods; kube spreads over nodes that exist, so with 16 owned GPUs
  // (two nodes) the second pod goes to the emptier node.
  const FleetFile f = Fleet();
  std::vector<ReplayJob> jobs = {Job("a", 2, 0, 0, 100), Job("b", 2, 1, 1, 100), Job("c", 7, 2, 2, 100)};
  auto r = ReplayHistory(f, jobs, ReplayOptions{});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  // a on node 0, b on node 1 (emptier), then c (7) fits neither (6 free each): a rented node.
  EXPECT_EQ(Tiers(*r)["c"], "on-demand 7;");
  // Slurm packs by best fit on the lowest-weight nodes: a and b share node 0, c fits node 1.
  ReplayOptions slurm;
  slurm.scheduler = ReplayScheduler::kSlurm;
  auto s = ReplayHistory(f, jobs, slurm);
  ASSERT_TRUE(s.has_value()) << s.error().message();
  EXPECT_EQ(Tiers(*s)["c"], "owned 7;");
}

TEST(AsRunReplay, SlurmBackfillsWithoutDelayingTheBlockedJob) {
  // Owned only: 16 GPUs. a holds 12 until 1 h; b (16) is blocked until then; c (4 GPUs, 30 min)
  // fits now and ends before b's reservation: backfilled. d (4 GPUs, 2 h) would delay b: waits.
  const FleetFile f = Fleet("name: t\nregions: [r]\ngpus:\n  - {type: H100, owned: {count: 16, usd_per_gpu_hour: 1.0}}\n");
  ReplayOptions o;
  o.scheduler = ReplayScheduler::kSlurm;
  std::vector<ReplayJob> jobs = {Job("a", 12, 0, 0, 3600), Job("b", 16, 10, 3600, 7200), Job("c", 4, 20, 20, 1820),
                                 Job("d", 4, 30, 7200, 14400)};
  auto r = ReplayHistory(f, jobs, o);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_DOUBLE_EQ(r->start_s.at("c"), 20);
  EXPECT_DOUBLE_EQ(r->start_s.at("b"), 3600);
  EXPECT_DOUBLE_EQ(r->start_s.at("d"), 7200);
}

TEST(AsRunReplay, KueueHoldsJobsOverTheNamespaceQuota) {
  const FleetFile f = Fleet();
  ReplayOptions o;
  o.scheduler = ReplayScheduler::kKueue;
  o.quotas["team"] = 8;
  std::vector<ReplayJob> jobs = {Job("a", 8, 0, 0, 3600), Job("b", 4, 0, 3600, 7200)};
  auto r = ReplayHistory(f, jobs, o);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_DOUBLE_EQ(r->start_s.at("b"), 3600);
  o.scheduler = ReplayScheduler::kKube;  // without Kueue, b starts at once
  auto k = ReplayHistory(f, jobs, o);
  ASSERT_TRUE(k.has_value());
  EXPECT_DOUBLE_EQ(k->start_s.at("b"), 0);
}

TEST(AsRunReplay, ServicesHeldAsTheyRanAheadOfBatch) {
  const FleetFile f = Fleet("name: t\nregions: [r]\ngpus:\n  - {type: H100, owned: {count: 8, usd_per_gpu_hour: 1.0}}\n");
  ReplayJob svc = Job("svc", 8, 100, 100, 3600);
  svc.kind = HistoryKind::kService;
  std::vector<ReplayJob> jobs = {Job("batch", 8, 50, 3600, 7200), svc};
  auto r = ReplayHistory(f, jobs, ReplayOptions{});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  // The batch job was submitted first and the node was free: kube starts it at 50 s; the service,
  // held at its time, could then not start at 100 s: counted as delayed.
  EXPECT_DOUBLE_EQ(r->start_s.at("batch"), 50);
  EXPECT_EQ(r->delayed_fixed, 1);
}

TEST(AsRunReplay, PricedReplayOfAHistoryItsRulesProducedHasNoGap) {
  const FleetFile f = Fleet();
  const Priced p = Prices(f);
  std::vector<ReplayJob> jobs = {Job("a", 8, 0, 0, 3600), Job("b", 8, 0, 0, 3600), Job("c", 16, 600, 600, 4200, 2),
                                 Job("d", 8, 1200, 3600, 7200)};
  auto r = ReplayHistory(f, jobs, ReplayOptions{});
  ASSERT_TRUE(r.has_value());
  // As run: the same tiers at the history's times.
  std::vector<AsRunInterval> hist = {{"a", "H100", Tier::kOwned, 0, 3600, 8}, {"b", "H100", Tier::kOwned, 0, 3600, 8},
                                     {"c", "H100", Tier::kOnDemand, 600, 4200, 16},
                                     {"d", "H100", Tier::kOwned, 3600, 7200, 8}};
  auto paid = PriceAsRun(f, hist, cost::PriceTable{}, 0, 7200);
  ASSERT_TRUE(paid.has_value()) << paid.error().message();
  auto replayed = PriceReplay(f, cost::PriceTable{}, *r, 7200, std::nullopt, p.marginal, paid->total_usd);
  ASSERT_TRUE(replayed.has_value()) << replayed.error().message();
  EXPECT_NEAR(replayed->bill.TotalUsd(), paid->total_usd, 1e-9);
  EXPECT_NEAR(replayed->gap_pct, 0.0, 1e-9);
  // A shorter window leaves d's last half hour unfinished: valued, never dropped.
  auto shorter = PriceReplay(f, cost::PriceTable{}, *r, 5400, std::nullopt, p.marginal, paid->total_usd);
  ASSERT_TRUE(shorter.has_value()) << shorter.error().message();
  EXPECT_NEAR(shorter->bill.unfinished.gpu_hours, 8 * 0.5, 1e-9);
}

TEST(AsRunReplay, SchedulerNames) {
  EXPECT_EQ(*ParseReplayScheduler("slurm"), ReplayScheduler::kSlurm);
  auto bad = ParseReplayScheduler("yarn");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("accepted: kube, kueue, slurm"), std::string::npos);
}

// Issue 38: a rented node is paid whole while it is up, whatever its GPUs do. A policy that holds
// 1 on-demand GPU for 2 h on a pool of 8-GPU nodes pays 8 GPUs x 2 h; per GPU held it paid 1 x 2 h.
TEST(AsRunWindow, RentedNodeUpTwoHoursWithOneOfEightGpusBusyBillsEightGpusTwoHours) {
  const FleetFile f = Fleet();
  const Priced p = Prices(f);
  const int od = p.spec.FindPool(0, Tier::kOnDemand);
  ASSERT_GE(od, 0);
  std::vector<PoolInterval> ivs = {PoolInterval{od, 0, 7200, 1, 4.0, {PoolUse{1, "team", 7200}}}};
  RentedNodes whole;
  whole.whole_nodes = true;
  whole.gpus_per_node[{"H100", Tier::kOnDemand}] = 8;
  auto bill = BillPolicyOverWindow(p.spec, ivs, 0, 7200, p.marginal, 0, &whole);
  ASSERT_TRUE(bill.has_value()) << bill.error().message();
  EXPECT_NEAR(bill->cloud_usd, 8 * 2 * 4.0, 1e-9);
  EXPECT_NEAR(bill->cloud_gpu_hours, 16.0, 1e-9);
  auto per_gpu = BillPolicyOverWindow(p.spec, ivs, 0, 7200, p.marginal);
  ASSERT_TRUE(per_gpu.has_value());
  EXPECT_NEAR(per_gpu->cloud_usd, 1 * 2 * 4.0, 1e-9);
  // A service held as it ran on the same pool shares the node: 1 + 7 GPUs are still one node; one
  // more GPU for half an hour opens a second node then.
  whole.fixed = {GpuUse{"H100", Tier::kOnDemand, 0, 7200, 7}, GpuUse{"H100", Tier::kOnDemand, 3600, 5400, 1}};
  bill = BillPolicyOverWindow(p.spec, ivs, 0, 7200, p.marginal, 0, &whole);
  ASSERT_TRUE(bill.has_value()) << bill.error().message();
  EXPECT_NEAR(bill->cloud_usd, (8 * 2 + 8 * 0.5) * 4.0, 1e-9);
  // A held row on a pool the simulated fleet lacks is an error naming it, never dropped.
  whole.fixed = {GpuUse{"L4", Tier::kSpot, 0, 60, 1}};
  bill = BillPolicyOverWindow(p.spec, ivs, 0, 7200, p.marginal, 0, &whole);
  ASSERT_FALSE(bill.has_value());
  EXPECT_NE(bill.error().message().find("spot L4"), std::string::npos) << bill.error().message();
}

// The replay bills the same way: a rented node the emulated autoscaler adds for a 1-GPU job of 2 h
// is paid whole until it has been empty 10 min; the history's static rented node, all the window.
TEST(AsRunReplay, RentedNodesAreBilledWholeWhileUp) {
  const FleetFile f = Fleet(
      "name: t\nregions: [r]\ngpus:\n"
      "  - {type: H100, owned: {count: 8, usd_per_gpu_hour: 1.0}, on_demand: {quota: 16, usd_per_gpu_hour: 4.0}}\n");
  const Priced p = Prices(f);
  // The owned node is full for the whole window: the 1-GPU job needs a rented node.
  std::vector<ReplayJob> jobs = {Job("owned", 8, 0, 0, 4 * 3600.0), Job("one", 1, 0, 0, 2 * 3600.0)};
  jobs[0].kind = HistoryKind::kService;
  ReplayOptions o;
  o.whole_nodes = true;
  o.rented_nodes = {ReplayOptions::HistoryNode{"H100", Tier::kOnDemand, 8}};
  auto r = ReplayHistory(f, jobs, o);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(r->rented_up.size(), 1u);
  EXPECT_EQ(r->rented_up[0].gpus, 8);
  EXPECT_DOUBLE_EQ(r->rented_up[0].start_s, 0);
  EXPECT_DOUBLE_EQ(r->rented_up[0].end_s, 2 * 3600.0 + 600);
  auto priced = PriceReplay(f, cost::PriceTable{}, *r, 4 * 3600.0, std::nullopt, p.marginal, 100.0, true);
  ASSERT_TRUE(priced.has_value()) << priced.error().message();
  EXPECT_NEAR(priced->cost.on_demand_usd, 8 * (2 + 600 / 3600.0) * 4.0, 1e-6);
  EXPECT_NEAR(priced->cost.owned_usd, 8 * 4 * 1.0, 1e-6);
  // Per GPU in use (no node inventory): 1 GPU x 2 h.
  auto per_gpu = PriceReplay(f, cost::PriceTable{}, *r, 4 * 3600.0, std::nullopt, p.marginal, 100.0, false);
  ASSERT_TRUE(per_gpu.has_value());
  EXPECT_NEAR(per_gpu->cost.on_demand_usd, 1 * 2 * 4.0, 1e-6);
  // Static rented nodes (the history's, up all its window): the node is paid for the whole window.
  o.static_rented = true;
  r = ReplayHistory(f, jobs, o);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  priced = PriceReplay(f, cost::PriceTable{}, *r, 4 * 3600.0, std::nullopt, p.marginal, 100.0, true);
  ASSERT_TRUE(priced.has_value()) << priced.error().message();
  EXPECT_NEAR(priced->cost.on_demand_usd, 8 * 4 * 4.0, 1e-6);
}

}  // namespace
}  // namespace seedance::sim
