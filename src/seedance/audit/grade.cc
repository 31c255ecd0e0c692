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
  return Status::Ok();
}

const GradeRow& GradeTable::Grade(double energy_ratio, std::optional<double> deviation_pct) const {
  for (const GradeRow& r : rows) {
    if (!r.energy_ratio.Accepts(energy_ratio)) continue;
    if (deviation_pct.has_value() && !r.deviation_pct.Accepts(*deviation_pct)) continue;
    return r;
  }
  return rows.back();
}

}  // namespace seedance::audit
