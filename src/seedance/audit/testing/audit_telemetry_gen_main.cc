// audit_telemetry_gen OUT_FILE END_UNIX_S HOURS HOST[:FAULT] ...: writes synthetic dcgm-exporter
// text (1-minute samples, 2 A100 GPUs per node) for CLI tests. FAULT: xid | drift | hot | nopower (no power samples) | none.
// Test helper, not part of the product.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "seedance/audit/synthetic.h"
#include "seedance/audit/telemetry_adapter.h"

int main(int argc, char** argv) {
  using namespace seedance::audit;  // NOLINT
  if (argc < 5) {
    std::cerr << "usage: audit_telemetry_gen OUT_FILE END_UNIX_S HOURS HOST[:FAULT] ...\n";
    return 2;
  }
  const std::int64_t end = std::atoll(argv[2]);
  const std::int64_t hours = std::atoll(argv[3]);
  seedance::Rng rng(7);
  std::ofstream out(argv[1], std::ios::binary);
  for (int i = 4; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto colon = arg.find(':');
    SyntheticNode n;
    n.host = arg.substr(0, colon);
    n.gpus = 2;
    const std::string fault = colon == std::string::npos ? "none" : arg.substr(colon + 1);
    n.fault_start_s = end - 6 * 3600;
    if (fault == "xid") n.fault = SyntheticFault::kXid;
    if (fault == "hot") {
      n.fault = SyntheticFault::kHot;
      n.fault_magnitude = 30;
    }
    if (fault == "drift") {
      n.fault = SyntheticFault::kPowerDrift;
      n.fault_magnitude = 1.0;
    }
    NodeTelemetry t = GenerateNodeTelemetry(n, end - hours * 3600, end, 60, rng);
    if (fault == "nopower") {
      for (auto& g : t.gpus) g.col(Field::kPowerW).clear();
    }
    out << RenderDcgmExposition(t);
  }
  return out ? 0 : 1;
}
