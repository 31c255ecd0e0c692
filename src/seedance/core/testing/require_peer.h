#pragma once

// A test that needs a real peer (PostgreSQL, Prometheus, Slurm, the openssl CLI, ...) and does not
// find it skips, so that a developer's machine without the peer still runs the rest. CI must not
// pass on a skipped peer: `.ci/run` sets SEEDANCE_REQUIRE_PEERS=1, and under it the same missing
// peer is a failure that names it. The shell tests' twin is scripts/testlib/peer.sh.

#include <cstdlib>
#include <string_view>

#include <gtest/gtest.h>

namespace seedance::testing {

// Whether the environment requires every peer (SEEDANCE_REQUIRE_PEERS=1).
inline bool PeersRequired() {
  const char* v = std::getenv("SEEDANCE_REQUIRE_PEERS");
  return v != nullptr && std::string_view(v) == "1";
}

}  // namespace seedance::testing

// Use as a statement in a TEST body: SEEDANCE_SKIP_WITHOUT_PEER(!found) << "prometheus not on PATH";
// When `missing` is true, returns from the test as skipped, or as failed under
// SEEDANCE_REQUIRE_PEERS=1; the streamed reason is part of the message either way. Built the way
// GTEST_SKIP and GTEST_FAIL are (one AssertHelper, its kind chosen at run time).
#define SEEDANCE_SKIP_WITHOUT_PEER(missing)                                                        \
  if (!(missing)) {                                                                                \
  } else                                                                                           \
    return ::testing::internal::AssertHelper(                                                      \
               ::seedance::testing::PeersRequired() ? ::testing::TestPartResult::kFatalFailure     \
                                                    : ::testing::TestPartResult::kSkip,            \
               __FILE__, __LINE__,                                                                 \
               ::seedance::testing::PeersRequired()                                                \
                   ? "SEEDANCE_REQUIRE_PEERS=1 and a required peer is missing"                     \
                   : "Skipped: a peer is missing") = ::testing::Message()
