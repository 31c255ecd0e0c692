#include "seedance/report/as_run_report.h"

#include <fmt/format.h>

#include <cmath>

#include "seedance/report/html.h"

namespace seedance::report {
namespace {

double R6(double v) { return std::round(v * 1e6) / 1e6; }

nlohmann::json BillJson(const sim::WindowBill& b) {
  return {{"total_usd", R6(b.TotalUsd())},
          {"committed_usd", R6(b.committed_usd)},
          {"cloud_usd", R6(b.cloud_usd)},
          {"cloud_gpu_hours", R6(b.cloud_gpu_hours)},
          {"other_usd", R6(b.other_usd)},
          {"unfinished_work_valued_usd", R6(b.unfinished.usd)},
          {"unfinished_gpu_hours", R6(b.unfinished.gpu_hours)},
          {"unfinished_gpu_hours_on_owned", R6(b.unfinished.owned_gpu_hours)}};
}

constexpr const char* kWindowRule =
    "every row is billed over the history's window (first submit or start to last end): owned and reserved GPUs for "
    "all of it whatever runs, rented GPUs while held inside it; work a row has not finished at the window's end is "
    "valued at its cost to finish at the fleet's marginal price (owned GPUs free then: their power and cooling share "
    "of the TCO; else the type's cheapest rentable price)";
constexpr const char* kDecompositionRule =
    "difference to as run = horizon (unfinished work valued, and committed GPUs) + cloud spend (rented GPU-hours "
    "more or fewer, at the as-run mean rented price) + placement (the rest: which rented pools and types, spot or "
    "on-demand, cold starts)";

}  // namespace

std::string AsRunVerdict(const sim::AsRunBaseline& a, double usd) {
  const double paid = a.cost.total_usd;
  if (paid <= 0) return usd <= paid ? "cheaper" : "dearer";
  const double diff_pct = 100.0 * (usd - paid) / paid;
  if (a.replayed && std::abs(diff_pct) <= a.ErrorPct()) return "within the backtest's error";
  return usd <= paid ? "cheaper" : "dearer";
}

std::string AsRunWindowText(const sim::ScenarioResult& r) {
  if (!r.as_run) return "";
  const sim::AsRunBaseline& a = *r.as_run;
  std::string out = fmt::format("window: {:.2f} h of history ({:.0f} s .. {:.0f} s on the policies' clock); {}\n",
                                (a.window_end_s - a.window_start_s) / 3600.0, a.window_start_s, a.window_end_s,
                                kWindowRule);
  if (a.replayed) {
    const auto& p = *a.replayed;
    out += fmt::format("{:<22} {:>12.2f}   (unfinished work valued ${:.2f}; gap to as run {:+.2f}%: the backtest's "
                       "error; mean wait {:.2f} h replayed vs {:.2f} h as run; scheduler {})\n",
                       sim::AsRunBaseline::Replayed::kLabel, p.bill.TotalUsd(), p.bill.unfinished.usd, p.gap_pct,
                       p.mean_wait_s / 3600.0, p.history_mean_wait_s / 3600.0, p.scheduler);
    out += "assumes (as run, replayed): " + p.assumption + "\n";
  }
  out += fmt::format("{:<22} {:>12} {:>12} {:>12} {:>12} {:>12} {:>12}  {}\n", "over the window", "total $",
                     "unfinished $", "own horizon $", "horizon $", "cloud $", "placement $", "vs as run");
  for (const sim::PolicyOutcome& p : r.policies) {
    auto it = a.windowed.find(p.name);
    if (it == a.windowed.end()) continue;
    const auto& w = it->second;
    out += fmt::format("{:<22} {:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f} {:>12.2f}  {}\n", p.name,
                       w.bill.TotalUsd(), w.bill.unfinished.usd, w.own_horizon_usd, w.vs_as_run.horizon_usd,
                       w.vs_as_run.cloud_usd, w.vs_as_run.placement_usd, AsRunVerdict(a, w.bill.TotalUsd()));
  }
  out += std::string("assumes (window): ") + kDecompositionRule + "\n";
  out += "assumes (rented capacity, every row): " + a.rented.Rule() + "\n";
  if (a.held_rows > 0 && a.rented.whole_nodes) {
    out += fmt::format("assumes (window): {} services and notebooks held as they ran in every row (cost-benchmark moves "
                       "batch jobs only): their rented GPUs as run ({:.2f} GPU-hours) share the policies' rented nodes; "
                       "the policies' simulation does not take away the owned GPUs they held\n",
                       a.held_rows, a.held_cloud_gpu_hours);
  } else if (a.held_rows > 0) {
    out += fmt::format("assumes (window): {} services and notebooks held as they ran in every row (cost-benchmark moves "
                       "batch jobs only): their rented GPUs as run (${:.2f}, {:.2f} GPU-hours) are in every policy's "
                       "bill; the policies' simulation does not take away the owned GPUs they held\n",
                       a.held_rows, a.held_cloud_usd, a.held_cloud_gpu_hours);
  }
  return out;
}

nlohmann::json AsRunWindowJson(const sim::ScenarioResult& r) {
  if (!r.as_run) return nullptr;
  const sim::AsRunBaseline& a = *r.as_run;
  nlohmann::json j;
  j["window"] = {{"start_s", R6(a.window_start_s)},
                 {"end_s", R6(a.window_end_s)},
                 {"hours", R6((a.window_end_s - a.window_start_s) / 3600.0)},
                 {"rule", kWindowRule},
                 {"decomposition_rule", kDecompositionRule},
                 {"as_run", BillJson(a.bill)},
                 {"held_as_run", {{"rows", a.held_rows}, {"cloud_usd", R6(a.held_cloud_usd)},
                                  {"cloud_gpu_hours", R6(a.held_cloud_gpu_hours)}}},
                 {"rented_capacity", {{"whole_nodes", a.rented.whole_nodes},
                                      {"history_rented_nodes_static", a.rented.static_rented},
                                      {"rule", a.rented.Rule()}}}};
  if (a.replayed) {
    const auto& p = *a.replayed;
    j["as_run_replayed"] = {{"label", sim::AsRunBaseline::Replayed::kLabel},
                            {"scheduler", p.scheduler},
                            {"assumption", p.assumption},
                            {"bill", BillJson(p.bill)},
                            {"gap_pct", R6(p.gap_pct)},
                            {"mean_wait_hours", R6(p.mean_wait_s / 3600.0)},
                            {"history_mean_wait_hours", R6(p.history_mean_wait_s / 3600.0)},
                            {"fixed_rows_delayed", p.delayed_fixed}};
  } else {
    j["as_run_replayed"] = nullptr;
  }
  nlohmann::json pols = nlohmann::json::object();
  for (const auto& [name, w] : a.windowed) {
    pols[name] = {{"bill", BillJson(w.bill)},
                  {"own_horizon_usd", R6(w.own_horizon_usd)},
                  {"vs_as_run_usd",
                   {{"total", R6(w.bill.TotalUsd() - a.bill.TotalUsd())},
                    {"horizon", R6(w.vs_as_run.horizon_usd)},
                    {"cloud", R6(w.vs_as_run.cloud_usd)},
                    {"placement", R6(w.vs_as_run.placement_usd)}}},
                  {"verdict", AsRunVerdict(a, w.bill.TotalUsd())}};
  }
  j["policies"] = pols;
  return j;
}

std::string AsRunWindowHtml(const sim::ScenarioResult& r) {
  if (!r.as_run) return "";
  const sim::AsRunBaseline& a = *r.as_run;
  std::string h = "<section>\n<h2>One window for every row</h2>\n";
  h += "<p>" + HtmlEscape(fmt::format("{:.2f} h of history; {}.", (a.window_end_s - a.window_start_s) / 3600.0,
                                      kWindowRule)) + "</p>\n";
  if (a.replayed) {
    const auto& p = *a.replayed;
    h += "<p class=\"headline\">" +
         HtmlEscape(fmt::format("{}: ${:.2f} against ${:.2f} as run, a gap of {:+.2f}% (the backtest's error: a policy "
                                "cheaper than as run by less than it is \"within the backtest's error\").",
                                sim::AsRunBaseline::Replayed::kLabel, p.bill.TotalUsd(), a.cost.total_usd, p.gap_pct)) +
         "</p>\n<p class=\"note\">" + HtmlEscape("Assumes: " + p.assumption + ".") + "</p>\n";
  }
  h += "<table>\n<tr><th>row</th><th>total $</th><th>unfinished work, valued $</th><th>own horizon $</th>"
       "<th>horizon $</th><th>cloud spend $</th><th>placement $</th><th>vs as run</th></tr>\n";
  for (const sim::PolicyOutcome& p : r.policies) {
    auto it = a.windowed.find(p.name);
    if (it == a.windowed.end()) continue;
    const auto& w = it->second;
    h += fmt::format("<tr><td>{}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td><td>{:.2f}</td>"
                     "<td>{:.2f}</td><td>{}</td></tr>\n",
                     HtmlEscape(p.name), w.bill.TotalUsd(), w.bill.unfinished.usd, w.own_horizon_usd,
                     w.vs_as_run.horizon_usd, w.vs_as_run.cloud_usd, w.vs_as_run.placement_usd,
                     HtmlEscape(AsRunVerdict(a, w.bill.TotalUsd())));
  }
  h += "</table>\n<p class=\"note\">" + HtmlEscape(std::string(kDecompositionRule) + ".") + "</p>\n";
  h += "<p class=\"note\">" + HtmlEscape("Rented capacity, every row: " + a.rented.Rule() + ".") + "</p>\n</section>\n";
  return h;
}

}  // namespace seedance::report
