#include "seedance/sim/engine.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "seedance/sim/gavel_protocol.h"
#include "seedance/sim/policies/gavel_policies.h"

namespace seedance::sim {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;

TEST(GavelProbe, Print) {
  if (std::getenv("SEEDANCE_GAVEL_PROBE") == nullptr) GTEST_SKIP();
  auto thr = GavelThroughputs::LoadFile(kData + "/gavel/gavel_isolated_throughputs.csv");
  ASSERT_TRUE(thr.has_value()) << thr.error().ToString();
  for (const char* pol : {"fifo", "gavel-las"}) {
    for (double rate : {0.4, 2.0, 3.6}) {
      auto r = RunGavelCell(pol, GavelTrace::kContinuousSingle, rate, 0, *thr,
                            kData + "/gavel_peer/jobs_seed0_rate2.csv");
      ASSERT_TRUE(r.has_value()) << r.error().ToString();
      std::printf("%s rate %.1f: avg JCT %.2f h cost %.0f util %.3f wall %.2f s\n", pol, rate,
                  r->avg_jct_hours, r->total_cost_usd, r->utilization, r->wall_seconds);
    }
  }
}

}  // namespace
}  // namespace seedance::sim
