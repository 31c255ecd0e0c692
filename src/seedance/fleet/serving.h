#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
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
  std::vector<std::string> gpus;    // price-table spellings; empty = ServingGpuTypes()
};

// The GPU types a deployment is profiled on by default (price-table spellings): the batching
// engine's types with a bundled profile.
const std::vector<std::string>& ServingGpuTypes();

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

// The observed rates before week `week` that a controller may read: week w - 1 for w >= 1; for the
// tuning week 0, a warm-up week drawn as week 0 is (its shape and tuning-half bursts) with seed + 1.
Result<Demand> BuildHistory(const DeploymentSpec& d, const WeeklyShape& shape, const std::string& data_dir, int week,
                            std::uint64_t seed);

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
// `threads` types are profiled at once (the result does not depend on it). Errors:
// kInvalidArgument for an unknown model, trace, policy or GPU spelling, SLOs <= 0;
// kFailedPrecondition when no listed type can hold the model or no bucket can be served.
Result<ServingProfile> ProfileServing(const DeploymentSpec& d, const std::string& policy,
                                      const std::string& data_dir, const std::string& cache_dir,
                                      std::ostream* progress,
                                      const planner::ProbeOptions& probe = planner::ProbeOptions(), int threads = 1);

// Seedance's batching for one deployment (serving_engines.cc): `seedance` with, on each type where
// vLLM at its tuned knobs serves more of the mix within SLO (the larger share of bucket_share
// served, then the higher req/s of it; ties to vLLM), vLLM's capacities instead. Both profiles come
// from one DeploymentSpec (same types and buckets); otherwise `seedance` is returned with a note.
ServingProfile BetterEnginePerType(const ServingProfile& vllm, const ServingProfile& seedance);
// The two profiles a fleet week's deployment runs on: vLLM at its tuned knobs (`vllm`) and Seedance's
// batching (`seedance` = BetterEnginePerType of the two engines' measured profiles). Errors: those
// of ProfileServing.
Status ProfileBothEngines(const DeploymentSpec& d, const std::string& data_dir, const std::string& cache_dir,
                          std::ostream* progress, ServingProfile* vllm, ServingProfile* seedance);

// On-demand $/GPU-hour per profile type from the price table (empty path: the bundled one).
// Errors: kNotFound when the table lacks a type.
Result<std::vector<double>> OnDemandPrices(const ServingProfile& p, const std::string& prices_path = "");

struct ServingMix { std::vector<int> replicas; };  // per ServingProfile type

// The cheapest replicas per type serving `rps` of the mix found among: Mélange's allocation LP
// (each bucket's traffic split over the types at their measured capacities at least cost) with
// every type's fluid load rounded up; the loads rounded down and the traffic left over served by
// one more type's replicas (each type tried); each single type; usd_per_gpu_hour per profile type
// (a replica costs tp x that). rps <= 0: no replicas. Errors: kInvalidArgument when the price vector
// does not match the types or a price is negative / not finite; kFailedPrecondition when no type
// serves some bucket.
// `node_gpus` (optional, per profile type): the GPUs of the smallest node a replica of the type can
// be given where no committed room holds it (a cloud pool that sells only 8-GPU nodes: 8); a mix
// then pays each type's GPUs rounded up to whole such nodes (one replica on an 8-GPU node holds
// the node). Empty or 1: GPUs priced one by one.
Result<ServingMix> CheapestMix(const ServingProfile& p, double rps, const std::vector<double>& usd_per_gpu_hour,
                               const std::vector<int>& node_gpus = {});

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
  // predictive: provision for max(forecast x headroom, the reactive recommendation at
  // target_utilization), the forecast being the mean rate of the same clock hour one week earlier
  // for the hour the replicas asked for now will serve in (seasonal naive, past only); without a
  // week of past it is the reactive controller.
  double headroom = 1.2;
};

// Memo of what a profile at fixed prices always answers the same: CheapestMix per rate bucket and
// MaxServedRps per ready mix. Shared by controllers of one profile and price vector (ShareCache).
struct ServingCache {
  std::map<long long, ServingMix> mixes;
  std::map<std::vector<int>, double> served;
};

class ServingController {
 public:
  // peak_rps: the tuning week's peak (sizes the single type; the HPA's maxReplicas is
  // ceil(2 x peak / (replica_rps x target_utilization))); prices per profile type.
  ServingController(const ServingProfile& p, const ServingPolicy& policy, std::vector<double> usd_per_gpu_hour,
                    double peak_rps, double step_s, double cold_start_s);
  // The replicas to hold from step k on. Reads past[0..k-1] only (past.size() may exceed k: the
  // rest is ignored), after the history set by SetHistory. Deterministic: a function of (k,
  // past[0..k-1]), the history and the construction. Step 0 of `past` must be the first step after
  // the history (with no history: a Monday 00:00, as BuildDemand's step 0).
  ServingMix Desired(std::size_t k, std::span<const double> past);
  // Rates observed before past[0] (whole weeks, e.g. BuildHistory(week).rps): the predictive
  // forecast reads the same hour a week back, so without a week of history it stays reactive.
  // Use either this or EvaluateController's `history`, not both.
  void SetHistory(std::vector<double> history);
  bool has_history() const { return !history_.empty(); }
  std::string Describe() const;         // one line for the report
  // The single type (index into the profile) when !policy.mix; -1 when no type serves the mix.
  int single_type() const { return single_; }
  // The rate (req/s) Desired provisions for at step k (before rounding to replicas).
  double TargetRate(std::size_t k, std::span<const double> past) const;
  // The most the predictive controller will ask for over the next `ahead_s` from step k, as known
  // at step k: the largest of TargetRate(k) and the seasonal-naive forecast (x headroom) of every
  // clock hour the window touches, read from the same hours a week back (past only); the reactive
  // controller's is TargetRate(k). Rounded to replicas as Desired rounds.
  ServingMix DesiredAhead(std::size_t k, std::span<const double> past, double ahead_s);
  // Uses `other`'s memo. REQUIRES: the same profile and prices (not checked beyond their sizes).
  void ShareCache(const ServingController& other);
  // The mix's node sizes (CheapestMix's node_gpus) from now on; the memo starts afresh.
  void SetNodeGpus(std::vector<int> node_gpus);
  ServingCache& cache() { return *cache_; }

 private:
  ServingMix ForRate(double rate);
  const ServingProfile* p_;
  ServingPolicy policy_;
  std::vector<double> prices_;
  std::vector<int> node_gpus_;
  double peak_rps_, step_s_, cold_start_s_;
  int single_ = -1;
  int max_replicas_ = 0;
  std::vector<double> history_;
  std::shared_ptr<ServingCache> cache_ = std::make_shared<ServingCache>();
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
  double floor = 0;                   // reactive: minReplicas as a share of the peak fleet
  int min_replicas = 1;               // that floor in replicas (of the single type)
  ServingEval eval;
  // The same setting evaluated with replicas that start after warm_start_s (a node already up: the
  // model load only); only when the tuning asked for it (TuneWarmPath), else empty.
  ServingEval warm_eval;
};
// Issue 39 (serving SLO >= the base's on every set): in the fleet a replica boots a node (cold
// start) or lands on a node already up and only loads its model. A controller tuned only on the
// cold path can serve less than another on the warm path, where a reactive controller catches up
// within a minute. `start_s` >= 0 turns the warm path on: a setting must then also serve at least
// `min_share` of the tuning week with replicas that start after start_s.
// `min_headroom` and `max_target` (when > 0) keep the search to settings that provision at least
// what a given one does at every step (a forecast x headroom no lower, a reactive target no
// higher): on a fleet where a replica must wait for a node, fewer replicas ready ahead of the
// traffic cost more than the warm path gains.
struct TuneWarmPath {
  double start_s = -1;
  double min_share = 0;
  double min_headroom = 0;
  double max_target = 0;
  bool on() const { return start_s >= 0; }
};
struct TuneResult {
  std::vector<TuneRow> rows;
  int chosen = -1;
  bool reached = false;               // the chosen row reaches min_share (and the warm path's)
  bool inside_grid = false;           // the chosen setting is not at the grid's first or last value
  bool extended = false;              // reactive: no target of the grid reached min_share, so the
                                      // grid was extended down to 0.2
  ServingPolicy policy;               // `base` with the chosen settings
};
inline constexpr double kMinServedShare = 0.99;
// Reactive: target_utilization over {0.5, 0.6, 0.7, 0.8, 0.9} (HPA's usual range; extended by
// {0.4, 0.3, 0.2} when none reaches min_share; or over `utilizations` as given) x minReplicas
// {1, and 25, 50, 75, 100 % of the fleet that serves week 0's peak at full capacity} (100 %: the
// static peak fleet, HPA only scaling above it).
// `history`: the rates before week 0 (BuildHistory(week 0)), read by the controllers as in
// EvaluateController.
Result<TuneResult> TuneReactive(const ServingProfile& p, const ServingPolicy& base, const Demand& week0,
                                std::span<const double> history, const std::vector<double>& usd_per_gpu_hour,
                                double cold_start_s,
                                double min_share = kMinServedShare, std::vector<double> utilizations = {});
// Predictive: target_utilization of its reactive floor {0.9, 1.0, 1.25, 1.5, 2, 3} x headroom {1.0,
// 1.1, 1.2, 1.35, 1.5, 1.75, 2, 2.5, 3, 3.5, 4}; min_replicas as in `base`. With `warm` on, the
// cheapest setting that reaches both min_share (cold path) and warm.min_share (warm path); when
// none does, among those reaching min_share the one serving the most on the warm path (then
// `reached` is false).
Result<TuneResult> TunePredictive(const ServingProfile& p, const ServingPolicy& base, const Demand& week0,
                                  std::span<const double> history, const std::vector<double>& usd_per_gpu_hour,
                                  double cold_start_s, double min_share = kMinServedShare,
                                  const TuneWarmPath& warm = TuneWarmPath());

// The rule that turns the forecaster on: on the held-out week, predictive costs less per million
// tokens served within SLO than reactive, at an equal or higher served share -- or at a served
// share that meets the target `min_share` itself (both then meet the SLO target; a reactive
// setting that buys 99.9 % instead of 99.8 % at 3x the cost does not keep the forecaster off).
bool PredictiveBeats(const ServingEval& reactive, const ServingEval& predictive, double min_share = kMinServedShare);

}  // namespace seedance::fleet
