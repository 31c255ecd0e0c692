// libFuzzer harness for the spot windows CSV (`seedance bench spot --windows FILE`,
// sim::ParseSpotWindows). Bare trace names resolve in fuzz_files.h's folder (spot_traces/t.json);
// inputs with a '/' are skipped (no file outside it is read). What it accepts must satisfy the
// documented checks.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_files.h"
#include "seedance/sim/spot_bench.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace seedance;
  std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find('/') != std::string::npos) return 0;
  auto w = sim::ParseSpotWindows("windows.csv", std::move(text), fuzz::SeriesDir());
  if (!w.has_value()) {
    if (w.error().message().find("windows.csv") == std::string::npos) __builtin_trap();  // errors name the file
    return 0;
  }
  if (w->empty()) __builtin_trap();
  for (const sim::SpotWindow& x : *w) {
    if (x.start_tick < 0 || !(x.job_hours > 0) || !(x.changeover_hours >= 0) ||
        x.deadline_hours < x.job_hours + x.changeover_hours - 1.0 / 3600) {  // the check is in whole seconds
      __builtin_trap();
    }
  }
  return 0;
}
