#include "seedance/core/clock.h"

namespace seedance {

// The only place in the code base that reads the system clock.
Duration SteadyClock::Now() const {
  return std::chrono::duration_cast<Duration>(
      std::chrono::steady_clock::now().time_since_epoch());
}

}  // namespace seedance
