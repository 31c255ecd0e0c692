#include "seedance/fleet/gpus_needed.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "seedance/report/html.h"

namespace seedance::fleet {
namespace {

double Ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

GpusNeededProbe ProbeOf(int num, int committed_gpus, const FleetWeekOutcome& sum, double weeks,
                        const GpusNeededTarget& t) {
  GpusNeededProbe p;
  p.num = num;
  p.committed_gpus = committed_gpus;
  p.committed_usd_per_week = sum.committed_usd / weeks;
  p.total_usd_per_week = sum.total_usd / weeks;
  p.serving_attainment = sum.serving_attainment;
  p.deadlines_met = sum.deadlines_met;
  p.gold_violations = sum.gold_violations;
  p.meets = MeetsTarget(sum, t);
  return p;
}

std::string TargetText(const GpusNeededTarget& t) {
  return fmt::format("serving SLO attainment >= {:.2f} %, deadlines met >= {}, Gold guarantees broken <= {}",
                     100.0 * t.serving_attainment, t.deadlines_met, t.gold_violations);
}

std::string NeedText(const GpusNeeded& g, int full) {
  const GpusNeededProbe* n = g.Needed();
  if (n == nullptr) return "not met on the whole fleet";
  return fmt::format("{}{} of {} committed GPUs ({:.2f}x), committed ${:.0f} and all in ${:.0f} per week",
                     n->num == kGpusNeededMinNum ? "at most " : "", n->committed_gpus, full,
                     Ratio(n->committed_gpus, full), n->committed_usd_per_week, n->total_usd_per_week);
}

// A committed pool's GPUs at num / den of `gpus`: whole nodes, at least one.
int ScaledGpus(int gpus, int num, int den) {
  const int nodes = static_cast<int>(std::lround(static_cast<double>(num) / den * gpus / kGpusPerNode));
  return std::max(1, nodes) * kGpusPerNode;
}

// The committed GPUs of `s` with its committed pools at num / den (the whole fleet at den / den).
int CommittedGpusAt(const FleetWeekScenario& s, int num, int den) {
  int n = 0;
  for (const auto& p : s.fleet.pools) {
    if (sim::AlwaysHeld(p.tier) && p.max_gpus > 0) n += num == den ? p.max_gpus : ScaledGpus(p.max_gpus, num, den);
  }
  return n;
}

}  // namespace

int CommittedGpus(const FleetWeekScenario& s) { return CommittedGpusAt(s, 1, 1); }

FleetWeekScenario WithCommittedScaled(const FleetWeekScenario& s, int num, int den) {
  FleetWeekScenario out = s;
  const double f = static_cast<double>(num) / den;
  for (auto& p : out.fleet.pools) {
    if (sim::AlwaysHeld(p.tier) && p.max_gpus > 0) p.max_gpus = ScaledGpus(p.max_gpus, num, den);
  }
  for (auto& t : out.tenancy.tenants) {
    for (auto& q : t.quota) {
      q.nominal *= f;
      if (q.borrowing_limit) *q.borrowing_limit *= f;
      if (q.lending_limit) *q.lending_limit *= f;
    }
  }
  out.name += fmt::format(" at {}/{} of the committed GPUs", num, den);
  return out;
}

GpusNeededTarget GpusNeededTargetOf(const FleetWeekOutcome& b) {
  return {b.serving_attainment, b.deadlines_met, b.gold_violations};
}

bool MeetsTarget(const FleetWeekOutcome& x, const GpusNeededTarget& t) {
  return x.serving_attainment >= t.serving_attainment && x.deadlines_met >= t.deadlines_met &&
         x.gold_violations <= t.gold_violations;
}

const GpusNeededProbe* GpusNeeded::Needed() const {
  for (const auto& p : probes) {
    if (p.num == needed_num) return &p;
  }
  return nullptr;
}

Result<std::vector<GpusNeeded>> FindGpusNeeded(const std::vector<StackConfig>& stacks,
                                               const std::vector<FleetWeekOutcome>& full, double weeks,
                                               const FleetWeekScenario& any_week, const GpusNeededTarget& target,
                                               const GpusNeededRunner& run) {
  std::vector<GpusNeeded> out(stacks.size());
  // (lo, hi]: lo fails (or is below the search), hi meets the target.
  std::vector<int> lo(stacks.size(), kGpusNeededMinNum - 1), hi(stacks.size(), kGpusNeededDen);
  for (std::size_t k = 0; k < stacks.size(); ++k) {
    out[k].stack = stacks[k].name;
    out[k].probes.push_back(ProbeOf(kGpusNeededDen, CommittedGpus(any_week), full[k], weeks, target));
    if (!out[k].probes.back().meets) lo[k] = hi[k] = -1;  // not met on the whole fleet: no search
  }
  for (;;) {
    std::vector<std::pair<StackConfig, int>> runs;
    std::vector<std::size_t> who;
    for (std::size_t k = 0; k < stacks.size(); ++k) {
      if (hi[k] - lo[k] <= 1) continue;
      runs.emplace_back(stacks[k], (lo[k] + hi[k]) / 2);
      who.push_back(k);
    }
    if (runs.empty()) break;
    SEEDANCE_ASSIGN_OR_RETURN(const std::vector<FleetWeekOutcome> got, run(runs));
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const std::size_t k = who[i];
      const int num = runs[i].second;
      out[k].probes.push_back(ProbeOf(num, CommittedGpusAt(any_week, num, kGpusNeededDen), got[i], weeks, target));
      (out[k].probes.back().meets ? hi[k] : lo[k]) = num;
    }
  }
  for (std::size_t k = 0; k < stacks.size(); ++k) {
    out[k].needed_num = hi[k];
    std::sort(out[k].probes.begin(), out[k].probes.end(),
              [](const GpusNeededProbe& a, const GpusNeededProbe& b) { return a.num > b.num; });
  }
  return out;
}

nlohmann::json GpusNeededJson(const std::vector<GpusNeeded>& rows, const GpusNeededTarget& target, int full) {
  nlohmann::json j;
  j["what"] =
      "the smallest fleet, every committed pool scaled alike in whole 8-GPU nodes (sixteenths of it, down to half) "
      "and every tenant's quota with it, on which the stack meets the base's serving SLO attainment and deadlines "
      "met on the whole fleet and breaks no more Gold guarantees; by bisection, which assumes more GPUs never do "
      "worse (every size tried is listed)";
  j["target"] = {{"serving_attainment", target.serving_attainment},
                 {"deadlines_met", target.deadlines_met},
                 {"gold_violations_at_most", target.gold_violations}};
  j["committed_gpus"] = full;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : rows) {
    nlohmann::json r;
    r["stack"] = g.stack;
    const GpusNeededProbe* n = g.Needed();
    r["committed_gpus_needed"] = n ? nlohmann::json(n->committed_gpus) : nlohmann::json(nullptr);
    r["ratio"] = n ? nlohmann::json(Ratio(n->committed_gpus, full)) : nlohmann::json(nullptr);
    r["at_most"] = n != nullptr && n->num == kGpusNeededMinNum;  // the search stops at half
    r["committed_usd_per_week"] = n ? nlohmann::json(n->committed_usd_per_week) : nlohmann::json(nullptr);
    r["total_usd_per_week"] = n ? nlohmann::json(n->total_usd_per_week) : nlohmann::json(nullptr);
    nlohmann::json probes = nlohmann::json::array();
    for (const auto& p : g.probes) {
      probes.push_back({{"sixteenths", p.num},
                        {"committed_gpus", p.committed_gpus},
                        {"committed_usd_per_week", p.committed_usd_per_week},
                        {"total_usd_per_week", p.total_usd_per_week},
                        {"serving_attainment", p.serving_attainment},
                        {"deadlines_met", p.deadlines_met},
                        {"gold_violations", p.gold_violations},
                        {"meets", p.meets}});
    }
    r["probes"] = probes;
    out.push_back(r);
  }
  j["rows"] = out;
  return j;
}

std::string GpusNeededText(const std::vector<GpusNeeded>& rows, const GpusNeededTarget& target, int full) {
  std::ostringstream os;
  os << fmt::format("  GPUs needed for the base's SLO and deadlines on the whole fleet ({}; committed pools scaled "
                    "alike in whole nodes, quotas with them):\n",
                    TargetText(target));
  for (const auto& g : rows) {
    os << fmt::format("    {}: {}; tried", g.stack, NeedText(g, full));
    for (const auto& p : g.probes) {
      os << fmt::format(" {} GPUs {} ({:.2f} %, {} met, {} Gold);", p.committed_gpus, p.meets ? "meets" : "short",
                        100.0 * p.serving_attainment, p.deadlines_met, p.gold_violations);
    }
    os << "\n";
  }
  return os.str();
}

std::string GpusNeededHtml(const std::vector<GpusNeeded>& rows, const GpusNeededTarget& target, int full) {
  std::ostringstream os;
  os << "<h4>GPUs needed for the week's SLOs and deadlines</h4>\n<p>The smallest fleet (every committed pool scaled "
        "alike in whole 8-GPU nodes, tenants' quotas with it; sizes tried by bisection down to half) on which a stack "
        "still does what the base does on the whole fleet: "
     << report::HtmlEscape(TargetText(target)) << ". The backlog's other work is best effort and not part of the need.</p>\n";
  os << "<table><tr><th>stack</th><th>needed</th><th>committed GPUs tried: SLO, deadlines met, Gold broken</th></tr>\n";
  for (const auto& g : rows) {
    os << "<tr><td>" << report::HtmlEscape(g.stack) << "</td><td>" << report::HtmlEscape(NeedText(g, full)) << "</td><td>";
    for (const auto& p : g.probes) {
      os << fmt::format("{}{}: {:.2f} %, {}, {}{}<br>", p.meets ? "" : "<span style=\"color:#a00\">", p.committed_gpus,
                        100.0 * p.serving_attainment, p.deadlines_met, p.gold_violations, p.meets ? "" : " (short)</span>");
    }
    os << "</td></tr>\n";
  }
  os << "</table>\n";
  return os.str();
}

}  // namespace seedance::fleet
