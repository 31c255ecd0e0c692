#pragma once

#include <optional>
#include <string>
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

// GradeTable: rows tried in order; a node gets the first row whose bounds it meets. The last row
// has no bounds (the catch-all), so every node gets a grade.
// Seed defaults (S7.2): excellent (< 0.18 kW/TOPS and < 2.1 %, weight 1.25), good (<= 0.25 and
// <= 4.5 %, 1.00), needs_optimization (anything else, 0.75).
// Thread-safety: a value type.
struct GradeTable {
  std::vector<GradeRow> rows;

  static GradeTable SeedDefault();
  // Errors (kInvalidArgument, naming the row and key): no rows, duplicate or empty names,
  // weight <= 0, negative bounds, a last row with bounds, a non-last row without any bound.
  Status Validate() const;
  // Returns the grade of a node. A deviation that was not measured (nullopt) meets every
  // deviation bound: the node is graded on its energy ratio alone.
  // REQUIRES: Validate().ok().
  const GradeRow& Grade(double energy_ratio, std::optional<double> deviation_pct) const;
};

}  // namespace seedance::audit
