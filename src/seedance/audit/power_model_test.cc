#include "seedance/audit/power_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "seedance/audit/audit.h"
#include "seedance/audit/synthetic.h"

namespace seedance::audit {
namespace {

constexpr std::int64_t kNow = 1'790'000'000;

// S7.5: telemetry generated from a known linear model with noise; the per-model fit recovers
// the coefficients within 5% and reports R².
TEST(PowerModelTest, RecoversKnownCoefficientsWithinFivePercent) {
  SyntheticPowerModel truth{.sm_w = 310, .int_w = 55, .dram_w = 120, .idle_w = 70, .noise_w = 8};
  Rng rng(17);
  std::vector<NodeTelemetry> fleet;
  for (int i = 0; i < 6; ++i) {
    SyntheticNode n;
    n.host = "h" + std::to_string(i);
    n.model_name = "NVIDIA H100 80GB HBM3";
    n.gpus = 4;
    n.activity = 0.3 + 0.08 * i;
    n.power = truth;
    fleet.push_back(GenerateNodeTelemetry(n, kNow - 72 * 3600, kNow, 60, rng));
  }
  auto audit = AuditFleet(fleet, AuditConfig{}, kNow);
  ASSERT_TRUE(audit.has_value()) << audit.error().ToString();
  ASSERT_EQ(audit->power_models.size(), 1u);
  const ModelPowerFit& m = audit->power_models[0];
  ASSERT_TRUE(m.fit.has_value()) << m.note;
  const PowerFit& f = *m.fit;
  const double expected[4] = {truth.sm_w, truth.int_w, truth.dram_w, truth.idle_w};
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(f.coef[static_cast<std::size_t>(k)], expected[k], 0.05 * expected[k])
        << "coefficient " << k;
  }
  EXPECT_GT(f.r2, 0.95);
  EXPECT_LT(f.r2, 1.0);
  EXPECT_NEAR(f.rmse_w, truth.noise_w, 0.5);  // the residuals are the injected noise
  EXPECT_EQ(m.flagged, 0);
  for (const NodeAudit& n : audit->nodes) {
    ASSERT_TRUE(n.metrics.power_residual_pct.has_value());
    EXPECT_LT(std::abs(*n.metrics.power_residual_pct), 2.0) << n.host;
  }
}

TEST(PowerModelTest, FlagsTheNodeThatDeviatesAndRefitsWithoutIt) {
  Rng rng(3);
  std::vector<NodeTelemetry> fleet;
  for (int i = 0; i < 5; ++i) {
    SyntheticNode n;
    n.host = "h" + std::to_string(i);
    n.gpus = 2;
    if (i == 2) {
      n.fault = SyntheticFault::kPowerDrift;
      n.fault_start_s = kNow - 24 * 3600;
      n.fault_magnitude = 0.4;  // +40 % per day
    }
    fleet.push_back(GenerateNodeTelemetry(n, kNow - 72 * 3600, kNow, 120, rng));
  }
  auto audit = AuditFleet(fleet, AuditConfig{}, kNow);
  ASSERT_TRUE(audit.has_value());
  EXPECT_EQ(audit->power_models[0].flagged, 2);
  EXPECT_NEAR(audit->power_models[0].fit->coef[0], 250, 12.5);  // the refit is clean
  for (const NodeAudit& n : audit->nodes) {
    const auto power = n.health[static_cast<std::size_t>(HealthCategory::kPower)].result;
    EXPECT_EQ(power == HealthResult::kFail, n.host == "h2") << n.host;
    EXPECT_EQ(n.outcome == AuditOutcome::kFail, n.host == "h2") << n.host;
  }
}

TEST(PowerModelTest, TooFewSamplesOrConstantPowerIsAnError) {
  PowerAccumulator acc;
  for (int i = 0; i < 5; ++i) acc.Add(0.1 * i, 0, 0, 100 + i);
  EXPECT_EQ(FitPower(acc).error().code(), StatusCode::kFailedPrecondition);
  PowerAccumulator flat;
  for (int i = 0; i < 50; ++i) flat.Add(0.01 * i, 0.2, 0.3, 100);
  EXPECT_NE(FitPower(flat).error().message().find("does not vary"), std::string::npos);
}

TEST(PowerModelTest, MergeAndSubtractAreExact) {
  PowerAccumulator a, b, ab;
  for (int i = 0; i < 20; ++i) {
    a.Add(0.05 * i, 0.1, 0.02 * i, 100 + 3 * i);
    ab.Add(0.05 * i, 0.1, 0.02 * i, 100 + 3 * i);
    b.Add(0.5, 0.03 * i, 0.2, 150 + i);
    ab.Add(0.5, 0.03 * i, 0.2, 150 + i);
  }
  PowerAccumulator m = a;
  m.Merge(b);
  EXPECT_EQ(m.n, ab.n);
  EXPECT_DOUBLE_EQ(m.yty, ab.yty);
  m.Subtract(b);
  EXPECT_NEAR(m.xtx[0], a.xtx[0], 1e-9);
}

}  // namespace
}  // namespace seedance::audit
