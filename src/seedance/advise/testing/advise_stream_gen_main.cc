// advise_stream_gen OUT_FILE [HOURS] [--idle-namespace] [--input-bound] [--oversized] [--spot-eligible]
// [--unit-cost-outlier]: writes the advisor's test fleet (see waste_stream.h) as Prometheus text.
// Test helper, not part of the product.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "seedance/advise/testing/waste_stream.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: advise_stream_gen OUT_FILE [HOURS] [--idle-namespace] [--input-bound] "
                 "[--oversized] [--spot-eligible] [--unit-cost-outlier]\n";
    return 2;
  }
  seedance::advise::testing::WasteStreamSpec spec;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--idle-namespace") {
      spec.idle_namespace = true;
    } else if (a == "--input-bound") {
      spec.input_bound = true;
    } else if (a == "--oversized") {
      spec.oversized = true;
    } else if (a == "--spot-eligible") {
      spec.spot_eligible = true;
    } else if (a == "--unit-cost-outlier") {
      spec.unit_cost_outlier = true;
    } else if (!a.empty() && a[0] != '-') {
      spec.duration_ms = std::atoll(a.c_str()) * 3600 * 1000;
    } else {
      std::cerr << "advise_stream_gen: unknown flag " << a << "\n";
      return 2;
    }
  }
  std::ofstream out(argv[1], std::ios::binary);
  seedance::advise::testing::GenerateWasteStream(
      spec, [&](std::string_view s) { out.write(s.data(), static_cast<std::streamsize>(s.size())); });
  out.close();
  return out ? 0 : 1;
}
