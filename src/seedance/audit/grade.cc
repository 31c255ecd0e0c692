#include "seedance/audit/grade.h"

#include <set>

namespace seedance::audit {

GradeTable GradeTable::SeedDefault() {
  GradeTable t;
  t.rows = {
      GradeRow{"excellent", Bound::Below(0.18), Bound::Below(2.1), 1.25},
      GradeRow{"good", Bound::AtMost(0.25), Bound::AtMost(4.5), 1.00},
      GradeRow{"needs_optimization", Bound{}, Bound{}, 0.75},
  };
  return t;
}

Status GradeTable::Validate() const {
  if (rows.empty()) return InvalidArgumentError("grades: at least one grade is required");
  std::set<std::string> names;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const GradeRow& r = rows[i];
    const std::string where = "grades[" + std::to_string(i) + "]";
    if (r.name.empty()) return InvalidArgumentError(where + ".name: must not be empty");
    if (!names.insert(r.name).second) {
      return InvalidArgumentError(where + ".name: duplicate grade '" + r.name + "'");
    }
    if (!(r.weight > 0)) {
      return InvalidArgumentError(where + ".weight: must be > 0 (grade '" + r.name + "')");
    }
    if ((r.energy_ratio.set && r.energy_ratio.limit < 0) ||
        (r.deviation_pct.set && r.deviation_pct.limit < 0)) {
      return InvalidArgumentError(where + ": bounds must be >= 0 (grade '" + r.name + "')");
    }
    const bool bounded = r.energy_ratio.set || r.deviation_pct.set;
    const bool last = i + 1 == rows.size();
    if (last && bounded) {
      return InvalidArgumentError(where + ": the last grade ('" + r.name +
                                  "') is the catch-all and must have no bounds");
    }
    if (!last && !bounded) {
      return InvalidArgumentError(where + ": grade '" + r.name +
                                  "' has no bounds, so the grades after it are unreachable");
    }
  }
  if (!partial_evidence_cap.empty()) {
    if (names.count(partial_evidence_cap) == 0) {
      return InvalidArgumentError("partial_evidence_cap: no grade named '" + partial_evidence_cap +
                                  "'");
    }
    if (rows.size() > 1 && rows.front().name == partial_evidence_cap) {
      return InvalidArgumentError("partial_evidence_cap: '" + partial_evidence_cap +
                                  "' is the best grade; a node lacking a criterion must not get "
                                  "it on an unchecked bound");
    }
  }
  return Status::Ok();
}

std::size_t GradeTable::PartialEvidenceCapIndex() const {
  for (std::size_t i = 0; i < rows.size() && !partial_evidence_cap.empty(); ++i) {
    if (rows[i].name == partial_evidence_cap) return i;
  }
  return rows.size() > 1 ? 1 : 0;
}

GradeDecision GradeTable::Decide(std::optional<double> energy_ratio,
                                 std::optional<double> deviation_pct) const {
  GradeDecision d;
  if (!energy_ratio.has_value()) d.missing.push_back(kEnergyRatioCriterion);
  if (!deviation_pct.has_value()) d.missing.push_back(kDeviationCriterion);
  const std::size_t cap = PartialEvidenceCapIndex();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const GradeRow& r = rows[i];
    if (energy_ratio.has_value() && !r.energy_ratio.Accepts(*energy_ratio)) continue;
    if (deviation_pct.has_value() && !r.deviation_pct.Accepts(*deviation_pct)) continue;
    const bool unchecked = (!energy_ratio.has_value() && r.energy_ratio.set) ||
                           (!deviation_pct.has_value() && r.deviation_pct.set);
    if (unchecked && i < cap) {
      d.capped = true;  // its measured bounds hold; the missing criterion withholds it
      continue;
    }
    d.row = &r;
    return d;
  }
  d.row = &rows.back();  // unreachable for a valid table: the catch-all accepts everything
  return d;
}

}  // namespace seedance::audit
