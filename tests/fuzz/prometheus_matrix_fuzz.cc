// libFuzzer harness for prometheus::ParseMatrix (a query_range answer, `seedance ingest
// --prometheus`): the input is the HTTP body; every sample handed to the sink is touched (ASan sees
// a dangling view) and the counts must add up.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_sink.h"
#include "seedance/prometheus/source.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  seedance::fuzz::TouchingSink sink;
  seedance::prometheus::MatrixStats stats;
  const seedance::Status s = seedance::prometheus::ParseMatrix(body, "fuzz", sink, stats);
  if (stats.samples != sink.count) __builtin_trap();
  if (!s.ok() && s.message().find("fuzz") == std::string::npos) __builtin_trap();  // errors name the query
  return 0;
}
