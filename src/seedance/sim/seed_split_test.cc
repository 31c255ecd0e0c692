// The tuning / held-out split of the cost scenario's workload seeds (issue 29).
#include "seedance/sim/seed_split.h"

#include <gtest/gtest.h>

namespace seedance::sim {
namespace {

TEST(SeedSplit, TuningSeedsAreNeverHeldOut) {
  for (std::uint64_t s : TuningSeeds("llm-finetune")) EXPECT_EQ(ClassifySeed("llm-finetune", s), SeedSet::kTuning) << s;
  for (std::uint64_t s : HeldOutSeeds("llm-finetune")) EXPECT_EQ(ClassifySeed("llm-finetune", s), SeedSet::kHeldOut) << s;
  EXPECT_EQ(HeldOutSeeds("llm-finetune"), (std::vector<std::uint64_t>{5, 6, 7, 8, 9}));
  EXPECT_EQ(TuningSeeds("llm-finetune"), (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
  // A seed no set names is outside the split, not held out.
  EXPECT_EQ(ClassifySeed("llm-finetune", 10), SeedSet::kOutside);
  EXPECT_EQ(ClassifySeed("llm-finetune", 42), SeedSet::kOutside);
  // gavel was never run while tuning; philly was tuned on (every seed replays the same trace).
  EXPECT_EQ(ClassifySeed("gavel", 42), SeedSet::kHeldOut);
  EXPECT_EQ(ClassifySeed("philly", 42), SeedSet::kTuning);
  EXPECT_TRUE(TuningSeeds("gavel").empty());
  EXPECT_TRUE(HeldOutSeeds("philly").empty());
  EXPECT_EQ(ClassifySeed("openb", 42), SeedSet::kOutside);
  EXPECT_EQ(ClassifySeed("jobs.csv", 5), SeedSet::kOutside);
}

TEST(SeedSplit, NamesAndRanges) {
  EXPECT_EQ(SeedSetName(SeedSet::kHeldOut), "held out");
  EXPECT_EQ(SeedSetKey(SeedSet::kTuning), "tuning");
  EXPECT_EQ(SeedSetKey(SeedSet::kOutside), "outside_split");
  EXPECT_EQ(SeedRangeText({5, 6, 7, 8, 9}), "5-9");
  EXPECT_EQ(SeedRangeText({0, 1}), "0,1");
  EXPECT_EQ(SeedRangeText({0, 2, 7}), "0,2,7");
  EXPECT_EQ(SeedRangeText({42}), "42");
  ASSERT_EQ(HeldOutLeftOut("llm-finetune").size(), 1u);
  EXPECT_EQ(HeldOutLeftOut("llm-finetune")[0].policy, "gavel-las-spot");
  EXPECT_TRUE(HeldOutLeftOut("gavel").empty());
}

}  // namespace
}  // namespace seedance::sim
