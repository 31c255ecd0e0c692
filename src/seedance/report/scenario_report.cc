#include "seedance/report/scenario_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "seedance/report/html.h"
#include "seedance/report/svg_chart.h"

namespace seedance::report {
namespace {

double Round(double v, double q) { return std::round(v / q) * q; }

const sim::PolicyOutcome* Baseline(const sim::ScenarioResult& r) {
  for (const auto& p : r.policies) {
    if (p.name == "fifo") return &p;
  }
  return r.policies.empty() ? nullptr : &r.policies.front();
}

double CostPerUsefulGpuHour(const sim::SimResult& s) {
  return s.useful_gpu_seconds > 0 ? s.total_cost_usd / (s.useful_gpu_seconds / 3600.0) : 0;
}

const char* kColors[] = {"#e15759", "#76b7b2", "#4e79a7", "#59a14f", "#edc948",
                         "#b07aa1", "#f28e2b", "#9c755f", "#ff9da7", "#bab0ac"};
constexpr std::size_t kNumColors = sizeof(kColors) / sizeof(kColors[0]);

}  // namespace

std::string ScenarioTable(const sim::ScenarioResult& r) {
  std::string out = fmt::format("workload {} ({} jobs, arrivals over {:.1f} h) on fleet {}\n", r.workload, r.jobs,
                                r.duration_s / 3600.0, r.fleet);
  out += fmt::format("{:<22} {:>12} {:>10} {:>9} {:>9} {:>7} {:>8} {:>6} {:>10} {:>9}\n", "policy", "total $",
                     "$/useful", "avg JCT", "p99 JCT", "misses", "spot int", "util", "vs fifo", "vs bound");
  const auto* base = Baseline(r);
  for (const auto& p : r.policies) {
    const auto& s = p.result;
    double save = base ? 100.0 * (1.0 - s.total_cost_usd / base->result.total_cost_usd) : 0;
    double over = r.bound.usd > 0 ? 100.0 * (s.total_cost_usd / r.bound.usd - 1.0) : 0;
    out += fmt::format("{:<22} {:>12.2f} {:>10.3f} {:>8.2f}h {:>8.2f}h {:>7} {:>8} {:>5.1f}% {:>9.1f}% {:>8.1f}%\n",
                       p.name, s.total_cost_usd, CostPerUsefulGpuHour(s), s.AvgJctHours(), s.P99JctHours(),
                       s.deadline_misses, s.spot_interruptions, 100.0 * s.Utilization(), save, over);
  }
  out += fmt::format("{:<22} {:>12.2f}   (LP relaxation, GLPK, any JCT within fifo's span: {} columns, {:.2f} s)\n",
                     "lower bound", r.bound.usd, r.bound.columns, r.bound.seconds);
  for (const auto& sb : r.service_bounds) {
    out += fmt::format("{:<22} {:>12.2f}   (the same at avg JCT <= {}'s {:.2f} h: {} columns, {:.2f} s)\n",
                       "lower bound @ " + sb.policy, sb.bound.usd, sb.policy, sb.bound.max_avg_jct_s / 3600,
                       sb.bound.columns, sb.bound.seconds);
  }
  for (const auto& p : r.policies) {
    if (p.name != "seedance" || base == nullptr || base->result.total_cost_usd <= 0) continue;
    out += fmt::format("=> seedance: {:.1f}% {} than fifo, avg JCT {:.2f} h, {:.2f}x the lower bound",
                       std::abs(100.0 * (1.0 - p.result.total_cost_usd / base->result.total_cost_usd)),
                       p.result.total_cost_usd <= base->result.total_cost_usd ? "cheaper" : "dearer",
                       p.result.AvgJctHours(), r.bound.usd > 0 ? p.result.total_cost_usd / r.bound.usd : 0.0);
    for (const auto& sb : r.service_bounds) {
      out += fmt::format(", {:.2f}x the bound at {}'s JCT", sb.bound.usd > 0 ? p.result.total_cost_usd / sb.bound.usd : 0.0,
                         sb.policy);
    }
    out += "\n";
  }
  for (const auto& n : r.notes) out += "note: " + n + "\n";
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
  }
  j["policies"] = pols;
  j["lower_bound_usd"] = Round(r.bound.usd, 1e-6);
  nlohmann::json lb_pool = nlohmann::json::object();
  for (std::size_t k = 0; k < r.bound.usd_by_pool.size() && k < r.pool_names.size(); ++k) {
    lb_pool[r.pool_names[k]] = Round(r.bound.usd_by_pool[k], 1e-6);
  }
  j["lower_bound"] = {{"usd_by_pool", lb_pool},
                      {"method", "LP relaxation (GLPK simplex) of the cheapest assignment of every job's work to "
                                 "the fleet's pools per time bucket, with pool capacity, spot availability, "
                                 "per-job speed and deadlines, over FIFO's span"},
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
                   {"method", "the same LP with one more row: the jobs' completion-time lower bounds (mean busy "
                              "time + half the run time, or the run time) sum to at most N x the average JCT; "
                              "work may also run after the horizon, in an open-ended bucket"},
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

// ", and 1.21x the bound for schedules as fast as gavel-las ($100873)" for each service bound.
std::string ServiceBoundClause(const sim::ScenarioResult& r, const sim::PolicyOutcome& p) {
  std::string out;
  for (const auto& sb : r.service_bounds) {
    if (sb.bound.usd <= 0) continue;
    out += fmt::format(", and {:.2f}x the bound for schedules as fast as {} on average (${:.0f})",
                       p.result.total_cost_usd / sb.bound.usd, sb.policy, sb.bound.usd);
  }
  return out;
}

// Approximate width in px of an 11 px label.
double LabelWidth(const std::string& text) { return 6.2 * static_cast<double>(text.size()); }

// Cost against average JCT: one point per policy, the Seedance frontier (seedance-tv*) joined by
// a line, the plain bound as a dashed line and each service-level bound as a cross at its JCT.
std::string CostJctChart(const sim::ScenarioResult& r) {
  std::vector<double> jcts;
  double lo_cost = r.bound.usd, hi_cost = 0;
  for (const auto& p : r.policies) {
    jcts.push_back(p.result.AvgJctHours());
    lo_cost = std::min(lo_cost, p.result.total_cost_usd);
    hi_cost = std::max(hi_cost, p.result.total_cost_usd);
  }
  for (const auto& sb : r.service_bounds) lo_cost = std::min(lo_cost, sb.bound.usd);
  std::sort(jcts.begin(), jcts.end());
  if (jcts.empty() || hi_cost <= 0 || jcts.back() <= 0) return "";
  // A far outlier (FIFO's JCT on philly) would squeeze the rest: it is pinned to the right edge.
  double max_jct = jcts.back();
  if (jcts.size() > 1 && max_jct > 1.5 * jcts[jcts.size() - 2]) max_jct = 1.25 * jcts[jcts.size() - 2];
  max_jct *= 1.05;
  const double min_jct = jcts.front() < 0.5 * max_jct ? 0.0 : 0.95 * jcts.front();
  const double min_cost = 0.9 * lo_cost, max_cost = 1.05 * hi_cost;
  const int legend_rows = static_cast<int>((r.policies.size() + 3) / 4);
  const int width = 760, plot_height = 380, left = 90, right = 40, top = 20, bottom = 50;
  const int height = plot_height + 20 * legend_rows;
  auto x = [&](double jct) {
    return left + (std::min(jct, max_jct) - min_jct) / (max_jct - min_jct) * (width - left - right);
  };
  auto y = [&](double usd) { return top + (max_cost - usd) / (max_cost - min_cost) * (plot_height - top - bottom); };
  std::string h = "<h3>Cost against average JCT</h3>\n<p>Lower and further left is better. Points: each "
                  "policy; line: Seedance at increasing values of a job-hour (<code>--frontier</code>); dashed: "
                  "the LP bound; crosses: the bound for schedules at least as fast on average as that policy.</p>\n";
  h += fmt::format("<svg viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" "
                   "aria-label=\"cost against average JCT\">\n", width, height);
  h += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#999\"/><line x1=\"{0}\" y1=\"{2}\" "
                   "x2=\"{3}\" y2=\"{2}\" stroke=\"#999\"/>\n", left, top, plot_height - bottom, width - right);
  for (int t = 0; t <= 4; ++t) {  // ticks
    double jv = min_jct + (max_jct - min_jct) * t / 4, cv = min_cost + (max_cost - min_cost) * t / 4;
    h += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\">{:.1f}</text>"
                     "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"11\">${:.0f}</text>\n",
                     x(jv), plot_height - bottom + 16, jv, left - 6, y(cv) + 4, cv);
  }
  h += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">average JCT (h)</text>\n",
                   (left + width - right) / 2, plot_height - 8);
  h += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\" stroke-dasharray=\"6 4\"/>"
                   "<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\">lower bound ${:.0f}</text>\n",
                   left, width - right, y(r.bound.usd), y(r.bound.usd), left + 6, y(r.bound.usd) - 4, r.bound.usd);
  for (const auto& sb : r.service_bounds) {
    double cx = x(sb.bound.max_avg_jct_s / 3600.0), cy = y(sb.bound.usd);
    const bool flip = cx + 8 + LabelWidth("bound at " + sb.policy + "'s JCT") > width;
    h += fmt::format("<path d=\"M{0:.1f} {1:.1f} l8 8 m-8 0 l8 -8\" transform=\"translate(-4 -4)\" stroke=\"#333\" "
                     "stroke-width=\"2\"><title>bound at {2}'s JCT: ${3:.0f}</title></path>"
                     "<text x=\"{4:.1f}\" y=\"{5:.1f}\" font-size=\"11\"{6}>bound at {2}'s JCT</text>\n",
                     cx, cy, HtmlEscape(sb.policy), sb.bound.usd, flip ? cx - 8 : cx + 8, cy - 8,
                     flip ? " text-anchor=\"end\"" : "");
  }
  std::vector<std::pair<double, double>> frontier;
  // Policies at the same point share one label ("seedance = seedance-tv0"); labels that would
  // overlap an earlier one move down a line.
  struct Label {
    double x, y;
    std::string text;
    bool right;
  };
  std::vector<Label> labels;
  std::size_t k = 0;
  for (const auto& p : r.policies) {
    double px = x(p.result.AvgJctHours()), py = y(p.result.total_cost_usd);
    const bool on_frontier = p.name.rfind("seedance-tv", 0) == 0;
    if (on_frontier) frontier.emplace_back(px, py);
    std::string text = on_frontier ? "$" + p.name.substr(11) + "/h" : p.name;
    if (p.result.AvgJctHours() > max_jct) text += fmt::format(" ({:.0f} h) →", p.result.AvgJctHours());
    h += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"><title>{}: ${:.0f}, {:.2f} h</title></circle>\n",
                     px, py, kColors[k % kNumColors], HtmlEscape(p.name), p.result.total_cost_usd, p.result.AvgJctHours());
    ++k;
    bool merged = false;
    for (auto& l : labels) {
      if (std::abs(l.x - px) < 3 && std::abs(l.y - py) < 3) {
        l.text += " = " + text;
        merged = true;
        break;
      }
    }
    if (!merged) labels.push_back({px, py, text, on_frontier});
  }
  std::vector<std::pair<double, double>> placed;
  for (const auto& l : labels) {
    bool on_right = l.right;
    if (!on_right && l.x - 8 - LabelWidth(l.text) < 0) on_right = true;  // would run off the left edge
    if (on_right && l.x + 8 + LabelWidth(l.text) > width) on_right = false;
    double lx = on_right ? l.x + 8 : l.x - 8, ly = l.right ? l.y + 14 : l.y - 8;
    bool clash = false;  // the legend below names every point; crowded labels are left out
    for (const auto& [qx, qy] : placed) clash = clash || (std::abs(qx - lx) < 90 && std::abs(qy - ly) < 12);
    if (clash) continue;
    placed.emplace_back(lx, ly);
    h += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\"{}>{}</text>\n", lx, ly,
                     on_right ? "" : " text-anchor=\"end\"", HtmlEscape(l.text));
  }
  if (frontier.size() > 1) {
    std::sort(frontier.begin(), frontier.end());
    std::string pts;
    for (const auto& [fx, fy] : frontier) pts += fmt::format("{:.1f},{:.1f} ", fx, fy);
    h += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\"/>\n";
  }
  k = 0;
  for (const auto& p : r.policies) {  // legend
    double lx = left + static_cast<double>(k % 4) * 170, ly = plot_height + 12 + 20 * static_cast<double>(k / 4);
    h += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
                     "font-size=\"11\">{}</text>\n", lx, ly, kColors[k % kNumColors], lx + 9, ly + 4, HtmlEscape(p.name));
    ++k;
  }
  h += "</svg>\n";
  return h;
}

}  // namespace

std::string ScenarioHtmlSection(const sim::ScenarioResult& r) {
  std::string h = "<section>\n<h2>Cost of running the workload: " + HtmlEscape(r.workload) + "</h2>\n";
  // Headline: Seedance against the FIFO baseline and Gavel-LAS, and its distance to the bound.
  const sim::PolicyOutcome* fifo = nullptr;
  const sim::PolicyOutcome* las = nullptr;
  const sim::PolicyOutcome* sd = nullptr;
  for (const auto& p : r.policies) {
    if (p.name == "fifo") fifo = &p;
    if (p.name == "gavel-las") las = &p;
    if (p.name == "seedance") sd = &p;
  }
  if (fifo != nullptr && las != nullptr && sd != nullptr && fifo->result.total_cost_usd > 0) {
    h += fmt::format(
        "<p class=\"headline\"><strong>Seedance costs ${:.0f}, {:.1f}% {} than FIFO on on-demand (${:.0f})</strong>, "
        "with an average JCT of {:.2f} h against Gavel-LAS's {:.2f} h; it is {:.2f}x the LP lower bound (${:.0f}){}.</p>\n",
        sd->result.total_cost_usd, std::abs(100.0 * (1.0 - sd->result.total_cost_usd / fifo->result.total_cost_usd)),
        sd->result.total_cost_usd <= fifo->result.total_cost_usd ? "less" : "more", fifo->result.total_cost_usd,
        sd->result.AvgJctHours(), las->result.AvgJctHours(),
        r.bound.usd > 0 ? sd->result.total_cost_usd / r.bound.usd : 0.0, r.bound.usd, ServiceBoundClause(r, *sd));
  }
  h += "<p>" + std::to_string(r.jobs) + " jobs on fleet <code>" + HtmlEscape(r.fleet) +
       "</code>; every policy sees the same arrivals, prices, cold starts and spot availability. "
       "The lower bound is an LP relaxation: no policy can cost less. It may defer work to cheap spot hours "
       "anywhere in FIFO's span; the bound at Gavel-LAS's average JCT holds the relaxation to that service level "
       "instead (a valid bound for any schedule at least as fast on average), which is the fair yardstick for "
       "a policy held to Gavel-LAS's JCT.</p>\n";
  // Bar chart: total cost per policy with the lower bound as a dashed line.
  double max_cost = r.bound.usd;
  for (const auto& p : r.policies) max_cost = std::max(max_cost, p.result.total_cost_usd);
  const int width = 760, bar_h = 34, left = 170, right = 110;
  const int height = static_cast<int>(r.policies.size()) * (bar_h + 12) + 60;
  const double scale = max_cost > 0 ? (width - left - right) / max_cost : 0;
  h += fmt::format("<svg viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" aria-label=\"cost by policy\">\n",
                   width, height);
  int y = 20;
  std::size_t k = 0;
  for (const auto& p : r.policies) {
    double w = p.result.total_cost_usd * scale;
    h += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"13\">{}</text>\n", left - 8,
                     y + bar_h / 2 + 5, HtmlEscape(p.name));
    h += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}: ${:.2f}</title></rect>\n",
                     left, y, w, bar_h, kColors[k % kNumColors], HtmlEscape(p.name), p.result.total_cost_usd);
    h += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\">${:.0f}</text>\n", left + w + 6, y + bar_h / 2 + 5,
                     p.result.total_cost_usd);
    y += bar_h + 12;
    ++k;
  }
  double lb = left + r.bound.usd * scale;
  h += fmt::format("<line x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"10\" y2=\"{1}\" stroke=\"#333\" stroke-dasharray=\"6 4\"/>\n", lb,
                   y);
  h += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"12\">lower bound ${:.0f}</text>\n", lb + 4, y + 16, r.bound.usd);
  h += "</svg>\n";
  // Table.
  h += "<table>\n<tr><th>policy</th><th>total $</th><th>$ per useful GPU-h</th><th>avg JCT h</th><th>p99 JCT h</th>"
       "<th>deadline misses</th><th>spot interruptions</th><th>GPU util</th><th>cold-start idle $</th></tr>\n";
  for (const auto& p : r.policies) {
    const auto& s = p.result;
    h += fmt::format("<tr><td title=\"{}\">{}</td><td>{:.2f}</td><td>{:.3f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{}</td>"
                     "<td>{}</td><td>{:.1f}%</td><td>{:.2f}</td></tr>\n",
                     HtmlEscape(p.description), HtmlEscape(p.name), s.total_cost_usd, CostPerUsefulGpuHour(s),
                     s.AvgJctHours(), s.P99JctHours(), s.deadline_misses, s.spot_interruptions, 100 * s.Utilization(),
                     s.cold_start_idle_usd);
  }
  h += fmt::format("<tr><td>lower bound</td><td>{:.2f}</td><td colspan=\"7\">LP relaxation (GLPK), any JCT, work done "
                   "within FIFO's span</td></tr>\n", r.bound.usd);
  for (const auto& sb : r.service_bounds) {
    h += fmt::format("<tr><td>lower bound @ {}</td><td>{:.2f}</td><td colspan=\"7\">the same for schedules whose average "
                     "JCT is at most {}'s ({:.2f} h), with no horizon</td></tr>\n",
                     HtmlEscape(sb.policy), sb.bound.usd, HtmlEscape(sb.policy), sb.bound.max_avg_jct_s / 3600);
  }
  h += "</table>\n";
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
  for (const auto& n : r.notes) h += "<p class=\"note\">" + HtmlEscape(n) + "</p>\n";
  h += "</section>\n";
  return h;
}

}  // namespace seedance::report
