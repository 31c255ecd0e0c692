#pragma once

#include <chrono>
#include <cstdint>

#include "seedance/core/units.h"

namespace seedance {

// The one seam for time. Policy code reads time only through an injected Clock.
// Implementations: SimClock (simulator, tests), SteadyClock (server, wall-time measurements).
class Clock {
 public:
  virtual ~Clock() = default;
  // Returns nanoseconds since the clock's epoch.
  virtual Duration Now() const = 0;
};

// A clock that moves only when told. Not thread-safe.
class SimClock final : public Clock {
 public:
  Duration Now() const override { return now_; }
  // REQUIRES: d >= 0.
  void Advance(Duration d) { now_ += d; }
  void Set(Duration t) { now_ = t; }

 private:
  Duration now_{0};
};

// Monotonic wall clock. Thread-safe.
class SteadyClock final : public Clock {
 public:
  Duration Now() const override;
};

// The system (calendar) clock: nanoseconds since the Unix epoch. For drivers that must compare
// with timestamps another system writes (Slurm's submit and start times). Thread-safe.
class SystemClock final : public Clock {
 public:
  Duration Now() const override;
};

// Seconds as double, for reports.
inline double ToSeconds(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace seedance
