#include "seedance/core/rng.h"

#include <cmath>
#include <numbers>

#include "seedance/core/check.h"

namespace seedance {
namespace {

constexpr std::uint64_t Rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

}  // namespace

std::uint64_t SplitMix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) : seed_(seed) {
  std::uint64_t st = seed;
  for (auto& s : s_) s = SplitMix64(st);
}

std::uint64_t Rng::Next() {
  const std::uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::Uniform(std::uint64_t n) {
  SEEDANCE_CHECK(n > 0) << "Uniform(0)";
  // Lemire's nearly-divisionless unbiased bounded integer.
  __extension__ using U128 = unsigned __int128;
  U128 m = static_cast<U128>(Next()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;
    while (low < threshold) {
      m = static_cast<U128>(Next()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

std::int64_t Rng::UniformInt(std::int64_t lo, std::int64_t hi) {
  SEEDANCE_CHECK(lo <= hi);
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  if (span == 0) return static_cast<std::int64_t>(Next());  // full 64-bit range
  return lo + static_cast<std::int64_t>(Uniform(span));
}

double Rng::UniformDouble() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

double Rng::Exponential(double rate) {
  SEEDANCE_CHECK(rate > 0);
  return -std::log1p(-UniformDouble()) / rate;
}

double Rng::Normal() {
  double u1 = UniformDouble();
  while (u1 <= 0.0) u1 = UniformDouble();
  const double u2 = UniformDouble();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

bool Rng::Bernoulli(double p) { return UniformDouble() < p; }

std::vector<std::uint32_t> Rng::Permutation(std::uint32_t n) {
  std::vector<std::uint32_t> p(n);
  for (std::uint32_t i = 0; i < n; ++i) p[i] = i;
  Shuffle(p);
  return p;
}

Rng Rng::Fork(std::uint64_t stream_id) const {
  std::uint64_t st = seed_ ^ (0xd1b54a32d192ed03ULL * (stream_id + 1));
  return Rng(SplitMix64(st));
}

}  // namespace seedance
