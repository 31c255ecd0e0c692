#include "seedance/ledger/allocation.h"

#include <algorithm>

namespace seedance::ledger {
namespace {

__extension__ using Int128 = __int128;

struct Item {
  ChargeKind kind;
  std::uint32_t workload;
  std::int64_t weight;   // in the common (possibly scaled) unit
  std::int64_t gpu_ms;
};

// Largest remainder over items[i].weight; writes the parts into `parts`.
void Split(std::int64_t total, const std::vector<Item>& items, std::vector<std::int64_t>& parts,
           std::vector<std::pair<std::int64_t, std::size_t>>& order) {
  Int128 sum = 0;
  for (const Item& it : items) sum += it.weight;
  parts.assign(items.size(), 0);
  if (sum == 0) return;
  std::int64_t given = 0;
  order.clear();
  for (std::size_t i = 0; i < items.size(); ++i) {
    Int128 num = static_cast<Int128>(total) * items[i].weight;
    parts[i] = static_cast<std::int64_t>(num / sum);
    // Remainders are < sum; compare them scaled into int64 safely: sum fits in int64 in
    // practice (weights are milli-GPU x small factors); guard by clamping.
    Int128 rem = num % sum;
    order.emplace_back(static_cast<std::int64_t>(rem > INT64_MAX ? INT64_MAX : rem), i);
    given += parts[i];
  }
  std::int64_t left = total - given;
  if (left <= 0) return;
  // Largest remainder first; ties to the lower index (items are in key order).
  std::partial_sort(order.begin(), order.begin() + std::min<std::ptrdiff_t>(left, static_cast<std::ptrdiff_t>(order.size())), order.end(),
                    [](const auto& a, const auto& b) {
                      return a.first != b.first ? a.first > b.first : a.second < b.second;
                    });
  for (std::int64_t k = 0; k < left; ++k) ++parts[order[static_cast<std::size_t>(k)].second];
}

}  // namespace

std::string_view ChargeKindName(ChargeKind kind) {
  switch (kind) {
    case ChargeKind::kWorkload: return "workload";
    case ChargeKind::kIdle: return "idle";
    case ChargeKind::kOverhead: return "overhead";
  }
  return "workload";
}

Result<IdleShare> ParseIdleShare(std::string_view name) {
  if (name == "none") return IdleShare::kNone;
  if (name == "usage") return IdleShare::kByUsage;
  if (name == "tenant_weight") return IdleShare::kByTenantWeight;
  return InvalidArgumentError("unknown idle sharing rule '" + std::string(name) +
                              "' (accepted: none, usage, tenant_weight)");
}

std::string_view IdleShareName(IdleShare share) {
  switch (share) {
    case IdleShare::kNone: return "none";
    case IdleShare::kByUsage: return "usage";
    case IdleShare::kByTenantWeight: return "tenant_weight";
  }
  return "none";
}

std::vector<std::int64_t> SplitLargestRemainder(std::int64_t total,
                                                std::span<const std::int64_t> weights) {
  std::vector<Item> items;
  items.reserve(weights.size());
  for (std::int64_t w : weights) items.push_back({ChargeKind::kWorkload, 0, w, 0});
  std::vector<std::int64_t> parts;
  std::vector<std::pair<std::int64_t, std::size_t>> order;
  Split(total, items, parts, order);
  return parts;
}

void AllocateNodeInterval(const NodeInterval& n, IdleShare idle_share, std::vector<Charge>& out) {
  thread_local std::vector<Item> items;
  thread_local std::vector<GpuUse> uses;
  thread_local std::vector<std::int64_t> parts;
  thread_local std::vector<std::int64_t> idle_parts;
  thread_local std::vector<std::int64_t> idle_weights;
  thread_local std::vector<std::pair<std::int64_t, std::size_t>> order;
  const std::int64_t dur = n.end_ms - n.start_ms;

  uses.assign(n.uses.begin(), n.uses.end());
  std::sort(uses.begin(), uses.end(),
            [](const GpuUse& a, const GpuUse& b) { return a.workload < b.workload; });
  std::int64_t sum_w = 0;
  std::int64_t overhead = std::max<std::int64_t>(0, n.overhead_milli);
  for (const GpuUse& u : uses) {
    std::int64_t w = std::max(u.request_milli, u.usage_milli);
    if (u.overhead) {
      overhead += w;
    } else {
      sum_w += w;
    }
  }
  const std::int64_t total = std::max(n.capacity_milli, sum_w + overhead);
  const std::int64_t idle = total - sum_w - overhead;

  // Idle shares per workload (in idle_weights), or none.
  idle_weights.clear();
  std::int64_t idle_den = 0;
  bool share = idle > 0 && idle_share != IdleShare::kNone && sum_w > 0;
  if (share) {
    for (const GpuUse& u : uses) {
      if (u.overhead) continue;
      std::int64_t w = std::max(u.request_milli, u.usage_milli);
      std::int64_t s = idle_share == IdleShare::kByUsage ? u.usage_milli : w * u.weight;
      idle_weights.push_back(s);
      idle_den += s;
    }
    if (idle_den == 0 && idle_share == IdleShare::kByUsage) {
      idle_weights.clear();
      for (const GpuUse& u : uses) {
        if (!u.overhead) idle_weights.push_back(std::max(u.request_milli, u.usage_milli));
      }
      idle_den = sum_w;
    }
    share = idle_den > 0;
  }
  // Common unit: milli-GPU x idle_den (so shared idle pieces are integers).
  const std::int64_t scale = share ? idle_den : 1;
  items.clear();
  for (const GpuUse& u : uses) {
    if (u.overhead) continue;
    std::int64_t w = std::max(u.request_milli, u.usage_milli);
    if (w > 0) items.push_back({ChargeKind::kWorkload, u.workload, w * scale, w * dur / 1000});
  }
  if (idle > 0) {
    if (share) {
      idle_parts = SplitLargestRemainder(idle * dur / 1000, idle_weights);
      std::size_t k = 0;
      for (const GpuUse& u : uses) {
        if (u.overhead) continue;
        std::int64_t piece = idle * idle_weights[k];
        if (piece > 0) items.push_back({ChargeKind::kIdle, u.workload, piece, idle_parts[k]});
        ++k;
      }
    } else {
      items.push_back({ChargeKind::kIdle, kNoWorkload, idle, idle * dur / 1000});
    }
  }
  if (overhead > 0) {
    items.push_back({ChargeKind::kOverhead, kNoWorkload, overhead * scale, overhead * dur / 1000});
  }
  if (items.empty()) items.push_back({ChargeKind::kIdle, kNoWorkload, 1, 0});  // nothing at all
  // Key order (kind, workload) so that rounding ties go to the lower key.
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.workload < b.workload;
  });
  Split(n.bill.raw(), items, parts, order);
  for (std::size_t i = 0; i < items.size(); ++i) {
    out.push_back({n.start_ms, n.end_ms, n.node, items[i].kind, items[i].workload,
                   MicroUsd(parts[i]), items[i].gpu_ms});
  }
}

}  // namespace seedance::ledger
