#include "seedance/core/clock.h"

namespace seedance {

// The only place in the code base that reads the system clocks.
Duration SteadyClock::Now() const {
  return std::chrono::duration_cast<Duration>(
      std::chrono::steady_clock::now().time_since_epoch());
}

Duration SystemClock::Now() const {
  return std::chrono::duration_cast<Duration>(
      std::chrono::system_clock::now().time_since_epoch());
}

}  // namespace seedance
