#include "seedance/cluster/gpu_model.h"

namespace seedance::cluster {

const std::vector<std::string>& KnownGpuModels() {
  static const std::vector<std::string> kModels = {
      "G2",  "G3",   "T4",   "P100", "V100M16", "V100M32", "A10",  "K80",  "V100", "A100",
      "A100-80G", "H100", "H800", "A800", "L4", "L40S", "A10G", "RTX6000", "2080Ti", "H200"};
  return kModels;
}

Result<GpuModelIndex> ParseGpuModel(std::string_view name) {
  const auto& models = KnownGpuModels();
  for (std::size_t i = 0; i < models.size(); ++i) {
    if (models[i] == name) return static_cast<GpuModelIndex>(i);
  }
  std::string known;
  for (const auto& m : models) known += (known.empty() ? "" : ", ") + m;
  return InvalidArgumentError("unknown GPU model '" + std::string(name) + "' (known: " + known +
                              ")");
}

std::string_view GpuModelName(GpuModelIndex m) {
  if (m == kNoGpuModel) return "";
  return KnownGpuModels().at(m);
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
