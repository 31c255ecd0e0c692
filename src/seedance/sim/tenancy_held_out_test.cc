#include <gtest/gtest.h>

#include "seedance/sim/tenancy_replay.h"
#include "seedance/sim/testing/tenancy_checks.h"

// Held out from the tuning week (Philly days 0-7, seed 0): other seeds, a 14-day window, openb.
namespace seedance::sim {
namespace {

class PhillyHeldOut : public ::testing::TestWithParam<std::pair<double, std::uint64_t>> {};

TEST_P(PhillyHeldOut, MeetsIssue13) {
  auto [days, seed] = GetParam();
  auto c = RunTenancyComparison(testing::TenancySpec("philly", days, seed), testing::AllTenancyModes());
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  testing::PrintOutcomes(*c);
  testing::ExpectGuarantees(*c);
  testing::ExpectUtilizationOverStrict(*c, 15.0);
  testing::ExpectCompensationRaisesJain(*c);
}

INSTANTIATE_TEST_SUITE_P(SeedsAndWindows, PhillyHeldOut,
                         ::testing::Values(std::pair<double, std::uint64_t>{7, 1}, std::pair<double, std::uint64_t>{7, 2},
                                           std::pair<double, std::uint64_t>{14, 0}));

TEST(OpenbHeldOut, QosTiersKeepGoldGuarantees) {
  auto c = RunTenancyComparison(testing::TenancySpec("openb", 0, 0), testing::AllTenancyModes());
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  testing::PrintOutcomes(*c);
  testing::ExpectGuarantees(*c);
}

}  // namespace
}  // namespace seedance::sim
