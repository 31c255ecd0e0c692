#include "seedance/batching/block_manager.h"

#include <gtest/gtest.h>

namespace seedance::batching {
namespace {

TEST(BlockManagerTest, AllocateFreeAndAccount) {
  BlockManager bm(10, 16, 0.0);
  EXPECT_EQ(bm.BlocksFor(1), 1);
  EXPECT_EQ(bm.BlocksFor(16), 1);
  EXPECT_EQ(bm.BlocksFor(17), 2);
  EXPECT_TRUE(bm.EnsureTokens(0, 33));
  EXPECT_EQ(bm.Held(0), 3);
  EXPECT_TRUE(bm.EnsureTokens(0, 40));  // still 3 blocks
  EXPECT_EQ(bm.Held(0), 3);
  EXPECT_FALSE(bm.Allocate(1, 8));       // all-or-nothing
  EXPECT_EQ(bm.free_blocks(), 7);
  EXPECT_TRUE(bm.Allocate(1, 7));
  EXPECT_TRUE(bm.CheckInvariants().ok());
  bm.Free(0);
  bm.Free(0);  // freeing twice is a no-op, not a double free
  EXPECT_EQ(bm.free_blocks(), 3);
  EXPECT_TRUE(bm.CheckInvariants().ok());
}

TEST(BlockManagerTest, WatermarkKeepsBlocksForAdmissions) {
  BlockManager bm(100, 64, 0.05);
  EXPECT_EQ(bm.watermark_blocks(), 5);
  EXPECT_FALSE(bm.Allocate(0, 96, /*keep_watermark=*/true));
  EXPECT_TRUE(bm.Allocate(0, 95, /*keep_watermark=*/true));
  EXPECT_TRUE(bm.Allocate(1, 5, /*keep_watermark=*/false));
  EXPECT_EQ(bm.free_blocks(), 0);
}

TEST(BlockManagerTest, SameCallsSameBlocks) {
  BlockManager a(32, 16, 0), b(32, 16, 0);
  for (std::uint32_t o = 0; o < 4; ++o) {
    ASSERT_TRUE(a.Allocate(o, o + 1));
    ASSERT_TRUE(b.Allocate(o, o + 1));
  }
  a.Free(1);
  b.Free(1);
  EXPECT_EQ(a.free_blocks(), b.free_blocks());
  EXPECT_TRUE(a.CheckInvariants().ok());
}

}  // namespace
}  // namespace seedance::batching
