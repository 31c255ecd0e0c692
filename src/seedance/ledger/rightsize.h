#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>
#include <optional>
#include <string_view>

#include "seedance/cost/node_pool.h"
#include "seedance/cost/price_table.h"
#include "seedance/gpu/catalog.h"

namespace seedance::ledger {

// The one "a cheaper GPU would do" rule: `seedance breaker`'s first suggestion and `seedance
// advise`'s smaller-gpu finding both call CheaperGpuThatFits, so they never disagree on a job.
struct RightsizeRule {
  double memory_margin = 1.10;  // the cheaper GPU must hold the peak memory x this
  double headroom = 0.80;       // ... and its FP16 TFLOPS x this must cover activity x the current GPU's
};

struct RightsizePick {
  const cost::GpuPrice* price = nullptr;      // the chosen row of the price table
  const gpu::GpuFacts* facts = nullptr;       // the chosen GPU
  const gpu::GpuFacts* current = nullptr;     // the GPU the job runs on
  double need_gib = 0;                        // peak memory x memory_margin
  double need_tflops = 0;                     // activity x the current GPU's FP16 TFLOPS
};

// The catalog row of a GPU as telemetry names it (dcgm modelName, a catalog name or an alias), or
// nullptr.
const gpu::GpuFacts* GpuFactsOf(std::string_view dcgm_or_catalog_name);

// The cheapest disclosed GPU of `prices` (ties by name) that is cheaper than current_price_micro,
// holds peak_memory_mib x memory_margin and whose FP16 TFLOPS x headroom cover activity (the
// job's mean GPU activity, 0..1) x the current GPU's FP16 TFLOPS. std::nullopt when none does, or
// when the current GPU, its price (<= 0), the peak memory (<= 0) or the activity (< 0) is unknown.
std::optional<RightsizePick> CheaperGpuThatFits(const cost::PriceTable& prices, std::string_view current_model,
                                                std::int64_t current_price_micro, double peak_memory_mib,
                                                double activity, const RightsizeRule& rule = {});

// A fleet file's node pools as breaker and advise read them (issue 38): each node's pool, and the
// GPU types the fleet rents at their pool prices, the only ones either suggests moving rented work
// to. Owned and reserved pools are paid for the window: moving work off them saves no cash.
struct FleetPools {
  std::vector<cost::NodePool> pools;
  std::map<std::string, const cost::NodePool*> node_pool;  // by node name, into pools
  cost::PriceTable rented;                                  // cost::RentedPoolPrices(pools)

  const cost::NodePool* PoolOf(const std::string& node) const {
    auto it = node_pool.find(node);
    return it == node_pool.end() ? nullptr : it->second;
  }
  // The fleet's spot pool of `gpu_type`, or nullptr.
  const cost::NodePool* SpotPool(std::string_view gpu_type) const {
    for (const cost::NodePool& p : pools) {
      if (p.kind == cost::PoolKind::kSpot && p.gpu_type == gpu_type) return &p;
    }
    return nullptr;
  }
};

}  // namespace seedance::ledger
