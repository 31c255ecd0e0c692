// The time-aware lower bound is a bound (issue 39 item 2): every row the fleet-week command runs
// pays at least the bound for its own work, on one held-out seed of each set (slow: four weeks are
// built, every row is run on each, a bound LP per row).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seedance/fleet/bound.h"
#include "seedance/fleet/comparison.h"
#include "seedance/fleet/engine.h"
#include "seedance/fleet/scenario.h"

namespace seedance::fleet {
namespace {

// Validity beats tightness: on each set the fleet-week command runs (fleet a week 2, fleet b,
// fleet a week 1, owned fleet c; one held-out seed each, seed 5), every row it runs (the standard
// rows, the competent base with and without Karpenter, Seedance, each waterfall lever on the base,
// Seedance at each frontier patience) pays at least the bound for its own work and deadlines.
TEST(FleetWeekBoundTest, EveryRowOfTheCommandPaysAtLeastTheBoundForItsOwnWork) {
  std::vector<StackConfig> rows = {StandardStack("least-allocated"), StandardStack("most-allocated"), CompetentStack(),
                                   SeedanceStack(), CompetentStackWithoutKarpenter()};
  for (const Lever& lever : WaterfallLevers()) {
    StackConfig c = CompetentStack();
    lever.apply(&c);
    c.name = "base + " + lever.name;
    rows.push_back(c);
  }
  for (double knob : kFrontierMigrateMinSpeed) {
    if (knob == SeedanceStack().migrate_min_speed) continue;
    StackConfig c = SeedanceStack();
    c.migrate_min_speed = knob;
    c.name = "seedance at migrate_min_speed " + std::to_string(knob);
    rows.push_back(c);
  }
  struct Set {
    std::string shape;
    int week;
  };
  for (const Set& set : {Set{"a", 1}, Set{"b", 1}, Set{"a", 0}, Set{"c", 1}}) {
    FleetWeekOptions o;
    o.data_dir = SEEDANCE_TEST_DATA_DIR;
    o.cache_dir = SEEDANCE_TEST_CACHE_DIR;
    o.shape = set.shape;
    o.week = set.week;
    o.seed = 5;
    auto s = BuildFleetWeek(o);
    ASSERT_TRUE(s.has_value()) << s.error().message();
    for (const StackConfig& stack : rows) {
      auto r = RunFleetWeek(*s, stack);
      ASSERT_TRUE(r.has_value()) << set.shape << ": " << stack.name;
      auto b = FleetWeekLowerBoundUsd(*s, *r);
      ASSERT_TRUE(b.has_value()) << set.shape << ": " << stack.name << ": " << b.error().message();
      EXPECT_LE(*b, r->total_usd) << "fleet " << set.shape << " week " << set.week + 1 << ": " << stack.name;
      EXPECT_GE(*b, r->committed_usd * (1 - 1e-9)) << set.shape << ": " << stack.name;  // the committed bill, summed two ways
    }
  }
}

}  // namespace
}  // namespace seedance::fleet
