#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace seedance {

// Rng: a seeded xoshiro256** engine with our own distributions, so that results are the same on
// every standard library (std::uniform_*_distribution output is implementation-defined).
// Not thread-safe: give each thread or component its own stream (see Fork()).
class Rng {
 public:
  // The state is expanded from `seed` with SplitMix64.
  explicit Rng(std::uint64_t seed);

  // Returns 64 uniformly random bits.
  std::uint64_t Next();
  // Returns a uniform integer in [0, n). REQUIRES: n > 0. Unbiased (Lemire's method).
  std::uint64_t Uniform(std::uint64_t n);
  // Returns a uniform integer in [lo, hi]. REQUIRES: lo <= hi.
  std::int64_t UniformInt(std::int64_t lo, std::int64_t hi);
  // Returns a uniform double in [0, 1) with 53 random bits.
  double UniformDouble();
  // Returns an exponential variate with the given rate (mean 1/rate). REQUIRES: rate > 0.
  double Exponential(double rate);
  // Returns a standard normal variate (Box-Muller, one value per call).
  double Normal();
  // Returns true with probability p.
  bool Bernoulli(double p);

  // Fisher-Yates shuffle.
  template <class T>
  void Shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) {
      std::size_t j = static_cast<std::size_t>(Uniform(i));
      std::swap(v[i - 1], v[j]);
    }
  }
  // Returns a uniformly random permutation of 0..n-1.
  std::vector<std::uint32_t> Permutation(std::uint32_t n);

  // Returns an independent stream derived from this one's seed and `stream_id`; does not
  // advance this stream.
  Rng Fork(std::uint64_t stream_id) const;

 private:
  std::uint64_t seed_;
  std::uint64_t s_[4];
};

// SplitMix64 finalizer: a good 64-bit mix, used for seeding and hashing.
std::uint64_t SplitMix64(std::uint64_t& state);

}  // namespace seedance
