// Gavel's cost policies (max_sum_throughput_normalized_by_cost_perf[_SLOs]) against an independent
// solver: every vertex of the same LP enumerated (choose as many active constraints as there are
// variables, solve, keep the feasible ones), the best taken. Cases: the inputs of Gavel's own test
// (stanford-futuredata/gavel scheduler/tests/policies_tests.py, test_throughput_sum_normalized_by_cost
// and ..._with_SLOs, commit c4fa40097339e9608ab71fd64c8bdea96a5e4a4c; that test checks no numbers,
// the expected allocation here is worked by hand), a binding SLO, an infeasible SLO (Gavel solves
// again without the SLO rows), gangs, and random small instances.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "seedance/core/rng.h"
#include "seedance/sim/policies/gavel_policies.h"

namespace seedance::sim {
namespace {

struct Row {
  std::vector<double> a;  // over the flattened x[j * types + k]
  double b = 0;
  bool at_least = false;  // a.x >= b (an SLO row); otherwise a.x <= b
};

// Solves A x = b (square) by Gaussian elimination with partial pivoting; false when singular.
bool SolveSquare(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>* x) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < n; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    }
    if (std::fabs(a[piv][c]) < 1e-12) return false;
    std::swap(a[piv], a[c]);
    std::swap(b[piv], b[c]);
    for (std::size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  x->resize(n);
  for (std::size_t i = 0; i < n; ++i) (*x)[i] = b[i] / a[i][i];
  return true;
}

struct BruteForce {
  double best = -std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> optimal_vertices;  // distinct vertices attaining `best`
};

// The LP of GavelCostProblem, written out independently, solved by enumerating its vertices.
BruteForce EnumerateVertices(const GavelCostProblem& p, bool with_slos) {
  const std::size_t n = p.throughput.size();
  const std::size_t t = p.workers.size();
  const std::size_t v = n * t;
  std::vector<double> c(v);
  std::vector<Row> rows;
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t k = 0; k < t; ++k) c[j * t + k] = p.throughput[j][k] / p.cost[k];
  }
  for (std::size_t i = 0; i < v; ++i) {  // x >= 0, written -x <= 0
    Row r{std::vector<double>(v, 0.0), 0.0, false};
    r.a[i] = -1;
    rows.push_back(r);
  }
  for (std::size_t j = 0; j < n; ++j) {  // a job's shares sum to at most 1
    Row r{std::vector<double>(v, 0.0), 1.0, false};
    for (std::size_t k = 0; k < t; ++k) r.a[j * t + k] = 1;
    rows.push_back(r);
  }
  for (std::size_t k = 0; k < t; ++k) {  // workers of a type, gangs counted by their GPUs
    Row r{std::vector<double>(v, 0.0), p.workers[k], false};
    for (std::size_t j = 0; j < n; ++j) r.a[j * t + k] = p.scale_factor[j];
    rows.push_back(r);
  }
  for (std::size_t j = 0; with_slos && j < n; ++j) {
    if (!(p.min_throughput[j] > 0)) continue;
    Row r{std::vector<double>(v, 0.0), p.min_throughput[j], true};
    for (std::size_t k = 0; k < t; ++k) r.a[j * t + k] = p.throughput[j][k];
    rows.push_back(r);
  }
  for (std::size_t j = 0; j < n; ++j) {  // a type the job cannot run on: x = 0 (as the policy)
    for (std::size_t k = 0; k < t; ++k) {
      if (p.throughput[j][k] > 0) continue;
      Row r{std::vector<double>(v, 0.0), 0.0, false};
      r.a[j * t + k] = 1;
      rows.push_back(r);
    }
  }
  BruteForce out;
  std::vector<bool> pick(rows.size(), false);
  std::fill(pick.begin(), pick.begin() + static_cast<std::ptrdiff_t>(v), true);
  std::vector<std::vector<double>> vertices;
  do {
    std::vector<std::vector<double>> a;
    std::vector<double> b;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!pick[i]) continue;
      a.push_back(rows[i].a);
      b.push_back(rows[i].b);
    }
    std::vector<double> x;
    if (!SolveSquare(a, b, &x)) continue;
    bool feasible = true;
    for (const Row& r : rows) {
      double lhs = 0;
      for (std::size_t i = 0; i < v; ++i) lhs += r.a[i] * x[i];
      feasible = feasible && (r.at_least ? lhs >= r.b - 1e-9 : lhs <= r.b + 1e-9);
    }
    if (!feasible) continue;
    double obj = 0;
    for (std::size_t i = 0; i < v; ++i) obj += c[i] * x[i];
    if (obj > out.best + 1e-9) {
      out.best = obj;
      out.optimal_vertices.clear();
    }
    if (obj >= out.best - 1e-9) {
      bool seen = false;
      for (const auto& o : out.optimal_vertices) {
        double d = 0;
        for (std::size_t i = 0; i < v; ++i) d = std::max(d, std::fabs(o[i] - x[i]));
        seen = seen || d < 1e-9;
      }
      if (!seen) out.optimal_vertices.push_back(x);
    }
  } while (std::prev_permutation(pick.begin(), pick.end()));
  return out;
}

double Objective(const GavelCostProblem& p, const std::vector<std::vector<double>>& x) {
  double obj = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    for (std::size_t k = 0; k < x[j].size(); ++k) obj += p.throughput[j][k] / p.cost[k] * x[j][k];
  }
  return obj;
}

void ExpectFeasible(const GavelCostProblem& p, const GavelCostSolution& s) {
  for (std::size_t k = 0; k < p.workers.size(); ++k) {
    double used = 0;
    for (std::size_t j = 0; j < s.x.size(); ++j) used += p.scale_factor[j] * s.x[j][k];
    EXPECT_LE(used, p.workers[k] + 1e-7) << "type " << k;
  }
  for (std::size_t j = 0; j < s.x.size(); ++j) {
    double sum = 0;
    for (double share : s.x[j]) sum += share;
    EXPECT_LE(sum, 1 + 1e-7) << "job " << j;
  }
}

// Our solution attains the enumerated optimum; when that optimum is a single vertex, it is it.
void ExpectMatchesBruteForce(const GavelCostProblem& p, bool with_slos, const GavelCostSolution& s) {
  const BruteForce bf = EnumerateVertices(p, with_slos);
  ASSERT_FALSE(bf.optimal_vertices.empty());
  ExpectFeasible(p, s);
  EXPECT_NEAR(Objective(p, s.x), bf.best, 1e-7);
  EXPECT_NEAR(s.objective, bf.best, 1e-7);
  if (bf.optimal_vertices.size() == 1) {
    const std::size_t t = p.workers.size();
    for (std::size_t j = 0; j < s.x.size(); ++j) {
      for (std::size_t k = 0; k < t; ++k) EXPECT_NEAR(s.x[j][k], bf.optimal_vertices[0][j * t + k], 1e-7);
    }
  }
}

// Gavel's test inputs; its worker types sorted by name: k80, p100, v100.
GavelCostProblem GavelFixture() {
  GavelCostProblem p;
  p.throughput = {{0.5, 1.0, 2.0}, {1.0, 2.0, 3.0}};
  p.scale_factor = {1, 1};
  p.workers = {1, 1, 1};
  p.cost = {0.8, 2.0, 3.1};
  return p;
}

TEST(GavelCost, GavelsOwnTestInputsGiveTheHandWorkedAllocation) {
  const GavelCostProblem p = GavelFixture();
  auto s = SolveGavelCost(p);
  ASSERT_TRUE(s.has_value()) << s.error().ToString();
  // By hand: throughput per dollar is 0.625 / 0.5 / 0.645 (job 0) and 1.25 / 1.0 / 0.968 (job 1)
  // on k80 / p100 / v100, one worker each. Job 1 on k80 and job 0 on v100 (1.895) beats every
  // other assignment (p100 + k80: 1.625; v100 + k80: 1.593), and the assignment polytope's
  // vertices are integral, so the optimum is that one point.
  const std::vector<std::vector<double>> expected = {{0, 0, 1}, {1, 0, 0}};
  for (std::size_t j = 0; j < 2; ++j) {
    for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(s->x[j][k], expected[j][k], 1e-9) << j << "," << k;
  }
  EXPECT_NEAR(s->objective, 2.0 / 3.1 + 1.0 / 0.8, 1e-9);
  EXPECT_FALSE(s->slos_dropped);
  ExpectMatchesBruteForce(p, false, *s);
}

TEST(GavelCost, GavelsSloTestInputsAreSlackAndChangeNothing) {
  GavelCostProblem p = GavelFixture();
  p.min_throughput = {100.0 / 1000.0, 0};  // SLOs={0: 1000}, num_steps_remaining={0: 100}
  auto s = SolveGavelCost(p);
  ASSERT_TRUE(s.has_value());
  EXPECT_NEAR(s->x[0][2], 1.0, 1e-9);
  EXPECT_NEAR(s->x[1][0], 1.0, 1e-9);
  EXPECT_FALSE(s->slos_dropped);
  ExpectMatchesBruteForce(p, true, *s);
}

TEST(GavelCost, ABindingSloMovesTheJobToTheFasterType) {
  // Types v100 ($3), k80 ($1); one worker each. Without SLOs: job 0 on v100 (4/3), job 1 on k80
  // (2/1). Job 1 must make 2.5 steps/s, more than k80 gives it (2), so it takes part of v100.
  GavelCostProblem p;
  p.throughput = {{4, 1}, {3, 2}};
  p.scale_factor = {1, 1};
  p.workers = {1, 1};
  p.cost = {3, 1};
  auto free = SolveGavelCost(p);
  ASSERT_TRUE(free.has_value());
  EXPECT_NEAR(free->x[0][0], 1, 1e-9);
  EXPECT_NEAR(free->x[1][1], 1, 1e-9);
  p.min_throughput = {0, 2.5};
  auto s = SolveGavelCost(p);
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->slos_dropped);
  EXPECT_GE(3 * s->x[1][0] + 2 * s->x[1][1], 2.5 - 1e-7);
  EXPECT_GT(s->x[1][0], 0.1);
  EXPECT_LT(s->objective, free->objective - 1e-6);
  ExpectMatchesBruteForce(p, true, *s);
}

TEST(GavelCost, AnInfeasibleSloIsDroppedAsGavelDoes) {
  GavelCostProblem p = GavelFixture();
  p.min_throughput = {10.0, 0};  // job 0 makes at most 2 steps/s
  auto s = SolveGavelCost(p);
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->slos_dropped);
  ExpectMatchesBruteForce(p, false, *s);  // the LP without SLO rows
}

TEST(GavelCost, GangsShareAWorkerTypeByTheirScaleFactors) {
  // Three 2-GPU jobs, 3 GPUs of the cheap-per-step type: fractional shares (vertices at 1/2).
  GavelCostProblem p;
  p.throughput = {{1, 3}, {1.2, 3.1}, {0.9, 2.0}};
  p.scale_factor = {2, 2, 2};
  p.workers = {3, 8};
  p.cost = {0.5, 3.0};
  auto s = SolveGavelCost(p);
  ASSERT_TRUE(s.has_value());
  ExpectMatchesBruteForce(p, false, *s);
  double cheap = 0;
  for (const auto& x : s->x) cheap += 2 * x[0];
  EXPECT_NEAR(cheap, 3.0, 1e-7);  // the cheap type is full
}

// Gavel's own code (scheduler/policies/max_sum_throughput.py at the commit above, run with cvxpy
// 1.9.3 and ECOS 2.0.14, 2026-12-04) on the cases above gives these allocations, to ~1e-9; each
// of these optima is a single point, so GLPK's vertex must be the same point.
TEST(GavelCost, UpstreamGavelGivesTheSameAllocations) {
  struct Case {
    GavelCostProblem p;
    std::vector<std::vector<double>> gavel_x;
  };
  std::vector<Case> cases;
  cases.push_back({GavelFixture(), {{0, 0, 1}, {1, 0, 0}}});
  GavelCostProblem binding;
  binding.throughput = {{1, 4}, {2, 3}};  // k80, v100 (Gavel's name order)
  binding.scale_factor = {1, 1};
  binding.workers = {1, 1};
  binding.cost = {1, 3};
  binding.min_throughput = {0, 2.5};  // SLOs={1: 1.0}, num_steps_remaining={1: 2.5}
  cases.push_back({binding, {{0.5, 0.5}, {0.5, 0.5}}});
  GavelCostProblem infeasible = GavelFixture();
  infeasible.min_throughput = {10.0, 0};  // SLOs={0: 1.0}, num_steps_remaining={0: 10}
  cases.push_back({infeasible, {{0, 0, 1}, {1, 0, 0}}});
  GavelCostProblem gangs;
  gangs.throughput = {{1, 3}, {1.2, 3.1}, {0.9, 2.0}};
  gangs.scale_factor = {2, 2, 2};
  gangs.workers = {3, 8};
  gangs.cost = {0.5, 3.0};
  cases.push_back({gangs, {{0, 1}, {1, 0}, {0.5, 0.5}}});
  for (std::size_t c = 0; c < cases.size(); ++c) {
    auto s = SolveGavelCost(cases[c].p);
    ASSERT_TRUE(s.has_value()) << "case " << c;
    for (std::size_t j = 0; j < s->x.size(); ++j) {
      for (std::size_t k = 0; k < s->x[j].size(); ++k) {
        EXPECT_NEAR(s->x[j][k], cases[c].gavel_x[j][k], 1e-7) << "case " << c << " job " << j << " type " << k;
      }
    }
  }
}

TEST(GavelCost, RandomSmallInstancesMatchVertexEnumeration) {
  Rng rng(29);
  int with_binding_slo = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t n = 2 + static_cast<std::size_t>(rng.Uniform(2));      // 2-3 jobs
    const std::size_t t = n == 3 ? 2 : 2 + static_cast<std::size_t>(rng.Uniform(2));  // 2-3 types
    GavelCostProblem p;
    for (std::size_t k = 0; k < t; ++k) {
      p.workers.push_back(static_cast<double>(1 + rng.Uniform(4)));
      p.cost.push_back(0.3 + 3.0 * rng.UniformDouble());
    }
    for (std::size_t j = 0; j < n; ++j) {
      std::vector<double> thr(t);
      for (auto& x : thr) x = rng.Bernoulli(0.15) ? 0.0 : 0.2 + 4.0 * rng.UniformDouble();
      if (*std::max_element(thr.begin(), thr.end()) == 0) thr[0] = 1.0;
      p.throughput.push_back(thr);
      p.scale_factor.push_back(rng.Bernoulli(0.5) ? 2 : 1);
      const double fastest = *std::max_element(thr.begin(), thr.end());
      p.min_throughput.push_back(rng.Bernoulli(0.4) ? fastest * (0.2 + 0.7 * rng.UniformDouble()) : 0.0);
    }
    auto s = SolveGavelCost(p);
    ASSERT_TRUE(s.has_value()) << "trial " << trial;
    SCOPED_TRACE("trial " + std::to_string(trial));
    ExpectMatchesBruteForce(p, !s->slos_dropped, *s);
    if (!s->slos_dropped) {
      GavelCostProblem free = p;
      free.min_throughput.clear();
      auto f = SolveGavelCost(free);
      ASSERT_TRUE(f.has_value());
      if (f->objective > s->objective + 1e-6) ++with_binding_slo;
    }
  }
  EXPECT_GT(with_binding_slo, 3);  // the SLO rows were exercised, not only slack
}

}  // namespace
}  // namespace seedance::sim
