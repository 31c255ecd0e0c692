#include "seedance/cost/money.h"

#include <gtest/gtest.h>

namespace seedance::cost {
namespace {

TEST(MoneyTest, ParsesDecimalDollarsExactly) {
  EXPECT_EQ(ParseUsd("2.85")->raw(), 2'850'000);
  EXPECT_EQ(ParseUsd("0.000001")->raw(), 1);
  EXPECT_EQ(ParseUsd(" 12 ")->raw(), 12'000'000);
  EXPECT_EQ(ParseUsd("0.5")->raw(), 500'000);
}

TEST(MoneyTest, RejectsWhatIsNotAPlainAmount) {
  for (const char* bad :
       {"", "-1", "+1", "1e3", "1.", ".5", "1.0000001", "abc", "1,5", "nan", "1234567890123"}) {
    auto m = ParseUsd(bad);
    ASSERT_FALSE(m.has_value()) << bad;
    EXPECT_EQ(m.error().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(MoneyTest, FormatsRoundedAndGrouped) {
  EXPECT_EQ(FormatUsd(MicroUsd(1'234'567'890'123), 2), "$1,234,567.89");
  EXPECT_EQ(FormatUsd(MicroUsd(1'234'567'890'123), 0), "$1,234,568");
  EXPECT_EQ(FormatUsd(MicroUsd(999'500'000), 0), "$1,000");
  EXPECT_EQ(FormatUsd(MicroUsd(-2'500'000), 0), "-$3");
  EXPECT_EQ(FormatUsd(MicroUsd(-400'000), 0), "$0");
  EXPECT_EQ(FormatUsd(MicroUsd(50'000), 2), "$0.05");
  EXPECT_EQ(FormatUsd(MicroUsd(7), 6), "$0.000007");
}

TEST(MoneyTest, ScalesWithHalfAwayFromZeroRounding) {
  EXPECT_EQ(ScaleMoney(MicroUsd(3), 0.5).raw(), 2);
  EXPECT_EQ(ScaleMoney(MicroUsd(-3), 0.5).raw(), -2);
  EXPECT_EQ(ScaleMoney(Usd(100), 0.0475).raw(), 4'750'000);
}

}  // namespace
}  // namespace seedance::cost
