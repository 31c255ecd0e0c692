#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/planner/allocation.h"
#include "seedance/planner/capacity.h"
#include "seedance/planner/workload.h"

// `seedance plan`: the cheapest GPU mix for a traffic trace at its SLOs, with capacities the
// batching engine measured, verified by replaying the trace on the chosen fleet.
namespace seedance::planner {

// Routers of the verification replay (and of the burst calibration). kRouterInput, the default,
// knows what a real router knows when a request arrives: its prompt length. It routes by input
// bucket, each input row's traffic split over GPU types in proportion to the plan's slices
// summed over that row's output buckets (smooth weighted round robin, ties to the lower option).
// kRouterOutputOracle is Mélange's load balancer: it also knows the request's true output length
// and routes by the full (input, output) bucket, an oracle no real router has.
inline constexpr const char* kRouterInput = "input";
inline constexpr const char* kRouterOutputOracle = "output-oracle";

struct PlanConfig {
  std::string data_dir;
  std::string trace = "conv";        // path, or bundled: conv | code (Azure), arena (Mélange's Arena lengths)
  double slo_ttft_s = 2.0;
  double slo_tpot_s = 0.12;
  double rate_rps = 0;               // 0: the trace's own rate (lengths-only traces: 1 req/s)
  // GPU types to mix; empty: l4, a10g, a100, h100, leaving out (and saying so) those that cannot
  // hold the model. A listed type that cannot hold it is an error.
  std::vector<std::string> gpus;
  bool spot = false;
  std::string grid = "melange";      // melange | fine
  int slice_factor = 8;
  std::string policy = "vllm";       // batching policy of every replica (profiling and replay)
  std::string prices_path;           // empty: the bundled price table
  // A fleet file (docs/FLEET_FILE.md): each type at the fleet's price (its on-demand pool's, else
  // its owned pool's TCO or stated price, else its reserved price; spot at its spot pool's price);
  // a type the fleet has no pool of is an error. Empty: the price table's list prices.
  std::string fleet_path;
  std::string cache_dir;             // capacity profiles (empty: no cache)
  ProbeOptions probe;
  std::uint64_t seed = 42;           // verification: arrivals (lengths-only traces), step noise
  double verify_s = 1800;            // lengths-only traces: seconds of Poisson arrivals replayed
  bool verify = true;
  std::string model = "llama-2-7b";  // batching::KnownModels(); sets the context length
  int tp = 0;                        // GPUs per replica for every type; 0: per type, the smallest
                                     // that holds the weights + one full-context sequence of KV
  std::string profile_dir;           // compute profiles in Vidur's layout (<dir>/<gpu>/<org>/<model>/mlp.csv)
                                     // instead of the bundled ones
  // A day's rate curve (CSV start_s,rate_rps; periods [start_i, start_i+1), the last to 86,400 s):
  // the main plan is for its peak; DayPlan compares a static peak fleet with a fleet resized every
  // period (GPUs added at a boundary are billed from cold_start_s before it).
  std::string rate_curve;
  double cold_start_s = 180;
  std::string router = kRouterInput;  // input | output-oracle (see above)
  bool calibrate = true;             // size for bursts: raise the planned rate until the replay holds
  double target_attainment = 0.995;  // on the calibration half
};

struct MixEntry {
  std::string gpu;                   // price-table spelling (L4, A10G, A100-80G, H100)
  int count = 0;                     // replicas (of `tp` GPUs each)
  bool spot = false;
  double usd_per_hour = 0;           // price per GPU-hour used (spot: risk-priced)
  double load = 0;                   // fluid replicas of load
  double headroom = 0;               // 1 - load / count
  int tp = 1;                        // GPUs per replica
  int option = 0;                    // index of the pool in router_weights
};

struct CostPoint {                   // one rate of the cost-against-rate chart
  double rate_rps = 0;
  double mix_usd_per_hour = 0;
  double spot_usd_per_hour = 0;      // 0 when not planned with --spot
  double lower_bound_usd_per_hour = 0;
  std::vector<double> single_usd_per_hour;  // per GPU type (0: infeasible)
};

struct Verification {
  std::int64_t requests = 0, servable = 0, met = 0, lost_to_preemption = 0;
  std::int64_t over_context = 0;     // prompt + output > the model's context: not served, counted
  // Share of all replayed requests (over-context ones included) that met both SLOs.
  double MetOfAll() const {
    return requests > 0 ? static_cast<double>(met) / static_cast<double>(requests) : 0.0;
  }
  double slo_attainment = 0;
  double spot_window_start_s = -1;   // where in the spot series the replay started (spot plans)
  int preemptions = 0;               // spot GPUs lost during the replay
  double ttft_p99_s = 0, tpot_p99_s = 0;
};

struct DayPeriod {
  double start_s = 0, end_s = 0, rate_rps = 0;
  std::vector<int> count;            // GPUs per type (on demand) in this period
  double usd_per_hour = 0;
  double best_single_usd_per_hour = 0;  // the day's best single type, resized
};
struct DayPlan {
  std::vector<DayPeriod> periods;
  double static_peak_usd = 0;        // the peak plan held all day
  double autoscaled_usd = 0;         // mix resized every period, cold starts billed
  double autoscaled_single_usd = 0;  // the cheapest single type over the day, resized, cold starts billed
  std::string single_gpu;
  double boot_usd = 0;               // of autoscaled_usd: GPUs billed while booting
};

// Mélange's way on the same capacities: the mean rate, no burst calibration.
struct MeanRatePlan {
  double usd_per_hour = 0;
  std::vector<SingleType> single;    // ceil of the fluid load at the mean rate
  int best_single = -1;
  double saving_pct = 0;
  double held_out_attainment = -1;   // its fleet replayed on the held-out half (-1: not run)
};

struct PlanResult {
  PlanConfig config;
  Workload workload;
  double rate_rps = 0;
  std::vector<std::string> gpu_names;      // price-table spelling per type
  std::vector<double> od_price;            // on-demand $/h per type (price table)
  std::vector<double> spot_price;          // spot $/h per type (quote or kDefaultSpotRatio)
  std::vector<double> spot_availability;   // share of time a spot GPU of the type is there
  std::vector<CapacityTable> capacity;     // per type
  std::vector<MixEntry> mix;
  double usd_per_hour = 0;
  double usd_per_mtok = 0;
  double lower_bound_usd_per_hour = 0;     // fluid LP bound at the mean rate
  std::vector<SingleType> single;          // per type, on demand, each at its own burst factor
  int best_single = -1;
  double saving_pct = 0;                   // vs the best (calibrated) single type
  double max_saving_pct = 0;               // 1 - bound / best single at the mean rate
  double burst_factor = 1;                 // planned rate / mean rate of the chosen plan
  double calibration_attainment = -1;
  MeanRatePlan mean_rate;
  bool melange_input = false;
  DayPlan day;                             // with a rate curve
  bool has_day = false;
  double od_usd_per_hour = 0;              // the on-demand plan (equals usd_per_hour without --spot)
  double spot_plan_usd_per_hour = 0;       // the calibrated plan with spot options (kept only if cheaper)
  std::vector<CostPoint> curve;
  Verification verified;
  bool verified_run = false;
  // The same fleet replayed on the held-out half with the other router (output-oracle when the
  // plan was made with the input router, and vice versa), for comparison.
  std::string other_router;
  Verification verified_other_router;
  std::vector<std::string> assumptions;    // every modelling assumption behind the figures
  // Deployment: the model, its context, GPUs per replica per type (0: type left out), and the
  // router's pools (the solved options: on demand per type, then spot) with their weights per
  // router key (input bucket, or (input, output) bucket for the output-oracle router).
  std::string model;
  int max_context = 0;
  std::vector<int> tp;                     // per type
  std::vector<std::string> pool_names;     // per option, e.g. "A100-80G" or "H100 spot"
  std::vector<std::vector<double>> router_weights;  // [key][option]
  int max_num_batched_tokens = 0, max_num_seqs = 0, block_size = 0;
  bool chunked_prefill = false;
};

// Plans. Errors: kInvalidArgument / kNotFound for bad inputs (trace, GPU names, SLOs, rate);
// kFailedPrecondition when the SLOs cannot be met for some traffic (names the buckets, their
// rate and the best lone-request TTFT / TPOT any GPU reached against the SLO).
Result<PlanResult> Plan(const PlanConfig& config, std::ostream* progress);

// Solves a Mélange config and shapes the result like a plan (no profiling, no replay).
Result<PlanResult> PlanMelange(const std::string& path);

// plan.json: mix [{gpu, count, spot}], usd_per_hour, best_single {gpu, count, usd_per_hour},
// saving_pct, verified_slo_attainment (null when not replayed) and the rest of PlanResult.
// (The HTML report is report::PlanHtml.)
std::string PlanJson(const PlanResult& r);

}  // namespace seedance::planner
