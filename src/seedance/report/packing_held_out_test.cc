// The held-out check of Seedance's packer (slow: 430 packing runs, about a minute on 2 cores).
// Its two constants were chosen on the tuning cells of SeedancePackingSplit() only; this test
// runs every held-out cell (seeds 47-61 of the five tuning variants, seeds 42-61 of the seven
// others) and requires Seedance to leave less GPU capacity unallocated than FGD on every variant,
// mean over the variant's held-out seeds.
#include <iostream>

#include <gtest/gtest.h>

#include "seedance/report/packing_split.h"

namespace seedance::report {
namespace {

TEST(PackingHeldOutTest, SeedanceBelowFgdOnEveryHeldOutVariant) {
  PackingSplitBenchInput in;
  in.parts = {sched::PackingSplitPart::kHeldOut};
  in.policies = {"fgd", "seedance"};
  in.openb_dir = std::string(SEEDANCE_TEST_DATA_DIR) + "/openb";
  auto rows = RunPackingSplitBench(in, /*progress=*/false);
  ASSERT_TRUE(rows.has_value()) << rows.error().message();
  std::cout << FormatPackingSplitTable(*rows);

  const sched::PackingSplit& split = sched::SeedancePackingSplit();
  ASSERT_EQ(rows->size(), split.variants.size());  // every variant has held-out seeds
  std::size_t cells = 0;
  for (const PackingSplitRow& row : *rows) {
    ASSERT_EQ(row.part, sched::PackingSplitPart::kHeldOut);
    ASSERT_EQ(row.bench.summary.size(), 2u);
    const sched::PackingSummary& fgd = row.bench.summary[0];
    const sched::PackingSummary& seedance = row.bench.summary[1];
    ASSERT_EQ(fgd.policy, "fgd");
    ASSERT_EQ(seedance.policy, "seedance");
    for (std::uint64_t s : row.bench.input.seeds) {
      ASSERT_EQ(split.PartOf(row.variant, s), sched::PackingSplitPart::kHeldOut);
    }
    cells += row.bench.input.seeds.size();
    const PackingSeedWins w = CountSeedWins(row.bench, "seedance", "fgd");
    EXPECT_LT(seedance.mean_unallocated_pct_at_100, fgd.mean_unallocated_pct_at_100)
        << row.variant << ": seedance " << seedance.mean_unallocated_pct_at_100 << " vs fgd "
        << fgd.mean_unallocated_pct_at_100 << " (below fgd on " << w.wins << "/" << w.seeds
        << " seeds)";
  }
  EXPECT_EQ(cells, 215u);
}

}  // namespace
}  // namespace seedance::report
