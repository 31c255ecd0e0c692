// libFuzzer harness for the fleet file (sim/fleet_file.h: ParseFleetFile from a string, then
// BuildFleetSpec over the types it names). Series paths resolve against fuzz_files.h's folder;
// inputs with a '/' are skipped (no file outside it is read).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_files.h"
#include "seedance/cost/price_table.h"
#include "seedance/sim/fleet_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace seedance;
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find('/') != std::string::npos) return 0;
  static const cost::PriceTable prices = [] {
    auto p = cost::PriceTable::LoadFile(cost::BundledPriceTablePath());
    if (!p.has_value()) __builtin_trap();
    return std::move(*p);
  }();
  auto f = sim::ParseFleetFile("fleet.yaml", text, fuzz::SeriesDir());
  if (!f.has_value()) {
    if (f.error().message().rfind("fleet.yaml", 0) != 0) __builtin_trap();  // errors name the file
    return 0;
  }
  std::vector<std::string> types;
  for (const auto& g : f->gpus) {
    if (g.owned < 0 || g.reserved < 0 || g.on_demand_quota < 0) __builtin_trap();
    types.push_back(g.type);
  }
  (void)sim::BuildFleetSpec(*f, types, prices);
  return 0;
}
