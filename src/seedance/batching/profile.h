#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/csv.h"
#include "seedance/core/status.h"

namespace seedance::batching {

// Curve: a measured quantity y(x) on sorted, distinct x, evaluated by piecewise-linear
// interpolation. Outside the measured range it extrapolates the first / last segment
// (clamped at 0 below), so a profile measured up to 4,096 tokens still prices a padded
// 8,192-token static batch by its measured per-token slope.
// Thread-safety: immutable after construction.
class Curve {
 public:
  Curve() = default;
  // Builds from (x, y) pairs in any order; equal x values are averaged.
  // REQUIRES: xs.size() == ys.size().
  Curve(std::vector<double> xs, std::vector<double> ys);

  // Returns the interpolated value at x. REQUIRES: !empty().
  double At(double x) const;
  bool empty() const { return xs_.empty(); }
  const std::vector<double>& xs() const { return xs_; }
  const std::vector<double>& ys() const { return ys_; }

 private:
  std::vector<double> xs_;
  std::vector<double> ys_;
};

// Loads one curve from CSV columns: x = `key`, y = the sum of `value_columns` on each row.
// Rows where `filter_column` (if not empty) differs from `filter_value` are skipped. The
// same loader reads the Vidur profiles and the seed's batch table.
// Errors: kInvalidArgument naming file:line:column and field for a non-numeric, negative or
// non-finite value, a missing column, or no matching rows.
Result<Curve> LoadCurve(const CsvTable& table, std::string_view key,
                        const std::vector<std::string>& value_columns,
                        std::string_view filter_column = {}, std::string_view filter_value = {});

// Solves the least-squares problem min |A c - b| by the normal equations (small, well-scaled
// systems only: a handful of features). Returns the coefficients, or kInvalidArgument when
// A^T A is singular. REQUIRES: every row of `a` has the same size.
Result<std::vector<double>> LeastSquares(const std::vector<std::vector<double>>& a,
                                         const std::vector<double>& b);

}  // namespace seedance::batching
