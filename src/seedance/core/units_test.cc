#include "seedance/core/units.h"

#include <gtest/gtest.h>
#include <type_traits>

#include "seedance/core/duration.h"
#include "seedance/core/strong_id.h"

namespace seedance {
namespace {

TEST(DurationTest, NumberWithOneUnitSuffix) {
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("90s"), 90);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("+1.5s"), 1.5);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("1e3s"), 1000);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("250us"), 250e-6);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("15m"), 900);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("1.5h"), 5400);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("7d"), 7 * 86400);
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("0"), 0);
  auto unit = ParseDurationSeconds("15x");
  ASSERT_FALSE(unit.has_value());
  EXPECT_EQ(unit.error().message(), "unknown unit 'x' (allowed: us, ms, s, m, h, d)");
  for (const char* bad : {"", "s", "abc", "1..2s", "2h30m", "nan", "1e999"}) {
    EXPECT_FALSE(ParseDurationSeconds(bad).has_value()) << bad;
  }
}

TEST(DurationTest, BareNumberNeedsAUnit) {
  // `--slo-tpot 120` once meant 120 seconds; a bare number is now an error with an example.
  for (const char* bare : {"120", "1.5", "1e3", "+90", "0.5"}) {
    auto d = ParseDurationSeconds(bare);
    ASSERT_FALSE(d.has_value()) << bare;
    EXPECT_EQ(d.error().message(), "a number needs a unit (write e.g. 120ms, 2s, 3m; units: us, ms, s, m, h, d)");
  }
  EXPECT_DOUBLE_EQ(*ParseDurationSeconds("0"), 0);  // zero is zero in any unit
}

TEST(UnitsTest, MoneyIsExactMicroDollars) {
  EXPECT_EQ(Usd(3).raw(), 3'000'000);
  EXPECT_EQ(UsdFromDouble(0.1234565).raw(), 123457);
  EXPECT_EQ(UsdFromDouble(-0.5e-6).raw(), -1);
  Money m = Usd(1) + MicroUsd(1);
  EXPECT_EQ(m.raw(), 1'000'001);
  EXPECT_DOUBLE_EQ(ToUsd(m), 1.000001);
}

TEST(UnitsTest, TagsDoNotMix) {
  static_assert(!std::is_convertible_v<MilliCpu, MilliGpu>);
  static_assert(!std::is_constructible_v<MilliGpu, std::int64_t>);
  EXPECT_EQ(Gpus(2).raw(), 2000);
  EXPECT_LT(MilliGpus(999), Gpus(1));
}

struct NodeTag {};
struct PodTag {};
TEST(UnitsTest, StrongIdsAreOrderedAndDistinct) {
  using NodeId = StrongId<NodeTag>;
  using PodId = StrongId<PodTag>;
  static_assert(!std::is_convertible_v<NodeId, PodId>);
  EXPECT_LT(NodeId(1), NodeId(2));
  EXPECT_EQ(NodeId(3).value(), 3u);
}

}  // namespace
}  // namespace seedance
