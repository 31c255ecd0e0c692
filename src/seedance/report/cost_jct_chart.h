#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

// The cost against average JCT chart: one point per stack or policy, a knob's curve joined by a
// line, an optional lower bound (dashed) and bounds at a given JCT (crosses). Drawn for
// `cost-benchmark --frontier` (scenario_report.cc) and for the fleet week's frontier (issue 39).
namespace seedance::report {

// The colours of the points, in order (the scenario report's policy charts share them).
inline constexpr const char* kCostChartColors[] = {"#e15759", "#76b7b2", "#4e79a7", "#59a14f", "#edc948",
                                                   "#b07aa1", "#f28e2b", "#9c755f", "#ff9da7", "#bab0ac"};
inline constexpr std::size_t kNumCostChartColors = sizeof(kCostChartColors) / sizeof(kCostChartColors[0]);

struct CostJctPoint {
  std::string name;     // legend and tooltip
  std::string label;    // text beside the point
  double jct_h = 0;
  double usd = 0;
  bool on_curve = false;  // joined by the curve's line (labelled below the point)
};

// The bound for schedules at least as fast on average as `policy` (its JCT `jct_h`), drawn as a
// cross labelled "bound at <policy>'s JCT".
struct CostJctMark {
  std::string policy;
  double jct_h = 0;
  double usd = 0;
};

struct CostJctChartSpec {
  std::string intro_html;  // the paragraph under the heading (HTML, not escaped)
  std::vector<CostJctPoint> points;
  bool has_bound = false;
  double bound_usd = 0;
  std::vector<CostJctMark> marks;
};

// "<h3>Cost against average JCT</h3>", the intro and an inline <svg>; "" when there is nothing to
// draw (no point, or no positive cost or JCT). Deterministic.
std::string RenderCostJctChart(const CostJctChartSpec& spec);

// The curve's cost at average JCT `jct_h`: linear between the curve's points sorted by JCT (as
// drawn), the cheapest point's cost beyond the slowest one (a slower schedule is matched by it),
// and +infinity before the fastest (the curve does not reach there). `curve`: (JCT h, $) pairs.
double CurveUsdAt(std::vector<std::pair<double, double>> curve, double jct_h);

}  // namespace seedance::report
