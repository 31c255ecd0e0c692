#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace seedance {

// A typed index: ids of different tags do not mix. Totally ordered, so usable as a stable
// tie-breaker.
template <class Tag, class Rep = std::uint32_t>
class StrongId {
 public:
  constexpr StrongId() = default;
  explicit constexpr StrongId(Rep v) : v_(v) {}
  constexpr Rep value() const { return v_; }
  constexpr auto operator<=>(const StrongId&) const = default;

 private:
  Rep v_ = 0;
};

}  // namespace seedance

template <class Tag, class Rep>
struct std::hash<seedance::StrongId<Tag, Rep>> {
  std::size_t operator()(seedance::StrongId<Tag, Rep> id) const noexcept {
    return std::hash<Rep>()(id.value());
  }
};
