// S5.4: the 200 ms feedback controller after a load step (the arrival rate doubles mid-trace).
#include <gtest/gtest.h>

#include "seedance/batching/benchmark.h"

namespace seedance::batching {
namespace {

BatchingConfig StepConfig() {
  BatchingConfig c;
  c.data_dir = SEEDANCE_TEST_DATA_DIR;
  c.multi_tenant = false;
  c.settings.seedance.pareto_cap = true;
  c.settings.seedance.feedback_controller = true;  // off by default; measured here
  return c;
}

TEST(ControllerTest, CapSettlesWithinFivePeriodsAfterARateStep) {
  // 4 req/s then 8 req/s of conversation-trace lengths: below and above what one A100 sustains.
  auto r = ControllerStepResponse(StepConfig(), 4.0, 60.0);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_GT(r->ticks.size(), 100u);
  EXPECT_GE(r->settle_ticks, 0) << "the cap never settles within +-10%";
  EXPECT_LE(r->settle_ticks, 5);
  EXPECT_LE(r->max_deviation_after_settle, 0.10);
}

TEST(ControllerTest, StepResponseIsDeterministic) {
  auto a = ControllerStepResponse(StepConfig(), 4.0, 20.0);
  auto b = ControllerStepResponse(StepConfig(), 4.0, 20.0);
  ASSERT_TRUE(a.has_value() && b.has_value());
  ASSERT_EQ(a->ticks.size(), b->ticks.size());
  for (std::size_t i = 0; i < a->ticks.size(); ++i) {
    EXPECT_EQ(a->ticks[i].cap, b->ticks[i].cap);
    EXPECT_DOUBLE_EQ(a->ticks[i].t, b->ticks[i].t);
  }
}

TEST(ControllerTest, RejectsBadArguments) {
  EXPECT_FALSE(ControllerStepResponse(StepConfig(), 0, 60).has_value());
  EXPECT_FALSE(ControllerStepResponse(StepConfig(), 4, -1).has_value());
}

}  // namespace
}  // namespace seedance::batching
