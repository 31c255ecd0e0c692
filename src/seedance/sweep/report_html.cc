// sweep_report.html: the merged sweep as one page.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "seedance/cost/money.h"
#include "seedance/report/html.h"
#include "seedance/report/svg_chart.h"
#include "seedance/sweep/sweep.h"

namespace seedance::sweep {
namespace {

using report::HtmlEscape;

// Colours by policy position (Tableau 10).
const char* const kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                               "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

std::string ValuesText(const nlohmann::json& values) {
  if (values.empty()) return "(defaults)";
  std::string out;
  for (const auto& [k, v] : values.items()) {
    out += (out.empty() ? "" : ", ") + k + " = " + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

std::string Usd(double usd) { return cost::FormatUsd(UsdFromDouble(usd), 2); }

// The first axis with two or more numeric values, or empty.
std::string ChartAxisKey(const nlohmann::json& grid) {
  for (const auto& [key, values] : grid["values"].items()) {
    if (values.size() < 2) continue;
    bool numeric = true;
    for (const auto& v : values) numeric = numeric && v.is_number();
    if (numeric) return key;
  }
  return "";
}

}  // namespace

std::string SweepReportHtml(const nlohmann::json& results) {
  const nlohmann::json& grid = results["grid"];
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>Seedance sweep</title>\n<style>\n"
      "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1200px}\n"
      "table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}\n"
      "th:first-child,td:first-child{text-align:left}td.best{background:#e6f4ea;font-weight:600}\n"
      ".note{color:#555;font-size:90%}\n</style>\n</head>\n<body>\n<h1>Seedance what-if sweep</h1>\n";
  std::vector<std::string> policies = grid["policies"].get<std::vector<std::string>>();
  h += fmt::format("<p>{} cells: {} workload(s) x {} value combination(s) x {} policies x {} seeds. "
                   "Each cell: total cost (mean &plusmn; sd over seeds) and average JCT; the cheapest policy that "
                   "finished every job on every seed is highlighted.</p>\n",
                   results["cells_total"].get<std::size_t>(), grid["workloads"].size(),
                   results["summary"].size() / std::max<std::size_t>(1, grid["workloads"].size()), policies.size(),
                   grid["seeds"].size());
  std::string current;
  for (const auto& group : results["summary"]) {
    const std::string workload = group["workload"].get<std::string>();
    if (workload != current) {
      if (!current.empty()) h += "</table>\n";
      current = workload;
      h += "<h2>" + HtmlEscape(workload) + "</h2>\n<table>\n<tr><th>values</th>";
      for (const auto& p : policies) h += "<th>" + HtmlEscape(p) + "</th>";
      h += "</tr>\n";
    }
    h += "<tr><td>" + HtmlEscape(ValuesText(group["values"])) + "</td>";
    for (const auto& p : group["policies"]) {
      const bool best = group["cheapest"].is_string() && group["cheapest"] == p["policy"];
      std::string cell = Usd(p["total_cost_usd"]["mean"].get<double>()) + " &plusmn; " +
                         Usd(p["total_cost_usd"]["sd"].get<double>()) + "<br>" +
                         fmt::format("{:.2f} h JCT", p["avg_jct_hours"]["mean"].get<double>());
      if (p["unfinished_runs"].get<int>() > 0) {
        cell += fmt::format("<br>unfinished on {} seed(s)", p["unfinished_runs"].get<int>());
      }
      h += std::string(best ? "<td class=\"best\">" : "<td>") + cell + "</td>";
    }
    h += "</tr>\n";
  }
  if (!current.empty()) h += "</table>\n";
  // Mean cost against the first numeric axis, the other axes at their first value.
  const std::string axis = ChartAxisKey(grid);
  if (!axis.empty()) {
    int chart = 0;
    for (const auto& workload : grid["workloads"]) {
      std::vector<report::ChartSeries> series;
      for (std::size_t k = 0; k < policies.size(); ++k) {
        report::ChartSeries s;
        s.name = policies[k];
        s.color = kColors[k % std::size(kColors)];
        for (const auto& group : results["summary"]) {
          if (group["workload"] != workload) continue;
          bool others_first = true;
          for (const auto& [key, v] : group["values"].items()) {
            if (key != axis) others_first = others_first && v == grid["values"][key].front();
          }
          if (!others_first) continue;
          for (const auto& p : group["policies"]) {
            if (p["policy"] != policies[k]) continue;
            s.points.push_back({group["values"][axis].get<double>(), p["total_cost_usd"]["mean"].get<double>()});
          }
        }
        series.push_back(std::move(s));
      }
      report::LineChartSpec spec;
      spec.id = "sweep" + std::to_string(chart++);
      spec.title = workload.get<std::string>() + ": mean total cost against " + axis;
      spec.x.label = axis;
      spec.y.label = "total cost (USD)";
      h += "<section>\n" + report::RenderLineChart(spec, series) + "\n";
      h += "<p class=\"note\">Other values at their first grid value.</p>\n</section>\n";
    }
  }
  h += "<h2>Assumptions</h2>\n<ul>\n";
  for (const auto& a : results["assumptions"]) h += "<li>" + HtmlEscape(a.get<std::string>()) + "</li>\n";
  h += "</ul>\n</body>\n</html>\n";
  return h;
}

}  // namespace seedance::sweep
