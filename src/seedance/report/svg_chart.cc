#include "seedance/report/svg_chart.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "seedance/core/check.h"
#include "seedance/report/html.h"

namespace seedance::report {
namespace {

constexpr double kCharWidthPx = 7;  // a rough width of one 12 px sans-serif character
constexpr int kMaxTicks = 100;
constexpr double kAutoTicks = 8;  // about this many tick intervals when the step is automatic

struct Range {
  double min = 0;
  double max = 1;
  double step = 1;
};

// Returns 1, 2 or 5 x 10^k, the smallest such value >= raw. REQUIRES: raw > 0.
double NiceStep(double raw) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / magnitude;
  const double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nice * magnitude;
}

// Resolves `axis` against the data extent [lo, hi] (NaN when there is no data).
Range ResolveAxis(const ChartAxis& axis, double lo, double hi) {
  Range r;
  r.min = std::isnan(axis.min) ? (std::isnan(lo) ? 0 : lo) : axis.min;
  r.max = std::isnan(axis.max) ? (std::isnan(hi) ? 1 : hi) : axis.max;
  if (!(r.max > r.min)) r.max = r.min + 1;
  r.step = axis.tick_step > 0 ? axis.tick_step : NiceStep((r.max - r.min) / kAutoTicks);
  if (std::isnan(axis.min)) r.min = std::floor(r.min / r.step) * r.step;
  if (std::isnan(axis.max)) r.max = std::ceil(r.max / r.step) * r.step;
  return r;
}

// Returns the data extent of the series along x (want_x) or along y for points with x in
// [x_lo, x_hi]; NaN, NaN when no point qualifies.
std::pair<double, double> Extent(const std::vector<ChartSeries>& series, bool want_x, double x_lo,
                                 double x_hi) {
  double lo = std::nan(""), hi = std::nan("");
  for (const ChartSeries& s : series) {
    for (const ChartPoint& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      if (!want_x && (p.x < x_lo || p.x > x_hi)) continue;
      const double v = want_x ? p.x : p.y;
      lo = std::isnan(lo) ? v : std::min(lo, v);
      hi = std::isnan(hi) ? v : std::max(hi, v);
    }
  }
  return {lo, hi};
}

// Returns the multiples of r.step inside [r.min, r.max] (at most kMaxTicks).
std::vector<double> Ticks(const Range& r) {
  std::vector<double> out;
  const double eps = r.step * 1e-9;
  for (auto i = static_cast<long long>(std::ceil((r.min - eps) / r.step));
       static_cast<double>(i) * r.step <= r.max + eps && out.size() < kMaxTicks; ++i) {
    double v = static_cast<double>(i) * r.step;
    if (std::abs(v) < eps) v = 0;  // no "-0"
    out.push_back(v);
  }
  return out;
}

// Returns `v` with as many decimals as `step` needs ("10", "2.5", "0.25").
std::string TickLabel(double v, double step) {
  const int decimals = step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return fmt::format("{:.{}f}", v, decimals);
}

// Returns `id` with every character outside [A-Za-z0-9_-] replaced by '_' ("chart" if empty).
std::string SanitizeId(const std::string& id) {
  std::string out = id.empty() ? "chart" : id;
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return out;
}

// Returns the stroke attributes of a series' line: colour, width, dashes.
std::string StrokeAttributes(const ChartSeries& s) {
  std::string out =
      fmt::format(R"(stroke="{}" stroke-width="{:.1f}")", HtmlEscape(s.color), s.stroke_width);
  if (s.dashed) out += R"( stroke-dasharray="7 4")";
  return out;
}

}  // namespace

std::string RenderLineChart(const LineChartSpec& spec, const std::vector<ChartSeries>& series) {
  SEEDANCE_CHECK(spec.width >= 320 && spec.height >= 200)
      << "chart too small: " << spec.width << "x" << spec.height;
  const std::string id = SanitizeId(spec.id);
  auto [x_lo, x_hi] = Extent(series, /*want_x=*/true, 0, 0);
  const Range xr = ResolveAxis(spec.x, x_lo, x_hi);
  auto [y_lo, y_hi] = Extent(series, /*want_x=*/false, xr.min, xr.max);
  const Range yr = ResolveAxis(spec.y, y_lo, y_hi);

  std::size_t longest_name = 0;
  for (const ChartSeries& s : series) longest_name = std::max(longest_name, s.name.size());
  const double legend_w =
      std::clamp(static_cast<double>(longest_name) * kCharWidthPx + 44, 100.0, 260.0);
  const double left = 64, top = spec.title.empty() ? 16 : 36, bottom = 52;
  const double px0 = left, px1 = spec.width - legend_w - 16;
  const double py0 = top, py1 = spec.height - bottom;
  auto sx = [&](double x) { return px0 + (x - xr.min) / (xr.max - xr.min) * (px1 - px0); };
  auto sy = [&](double y) { return py1 - (y - yr.min) / (yr.max - yr.min) * (py1 - py0); };

  std::string out = fmt::format(
      R"(<svg{} width="{}" height="{}" viewBox="0 0 {} {}" font-family="sans-serif" )"
      R"(font-size="12" role="img" aria-label="{}">)"
      "\n",
      spec.standalone ? R"( xmlns="http://www.w3.org/2000/svg")" : "", spec.width, spec.height,
      spec.width, spec.height, HtmlEscape(spec.title.empty() ? "line chart" : spec.title));
  out += fmt::format(
      R"(<defs><clipPath id="{}-plot"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)"
      "</clipPath></defs>\n",
      id, px0, py0, px1 - px0, py1 - py0);
  if (!spec.title.empty()) {
    out += fmt::format(R"(<text x="{:.1f}" y="20" font-size="14" font-weight="bold">{}</text>)"
                       "\n",
                       px0, HtmlEscape(spec.title));
  }
  // Grid, ticks and tick labels.
  out += R"(<g stroke="#e3e3e3" stroke-width="1">)";
  for (double v : Ticks(xr)) {
    out += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", sx(v), py0,
                       py1);
  }
  for (double v : Ticks(yr)) {
    out += fmt::format(R"(<line x1="{1:.1f}" y1="{0:.1f}" x2="{2:.1f}" y2="{0:.1f}"/>)", sy(v), px0,
                       px1);
  }
  out += "</g>\n<g fill=\"#333\">";
  for (double v : Ticks(xr)) {
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", sx(v),
                       py1 + 16, TickLabel(v, xr.step));
  }
  for (double v : Ticks(yr)) {
    out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", px0 - 6,
                       sy(v) + 4, TickLabel(v, yr.step));
  }
  out += "</g>\n";
  // Axes and axis labels.
  out += fmt::format(
      R"(<path d="M{0:.1f},{1:.1f}V{2:.1f}H{3:.1f}" fill="none" stroke="#333" stroke-width="1"/>)"
      "\n",
      px0, py0, py1, px1);
  out += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)"
                     "\n",
                     (px0 + px1) / 2, py1 + 38, HtmlEscape(spec.x.label));
  out += fmt::format(
      R"svg(<text transform="rotate(-90)" x="{:.1f}" y="16" text-anchor="middle">{}</text>)svg"
      "\n",
      -(py0 + py1) / 2, HtmlEscape(spec.y.label));
  // Series: one polyline per run of finite points.
  for (const ChartSeries& s : series) {
    out += fmt::format(R"svg(<g clip-path="url(#{}-plot)" fill="none" {}><title>{}</title>)svg", id,
                       StrokeAttributes(s), HtmlEscape(s.name));
    std::vector<ChartPoint> run;  // in px
    auto flush = [&] {
      if (run.size() == 1) {  // a lone point: a dot, since a one-point polyline is invisible
        out += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="2" fill="{}"/>)", run[0].x,
                           run[0].y, HtmlEscape(s.color));
      } else if (run.size() > 1) {
        out += R"(<polyline points=")";
        for (std::size_t i = 0; i < run.size(); ++i) {
          out += fmt::format("{}{:.1f},{:.1f}", i ? " " : "", run[i].x, run[i].y);
        }
        out += R"("/>)";
      }
      run.clear();
    };
    for (const ChartPoint& p : s.points) {
      if (std::isfinite(p.x) && std::isfinite(p.y)) {
        run.push_back({sx(p.x), sy(p.y)});
      } else {
        flush();
      }
    }
    flush();
    out += "</g>\n";
  }
  // Legend.
  const double lx = px1 + 16;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double ly = py0 + 8 + 18 * static_cast<double>(i);
    out += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" {}/>)"
                       R"(<text x="{:.1f}" y="{:.1f}">{}</text>)"
                       "\n",
                       lx, ly, lx + 24, ly, StrokeAttributes(series[i]), lx + 30, ly + 4,
                       HtmlEscape(series[i].name));
  }
  out += "</svg>\n";
  return out;
}

}  // namespace seedance::report
