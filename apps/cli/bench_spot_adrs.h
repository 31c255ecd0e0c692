#pragma once

#include <string>

namespace seedance::cli {

// `bench spot --adrs`: the ADRS leaderboard's own setting for the evolved programs (beside their
// published figures), then every policy on the authors' sampled windows, evaluation half (odd
// windows numbered <= max_window). Writes out_dir/spot.json; returns the exit code.
int RunAdrsBench(const std::string& out_dir, int threads, int max_window);

}  // namespace seedance::cli
