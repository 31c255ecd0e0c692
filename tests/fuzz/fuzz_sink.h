#pragma once
// A sink for the fuzz harnesses: touches every view it is given so that ASan sees dangling ones.
#include <cstdint>

#include "seedance/telemetry/sample.h"

namespace seedance::fuzz {

class TouchingSink final : public telemetry::SampleSink {
 public:
  void OnSample(const telemetry::SampleView& s) override {
    for (const telemetry::LabelView& l : s.labels) {
      for (char c : l.name) bytes += static_cast<unsigned char>(c);
      for (char c : l.value) bytes += static_cast<unsigned char>(c);
    }
    for (char c : s.metric) bytes += static_cast<unsigned char>(c);
    ++count;
  }
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
};

}  // namespace seedance::fuzz
