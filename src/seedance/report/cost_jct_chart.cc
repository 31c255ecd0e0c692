#include "seedance/report/cost_jct_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "seedance/report/html.h"

namespace seedance::report {
namespace {

const auto& kColors = kCostChartColors;
constexpr std::size_t kNumColors = kNumCostChartColors;

// Approximate width in px of an 11 px label.
double LabelWidth(const std::string& text) { return 6.2 * static_cast<double>(text.size()); }

}  // namespace

double CurveUsdAt(std::vector<std::pair<double, double>> curve, double jct_h) {
  if (curve.empty()) return std::numeric_limits<double>::infinity();
  std::sort(curve.begin(), curve.end());
  if (jct_h < curve.front().first) return std::numeric_limits<double>::infinity();
  if (jct_h >= curve.back().first) {
    double cheapest = curve.front().second;
    for (const auto& [j, usd] : curve) cheapest = std::min(cheapest, usd);
    return cheapest;
  }
  for (std::size_t i = 1; i < curve.size(); ++i) {
    const auto& [j0, u0] = curve[i - 1];
    const auto& [j1, u1] = curve[i];
    if (jct_h > j1) continue;
    return j1 > j0 ? u0 + (u1 - u0) * (jct_h - j0) / (j1 - j0) : std::min(u0, u1);
  }
  return curve.back().second;
}

std::string RenderCostJctChart(const CostJctChartSpec& spec) {
  std::vector<double> jcts;
  double lo_cost = spec.has_bound ? spec.bound_usd : std::numeric_limits<double>::infinity(), hi_cost = 0;
  for (const auto& p : spec.points) {
    jcts.push_back(p.jct_h);
    lo_cost = std::min(lo_cost, p.usd);
    hi_cost = std::max(hi_cost, p.usd);
  }
  for (const auto& m : spec.marks) lo_cost = std::min(lo_cost, m.usd);
  std::sort(jcts.begin(), jcts.end());
  if (jcts.empty() || hi_cost <= 0 || jcts.back() <= 0) return "";
  // A far outlier (FIFO's JCT on philly) would squeeze the rest: it is pinned to the right edge.
  double max_jct = jcts.back();
  if (jcts.size() > 1 && max_jct > 1.5 * jcts[jcts.size() - 2]) max_jct = 1.25 * jcts[jcts.size() - 2];
  max_jct *= 1.05;
  const double min_jct = jcts.front() < 0.5 * max_jct ? 0.0 : 0.95 * jcts.front();
  const double min_cost = 0.9 * lo_cost, max_cost = 1.05 * hi_cost;
  const int legend_rows = static_cast<int>((spec.points.size() + 3) / 4);
  const int width = 760, plot_height = 380, left = 90, right = 40, top = 20, bottom = 50;
  const int height = plot_height + 20 * legend_rows;
  auto x = [&](double jct) {
    return left + (std::min(jct, max_jct) - min_jct) / (max_jct - min_jct) * (width - left - right);
  };
  auto y = [&](double usd) { return top + (max_cost - usd) / (max_cost - min_cost) * (plot_height - top - bottom); };
  std::string h = "<h3>Cost against average JCT</h3>\n" + spec.intro_html;
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
  if (spec.has_bound) {
    h += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#333\" stroke-dasharray=\"6 4\"/>"
                     "<text x=\"{}\" y=\"{:.1f}\" font-size=\"11\">lower bound ${:.0f}</text>\n",
                     left, width - right, y(spec.bound_usd), y(spec.bound_usd), left + 6, y(spec.bound_usd) - 4, spec.bound_usd);
  }
  for (const auto& m : spec.marks) {
    double cx = x(m.jct_h), cy = y(m.usd);
    const bool flip = cx + 8 + LabelWidth("bound at " + m.policy + "'s JCT") > width;
    h += fmt::format("<path d=\"M{0:.1f} {1:.1f} l8 8 m-8 0 l8 -8\" transform=\"translate(-4 -4)\" stroke=\"#333\" "
                     "stroke-width=\"2\"><title>bound at {2}'s JCT: ${3:.0f}</title></path>"
                     "<text x=\"{4:.1f}\" y=\"{5:.1f}\" font-size=\"11\"{6}>bound at {2}'s JCT</text>\n",
                     cx, cy, HtmlEscape(m.policy), m.usd, flip ? cx - 8 : cx + 8, cy - 8, flip ? " text-anchor=\"end\"" : "");
  }
  std::vector<std::pair<double, double>> curve;
  // Points at the same place share one label ("seedance = seedance-tv0"); labels that would
  // overlap an earlier one move down a line.
  struct Label {
    double x, y;
    std::string text;
    bool right;
  };
  std::vector<Label> labels;
  std::size_t k = 0;
  for (const auto& p : spec.points) {
    double px = x(p.jct_h), py = y(p.usd);
    if (p.on_curve) curve.emplace_back(px, py);
    std::string text = p.label;
    if (p.jct_h > max_jct) text += fmt::format(" ({:.0f} h) →", p.jct_h);
    h += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"><title>{}: ${:.0f}, {:.2f} h</title></circle>\n",
                     px, py, kColors[k % kNumColors], HtmlEscape(p.name), p.usd, p.jct_h);
    ++k;
    bool merged = false;
    for (auto& l : labels) {
      if (std::abs(l.x - px) < 3 && std::abs(l.y - py) < 3) {
        l.text += " = " + text;
        merged = true;
        break;
      }
    }
    if (!merged) labels.push_back({px, py, text, p.on_curve});
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
  if (curve.size() > 1) {
    std::sort(curve.begin(), curve.end());
    std::string pts;
    for (const auto& [fx, fy] : curve) pts += fmt::format("{:.1f},{:.1f} ", fx, fy);
    h += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\"/>\n";
  }
  k = 0;
  for (const auto& p : spec.points) {  // legend
    double lx = left + static_cast<double>(k % 4) * 170, ly = plot_height + 12 + 20 * static_cast<double>(k / 4);
    h += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\" fill=\"{}\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
                     "font-size=\"11\">{}</text>\n", lx, ly, kColors[k % kNumColors], lx + 9, ly + 4, HtmlEscape(p.name));
    ++k;
  }
  h += "</svg>\n";
  return h;
}

}  // namespace seedance::report
