#include "seedance/tenancy/tiers.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace seedance::tenancy {

std::string_view TierName(Tier t) {
  switch (t) {
    case Tier::kGold: return "gold";
    case Tier::kSilver: return "silver";
    case Tier::kBronze: return "bronze";
  }
  return "?";
}

int TierPriority(Tier t) {
  switch (t) {
    case Tier::kGold: return 300;
    case Tier::kSilver: return 200;
    case Tier::kBronze: return 100;
  }
  return 0;
}

std::optional<Tier> ParseTier(std::string_view name) {
  std::string s(name);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (s == "gold") return Tier::kGold;
  if (s == "silver") return Tier::kSilver;
  if (s == "bronze") return Tier::kBronze;
  return std::nullopt;
}

std::array<TierParams, kNumTiers> DefaultTierParams() {
  std::array<TierParams, kNumTiers> p;
  p[0] = {.guaranteed_share = 1.0, .reclaim_util_below = 0.05, .reclaim_after_s = 720, .max_idle_s = 900, .elastic_base = 1.0};
  p[1] = {.guaranteed_share = 0.8, .reclaim_util_below = 0.10, .reclaim_after_s = 180, .max_idle_s = 300, .elastic_base = 0.8};
  p[2] = {.guaranteed_share = 0.5, .reclaim_util_below = 0.0, .reclaim_after_s = 60, .max_idle_s = 90, .elastic_base = 0.5};
  return p;
}

double ElasticScale(const TierParams& p, double idle_s, double util) {
  if (idle_s > 0) return p.elastic_base * (0.3 + 0.7 * std::exp(-idle_s / 300.0));
  return p.elastic_base * std::min(1.5, 1.0 + std::clamp(util, 0.0, 1.0) * 0.5);
}

std::string GpuResourceName(std::string_view catalog_name) { return "gpu/" + std::string(catalog_name); }

}  // namespace seedance::tenancy
