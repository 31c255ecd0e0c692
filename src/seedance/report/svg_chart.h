#pragma once

#include <limits>
#include <string>
#include <vector>

namespace seedance::report {

// A point of a chart series, in data units.
struct ChartPoint {
  double x = 0;
  double y = 0;
};

// One line of a chart. A point with a NaN coordinate breaks the line (a gap).
struct ChartSeries {
  std::string name;                // shown in the legend and as the line's tooltip
  std::vector<ChartPoint> points;  // drawn in order
  std::string color = "#4e79a7";   // any CSS colour
  bool dashed = false;
  double stroke_width = 2;  // px
};

// One axis. A NaN bound is taken from the data (for y: from the points whose x lies inside
// the x range) and widened to a whole tick.
struct ChartAxis {
  std::string label;
  double min = std::numeric_limits<double>::quiet_NaN();
  double max = std::numeric_limits<double>::quiet_NaN();
  double tick_step = 0;  // 0: about 8 intervals of 1, 2 or 5 x 10^k
};

// What RenderLineChart draws. Plain aggregate; the defaults make a 760 x 420 px chart.
struct LineChartSpec {
  std::string id = "chart";  // unique per document: names the SVG's clip path ([A-Za-z0-9_-])
  std::string title;         // optional, above the plot
  ChartAxis x;
  ChartAxis y;
  int width = 760;   // px
  int height = 420;  // px
  // true: add the SVG namespace, as a standalone .svg file needs; an <svg> inline in HTML5 does
  // without it.
  bool standalone = false;
};

// Returns a self-contained <svg> element (no XML prolog, no script, no external reference):
// axes with ticks, grid lines and labels, every series as a clipped polyline in its colour, and
// a legend on the right listing the series in order. All text is escaped.
// REQUIRES: spec.width >= 320, spec.height >= 200. Deterministic: the same input gives the same
// bytes.
std::string RenderLineChart(const LineChartSpec& spec, const std::vector<ChartSeries>& series);

}  // namespace seedance::report
