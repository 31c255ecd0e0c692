#pragma once

#include <string>
#include <utility>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::sim {

// LinearProgram: a small RAII wrapper over GLPK for the LPs of the simulator (Gavel's allocation,
// the cost lower bound) and the planner's allocation ILP (integer columns + SolveInteger).
// Columns and rows are 0-based here.
class LinearProgram {
 public:
  enum class Sense { kMinimize, kMaximize };
  explicit LinearProgram(Sense sense);
  ~LinearProgram();
  LinearProgram(const LinearProgram&) = delete;
  LinearProgram& operator=(const LinearProgram&) = delete;

  // Adds a column lo <= x <= hi (hi = infinity for none) with objective coefficient `cost`.
  int AddColumn(double cost, double lo, double hi);
  // Adds a row lo <= sum coef * x <= hi (use -inf / inf for one-sided rows).
  int AddRow(const std::vector<std::pair<int, double>>& terms, double lo, double hi);
  void SetObjective(int col, double cost);
  void ClearObjective();

  // Marks `col` integer (used by SolveInteger only; Solve relaxes it).
  void SetInteger(int col);

  // Solves (presolve + simplex). Errors: kInternal when GLPK fails or the LP is infeasible.
  Status Solve();
  // Solves the mixed-integer program to proven optimality (GLPK branch and cut, relative gap 0)
  // after its LP relaxation. Errors: kFailedPrecondition when it is infeasible, kInternal when
  // GLPK fails.
  Status SolveInteger();
  double objective() const { return objective_; }
  double value(int col) const { return values_[static_cast<std::size_t>(col)]; }
  int columns() const { return columns_; }
  int rows() const { return rows_; }

 private:
  void LoadMatrix();  // hands the rows added so far to GLPK (once per change)

  void* lp_;  // glp_prob*
  int columns_ = 0;
  int rows_ = 0;
  double objective_ = 0;
  std::vector<double> values_;
  std::vector<int> ia_, ja_;
  std::vector<double> ar_;
  bool loaded_ = false;
};

}  // namespace seedance::sim
