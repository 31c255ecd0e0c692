#include "seedance/sched/seedance_packing.h"

#include <algorithm>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace seedance::sched {
namespace {

using ::testing::IsSubsetOf;

TEST(SeedancePackingSplitTest, TuningCellsAreASmallSubsetOfTheExperiment) {
  const PackingSplit& s = SeedancePackingSplit();
  EXPECT_THAT(s.tuning_variants, IsSubsetOf(s.variants));
  EXPECT_THAT(s.tuning_seeds, IsSubsetOf(s.seeds));
  EXPECT_EQ(s.variants.size(), 12u);
  EXPECT_EQ(s.seeds.size(), 20u);
  // Most of the experiment is held out: 25 tuning cells of 240.
  EXPECT_EQ(s.tuning_variants.size() * s.tuning_seeds.size(), 25u);
  // Some variants are never tuned on, among them the two the FGD paper does not report.
  for (const char* v : {"gpushare20", "gpuspec05"}) {
    EXPECT_THAT(s.variants, ::testing::Contains(v));
    EXPECT_THAT(s.tuning_variants, ::testing::Not(::testing::Contains(v)));
  }
}

TEST(SeedancePackingSplitTest, PartOfAcceptsStemOrSuffixAndHoldsOutUnknownTraces) {
  const PackingSplit& s = SeedancePackingSplit();
  EXPECT_EQ(s.PartOf("default", 42), PackingSplitPart::kTuning);
  EXPECT_EQ(s.PartOf("openb_pod_list_default", 46), PackingSplitPart::kTuning);
  EXPECT_EQ(s.PartOf("default", 47), PackingSplitPart::kHeldOut);
  EXPECT_EQ(s.PartOf("gpushare20", 42), PackingSplitPart::kHeldOut);
  EXPECT_EQ(s.PartOf("my_trace", 42), PackingSplitPart::kHeldOut);
  EXPECT_EQ(PackingSplitPartName(PackingSplitPart::kTuning), "tuning");
  EXPECT_EQ(PackingSplitPartName(PackingSplitPart::kHeldOut), "held-out");
}

TEST(SeedancePackingSplitTest, PartsPartitionEveryVariantsSeeds) {
  const PackingSplit& s = SeedancePackingSplit();
  for (const auto& v : s.variants) {
    std::vector<std::uint64_t> all = s.SeedsOf(v, PackingSplitPart::kTuning);
    const std::vector<std::uint64_t> held = s.SeedsOf(v, PackingSplitPart::kHeldOut);
    all.insert(all.end(), held.begin(), held.end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all, s.seeds) << v;
    const bool tuned = std::count(s.tuning_variants.begin(), s.tuning_variants.end(), v) > 0;
    EXPECT_EQ(held.size(), tuned ? 15u : 20u) << v;
  }
}

TEST(SeedancePackingSplitTest, EveryVariantIsBundled) {
  for (const auto& v : SeedancePackingSplit().variants) {
    EXPECT_TRUE(std::filesystem::exists(std::string(SEEDANCE_TEST_DATA_DIR) + "/openb/" +
                                        PackingVariantFile(v)))
        << v;
  }
}

TEST(SeedancePackingOptionsTest, ShippedConstantsAreValidAndBadOnesRejected) {
  EXPECT_TRUE(SeedancePackingOptions{}.Validate().ok());
  EXPECT_FALSE((SeedancePackingOptions{.reserve_factor = 0}).Validate().ok());
  EXPECT_FALSE((SeedancePackingOptions{.reserve_factor = 1.5}).Validate().ok());
  EXPECT_FALSE((SeedancePackingOptions{.temperature_milli = 0}).Validate().ok());
  auto p = MakeSeedancePlacementPolicy(PolicyContext{}, SeedancePackingOptions{});
  EXPECT_EQ(p->Name(), "seedance");
}

}  // namespace
}  // namespace seedance::sched
