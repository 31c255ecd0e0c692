#include "seedance/ledger/allocation.h"

#include <gtest/gtest.h>

#include <map>

#include "seedance/core/rng.h"
#include "seedance/ledger/step_allocator.h"

namespace seedance::ledger {
namespace {

Money Sum(const std::vector<Charge>& cs) {
  Money m;
  for (const Charge& c : cs) m += c.cost;
  return m;
}

TEST(AllocationTest, LargestRemainderSumsExactlyAndBreaksTiesByIndex) {
  std::vector<std::int64_t> w = {1, 1, 1};
  auto parts = SplitLargestRemainder(100, w);
  EXPECT_EQ(parts, (std::vector<std::int64_t>{34, 33, 33}));
  parts = SplitLargestRemainder(2, w);
  EXPECT_EQ(parts, (std::vector<std::int64_t>{1, 1, 0}));
  std::vector<std::int64_t> w2 = {0, 5, 0};
  EXPECT_EQ(SplitLargestRemainder(7, w2), (std::vector<std::int64_t>{0, 7, 0}));
}

TEST(AllocationTest, WorkloadIsMaxOfRequestAndUsageAndIdleIsTheRest) {
  // A 4-GPU node, $4/interval: w1 requests 1 GPU uses 0.3; w2 requests 0.5 uses 0.9.
  std::vector<GpuUse> uses = {{1, 1000, 300, 1000, false}, {2, 500, 900, 1000, false}};
  NodeInterval n{0, 60'000, 7, Usd(4), 4000, 0, uses};
  std::vector<Charge> out;
  AllocateNodeInterval(n, IdleShare::kNone, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].workload, 1u);
  EXPECT_EQ(out[0].cost, Usd(1));                // 1000 / 4000
  EXPECT_EQ(out[1].workload, 2u);
  EXPECT_EQ(out[1].cost, MicroUsd(900'000));     // max(500, 900) = 900
  EXPECT_EQ(out[2].kind, ChargeKind::kIdle);
  EXPECT_EQ(out[2].cost, MicroUsd(2'100'000));
  EXPECT_EQ(out[0].gpu_ms, 60'000);
  EXPECT_EQ(Sum(out), Usd(4));
}

TEST(AllocationTest, IdleSharedByUsageAndByTenantWeight) {
  std::vector<GpuUse> uses = {{1, 1000, 750, 1000, false}, {2, 1000, 250, 3000, false}};
  NodeInterval n{0, 60'000, 0, Usd(4), 4000, 0, uses};
  std::vector<Charge> out;
  AllocateNodeInterval(n, IdleShare::kByUsage, out);
  std::map<std::pair<int, int>, std::int64_t> m;
  for (const Charge& c : out) m[{static_cast<int>(c.kind), static_cast<int>(c.workload)}] = c.cost.raw();
  EXPECT_EQ((m[{1, 1}]), 1'500'000);  // 2 idle GPUs x 3/4
  EXPECT_EQ((m[{1, 2}]), 500'000);
  EXPECT_EQ(m.count({1, 0}), 0u);
  out.clear();
  AllocateNodeInterval(n, IdleShare::kByTenantWeight, out);
  m.clear();
  for (const Charge& c : out) m[{static_cast<int>(c.kind), static_cast<int>(c.workload)}] = c.cost.raw();
  EXPECT_EQ((m[{1, 1}]), 500'000);  // weights 1 : 3
  EXPECT_EQ((m[{1, 2}]), 1'500'000);
  EXPECT_EQ(Sum(out), Usd(4));
}

TEST(AllocationTest, OverheadAndOvercommit) {
  // Overhead namespace holds 1 GPU, a fixed 10% overhead, and the workloads ask for more than
  // the rest: everybody is scaled, the bill is not exceeded.
  std::vector<GpuUse> uses = {{1, 2000, 0, 1000, false}, {2, 2000, 0, 1000, false},
                              {3, 1000, 0, 1000, true}};
  NodeInterval n{0, 3'600'000, 0, MicroUsd(1'000'001), 4000, 400, uses};
  std::vector<Charge> out;
  AllocateNodeInterval(n, IdleShare::kNone, out);
  EXPECT_EQ(Sum(out), MicroUsd(1'000'001));
  Money overhead;
  for (const Charge& c : out) {
    EXPECT_NE(c.kind, ChargeKind::kIdle);
    if (c.kind == ChargeKind::kOverhead) overhead += c.cost;
  }
  EXPECT_EQ(overhead, MicroUsd(259'259));  // 1400 / 5400 of the bill, rounded down
}

TEST(AllocationTest, EmptyNodeIsAllIdle) {
  NodeInterval n{0, 1000, 0, MicroUsd(17), 8000, 0, {}};
  std::vector<Charge> out;
  AllocateNodeInterval(n, IdleShare::kByUsage, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, ChargeKind::kIdle);
  EXPECT_EQ(out[0].cost, MicroUsd(17));
}

// Property: over random schedules, every node interval's charges sum to its bill exactly, no
// charge is negative, and the result does not depend on the order of the uses.
TEST(AllocationTest, ConservationOverRandomSchedules) {
  Rng rng(5);
  const IdleShare shares[] = {IdleShare::kNone, IdleShare::kByUsage, IdleShare::kByTenantWeight};
  for (int iter = 0; iter < 20'000; ++iter) {
    std::int64_t gpus = rng.UniformInt(0, 16);
    int n_uses = static_cast<int>(rng.UniformInt(0, 10));
    std::vector<GpuUse> uses;
    for (int i = 0; i < n_uses; ++i) {
      GpuUse u;
      u.workload = static_cast<std::uint32_t>(i * 3 + 1 + rng.UniformInt(0, 2));
      u.request_milli = rng.Bernoulli(0.2) ? 0 : rng.UniformInt(0, 4000);
      u.usage_milli = rng.UniformInt(0, 4000);
      u.weight = rng.UniformInt(1, 5000);
      u.overhead = rng.Bernoulli(0.1);
      uses.push_back(u);
    }
    NodeInterval n;
    n.start_ms = rng.UniformInt(0, 1'000'000);
    n.end_ms = n.start_ms + rng.UniformInt(1, 3'600'000);
    n.bill = MicroUsd(rng.UniformInt(0, 50'000'000'000));
    n.capacity_milli = gpus * 1000;
    n.overhead_milli = rng.Bernoulli(0.3) ? rng.UniformInt(0, n.capacity_milli) : 0;
    n.uses = uses;
    IdleShare share = shares[rng.Uniform(3)];
    std::vector<Charge> a;
    AllocateNodeInterval(n, share, a);
    ASSERT_EQ(Sum(a), n.bill) << "iteration " << iter;
    for (const Charge& c : a) ASSERT_GE(c.cost.raw(), 0);
    rng.Shuffle(uses);
    std::vector<Charge> b;
    AllocateNodeInterval(n, share, b);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].cost, b[i].cost);
      ASSERT_EQ(a[i].workload, b[i].workload);
    }
  }
}

TEST(StepAllocatorTest, GroupsByNodeIntervalAndPricesTheBill) {
  // Two nodes, 2 GPUs each at $3.60/h, one 60 s step: bill 6 cents per node.
  std::vector<GpuStep> steps = {
      {0, 0, 1, 1000, 500, 3'600'000, false}, {0, 0, 0, 0, 0, 3'600'000, false},
      {0, 1, 2, 1000, 900, 3'600'000, false}, {0, 1, 2, 1000, 100, 3'600'000, false},
  };
  StepAllocator alloc(60'000, IdleShare::kNone, 0, {});
  int intervals = 0;
  alloc.Run(steps, [&](const NodeInterval& n, std::span<const Charge> cs) {
    ++intervals;
    EXPECT_EQ(n.bill, MicroUsd(120'000));
    Money sum;
    for (const Charge& c : cs) sum += c.cost;
    EXPECT_EQ(sum, n.bill);
    if (n.node == 1) {
      ASSERT_EQ(cs.size(), 1u);  // workload 2 holds both GPUs
      EXPECT_EQ(cs[0].workload, 2u);
      EXPECT_EQ(cs[0].gpu_ms, 120'000);
    }
  });
  EXPECT_EQ(intervals, 2);
}

}  // namespace
}  // namespace seedance::ledger
