#include "seedance/batching/profile.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

namespace seedance::batching {

Curve::Curve(std::vector<double> xs, std::vector<double> ys) {
  SEEDANCE_CHECK(xs.size() == ys.size());
  std::map<double, std::pair<double, int>> acc;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    auto& slot = acc[xs[i]];
    slot.first += ys[i];
    slot.second += 1;
  }
  for (const auto& [x, sum_n] : acc) {
    xs_.push_back(x);
    ys_.push_back(sum_n.first / sum_n.second);
  }
}

double Curve::At(double x) const {
  SEEDANCE_CHECK(!xs_.empty());
  if (xs_.size() == 1) return ys_[0];
  auto it = std::upper_bound(xs_.begin(), xs_.end(), x);
  std::size_t hi = static_cast<std::size_t>(it - xs_.begin());
  hi = std::clamp<std::size_t>(hi, 1, xs_.size() - 1);
  const std::size_t lo = hi - 1;
  const double t = (x - xs_[lo]) / (xs_[hi] - xs_[lo]);
  return std::max(0.0, ys_[lo] + t * (ys_[hi] - ys_[lo]));
}

Result<Curve> LoadCurve(const CsvTable& table, std::string_view key,
                        const std::vector<std::string>& value_columns,
                        std::string_view filter_column, std::string_view filter_value) {
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t key_col, table.ColumnIndex(key));
  std::vector<std::size_t> cols;
  for (const auto& c : value_columns) {
    SEEDANCE_ASSIGN_OR_RETURN(std::size_t idx, table.ColumnIndex(c));
    cols.push_back(idx);
  }
  std::ptrdiff_t filter_col = -1;
  if (!filter_column.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(std::size_t idx, table.ColumnIndex(filter_column));
    filter_col = static_cast<std::ptrdiff_t>(idx);
  }
  std::vector<double> xs;
  std::vector<double> ys;
  for (const auto& row : table.rows()) {
    if (filter_col >= 0 && table.Str(row, static_cast<std::size_t>(filter_col)) != filter_value) {
      continue;
    }
    SEEDANCE_ASSIGN_OR_RETURN(double x, table.Double(row, key_col));
    if (!std::isfinite(x) || x < 0) return table.FieldError(row, key_col, "must be >= 0");
    double y = 0;
    for (std::size_t c : cols) {
      SEEDANCE_ASSIGN_OR_RETURN(double v, table.Double(row, c));
      if (!std::isfinite(v) || v < 0) return table.FieldError(row, c, "must be >= 0");
      y += v;
    }
    xs.push_back(x);
    ys.push_back(y);
  }
  if (xs.empty()) {
    return InvalidArgumentError(fmt::format("{}: no rows with {} = '{}'", table.name(),
                                            filter_column, filter_value));
  }
  return Curve(std::move(xs), std::move(ys));
}

Result<std::vector<double>> LeastSquares(const std::vector<std::vector<double>>& a,
                                         const std::vector<double>& b) {
  SEEDANCE_CHECK(a.size() == b.size() && !a.empty());
  const std::size_t n = a[0].size();
  // Normal equations, augmented: [A^T A | A^T b].
  std::vector<std::vector<double>> m(n, std::vector<double>(n + 1, 0.0));
  for (std::size_t r = 0; r < a.size(); ++r) {
    SEEDANCE_CHECK(a[r].size() == n);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) m[i][j] += a[r][i] * a[r][j];
      m[i][n] += a[r][i] * b[r];
    }
  }
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r) {
      if (std::abs(m[r][col]) > std::abs(m[pivot][col])) pivot = r;
    }
    if (std::abs(m[pivot][col]) < 1e-300) return InvalidArgumentError("singular least squares");
    std::swap(m[col], m[pivot]);
    for (std::size_t r = 0; r < n; ++r) {
      if (r == col) continue;
      const double f = m[r][col] / m[col][col];
      for (std::size_t j = col; j <= n; ++j) m[r][j] -= f * m[col][j];
    }
  }
  std::vector<double> c(n);
  for (std::size_t i = 0; i < n; ++i) c[i] = m[i][n] / m[i][i];
  return c;
}

}  // namespace seedance::batching
