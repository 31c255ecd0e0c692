#include "seedance/cluster/gpu_model.h"

namespace seedance::cluster {

const std::vector<std::string>& KnownGpuModels() { return gpu::KnownGpuNames(); }

Result<GpuModelIndex> ParseGpuModel(std::string_view name) {
  return gpu::ParseGpuName(name, gpu::NameMatch::kCanonical);
}

std::string_view GpuModelName(GpuModelIndex m) {
  if (m == kNoGpuModel) return "";
  return gpu::GpuAt(m).name;
}

Result<GpuModelSet> ParseGpuModelSet(std::string_view text) {
  GpuModelSet set;
  while (!text.empty()) {
    std::size_t bar = text.find('|');
    std::string_view item = text.substr(0, bar);
    if (!item.empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(GpuModelIndex m, ParseGpuModel(item));
      set.Add(m);
    }
    if (bar == std::string_view::npos) break;
    text.remove_prefix(bar + 1);
  }
  return set;
}

}  // namespace seedance::cluster
