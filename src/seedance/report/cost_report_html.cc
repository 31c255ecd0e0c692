// cost_optimization_report.html: CostReportHtml of cost_benchmark.h.
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "seedance/cluster/gpu_model.h"
#include "seedance/cost/money.h"
#include "seedance/report/cost_benchmark.h"
#include "seedance/report/html.h"
#include "seedance/report/internal/cost_format.h"
#include "seedance/report/policy_style.h"
#include "seedance/report/svg_chart.h"

namespace seedance::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr char kCss[] = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f;
       background: #fafafa; margin: 0; line-height: 1.45; }
main { max-width: 1040px; margin: 0 auto; padding: 24px 28px 48px; background: #fff; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 8px; border-bottom: 1px solid #e3e3e3; padding-bottom: 4px; }
.sub { color: #555; margin: 0 0 18px; }
.headline { font-size: 22px; font-weight: 600; background: #eef6ec; border-left: 6px solid #59a14f;
            padding: 12px 16px; margin: 12px 0; }
.headline.worse { background: #fdeeee; border-left-color: #e15759; }
table { border-collapse: collapse; width: 100%; font-size: 14px; margin: 8px 0; }
th, td { padding: 5px 8px; border-bottom: 1px solid #e6e6e6; text-align: right;
         vertical-align: top; }
th { background: #f3f3f3; font-weight: 600; }
th:first-child, td:first-child, td.text { text-align: left; }
tr.best td { background: #eef6ec; font-weight: 600; }
td.neg { color: #b22222; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
figure { margin: 12px 0 20px; }
figure svg { max-width: 100%; height: auto; }
figcaption { color: #555; font-size: 13px; }
.note { color: #555; font-size: 13px; }
footer { margin-top: 32px; color: #777; font-size: 12px; }
)";

// Returns a <td> with `saving` in dollars, marked class "neg" when it is a loss.
std::string SavingCell(Money saving) {
  return fmt::format(R"(<td{}>{}</td>)", saving.raw() < 0 ? R"( class="neg")" : "",
                     HtmlEscape(cost::FormatUsd(saving, 0)));
}

// Returns a <td> with the policy's colour swatch and display name.
std::string PolicyCell(const std::string& policy) {
  return fmt::format(R"(<td><span class="swatch" style="background:{}"></span>{}</td>)",
                     HtmlEscape(PolicyColor(policy)), HtmlEscape(PolicyDisplayName(policy)));
}

// Returns unallocated % (= 100 - allocated %) per arrived-% column k of `alloc_pct`; NaN where
// the curve has no point.
std::vector<ChartPoint> UnallocatedCurve(const std::vector<double>& alloc_pct) {
  std::vector<ChartPoint> out;
  out.reserve(alloc_pct.size());
  for (std::size_t k = 0; k < alloc_pct.size(); ++k) {
    out.push_back({static_cast<double>(k), std::isnan(alloc_pct[k]) ? kNaN : 100 - alloc_pct[k]});
  }
  return out;
}

// Returns one series per policy (median over seeds) plus the published FGD curve, dashed.
std::vector<ChartSeries> CurveSeries(const CostBenchmarkResult& r) {
  std::vector<ChartSeries> series;
  const PackingBenchResult& p = r.packing;
  for (const sched::PackingSummary& s : p.summary) {
    series.push_back({.name = PolicyDisplayName(s.policy),
                      .points = UnallocatedCurve(s.median_alloc_pct),
                      .color = PolicyColor(s.policy),
                      .stroke_width = s.policy == "seedance" ? 3.0 : 1.8});
  }
  for (std::size_t i = 0; i < p.summary.size(); ++i) {
    if (p.summary[i].policy != "fgd" || !p.published[i]) continue;
    series.push_back({.name = "FGD (published)",
                      .points = UnallocatedCurve(p.published[i]->median_alloc_pct),
                      .color = PolicyColor("fgd"),
                      .dashed = true,
                      .stroke_width = 1.5});
  }
  return series;
}

// Returns a <figure> holding the chart and its caption.
std::string Figure(const LineChartSpec& spec, const std::vector<ChartSeries>& series,
                   const std::string& caption) {
  return "<figure>\n" + RenderLineChart(spec, series) + "<figcaption>" + HtmlEscape(caption) +
         "</figcaption>\n</figure>\n";
}

// Returns the per-policy cost <table>; the best policy's row is highlighted.
std::string CostTable(const CostBenchmarkResult& r) {
  const std::vector<const PolicyCost*> baselines = internal::SavingBaselines(r);
  std::string out =
      "<table>\n<tr><th>Policy</th><th>Unallocated GPU %</th><th>Published (FGD artifact)</th>"
      "<th>Unallocated GPUs</th><th>Stranded GPU-hours / month</th><th>Stranded $ / month</th>";
  for (const PolicyCost* b : baselines) {
    out += "<th>Saving vs " + HtmlEscape(PolicyDisplayName(b->policy)) + " / month</th>";
  }
  out += "</tr>\n";
  for (std::size_t i = 0; i < r.costs.size(); ++i) {
    const PolicyCost& c = r.costs[i];
    out += i == r.best ? R"(<tr class="best">)" : "<tr>";
    out += PolicyCell(c.policy);
    out += fmt::format("<td>{:.2f}</td><td>{}</td><td>{:.1f}</td><td>{:.0f}</td><td>{}</td>",
                       c.mean_unallocated_pct, HtmlEscape(internal::FormatPublished(r, i)),
                       c.unallocated_gpus, c.stranded_gpu_hours_per_month,
                       HtmlEscape(cost::FormatUsd(c.stranded_usd_per_month, 0)));
    for (const PolicyCost* b : baselines) {
      out += b == &c ? "<td>-</td>" : SavingCell(SavingPerMonth(c, *b));
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

// Returns the <table> of the fleet's GPU models with their prices and origins.
std::string PriceTableHtml(const CostBenchmarkResult& r) {
  std::string out =
      "<table>\n<tr><th>GPU model</th><th>GPUs</th><th>Nodes</th><th>$ / GPU-hour</th>"
      "<th>$ / month (all its GPUs)</th><th>Basis</th><th>Source</th><th>Note</th></tr>\n";
  for (const cost::FleetModelCost& m : r.fleet.models) {
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"text\">{}</td>"
        "<td class=\"text\">{}</td><td class=\"text\">{}</td></tr>\n",
        HtmlEscape(cluster::GpuModelName(m.price.model)), m.gpus, m.nodes,
        HtmlEscape(cost::FormatUsd(m.price.usd_per_gpu_hour, 2)),
        HtmlEscape(cost::FormatUsd(m.usd_per_hour * cost::kHoursPerMonth, 0)),
        m.price.basis == cost::PriceBasis::kProxy ? "<strong>assumed (proxy)</strong>" : "quoted",
        HtmlEscape(m.price.source), HtmlEscape(m.price.note));
  }
  out += fmt::format(
      "<tr><td><strong>Fleet</strong></td><td>{}</td><td>{}</td><td>{} (mean)</td><td>{}</td>"
      "<td></td><td></td><td></td></tr>\n</table>\n",
      r.fleet.gpus, r.fleet.nodes,
      HtmlEscape(cost::FormatUsd(r.fleet.average_usd_per_gpu_hour(), 3)),
      HtmlEscape(cost::FormatUsd(r.fleet.usd_per_month(), 0)));
  return out;
}

// Returns the <ul> that states the protocol, the money model and every price assumption.
std::string MethodList(const CostBenchmarkResult& r) {
  const PackingBenchResult& p = r.packing;
  std::vector<std::string> items = {
      fmt::format("Placement follows the FGD (ATC'23) packing protocol: the trace ({} pods) is "
                  "shuffled per seed, inflated to {} x the fleet's GPU capacity and placed pod by "
                  "pod without departures. Each policy runs once per seed ({} seeds: {}).",
                  p.trace_pods, p.input.tune, r.input.seeds.size(),
                  internal::FormatSeedList(r.input.seeds)),
      "Unallocated GPU % is the mean over seeds of the GPU capacity (counted in milli-GPUs, so "
      "partly used GPUs count by their free share) left unallocated when the arrived workload "
      "reaches 100% of capacity. Unallocated GPUs = that share x the fleet's GPUs.",
      "The money model reads that point as a steady state: the unallocated GPUs sit idle for a "
      "whole month while they are paid for. " +
          internal::StrandedCostMethod() +
          ". With one fleet-average price the dollar ranking of the policies is their "
          "unallocated-GPU ranking; the prices set only the scale.",
      "Prices are on-demand list prices per GPU-hour from the price table (" +
          std::filesystem::path(r.prices.name()).filename().string() +
          "; bundled: data/prices/gpu_prices.csv, documented in data/prices/SOURCE.md). Dollar "
          "figures scale linearly with them; pass --prices FILE to use your own.",
      "Published: the FGD artifact's result for the same trace and policy (mean ± sd over its "
      "10 seeds), where it has one. The dashed curve is its median curve for FGD."};
  for (const std::string& a : internal::PriceAssumptions(r.fleet)) {
    items.push_back("Assumption: " + a);
  }
  std::string out = "<ul>\n";
  for (const std::string& item : items) out += "<li>" + HtmlEscape(item) + "</li>\n";
  return out + "</ul>\n";
}

}  // namespace

namespace {
// The report's content. Standalone: under an <h1> with <h2> sections; embedded: under an <h2>
// with <h3> sections.
std::string CostReportBody(const CostBenchmarkResult& r, bool standalone) {
  const PackingBenchResult& p = r.packing;
  const char* sub = standalone ? "h2" : "h3";
  std::string out = standalone ? "<h1>Seedance cost optimization report</h1>\n"
                               : "<h2>Packing comparison (openb, FGD protocol)</h2>\n";
  out += "<p class=\"sub\">" +
         HtmlEscape(fmt::format("Workload {}: {} ({} pods) on {} nodes / {} GPUs; {} placement "
                                "policies; seeds {}",
                                r.input.workload, p.workload, p.trace_pods, r.fleet.nodes,
                                r.fleet.gpus, r.costs.size(),
                                internal::FormatSeedList(r.input.seeds))) +
         "</p>\n";
  if (auto h = MakeHeadline(r)) {
    out += fmt::format("<div class=\"headline{}\">{}</div>\n",
                       h->saving_per_month.raw() < 0 ? " worse" : "", HtmlEscape(h->text));
  }
  const PolicyCost& best = r.costs[r.best];
  out += "<p>" +
         HtmlEscape(fmt::format(
             "At 100% arrived workload the best policy, {}, leaves {:.1f} of {} GPUs ({:.2f}%) "
             "unallocated: {:.0f} GPU-hours and {} of list price a month. The fleet costs {} a "
             "month at list price.",
             PolicyDisplayName(best.policy), best.unallocated_gpus, r.fleet.gpus,
             best.mean_unallocated_pct, best.stranded_gpu_hours_per_month,
             cost::FormatUsd(best.stranded_usd_per_month, 0),
             cost::FormatUsd(r.fleet.usd_per_month(), 0))) +
         "</p>\n";
  if (const std::string proxies = internal::ProxyModelList(r.fleet); !proxies.empty()) {
    out += "<p class=\"note\">" +
           HtmlEscape(fmt::format("{:.1f}% of the fleet's list price rests on assumed prices "
                                  "for {} (see Fleet and prices).",
                                  100 * r.fleet.proxy_share(), proxies)) +
           "</p>\n";
  }
  out += fmt::format("<{0}>Stranded GPUs and what they cost</{0}>\n", sub) + CostTable(r);

  out += fmt::format("<{0}>Unallocated GPUs as the workload arrives</{0}>\n", sub);
  const std::vector<ChartSeries> series = CurveSeries(r);
  const ChartAxis x_axis{
      .label = "Arrived workload (% of GPU capacity)", .min = 0, .max = 130, .tick_step = 10};
  const std::string y_label = "Unallocated GPUs (% of capacity)";
  out += Figure({.id = "unallocated-full",
                 .title = "Unallocated GPU % against arrived workload (median over seeds)",
                 .x = x_axis,
                 .y = {.label = y_label, .min = 0, .max = 100, .tick_step = 10}},
                series,
                "Each line is a policy's median over seeds of 100 - allocated GPU %; lower is "
                "better. A policy that placed everything would follow 100 - arrived % down to 0 "
                "at 100% arrived.");
  ChartAxis zoom_x = x_axis;
  zoom_x.min = 90;
  zoom_x.tick_step = 5;
  out += Figure({.id = "unallocated-zoom",
                 .title = "The same, from 90% arrived workload",
                 .x = zoom_x,
                 .y = {.label = y_label, .min = 0}},
                series, "The region the cost table is read from (100% arrived) and beyond.");

  out += fmt::format("<{0}>Fleet and prices</{0}>\n", sub) + PriceTableHtml(r);
  out += fmt::format("<{0}>Method and assumptions</{0}>\n", sub) + MethodList(r);
  return out;
}
}  // namespace

std::string CostReportCss() { return kCss; }

std::string CostReportSection(const CostBenchmarkResult& r) {
  return "<section>\n" + CostReportBody(r, /*standalone=*/false) + "</section>\n";
}

std::string CostReportHtml(const CostBenchmarkResult& r) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>Seedance cost optimization report: " + HtmlEscape(r.input.workload) +
         "</title>\n<style>" + kCss + "</style>\n</head>\n<body>\n<main>\n";
  out += CostReportBody(r, /*standalone=*/true);
  out +=
      "<footer>Generated by seedance cost-benchmark. results.json in the same directory holds "
      "these numbers.</footer>\n</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace seedance::report
