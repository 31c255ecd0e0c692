#include "seedance/report/tenancy_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "seedance/report/html.h"
#include "seedance/report/svg_chart.h"

namespace seedance::report {
namespace {

const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string GoldCell(const sim::TenancyOutcome& o) {
  return fmt::format("{}/{}", o.gold_guarantee_violations, o.gold_guarantee_checks);
}

}  // namespace

std::string TenancyTable(const sim::TenancyComparison& c) {
  const auto& s = c.scenario;
  std::string out = fmt::format("Tenancy ({}, {} GPUs of {}, {} tenants, {:.1f}-day window):\n", s.name, s.total_gpus,
                                s.gpu_type, s.config.tenants.size(), s.window_s / 86400);
  out += fmt::format("  {:<26} {:>8} {:>8} {:>6} {:>12} {:>10} {:>9} {:>12} {:>9}\n", "mode", "alloc %", "busy %", "Jain",
                     "gold viol.", "preempt", "reclaims", "lost GPU-h", "unstarted");
  for (const auto& o : c.outcomes) {
    out += fmt::format("  {:<26} {:>8.1f} {:>8.1f} {:>6.3f} {:>12} {:>10} {:>9} {:>12.1f} {:>9}\n", o.mode,
                       o.gpu_allocation_pct, o.busy_allocation_pct, o.jain_index, GoldCell(o), o.preemptions,
                       o.idle_reclaims, o.work_lost_gpu_hours, o.unstarted);
  }
  out += "  (gold viol. = Gold arrivals within their tenant's unborrowed guaranteed quota that did not start within one\n"
         "   scheduling cycle / such arrivals; Jain's index over tenants of held / max-min fair GPU-hours)\n";
  for (const auto& a : s.assumptions) out += "  Assumes: " + a + "\n";
  return out;
}

nlohmann::json TenancyJson(const sim::TenancyComparison& c) {
  nlohmann::json modes = nlohmann::json::array();
  for (const auto& o : c.outcomes) {
    nlohmann::json m;
    m["mode"] = o.mode;
    m["gpu_allocation_pct"] = o.gpu_allocation_pct;
    m["busy_allocation_pct"] = o.busy_allocation_pct;
    m["jain_index"] = o.jain_index;
    m["gold_guarantee_checks"] = o.gold_guarantee_checks;
    m["gold_guarantee_violations"] = o.gold_guarantee_violations;
    m["gold_preempted_by_lower"] = o.gold_preempted_by_lower;
    m["preemptions"] = o.preemptions;
    m["idle_reclaims"] = o.idle_reclaims;
    m["work_lost_gpu_hours"] = o.work_lost_gpu_hours;
    m["unstarted"] = o.unstarted;
    nlohmann::json tenants = nlohmann::json::array();
    for (const auto& t : o.per_tenant) {
      tenants.push_back({{"tenant", t.tenant},
                         {"tier", std::string(tenancy::TierName(t.tier))},
                         {"nominal_gpus", t.nominal_gpus},
                         {"jobs", t.jobs},
                         {"wait_p50_h", t.wait_p50_h},
                         {"wait_p99_h", t.wait_p99_h},
                         {"guaranteed_share_honoured_pct", t.guaranteed_share_honoured_pct},
                         {"borrowed_gpu_hours", t.borrowed_gpu_hours},
                         {"preemptions", t.preemptions},
                         {"cost_usd", t.cost_usd},
                         {"held_gpu_hours", t.held_gpu_hours},
                         {"fair_gpu_hours", t.fair_gpu_hours}});
    }
    m["per_tenant"] = std::move(tenants);
    modes.push_back(std::move(m));
  }
  return modes;
}

nlohmann::json TenancyScenarioJson(const sim::TenancyComparison& c) {
  const auto& s = c.scenario;
  return {{"workload", s.name},
          {"gpu_type", s.gpu_type},
          {"gpus", s.total_gpus},
          {"nodes", s.nodes.size()},
          {"window_days", s.window_s / 86400},
          {"usd_per_gpu_hour", s.usd_per_gpu_hour},
          {"assumptions", s.assumptions}};
}

std::string TenancyHtmlSection(const sim::TenancyComparison& c) {
  const auto& s = c.scenario;
  std::string h = "<section>\n<h2>Tenancy: tiers, quotas, borrowing and preemption</h2>\n";
  h += fmt::format("<p>{} on {} GPUs ({}), {} tenants in one cohort, {:.1f}-day window. Modes: <b>strict</b> (each tenant "
                   "within its nominal quota), <b>borrowing</b> (Kueue with borrowing, reclaimWithinCohort LowerPriority, "
                   "then kube-scheduler's default preemption), <b>fair-sharing</b> (Kueue's Fair Sharing: dominant resource "
                   "share ordering and preemption, strategies [LessThanOrEqualToFinalShare, LessThanInitialShare]; "
                   "<b>-ltefs</b> / <b>-ltis</b>: one of them), <b>seedance</b> (tiers, idle reclaim, checkpoint-aware "
                   "victims on one node, elastic quota, fairness compensation), and seedance without compensation (the "
                   "fairness ablation).</p>\n",
                   HtmlEscape(s.name), s.total_gpus, HtmlEscape(s.gpu_type), s.config.tenants.size(), s.window_s / 86400);
  h += "<table>\n<tr><th>mode</th><th>GPU allocation %</th><th>busy %</th><th>Jain's index</th><th>Gold guarantee "
       "violations</th><th>Gold preempted by a lower tier</th><th>preemptions</th><th>idle reclaims</th><th>work lost "
       "(GPU-h)</th></tr>\n";
  for (const auto& o : c.outcomes) {
    h += fmt::format("<tr><td>{}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.3f}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                     "<td>{:.1f}</td></tr>\n",
                     HtmlEscape(o.mode), o.gpu_allocation_pct, o.busy_allocation_pct, o.jain_index, GoldCell(o),
                     o.gold_preempted_by_lower, o.preemptions, o.idle_reclaims, o.work_lost_gpu_hours);
  }
  h += "</table>\n";
  h += "<p>Gold guarantee violations: Gold arrivals that fit their tenant's unborrowed guaranteed quota and did not start "
       "within one scheduling cycle, over such arrivals. Per tenant below: <i>guaranteed share honoured</i> is the share of "
       "the time the tenant had work waiting in which no waiting job would have fit in the unused part of its guaranteed "
       "quota (a job larger than the guarantee is not covered by it); <i>held / fair</i> compares the GPU-hours it held "
       "with its max-min fair share (weights = nominal quotas), the ratios behind Jain's index.</p>\n";
  for (const auto& o : c.outcomes) {
    h += fmt::format("<h3>{}: per tenant</h3>\n<table>\n<tr><th>tenant</th><th>tier</th><th>nominal GPUs</th><th>jobs</th>"
                     "<th>wait p50 (h)</th><th>wait p99 (h)</th><th>guaranteed share honoured %</th><th>borrowed GPU-h</th>"
                     "<th>preemptions</th><th>cost (USD)</th><th>held / fair GPU-h</th></tr>\n",
                     HtmlEscape(o.mode));
    for (const auto& t : o.per_tenant) {
      h += fmt::format("<tr><td>{}</td><td>{}</td><td>{:g}</td><td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.1f}</td>"
                       "<td>{:.0f}</td><td>{}</td><td>{:.0f}</td><td>{:.0f} / {:.0f}</td></tr>\n",
                       HtmlEscape(t.tenant), tenancy::TierName(t.tier), t.nominal_gpus, t.jobs, t.wait_p50_h, t.wait_p99_h,
                       t.guaranteed_share_honoured_pct, t.borrowed_gpu_hours, t.preemptions, t.cost_usd, t.held_gpu_hours,
                       t.fair_gpu_hours);
    }
    h += "</table>\n";
    // Tenant shares over time.
    std::vector<ChartSeries> series;
    for (std::size_t t = 0; t < o.per_tenant.size(); ++t) {
      ChartSeries cs;
      cs.name = o.per_tenant[t].tenant + " (" + std::string(tenancy::TierName(o.per_tenant[t].tier)) + ")";
      cs.color = kPalette[t % std::size(kPalette)];
      cs.dashed = t >= std::size(kPalette);
      cs.stroke_width = 1.5;
      for (std::size_t k = 0; k < o.share_gpus.size(); ++k) {
        const double x = (static_cast<double>(k) + 0.5) * o.bucket_s / 86400;
        cs.points.push_back({x, o.share_gpus[k][t] / std::max(1.0, s.total_gpus) * 100});
      }
      series.push_back(std::move(cs));
    }
    LineChartSpec spec;
    spec.id = "tenancy-" + o.mode;
    std::replace_if(spec.id.begin(), spec.id.end(), [](char ch) { return !std::isalnum(static_cast<unsigned char>(ch)) && ch != '-'; }, '-');
    spec.title = o.mode + ": each tenant's share of the cluster over time";
    spec.x.label = "day";
    spec.y.label = "% of the cluster's GPUs held";
    spec.y.min = 0;
    h += RenderLineChart(spec, series);
  }
  h += "<p class=\"assumes\">Assumes: ";
  for (const auto& a : s.assumptions) h += HtmlEscape(a) + " ";
  h += "</p>\n</section>\n";
  return h;
}

}  // namespace seedance::report
