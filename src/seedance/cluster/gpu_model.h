#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/gpu/catalog.h"

namespace seedance::cluster {

// Index of a GPU model: its row in the GPU catalog (gpu::Catalog(), the same order as
// KnownGpuModels()). Small, so a set of models is a 32-bit mask.
using GpuModelIndex = gpu::GpuIndex;
inline constexpr GpuModelIndex kNoGpuModel = 0xff;

// A set of allowed GPU models. Empty means "any model".
class GpuModelSet {
 public:
  GpuModelSet() = default;
  static GpuModelSet Of(GpuModelIndex m) {
    GpuModelSet s;
    s.Add(m);
    return s;
  }
  void Add(GpuModelIndex m) { mask_ |= (1u << m); }
  bool any() const { return mask_ == 0; }
  // True if a node with model `m` is acceptable. kNoGpuModel (a CPU node) is never acceptable
  // for a GPU request.
  bool Accepts(GpuModelIndex m) const {
    if (m == kNoGpuModel) return false;
    return mask_ == 0 || (mask_ & (1u << m)) != 0;
  }
  std::uint32_t mask() const { return mask_; }
  auto operator<=>(const GpuModelSet&) const = default;

 private:
  std::uint32_t mask_ = 0;
};

// The GPU model names the trace loaders accept: the catalog's canonical names (the openb trace's
// G2 and G3 are Alibaba's undisclosed types).
const std::vector<std::string>& KnownGpuModels();

// Returns the index of `name` (exact, case-sensitive: gpu::NameMatch::kCanonical), or
// kInvalidArgument listing the known names. Free-form product strings: gpu::ParseGpuName.
Result<GpuModelIndex> ParseGpuModel(std::string_view name);
std::string_view GpuModelName(GpuModelIndex m);

// Parses a '|'-separated list ("V100M16|V100M32"); empty text means any model.
Result<GpuModelSet> ParseGpuModelSet(std::string_view text);

}  // namespace seedance::cluster
