#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/planner/capacity.h"

// The serving side of the fleet week (issue 30): LLM deployments whose traffic follows an
// hour-of-week shape times the Azure traces' own minute-scale bursts, replica capacities measured
// by the batching engine (planner's capacity profiles), the cheapest replica mix (Mélange's ILP),
// and the replica controllers: Kubernetes HPA on request rate (the standard stack) and Seedance's
// forecast-ahead controller. docs/FLEET_WEEK.md "Serving".
namespace seedance::fleet {

// Hour-of-week traffic shape: 168 factors with mean 1 (index 0 = the trace's first Monday 00:00).
struct WeeklyShape {
  std::vector<double> hourly;
  std::string source;  // the file it was read from
};
inline constexpr int kHoursPerWeek = 168;
// data/fleet_week/weekly_shape.csv (hour_of_week,factor): 168 rows, hours 0..167 in order,
// factors finite and >= 0 with mean 1 (within 1e-3). Errors: kNotFound (cannot open);
// kInvalidArgument naming file:line:column and the field.
Result<WeeklyShape> LoadWeeklyShape(const std::string& path);
// DataDir() + "/fleet_week/weekly_shape.csv".
std::string BundledWeeklyShapePath();

struct DeploymentSpec {
  std::string name;                 // "chat"
  std::string model = "llama-2-7b"; // a batching::KnownModels name
  std::string trace = "conv";       // bundled Azure trace: conv | code
  double mean_rate_rps = 0;         // mean over the week
  double slo_ttft_s = 2.0, slo_tpot_s = 0.12;
  std::vector<std::string> gpus;    // price-table spellings, e.g. {"L4","A10G","A100-80G","H100"}
};

// Per-step demand (step_s = 60) over `days` days of week `week` (0 = tuning week 1, 1 = held-out
// week 2): rps[k] = mean_rate_rps x shape.hourly[hour of week] x burst[(offset + k) mod
// burst.size()], where burst = the bundled Azure trace's own per-minute request counts normalised
// to mean 1 (the trace's first half in time for week 0 -- the planner's tuning half -- the second
// half for week >= 1), offset a seeded draw. Deterministic for (spec, week, seed).
struct Demand {
  double step_s = 60;
  std::vector<double> rps;
  double tokens_per_request = 0;    // mean prompt + output tokens of the half the bursts come from
  int week = 0;
  double Mean() const;
  double Peak() const;
};
// Errors: kInvalidArgument for a bad spec (mean rate <= 0, unknown trace, days outside (0, 7],
// week < 0, a shape without 168 factors); kNotFound when the trace is missing.
Result<Demand> BuildDemand(const DeploymentSpec& d, const WeeklyShape& shape, const std::string& data_dir,
                           int week, std::uint64_t seed, double days = 7);

// One replica (tp GPUs) per GPU type for the deployment's request mix under a batching policy
// ("vllm" or "seedance", both at the knob sweep's tuned knobs for the trace: TunedKnobsFor(trace,
// 16)), measured by the batching engine through planner's capacity profiles (MakeEngine /
// ProfileCapacity on the trace's tuning-half bucket histogram, Mélange's grid), cached in
// cache_dir (empty = no cache). Types that cannot hold the model are left out and said in notes.
struct ServingProfile {
  std::string policy;
  std::string model, trace;
  std::vector<std::string> gpus;    // kept types, price-table spelling
  std::vector<int> tp;              // GPUs per replica, per type
  std::vector<double> replica_rps;  // per type: req/s one replica serves at the SLOs for the whole
                                    // mix (1 / sum_b share_b / capacity_b; 0 when a bucket with
                                    // traffic is ineligible on the type)
  // What CheapestMix / ServedShare need: the request mix over Mélange's buckets (tuning half,
  // renormalised over the buckets some kept type serves) and one replica's capacity per bucket.
  std::vector<double> bucket_share;                // per bucket, sums to 1
  std::vector<std::string> bucket_names;
  std::vector<std::vector<double>> bucket_rps;     // [type][bucket], req/s of one replica; 0 = ineligible
  double unservable_share = 0;      // share of the tuning half no kept type serves at the SLOs
  double tokens_per_request = 0;    // mean prompt + output of the tuning half's servable requests
  double profile_seconds = 0;       // wall time ProfileServing took (cache hits included)
  std::vector<std::string> notes;   // assumptions, one line each
};
// Errors: kInvalidArgument for an unknown model, trace, policy or GPU spelling, SLOs <= 0;
// kFailedPrecondition when no listed type can hold the model or no bucket can be served.
Result<ServingProfile> ProfileServing(const DeploymentSpec& d, const std::string& policy,
                                      const std::string& data_dir, const std::string& cache_dir,
                                      std::ostream* progress,
                                      const planner::ProbeOptions& probe = planner::ProbeOptions());

// On-demand $/GPU-hour per profile type from the price table (empty path: the bundled one).
// Errors: kNotFound when the table lacks a type.
Result<std::vector<double>> OnDemandPrices(const ServingProfile& p, const std::string& prices_path = "");

struct ServingMix { std::vector<int> replicas; };  // per ServingProfile type

// The cheapest replicas per type serving `rps` of the mix (Mélange's ILP: planner::SolveAllocation
// over the bucket capacities, slice factor 8, no spot), usd_per_gpu_hour per profile type (a
// replica costs tp x that). rps <= 0: no replicas. Errors: kInvalidArgument when the price vector
// does not match the types or a price is negative / not finite.
Result<ServingMix> CheapestMix(const ServingProfile& p, double rps, const std::vector<double>& usd_per_gpu_hour);

// The most req/s of the mix `ready` serves within SLO (fluid: every bucket's traffic split over
// the ready replicas at their measured capacities, the split chosen to serve the largest common
// share of every bucket: an LP, or n x replica_rps for one type).
double MaxServedRps(const ServingProfile& p, const ServingMix& ready);
// The share in [0,1] of `rps` that the ready replicas serve within SLO: min(1, MaxServedRps / rps)
// (1 for rps <= 0).
double ServedShare(const ServingProfile& p, const ServingMix& ready, double rps);

// How many replicas to hold at step k, from the past only (past[i] = observed rps of step i < k).
struct ServingPolicy {
  std::string autoscaler = "reactive";  // reactive | predictive
  bool mix = false;                     // false: one GPU type (the cheapest single type for the tuning
                                        // week's peak), true: CheapestMix at the target rate
  double target_utilization = 0.7;      // reactive: HPA target (request rate per replica / capacity)
  double scale_down_window_s = 300;     // HPA's default scale-down stabilization window
  int min_replicas = 1;
  // predictive: provision max(forecast x headroom / capacity, the reactive recommendation at
  // target_utilization) for the steps the cold start hides.
  double headroom = 1.2;
};

class ServingController {
 public:
  // peak_rps: the tuning week's peak (sizes the single type; the HPA's maxReplicas is
  // ceil(2 x peak / (replica_rps x target_utilization))); prices per profile type.
  ServingController(const ServingProfile& p, const ServingPolicy& policy, std::vector<double> usd_per_gpu_hour,
                    double peak_rps, double step_s, double cold_start_s);
  // The replicas to hold from step k on. Reads past[0..k-1] only (past.size() may exceed k: the
  // rest is ignored). Deterministic: a function of (k, past[0..k-1]) and the construction.
  ServingMix Desired(std::size_t k, std::span<const double> past);
  std::string Describe() const;         // one line for the report
  // The single type (index into the profile) when !policy.mix; -1 when no type serves the mix.
  int single_type() const { return single_; }
  // The rate (req/s) Desired provisions for at step k (before rounding to replicas).
  double TargetRate(std::size_t k, std::span<const double> past) const;

 private:
  ServingMix ForRate(double rate);
  const ServingProfile* p_;
  ServingPolicy policy_;
  std::vector<double> prices_;
  double peak_rps_, step_s_, cold_start_s_;
  int single_ = -1;
  int max_replicas_ = 0;
  std::map<long long, ServingMix> mix_cache_;  // CheapestMix by rate bucket (see ForRate)
};

// A controller run over a demand: replicas asked for at step k serve from k + ceil(cold/step)
// (billed from k: booting GPUs are paid), removed at once when no longer wanted (the booting
// ones first); served share = sum_k min(rps_k, MaxServedRps(ready_k)) x step / sum_k rps_k x step.
struct ServingEval {
  double usd = 0;
  double served_share = 0;
  std::vector<double> gpu_hours;      // per profile type
  std::vector<double> replica_hours;  // per profile type
  double served_mtok = 0;             // million tokens served within SLO (tokens_per_request)
  double usd_per_mtok = 0;            // usd / served_mtok
  int peak_replicas = 0;
  std::vector<std::vector<int>> ready;  // [step][type] replicas serving (only when asked: keep_trace)
};
// `history` (may be empty): earlier observed rates the controller may read before the demand's
// first step (past = history ++ demand.rps[0..k)). Errors: kInvalidArgument for mismatched
// prices, an empty demand, cold_start_s < 0.
Result<ServingEval> EvaluateController(const ServingProfile& p, ServingController& controller, const Demand& demand,
                                       const std::vector<double>& usd_per_gpu_hour, double cold_start_s,
                                       std::span<const double> history = {}, bool keep_trace = false);

// Tuning on week 0 only: each grid point's evaluation and the cheapest one with served share >=
// min_share (-1 when none reaches it; then the highest share is chosen and `reached` is false).
struct TuneRow {
  double target_utilization = 0;
  double headroom = 0;                // predictive only (0 for reactive)
  ServingEval eval;
};
struct TuneResult {
  std::vector<TuneRow> rows;
  int chosen = -1;
  bool reached = false;               // the chosen row reaches min_share
  bool inside_grid = false;           // the chosen target_utilization is not the grid's first or last
  ServingPolicy policy;               // `base` with the chosen settings
};
inline constexpr double kMinServedShare = 0.99;
// Reactive: target_utilization over {0.5, 0.6, 0.7, 0.8, 0.9} (or `utilizations`).
Result<TuneResult> TuneReactive(const ServingProfile& p, const ServingPolicy& base, const Demand& week0,
                                const std::vector<double>& usd_per_gpu_hour, double cold_start_s,
                                double min_share = kMinServedShare, std::vector<double> utilizations = {});
// Predictive: target_utilization {0.7, 0.8, 0.9, 0.95} x headroom {1.0, 1.1, 1.2, 1.35, 1.5}.
Result<TuneResult> TunePredictive(const ServingProfile& p, const ServingPolicy& base, const Demand& week0,
                                  const std::vector<double>& usd_per_gpu_hour, double cold_start_s,
                                  double min_share = kMinServedShare);

}  // namespace seedance::fleet
