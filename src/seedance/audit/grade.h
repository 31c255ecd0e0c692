#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::audit {

// An upper bound on a metric: value < limit (strict) or value <= limit (inclusive). Unset bounds
// accept everything.
struct Bound {
  bool set = false;
  double limit = 0;
  bool inclusive = false;

  static Bound Below(double v) { return {true, v, false}; }
  static Bound AtMost(double v) { return {true, v, true}; }
  bool Accepts(double v) const { return !set || (inclusive ? v <= limit : v < limit); }
};

// One grade (S7.2): the bounds a node's energy ratio (kW per TOPS) and scheduling deviation rate
// (%) must both meet, and the weight the grade gives the node in scheduling.
struct GradeRow {
  std::string name;
  Bound energy_ratio;   // kW/TOPS
  Bound deviation_pct;  // %
  double weight = 1.0;
};

// The names of the two grade criteria, as the raw metrics (RawMetricNames) call them.
inline constexpr std::string_view kEnergyRatioCriterion = "energy_ratio_kw_per_tops";
inline constexpr std::string_view kDeviationCriterion = "scheduling_deviation_pct";

// What GradeTable::Decide awarded and on what evidence.
struct GradeDecision {
  const GradeRow* row = nullptr;          // the grade, a row of the table; never null
  std::vector<std::string_view> missing;  // criteria not measured, energy ratio first
  // True when a better row than `row` was withheld only because it bounds a missing criterion
  // (its measured bounds were met): the grade was capped by the partial-evidence rule.
  bool capped = false;
};

// GradeTable: rows tried in order; a node gets the first row whose bounds it meets. The last row
// has no bounds (the catch-all), so every node gets a grade.
// Seed defaults (S7.2): excellent (< 0.18 kW/TOPS and < 2.1 %, weight 1.25), good (<= 0.25 and
// <= 4.5 %, 1.00), needs_optimization (anything else, 0.75).
//
// Partial evidence (no grade without its evidence): a criterion that was not measured (nullopt:
// no scheduling records, no power samples) cannot be checked against a bound. A row that bounds
// a missing criterion is awarded only if it is not better than the partial-evidence cap, and then
// on its measured bounds alone; a row above the cap that bounds a missing criterion is skipped.
// A row that bounds only measured criteria is judged as usual, at any position. So:
//   - a node lacking a criterion is never graded better than the cap through an unchecked bound,
//     and never worse than its measured criteria say (the rows from the cap down stay reachable);
//   - the cap is `partial_evidence_cap`, or when that is empty the first row that is not the best
//     (rows[1]; rows[0] for a one-row table). Seed table: a node with no scheduling records and
//     0.10 kW/TOPS is "good" (1.00), not "excellent"; at 0.30 kW/TOPS it is
//     "needs_optimization". 2 rows (best, catch-all): a node lacking a criterion the best row
//     bounds gets the catch-all. 4 rows: at best the second row (unless the best row does not
//     bound the missing criterion).
//   - with nothing measured, the cap row (no measured bound can demote the node below it).
// Thread-safety: a value type.
struct GradeTable {
  std::vector<GradeRow> rows;
  // Name of the best grade a node lacking a criterion can get from a row that bounds it; empty:
  // rows[1] (rows[0] when there is only one row). YAML: `partial_evidence_cap`.
  std::string partial_evidence_cap;

  static GradeTable SeedDefault();
  // Errors (kInvalidArgument, naming the row and key): no rows, duplicate or empty names,
  // weight <= 0, negative bounds, a last row with bounds, a non-last row without any bound, a
  // partial_evidence_cap naming no row or naming the best row of a table with several rows
  // (that would award the best grade on unchecked bounds).
  Status Validate() const;
  // Index of the partial-evidence cap row. REQUIRES: Validate().ok().
  std::size_t PartialEvidenceCapIndex() const;
  // Grades a node from its measured criteria (nullopt: not measured), applying the
  // partial-evidence rule above. REQUIRES: Validate().ok().
  GradeDecision Decide(std::optional<double> energy_ratio,
                       std::optional<double> deviation_pct) const;
  // The grade row of Decide(). REQUIRES: Validate().ok().
  const GradeRow& Grade(std::optional<double> energy_ratio,
                        std::optional<double> deviation_pct) const {
    return *Decide(energy_ratio, deviation_pct).row;
  }
};

}  // namespace seedance::audit
