// libFuzzer harness for ParseScontrolJobDetail (`scontrol show job -d`, the devices the Slurm
// controller joins to dcgm samples) and, through the same input, the 23.11 / 22.05 `sinfo --json`
// reader: the input is the text; the reader must answer an error or details whose invariants hold.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "seedance/slurm/slurm_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace seedance::slurm;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto details = ParseScontrolJobDetail(text);
  if (details.has_value()) {
    for (const JobGpuDetail& d : *details) {
      if (d.id <= 0) __builtin_trap();
      for (const auto& [node, idx] : d.node_gpus) {
        // A node listed has its devices, ascending and each once.
        if (node.empty() || idx.empty() || !std::is_sorted(idx.begin(), idx.end()) ||
            std::adjacent_find(idx.begin(), idx.end()) != idx.end()) {
          __builtin_trap();
        }
      }
    }
  } else if (details.error().message().rfind("scontrol show job -d: line ", 0) != 0) {
    __builtin_trap();  // every error names the line
  }
  if (!text.empty() && text.front() == '{') {
    auto nodes = ParseSinfoJson(text);
    if (nodes.has_value()) {
      for (const SlurmNode& n : *nodes)
        if (n.name.empty()) __builtin_trap();
    }
  }
  return 0;
}
