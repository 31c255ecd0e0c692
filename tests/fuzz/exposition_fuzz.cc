// libFuzzer harness for ExpositionParser. The first input byte picks the format (mod 3:
// Prometheus text 0.0.4, OpenMetrics, dcgm-exporter) and, through its high bits, a chunk size
// for Feed (so that lines split across chunks are exercised); the rest is the exposition.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/telemetry/parse.h"
#include "fuzz_sink.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace seedance::telemetry;
  if (size == 0) return 0;
  static constexpr InputFormat kFormats[] = {InputFormat::kPrometheus, InputFormat::kOpenMetrics,
                                             InputFormat::kDcgm};
  const InputFormat format = kFormats[data[0] % 3];
  const std::size_t chunk = 1 + (data[0] >> 2);  // 1..64 bytes
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  seedance::fuzz::TouchingSink sink;
  ParseStats stats;
  ParseOptions options;
  options.source = "fuzz";
  {
    ExpositionParser parser(format, options, sink, stats);
    for (std::size_t at = 0; at < text.size(); at += chunk) parser.Feed(text.substr(at, chunk));
    parser.Finish();
  }
  // Whole-input parse must agree with the chunked one.
  seedance::fuzz::TouchingSink whole_sink;
  ParseStats whole;
  ParseText(format, text, options, whole_sink, whole);
  if (whole.samples != stats.samples || whole.rejected != stats.rejected) __builtin_trap();
  return 0;
}
