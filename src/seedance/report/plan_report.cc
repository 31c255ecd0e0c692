#include "seedance/report/plan_report.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "seedance/core/file_util.h"
#include "seedance/report/html.h"
#include "seedance/report/svg_chart.h"

namespace seedance::report {
namespace {

const char* const kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1"};

}  // namespace

std::string FormatPlanTable(const planner::PlanResult& r) {
  std::string s;
  if (r.melange_input) {
    s += fmt::format("plan for the Mélange input {} at {:.3f} req/s (its tables, prices and F = {})\n", r.config.trace,
                     r.rate_rps, r.config.slice_factor);
  } else {
    s += fmt::format("plan for {} at {:.3f} req/s (TTFT {:g} s, TPOT {:g} ms), sized for x{:.3f} of it (bursts)\n",
                     r.config.trace, r.rate_rps, r.config.slo_ttft_s, 1e3 * r.config.slo_tpot_s, r.burst_factor);
  }
  if (!r.melange_input) {
    s += fmt::format("  model {} (context {} tokens); count = replicas of tp GPUs each\n", r.model, r.max_context);
  }
  s += fmt::format("  {:<10} {:>5} {:>3} {:>5} {:>5} {:>10} {:>10} {:>9}\n", "gpu", "count", "tp", "gpus", "spot",
                   "$/gpu-h", "load", "headroom");
  for (const planner::MixEntry& m : r.mix) {
    s += fmt::format("  {:<10} {:>5} {:>3} {:>5} {:>5} {:>10.4f} {:>10.3f} {:>8.1f}%\n", m.gpu, m.count, m.tp,
                     m.count * m.tp, m.spot ? "yes" : "no", m.usd_per_hour, m.load, 100 * m.headroom);
  }
  s += fmt::format("  cost ${:.4f}/h", r.usd_per_hour);
  if (r.usd_per_mtok > 0) s += fmt::format(", ${:.4f} per million tokens", r.usd_per_mtok);
  if (r.config.spot) {
    s += fmt::format(" (on demand only: ${:.4f}/h; with spot: ${:.4f}/h{})", r.od_usd_per_hour, r.spot_plan_usd_per_hour,
                     r.spot_plan_usd_per_hour < r.od_usd_per_hour - 1e-9 ? "" : ", not cheaper: on demand kept");
  }
  s += "\n";
  s += fmt::format("  fluid lower bound ${:.4f}/h\n", r.lower_bound_usd_per_hour);
  s += "  single-type baselines:\n";
  for (const planner::SingleType& b : r.single) {
    const std::string& g = r.gpu_names[static_cast<std::size_t>(b.option)];
    if (!b.feasible) {
      s += fmt::format("    {:<10} infeasible (some traffic misses the SLO on it)\n", g);
      continue;
    }
    const auto k = static_cast<std::size_t>(b.option);
    const int tp = k < r.tp.size() ? r.tp[k] : 1;
    s += fmt::format("    {:<10} {:>4} x{} = ${:.4f}/h  saving {:.1f}%{}\n", g, b.count,
                     tp > 1 ? fmt::format(" TP{}", tp) : "", b.usd_per_hour,
                     100 * (1 - r.usd_per_hour / b.usd_per_hour), b.option == r.best_single ? "  (best single)" : "");
  }
  if (!r.melange_input && r.workload.over_context > 0) {
    s += fmt::format("  {} of {} requests of the tuning half exceed {}'s {}-token context: not planned for, counted\n",
                     r.workload.over_context, r.workload.total, r.model, r.max_context);
  }
  if (r.best_single >= 0) {
    s += fmt::format("  saving vs the best single type: {:.1f}% (no on-demand plan can save more than {:.1f}% at the mean rate: fluid bound)\n",
                     r.saving_pct, r.max_saving_pct);
  }
  if (!r.melange_input) {
    s += fmt::format("  Mélange's way (mean rate, no burst sizing): ${:.4f}/h, saving {:.1f}% vs its best single type",
                     r.mean_rate.usd_per_hour, r.mean_rate.saving_pct);
    if (r.mean_rate.held_out_attainment >= 0) {
      s += fmt::format(", held-out attainment {:.2f}%", 100 * r.mean_rate.held_out_attainment);
    }
    s += "\n";
  }
  if (r.has_day) {
    s += fmt::format("  day ({} periods): static peak fleet ${:.2f}; resized every period ${:.2f} (of it ${:.2f} "
                     "booting); best single type resized ({}) ${:.2f}\n",
                     r.day.periods.size(), r.day.static_peak_usd, r.day.autoscaled_usd, r.day.boot_usd,
                     r.day.single_gpu, r.day.autoscaled_single_usd);
  }
  if (r.verified_run) {
    s += fmt::format("  verified by replay (held-out half, {} router): {:.2f}% of {} servable requests within both SLOs",
                     r.config.router, 100 * r.verified.slo_attainment, r.verified.servable);
    if (r.verified.over_context > 0) {
      s += fmt::format("; {} of {} requests exceed {}'s {}-token context and are not served ({:.2f}% of all requests "
                       "met both SLOs)",
                       r.verified.over_context, r.verified.requests, r.model, r.max_context,
                       100 * r.verified.MetOfAll());
    }
    if (r.config.spot) {
      s += fmt::format(" ({} spot GPUs lost, {} requests lost with them)", r.verified.preemptions,
                       r.verified.lost_to_preemption);
    }
    s += "\n";
    s += fmt::format("  same fleet, {} router{}: {:.2f}%\n", r.other_router,
                     r.other_router == planner::kRouterOutputOracle ? " (Mélange's, an oracle on output length)" : "",
                     100 * r.verified_other_router.slo_attainment);
  }
  return s;
}

std::string PlanHtml(const planner::PlanResult& r) {
  std::string h = "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Seedance plan</title></head><body>\n";
  h += fmt::format("<h1>GPU mix for {}</h1>\n<p>{:.3f} req/s, TTFT SLO {:g} s, TPOT SLO {:g} ms; sized for x{:.3f} "
                   "of the rate (bursts).</p>\n",
                   HtmlEscape(r.config.trace), r.rate_rps, r.config.slo_ttft_s, 1e3 * r.config.slo_tpot_s, r.burst_factor);
  h += "<table border=\"1\"><tr><th>GPU</th><th>replicas</th><th>TP</th><th>GPUs</th><th>spot</th><th>$/GPU-h</th>"
       "<th>load (replicas)</th><th>headroom</th></tr>\n";
  for (const planner::MixEntry& m : r.mix) {
    h += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.4f}</td><td>{:.3f}</td>"
                     "<td>{:.1f}%</td></tr>\n",
                     HtmlEscape(m.gpu), m.count, m.tp, m.count * m.tp, m.spot ? "yes" : "no", m.usd_per_hour, m.load,
                     100 * m.headroom);
  }
  h += fmt::format("</table>\n<p>Cost ${:.4f}/h; fluid lower bound ${:.4f}/h; saving vs the best single type {:.1f}% "
                   "(at most {:.1f}%).</p>\n",
                   r.usd_per_hour, r.lower_bound_usd_per_hour, r.saving_pct, r.max_saving_pct);
  if (r.verified_run) {
    h += fmt::format("<p>Verified by replay on the held-out half ({} router): {:.2f}% of {} servable requests within "
                     "both SLOs; the same fleet with the {} router: {:.2f}%.</p>\n",
                     HtmlEscape(r.config.router), 100 * r.verified.slo_attainment, r.verified.servable,
                     HtmlEscape(r.other_router), 100 * r.verified_other_router.slo_attainment);
    if (r.verified.over_context > 0) {
      h += fmt::format("<p>{} of {} held-out requests exceed {}'s {}-token context and are not served: {:.2f}% of all "
                       "requests met both SLOs.</p>\n",
                       r.verified.over_context, r.verified.requests, HtmlEscape(r.model), r.max_context,
                       100 * r.verified.MetOfAll());
    }
  }
  if (!r.curve.empty()) {
    LineChartSpec spec;
    spec.id = "plan-cost";
    spec.title = "Cost against request rate per strategy";
    spec.x.label = "request rate (req/s)";
    spec.y.label = "$ per hour";
    std::vector<ChartSeries> series;
    ChartSeries mix{"mix (Seedance ILP)", {}, kColors[0], false, 3};
    ChartSeries bound{"fluid lower bound", {}, "#999999", true, 1.5};
    ChartSeries spot{"mix with spot", {}, kColors[4], false, 2};
    for (const planner::CostPoint& p : r.curve) {
      mix.points.push_back({p.rate_rps, p.mix_usd_per_hour});
      bound.points.push_back({p.rate_rps, p.lower_bound_usd_per_hour});
      if (r.config.spot) spot.points.push_back({p.rate_rps, p.spot_usd_per_hour});
    }
    series.push_back(mix);
    if (r.config.spot) series.push_back(spot);
    series.push_back(bound);
    for (std::size_t g = 0; g < r.gpu_names.size(); ++g) {
      ChartSeries s{r.gpu_names[g] + " only", {}, kColors[(g + 1) % 7], true, 1.5};
      for (const planner::CostPoint& p : r.curve) {
        const double y = g < p.single_usd_per_hour.size() && p.single_usd_per_hour[g] > 0
                             ? p.single_usd_per_hour[g]
                             : std::numeric_limits<double>::quiet_NaN();
        s.points.push_back({p.rate_rps, y});
      }
      series.push_back(std::move(s));
    }
    h += RenderLineChart(spec, series);
  }
  if (r.has_day) {
    LineChartSpec spec;
    spec.id = "plan-day";
    spec.title = "A day: $ per hour by period";
    spec.x.label = "hour of the day";
    spec.y.label = "$ per hour";
    ChartSeries mix{"mix, resized", {}, kColors[0], false, 3};
    ChartSeries single{r.day.single_gpu + " only, resized", {}, kColors[1], true, 2};
    ChartSeries stat{"static peak mix", {}, "#999999", true, 1.5};
    for (const planner::DayPeriod& p : r.day.periods) {
      for (double t : {p.start_s, p.end_s}) {
        mix.points.push_back({t / 3600, p.usd_per_hour});
        single.points.push_back({t / 3600, p.best_single_usd_per_hour});
        stat.points.push_back({t / 3600, r.od_usd_per_hour});
      }
    }
    h += fmt::format("<p>Day: static peak fleet ${:.2f}; resized every period ${:.2f}; {} only, resized, ${:.2f}.</p>\n",
                     r.day.static_peak_usd, r.day.autoscaled_usd, HtmlEscape(r.day.single_gpu), r.day.autoscaled_single_usd);
    h += RenderLineChart(spec, {mix, single, stat});
  }
  h += "<h2>Assumptions behind these figures</h2>\n<ul>\n";
  for (const std::string& a : r.assumptions) h += "<li>" + HtmlEscape(a) + "</li>\n";
  h += "</ul>\n</body></html>\n";
  return h;
}

Status WritePlanOutputs(const planner::PlanResult& r, const std::string& dir) {
  const std::string json = planner::PlanJson(r);
  const std::string html = PlanHtml(r);
  SEEDANCE_RETURN_IF_ERROR(EnsureDirectory(dir));
  SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(dir + "/plan.json", json));
  return WriteFileAtomically(dir + "/plan_report.html", html);
}

}  // namespace seedance::report
