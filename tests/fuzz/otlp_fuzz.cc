// libFuzzer harness for ParseOtlpJson (a JSON document or JSON Lines).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/telemetry/parse.h"
#include "fuzz_sink.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace seedance::telemetry;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  seedance::fuzz::TouchingSink sink;
  ParseStats stats;
  ParseOptions options;
  options.source = "fuzz";
  ParseOtlpJson(text, options, sink, stats);
  if (stats.samples != sink.count) __builtin_trap();
  return 0;
}
