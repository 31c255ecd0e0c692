#include "seedance/advise/finding.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace seedance::advise {
void SortFindings(std::vector<Finding>& findings) {
  std::sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.usd_per_month != b.usd_per_month) return a.usd_per_month > b.usd_per_month;
    return a.id < b.id;
  });
}

nlohmann::json FindingJson(const Finding& f) {
  auto round2 = [](double v) { return std::round(v * 100.0) / 100.0; };
  return {{"id", f.id},
          {"kind", f.kind},
          {"target", f.target},
          {"usd_per_month", round2(f.usd_per_month)},
          {"ci_low", round2(f.ci_low)},
          {"ci_high", round2(f.ci_high)},
          {"ci_basis", f.ci_basis},
          {"evidence",
           {{"samples", f.evidence.samples},
            {"samples_unit", f.evidence.samples_unit},
            {"from", f.evidence.from},
            {"to", f.evidence.to},
            {"detail", f.evidence.detail}}},
          {"action", f.action},
          {"reproduce", f.reproduce}};
}

std::string FindingsTable(const std::vector<Finding>& findings) {
  if (findings.empty()) return "no findings: nothing to change was found in the evidence\n";
  std::string out = fmt::format("{:>3}  {:>12}  {:>25}  {:<16}  {}\n", "#", "$/month",
                                "interval $/month", "kind", "target");
  int rank = 0;
  for (const Finding& f : findings) {
    out += fmt::format("{:>3}  {:>12.2f}  {:>25}  {:<16}  {}\n", ++rank, f.usd_per_month,
                       fmt::format("{:.2f} .. {:.2f}", f.ci_low, f.ci_high), f.kind, f.target);
    out += fmt::format("     evidence: {} {} ({} .. {}); {}\n", f.evidence.samples,
                       f.evidence.samples_unit, f.evidence.from, f.evidence.to, f.evidence.detail);
    out += "     action: " + f.action + "\n";
    out += "     interval: " + f.ci_basis + "\n";
    out += "     reproduce: " + f.reproduce + "\n";
  }
  return out;
}

}  // namespace seedance::advise
