#include "seedance/ledger/breaker.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "seedance/cluster/gpu_model.h"
#include "seedance/cost/money.h"
#include "seedance/gpu/catalog.h"
#include "seedance/ledger/rightsize.h"
#include "seedance/telemetry/sample.h"

namespace seedance::ledger {

std::vector<BreakerFinding> EvaluateBreaker(
    const std::vector<Ledger::JobHour>& job_hours,
    const std::map<std::pair<std::string, std::int64_t>, JobEvidence>& evidence,
    const LedgerConfig& config, const cost::PriceTable* catalog, const FleetPools* fleet) {
  GpuPricer pricer(config, catalog);
  const RightsizeRule rightsize;
  std::vector<BreakerFinding> out;
  for (const Ledger::JobHour& jh : job_hours) {
    Money threshold = config.breaker_default_hourly;
    if (auto it = config.breaker_jobs.find(jh.job); it != config.breaker_jobs.end()) {
      threshold = it->second;
    }
    if (threshold.raw() <= 0 || jh.cost <= threshold) continue;
    BreakerFinding f;
    f.job = jh.job;
    f.tenant = jh.tenant;
    f.hour_ms = jh.hour_ms;
    f.cost = jh.cost;
    f.threshold = threshold;
    f.pause = config.breaker_pause;
    if (auto it = evidence.find({jh.job, jh.hour_ms}); it != evidence.end()) f.evidence = it->second;
    const JobEvidence& e = f.evidence;
    double gpus = std::max(1.0, std::round(static_cast<double>(jh.gpu_ms) / 3'600'000.0));
    if (e.gpus > 0) gpus = static_cast<double>(e.gpus);
    std::string_view current = telemetry::CatalogModelName(e.model);
    std::int64_t current_price = pricer.MicroUsdPerHour(e.model);
    const cost::NodePool* pool = fleet != nullptr ? fleet->PoolOf(e.node) : nullptr;
    if (pool != nullptr) current_price = UsdFromDouble(pool->usd_per_gpu_hour).raw();
    // Owned / reserved capacity is paid for the window: moving or shrinking the job saves no cash.
    const bool committed = pool != nullptr && cost::IsCommitted(pool->kind);
    bool low_util = e.mean_utilization >= 0 && e.mean_utilization < 0.5;
    // 1. A cheaper GPU that holds the peak memory and is fast enough: the rule advise's
    // smaller-gpu finding uses (rightsize.h), so the two never disagree.
    std::optional<RightsizePick> pick;
    const cost::PriceTable* candidates = fleet != nullptr ? &fleet->rented : catalog;
    if (candidates != nullptr && !committed) {
      pick = CheaperGpuThatFits(*candidates, e.model, current_price, e.peak_memory_mib, e.mean_utilization, rightsize);
    }
    if (pick.has_value()) {
      const cost::GpuPrice* best = pick->price;
      Money per_gpu = MicroUsd(current_price) - best->usd_per_gpu_hour;
      f.saving_per_hour = MicroUsd(static_cast<std::int64_t>(std::llround(static_cast<double>(per_gpu.raw()) * gpus)));
      f.suggestion = fmt::format(
          "move to {} ({:.0f} GiB holds the {:.1f} GiB peak x {:.2f}; {:.0f} FP16 TFLOPS x {:.0f}% covers the "
          "{:.0f} used at {:.0f}% utilization on {}): {} GPU(s) x ({} - {})/h saves {}/h",
          pick->facts->name, pick->facts->memory_gib, e.peak_memory_mib / 1024.0, rightsize.memory_margin,
          pick->facts->fp16_tflops, 100 * rightsize.headroom, pick->need_tflops, e.mean_utilization * 100.0,
          current.empty() ? e.model : std::string(current), gpus, cost::FormatUsd(MicroUsd(current_price), 2),
          cost::FormatUsd(best->usd_per_gpu_hour, 2), cost::FormatUsd(f.saving_per_hour, 2));
    }
    // 2. Consolidation (batching).
    if (f.suggestion.empty() && low_util) {
      double need = std::max(1.0, std::ceil(gpus * e.mean_utilization / 0.8));
      if (need < gpus && committed) {
        f.suggestion = fmt::format(
            "consolidate: at {:.0f}% utilization the work fits on {} of {} GPUs at 80%; raise the batch size: it frees "
            "{} GPU(s) of {} pool '{}' for other work (no cash saving: the pool is paid for the window)",
            e.mean_utilization * 100.0, need, gpus, gpus - need, cost::PoolKindName(pool->kind), pool->name);
      } else if (need < gpus) {
        f.saving_per_hour = cost::ScaleMoney(jh.cost, 1.0 - need / gpus);
        f.suggestion = fmt::format(
            "consolidate: at {:.0f}% utilization the work fits on {} of {} GPUs at 80%; raise the "
            "batch size{}: saves {}/h",
            e.mean_utilization * 100.0, need, gpus,
            e.batch_size > 0 ? fmt::format(" (now {})", e.batch_size) : std::string(),
            cost::FormatUsd(f.saving_per_hour, 2));
      }
    }
    // 3. Precision.
    bool low_precision = e.precision == "bf16" || e.precision == "fp16" || e.precision == "fp8";
    if (f.suggestion.empty() && e.mean_tensor_active >= 0 && e.mean_tensor_active < 0.2 &&
        !low_precision) {
      f.saving_per_hour = cost::ScaleMoney(jh.cost, 0.4);
      f.saving_is_estimate = true;
      f.suggestion = fmt::format(
          "tensor pipes active {:.0f}% with precision {}: switch to BF16 mixed precision "
          "(estimate: 40% fewer GPU-hours) saves about {}/h",
          e.mean_tensor_active * 100.0, e.precision.empty() ? "unknown" : e.precision,
          cost::FormatUsd(f.saving_per_hour, 2));
    }
    if (f.suggestion.empty() && fleet != nullptr && e.mean_utilization >= 0) {
      const cost::NodePool* spot = pool != nullptr ? fleet->SpotPool(pool->gpu_type) : nullptr;
      if (committed) {
        f.suggestion = fmt::format("utilization {:.0f}% on {} pool '{}', paid for the window whatever runs: raise the "
                                   "threshold (moving the job saves no cash)",
                                   e.mean_utilization * 100.0, cost::PoolKindName(pool->kind), pool->name);
      } else if (spot != nullptr) {
        f.suggestion = fmt::format("utilization {:.0f}% justifies the spend: raise the threshold or move the job to "
                                   "the fleet's spot pool '{}' (${:.2f}/GPU-h)",
                                   e.mean_utilization * 100.0, spot->name, spot->usd_per_gpu_hour);
      } else {
        f.suggestion = fmt::format("utilization {:.0f}% justifies the spend: raise the threshold (the fleet has no "
                                   "spot pool of {}: rent one to save)",
                                   e.mean_utilization * 100.0, current.empty() ? e.model : std::string(current));
      }
    }
    if (f.suggestion.empty()) {
      f.suggestion = e.mean_utilization >= 0
                         ? fmt::format("utilization {:.0f}% justifies the spend: raise the "
                                       "threshold or move the job to spot capacity",
                                       e.mean_utilization * 100.0)
                         : "no telemetry for this job: check its GPU metrics";
    }
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), [](const BreakerFinding& a, const BreakerFinding& b) {
    return a.hour_ms != b.hour_ms ? a.hour_ms < b.hour_ms : a.job < b.job;
  });
  return out;
}

std::string DescribeEvidence(const JobEvidence& e) {
  auto pct = [](double v) { return v < 0 ? std::string("n/a") : fmt::format("{:.0f}%", v * 100); };
  return fmt::format(
      "{} x {}, utilization {}, peak memory {}, tensor pipes {}, batch {}, precision {}", e.gpus,
      e.model.empty() ? "GPU" : e.model, pct(e.mean_utilization),
      e.peak_memory_mib < 0 ? std::string("n/a") : fmt::format("{:.1f} GiB", e.peak_memory_mib / 1024),
      pct(e.mean_tensor_active), e.batch_size > 0 ? std::to_string(e.batch_size) : "unknown",
      e.precision.empty() ? "unknown" : e.precision);
}

}  // namespace seedance::ledger
