#pragma once

#include <string>
#include <vector>

#include "seedance/core/status.h"

// The allocation problem of Mélange (arXiv 2404.14527; tyler-griggs/melange-release@d46ab43
// melange/solver.py) and its exact solution: traffic in request-size buckets, a capacity table
// per GPU option, the cheapest integer GPU counts. Beyond Mélange: spot options with an N-1
// reserve (the fleet still carries the whole load, rerouted fluidly, when any one spot pool is
// lost), per-option count limits.
namespace seedance::planner {

// One GPU option the solver may buy: a type at a price, on demand or spot.
struct GpuOption {
  std::string name;            // "L4", "A10G", ... (display and plan.json spelling)
  double usd_per_hour = 0;     // price per GPU-hour the objective uses (spot: risk-priced)
  bool spot = false;
  // tputs[b] = the most req/s of bucket b one GPU sustains at the SLOs; 0 = ineligible (the
  // bucket cannot meet the SLO on it at any rate). Size = buckets.
  std::vector<double> tputs;
  int max_count = -1;          // -1 = no limit
};

struct AllocationProblem {
  std::vector<double> rate;        // req/s per bucket (p_b x total rate)
  std::vector<std::string> bucket_names;  // for messages ("in (0,25] out (25,100]")
  std::vector<GpuOption> gpus;
  int slice_factor = 1;            // F: each bucket is cut into F equal slices
  // Spot reserve: for every spot option k the fleet without option k must still carry all
  // traffic (continuous re-split of every bucket over the remaining options).
  bool spot_reserve = true;
};

struct Allocation {
  std::vector<int> count;                 // per option
  std::vector<std::vector<int>> slices;   // [bucket][option]: slices of F assigned
  std::vector<double> load;               // per option: sum of r_s / T (GPUs of fluid load)
  double usd_per_hour = 0;
  // Per spot option k: the fluid re-split [bucket][option] of rates (req/s) the reserve
  // constraint found when k is lost (empty without spot options).
  std::vector<std::vector<std::vector<double>>> failover;
  std::vector<int> failover_option;       // the lost option of each failover entry
};

// Load of bucket b on option g per GPU, r / T; the epsilon every ceil uses (Mélange's example
// has a load of exactly 12.0 that floating sums put at 12.000000000000002).
inline constexpr double kLoadEpsilon = 1e-9;

// Solves the ILP to optimality (GLPK branch and cut). Identical slices are aggregated: y[b][g]
// in {0..F} integer with sum_g y[b][g] = F, sum_b y[b][g] r_b / (F T[g][b]) <= n_g, minimise
// sum_g c_g n_g; so the size is buckets x options, independent of the rate.
// Errors: kInvalidArgument when sizes disagree, a rate or price is negative or not finite;
// kFailedPrecondition naming every bucket with traffic that no option can serve (and its rate),
// or when count limits make it infeasible.
Result<Allocation> SolveAllocation(const AllocationProblem& problem);

// Mélange's single-type baseline: n = ceil(sum_b r_b / T[g][b]) GPUs of one option.
struct SingleType {
  int option = 0;
  bool feasible = false;     // every bucket with traffic is eligible on it
  double load = 0;
  int count = 0;
  double usd_per_hour = 0;
};
std::vector<SingleType> SingleTypeBaselines(const AllocationProblem& problem);
// The cheapest feasible single type (ties: lower option index); nullptr when none is.
const SingleType* BestSingle(const std::vector<SingleType>& baselines);

// The fluid lower bound of any mix (LP relaxation in x and n): sum_b r_b min_g c_g / T[g][b].
// No integer plan is cheaper, so saving vs a baseline B is at most 1 - bound / B.
double FluidLowerBound(const AllocationProblem& problem);

}  // namespace seedance::planner
