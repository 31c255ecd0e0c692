#pragma once

#include <chrono>
#include <compare>
#include <cstdint>

namespace seedance {

// A quantity with a unit tag. Built only through explicit factories; mixing tags does not compile.
template <class Tag, class Rep = std::int64_t>
class Quantity {
 public:
  constexpr Quantity() = default;
  static constexpr Quantity FromRaw(Rep r) { return Quantity(r); }
  constexpr Rep raw() const { return raw_; }
  constexpr auto operator<=>(const Quantity&) const = default;

  friend constexpr Quantity operator+(Quantity a, Quantity b) { return Quantity(a.raw_ + b.raw_); }
  friend constexpr Quantity operator-(Quantity a, Quantity b) { return Quantity(a.raw_ - b.raw_); }
  friend constexpr Quantity operator*(Quantity a, Rep k) { return Quantity(a.raw_ * k); }
  friend constexpr Quantity operator*(Rep k, Quantity a) { return Quantity(a.raw_ * k); }
  constexpr Quantity& operator+=(Quantity o) {
    raw_ += o.raw_;
    return *this;
  }
  constexpr Quantity& operator-=(Quantity o) {
    raw_ -= o.raw_;
    return *this;
  }

 private:
  explicit constexpr Quantity(Rep r) : raw_(r) {}
  Rep raw_ = 0;
};

struct MoneyTag {};
struct MilliCpuTag {};
struct MilliGpuTag {};
struct MebibytesTag {};
struct BytesTag {};

// Money in integer micro-USD: sums are exact.
using Money = Quantity<MoneyTag>;
// CPU in milli-cores (Kubernetes "m").
using MilliCpu = Quantity<MilliCpuTag>;
// GPU in milli-GPUs: 1000 is one whole device.
using MilliGpu = Quantity<MilliGpuTag>;
// Memory in MiB (as Kubernetes traces report it).
using Mebibytes = Quantity<MebibytesTag>;
using Bytes = Quantity<BytesTag>;

constexpr Money MicroUsd(std::int64_t v) { return Money::FromRaw(v); }
constexpr Money Usd(std::int64_t v) { return Money::FromRaw(v * 1'000'000); }
// Rounds to the nearest micro-dollar (half away from zero).
constexpr Money UsdFromDouble(double usd) {
  double micro = usd * 1e6;
  return Money::FromRaw(static_cast<std::int64_t>(micro < 0 ? micro - 0.5 : micro + 0.5));
}
constexpr double ToUsd(Money m) { return static_cast<double>(m.raw()) / 1e6; }

constexpr MilliCpu Millicores(std::int64_t v) { return MilliCpu::FromRaw(v); }
constexpr MilliGpu MilliGpus(std::int64_t v) { return MilliGpu::FromRaw(v); }
constexpr MilliGpu Gpus(std::int64_t v) { return MilliGpu::FromRaw(v * 1000); }
constexpr Mebibytes MiB(std::int64_t v) { return Mebibytes::FromRaw(v); }
constexpr Bytes GiB(std::int64_t v) { return Bytes::FromRaw(v << 30); }

using Duration = std::chrono::nanoseconds;

}  // namespace seedance
