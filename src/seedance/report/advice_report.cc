#include "seedance/report/advice_report.h"

#include <fmt/format.h>

#include "seedance/report/html.h"

namespace seedance::report {

std::string AdviceHtmlSection(const std::vector<advise::Finding>& findings, const std::string& intro,
                              const std::vector<advise::LeverTableRow>& lever_table,
                              const std::vector<std::string>& lever_notes) {
  std::string h = "<section id=\"advice\"><h2>Advice</h2>\n<p>" + HtmlEscape(intro) + "</p>\n";
  if (findings.empty()) {
    h += "<p>No findings: nothing to change was found in the evidence.</p>\n";
  } else {
    h += "<table><tr><th>#</th><th>$/month</th><th>interval $/month</th><th>kind</th><th>target</th>"
         "<th>evidence</th><th>action</th><th>reproduce</th></tr>\n";
    int rank = 0;
    for (const advise::Finding& f : findings) {
      h += fmt::format(
          "<tr><td>{}</td><td>{:.2f}</td><td>{:.2f} .. {:.2f}</td><td>{}</td><td>{}</td>"
          "<td>{} {} ({} .. {}); {}</td><td>{}</td><td><code>{}</code></td></tr>\n",
          ++rank, f.usd_per_month, f.ci_low, f.ci_high, HtmlEscape(f.kind), HtmlEscape(f.target),
          f.evidence.samples, HtmlEscape(f.evidence.samples_unit), HtmlEscape(f.evidence.from),
          HtmlEscape(f.evidence.to), HtmlEscape(f.evidence.detail), HtmlEscape(f.action),
          HtmlEscape(f.reproduce));
    }
    h += "</table>\n";
  }
  if (!lever_table.empty()) {
    h += "<h3>Training levers on the seed's step</h3>\n<table><tr><th>configuration</th>"
         "<th>memory GB</th><th>step ms</th><th>communication</th><th>seed</th></tr>\n";
    for (const advise::LeverTableRow& r : lever_table) {
      h += fmt::format("<tr><td>{}</td><td>{:.1f}</td><td>{:.0f}</td><td>-{:.1f}%</td><td>{}</td></tr>\n",
                       HtmlEscape(r.config), r.ours.memory_gb, r.ours.step_ms,
                       100 * r.ours.comm_reduction,
                       r.has_seed ? fmt::format("{:.1f} GB / {:.0f} ms / -{:.0f}%", r.seed.memory_gb,
                                                r.seed.step_ms, 100 * r.seed.comm_reduction)
                                  : std::string());
    }
    h += "</table>\n<ul>\n";
    for (const std::string& n : lever_notes) h += "<li>" + HtmlEscape(n) + "</li>\n";
    h += "</ul>\n";
  }
  return h + "</section>\n";
}

}  // namespace seedance::report
