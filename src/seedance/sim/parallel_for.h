#pragma once

// Runs `work(i)` for i in [0, n) on `threads` threads, strided (results must not depend on the
// split). Used by the spot benches (spot_bench.cc, adrs_bench.cc).

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace seedance::sim {

template <typename F>
void ParallelFor(std::size_t n, int threads, F work) {
  const auto t = static_cast<std::size_t>(std::max(1, threads));
  auto run = [&](std::size_t first) {
    for (std::size_t i = first; i < n; i += t) work(i);
  };
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < t; ++w) pool.emplace_back(run, w);
  run(0);
  for (auto& th : pool) th.join();
}

}  // namespace seedance::sim
