#include "seedance/sim/lp.h"

#include <glpk.h>

#include <cmath>

namespace seedance::sim {
namespace {
glp_prob* P(void* p) { return static_cast<glp_prob*>(p); }
}  // namespace

LinearProgram::LinearProgram(Sense sense) : lp_(glp_create_prob()) {
  glp_set_obj_dir(P(lp_), sense == Sense::kMinimize ? GLP_MIN : GLP_MAX);
  ia_.push_back(0);  // GLPK arrays are 1-based
  ja_.push_back(0);
  ar_.push_back(0);
}

LinearProgram::~LinearProgram() { glp_delete_prob(P(lp_)); }

int LinearProgram::AddColumn(double cost, double lo, double hi) {
  int j = glp_add_cols(P(lp_), 1);
  if (std::isinf(hi)) {
    glp_set_col_bnds(P(lp_), j, GLP_LO, lo, 0.0);
  } else if (lo == hi) {
    glp_set_col_bnds(P(lp_), j, GLP_FX, lo, hi);
  } else {
    glp_set_col_bnds(P(lp_), j, GLP_DB, lo, hi);
  }
  glp_set_obj_coef(P(lp_), j, cost);
  ++columns_;
  return j - 1;
}

int LinearProgram::AddRow(const std::vector<std::pair<int, double>>& terms, double lo, double hi) {
  int i = glp_add_rows(P(lp_), 1);
  bool has_lo = !std::isinf(lo);
  bool has_hi = !std::isinf(hi);
  int type = has_lo && has_hi ? (lo == hi ? GLP_FX : GLP_DB) : has_lo ? GLP_LO : has_hi ? GLP_UP : GLP_FR;
  glp_set_row_bnds(P(lp_), i, type, has_lo ? lo : 0.0, has_hi ? hi : 0.0);
  for (const auto& [col, coef] : terms) {
    ia_.push_back(i);
    ja_.push_back(col + 1);
    ar_.push_back(coef);
  }
  ++rows_;
  loaded_ = false;
  return i - 1;
}

void LinearProgram::SetObjective(int col, double cost) { glp_set_obj_coef(P(lp_), col + 1, cost); }

void LinearProgram::ClearObjective() {
  for (int j = 1; j <= columns_; ++j) glp_set_obj_coef(P(lp_), j, 0.0);
}

void LinearProgram::LoadMatrix() {
  if (!loaded_) {
    glp_load_matrix(P(lp_), static_cast<int>(ia_.size()) - 1, ia_.data(), ja_.data(), ar_.data());
    loaded_ = true;
  }
}

void LinearProgram::SetInteger(int col) { glp_set_col_kind(P(lp_), col + 1, GLP_IV); }

Status LinearProgram::SolveInteger() {
  LoadMatrix();
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;  // solves the relaxation itself
  parm.mip_gap = 0.0;
  const int rc = glp_intopt(P(lp_), &parm);
  const int status = glp_mip_status(P(lp_));
  if (rc == GLP_ENOPFS || rc == GLP_ENODFS || status == GLP_NOFEAS) {
    return FailedPreconditionError("the integer program is infeasible");
  }
  if (rc != 0 || status != GLP_OPT) {
    return InternalError("GLPK branch and cut failed (rc " + std::to_string(rc) + ", status " +
                         std::to_string(status) + ")");
  }
  objective_ = glp_mip_obj_val(P(lp_));
  values_.resize(static_cast<std::size_t>(columns_));
  for (int j = 1; j <= columns_; ++j) values_[static_cast<std::size_t>(j - 1)] = glp_mip_col_val(P(lp_), j);
  return Status::Ok();
}

Status LinearProgram::Solve() {
  LoadMatrix();
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_OFF;
  int rc = glp_simplex(P(lp_), &parm);
  if (rc != 0 || glp_get_status(P(lp_)) != GLP_OPT) {
    // Retry from scratch with presolve (handles a bad warm start, and a wrong verdict of
    // infeasibility reached from one).
    glp_std_basis(P(lp_));
    parm.presolve = GLP_ON;
    rc = glp_simplex(P(lp_), &parm);
  }
  if (rc != 0 || glp_get_status(P(lp_)) != GLP_OPT) {
    return InternalError("GLPK simplex failed (rc " + std::to_string(rc) + ", status " +
                         std::to_string(glp_get_status(P(lp_))) + ")");
  }
  objective_ = glp_get_obj_val(P(lp_));
  values_.resize(static_cast<std::size_t>(columns_));
  for (int j = 1; j <= columns_; ++j) values_[static_cast<std::size_t>(j - 1)] = glp_get_col_prim(P(lp_), j);
  return Status::Ok();
}

}  // namespace seedance::sim
