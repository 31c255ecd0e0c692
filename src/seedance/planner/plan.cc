#include "seedance/planner/plan.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "seedance/batching/replay.h"
#include "seedance/cluster/gpu_model.h"
#include "seedance/core/csv.h"
#include "seedance/cost/price_table.h"
#include "seedance/planner/melange.h"
#include "seedance/sim/fleet.h"
#include "seedance/sim/fleet_file.h"

namespace seedance::planner {
namespace {

using nlohmann::json;

// The spot availability every type's pool follows: the 16-node p3.2xlarge pattern of three
// zones pooled (SkyPilot-style zone failover); type k starts k quarters into the series.
const char* const kSpotZones[] = {"aws-08-27-2023_16node_us-east-2b_v100_1.json",
                                  "aws-08-27-2023_16node_us-west-2a_v100_1.json",
                                  "aws-08-27-2023_16node_us-west-2c_v100_1.json"};

std::string TracePath(const PlanConfig& c) {
  if (c.trace == "arena") return c.data_dir + "/melange/arena_lens_first20319.csv";
  return batching::ResolveTracePath(c.data_dir, c.trace);
}

// Mean over the series' ticks of min(1, available): the share of time one spot GPU is there.
double Availability(const sim::SpotSeries& s) { return s.AvailabilityFraction(1); }

int SpotAt(const sim::SpotSeries& s, std::size_t offset_ticks, double t) {
  const auto k = (offset_ticks + static_cast<std::size_t>(std::floor(t / s.gap_s()))) % s.ticks();
  return s.InstancesAtTick(k);
}

struct Instance {
  int option = 0;            // index into the solved problem's options
  int type = 0;              // GPU type index
  bool spot = false;
  double up_from = -std::numeric_limits<double>::infinity();
  double down_at = std::numeric_limits<double>::infinity();
  double busy_until = 0;     // the router's virtual finish time (least-loaded routing)
  std::vector<std::uint32_t> requests;  // trace indices routed here
};

// Smooth weighted round robin over options per bucket (deterministic; ties to the lower index).
struct Wrr {
  std::vector<std::vector<double>> current;
  int Pick(std::size_t b, const std::vector<double>& w) {
    if (current.size() <= b) current.resize(b + 1);
    auto& cur = current[b];
    cur.resize(w.size(), 0.0);
    double total = 0;
    int best = -1;
    for (std::size_t g = 0; g < w.size(); ++g) {
      if (w[g] <= 0) continue;
      cur[g] += w[g];
      total += w[g];
      if (best < 0 || cur[g] > cur[static_cast<std::size_t>(best)] + 1e-12) best = static_cast<int>(g);
    }
    if (best >= 0) cur[static_cast<std::size_t>(best)] -= total;
    return best;
  }
};

struct CurvePoint {
  double start_s = 0, rate_rps = 0;
};

Result<std::vector<CurvePoint>> LoadRateCurve(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t cs, t.ColumnIndex("start_s"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t cr, t.ColumnIndex("rate_rps"));
  std::vector<CurvePoint> out;
  for (const CsvTable::Row& row : t.rows()) {
    SEEDANCE_ASSIGN_OR_RETURN(double s, t.Double(row, cs));
    SEEDANCE_ASSIGN_OR_RETURN(double r, t.Double(row, cr));
    if (out.empty() && s != 0) return t.FieldError(row, cs, "the first period must start at 0");
    if (!out.empty() && !(s > out.back().start_s)) return t.FieldError(row, cs, "must be above the previous start");
    if (!(s < 86400)) return t.FieldError(row, cs, "must be below 86400 (one day)");
    if (!(r > 0) || !std::isfinite(r)) return t.FieldError(row, cr, "must be a number > 0");
    out.push_back(CurvePoint{s, r});
  }
  if (out.empty()) return InvalidArgumentError(path + ": no periods");
  return out;
}

// The router's weights per key and option: the plan's slices of each bucket (output-oracle
// router: the key is the bucket), or summed over an input row's output buckets (input router:
// the key is the prompt-length bucket).
std::vector<std::vector<double>> RouterWeights(const BucketGrid& grid, const std::vector<std::vector<double>>& per_bucket,
                                               bool oracle) {
  if (oracle) return per_bucket;
  const auto nout = static_cast<std::size_t>(grid.outputs());
  const std::size_t ng = per_bucket.empty() ? 0 : per_bucket[0].size();
  std::vector<std::vector<double>> out(static_cast<std::size_t>(grid.inputs()), std::vector<double>(ng, 0));
  for (std::size_t b = 0; b < per_bucket.size(); ++b) {
    for (std::size_t g = 0; g < ng; ++g) out[b / nout][g] += per_bucket[b][g];
  }
  return out;
}

std::vector<std::vector<double>> SlicesOf(const Allocation& alloc) {
  std::vector<std::vector<double>> out;
  for (const auto& row : alloc.slices) out.emplace_back(row.begin(), row.end());
  return out;
}

struct VerifyContext {
  const PlanConfig& cfg;
  const BucketGrid& grid;
  int max_context = 0;
  std::size_t types = 0;
  const std::vector<std::unique_ptr<Engine>>& engines;
  const std::vector<sim::SpotSeries>& spot_series;
};

// Replays `vt` on the fleet `alloc` of `problem` (options: the on-demand types first, then
// their spot options): requests routed by the plan's slices, spot GPUs lost as the series
// says and replaced on demand after the cold start, every GPU replayed on its share.
Result<Verification> Verify(const VerifyContext& ctx, const AllocationProblem& problem, const Allocation& alloc,
                            const batching::Trace& vt, const std::string& router_name) {
  Verification v;
  const bool oracle = router_name == kRouterOutputOracle;
  const double t0 = vt.requests.empty() ? 0 : vt.requests.front().arrival_s;
  const double span = vt.Span();
  std::vector<Instance> inst;
  for (std::size_t g = 0; g < problem.gpus.size(); ++g) {
    for (int i = 0; i < alloc.count[g]; ++i) {
      Instance x;
      x.option = static_cast<int>(g);
      x.type = static_cast<int>(g % ctx.types);
      x.spot = problem.gpus[g].spot;
      inst.push_back(x);
    }
  }
  // Spot: place the replay in the series where the largest spot pool first loses a GPU, a third
  // of the way into the trace (a stress window), and schedule each loss and its replacement.
  std::vector<std::size_t> offsets(ctx.types, 0);
  struct Loss {
    double at = 0;
    int option = 0;
  };
  std::vector<Loss> losses;
  if (ctx.cfg.spot && !ctx.spot_series.empty()) {
    const sim::SpotSeries& s0 = ctx.spot_series[0];
    for (std::size_t k = 0; k < ctx.types; ++k) offsets[k] = k * s0.ticks() / 4;
    int big = -1;
    for (std::size_t g = ctx.types; g < problem.gpus.size(); ++g) {
      if (alloc.count[g] > 0 && (big < 0 || alloc.count[g] > alloc.count[static_cast<std::size_t>(big)])) {
        big = static_cast<int>(g);
      }
    }
    double start = 0;
    if (big >= 0) {
      const std::size_t k = static_cast<std::size_t>(big) % ctx.types;
      const int n = alloc.count[static_cast<std::size_t>(big)];
      for (std::size_t tick = 1; tick < s0.ticks(); ++tick) {
        const double t = static_cast<double>(tick) * s0.gap_s();
        if (std::min(n, SpotAt(s0, offsets[k], t)) < std::min(n, SpotAt(s0, offsets[k], t - s0.gap_s()))) {
          start = std::max(0.0, t - span / 3);
          break;
        }
      }
    }
    v.spot_window_start_s = start;
    // Spot GPU j of a pool is up while the series has more than j GPUs; the first time it has
    // not, it is lost for good (replaced on demand after the cold start).
    std::vector<int> seen(problem.gpus.size(), 0);
    const std::size_t fixed = inst.size();
    for (std::size_t i = 0; i < fixed; ++i) {
      if (!inst[i].spot) continue;
      const int j = seen[static_cast<std::size_t>(inst[i].option)]++;
      const std::size_t k = static_cast<std::size_t>(inst[i].type);
      for (double t = 0; t <= span + s0.gap_s(); t += s0.gap_s()) {
        if (SpotAt(ctx.spot_series[k], offsets[k], start + t) <= j) {
          inst[i].down_at = t0 + std::max(0.0, t - std::fmod(start, s0.gap_s()));
          break;
        }
      }
      if (std::isfinite(inst[i].down_at)) {
        losses.push_back(Loss{inst[i].down_at, inst[i].option});
        ++v.preemptions;
      }
    }
  }
  // Route. The output-oracle router (Mélange's) keys on the request's bucket, prompt and output
  // length; the default router knows only the prompt length: its key is the input bucket, whose
  // weights are the plan's slices summed over that input row's output buckets, and its
  // least-loaded estimate is the row's planned-rate-weighted mean service time on the option.
  const std::size_t ng = problem.gpus.size();
  const auto nb = static_cast<std::size_t>(ctx.grid.buckets());
  const auto nout = static_cast<std::size_t>(ctx.grid.outputs());
  const std::size_t nkeys = oracle ? nb : static_cast<std::size_t>(ctx.grid.inputs());
  auto key_of = [&](std::size_t b) { return oracle ? b : b / nout; };
  const std::vector<std::vector<double>> normal = RouterWeights(ctx.grid, SlicesOf(alloc), oracle);
  std::vector<std::vector<std::vector<double>>> failover;
  for (const auto& f : alloc.failover) failover.push_back(RouterWeights(ctx.grid, f, oracle));
  // Expected seconds of a GPU's time per request, per key and option.
  std::vector<std::vector<double>> service(nkeys, std::vector<double>(ng, 0));
  {
    std::vector<std::vector<double>> weight(nkeys, std::vector<double>(ng, 0));
    for (std::size_t b = 0; b < nb; ++b) {
      const double w = oracle ? 1.0 : problem.rate[b];
      for (std::size_t g = 0; g < ng; ++g) {
        const double t = problem.gpus[g].tputs[b];
        if (!(t > 0) || !(w > 0)) continue;
        service[key_of(b)][g] += w / t;
        weight[key_of(b)][g] += w;
      }
    }
    for (std::size_t k = 0; k < nkeys; ++k) {
      for (std::size_t g = 0; g < ng; ++g) service[k][g] = weight[k][g] > 0 ? service[k][g] / weight[k][g] : 0;
    }
  }
  Wrr wrr, wrr_fail;
  std::int64_t unroutable = 0;
  for (std::size_t i = 0; i < vt.requests.size(); ++i) {
    const batching::Request& r = vt.requests[i];
    if (r.prompt + r.output > ctx.max_context) {
      ++v.over_context;  // no replica can hold it: counted and reported, never silently dropped
      continue;
    }
    const int b = ctx.grid.BucketOf(r.prompt, r.output);
    if (b < 0) continue;
    const std::size_t bu = key_of(static_cast<std::size_t>(b));
    // Failover: once an option's spot GPU is lost, route by the reserve's re-split for that
    // option (the reserve carries the load until spot capacity returns).
    const std::vector<double>* weights = &normal[bu];
    Wrr* router = &wrr;
    std::vector<double> fail_w;
    for (const Loss& l : losses) {
      if (r.arrival_s >= l.at) {
        for (std::size_t f = 0; f < alloc.failover_option.size(); ++f) {
          if (alloc.failover_option[f] == l.option) {
            fail_w = failover[f][bu];
            weights = &fail_w;
            router = &wrr_fail;
          }
        }
        break;
      }
    }
    // Pick an option that has a GPU up now; fall back through the weights.
    std::vector<double> wv = *weights;
    int chosen = -1;
    for (int tries = 0; tries < static_cast<int>(ng) && chosen < 0; ++tries) {
      const int g = router->Pick(bu, wv);
      if (g < 0) break;
      double best_busy = std::numeric_limits<double>::infinity();
      for (std::size_t x = 0; x < inst.size(); ++x) {
        const Instance& in = inst[x];
        if (in.option != g || r.arrival_s < in.up_from || r.arrival_s >= in.down_at) continue;
        if (std::max(in.busy_until, r.arrival_s) < best_busy) {
          best_busy = std::max(in.busy_until, r.arrival_s);
          chosen = static_cast<int>(x);
        }
      }
      if (chosen < 0) wv[static_cast<std::size_t>(g)] = 0;
    }
    if (chosen < 0) {
      ++unroutable;
      continue;
    }
    Instance& in = inst[static_cast<std::size_t>(chosen)];
    in.busy_until = std::max(in.busy_until, r.arrival_s) + service[bu][static_cast<std::size_t>(in.option)];
    in.requests.push_back(static_cast<std::uint32_t>(i));
  }
  // Replay every GPU on its share.
  std::vector<double> ttfts, tpots;
  v.met = 0;
  for (std::size_t x = 0; x < inst.size(); ++x) {
    const Instance& in = inst[x];
    if (in.requests.empty()) continue;
    const Engine& e = *ctx.engines[static_cast<std::size_t>(in.type)];
    batching::Trace sub;
    sub.name = fmt::format("{} gpu {}", vt.name, x);
    for (std::uint32_t id : in.requests) {
      batching::Request r = vt.requests[id];
      r.id = static_cast<std::uint32_t>(sub.requests.size());
      sub.requests.push_back(r);
    }
    std::vector<batching::RequestRecord> records(sub.requests.size());
    SEEDANCE_ASSIGN_OR_RETURN(auto sched, batching::MakeScheduler(ctx.cfg.policy, e.settings, e.predictor.get(), &records));
    batching::ReplayOptions ro{ctx.cfg.slo_ttft_s, ctx.cfg.slo_tpot_s, 0, batching::DefaultStepNoise()};
    ro.noise.seed = ctx.cfg.seed * 7919 + 1000 + x;  // not the profiling seeds
    SEEDANCE_ASSIGN_OR_RETURN(batching::PolicyResult pr, batching::Replay(sub, *sched, *e.truth, records, ro));
    v.servable += pr.servable;
    for (std::size_t i = 0; i < sub.requests.size(); ++i) {
      const batching::Request& r = sub.requests[i];
      const batching::RequestRecord& rec = records[i];
      if (rec.outcome != batching::Outcome::kFinished) continue;
      if (rec.finish_s > in.down_at) {
        ++v.lost_to_preemption;
        continue;
      }
      const double ttft = rec.first_token_s - r.arrival_s;
      const double tpot = r.output > 1 ? (rec.finish_s - rec.first_token_s) / (r.output - 1) : 0;
      ttfts.push_back(ttft);
      tpots.push_back(tpot);
      if (ttft <= ctx.cfg.slo_ttft_s && tpot <= ctx.cfg.slo_tpot_s) ++v.met;
    }
  }
  v.servable += unroutable;
  v.requests = static_cast<std::int64_t>(vt.requests.size());
  v.slo_attainment = v.servable > 0 ? static_cast<double>(v.met) / static_cast<double>(v.servable) : 0;
  v.ttft_p99_s = batching::Percentile(ttfts, 99);
  v.tpot_p99_s = batching::Percentile(tpots, 99);
  return v;
}

}  // namespace

Result<PlanResult> Plan(const PlanConfig& cfg, std::ostream* progress) {
  auto say = [&](const std::string& s) {
    if (progress != nullptr) *progress << s << "\n";
  };
  if (!(cfg.slo_tpot_s > 0) || !(cfg.slo_ttft_s > 0)) {
    return InvalidArgumentError("--slo-tpot and --slo-ttft must be > 0");
  }
  if (cfg.rate_rps < 0 || !std::isfinite(cfg.rate_rps)) return InvalidArgumentError("--rate must be > 0");
  if (cfg.router != kRouterInput && cfg.router != kRouterOutputOracle) {
    return InvalidArgumentError(fmt::format("--router '{}': accepted: {}, {}", cfg.router, kRouterInput, kRouterOutputOracle));
  }
  PlanResult res;
  res.config = cfg;
  auto found = batching::FindModel(cfg.model);
  if (!found.has_value()) return InvalidArgumentError("--model: " + found.error().message());
  batching::ModelSpec model = *found;
  if (!cfg.profile_dir.empty()) {
    if (std::error_code ec; !std::filesystem::is_directory(cfg.profile_dir, ec)) {
      return InvalidArgumentError(fmt::format("--profile {}: not a directory (expected Vidur's layout "
                                              "<dir>/<gpu>/{}/mlp.csv)", cfg.profile_dir, model.profile_dir));
    }
    model.profile_root = cfg.profile_dir;
  }
  if (cfg.tp < 0) return InvalidArgumentError("--tp must be >= 1");
  SEEDANCE_ASSIGN_OR_RETURN(BucketGrid grid, GridByName(cfg.grid, model.max_context));
  res.model = model.name;
  res.max_context = model.max_context;
  // GPU types, their TP degree and prices first (cheap checks before any profiling).
  const double utilization = batching::BatchingConfig().gpu_memory_utilization;
  const bool default_gpus = cfg.gpus.empty();
  const std::vector<std::string> gpu_list =
      default_gpus ? std::vector<std::string>{"l4", "a10g", "a100", "h100"} : cfg.gpus;
  std::vector<batching::GpuSpec> specs;
  std::vector<std::string> left_out;
  for (const std::string& g : gpu_list) {
    auto spec = batching::FindGpu(g);
    if (!spec.has_value()) return InvalidArgumentError("--gpus: " + spec.error().message());
    for (const auto& s : specs) {
      if (s.name == spec->name) return InvalidArgumentError(fmt::format("--gpus: {} listed twice", g));
    }
    // A type with no profile of the model (Vidur has no H100 profile of Llama-3).
    if (const std::string path = batching::MlpProfilePath(cfg.data_dir, *spec, model); !std::filesystem::exists(path)) {
      const std::string why = fmt::format("no profile of {} on {}: {} is missing", model.name, spec->profile, path);
      if (!default_gpus) return InvalidArgumentError(fmt::format("--gpus {}: {}", g, why));
      left_out.push_back(fmt::format("{} ({})", g, why));
      continue;
    }
    Result<int> tp = cfg.tp;
    if (cfg.tp > 0) {
      if (Status st = batching::CheckTensorParallel(*spec, model, cfg.tp, utilization); !st.ok()) tp = st;
    } else {
      tp = batching::DefaultTensorParallel(*spec, model, utilization);
    }
    if (!tp.has_value()) {
      if (default_gpus && tp.error().code() == StatusCode::kFailedPrecondition) {
        left_out.push_back(fmt::format("{} ({})", g, tp.error().message()));
        continue;
      }
      return InvalidArgumentError(fmt::format("--gpus {}: {}", g, tp.error().message()));
    }
    specs.push_back(*spec);
    res.tp.push_back(*tp);
  }
  if (specs.empty()) {
    return InvalidArgumentError(fmt::format("--model {}: no GPU type can hold it: {}", model.name,
                                            fmt::join(left_out, "; ")));
  }
  std::string prices = cfg.prices_path.empty() ? cost::BundledPriceTablePath() : cfg.prices_path;
  SEEDANCE_ASSIGN_OR_RETURN(cost::PriceTable table, cost::PriceTable::LoadFile(prices));
  std::optional<sim::FleetFile> fleet;
  if (!cfg.fleet_path.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(fleet, sim::LoadFleetFile(cfg.fleet_path));
    prices = fmt::format("fleet file {} ('{}'), prices it does not give from {}", cfg.fleet_path, fleet->name, prices);
  }
  for (const auto& s : specs) {
    SEEDANCE_ASSIGN_OR_RETURN(cluster::GpuModelIndex m, cluster::ParseGpuModel(s.price_model));
    const cost::GpuPrice* p = table.Find(m);
    double od = p != nullptr ? static_cast<double>(p->usd_per_gpu_hour.raw()) / 1e6 : 0;
    double spot = p != nullptr && p->spot_usd_per_gpu_hour.raw() > 0
                      ? static_cast<double>(p->spot_usd_per_gpu_hour.raw()) / 1e6
                      : od * cost::kDefaultSpotRatio;
    if (fleet) {
      // The fleet's own price of the type: what a replica-hour on it costs this fleet.
      const auto g = std::find_if(fleet->gpus.begin(), fleet->gpus.end(),
                                  [&](const sim::FleetFileGpu& x) { return x.type == s.price_model; });
      if (g == fleet->gpus.end()) {
        std::vector<std::string> has;
        for (const auto& x : fleet->gpus) has.push_back(x.type);
        return InvalidArgumentError(fmt::format("--fleet {}: the fleet has no pool of {} (it has {}); plan its types "
                                                "(--gpus) or add the type to the fleet file",
                                                cfg.fleet_path, s.price_model, fmt::join(has, ", ")));
      }
      if (g->has_on_demand && g->on_demand_usd_per_gpu_hour > 0) {
        od = g->on_demand_usd_per_gpu_hour;
      } else if (!g->has_on_demand && g->owned > 0) {
        od = g->owned_usd_per_gpu_hour;
      } else if (!g->has_on_demand && g->reserved > 0) {
        od = g->reserved_usd_per_gpu_hour;
      }
      spot = od * cost::kDefaultSpotRatio;
      if (!g->spot.empty() && g->spot.front().usd_per_gpu_hour > 0) spot = g->spot.front().usd_per_gpu_hour;
      if (!g->spot.empty() && g->spot.front().price_ratio > 0) spot = od * g->spot.front().price_ratio;
    }
    if (!(od > 0)) return NotFoundError(fmt::format("{}: no price for GPU model {}", prices, s.price_model));
    res.gpu_names.push_back(s.price_model);
    res.od_price.push_back(od);
    res.spot_price.push_back(spot);
  }
  // Spot series.
  std::vector<sim::SpotSeries> spot_series;
  if (cfg.spot) {
    std::vector<sim::SpotSeries> zones;
    for (const char* z : kSpotZones) {
      SEEDANCE_ASSIGN_OR_RETURN(sim::SpotSeries s, sim::SpotSeries::LoadFile(cfg.data_dir + "/spot_traces/" + z, 1));
      zones.push_back(std::move(s));
    }
    SEEDANCE_ASSIGN_OR_RETURN(sim::SpotSeries pooled, sim::SpotSeries::Sum(zones));
    for (std::size_t k = 0; k < specs.size(); ++k) {
      res.spot_availability.push_back(Availability(pooled));
      spot_series.push_back(pooled);
    }
  }
  std::vector<CurvePoint> curve;
  if (!cfg.rate_curve.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(curve, LoadRateCurve(cfg.rate_curve));
  }
  // Trace.
  bool lengths_only = false;
  SEEDANCE_ASSIGN_OR_RETURN(batching::Trace trace, batching::LoadAnyTrace(TracePath(cfg), &lengths_only));
  if (trace.requests.empty()) return InvalidArgumentError(trace.name + ": the trace has no requests");
  // The tuning half is all the plan sees (histogram, rate, burst calibration); the held-out half
  // is only replayed. Timed traces are cut in time at the middle of their span; a lengths-only
  // trace (no arrivals) is split by alternating rows (even rows tune, odd rows are held out).
  const bool timed = !lengths_only && trace.Span() > 0;
  batching::Trace tune_part, held_part;
  tune_part.name = held_part.name = trace.name;
  {
    const double mid = timed ? trace.requests.front().arrival_s + trace.Span() / 2 : 0;
    for (std::size_t i = 0; i < trace.requests.size(); ++i) {
      const batching::Request& r = trace.requests[i];
      const bool tune = timed ? r.arrival_s < mid : i % 2 == 0;
      batching::Trace& part = tune ? tune_part : held_part;
      batching::Request q = r;
      q.id = static_cast<std::uint32_t>(part.requests.size());
      part.requests.push_back(q);
    }
    if (held_part.requests.empty()) held_part = tune_part;  // a one-request trace: nothing to hold out
  }
  SEEDANCE_ASSIGN_OR_RETURN(res.workload, BucketTrace(tune_part, grid, model.max_context));
  const Workload& w = res.workload;
  res.rate_rps = cfg.rate_rps > 0 ? cfg.rate_rps : (w.rate_rps > 0 ? w.rate_rps : 1.0);
  if (!curve.empty()) {
    res.rate_rps = 0;
    for (const CurvePoint& p : curve) res.rate_rps = std::max(res.rate_rps, p.rate_rps);  // plan the peak
  }
  say(fmt::format("trace {}: {} requests in the tuning half ({} exceed {}'s {}-token context), {} held out, "
                  "{:.3f} req/s planned",
                  w.name, w.total, w.over_context, model.name, model.max_context, held_part.requests.size(), res.rate_rps));
  std::vector<bool> needed(w.fraction.size());
  for (std::size_t b = 0; b < needed.size(); ++b) needed[b] = w.fraction[b] > 0;
  // Capacity profiles.
  auto engine_options = [&](std::size_t k) {
    return EngineOptions{cfg.data_dir, model.name, cfg.policy, cfg.slo_ttft_s, cfg.slo_tpot_s, res.tp[k], model.profile_root};
  };
  for (std::size_t k = 0; k < specs.size(); ++k) {
    SEEDANCE_ASSIGN_OR_RETURN(std::unique_ptr<Engine> e, MakeEngine(engine_options(k), specs[k].name));
    SEEDANCE_ASSIGN_OR_RETURN(CapacityTable t, ProfileCapacity(*e, grid, needed, cfg.probe, cfg.cache_dir, progress));
    res.capacity.push_back(std::move(t));
  }
  // Problems: on demand, and with spot options.
  AllocationProblem od;
  od.slice_factor = cfg.slice_factor;
  for (std::size_t b = 0; b < needed.size(); ++b) {
    od.rate.push_back(w.fraction[b] * res.rate_rps);
    od.bucket_names.push_back(grid.BucketName(static_cast<int>(b)));
  }
  for (std::size_t k = 0; k < specs.size(); ++k) {
    // One option per type: a replica of tp GPUs, priced tp x the GPU's price.
    GpuOption o{res.gpu_names[k], res.tp[k] * res.od_price[k], false, {}, -1};
    for (const BucketCapacity& c : res.capacity[k].buckets) o.tputs.push_back(c.capacity_rps);
    od.gpus.push_back(std::move(o));
  }
  // SLOs no GPU meets: name the buckets, their traffic and the best a lone request reached.
  {
    std::vector<std::string> planned;
    for (std::size_t k = 0; k < specs.size(); ++k) {
      planned.push_back(res.tp[k] > 1 ? fmt::format("{} (TP {})", specs[k].name, res.tp[k]) : specs[k].name);
    }
    std::string msg;
    int shown = 0, bad = 0;
    for (std::size_t b = 0; b < needed.size(); ++b) {
      if (!needed[b]) continue;
      bool any = false;
      double best_tpot = std::numeric_limits<double>::infinity(), best_ttft = best_tpot;
      for (std::size_t k = 0; k < specs.size(); ++k) {
        const BucketCapacity& c = res.capacity[k].buckets[b];
        any = any || c.capacity_rps > 0;
        if (c.lone_tpot_s > 0) best_tpot = std::min(best_tpot, c.lone_tpot_s);
        if (c.lone_ttft_s > 0) best_ttft = std::min(best_ttft, c.lone_ttft_s);
      }
      if (any) continue;
      ++bad;
      if (shown++ < 6) {
        msg += fmt::format("\n  {} ({} requests, {:.4g} req/s): best lone request TTFT {:.3f} s (SLO {:g} s), "
                           "TPOT {:.1f} ms (SLO {:g} ms)",
                           grid.BucketName(static_cast<int>(b)), w.requests[b], od.rate[b], best_ttft,
                           cfg.slo_ttft_s, 1e3 * best_tpot, 1e3 * cfg.slo_tpot_s);
      }
    }
    if (bad > 0) {
      return FailedPreconditionError(fmt::format(
          "infeasible SLO: no GPU type of {} serves {} of the trace's {} request-size buckets{}{}",
          fmt::join(planned, ","), bad, std::count(needed.begin(), needed.end(), true), msg,
          bad > shown ? fmt::format("\n  ... and {} more", bad - shown) : ""));
    }
  }
  // Verification traces: the trace at the planned rate, cut in time into a calibration half
  // (the burst factor is tuned on it) and a held-out half (the attainment reported). Lengths-only
  // traces get two Poisson draws of verify_s / 2 seconds each.
  batching::Trace calib, held;
  if (!timed || w.rate_rps <= 0) {
    const auto count = static_cast<std::size_t>(std::max(200.0, res.rate_rps * cfg.verify_s / 2));
    calib = batching::PoissonTrace(tune_part, res.rate_rps, count, cfg.seed);
    held = batching::PoissonTrace(held_part, res.rate_rps, count, cfg.seed + 1);
  } else {
    // Both halves sped up by the same factor: the tuning half's rate -> the planned rate (the
    // held-out half keeps its own rate relative to it).
    const double f = res.rate_rps / w.rate_rps;
    calib = batching::ScaleRate(tune_part, f);
    held = batching::ScaleRate(held_part, f);
  }
  std::vector<std::unique_ptr<Engine>> engines;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    SEEDANCE_ASSIGN_OR_RETURN(std::unique_ptr<Engine> e, MakeEngine(engine_options(k), specs[k].name));
    engines.push_back(std::move(e));
  }
  const VerifyContext ctx{cfg, grid, model.max_context, specs.size(), engines, spot_series};
  auto scaled = [](AllocationProblem q, double f) {
    for (double& r : q.rate) r *= f;
    return q;
  };
  // Plans for the rate x f with the smallest f in 1, 1.15, 1.15^2, ... whose fleet meets the
  // target attainment on the calibration half (f = 1 only without calibration).
  struct Calibrated {
    Allocation alloc;
    double factor = 1;
    Verification calib;
  };
  auto calibrate = [&](const AllocationProblem& base, const std::string& what,
                       const std::function<Result<Allocation>(const AllocationProblem&)>& solve) -> Result<Calibrated> {
    Calibrated out;
    for (int step = 0;; ++step) {
      const AllocationProblem q = scaled(base, out.factor);
      SEEDANCE_ASSIGN_OR_RETURN(out.alloc, solve(q));
      if (!cfg.calibrate || !cfg.verify) return out;
      SEEDANCE_ASSIGN_OR_RETURN(out.calib, Verify(ctx, q, out.alloc, calib, cfg.router));
      say(fmt::format("calibrate {}: x{:.3f} -> ${:.4f}/h, {:.2f}% on the calibration half", what, out.factor,
                      out.alloc.usd_per_hour, 100 * out.calib.slo_attainment));
      if (out.calib.slo_attainment >= cfg.target_attainment || step >= 20) return out;
      out.factor *= 1.15;
    }
  };
  auto single_alloc = [&](std::size_t g) {
    return [&, g](const AllocationProblem& q) -> Result<Allocation> {
      const SingleType s = SingleTypeBaselines(q)[g];
      if (!s.feasible) return FailedPreconditionError("infeasible");
      Allocation a;
      a.count.assign(q.gpus.size(), 0);
      a.load.assign(q.gpus.size(), 0);
      a.slices.assign(q.rate.size(), std::vector<int>(q.gpus.size(), 0));
      a.count[g] = s.count;
      a.load[g] = s.load;
      for (auto& row : a.slices) row[g] = q.slice_factor;
      a.usd_per_hour = s.usd_per_hour;
      return a;
    };
  };
  say("solving the allocation ILP");
  // Mélange's way first: the mean rate, no calibration; its fleet replayed on the held-out half.
  SEEDANCE_ASSIGN_OR_RETURN(Allocation mean_alloc, SolveAllocation(od));
  res.mean_rate.usd_per_hour = mean_alloc.usd_per_hour;
  res.mean_rate.single = SingleTypeBaselines(od);
  if (const SingleType* b = BestSingle(res.mean_rate.single)) {
    res.mean_rate.best_single = b->option;
    res.mean_rate.saving_pct = 100 * (1 - mean_alloc.usd_per_hour / b->usd_per_hour);
  }
  res.lower_bound_usd_per_hour = FluidLowerBound(od);
  if (res.mean_rate.best_single >= 0) {
    res.max_saving_pct = 100 * (1 - res.lower_bound_usd_per_hour /
                                        res.mean_rate.single[static_cast<std::size_t>(res.mean_rate.best_single)].usd_per_hour);
  }
  if (cfg.verify) {
    SEEDANCE_ASSIGN_OR_RETURN(Verification mv, Verify(ctx, od, mean_alloc, held, cfg.router));
    res.mean_rate.held_out_attainment = mv.slo_attainment;
    say(fmt::format("mean-rate plan (Mélange's way): ${:.4f}/h, {:.2f}% on the held-out half", mean_alloc.usd_per_hour,
                    100 * mv.slo_attainment));
  }
  SEEDANCE_ASSIGN_OR_RETURN(Calibrated mix, calibrate(od, "mix", [](const AllocationProblem& q) { return SolveAllocation(q); }));
  res.od_usd_per_hour = mix.alloc.usd_per_hour;
  AllocationProblem problem = od;
  Calibrated chosen = mix;
  if (cfg.spot) {
    for (std::size_t k = 0; k < specs.size(); ++k) {
      GpuOption o = od.gpus[k];
      o.spot = true;
      // Billed only while it is there (availability x spot price); while it is not, the reserve
      // carries its traffic.
      o.usd_per_hour = res.spot_availability[k] * res.spot_price[k] * res.tp[k];
      problem.gpus.push_back(std::move(o));
    }
    SEEDANCE_ASSIGN_OR_RETURN(Calibrated with_spot, calibrate(problem, "mix with spot",
                                                              [](const AllocationProblem& q) { return SolveAllocation(q); }));
    res.spot_plan_usd_per_hour = with_spot.alloc.usd_per_hour;
    if (with_spot.alloc.usd_per_hour < mix.alloc.usd_per_hour - 1e-9) {
      chosen = with_spot;
    } else {
      problem = od;  // spot does not pay here: keep the on-demand plan
      say(fmt::format("spot plan ${:.4f}/h is not cheaper than on demand ${:.4f}/h: on demand kept",
                      with_spot.alloc.usd_per_hour, mix.alloc.usd_per_hour));
    }
  }
  // Every single type at its own calibrated factor (the baselines at their best).
  std::vector<double> single_factor(specs.size(), 1.0);
  std::vector<Calibrated> single_cal(specs.size());
  for (std::size_t g = 0; g < specs.size(); ++g) {
    SingleType s = SingleTypeBaselines(od)[g];
    if (s.feasible) {
      SEEDANCE_ASSIGN_OR_RETURN(Calibrated c1, calibrate(od, res.gpu_names[g] + " only", single_alloc(g)));
      single_factor[g] = c1.factor;
      single_cal[g] = c1;
      s.count = c1.alloc.count[g];
      s.load = c1.alloc.load[g];
      s.usd_per_hour = c1.alloc.usd_per_hour;
    }
    res.single.push_back(s);
  }
  const SingleType* best = BestSingle(res.single);
  res.best_single = best != nullptr ? best->option : -1;
  // Every candidate above passed the same calibration; a single type that came out cheaper than
  // the mix (coarse 1.15 steps can land the mix above it) is the plan.
  if (best != nullptr && best->usd_per_hour < chosen.alloc.usd_per_hour - 1e-9) {
    chosen = single_cal[static_cast<std::size_t>(best->option)];
    problem = od;
    say(fmt::format("the calibrated {} fleet is cheaper than the calibrated mix: it is the plan",
                    res.gpu_names[static_cast<std::size_t>(best->option)]));
  }
  const Allocation& alloc = chosen.alloc;
  res.burst_factor = chosen.factor;
  res.calibration_attainment = chosen.calib.slo_attainment;
  const AllocationProblem final_problem = scaled(problem, chosen.factor);
  res.usd_per_hour = alloc.usd_per_hour;
  for (std::size_t g = 0; g < final_problem.gpus.size(); ++g) {
    if (alloc.count[g] == 0) continue;
    // Headroom against the load of the rate planned for (not the calibrated one).
    const double load = alloc.load[g] / chosen.factor;
    const int tp = res.tp[g % specs.size()];
    res.mix.push_back(MixEntry{final_problem.gpus[g].name, alloc.count[g], final_problem.gpus[g].spot,
                               final_problem.gpus[g].usd_per_hour / tp, load, 1 - load / alloc.count[g], tp,
                               static_cast<int>(g)});
  }
  // What a deployment needs: the pools and the router's weights per key, the engine's knobs.
  for (const GpuOption& o : final_problem.gpus) res.pool_names.push_back(o.spot ? o.name + " spot" : o.name);
  res.router_weights = RouterWeights(grid, SlicesOf(alloc), cfg.router == kRouterOutputOracle);
  {
    const batching::PolicySettings& ps = engines[0]->settings;
    const batching::ContinuousConfig& cc = cfg.policy == "seedance" ? ps.seedance : ps.vllm;
    res.max_num_batched_tokens = cc.max_num_batched_tokens;
    res.max_num_seqs = cc.max_num_seqs;
    res.chunked_prefill = cc.chunked_prefill;
    res.block_size = ps.engine.block_size > 0 ? ps.engine.block_size : batching::DefaultBlockSize(cfg.policy);
  }
  if (best != nullptr) res.saving_pct = 100 * (1 - res.usd_per_hour / best->usd_per_hour);
  res.usd_per_mtok = res.usd_per_hour / (res.rate_rps * w.mean_tokens * 3600 / 1e6);
  // Cost against rate (solver only, at the calibrated factor; capacities do not depend on rate).
  for (double f : {0.25, 0.5, 1.0, 2.0, 4.0}) {
    CostPoint pt;
    pt.rate_rps = f * res.rate_rps;
    const AllocationProblem q = scaled(od, f * mix.factor);
    SEEDANCE_ASSIGN_OR_RETURN(Allocation a, SolveAllocation(q));
    pt.mix_usd_per_hour = a.usd_per_hour;
    pt.lower_bound_usd_per_hour = FluidLowerBound(q);
    for (const SingleType& s : SingleTypeBaselines(q)) pt.single_usd_per_hour.push_back(s.feasible ? s.usd_per_hour : 0);
    if (cfg.spot) {
      SEEDANCE_ASSIGN_OR_RETURN(Allocation as, SolveAllocation(scaled(problem, f * chosen.factor)));
      pt.spot_usd_per_hour = as.usd_per_hour;
    }
    res.curve.push_back(std::move(pt));
  }
  if (!curve.empty()) {
    // The day: every period planned at its rate (x each strategy's burst factor, calibrated at
    // the peak); a GPU added at a boundary is billed for the cold start before it.
    res.has_day = true;
    DayPlan& d = res.day;
    std::vector<int> prev(specs.size(), 0);
    std::vector<int> single_prev(specs.size(), 0);
    std::vector<double> single_total(specs.size(), 0.0);
    std::vector<bool> single_ok(specs.size(), true);
    for (std::size_t i = 0; i < curve.size(); ++i) {
      DayPeriod p;
      p.start_s = curve[i].start_s;
      p.end_s = i + 1 < curve.size() ? curve[i + 1].start_s : 86400.0;
      p.rate_rps = curve[i].rate_rps;
      const double hours = (p.end_s - p.start_s) / 3600;
      SEEDANCE_ASSIGN_OR_RETURN(Allocation a, SolveAllocation(scaled(od, p.rate_rps / res.rate_rps * mix.factor)));
      p.count = a.count;
      p.usd_per_hour = a.usd_per_hour;
      d.autoscaled_usd += a.usd_per_hour * hours;
      for (std::size_t g = 0; g < specs.size(); ++g) {
        const double boot = std::max(0, a.count[g] - prev[g]) * res.tp[g] * res.od_price[g] * cfg.cold_start_s / 3600;
        d.autoscaled_usd += boot;
        d.boot_usd += boot;
        prev[g] = a.count[g];
        const SingleType s = SingleTypeBaselines(scaled(od, p.rate_rps / res.rate_rps * single_factor[g]))[g];
        if (!s.feasible) {
          single_ok[g] = false;
          continue;
        }
        single_total[g] += s.usd_per_hour * hours +
                           std::max(0, s.count - single_prev[g]) * res.tp[g] * res.od_price[g] * cfg.cold_start_s / 3600;
        single_prev[g] = s.count;
      }
      d.periods.push_back(std::move(p));
    }
    d.static_peak_usd = res.od_usd_per_hour * 24;
    int bs = -1;
    for (std::size_t g = 0; g < specs.size(); ++g) {
      if (single_ok[g] && (bs < 0 || single_total[g] < single_total[static_cast<std::size_t>(bs)] - 1e-12)) bs = static_cast<int>(g);
    }
    if (bs >= 0) {
      d.autoscaled_single_usd = single_total[static_cast<std::size_t>(bs)];
      d.single_gpu = res.gpu_names[static_cast<std::size_t>(bs)];
      for (std::size_t i = 0; i < d.periods.size(); ++i) {
        d.periods[i].best_single_usd_per_hour =
            SingleTypeBaselines(scaled(od, d.periods[i].rate_rps / res.rate_rps * single_factor[static_cast<std::size_t>(bs)]))
                [static_cast<std::size_t>(bs)].usd_per_hour;
      }
    }
  }
  res.assumptions = {
      fmt::format("capacity per replica x bucket measured by the batching engine ({} policy, {} FP16, "
                  "noisy ground truth, seed {}) at the bucket's upper edges, >= {:.1f}% of a probe's requests "
                  "within TTFT {:g} s and TPOT {:g} ms",
                  cfg.policy, model.name, cfg.probe.seed, 100 * cfg.probe.target_attainment, cfg.slo_ttft_s,
                  1e3 * cfg.slo_tpot_s),
      fmt::format("model {} ({}): {} layers, {} query / {} KV heads of {}, {:.2f}B parameters, context {} tokens; "
                  "linear layers from {} (Vidur's mlp.csv rows of the replica's TP degree); tensor parallelism: "
                  "{} GPUs per replica{}",
                  model.name, model.profile_dir, model.layers, model.heads, model.kv_heads, model.head_dim,
                  model.params / 1e9, model.max_context,
                  model.profile_root.empty() ? std::string("the bundled profiles") : model.profile_root,
                  [&] {
                    std::vector<std::string> v;
                    for (std::size_t k = 0; k < specs.size(); ++k) v.push_back(fmt::format("{} {}", res.gpu_names[k], res.tp[k]));
                    return fmt::format("{}", fmt::join(v, ", "));
                  }(),
                  cfg.tp > 0 ? std::string(" (--tp)")
                            : fmt::format(" (the smallest profiled degree whose memory x {:g} holds the FP16 weights + a KV "
                                          "reserve of {:.0f}% of the memory, at least one full-context sequence)",
                                          utilization, 100 * batching::kDefaultKvShare)),
      "L4 and A10G have no Vidur profile: their executor is the A100 profile scaled by the catalog's memory "
      "bandwidth (weight reads, decode attention) and FP16 tensor peak (the rest), with their own 24 GiB for "
      "weights and KV blocks; TP 1 only (no interconnect profile)",
      "attention is Vidur's Llama-2-7B A100 profile (the only one published in full), scaled per TP rank by "
      "(KV heads / TP) x head_dim for decode and (query heads / TP) x head_dim for prefill over 32 x 128, kernel "
      "launch terms unscaled; with TP > 1 each layer adds two all-reduces of the step's FP16 activations, timed "
      "from Vidur's DGX NCCL profile (network/<gpu>_dgx/all_reduce.csv, one node)",
      fmt::format("prices: {} (on demand){}", prices,
                  cfg.spot ? "; spot = the table's spot quote, else kDefaultSpotRatio 0.37 x on demand" : ""),
      fmt::format("requests over {}'s {}-token context ({} of {} in the tuning half) cannot be served by any "
                  "replica: they are counted and reported, left out of the plan and of the attainment of servable "
                  "requests (plan.json over_context)",
                  model.name, model.max_context, w.over_context, w.total),
      cfg.router == kRouterInput
          ? std::string("routing (calibration and replay): by prompt length only (no output-length oracle): a "
                        "request's input bucket picks the GPU type by the plan's slices summed over that input "
                        "bucket's output buckets (smooth weighted round robin), then the least-loaded GPU of that "
                        "type (load estimated with the input bucket's planned mean service time)")
          : std::string("routing (calibration and replay): output-length ORACLE, as Mélange's load balancer: a "
                        "request's bucket (prompt and true output length) picks the GPU type by the plan's slice "
                        "shares (smooth weighted round robin), then the least-loaded GPU of that type"),
      timed ? std::string("the plan (bucket histogram, rate, burst calibration) sees only the tuning half: the trace's "
                          "first half in time; the held-out second half is only replayed")
            : std::string("the plan (bucket histogram, burst calibration) sees only the tuning half: the even rows of "
                          "the lengths-only trace; the held-out odd rows are only replayed (Poisson arrivals)"),
  };
  if (!left_out.empty()) {
    res.assumptions.push_back(fmt::format("GPU types left out (cannot hold or time {}): {}", model.name,
                                          fmt::join(left_out, "; ")));
  }
  if (cfg.spot) {
    res.assumptions.push_back(std::string(
        "spot: every type's pool follows the 16-node p3.2xlarge availability of 3 AWS zones pooled "
        "(data/spot_traces, aws-08-27-2023), one series per type starting a quarter apart; a spot GPU is "
        "billed availability x spot price (per-second billing while it exists); the plan keeps all traffic "
        "within capacity after losing all spot GPUs of any one type (re-split over the rest, no replacement), "
        "and the replay places the spot series so that the largest spot pool loses a GPU a third of the way "
        "into the held-out half (a stress window)"));
  }
  res.assumptions.push_back(fmt::format(
      "bursts: the plan is sized for the rate x {:.3f}, the smallest factor 1.15^k whose fleet kept >= {:.1f}% of "
      "the tuning half (Poisson draw seed {} for a lengths-only trace) "
      "within both SLOs; each single-type baseline gets its own factor the same way; the attainment "
      "reported is the held-out half's (seed {})",
      chosen.factor, 100 * cfg.target_attainment, cfg.seed, cfg.seed + 1));
  if (res.has_day) {
    res.assumptions.push_back(fmt::format(
        "day: {} periods from {}; each planned by the ILP at its rate (not replayed; the peak plan is); a GPU "
        "added at a period boundary is billed {:g} s of cold start before it; removals are immediate",
        res.day.periods.size(), cfg.rate_curve, cfg.cold_start_s));
  }
  if (!cfg.verify) return res;
  say("verifying the plan by replay on the held-out half");
  SEEDANCE_ASSIGN_OR_RETURN(res.verified, Verify(ctx, final_problem, alloc, held, cfg.router));
  res.verified_run = true;
  say(fmt::format("replay ({} router): {} of {} servable requests within both SLOs ({:.2f}%)", cfg.router,
                  res.verified.met, res.verified.servable, 100 * res.verified.slo_attainment));
  res.other_router = cfg.router == kRouterInput ? kRouterOutputOracle : kRouterInput;
  SEEDANCE_ASSIGN_OR_RETURN(res.verified_other_router, Verify(ctx, final_problem, alloc, held, res.other_router));
  say(fmt::format("replay of the same fleet with the {} router: {:.2f}%", res.other_router,
                  100 * res.verified_other_router.slo_attainment));
  return res;
}

Result<PlanResult> PlanMelange(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(MelangeConfig c, LoadMelangeConfig(path));
  const AllocationProblem p = ToProblem(c);
  SEEDANCE_ASSIGN_OR_RETURN(Allocation a, SolveAllocation(p));
  PlanResult r;
  r.config.trace = path;
  r.rate_rps = c.total_request_rate;
  r.config.slice_factor = c.slice_factor;
  r.config.verify = false;
  r.melange_input = true;
  r.gpu_names = c.gpus;
  r.od_price = c.cost;
  r.usd_per_hour = r.od_usd_per_hour = a.usd_per_hour;
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    if (a.count[g] == 0) continue;
    r.mix.push_back(MixEntry{p.gpus[g].name, a.count[g], false, p.gpus[g].usd_per_hour, a.load[g],
                             1 - a.load[g] / a.count[g], 1, static_cast<int>(g)});
  }
  r.single = SingleTypeBaselines(p);
  const SingleType* best = BestSingle(r.single);
  r.best_single = best != nullptr ? best->option : -1;
  r.lower_bound_usd_per_hour = FluidLowerBound(p);
  if (best != nullptr) {
    r.saving_pct = 100 * (1 - r.usd_per_hour / best->usd_per_hour);
    r.max_saving_pct = 100 * (1 - r.lower_bound_usd_per_hour / best->usd_per_hour);
  }
  r.assumptions = {"Mélange's own input: its throughput tables and prices, its ILP (fluid within a type, "
                   "1/F-bucket slices across types), its single-type baseline (ceil of the fluid load)"};
  return r;
}

std::string PlanJson(const PlanResult& r) {
  json j;
  j["trace"] = r.config.trace;
  j["rate_rps"] = r.rate_rps;
  j["slo_ttft_s"] = r.config.slo_ttft_s;
  j["slo_tpot_s"] = r.config.slo_tpot_s;
  j["slice_factor"] = r.config.slice_factor;
  j["mix"] = json::array();
  for (const MixEntry& m : r.mix) {
    j["mix"].push_back({{"gpu", m.gpu}, {"count", m.count}, {"spot", m.spot}, {"usd_per_gpu_hour", m.usd_per_hour},
                        {"load_gpus", m.load * m.tp}, {"headroom", m.headroom}, {"tp", m.tp},
                        {"gpus", m.count * m.tp}});
  }
  if (!r.melange_input) {
    // Enough to deploy: per pool the replicas and GPUs per replica, and the router's settings.
    json d = {{"model", r.model}, {"max_context", r.max_context}};
    d["replicas"] = json::array();
    for (const MixEntry& m : r.mix) {
      d["replicas"].push_back({{"gpu", m.gpu}, {"spot", m.spot}, {"pool", r.pool_names[static_cast<std::size_t>(m.option)]},
                               {"replicas", m.count}, {"tensor_parallel", m.tp}, {"gpus_per_replica", m.tp},
                               {"gpus", m.count * m.tp}});
    }
    const bool oracle = r.config.router == kRouterOutputOracle;
    json router = {{"kind", r.config.router},
                   {"key", oracle ? "(prompt tokens, output tokens) bucket" : "prompt-token bucket"},
                   {"input_edges", r.workload.grid.input_edges},
                   {"pick", "smooth weighted round robin over the pools by the key's weights (ties to the first pool), "
                            "then the replica of that pool with the least outstanding work"},
                   {"reject_over_context", r.max_context}};
    if (oracle) router["output_edges"] = r.workload.grid.output_edges;
    // Only the pools that have replicas, keyed by pool name.
    router["weights"] = json::array();
    for (std::size_t k = 0; k < r.router_weights.size(); ++k) {
      json row = json::object();
      for (const MixEntry& m : r.mix) {
        const double wgt = r.router_weights[k][static_cast<std::size_t>(m.option)];
        if (wgt > 0) row[r.pool_names[static_cast<std::size_t>(m.option)]] = wgt;
      }
      router["weights"].push_back(row);
    }
    d["router"] = router;
    d["engine"] = {{"policy", r.config.policy}, {"max_num_batched_tokens", r.max_num_batched_tokens},
                   {"max_num_seqs", r.max_num_seqs}, {"chunked_prefill", r.chunked_prefill},
                   {"block_size", r.block_size}, {"gpu_memory_utilization", batching::BatchingConfig().gpu_memory_utilization}};
    j["deploy"] = d;
    j["over_context"] = {{"max_context", r.max_context}, {"tuning_requests", r.workload.total},
                         {"tuning_over_context", r.workload.over_context}};
    if (r.verified_run) {
      j["over_context"]["held_out_requests"] = r.verified.requests;
      j["over_context"]["held_out_over_context"] = r.verified.over_context;
    }
  }
  j["usd_per_hour"] = r.usd_per_hour;
  j["usd_per_million_tokens"] = r.usd_per_mtok;
  j["on_demand_usd_per_hour"] = r.od_usd_per_hour;
  if (r.config.spot) j["spot_plan_usd_per_hour"] = r.spot_plan_usd_per_hour;
  j["lower_bound_usd_per_hour"] = r.lower_bound_usd_per_hour;
  if (r.best_single >= 0) {
    const SingleType& b = r.single[static_cast<std::size_t>(r.best_single)];
    j["best_single"] = {{"gpu", r.gpu_names[static_cast<std::size_t>(b.option)]}, {"count", b.count},
                        {"usd_per_hour", b.usd_per_hour}};
  } else {
    j["best_single"] = nullptr;
  }
  // Every single-type baseline and the saving of a plan costing `usd` against it.
  auto singles = [&](const std::vector<SingleType>& list, double usd) {
    json out = json::array();
    for (const SingleType& s : list) {
      json e = {{"gpu", r.gpu_names[static_cast<std::size_t>(s.option)]}, {"feasible", s.feasible}};
      if (static_cast<std::size_t>(s.option) < r.tp.size()) e["tp"] = r.tp[static_cast<std::size_t>(s.option)];
      if (s.feasible) {
        e["count"] = s.count;
        e["load_gpus"] = s.load;
        e["usd_per_hour"] = s.usd_per_hour;
        e["saving_pct"] = 100 * (1 - usd / s.usd_per_hour);
      }
      out.push_back(e);
    }
    return out;
  };
  j["single"] = singles(r.single, r.usd_per_hour);
  j["saving_pct"] = r.saving_pct;
  j["max_saving_pct"] = r.max_saving_pct;
  j["verified_slo_attainment"] = r.verified_run ? json(r.verified.slo_attainment) : json(nullptr);
  if (!r.melange_input) {
    j["router"] = r.config.router;
    if (r.verified_run) {
      // The same fleet on the held-out half under both routers (output-oracle = Mélange's).
      j["held_out_slo_attainment_by_router"] = {{r.config.router, r.verified.slo_attainment},
                                                {r.other_router, r.verified_other_router.slo_attainment}};
    }
  }
  if (!r.melange_input) {
    j["burst_factor"] = r.burst_factor;
    j["calibration_slo_attainment"] = r.calibration_attainment;
    json m = {{"usd_per_hour", r.mean_rate.usd_per_hour}, {"saving_pct", r.mean_rate.saving_pct},
              {"held_out_slo_attainment", r.mean_rate.held_out_attainment}};
    m["single"] = singles(r.mean_rate.single, r.mean_rate.usd_per_hour);
    j["mean_rate_plan"] = m;
  }
  if (r.verified_run) {
    j["verification"] = {{"requests", r.verified.requests}, {"servable", r.verified.servable},
                         {"over_context", r.verified.over_context},
                         {"met_of_all_requests", r.verified.MetOfAll()},
                         {"met", r.verified.met}, {"lost_to_preemption", r.verified.lost_to_preemption},
                         {"preemptions", r.verified.preemptions},
                         {"spot_window_start_s", r.verified.spot_window_start_s},
                         {"ttft_p99_s", r.verified.ttft_p99_s}, {"tpot_p99_s", r.verified.tpot_p99_s}};
  }
  if (!r.curve.empty()) {
    j["cost_curve"] = json::array();
    for (const CostPoint& p : r.curve) {
      j["cost_curve"].push_back({{"rate_rps", p.rate_rps}, {"mix_usd_per_hour", p.mix_usd_per_hour},
                                 {"spot_usd_per_hour", p.spot_usd_per_hour},
                                 {"lower_bound_usd_per_hour", p.lower_bound_usd_per_hour},
                                 {"single_usd_per_hour", p.single_usd_per_hour}});
    }
  }
  if (!r.capacity.empty()) {
    json caps = json::object();
    for (const CapacityTable& t : r.capacity) {
      json row = json::array();
      for (const BucketCapacity& c : t.buckets) row.push_back(c.capacity_rps);
      caps[t.gpu] = row;
    }
    j["capacity_rps"] = caps;
    j["grid"] = {{"name", r.workload.grid.name},
                 {"input_edges", r.workload.grid.input_edges},
                 {"output_edges", r.workload.grid.output_edges}};
  }
  if (r.has_day) {
    json d = {{"static_peak_usd", r.day.static_peak_usd}, {"autoscaled_usd", r.day.autoscaled_usd},
              {"autoscaled_single_usd", r.day.autoscaled_single_usd}, {"single_gpu", r.day.single_gpu},
              {"boot_usd", r.day.boot_usd}, {"cold_start_s", r.config.cold_start_s}};
    d["periods"] = json::array();
    for (const DayPeriod& p : r.day.periods) {
      d["periods"].push_back({{"start_s", p.start_s}, {"end_s", p.end_s}, {"rate_rps", p.rate_rps},
                              {"count", p.count}, {"usd_per_hour", p.usd_per_hour},
                              {"best_single_usd_per_hour", p.best_single_usd_per_hour}});
    }
    j["day"] = d;
  }
  j["assumptions"] = r.assumptions;
  return j.dump(2) + "\n";
}

}  // namespace seedance::planner
