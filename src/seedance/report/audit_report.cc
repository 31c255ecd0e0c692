#include "seedance/report/audit_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "seedance/report/html.h"

namespace seedance::report {
namespace {

using audit::AdmissionState;

std::string GradeColor(const std::string& grade) {
  if (grade == "excellent") return "#59a14f";
  if (grade == "good") return "#4e79a7";
  if (grade == "ungraded") return "#bab0ac";
  return "#e15759";
}

std::string StateColor(AdmissionState s) {
  switch (s) {
    case AdmissionState::kAdmitted:
      return "#d4edda";
    case AdmissionState::kObservation:
      return "#fff3cd";
    case AdmissionState::kRemoved:
      return "#f8d7da";
    case AdmissionState::kPending:
      return "#e2e3e5";
  }
  return "#ffffff";
}

// Horizontal bars: one per node, length = energy ratio on a log scale (ratios span decades).
std::string GradeChart(const audit::FleetAudit& a, const audit::AuditConfig& config) {
  const int row = 22, left = 150, width = 760, plot = width - left - 140;
  const int height = static_cast<int>(a.nodes.size()) * row + 60;
  double lo = 1e300, hi = 1e-300;
  for (const auto& n : a.nodes) {
    if (const auto& e = n.metrics.energy_ratio_kw_per_tops; e.has_value() && *e > 0) {
      lo = std::min(lo, *e);
      hi = std::max(hi, *e);
    }
  }
  for (const auto& g : config.grades.rows) {
    if (g.energy_ratio.set) hi = std::max(hi, g.energy_ratio.limit);
  }
  if (!(hi > 1e-300 && hi < 1e300)) hi = 1;
  if (!(lo < hi)) lo = hi / 10;
  const double l0 = std::floor(std::log10(lo)), l1 = std::ceil(std::log10(hi));
  auto x = [&](double v) {
    return left + static_cast<double>(plot) * (std::log10(v) - l0) / std::max(1.0, l1 - l0);
  };
  std::string s = fmt::format(
      "<svg class=\"audit-grades\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\" aria-label=\"energy ratio per node, coloured by grade\">\n",
      width, height, width, height);
  s += fmt::format("<text x=\"{}\" y=\"16\" font-size=\"13\">Energy ratio (kW per TOPS, log "
                   "scale) and grade per node</text>\n",
                   left);
  for (double d = l0; d <= l1; d += 1) {
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"24\" x2=\"{0:.1f}\" y2=\"{1}\" stroke=\"#ddd\"/>"
                     "<text x=\"{0:.1f}\" y=\"{2}\" font-size=\"10\" text-anchor=\"middle\">1e{3:g}"
                     "</text>\n",
                     x(std::pow(10.0, d)), height - 24, height - 10, d);
  }
  for (const auto& g : config.grades.rows) {
    if (!g.energy_ratio.set) continue;
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"24\" x2=\"{0:.1f}\" y2=\"{1}\" stroke=\"#333\" "
                     "stroke-dasharray=\"4 3\"><title>{2} bound {3:g}</title></line>\n",
                     x(g.energy_ratio.limit), height - 24, HtmlEscape(g.name),
                     g.energy_ratio.limit);
  }
  int y = 30;
  for (const auto& n : a.nodes) {
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
                     left - 6, y + 14, HtmlEscape(n.host));
    if (const auto& e = n.metrics.energy_ratio_kw_per_tops; e.has_value() && *e > 0) {
      s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\">"
                       "<title>{}: {:.3g} kW/TOPS, {}</title></rect>",
                       left, y + 3, std::max(1.0, x(*e) - left), row - 6, GradeColor(n.grade),
                       HtmlEscape(n.host), *e, HtmlEscape(n.grade));
    }
    s += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>\n", width - 130, y + 14,
                     HtmlEscape(n.grade));
    y += row;
  }
  s += "</svg>\n";
  return s;
}

std::string Opt(const std::optional<double>& v, const char* fmt_spec = "{:.3g}") {
  return v.has_value() ? fmt::format(fmt::runtime(fmt_spec), *v) : std::string("n/a");
}

}  // namespace

std::string RenderAuditSection(const audit::FleetAudit& a, const audit::AdmissionLedger& ledger,
                               const audit::AuditConfig& config) {
  std::string s = "<section id=\"health-audit\">\n<h2>Health audit and admission</h2>\n";
  s += fmt::format("<p>Audit at {} over the last {:g} h. Grades: ", audit::FormatUtc(a.now_s),
                   config.window_hours);
  for (const auto& g : config.grades.rows) {
    s += fmt::format("{} (weight {:g}) ", HtmlEscape(g.name), g.weight);
  }
  s += "</p>\n" + GradeChart(a, config);
  s += "<table class=\"audit\">\n<tr><th>node</th><th>grade</th><th>weight</th><th>state</th>"
       "<th>since</th><th>audit</th><th>kW/TOPS</th><th>deviation %</th><th>idle index</th>"
       "<th>power residual %</th><th>evidence</th></tr>\n";
  for (const auto& n : a.nodes) {
    const auto it = ledger.nodes.find(n.host);
    const AdmissionState st = it == ledger.nodes.end() ? AdmissionState::kPending : it->second.state;
    const std::string since = it == ledger.nodes.end() ? "" : audit::FormatUtc(it->second.since_s);
    std::string evidence;
    for (const auto& e : n.Verdict().evidence) {
      evidence += HtmlEscape(e);
      evidence += "<br>";
    }
    // The grade criteria that were not measured, and whether they capped the grade.
    std::string grade = HtmlEscape(n.grade);
    if (!n.grade_missing.empty()) {
      grade += n.grade_capped ? "<br>capped, missing:" : "<br>missing:";
      for (const auto& m : n.grade_missing) {
        grade += ' ';
        grade += HtmlEscape(m);
      }
    }
    s += fmt::format(
        "<tr><td>{}</td><td style=\"color:{}\">{}</td><td>{:g}</td>"
        "<td style=\"background:{}\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td></tr>\n",
        HtmlEscape(n.host), GradeColor(n.grade), grade, n.weight, StateColor(st),
        audit::AdmissionStateName(st), since, audit::AuditOutcomeName(n.outcome),
        Opt(n.metrics.energy_ratio_kw_per_tops), Opt(n.metrics.scheduling_deviation_pct, "{:.2f}"),
        Opt(n.metrics.idle_decay_index, "{:.3f}"), Opt(n.metrics.power_residual_pct, "{:+.1f}"),
        evidence);
  }
  s += "</table>\n<h3>Power model per GPU model (P = a&#183;SM + b&#183;INT + "
       "c&#183;DRAM + d)</h3>\n<table class=\"audit\"><tr><th>model</th><th>GPUs</th>"
       "<th>a</th><th>b</th><th>c</th><th>d</th><th>R&#178;</th><th>RMSE W</th><th>flagged</th>"
       "</tr>\n";
  for (const auto& m : a.power_models) {
    const std::string name(cluster::GpuModelName(m.model));
    if (!m.fit.has_value()) {
      s += fmt::format("<tr><td>{}</td><td>{}</td><td colspan=\"7\">{}</td></tr>\n",
                       HtmlEscape(name), m.gpus, HtmlEscape(m.note));
      continue;
    }
    const auto& f = *m.fit;
    s += fmt::format("<tr><td>{}</td><td>{}</td><td>{:.1f}</td><td>{:.1f}</td><td>{:.1f}</td>"
                     "<td>{:.1f}</td><td>{:.4f}</td><td>{:.2f}</td><td>{}</td></tr>\n",
                     HtmlEscape(name), m.gpus, f.coef[0], f.coef[1], f.coef[2], f.coef[3], f.r2,
                     f.rmse_w, m.flagged);
  }
  s += "</table>\n<h3>Admission transitions</h3>\n<table class=\"audit\"><tr><th>time</th>"
       "<th>node</th><th>from</th><th>to</th><th>reason</th><th>evidence</th></tr>\n";
  for (const auto& t : ledger.log) {
    std::string evidence;
    for (const auto& e : t.evidence) evidence += HtmlEscape(e) + "<br>";
    s += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                     "</tr>\n",
                     audit::FormatUtc(t.at_s), HtmlEscape(t.node),
                     audit::AdmissionStateName(t.from), audit::AdmissionStateName(t.to),
                     HtmlEscape(t.reason), evidence);
  }
  s += "</table>\n</section>\n";
  return s;
}

std::string RenderEnforcementSection(const audit::EnforcementResult& r,
                                     const audit::AuditConfig& config) {
  std::string s = "<section id=\"audit-enforcement\">\n<h2>Admission enforcement</h2>\n"
                  "<p>Per epoch: admission state and new pods placed (guaranteed / Bronze). "
                  "Removed and pending nodes take no new work; nodes under observation take "
                  "Bronze work only.</p>\n<table class=\"audit\"><tr><th>epoch start</th>";
  for (const auto& h : r.hosts) s += "<th>" + HtmlEscape(h) + "</th>";
  s += "<th>unschedulable</th></tr>\n";
  for (const auto& e : r.epochs) {
    s += "<tr><td>" + audit::FormatUtc(e.start_s) + "</td>";
    for (std::size_t i = 0; i < r.hosts.size(); ++i) {
      s += fmt::format("<td style=\"background:{}\">{}<br>{} / {}</td>", StateColor(e.state[i]),
                       audit::AdmissionStateName(e.state[i]), e.placed_guaranteed[i],
                       e.placed_best_effort[i]);
    }
    s += fmt::format("<td>{}</td></tr>\n", e.unschedulable);
  }
  s += "</table>\n</section>\n";
  return s + RenderAuditSection(r.last_audit, r.ledger, config);
}

}  // namespace seedance::report
