#include "seedance/ledger/rightsize.h"

#include "seedance/cluster/gpu_model.h"
#include "seedance/telemetry/sample.h"

namespace seedance::ledger {

const gpu::GpuFacts* GpuFactsOf(std::string_view dcgm_or_catalog_name) {
  auto idx = gpu::ParseGpuName(dcgm_or_catalog_name, gpu::NameMatch::kCanonical);
  if (!idx.has_value()) {
    std::string_view cat = telemetry::CatalogModelName(dcgm_or_catalog_name);
    if (cat.empty()) return nullptr;
    idx = gpu::ParseGpuName(cat, gpu::NameMatch::kCanonical);
    if (!idx.has_value()) return nullptr;
  }
  return &gpu::GpuAt(*idx);
}

std::optional<RightsizePick> CheaperGpuThatFits(const cost::PriceTable& prices, std::string_view current_model,
                                                std::int64_t current_price_micro, double peak_memory_mib,
                                                double activity, const RightsizeRule& rule) {
  const gpu::GpuFacts* cur = GpuFactsOf(current_model);
  if (cur == nullptr || current_price_micro <= 0 || !(peak_memory_mib > 0) || !(activity >= 0)) return std::nullopt;
  RightsizePick pick;
  pick.current = cur;
  pick.need_gib = peak_memory_mib / 1024.0 * rule.memory_margin;
  pick.need_tflops = activity * cur->fp16_tflops;
  for (const cost::GpuPrice& p : prices.prices()) {
    const gpu::GpuFacts& g = gpu::GpuAt(p.model);
    if (!g.disclosed || g.memory_gib < pick.need_gib || g.fp16_tflops * rule.headroom < pick.need_tflops ||
        p.usd_per_gpu_hour.raw() >= current_price_micro) {
      continue;
    }
    if (pick.price == nullptr || p.usd_per_gpu_hour < pick.price->usd_per_gpu_hour ||
        (p.usd_per_gpu_hour == pick.price->usd_per_gpu_hour &&
         cluster::GpuModelName(p.model) < cluster::GpuModelName(pick.price->model))) {
      pick.price = &p;
      pick.facts = &g;
    }
  }
  if (pick.price == nullptr) return std::nullopt;
  return pick;
}

}  // namespace seedance::ledger
