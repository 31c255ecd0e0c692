#include "seedance/report/seed_split_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "seedance/report/html.h"
#include "seedance/report/scenario_report.h"

namespace seedance::report {
namespace {

const sim::SeedSweep::PolicySummary* Summary(const SeedSetRun& run, const std::string& name) {
  for (const auto& p : run.sweep.policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const sim::LeftOutPolicy* LeftOut(const SeedSetRun& run, const std::string& name) {
  for (const auto& l : run.left_out) {
    if (l.policy == name) return &l;
  }
  return nullptr;
}

// The headline's policies in order, then those only the other set ran.
std::vector<const sim::SeedSweep::PolicySummary*> Rows(const SeedSetRun& headline, const SeedSetRun* tuning) {
  std::vector<const sim::SeedSweep::PolicySummary*> rows;
  for (const auto& p : headline.sweep.policies) rows.push_back(&p);
  if (tuning != nullptr) {
    for (const auto& p : tuning->sweep.policies) {
      if (Summary(headline, p.name) == nullptr) rows.push_back(&p);
    }
  }
  return rows;
}

// "$15006 ± 468 / 2.97 h, -1.1% vs best" (no ± for one seed), "best baseline" on the best row.
std::string Cell(const SeedSetRun& run, const std::string& policy) {
  const auto* p = Summary(run, policy);
  if (p == nullptr) return "not run " + sim::SeedSetName(run.set) + (LeftOut(run, policy) ? " (below)" : "");
  const bool one = run.sweep.seeds.size() == 1;
  std::string out = one ? fmt::format("${:.0f} / {:.2f} h", p->total_cost_usd.mean, p->avg_jct_hours.mean)
                        : fmt::format("${:.0f} ± {:.0f} / {:.2f} h", p->total_cost_usd.mean, p->total_cost_usd.sd,
                                      p->avg_jct_hours.mean);
  const auto* best = Summary(run, run.sweep.best_baseline);
  if (best == p) {
    out += ", best baseline";
  } else if (best != nullptr && best->total_cost_usd.mean > 0) {
    out += fmt::format(", {:+.1f}% vs best", 100.0 * (p->total_cost_usd.mean / best->total_cost_usd.mean - 1.0));
  }
  if (p->unfinished_runs > 0) out += fmt::format(", unfinished jobs on {} seeds", p->unfinished_runs);
  return out;
}

std::string Why(sim::SeedSet set) {
  switch (set) {
    case sim::SeedSet::kHeldOut:
      return "never run while Seedance's defaults were tuned";
    case sim::SeedSet::kTuning:
      return "in-sample: Seedance's defaults were tuned on these";
    case sim::SeedSet::kOutside:
      break;
  }
  return "in neither the tuning nor the held-out set (docs/BENCHMARKS.md)";
}

// Under the table: each left-out policy and why.
std::vector<std::string> LeftOutLines(const SeedSetRun& headline, const SeedSetRun* tuning) {
  std::vector<std::string> lines;
  for (const SeedSetRun* run : {&headline, tuning}) {
    if (run == nullptr) continue;
    for (const auto& l : run->left_out) lines.push_back(l.policy + " not run (" + SeedSetLabel(*run) + "): " + l.reason);
  }
  return lines;
}

// Said under the table when the tuning set was not run but the workload has one.
std::optional<std::string> TuningHint(const SeedSetRun& headline, const SeedSetRun* tuning) {
  if (tuning != nullptr || headline.set != sim::SeedSet::kHeldOut) return std::nullopt;
  const auto seeds = sim::TuningSeeds(headline.sweep.runs.front().workload);
  if (seeds.empty()) return std::nullopt;
  return "tuning: seeds " + sim::SeedRangeText(seeds) +
         " not run (add --with-tuning to show them beside the held-out figures)";
}

nlohmann::json Block(const SeedSetRun& run, bool headline) {
  nlohmann::json sweep = SweepJson(run.sweep);
  nlohmann::json b;
  b["label"] = SeedSetLabel(run);
  b["seeds"] = run.sweep.seeds;
  b["headline"] = headline;
  for (const char* key : {"policies", "best_baseline", "baseline_at_seedance_jct", "lower_bound_usd",
                          "bound_at_best_baseline_usd", "summary"}) {
    b[key] = sweep[key];
  }
  nlohmann::json not_run = nlohmann::json::array();
  for (const auto& l : run.left_out) not_run.push_back({{"policy", l.policy}, {"reason", l.reason}});
  b["not_run"] = not_run;
  if (!headline) b["per_seed"] = sweep["per_seed"];
  return b;
}

}  // namespace

std::string SeedSetLabel(const SeedSetRun& run) {
  const auto& seeds = run.sweep.seeds;
  return sim::SeedSetName(run.set) + ": seed" + (seeds.size() == 1 ? " " : "s ") + sim::SeedRangeText(seeds);
}

std::string SeedSetTable(const SeedSetRun& headline, const SeedSetRun* tuning) {
  std::string out = "Headline, " + SeedSetLabel(headline) + " (" + Why(headline.set) + ")";
  if (tuning != nullptr) out += "; beside it " + SeedSetLabel(*tuning) + " (" + Why(tuning->set) + ")";
  out += "; $ mean ± sd / average JCT:\n";
  // The tuning column, when there is one, after the headline's padded to one width.
  const auto row = [&](const std::string& name, const std::string& first, const std::string& second) {
    return tuning == nullptr ? fmt::format("{:<22} {}\n", name, first)
                             : fmt::format("{:<22} {:<44}{}\n", name, first, second);
  };
  out += row("policy", SeedSetLabel(headline), tuning ? SeedSetLabel(*tuning) : "");
  for (const auto* p : Rows(headline, tuning)) {
    out += row(p->name, Cell(headline, p->name), tuning ? Cell(*tuning, p->name) : "");
  }
  for (const auto& line : LeftOutLines(headline, tuning)) out += line + "\n";
  if (auto hint = TuningHint(headline, tuning)) out += *hint + "\n";
  return out;
}

std::string SeedSetHtmlSection(const SeedSetRun& headline, const SeedSetRun* tuning) {
  const std::string& workload = headline.sweep.runs.front().workload;
  std::string h = "<section id=\"headline\">\n<h2>Headline: " + HtmlEscape(SeedSetLabel(headline)) + " (" +
                  HtmlEscape(workload) + ")</h2>\n";
  h += "<p>Headline column: " + HtmlEscape(SeedSetLabel(headline)) + " (" + HtmlEscape(Why(headline.set)) + ").";
  if (tuning != nullptr) {
    h += " Beside it, labelled: " + HtmlEscape(SeedSetLabel(*tuning)) + " (" + HtmlEscape(Why(tuning->set)) + ").";
  }
  h += " Cost is the mean ± sample sd over the seeds / average JCT; each set's best baseline is " +
       std::string(kBestBaselineRule) + ", applied to that set's means.</p>\n";
  h += "<table>\n<tr><th>policy</th><th class=\"" + sim::SeedSetKey(headline.set) + "\">" +
       HtmlEscape(SeedSetLabel(headline)) + "</th>";
  if (tuning != nullptr) {
    h += "<th class=\"" + sim::SeedSetKey(tuning->set) + "\">" + HtmlEscape(SeedSetLabel(*tuning)) + "</th>";
  }
  h += "</tr>\n";
  for (const auto* p : Rows(headline, tuning)) {
    const bool seedance = p->name == "seedance";
    const auto cell = [&](const SeedSetRun& run) {
      const std::string text = HtmlEscape(Cell(run, p->name));
      return "<td>" + (seedance ? "<strong>" + text + "</strong>" : text) + "</td>";
    };
    h += "<tr><td title=\"" + HtmlEscape(p->description) + "\">" + HtmlEscape(p->name) + "</td>" + cell(headline) +
         (tuning != nullptr ? cell(*tuning) : "") + "</tr>\n";
  }
  h += "</table>\n";
  for (const auto& line : LeftOutLines(headline, tuning)) h += "<p class=\"note\">" + HtmlEscape(line) + "</p>\n";
  if (auto hint = TuningHint(headline, tuning)) h += "<p class=\"note\">" + HtmlEscape(*hint) + "</p>\n";
  h += "</section>\n";
  return h;
}

void AddSeedSetJson(const SeedSetRun& headline, const SeedSetRun* tuning, nlohmann::json* results) {
  nlohmann::json& j = *results;
  j["headline_set"] = sim::SeedSetKey(headline.set);
  j["held_out"] = nullptr;
  j["tuning"] = nullptr;
  j[sim::SeedSetKey(headline.set)] = Block(headline, /*headline=*/true);
  if (tuning != nullptr) j[sim::SeedSetKey(tuning->set)] = Block(*tuning, /*headline=*/false);
}

}  // namespace seedance::report
