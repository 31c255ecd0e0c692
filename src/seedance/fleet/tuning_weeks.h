// The fleet week's tuning set for the tests that read it (fleet a, week 1, seeds 0-4; nothing held
// out): built once per test binary, serving profiles from the build tree's cache. A test target
// that includes this defines SEEDANCE_TEST_DATA_DIR and SEEDANCE_TEST_CACHE_DIR.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "seedance/fleet/scenario.h"

namespace seedance::fleet {

inline const std::vector<FleetWeekScenario>& TuningWeeks() {
  static const std::vector<FleetWeekScenario> weeks = [] {
    std::vector<FleetWeekScenario> w;
    for (std::uint64_t seed = 0; seed <= 4; ++seed) {
      FleetWeekOptions o;
      o.data_dir = SEEDANCE_TEST_DATA_DIR;
      o.cache_dir = SEEDANCE_TEST_CACHE_DIR;
      o.shape = "a";
      o.week = 0;
      o.seed = seed;
      o.profiles_from = w.empty() ? nullptr : &w.front();
      auto r = BuildFleetWeek(o);
      EXPECT_TRUE(r.has_value()) << (r.has_value() ? "" : r.error().message());
      if (r.has_value()) w.push_back(std::move(*r));
    }
    return w;
  }();
  return weeks;
}

}  // namespace seedance::fleet
