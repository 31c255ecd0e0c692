#include "seedance/ledger/apportion.h"

#include <gtest/gtest.h>

#include <cmath>

namespace seedance::ledger {
namespace {

TEST(ApportionTest, FitRecoversKnownCoefficients) {
  Rng rng(11);
  std::vector<ApportionObservation> obs;
  for (int i = 0; i < 2000; ++i) {
    ApportionObservation o;
    o.t = rng.UniformDouble();
    o.b = rng.UniformDouble();
    o.l = rng.UniformDouble();
    o.y = 0.5 * o.t + 0.3 * o.b + 0.2 * o.l + 0.01 * rng.Normal();
    obs.push_back(o);
  }
  auto fit = FitApportionment(obs);
  ASSERT_TRUE(fit.has_value());
  EXPECT_NEAR(fit->alpha, 0.5, 0.01);
  EXPECT_NEAR(fit->beta, 0.3, 0.01);
  EXPECT_NEAR(fit->gamma, 0.2, 0.01);
  EXPECT_GT(fit->r2, 0.98);
  EXPECT_EQ(fit->observations, 2000u);
}

TEST(ApportionTest, RankDeficientDesignIsAnError) {
  std::vector<ApportionObservation> obs(10, {0.5, 0.5, 0.5, 0.5});
  auto fit = FitApportionment(obs);
  ASSERT_FALSE(fit.has_value());
  EXPECT_EQ(fit.error().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(FitApportionment(std::vector<ApportionObservation>(2)).has_value());
}

TEST(ApportionTest, BetaHasTheRightMean) {
  Rng rng(3);
  double sum = 0;
  for (int i = 0; i < 20000; ++i) sum += SampleBeta(8, 92, rng);
  EXPECT_NEAR(sum / 20000, 0.08, 0.002);
}

TEST(ApportionTest, MonteCarloIsSeededAndConservesTheTotal) {
  std::vector<TenantInput> t = {{"a", 600, 50, 100, 10}, {"b", 300, 40, 60, 30}, {"c", 100, 1, 10, 0}};
  Rng r1(42), r2(42);
  auto x = MonteCarloIntervals(t, 200, 10'000, r1);
  auto y = MonteCarloIntervals(t, 200, 10'000, r2);
  ASSERT_EQ(x.size(), 3u);
  double mean_total = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i].mean_usd, y[i].mean_usd);
    EXPECT_EQ(x[i].p025_usd, y[i].p025_usd);
    EXPECT_LT(x[i].p025_usd, x[i].mean_usd);
    EXPECT_GT(x[i].p975_usd, x[i].mean_usd);
    mean_total += x[i].mean_usd;
  }
  EXPECT_NEAR(mean_total, 1200.0, 1e-6);
}

// The reported case (issue 17): a tenant's ledger figure without idle ($895) was printed beside
// an interval of its cost with idle apportioned, so the point lay outside its own interval. The
// point is now the interval's quantity at the nominal parameters, and the ledger figure is kept
// apart as ledger_usd.
TEST(ApportionTest, PointIsTheIntervalsQuantityAndLiesInsideIt) {
  std::vector<TenantInput> t = {{"team-a", 895, 30, 48, 2e9}, {"team-b", 700, 35, 40, 3e9},
                                {"research", 500, 10, 30, 1e9}};
  Rng rng(42);
  auto x = MonteCarloIntervals(t, 1200, 10'000, rng);
  ASSERT_EQ(x.size(), 3u);
  double point_total = 0;
  for (const TenantInterval& i : x) {
    EXPECT_LE(i.p025_usd, i.point_usd) << i.tenant;
    EXPECT_GE(i.p975_usd, i.point_usd) << i.tenant;
    EXPECT_NEAR(i.point_usd, i.mean_usd, 0.02 * i.point_usd) << i.tenant;
    point_total += i.point_usd;
    auto [lo, hi] = i.RelativeInterval();
    EXPECT_LT(lo, 1.0);
    EXPECT_GT(hi, 1.0);
  }
  // The ledger figure without idle is not the interval's quantity: it lies below the interval.
  EXPECT_EQ(x[0].ledger_usd, 895.0);
  EXPECT_LT(x[0].ledger_usd, x[0].p025_usd);
  EXPECT_NEAR(point_total, 895 + 700 + 500 + 1200, 1e-6);  // the point conserves the bill too
}

// Without idle and interconnect the quantity is the ledger's figure under conversion noise: the
// point is the ledger figure exactly.
TEST(ApportionTest, WithoutIdleThePointIsTheLedgerFigure) {
  std::vector<TenantInput> t = {{"a", 600, 50, 100, 0}, {"b", 300, 40, 60, 0}};
  Rng rng(1);
  auto x = MonteCarloIntervals(t, 0, 2'000, rng);
  for (const TenantInterval& i : x) {
    EXPECT_DOUBLE_EQ(i.point_usd, i.ledger_usd);
    EXPECT_LT(i.p025_usd, i.point_usd);
    EXPECT_GT(i.p975_usd, i.point_usd);
  }
}

}  // namespace
}  // namespace seedance::ledger
