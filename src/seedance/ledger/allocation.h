#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/core/units.h"

namespace seedance::ledger {

// Every GPU-second of a node is charged to exactly one of three kinds (OpenCost: Total = Workload
// + Idle + Overhead).
enum class ChargeKind : std::uint8_t {
  kWorkload = 0,  // a workload's max(request, usage)
  kIdle = 1,      // capacity nobody requested or used (kept as idle, or shared to a workload)
  kOverhead = 2,  // system overhead: overhead namespaces and the configured fixed fraction
};
std::string_view ChargeKindName(ChargeKind kind);  // "workload", "idle", "overhead"

// How idle capacity is shared (OpenCost shareIdle).
enum class IdleShare : std::uint8_t {
  kNone,           // idle stays its own line (workload 0)
  kByUsage,        // to the node's workloads in proportion to their measured usage
  kByTenantWeight  // to the node's workloads in proportion to tenant weight x max(request, usage)
};
Result<IdleShare> ParseIdleShare(std::string_view name);  // "none", "usage", "tenant_weight"
std::string_view IdleShareName(IdleShare share);

inline constexpr std::uint32_t kNoWorkload = 0;

// One holder of GPU capacity on a node during an interval (summed over its GPUs).
struct GpuUse {
  std::uint32_t workload = kNoWorkload;  // stable id > 0; ties in rounding go to the lower id
  std::int64_t request_milli = 0;        // requested GPU, milli-GPU (1000 = one whole GPU)
  std::int64_t usage_milli = 0;          // measured use, milli-GPU (1000 x GR_ENGINE_ACTIVE)
  std::int64_t weight = 1000;            // tenant weight in thousandths (kByTenantWeight only)
  bool overhead = false;                 // held by a system (overhead) namespace
};

// One node during one interval: what it costs and who held it.
struct NodeInterval {
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
  std::uint32_t node = 0;
  Money bill;                       // what the node costs for the interval (the truth to match)
  std::int64_t capacity_milli = 0;  // GPUs x 1000
  std::int64_t overhead_milli = 0;  // fixed system overhead reserved off the top, milli-GPU
  std::span<const GpuUse> uses;     // one per workload (a workload appears at most once)
};

// One ledger line.
struct Charge {
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
  std::uint32_t node = 0;
  ChargeKind kind = ChargeKind::kWorkload;
  std::uint32_t workload = kNoWorkload;  // kNoWorkload for unshared idle and for overhead
  Money cost;
  std::int64_t gpu_ms = 0;  // GPU-milliseconds this line stands for
};

// Splits `n.bill` into charges and appends them to `out`. The rule (documented in
// docs/ARCHITECTURE.md):
//   1. Weights in milli-GPU over the interval: each workload w_i = max(request_i, usage_i)
//      (OpenCost); overhead o = overhead_milli + the w of uses marked overhead;
//      T = max(capacity, sum w + o); idle = T - sum w - o (>= 0). When the holders exceed the
//      capacity, T grows, so everybody is scaled down together and the bill is never exceeded.
//   2. Idle sharing: kNone keeps one idle line; kByUsage gives the idle weight to workloads in
//      proportion to usage_i (to w_i when nobody used anything); kByTenantWeight in proportion to
//      weight_i x w_i. With no workload on the node, idle stays unshared.
//   3. Money: each line gets floor(bill x weight / total) micro-USD, exactly (128-bit integers);
//      the micro-dollars left (fewer than the number of lines) go one each to the lines with the
//      largest remainders, ties to the lower (kind, workload) key. So the lines sum to the bill
//      exactly, and the result does not depend on input order.
// Lines with zero weight are not emitted. REQUIRES: bill >= 0, capacity_milli >= 0,
// end_ms > start_ms, workload ids unique and > 0.
void AllocateNodeInterval(const NodeInterval& n, IdleShare idle_share, std::vector<Charge>& out);

// Splits `total` into parts proportional to `weights` with the largest-remainder rule (ties to
// the lower index); the parts sum to `total` exactly. All-zero weights give all-zero parts, and
// then the parts do not sum to total. REQUIRES: weights >= 0, total >= 0.
std::vector<std::int64_t> SplitLargestRemainder(std::int64_t total,
                                                std::span<const std::int64_t> weights);

}  // namespace seedance::ledger
