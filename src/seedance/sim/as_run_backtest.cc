#include "seedance/sim/as_run_backtest.h"

#include <fmt/format.h>

#include <algorithm>

namespace seedance::sim {

WindowBill AsRunWindowBill(const AsRunCost& cost, const std::vector<AsRunInterval>& placed) {
  WindowBill b;
  b.committed_usd = cost.committed_usd;
  b.cloud_usd = cost.on_demand_usd + cost.spot_usd;
  for (const AsRunInterval& iv : placed) {
    if (!AlwaysHeld(iv.tier)) b.cloud_gpu_hours += iv.gpus * (iv.end_s - iv.start_s) / 3600.0;
  }
  return b;
}

Status ApplyAsRunWindow(ScenarioResult* r, const FleetSpec& fleet, const MarginalPrices& prices,
                        const std::map<std::string, std::vector<PoolInterval>>& intervals_by_policy) {
  if (!r->as_run) return InvalidArgumentError("the window needs the as-run row");
  AsRunBaseline& a = *r->as_run;
  for (PolicyOutcome& p : r->policies) {
    auto it = intervals_by_policy.find(p.name);
    if (it == intervals_by_policy.end()) {
      return InternalError("policy " + p.name + ": no pool interval recorded to bill it over the window");
    }
    auto bill = BillPolicyOverWindow(fleet, it->second, a.window_start_s, a.window_end_s, prices,
                                     p.result.cold_start_idle_usd, &a.rented);
    if (!bill.has_value()) return InvalidArgumentError("policy " + p.name + ": " + bill.error().message());
    if (!a.rented.whole_nodes) {  // whole nodes: the held rows' GPUs are in the rented nodes already
      bill->cloud_usd += a.held_cloud_usd;
      bill->cloud_gpu_hours += a.held_cloud_gpu_hours;
    }
    AsRunBaseline::PolicyWindow w;
    w.bill = *bill;
    w.vs_as_run = DecomposeAgainstAsRun(*bill, a.bill);
    w.own_horizon_usd = p.result.total_cost_usd;
    p.result.total_cost_usd = bill->TotalUsd();
    a.windowed[p.name] = w;
  }
  // The rankings over the window's totals.
  const int best = BestBaseline(r->policies);
  r->best_baseline = best >= 0 ? r->policies[static_cast<std::size_t>(best)].name : "";
  r->matched_baseline.clear();
  if (const PolicyOutcome* sd = r->Find("seedance"); sd != nullptr) {
    const int matched = BestBaseline(r->policies, sd->result.AvgJctHours());
    if (matched >= 0) r->matched_baseline = r->policies[static_cast<std::size_t>(matched)].name;
  }
  return Status::Ok();
}

Result<AsRunBaseline::Replayed> PriceReplay(const FleetFile& fleet, const cost::PriceTable& prices,
                                            const ReplayOutcome& replay, double window_s,
                                            std::optional<double> unix_origin_s, const MarginalPrices& marginal,
                                            double as_run_total_usd, bool whole_nodes) {
  std::vector<AsRunInterval> inside;
  std::vector<GpuUse> uses;
  const auto clip = [&inside, window_s](const AsRunInterval& iv) {
    if (iv.start_s >= window_s) return;
    AsRunInterval c = iv;
    c.end_s = std::min(c.end_s, window_s);
    inside.push_back(std::move(c));
  };
  for (const AsRunInterval& iv : replay.run) {
    const std::string type = CanonicalGpuType(iv.gpu_type);
    uses.push_back(GpuUse{type, iv.tier, iv.start_s, iv.end_s, static_cast<double>(iv.gpus)});
    if (!whole_nodes || AlwaysHeld(iv.tier)) clip(iv);  // whole nodes: the rented nodes below instead
  }
  for (const AsRunInterval& iv : whole_nodes ? replay.rented_up : std::vector<AsRunInterval>{}) clip(iv);
  AsRunBaseline::Replayed out;
  SEEDANCE_ASSIGN_OR_RETURN(out.cost, PriceAsRun(fleet, inside, prices, 0, window_s, unix_origin_s));
  out.bill = AsRunWindowBill(out.cost, inside);
  SEEDANCE_ASSIGN_OR_RETURN(out.bill.unfinished, ValueUnfinished(uses, window_s, marginal));
  out.assumption = replay.assumption;
  out.mean_wait_s = replay.mean_wait_s;
  out.history_mean_wait_s = replay.history_mean_wait_s;
  out.delayed_fixed = replay.delayed_fixed;
  out.gap_pct = as_run_total_usd > 0 ? 100.0 * (out.bill.TotalUsd() - as_run_total_usd) / as_run_total_usd : 0.0;
  return out;
}

}  // namespace seedance::sim
