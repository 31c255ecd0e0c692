// telemetry_gen OUT_FILE [HOURS] [NODES] [INTERVAL_S] [--no-timestamps]: writes a generated
// dcgm-exporter stream (see exposition_generator.h). Test helper, not part of the product.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "seedance/telemetry/testing/exposition_generator.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: telemetry_gen OUT_FILE [HOURS] [NODES] [INTERVAL_S] [--no-timestamps]\n";
    return 2;
  }
  seedance::telemetry::testing::StreamSpec spec;
  if (argc > 2) spec.duration_ms = std::atoll(argv[2]) * 3600 * 1000;
  if (argc > 3) spec.nodes = std::atoi(argv[3]);
  if (argc > 4) spec.interval_ms = std::atoll(argv[4]) * 1000;
  if (argc > 5 && std::string(argv[5]) == "--no-timestamps") spec.timestamps = false;
  std::ofstream out(argv[1], std::ios::binary);
  seedance::telemetry::testing::GenerateDcgmStream(
      spec, [&](std::string_view s) { out.write(s.data(), static_cast<std::streamsize>(s.size())); });
  out.close();
  return out ? 0 : 1;
}
