#include "seedance/report/scenario_report.h"

#include "seedance/report/cost_jct_chart.h"

#include "seedance/report/as_run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "seedance/report/html.h"
#include "seedance/report/svg_chart.h"

namespace seedance::report {

const char* const kBestBaselineRule =
    "the cheapest policy flagged baseline that finished every job (never a reference row); ties go to the lower "
    "average JCT, then to the smaller name";

namespace {

double Round(double v, double q) { return std::round(v / q) * q; }

const sim::PolicyOutcome* Baseline(const sim::ScenarioResult& r) {
  for (const auto& p : r.policies) {
    if (p.name == "fifo") return &p;
  }
  return r.policies.empty() ? nullptr : &r.policies.front();
}

// A row's label in tables and charts: reference rows say that they know the future.
constexpr const char* kReferenceLabel = "reference (knows the future)";

std::string Role(bool baseline, bool reference, bool best) {
  if (reference) return kReferenceLabel;
  if (best) return "best baseline";
  return baseline ? "baseline" : "";
}

// 100 (1 - cost / base), or 0 without a base.
double SavingPct(double cost, double base) { return base > 0 ? 100.0 * (1.0 - cost / base) : 0.0; }

// (best - cost) / (best - bound): the share of the gap between the best baseline and the bound at
// its JCT that a policy closes; nullopt when it is not meaningful (issue 38): the gap is not
// positive, or the policy is dearer than the best baseline or below the bound (the bound is then
// not a bound on its horizon), where a share outside 0..100 % would read as a headline.
std::optional<double> GapClosed(double cost, double best, double bound) {
  if (!(best - bound > 0) || cost > best || cost < bound) return std::nullopt;
  return (best - cost) / (best - bound);
}

std::string Pct(double v) { return fmt::format("{:.1f}%", v); }

double CostPerUsefulGpuHour(const sim::SimResult& s) {
  return s.useful_gpu_seconds > 0 ? s.total_cost_usd / (s.useful_gpu_seconds / 3600.0) : 0;
}

constexpr const char* kAsRunRole = "as run, not a policy";

// "=> seedance: 12.3% cheaper than what you paid as run ($456.78: owned ...)" or "".
std::string AsRunHeadline(const sim::ScenarioResult& r) {
  const sim::PolicyOutcome* sd = r.Find("seedance");
  if (!r.as_run || sd == nullptr) return "";
  const double paid = r.as_run->cost.total_usd, c = sd->result.total_cost_usd;
  const std::string verdict = AsRunVerdict(*r.as_run, c);
  const std::string error = r.as_run->replayed ? fmt::format(" (the backtest's error: {:.1f}%)", r.as_run->ErrorPct()) : "";
  const std::string relation = verdict == "within the backtest's error"
                                   ? std::string("apart, within the backtest's error, from")
                                   : verdict + " than";
  return fmt::format("seedance: {:.1f}% {} what you paid as run (${:.2f}: {}){}, avg JCT {:.2f} h vs {:.2f} h as run",
                     std::abs(SavingPct(c, paid)), relation, paid, AsRunSplit(r.as_run->cost), error, sd->result.AvgJctHours(), r.as_run->result.AvgJctHours());
}

const auto& kColors = kCostChartColors;
constexpr std::size_t kNumColors = kNumCostChartColors;

}  // namespace

std::string AsRunSplit(const sim::AsRunCost& c) {
  return fmt::format("owned ${:.2f} + reserved ${:.2f} + on-demand ${:.2f} + spot ${:.2f} (committed GPUs idle: ${:.2f})",
                     c.owned_usd, c.reserved_usd, c.on_demand_usd, c.spot_usd, c.committed_idle_usd);
}

std::string ScenarioTable(const sim::ScenarioResult& r) {
  std::string out = fmt::format("workload {} ({} jobs, arrivals over {:.1f} h, seed {}) on fleet {}\n", r.workload,
                                r.jobs, r.duration_s / 3600.0, r.seed, r.fleet);
  out += fmt::format("{:<22} {:>12} {:>10} {:>9} {:>9} {:>7} {:>8} {:>6} {:>9} {:>9} {:>9}  {}\n", "policy", "total $",
                     "$/useful", "avg JCT", "p99 JCT", "misses", "spot int", "util", "vs fifo", "vs best", "vs bound",
                     "role");
  const auto* base = Baseline(r);
  const auto* best = r.Find(r.best_baseline);
  for (const auto& p : r.policies) {
    const auto& s = p.result;
    double save = base ? SavingPct(s.total_cost_usd, base->result.total_cost_usd) : 0;
    double over = r.bound.usd > 0 ? 100.0 * (s.total_cost_usd / r.bound.usd - 1.0) : 0;
    out += fmt::format("{:<22} {:>12.2f} {:>10.3f} {:>8.2f}h {:>8.2f}h {:>7} {:>8} {:>5.1f}% {:>8.1f}% {:>9} {:>8.1f}%  {}\n",
                       p.name, s.total_cost_usd, CostPerUsefulGpuHour(s), s.AvgJctHours(), s.P99JctHours(),
                       s.deadline_misses, s.spot_interruptions, 100.0 * s.Utilization(), save,
                       best ? Pct(SavingPct(s.total_cost_usd, best->result.total_cost_usd)) : "-", over,
                       Role(p.baseline, p.reference, best == &p));
  }
  if (r.as_run) {
    const auto& s = r.as_run->result;
    double save = base ? SavingPct(s.total_cost_usd, base->result.total_cost_usd) : 0;
    double over = r.bound.usd > 0 ? 100.0 * (s.total_cost_usd / r.bound.usd - 1.0) : 0;
    out += fmt::format("{:<22} {:>12.2f} {:>10.3f} {:>8.2f}h {:>8.2f}h {:>7} {:>8} {:>5.1f}% {:>8.1f}% {:>9} {:>8.1f}%  {} ({})\n",
                       sim::AsRunBaseline::kLabel, s.total_cost_usd, CostPerUsefulGpuHour(s), s.AvgJctHours(),
                       s.P99JctHours(), "-", "-", 100.0 * s.Utilization(), save,
                       best ? Pct(SavingPct(s.total_cost_usd, best->result.total_cost_usd)) : "-", over, kAsRunRole,
                       r.as_run->source);
  }
  out += fmt::format("{:<22} {:>12.2f}   (LP relaxation, GLPK, any JCT, every job done within {:.1f} h: {} columns, "
                     "{:.2f} s)\n", "lower bound", r.bound.usd, r.bound_horizon_s / 3600.0, r.bound.columns,
                     r.bound.seconds);
  for (const auto& sb : r.service_bounds) {
    out += fmt::format("{:<22} {:>12.2f}   (the same at avg JCT <= {}'s {:.2f} h: {} columns, {:.2f} s)\n",
                       "lower bound @ " + sb.policy, sb.bound.usd, sb.policy, sb.bound.max_avg_jct_s / 3600,
                       sb.bound.columns, sb.bound.seconds);
  }
  const auto* sd = r.Find("seedance");
  if (sd != nullptr && base != nullptr && base->result.total_cost_usd > 0) {
    const auto& s = sd->result;
    if (best != nullptr) {
      out += fmt::format("=> seedance: {:.1f}% {} than the best baseline ({}, ${:.2f}), avg JCT {:.2f} h vs {:.2f} h ({})",
                         std::abs(SavingPct(s.total_cost_usd, best->result.total_cost_usd)),
                         s.total_cost_usd <= best->result.total_cost_usd ? "cheaper" : "dearer", best->name,
                         best->result.total_cost_usd, s.AvgJctHours(), best->result.AvgJctHours(),
                         s.AvgJctHours() <= best->result.AvgJctHours() ? "no worse" : "worse");
      const sim::LowerBound* at = r.BoundAtBestBaseline();
      auto gap = at ? GapClosed(s.total_cost_usd, best->result.total_cost_usd, at->usd) : std::nullopt;
      if (gap) out += fmt::format("; closes {:.0f}% of the gap to the bound at its JCT (${:.2f})", 100 * *gap, at->usd);
      out += fmt::format("; {:.1f}% {} than fifo on-demand\n", std::abs(SavingPct(s.total_cost_usd, base->result.total_cost_usd)),
                         s.total_cost_usd <= base->result.total_cost_usd ? "cheaper" : "dearer");
      const auto* cheapest = r.Find(r.matched_baseline);
      if (cheapest != nullptr && cheapest != best) {
        out += fmt::format("   at seedance's avg JCT or faster, the cheapest baseline, {}, costs ${:.2f} ({:.1f}% {} than "
                           "seedance) at an avg JCT of {:.2f} h\n",
                           cheapest->name, cheapest->result.total_cost_usd,
                           std::abs(SavingPct(cheapest->result.total_cost_usd, s.total_cost_usd)),
                           cheapest->result.total_cost_usd <= s.total_cost_usd ? "less" : "more",
                           cheapest->result.AvgJctHours());
      }
    } else {
      out += fmt::format("=> seedance: {:.1f}% {} than fifo, avg JCT {:.2f} h, {:.2f}x the lower bound (no baseline "
                         "finished every job)\n",
                         std::abs(SavingPct(s.total_cost_usd, base->result.total_cost_usd)),
                         s.total_cost_usd <= base->result.total_cost_usd ? "cheaper" : "dearer", s.AvgJctHours(),
                         r.bound.usd > 0 ? s.total_cost_usd / r.bound.usd : 0.0);
    }
  }
  if (const std::string paid = AsRunHeadline(r); !paid.empty()) out += "=> " + paid + "\n";
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  for (const auto& a : r.assumptions) out += "assumes: " + a.text + "\n";
  if (r.as_run) out += "assumes (as run): " + r.as_run->assumption + "\n";
  out += AsRunWindowText(r);
  return out;
}

nlohmann::json ScenarioJson(const sim::ScenarioResult& r) {
  nlohmann::json j;
  j["workload"] = {{"name", r.workload},
                   {"jobs", r.jobs},
                   {"arrival_window_s", Round(r.duration_s, 1e-3)},
                   {"fleet", r.fleet},
                   {"gpu_types", r.gpu_types},
                   {"pools", r.pool_names},
                   {"work_gpu_hours_on_fastest_type", Round(r.total_work_gpu_hours_fastest, 1e-3)},
                   {"notes", r.notes}};
  const auto* base = Baseline(r);
  const auto* best = r.Find(r.best_baseline);
  const sim::LowerBound* at_best = r.BoundAtBestBaseline();
  nlohmann::json pols = nlohmann::json::array();
  for (const auto& p : r.policies) {
    const auto& s = p.result;
    nlohmann::json by_pool = nlohmann::json::object();
    for (std::size_t k = 0; k < s.cost_by_pool_usd.size(); ++k) {
      by_pool[r.pool_names[k]] = Round(s.cost_by_pool_usd[k], 1e-6);
    }
    pols.push_back({{"name", p.name},
                    {"description", p.description},
                    {"total_cost_usd", Round(s.total_cost_usd, 1e-6)},
                    {"gpu_cost_usd", Round(s.gpu_cost_usd, 1e-6)},
                    {"cold_start_idle_usd", Round(s.cold_start_idle_usd, 1e-6)},
                    {"idle_held_usd", Round(s.idle_held_usd, 1e-6)},
                    {"cost_per_useful_gpu_hour_usd", Round(CostPerUsefulGpuHour(s), 1e-6)},
                    {"avg_jct_hours", Round(s.AvgJctHours(), 1e-6)},
                    {"p99_jct_hours", Round(s.P99JctHours(), 1e-6)},
                    {"deadline_misses", s.deadline_misses},
                    {"spot_interruptions", s.spot_interruptions},
                    {"gpu_utilization", Round(s.Utilization(), 1e-6)},
                    {"unfinished_jobs", s.unfinished},
                    {"savings_vs_fifo_pct",
                     base ? Round(100.0 * (1.0 - s.total_cost_usd / base->result.total_cost_usd), 1e-4) : 0.0},
                    {"over_lower_bound_pct",
                     r.bound.usd > 0 ? Round(100.0 * (s.total_cost_usd / r.bound.usd - 1.0), 1e-4) : 0.0},
                    {"cost_by_pool_usd", by_pool},
                    {"wall_seconds", s.wall_seconds}});
    nlohmann::json& row = pols.back();
    row["baseline"] = p.baseline;
    row["reference"] = p.reference;
    row["role"] = Role(p.baseline, p.reference, best == &p);
    if (best != nullptr) {
      row["savings_vs_best_baseline_pct"] = Round(SavingPct(s.total_cost_usd, best->result.total_cost_usd), 1e-4);
      row["avg_jct_no_worse_than_best_baseline"] = s.unfinished == 0 && s.AvgJctHours() <= best->result.AvgJctHours();
      auto gap = at_best ? GapClosed(s.total_cost_usd, best->result.total_cost_usd, at_best->usd) : std::nullopt;
      if (!p.baseline && gap) row["gap_closed"] = Round(*gap, 1e-6);
    }
    if (r.as_run) row["savings_vs_as_run_pct"] = Round(SavingPct(s.total_cost_usd, r.as_run->cost.total_usd), 1e-4);
  }
  j["policies"] = pols;
  if (r.as_run) {
    const sim::AsRunBaseline& a = *r.as_run;
    j["as_run"] = {{"label", sim::AsRunBaseline::kLabel},
                   {"role", kAsRunRole},
                   {"source", a.source},
                   {"total_cost_usd", Round(a.cost.total_usd, 1e-6)},
                   {"usd_by_tier",
                    {{"owned", Round(a.cost.owned_usd, 1e-6)},
                     {"reserved", Round(a.cost.reserved_usd, 1e-6)},
                     {"on_demand", Round(a.cost.on_demand_usd, 1e-6)},
                     {"spot", Round(a.cost.spot_usd, 1e-6)}}},
                   {"committed_idle_usd", Round(a.cost.committed_idle_usd, 1e-6)},
                   {"period_hours", Round((a.cost.period_end_s - a.cost.period_start_s) / 3600.0, 1e-6)},
                   {"jobs", a.result.jobs.size()},
                   {"avg_jct_hours", Round(a.result.AvgJctHours(), 1e-6)},
                   {"p99_jct_hours", Round(a.result.P99JctHours(), 1e-6)},
                   {"cost_per_useful_gpu_hour_usd", Round(CostPerUsefulGpuHour(a.result), 1e-6)},
                   {"assumption", a.assumption}};
    j["as_run_window"] = AsRunWindowJson(r);
  }
  j["seed"] = r.seed;
  if (best != nullptr) {
    j["best_baseline"] = {{"name", best->name},
                          {"total_cost_usd", Round(best->result.total_cost_usd, 1e-6)},
                          {"avg_jct_hours", Round(best->result.AvgJctHours(), 1e-6)},
                          {"rule", kBestBaselineRule}};
  } else {
    j["best_baseline"] = nullptr;
  }
  if (const auto* cheapest = r.Find(r.matched_baseline)) {
    j["baseline_at_seedance_jct"] = {{"name", cheapest->name},
                              {"total_cost_usd", Round(cheapest->result.total_cost_usd, 1e-6)},
                              {"avg_jct_hours", Round(cheapest->result.AvgJctHours(), 1e-6)}};
  } else {
    j["baseline_at_seedance_jct"] = nullptr;
  }
  j["bound_at_best_baseline_usd"] = at_best ? nlohmann::json(Round(at_best->usd, 1e-6)) : nlohmann::json(nullptr);
  nlohmann::json assumptions = nlohmann::json::array();
  for (const auto& a : r.assumptions) assumptions.push_back(a.text);
  j["assumptions"] = assumptions;
  j["lower_bound_usd"] = Round(r.bound.usd, 1e-6);
  nlohmann::json lb_pool = nlohmann::json::object();
  for (std::size_t k = 0; k < r.bound.usd_by_pool.size() && k < r.pool_names.size(); ++k) {
    lb_pool[r.pool_names[k]] = Round(r.bound.usd_by_pool[k], 1e-6);
  }
  j["lower_bound"] = {{"usd_by_pool", lb_pool},
                      {"method", "LP relaxation (GLPK simplex) of the cheapest assignment of every job's work to "
                                 "the fleet's pools per time bucket, with pool capacity, spot availability, "
                                 "per-job speed, arrivals and deadlines; every job done within the horizon (the "
                                 "latest makespan of a policy that finished every job)"},
                      {"horizon_hours", Round(r.bound_horizon_s / 3600.0, 1e-6)},
                      {"speed_grid", r.bound.speed_grid},
                      {"bucket_hours", Round(r.bound.bucket_s / 3600.0, 1e-6)},
                      {"columns", r.bound.columns},
                      {"job_classes", r.bound.job_classes},
                      {"solve_seconds", r.bound.seconds}};
  nlohmann::json sls = nlohmann::json::array();
  for (const auto& sb : r.service_bounds) {
    nlohmann::json sl_pool = nlohmann::json::object();
    for (std::size_t k = 0; k < sb.bound.usd_by_pool.size() && k < r.pool_names.size(); ++k) {
      sl_pool[r.pool_names[k]] = Round(sb.bound.usd_by_pool[k], 1e-6);
    }
    sls.push_back({{"usd", Round(sb.bound.usd, 1e-6)},
                   {"method", "the same LP on the same horizon (finer buckets, groups split by run time) with "
                              "rows bounding each group's JCT sum (mean time of its work + half the run time, or "
                              "the run time) and their total by N x the average JCT; never below the plain bound"},
                   {"plain_bound_kept", sb.bound.plain_kept},
                   {"max_avg_jct_hours", Round(sb.bound.max_avg_jct_s / 3600.0, 1e-6)},
                   {"service_level_of", sb.policy},
                   {"usd_by_pool", sl_pool},
                   {"bucket_hours", Round(sb.bound.bucket_s / 3600.0, 1e-6)},
                   {"columns", sb.bound.columns},
                   {"job_classes", sb.bound.job_classes},
                   {"solve_seconds", sb.bound.seconds}});
  }
  j["lower_bounds_at_service_level"] = sls;
  return j;
}

namespace {

// Cost against average JCT: one point per policy, the Seedance frontier (seedance-tv*) on the
// curve, the plain bound as a dashed line and each service-level bound as a cross at its JCT.
std::string CostJctChart(const sim::ScenarioResult& r) {
  CostJctChartSpec spec;
  spec.intro_html = "<p>Lower and further left is better. Points: each "
                    "policy; line: Seedance at increasing values of a job-hour (<code>--frontier</code>); dashed: "
                    "the LP bound; crosses: the bound for schedules at least as fast on average as that policy.</p>\n";
  spec.has_bound = true;
  spec.bound_usd = r.bound.usd;
  for (const auto& sb : r.service_bounds) {
    spec.marks.push_back({sb.policy, sb.bound.max_avg_jct_s / 3600.0, sb.bound.usd});
  }
  for (const auto& p : r.policies) {
    const bool on_frontier = p.name.rfind("seedance-tv", 0) == 0;
    const std::string label = on_frontier ? fmt::format("${}/h", p.name.substr(11))
                              : p.reference ? fmt::format("{} (reference)", p.name)
                                            : p.name;
    spec.points.push_back({p.name, label, p.result.AvgJctHours(), p.result.total_cost_usd, on_frontier});
  }
  return RenderCostJctChart(spec);
}

std::string AssumesParagraph(const sim::ScenarioResult& r, sim::Assumption::Section section) {
  const std::string line = r.AssumesLine(section);
  return line.empty() ? "" : "<p class=\"note\">" + HtmlEscape(line) + "</p>\n";
}

// When the best baseline is slower than Seedance: the cheapest baseline at least as fast as
// Seedance (the matched-service view), so the reader sees what Seedance's speed would cost.
std::string MatchedNote(const sim::PolicyOutcome* cheapest, const sim::PolicyOutcome* best, double seedance_usd) {
  if (cheapest == nullptr || cheapest == best) return "";
  const auto& c = cheapest->result;
  return fmt::format("<p class=\"note\">At Seedance's average JCT or faster, the cheapest baseline, {}, costs ${:.0f} "
                     "({:.1f}% {} than Seedance) at an average JCT of {:.2f} h.</p>\n",
                     HtmlEscape(cheapest->name), c.total_cost_usd, std::abs(SavingPct(c.total_cost_usd, seedance_usd)),
                     c.total_cost_usd <= seedance_usd ? "less" : "more", c.AvgJctHours());
}

// The headline: Seedance against the best baseline (and FIFO on-demand), and the gap it closes.
std::string ScenarioHeadline(const sim::ScenarioResult& r) {
  const sim::PolicyOutcome* fifo = r.Find("fifo");
  const sim::PolicyOutcome* best = r.Find(r.best_baseline);
  const sim::PolicyOutcome* sd = r.Find("seedance");
  if (fifo == nullptr || sd == nullptr || fifo->result.total_cost_usd <= 0) return "";
  const auto& s = sd->result;
  const auto vs_fifo = fmt::format("{:.1f}% {} than FIFO on on-demand (${:.0f})",
                                   std::abs(SavingPct(s.total_cost_usd, fifo->result.total_cost_usd)),
                                   s.total_cost_usd <= fifo->result.total_cost_usd ? "less" : "more",
                                   fifo->result.total_cost_usd);
  if (best == nullptr) {
    return fmt::format("<p class=\"headline\"><strong>Seedance costs ${:.0f}</strong>, {}; no baseline finished every "
                       "job.</p>\n", s.total_cost_usd, vs_fifo);
  }
  std::string gap;
  const sim::LowerBound* at = r.BoundAtBestBaseline();
  if (auto g = at ? GapClosed(s.total_cost_usd, best->result.total_cost_usd, at->usd) : std::nullopt) {
    gap = fmt::format("; it closes {:.0f}% of the gap between {} and the bound at its average JCT (${:.0f})", 100 * *g,
                      HtmlEscape(best->name), at->usd);
  }
  return fmt::format(
      "<p class=\"headline\"><strong>Seedance costs ${:.0f}, {:.1f}% {} than the best baseline, {} (${:.0f})</strong>, "
      "with an average JCT of {:.2f} h against {:.2f} h ({}){}. Against FIFO on on-demand: {}.</p>\n",
      s.total_cost_usd, std::abs(SavingPct(s.total_cost_usd, best->result.total_cost_usd)),
      s.total_cost_usd <= best->result.total_cost_usd ? "less" : "more", HtmlEscape(best->name),
      best->result.total_cost_usd, s.AvgJctHours(), best->result.AvgJctHours(),
      s.AvgJctHours() <= best->result.AvgJctHours() ? "no worse" : "worse", gap, vs_fifo) +
      MatchedNote(r.Find(r.matched_baseline), best, s.total_cost_usd);
}

}  // namespace

std::string ScenarioHtmlSection(const sim::ScenarioResult& r) {
  std::string h = "<section>\n<h2>Cost of running the workload: " + HtmlEscape(r.workload) + "</h2>\n";
  h += ScenarioHeadline(r);
  if (const std::string paid = AsRunHeadline(r); !paid.empty()) {
    h += "<p class=\"headline\">" + HtmlEscape("S" + paid.substr(1)) + ". The as-run row is a baseline, not a policy: the "
         "same jobs as they ran (" + HtmlEscape(r.as_run->source) + "), priced by the same fleet file.</p>\n";
  }
  h += "<p>" + std::to_string(r.jobs) + " jobs (seed " + std::to_string(r.seed) + ") on fleet <code>" +
       HtmlEscape(r.fleet) +
       "</code>; every policy sees the same arrivals, prices, cold starts and spot availability. "
       "The lower bound is an LP relaxation: no schedule that finishes every job within the same horizon and meets "
       "every deadline can cost less. It may defer work to cheap spot hours anywhere in that span; the bound at the "
       "best baseline's average JCT holds the relaxation to that service level on the same horizon (a valid bound "
       "for any schedule at least as fast on average), the fair yardstick for a policy held to that JCT. Rows marked "
       "<em>" + std::string(kReferenceLabel) + "</em> see true job sizes and the whole spot series: no online "
       "scheduler can reach them, and they are never the best baseline.</p>\n";
  // Bar chart: total cost per policy with the lower bound as a dashed line.
  double max_cost = r.bound.usd;
  for (const auto& p : r.policies) max_cost = std::max(max_cost, p.result.total_cost_usd);
  if (r.as_run) max_cost = std::max(max_cost, r.as_run->cost.total_usd);
  const int width = 760, bar_h = 34, left = 170, right = 110;
  const int height = static_cast<int>(r.policies.size() + (r.as_run ? 1 : 0)) * (bar_h + 12) + 60;
  const double scale = max_cost > 0 ? (width - left - right) / max_cost : 0;
  h += fmt::format("<svg viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" aria-label=\"cost by policy\">\n",
                   width, height);
  int y = 20;
  std::size_t k = 0;
  for (const auto& p : r.policies) {
    double w = p.result.total_cost_usd * scale;
    h += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"13\">{}</text>\n", left - 8,
                     y + bar_h / 2 + 5, HtmlEscape(p.reference ? p.name + " (reference)" : p.name));
    h += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: ${:.2f}</title></rect>\n",
                     left, y, w, bar_h, kColors[k % kNumColors], HtmlEscape(p.name), p.result.total_cost_usd);
    h += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\">${:.0f}</text>\n", left + w + 6, y + bar_h / 2 + 5,
                     p.result.total_cost_usd);
    y += bar_h + 12;
    ++k;
  }
  if (r.as_run) {  // hatched grey: a baseline row, not a policy
    const double paid = r.as_run->cost.total_usd, w = paid * scale;
    h += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"13\">{}</text>\n", left - 8,
                     y + bar_h / 2 + 5, HtmlEscape(sim::AsRunBaseline::kLabel));
    h += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"#bab0ac\" stroke=\"#333\" "
                     "stroke-dasharray=\"3 3\"><title>{}: ${:.2f} ({})</title></rect>\n",
                     left, y, w, bar_h, HtmlEscape(sim::AsRunBaseline::kLabel), paid, kAsRunRole);
    h += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\">${:.0f}</text>\n", left + w + 6, y + bar_h / 2 + 5,
                     paid);
    y += bar_h + 12;
  }
  double lb = left + r.bound.usd * scale;
  h += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"10\" y2=\"{1}\" stroke=\"#333\" stroke-dasharray=\"6 4\"/>\n", lb,
                   y);
  h += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\">lower bound ${:.0f}</text>\n", lb + 4, y + 16, r.bound.usd);
  h += "</svg>\n";
  h += AssumesParagraph(r, sim::Assumption::kCharts);
  // Table.
  const auto* fifo = Baseline(r);
  const auto* best = r.Find(r.best_baseline);
  h += "<table>\n<tr><th>policy</th><th>role</th><th>total $</th><th>$ per useful GPU-h</th><th>avg JCT h</th>"
       "<th>p99 JCT h</th><th>vs fifo</th><th>vs best baseline</th><th>deadline misses</th><th>spot interruptions</th>"
       "<th>GPU util</th><th>cold-start idle $</th></tr>\n";
  for (const auto& p : r.policies) {
    const auto& s = p.result;
    h += fmt::format("<tr><td title=\"{}\">{}</td><td>{}</td><td>{:.2f}</td><td>{:.3f}</td><td>{:.2f}</td><td>{:.2f}</td>"
                     "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1f}%</td><td>{:.2f}</td></tr>\n",
                     HtmlEscape(p.description), HtmlEscape(p.name), Role(p.baseline, p.reference, best == &p),
                     s.total_cost_usd, CostPerUsefulGpuHour(s), s.AvgJctHours(), s.P99JctHours(),
                     fifo ? Pct(SavingPct(s.total_cost_usd, fifo->result.total_cost_usd)) : "-",
                     best ? Pct(SavingPct(s.total_cost_usd, best->result.total_cost_usd)) : "-", s.deadline_misses,
                     s.spot_interruptions, 100 * s.Utilization(), s.cold_start_idle_usd);
  }
  if (r.as_run) {
    const auto& s = r.as_run->result;
    h += fmt::format("<tr><td title=\"{}\">{}</td><td>{}</td><td>{:.2f}</td><td>{:.3f}</td><td>{:.2f}</td><td>{:.2f}</td>"
                     "<td>{}</td><td>{}</td><td>-</td><td>-</td><td>{:.1f}%</td><td>-</td></tr>\n",
                     HtmlEscape(AsRunSplit(r.as_run->cost)), HtmlEscape(sim::AsRunBaseline::kLabel), kAsRunRole,
                     s.total_cost_usd, CostPerUsefulGpuHour(s), s.AvgJctHours(), s.P99JctHours(),
                     fifo ? Pct(SavingPct(s.total_cost_usd, fifo->result.total_cost_usd)) : "-",
                     best ? Pct(SavingPct(s.total_cost_usd, best->result.total_cost_usd)) : "-", 100 * s.Utilization());
  }
  h += "</table>\n";
  if (r.as_run) h += "<p class=\"note\">" + HtmlEscape("As run: " + AsRunSplit(r.as_run->cost) + "; " + r.as_run->assumption + ".") + "</p>\n";
  h += AssumesParagraph(r, sim::Assumption::kCosts);
  h += AsRunWindowHtml(r);
  h += "<h3>Lower bounds</h3>\n<table>\n<tr><th>bound</th><th>$</th><th>holds for</th><th>LP columns</th>"
       "<th>solve s</th></tr>\n";
  h += fmt::format("<tr><td>lower bound</td><td>{:.2f}</td><td>any schedule that finishes every job within {:.1f} h and "
                   "meets every deadline</td><td>{}</td><td>{:.2f}</td></tr>\n",
                   r.bound.usd, r.bound_horizon_s / 3600.0, r.bound.columns, r.bound.seconds);
  for (const auto& sb : r.service_bounds) {
    h += fmt::format("<tr><td>lower bound @ {}</td><td>{:.2f}</td><td>the same, with an average JCT of at most {}'s "
                     "({:.2f} h)</td><td>{}</td><td>{:.2f}</td></tr>\n",
                     HtmlEscape(sb.policy), sb.bound.usd, HtmlEscape(sb.policy), sb.bound.max_avg_jct_s / 3600,
                     sb.bound.columns, sb.bound.seconds);
  }
  h += "</table>\n";
  h += AssumesParagraph(r, sim::Assumption::kBounds);
  h += CostJctChart(r);
  // Utilization over time.
  std::vector<ChartSeries> series;
  k = 0;
  for (const auto& p : r.policies) {
    ChartSeries s;
    s.name = p.name + " busy GPUs";
    s.color = kColors[k % kNumColors];
    for (const auto& u : p.result.utilization) s.points.push_back(ChartPoint{u.t_s / 3600.0, u.busy_gpus});
    series.push_back(std::move(s));
    if (p.name == "seedance" || p.name == "fifo") {
      ChartSeries held;
      held.name = p.name + " held GPUs";
      held.color = kColors[k % kNumColors];
      held.dashed = true;
      held.stroke_width = 1;
      for (const auto& u : p.result.utilization) held.points.push_back(ChartPoint{u.t_s / 3600.0, u.held_gpus});
      series.push_back(std::move(held));
    }
    ++k;
  }
  LineChartSpec spec;
  spec.id = "utilization";
  spec.title = "GPUs over time (hourly averages): busy (solid) and held (dashed)";
  spec.x.label = "hours since the first arrival";
  spec.y.label = "GPUs";
  spec.y.min = 0;
  h += RenderLineChart(spec, series);
  h += AssumesParagraph(r, sim::Assumption::kCharts);
  for (const auto& n : r.notes) h += "<p class=\"note\">" + HtmlEscape(n) + "</p>\n";
  h += "</section>\n";
  return h;
}

namespace {

std::string PlusMinus(const sim::MeanSd& v, const char* fmt_one) {
  return fmt::format(fmt::runtime(fmt_one), v.mean) + " ± " + fmt::format(fmt::runtime(fmt_one), v.sd);
}

const sim::SeedSweep::PolicySummary* FindSummary(const sim::SeedSweep& s, const std::string& name) {
  for (const auto& p : s.policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string SeedList(const std::vector<std::uint64_t>& seeds) {
  std::string out;
  for (auto v : seeds) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

// One sentence: Seedance's mean cost against the best baseline's and FIFO's, and the gap closed.
std::string SweepHeadline(const sim::SeedSweep& s) {
  const auto* fifo = FindSummary(s, "fifo");
  const auto* best = FindSummary(s, s.best_baseline);
  const auto* sd = FindSummary(s, "seedance");
  if (fifo == nullptr || sd == nullptr || best == nullptr) return "";
  const double c = sd->total_cost_usd.mean, b = best->total_cost_usd.mean;
  std::string out = fmt::format(
      "Over {} workload seeds, Seedance costs ${:.0f} ± {:.0f}, {:.1f}% {} than the best baseline {} (${:.0f} ± {:.0f}), "
      "average JCT {:.2f} h against {:.2f} h ({})",
      s.seeds.size(), c, sd->total_cost_usd.sd, std::abs(SavingPct(c, b)), c <= b ? "less" : "more", best->name, b,
      best->total_cost_usd.sd, sd->avg_jct_hours.mean, best->avg_jct_hours.mean,
      sd->avg_jct_hours.mean <= best->avg_jct_hours.mean ? "no worse" : "worse");
  if (auto g = GapClosed(c, b, s.bound_at_best_baseline_usd.mean)) {
    out += fmt::format("; it closes {:.0f}% of the gap to the bound at {}'s JCT (${:.0f})", 100 * *g, best->name,
                       s.bound_at_best_baseline_usd.mean);
  }
  out += fmt::format("; {:.1f}% {} than FIFO on on-demand (${:.0f}).", std::abs(SavingPct(c, fifo->total_cost_usd.mean)),
                     c <= fifo->total_cost_usd.mean ? "less" : "more", fifo->total_cost_usd.mean);
  const auto* cheapest = FindSummary(s, s.matched_baseline);
  if (cheapest != nullptr && cheapest != best) {
    out += fmt::format(" At Seedance's average JCT or faster, the cheapest baseline, {}, costs ${:.0f} ({:.1f}% {} than "
                       "Seedance) at {:.2f} h.",
                       cheapest->name, cheapest->total_cost_usd.mean,
                       std::abs(SavingPct(cheapest->total_cost_usd.mean, c)),
                       cheapest->total_cost_usd.mean <= c ? "less" : "more", cheapest->avg_jct_hours.mean);
  }
  return out;
}

}  // namespace

std::string SweepTable(const sim::SeedSweep& s, const std::string& label) {
  const sim::ScenarioResult& first = s.runs.front();
  std::string out = label.empty() ? "" : label + ": ";
  out += fmt::format("workload {} ({} jobs in seed {}) on fleet {}, workload seeds {}: mean ± sd\n",
                                first.workload, first.jobs, first.seed, first.fleet, SeedList(s.seeds));
  out += fmt::format("{:<22} {:>22} {:>16} {:>16} {:>9} {:>9}  {}\n", "policy", "total $", "avg JCT h", "p99 JCT h",
                     "vs fifo", "vs best", "role");
  const auto* fifo = FindSummary(s, "fifo");
  const auto* best = FindSummary(s, s.best_baseline);
  for (const auto& p : s.policies) {
    out += fmt::format("{:<22} {:>22} {:>16} {:>16} {:>9} {:>9}  {}{}\n", p.name, PlusMinus(p.total_cost_usd, "{:.2f}"),
                       PlusMinus(p.avg_jct_hours, "{:.2f}"), PlusMinus(p.p99_jct_hours, "{:.2f}"),
                       fifo ? Pct(SavingPct(p.total_cost_usd.mean, fifo->total_cost_usd.mean)) : "-",
                       best ? Pct(SavingPct(p.total_cost_usd.mean, best->total_cost_usd.mean)) : "-",
                       Role(p.baseline, p.reference, best == &p),
                       p.unfinished_runs > 0 ? fmt::format(" (unfinished jobs on {} seeds)", p.unfinished_runs) : "");
  }
  if (const auto& a = first.as_run) {
    const double paid = a->cost.total_usd;
    out += fmt::format("{:<22} {:>22} {:>16.2f} {:>16.2f} {:>9} {:>9}  {} ({})\n", sim::AsRunBaseline::kLabel,
                       fmt::format("{:.2f}", paid), a->result.AvgJctHours(), a->result.P99JctHours(),
                       fifo ? Pct(SavingPct(paid, fifo->total_cost_usd.mean)) : "-",
                       best ? Pct(SavingPct(paid, best->total_cost_usd.mean)) : "-", kAsRunRole, a->source);
  }
  out += fmt::format("{:<22} {:>22}   (LP relaxation, any JCT)\n", "lower bound", PlusMinus(s.lower_bound_usd, "{:.2f}"));
  if (best != nullptr) {
    out += fmt::format("{:<22} {:>22}   (at {}'s average JCT on each seed)\n", "lower bound @ " + best->name,
                       PlusMinus(s.bound_at_best_baseline_usd, "{:.2f}"), best->name);
  }
  const std::string headline = SweepHeadline(s);
  if (!headline.empty()) out += "=> " + headline + "\n";
  for (const auto& a : first.assumptions) out += "assumes: " + a.text + "\n";
  return out;
}

nlohmann::json SweepJson(const sim::SeedSweep& s) {
  const auto* fifo = FindSummary(s, "fifo");
  const auto* best = FindSummary(s, s.best_baseline);
  auto mean_sd = [](const sim::MeanSd& v) {
    return nlohmann::json{{"mean", Round(v.mean, 1e-6)}, {"sd", Round(v.sd, 1e-6)}};
  };
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json flat = nlohmann::json::array();  // the single-seed keys, from the means
  for (const auto& p : s.policies) {
    nlohmann::json row = {{"name", p.name},
                          {"description", p.description},
                          {"baseline", p.baseline},
                          {"reference", p.reference},
                          {"role", Role(p.baseline, p.reference, best == &p)},
                          {"total_cost_usd", mean_sd(p.total_cost_usd)},
                          {"avg_jct_hours", mean_sd(p.avg_jct_hours)},
                          {"p99_jct_hours", mean_sd(p.p99_jct_hours)},
                          {"unfinished_runs", p.unfinished_runs}};
    nlohmann::json f = {{"name", p.name},
                        {"baseline", p.baseline},
                        {"reference", p.reference},
                        {"total_cost_usd", Round(p.total_cost_usd.mean, 1e-6)},
                        {"total_cost_usd_sd", Round(p.total_cost_usd.sd, 1e-6)},
                        {"avg_jct_hours", Round(p.avg_jct_hours.mean, 1e-6)},
                        {"avg_jct_hours_sd", Round(p.avg_jct_hours.sd, 1e-6)},
                        {"p99_jct_hours", Round(p.p99_jct_hours.mean, 1e-6)},
                        {"p99_jct_hours_sd", Round(p.p99_jct_hours.sd, 1e-6)}};
    if (fifo != nullptr) {
      row["savings_vs_fifo_pct"] = f["savings_vs_fifo_pct"] =
          Round(SavingPct(p.total_cost_usd.mean, fifo->total_cost_usd.mean), 1e-4);
    }
    if (best != nullptr) {
      row["savings_vs_best_baseline_pct"] = f["savings_vs_best_baseline_pct"] =
          Round(SavingPct(p.total_cost_usd.mean, best->total_cost_usd.mean), 1e-4);
      row["avg_jct_no_worse_than_best_baseline"] = f["avg_jct_no_worse_than_best_baseline"] =
          p.unfinished_runs == 0 && p.avg_jct_hours.mean <= best->avg_jct_hours.mean;
      auto gap = GapClosed(p.total_cost_usd.mean, best->total_cost_usd.mean, s.bound_at_best_baseline_usd.mean);
      if (!p.baseline && gap) row["gap_closed"] = f["gap_closed"] = Round(*gap, 1e-6);
    }
    rows.push_back(row);
    flat.push_back(f);
  }
  nlohmann::json best_json = nullptr;
  if (best != nullptr) {
    best_json = {{"name", best->name},
                 {"total_cost_usd", Round(best->total_cost_usd.mean, 1e-6)},
                 {"avg_jct_hours", Round(best->avg_jct_hours.mean, 1e-6)},
                 {"rule", std::string(kBestBaselineRule) + ", applied to the means over the seeds"}};
  }
  nlohmann::json j;
  const nlohmann::json first = ScenarioJson(s.runs.front());
  j["workload"] = first["workload"];
  j["seeds"] = s.seeds;
  j["policies"] = flat;
  j["best_baseline"] = best_json;
  const auto* cheapest = FindSummary(s, s.matched_baseline);
  j["baseline_at_seedance_jct"] = cheapest == nullptr ? nlohmann::json(nullptr)
                                               : nlohmann::json{{"name", cheapest->name},
                                                                {"total_cost_usd", Round(cheapest->total_cost_usd.mean, 1e-6)},
                                                                {"avg_jct_hours", Round(cheapest->avg_jct_hours.mean, 1e-6)}};
  j["lower_bound_usd"] = Round(s.lower_bound_usd.mean, 1e-6);
  j["bound_at_best_baseline_usd"] = best ? nlohmann::json(Round(s.bound_at_best_baseline_usd.mean, 1e-6)) : nullptr;
  j["assumptions"] = first["assumptions"];
  if (first.contains("as_run")) j["as_run"] = first["as_run"];
  j["summary"] = {{"policies", rows},
                  {"best_baseline", best_json},
                  {"lower_bound_usd", mean_sd(s.lower_bound_usd)},
                  {"bound_at_best_baseline_usd", mean_sd(s.bound_at_best_baseline_usd)},
                  {"headline", SweepHeadline(s)}};
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& r : s.runs) runs.push_back(ScenarioJson(r));
  j["per_seed"] = runs;
  return j;
}

std::string SweepHtmlSection(const sim::SeedSweep& s, const std::string& label) {
  const sim::ScenarioResult& first = s.runs.front();
  std::string h = "<section>\n<h2>" + (label.empty() ? "" : HtmlEscape(label) + ". ") + "Cost over workload seeds " +
                  HtmlEscape(SeedList(s.seeds)) + ": " + HtmlEscape(first.workload) + "</h2>\n";
  const std::string headline = SweepHeadline(s);
  if (!headline.empty()) h += "<p class=\"headline\"><strong>" + HtmlEscape(headline) + "</strong></p>\n";
  h += "<p>Each seed generates a new workload instance (llm-finetune, gavel) and seeds the simulation; mean ± sample "
       "standard deviation over the seeds. The best baseline is " + std::string(kBestBaselineRule) +
       ", applied to the means. Rows marked <em>" + std::string(kReferenceLabel) +
       "</em> are references no online scheduler can reach.</p>\n";
  const auto* fifo = FindSummary(s, "fifo");
  const auto* best = FindSummary(s, s.best_baseline);
  h += "<table>\n<tr><th>policy</th><th>role</th><th>total $</th><th>avg JCT h</th><th>p99 JCT h</th><th>vs fifo</th>"
       "<th>vs best baseline</th></tr>\n";
  for (const auto& p : s.policies) {
    h += fmt::format("<tr><td title=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                     HtmlEscape(p.description), HtmlEscape(p.name), Role(p.baseline, p.reference, best == &p),
                     PlusMinus(p.total_cost_usd, "{:.2f}"), PlusMinus(p.avg_jct_hours, "{:.2f}"),
                     PlusMinus(p.p99_jct_hours, "{:.2f}"),
                     fifo ? Pct(SavingPct(p.total_cost_usd.mean, fifo->total_cost_usd.mean)) : "-",
                     best ? Pct(SavingPct(p.total_cost_usd.mean, best->total_cost_usd.mean)) : "-");
  }
  h += fmt::format("<tr><td>lower bound</td><td></td><td>{}</td><td colspan=\"4\">LP relaxation, any JCT</td></tr>\n",
                   PlusMinus(s.lower_bound_usd, "{:.2f}"));
  if (best != nullptr) {
    h += fmt::format("<tr><td>lower bound @ {0}</td><td></td><td>{1}</td><td colspan=\"4\">at {0}'s average JCT on "
                     "each seed</td></tr>\n", HtmlEscape(best->name), PlusMinus(s.bound_at_best_baseline_usd, "{:.2f}"));
  }
  if (const auto& a = first.as_run) {
    const double paid = a->cost.total_usd;
    h += fmt::format("<tr><td title=\"{}\">{}</td><td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{}</td>"
                     "<td>{}</td></tr>\n",
                     HtmlEscape(AsRunSplit(a->cost)), HtmlEscape(sim::AsRunBaseline::kLabel), kAsRunRole, paid,
                     a->result.AvgJctHours(), a->result.P99JctHours(),
                     fifo ? Pct(SavingPct(paid, fifo->total_cost_usd.mean)) : "-",
                     best ? Pct(SavingPct(paid, best->total_cost_usd.mean)) : "-");
  }
  h += "</table>\n";
  h += AssumesParagraph(first, sim::Assumption::kCosts);
  h += AssumesParagraph(first, sim::Assumption::kBounds);
  h += "</section>\n";
  return h;
}

}  // namespace seedance::report
