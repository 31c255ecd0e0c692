#include "seedance/fleet/serving.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <ostream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "seedance/batching/benchmark.h"
#include "seedance/batching/executor.h"
#include "seedance/batching/model.h"
#include "seedance/batching/trace.h"
#include "seedance/cluster/gpu_model.h"
#include "seedance/core/csv.h"
#include "seedance/core/file_util.h"
#include "seedance/core/rng.h"
#include "seedance/cost/price_table.h"
#include "seedance/planner/allocation.h"
#include "seedance/planner/workload.h"
#include "seedance/sim/lp.h"

namespace seedance::fleet {
namespace {

constexpr double kMixRateStep = 1.02;     // CheapestMix is solved on a 2 % geometric rate grid, rounded up
constexpr double kEps = 1e-9;

std::uint64_t Fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (char ch : s) {
    h ^= static_cast<unsigned char>(ch);
    h *= 1099511628211ULL;
  }
  return h;
}

bool BundledAzure(const std::string& trace) { return trace == "conv" || trace == "code"; }

// The trace's half in time: the first (tuning, as planner::Plan cuts it) or the second.
batching::Trace Half(const batching::Trace& t, bool first) {
  batching::Trace out;
  out.name = t.name + (first ? " (tuning half)" : " (held-out half)");
  if (t.requests.empty()) return out;
  const double mid = t.requests.front().arrival_s + t.Span() / 2;
  for (const batching::Request& r : t.requests) {
    if ((r.arrival_s < mid) != first) continue;
    batching::Request q = r;
    q.id = static_cast<std::uint32_t>(out.requests.size());
    out.requests.push_back(q);
  }
  return out;
}

Result<batching::Trace> LoadBundled(const std::string& data_dir, const std::string& trace) {
  if (!BundledAzure(trace)) {
    return InvalidArgumentError(fmt::format("trace '{}': accepted: conv, code (the bundled Azure traces)", trace));
  }
  return batching::LoadAzureTrace(batching::ResolveTracePath(data_dir, trace));
}

int Ceil(double x) { return static_cast<int>(std::ceil(x - kEps)); }

std::string Sanitize(std::string_view s) {
  std::string out;
  for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) != 0 ? c : '-');
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Weekly shape and demand.

std::string BundledWeeklyShapePath() { return DataDir() + "/fleet_week/weekly_shape.csv"; }

Result<WeeklyShape> LoadWeeklyShape(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t hcol, t.ColumnIndex("hour_of_week"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t fcol, t.ColumnIndex("factor"));
  WeeklyShape s;
  s.source = path;
  for (const CsvTable::Row& row : t.rows()) {
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t h, t.Int(row, hcol));
    if (h != static_cast<std::int64_t>(s.hourly.size())) {
      return t.FieldError(row, hcol, fmt::format("expected hour {} (rows in order 0..167), got {}", s.hourly.size(), h));
    }
    SEEDANCE_ASSIGN_OR_RETURN(double f, t.Double(row, fcol));
    if (!std::isfinite(f) || f < 0) return t.FieldError(row, fcol, fmt::format("expected a finite factor >= 0, got {}", f));
    s.hourly.push_back(f);
  }
  if (s.hourly.size() != kHoursPerWeek) {
    return InvalidArgumentError(fmt::format("{}: field 'hour_of_week': expected {} rows (hours 0..167), got {}", path,
                                            kHoursPerWeek, s.hourly.size()));
  }
  double sum = 0;
  for (double f : s.hourly) sum += f;
  if (std::abs(sum / kHoursPerWeek - 1) > 1e-3) {
    return InvalidArgumentError(fmt::format("{}: field 'factor': the factors must have mean 1, got {:.6f}", path,
                                            sum / kHoursPerWeek));
  }
  return s;
}

double Demand::Mean() const {
  double s = 0;
  for (double r : rps) s += r;
  return rps.empty() ? 0 : s / static_cast<double>(rps.size());
}
double Demand::Peak() const { return rps.empty() ? 0 : *std::max_element(rps.begin(), rps.end()); }

Result<Demand> BuildDemand(const DeploymentSpec& d, const WeeklyShape& shape, const std::string& data_dir, int week,
                           std::uint64_t seed, double days) {
  if (!(d.mean_rate_rps > 0) || !std::isfinite(d.mean_rate_rps)) {
    return InvalidArgumentError(fmt::format("deployment '{}': mean_rate_rps must be > 0, got {}", d.name, d.mean_rate_rps));
  }
  if (!(days > 0) || days > 7) return InvalidArgumentError(fmt::format("days must be in (0, 7], got {}", days));
  if (week < 0) return InvalidArgumentError(fmt::format("week must be >= 0, got {}", week));
  if (shape.hourly.size() != kHoursPerWeek) {
    return InvalidArgumentError(fmt::format("weekly shape {}: {} factors, expected {}", shape.source, shape.hourly.size(),
                                            kHoursPerWeek));
  }
  SEEDANCE_ASSIGN_OR_RETURN(batching::Trace trace, LoadBundled(data_dir, d.trace));
  const batching::Trace half = Half(trace, week == 0);
  if (half.requests.size() < 2) return InvalidArgumentError(fmt::format("{}: too few requests for bursts", half.name));
  Demand out;
  out.week = week;
  // Whole minutes of the half (a last partial minute would read as a dip).
  const double t0 = half.requests.front().arrival_s;
  const auto minutes = static_cast<std::size_t>(std::floor(half.Span() / out.step_s));
  if (minutes < 1) return InvalidArgumentError(fmt::format("{}: spans less than a minute", half.name));
  std::vector<double> burst(minutes, 0.0);
  double tokens = 0;
  for (const batching::Request& r : half.requests) {
    tokens += r.prompt + r.output;
    const auto m = static_cast<std::size_t>((r.arrival_s - t0) / out.step_s);
    if (m < minutes) burst[m] += 1;
  }
  out.tokens_per_request = tokens / static_cast<double>(half.requests.size());
  double sum = 0;
  for (double b : burst) sum += b;
  for (double& b : burst) b *= static_cast<double>(minutes) / sum;
  Rng rng(seed ^ Fnv1a(fmt::format("{}|{}|{}|{}", d.name, d.trace, d.model, week)));
  const std::size_t offset = static_cast<std::size_t>(rng.Uniform(minutes));
  const auto steps = static_cast<std::size_t>(std::llround(days * 86400 / out.step_s));
  out.rps.resize(steps);
  for (std::size_t k = 0; k < steps; ++k) {
    const auto hour = static_cast<std::size_t>(static_cast<double>(k) * out.step_s / 3600) % kHoursPerWeek;
    out.rps[k] = d.mean_rate_rps * shape.hourly[hour] * burst[(offset + k) % minutes];
  }
  return out;
}

Result<Demand> BuildHistory(const DeploymentSpec& d, const WeeklyShape& shape, const std::string& data_dir, int week,
                            std::uint64_t seed) {
  if (week <= 0) return BuildDemand(d, shape, data_dir, 0, seed + 1);
  return BuildDemand(d, shape, data_dir, week - 1, seed);
}

// ---------------------------------------------------------------------------------------------
// Profiles.

const std::vector<std::string>& ServingGpuTypes() {
  static const std::vector<std::string> kTypes{"L4", "A10G", "A100-80G", "H100"};
  return kTypes;
}

Result<ServingProfile> ProfileServing(const DeploymentSpec& d, const std::string& policy, const std::string& data_dir,
                                      const std::string& cache_dir, std::ostream* progress,
                                      const planner::ProbeOptions& probe, int threads) {
  const auto started = std::chrono::steady_clock::now();
  if (policy != "vllm" && policy != "seedance") {
    return InvalidArgumentError(fmt::format("serving policy '{}': accepted: vllm, seedance", policy));
  }
  if (!(d.slo_ttft_s > 0) || !(d.slo_tpot_s > 0)) {
    return InvalidArgumentError(fmt::format("deployment '{}': slo_ttft_s and slo_tpot_s must be > 0", d.name));
  }
  auto found = batching::FindModel(d.model);
  if (!found.has_value()) return InvalidArgumentError(fmt::format("deployment '{}': model: {}", d.name, found.error().message()));
  const batching::ModelSpec model = *found;
  SEEDANCE_ASSIGN_OR_RETURN(batching::Trace trace, LoadBundled(data_dir, d.trace));
  const planner::BucketGrid grid = planner::MelangeGrid(model.max_context);
  SEEDANCE_ASSIGN_OR_RETURN(planner::Workload w, planner::BucketTrace(Half(trace, true), grid, model.max_context));

  ServingProfile p;
  p.policy = policy;
  p.model = model.name;
  p.trace = d.trace;
  const std::vector<std::string> wanted =
      d.gpus.empty() ? ServingGpuTypes() : d.gpus;
  const double utilization = batching::BatchingConfig().gpu_memory_utilization;
  std::vector<batching::GpuSpec> specs;
  for (const std::string& g : wanted) {
    const batching::GpuSpec* spec = nullptr;
    std::vector<batching::GpuSpec> known;
    for (const std::string& n : batching::KnownGpus()) {
      SEEDANCE_ASSIGN_OR_RETURN(batching::GpuSpec s, batching::FindGpu(n));
      known.push_back(s);
    }
    std::vector<std::string> spellings;
    for (const batching::GpuSpec& s : known) {
      spellings.push_back(s.price_model);
      if (s.price_model == g || s.name == g) spec = &s;
    }
    if (spec == nullptr) {
      return InvalidArgumentError(fmt::format("deployment '{}': gpu '{}': accepted: {}", d.name, g, fmt::join(spellings, ", ")));
    }
    if (std::any_of(specs.begin(), specs.end(), [&](const batching::GpuSpec& s) { return s.name == spec->name; })) {
      return InvalidArgumentError(fmt::format("deployment '{}': gpu '{}' listed twice", d.name, g));
    }
    if (const std::string path = batching::MlpProfilePath(data_dir, *spec, model); !std::filesystem::exists(path)) {
      p.notes.push_back(fmt::format("{} left out: no profile of {} ({} is missing)", spec->price_model, model.name, path));
      continue;
    }
    Result<int> tp = batching::DefaultTensorParallel(*spec, model, utilization);
    if (!tp.has_value()) {
      if (tp.error().code() != StatusCode::kFailedPrecondition) return tp.error();
      p.notes.push_back(fmt::format("{} left out: {}", spec->price_model, tp.error().message()));
      continue;
    }
    specs.push_back(*spec);
    p.gpus.push_back(spec->price_model);
    p.tp.push_back(*tp);
  }
  if (specs.empty()) {
    return FailedPreconditionError(fmt::format("deployment '{}': no listed GPU type can hold {}: {}", d.name, model.name,
                                               fmt::join(p.notes, "; ")));
  }
  // vLLM and Seedance at the knobs the batching sweep chose for this trace (fp16 KV). The capacity
  // cache key does not hold the knobs, so each knob setting gets its own cache folder.
  const batching::TunedKnobs& knobs = batching::TunedKnobsFor(d.trace, 16);
  const batching::EngineKnobs& own = policy == "vllm" ? knobs.vllm : knobs.seedance;
  const std::string cache = cache_dir.empty() ? "" : cache_dir + "/knobs-" + Sanitize(own.ToString());
  p.notes.push_back(fmt::format("{} at the knobs tuned on the {} trace's tuning half (fp16 KV): {}", policy, d.trace,
                                own.ToString()));
  std::vector<bool> needed(w.fraction.size());
  for (std::size_t b = 0; b < needed.size(); ++b) needed[b] = w.fraction[b] > 0;
  // One type per task, `threads` at a time: the types are independent (one cache file each), so
  // the tables, and the progress lines (written per type, in type order), are the same for any
  // thread count.
  const auto workers = static_cast<std::size_t>(std::clamp(threads, 1, static_cast<int>(specs.size())));
  std::vector<Result<planner::CapacityTable>> tables(specs.size(), InternalError("not profiled"));
  std::vector<std::ostringstream> lines(specs.size());
  auto profile_type = [&](std::size_t k) {
    const planner::EngineOptions eo{data_dir, model.name, policy, d.slo_ttft_s, d.slo_tpot_s, p.tp[k], ""};
    Result<std::unique_ptr<planner::Engine>> e = planner::MakeEngine(eo, specs[k].name);
    if (!e.has_value()) {
      tables[k] = e.error();
      return;
    }
    knobs.vllm.ApplyTo(&(*e)->settings.vllm);
    knobs.seedance.ApplyTo(&(*e)->settings.seedance);
    // One worker writes its lines as they come; several keep each type's lines for type order.
    std::ostream* out = progress == nullptr ? nullptr : workers <= 1 ? progress : &lines[k];
    tables[k] = planner::ProfileCapacity(**e, grid, needed, probe, cache, out);
  };
  if (!cache.empty()) SEEDANCE_RETURN_IF_ERROR(EnsureDirectory(cache));
  if (workers <= 1) {
    for (std::size_t k = 0; k < specs.size(); ++k) profile_type(k);
  } else {
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (std::size_t i = 0; i < workers; ++i) {
      pool.emplace_back([&] {
        for (std::size_t k = next++; k < specs.size(); k = next++) profile_type(k);
      });
    }
    for (std::thread& t : pool) t.join();
  }
  for (std::size_t k = 0; k < specs.size(); ++k) {
    if (progress != nullptr) *progress << lines[k].str();
    SEEDANCE_ASSIGN_OR_RETURN(planner::CapacityTable t, std::move(tables[k]));
    std::vector<double> caps;
    for (const planner::BucketCapacity& c : t.buckets) caps.push_back(c.capacity_rps);
    p.bucket_rps.push_back(std::move(caps));
  }
  // The mix: the tuning half's buckets some kept type serves at the SLOs.
  p.bucket_share.assign(w.fraction.size(), 0.0);
  double kept = 0;
  for (std::size_t b = 0; b < w.fraction.size(); ++b) {
    p.bucket_names.push_back(grid.BucketName(static_cast<int>(b)));
    const bool served = std::any_of(p.bucket_rps.begin(), p.bucket_rps.end(), [&](const auto& c) { return c[b] > 0; });
    if (served) {
      p.bucket_share[b] = w.fraction[b];
      kept += w.fraction[b];
    } else {
      p.unservable_share += w.fraction[b];
    }
  }
  if (!(kept > 0)) {
    return FailedPreconditionError(fmt::format("deployment '{}': no request bucket of {} meets TTFT {} s / TPOT {} s on any type",
                                               d.name, d.trace, d.slo_ttft_s, d.slo_tpot_s));
  }
  for (double& s : p.bucket_share) s /= kept;
  if (p.unservable_share > 0) {
    p.notes.push_back(fmt::format("{:.3f} % of the tuning half's requests meet the SLOs on no kept type: left out of the "
                                  "mix (never served, not counted in served share)",
                                  100 * p.unservable_share));
  }
  if (w.over_context > 0) {
    p.notes.push_back(fmt::format("{} of {} tuning-half requests exceed {}'s {}-token context: left out of the mix",
                                  w.over_context, w.total, model.name, model.max_context));
  }
  for (std::size_t k = 0; k < specs.size(); ++k) {
    double inv = 0;
    bool ok = true;
    for (std::size_t b = 0; b < p.bucket_share.size(); ++b) {
      if (p.bucket_share[b] <= 0) continue;
      if (p.bucket_rps[k][b] <= 0) {
        ok = false;
        break;
      }
      inv += p.bucket_share[b] / p.bucket_rps[k][b];
    }
    p.replica_rps.push_back(ok && inv > 0 ? 1 / inv : 0);
    if (!ok) p.notes.push_back(fmt::format("{}: some of the mix misses the SLOs on it: usable in a mix only", p.gpus[k]));
  }
  p.tokens_per_request = w.mean_tokens;
  p.notes.push_back(fmt::format("capacities: the most req/s one replica sustains with {:.0f} % of probe requests within both "
                                "SLOs, per Mélange bucket at its upper edges, on the noisy ground-truth executor",
                                100 * probe.target_attainment));
  p.profile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return p;
}

Result<std::vector<double>> OnDemandPrices(const ServingProfile& p, const std::string& prices_path) {
  const std::string path = prices_path.empty() ? cost::BundledPriceTablePath() : prices_path;
  SEEDANCE_ASSIGN_OR_RETURN(cost::PriceTable table, cost::PriceTable::LoadFile(path));
  std::vector<double> out;
  for (const std::string& g : p.gpus) {
    SEEDANCE_ASSIGN_OR_RETURN(cluster::GpuModelIndex m, cluster::ParseGpuModel(g));
    const cost::GpuPrice* price = table.Find(m);
    if (price == nullptr) return NotFoundError(fmt::format("{}: no price for GPU model {}", path, g));
    out.push_back(static_cast<double>(price->usd_per_gpu_hour.raw()) / 1e6);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Mixes and served share.

Result<ServingMix> CheapestMix(const ServingProfile& p, double rps, const std::vector<double>& usd_per_gpu_hour,
                               const std::vector<int>& node_gpus) {
  const std::size_t types = p.gpus.size();
  if (usd_per_gpu_hour.size() != types) {
    return InvalidArgumentError(fmt::format("CheapestMix: {} prices for {} GPU types", usd_per_gpu_hour.size(), types));
  }
  for (double c : usd_per_gpu_hour) {
    if (!std::isfinite(c) || c < 0) return InvalidArgumentError(fmt::format("CheapestMix: bad price {}", c));
  }
  ServingMix mix;
  mix.replicas.assign(types, 0);
  if (!(rps > 0)) return mix;
  // Mélange's allocation as its LP relaxation, rounded up per type: each bucket's traffic split
  // over the types at their measured capacities at the least cost (fluid replicas), then every
  // type's fluid load rounded up; and never dearer than the best single type. Mélange's exact ILP
  // (planner::SolveAllocation) ran for minutes on some rates of the fleet week (types whose
  // replicas serve a few hundredths of a request per second of some buckets), where this stays
  // within one replica per type of it and takes milliseconds.
  sim::LinearProgram lp(sim::LinearProgram::Sense::kMinimize);
  std::vector<std::vector<std::pair<int, double>>> load(types);  // per type: (column, 1 / T[g][b])
  std::vector<std::size_t> col_bucket;                           // per column: its bucket
  bool servable = true;
  for (std::size_t b = 0; b < p.bucket_share.size(); ++b) {
    if (p.bucket_share[b] <= 0) continue;
    std::vector<std::pair<int, double>> row;
    for (std::size_t g = 0; g < types; ++g) {
      const double t = p.bucket_rps[g][b];
      if (t <= 0) continue;
      const int x = lp.AddColumn(p.tp[g] * usd_per_gpu_hour[g] / t, 0, std::numeric_limits<double>::infinity());
      row.emplace_back(x, 1.0);
      load[g].emplace_back(x, 1 / t);
      col_bucket.push_back(b);
    }
    if (row.empty()) {
      servable = false;
      break;
    }
    lp.AddRow(row, p.bucket_share[b] * rps, p.bucket_share[b] * rps);
  }
  double best = std::numeric_limits<double>::infinity();
  auto consider = [&](const std::vector<int>& replicas) {
    double cost = 0;
    for (std::size_t g = 0; g < types; ++g) {
      const int node = g < node_gpus.size() ? std::max(1, node_gpus[g]) : 1;
      cost += (replicas[g] * p.tp[g] + node - 1) / node * node * usd_per_gpu_hour[g];
    }
    if (cost < best - 1e-9) {
      best = cost;
      mix.replicas = replicas;
    }
  };
  if (servable && lp.Solve().ok()) {
    // Candidates: every fluid load rounded up; and every load rounded down, the traffic those
    // replicas leave (each type's share of its buckets, pro rata) served by more replicas of one
    // type, for each type in turn.
    std::vector<double> fluid(types, 0.0);
    std::vector<int> up(types, 0), down(types, 0);
    for (std::size_t g = 0; g < types; ++g) {
      for (const auto& [col, inv] : load[g]) fluid[g] += lp.value(col) * inv;
      up[g] = static_cast<int>(std::ceil(fluid[g] - 1e-9));
      down[g] = static_cast<int>(std::floor(fluid[g] + 1e-9));
    }
    consider(up);
    std::vector<double> residual(p.bucket_share.size(), 0.0);  // req/s of each bucket left over
    for (std::size_t g = 0; g < types; ++g) {
      const double left = fluid[g] > 0 ? 1.0 - down[g] / fluid[g] : 0.0;
      for (const auto& [col, inv] : load[g]) {
        (void)inv;
        residual[col_bucket[static_cast<std::size_t>(col)]] += lp.value(col) * std::max(0.0, left);
      }
    }
    for (std::size_t g = 0; g < types; ++g) {
      double extra = 0;
      bool ok = true;
      for (std::size_t b = 0; b < residual.size(); ++b) {
        if (residual[b] <= 1e-12) continue;
        if (p.bucket_rps[g][b] <= 0) {
          ok = false;
          break;
        }
        extra += residual[b] / p.bucket_rps[g][b];
      }
      if (!ok) continue;
      std::vector<int> r = down;
      r[g] += static_cast<int>(std::ceil(extra - 1e-9));
      consider(r);
    }
  }
  for (std::size_t g = 0; g < types; ++g) {
    if (!(p.replica_rps[g] > 0)) continue;
    std::vector<int> r(types, 0);
    r[g] = static_cast<int>(std::ceil(rps / p.replica_rps[g] - 1e-9));
    consider(r);
  }
  if (!std::isfinite(best)) return FailedPreconditionError("CheapestMix: no GPU type serves every bucket of the mix");
  return mix;
}

double MaxServedRps(const ServingProfile& p, const ServingMix& ready) {
  const std::size_t types = std::min(p.gpus.size(), ready.replicas.size());
  std::vector<std::size_t> live;
  for (std::size_t g = 0; g < types; ++g) {
    if (ready.replicas[g] > 0) live.push_back(g);
  }
  if (live.empty()) return 0;
  if (live.size() == 1) return ready.replicas[live[0]] * p.replica_rps[live[0]];
  // max a: sum_g x[b][g] = a s_b for every bucket with traffic; sum_b x[b][g] / T[g][b] <= n_g.
  sim::LinearProgram lp(sim::LinearProgram::Sense::kMaximize);
  const int alpha = lp.AddColumn(1, 0, std::numeric_limits<double>::infinity());
  std::vector<std::vector<std::pair<int, double>>> per_type(types);
  for (std::size_t b = 0; b < p.bucket_share.size(); ++b) {
    if (p.bucket_share[b] <= 0) continue;
    std::vector<std::pair<int, double>> row{{alpha, -p.bucket_share[b]}};
    for (std::size_t g : live) {
      const double t = p.bucket_rps[g][b];
      if (t <= 0) continue;
      const int x = lp.AddColumn(0, 0, std::numeric_limits<double>::infinity());
      row.emplace_back(x, 1.0);
      per_type[g].emplace_back(x, 1 / t);
    }
    if (row.size() == 1) return 0;  // a bucket of the mix no ready replica serves
    lp.AddRow(row, 0, 0);
  }
  for (std::size_t g : live) lp.AddRow(per_type[g], -std::numeric_limits<double>::infinity(), ready.replicas[g]);
  if (!lp.Solve().ok()) return 0;
  return std::max(0.0, lp.value(alpha));
}

double ServedShare(const ServingProfile& p, const ServingMix& ready, double rps) {
  if (!(rps > 0)) return 1;
  return std::min(1.0, MaxServedRps(p, ready) / rps);
}

// ---------------------------------------------------------------------------------------------
// Controllers.

ServingController::ServingController(const ServingProfile& p, const ServingPolicy& policy,
                                     std::vector<double> usd_per_gpu_hour, double peak_rps, double step_s,
                                     double cold_start_s)
    : p_(&p),
      policy_(policy),
      prices_(std::move(usd_per_gpu_hour)),
      peak_rps_(peak_rps),
      step_s_(step_s),
      cold_start_s_(cold_start_s) {
  prices_.resize(p.gpus.size(), 0.0);
  // The cheapest single type for the peak (ties: the lower index).
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t g = 0; g < p.gpus.size(); ++g) {
    if (p.replica_rps[g] <= 0) continue;
    const double usd = std::max(1, Ceil(peak_rps_ / p.replica_rps[g])) * p.tp[g] * prices_[g];
    if (usd < best) {
      best = usd;
      single_ = static_cast<int>(g);
    }
  }
  if (single_ >= 0) {
    const double u = std::max(policy_.target_utilization, 0.05);
    max_replicas_ = std::max(policy_.min_replicas, Ceil(2 * peak_rps_ / (p.replica_rps[static_cast<std::size_t>(single_)] * u)));
  }
}

void ServingController::SetHistory(std::vector<double> history) { history_ = std::move(history); }

double ServingController::TargetRate(std::size_t k, std::span<const double> past) const {
  // The observed rates: the history set, then past[0..k).
  const std::size_t h = history_.size();
  const std::size_t n = h + std::min(k, past.size());
  auto at = [&](std::size_t j) { return j < h ? history_[j] : past[j - h]; };
  const double u = std::max(policy_.target_utilization, 0.05);
  if (n == 0) return peak_rps_ / u;  // nothing observed yet: sized for the tuning week's peak
  // HPA: the recommendation of every step in the scale-down window; the largest holds (scale-up at
  // once: the newest recommendation is in the window).
  const auto window = static_cast<std::size_t>(std::max(1, Ceil(policy_.scale_down_window_s / step_s_) + 1));
  double rate = 0;
  for (std::size_t j = n - std::min(n, window); j < n; ++j) rate = std::max(rate, at(j) / u);
  if (policy_.autoscaler == "predictive") {
    // Seasonal naive: the mean rate of the same clock hour one week earlier, for the hour the
    // replicas asked for now will serve in (they are ready a cold start later), x headroom. Without
    // a week of past the controller is the reactive one.
    const auto hour = static_cast<std::size_t>(std::llround(3600 / step_s_));
    const std::size_t week = hour * kHoursPerWeek;
    const auto lead = static_cast<std::size_t>(std::max(0, Ceil(cold_start_s_ / step_s_)));
    const std::size_t target = n + lead;
    if (target / hour * hour >= week) {
      const std::size_t from = target / hour * hour - week;
      const std::size_t to = std::min(from + hour, n);
      double sum = 0;
      for (std::size_t j = from; j < to; ++j) sum += at(j);
      if (to > from) rate = std::max(rate, sum / static_cast<double>(to - from) * policy_.headroom);
    }
  }
  return std::min(rate, 2 * peak_rps_ / u);
}

ServingMix ServingController::DesiredAhead(std::size_t k, std::span<const double> past, double ahead_s) {
  double rate = TargetRate(k, past);
  const std::size_t h = history_.size();
  const std::size_t n = h + std::min(k, past.size());
  if (policy_.autoscaler == "predictive" && ahead_s > 0 && n > 0) {
    auto at = [&](std::size_t j) { return j < h ? history_[j] : past[j - h]; };
    const auto hour = static_cast<std::size_t>(std::llround(3600 / step_s_));
    const std::size_t week = hour * kHoursPerWeek;
    const auto last = n + static_cast<std::size_t>(std::max(0, Ceil(ahead_s / step_s_)));
    for (std::size_t start = n / hour * hour; start <= last; start += hour) {
      if (start < week) continue;
      const std::size_t from = start - week;
      const std::size_t to = std::min(from + hour, n);
      double sum = 0;
      for (std::size_t j = from; j < to; ++j) sum += at(j);
      if (to > from) rate = std::max(rate, sum / static_cast<double>(to - from) * policy_.headroom);
    }
    rate = std::min(rate, 2 * peak_rps_ / std::max(policy_.target_utilization, 0.05));
  }
  return ForRate(rate);
}

ServingMix ServingController::ForRate(double rate) {
  ServingMix m;
  m.replicas.assign(p_->gpus.size(), 0);
  if (single_ < 0) return m;
  const auto s = static_cast<std::size_t>(single_);
  if (!policy_.mix) {
    m.replicas[s] = std::clamp(Ceil(rate / p_->replica_rps[s]), policy_.min_replicas, max_replicas_);
    return m;
  }
  if (rate > 0) {
    const auto key = static_cast<long long>(std::ceil(std::log(rate) / std::log(kMixRateStep) - kEps));
    auto it = cache_->mixes.find(key);
    if (it == cache_->mixes.end()) {
      Result<ServingMix> r = CheapestMix(*p_, std::pow(kMixRateStep, static_cast<double>(key)), prices_, node_gpus_);
      ServingMix v = m;
      if (r.has_value()) {
        v = *r;
      } else {  // cannot happen for a profile whose mix some type serves; fall back to the single type
        v.replicas[s] = Ceil(rate / p_->replica_rps[s]);
      }
      it = cache_->mixes.emplace(key, v).first;
    }
    m = it->second;
  }
  int total = 0;
  for (int r : m.replicas) total += r;
  if (total < policy_.min_replicas) m.replicas[s] += policy_.min_replicas - total;
  return m;
}

void ServingController::SetNodeGpus(std::vector<int> node_gpus) {
  node_gpus_ = std::move(node_gpus);
  cache_ = std::make_shared<ServingCache>();
}

void ServingController::ShareCache(const ServingController& other) {
  if (other.p_->gpus.size() == p_->gpus.size() && other.prices_.size() == prices_.size() && other.node_gpus_ == node_gpus_) {
    cache_ = other.cache_;
  }
}

ServingMix ServingController::Desired(std::size_t k, std::span<const double> past) {
  return ForRate(TargetRate(k, past));
}

std::string ServingController::Describe() const {
  const std::string type = single_ < 0 ? "no type" : p_->gpus[static_cast<std::size_t>(single_)];
  const std::string what = policy_.mix ? "GPU mix (Mélange allocation at the target rate)" : "one type " + type;
  std::string s = fmt::format("{} {}: {}, target utilization {:.2f}, scale-down window {:g} s, min {} replicas",
                              p_->policy, policy_.autoscaler == "predictive" ? "predictive" : "reactive (HPA on req/s)",
                              what, policy_.target_utilization, policy_.scale_down_window_s, policy_.min_replicas);
  if (policy_.autoscaler == "predictive") s += fmt::format(", forecast x {:.2f} ahead of the {:g} s cold start", policy_.headroom, cold_start_s_);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Evaluation and tuning.

Result<ServingEval> EvaluateController(const ServingProfile& p, ServingController& controller, const Demand& demand,
                                       const std::vector<double>& usd_per_gpu_hour, double cold_start_s,
                                       std::span<const double> history, bool keep_trace) {
  const std::size_t types = p.gpus.size();
  if (usd_per_gpu_hour.size() != types) {
    return InvalidArgumentError(fmt::format("EvaluateController: {} prices for {} GPU types", usd_per_gpu_hour.size(), types));
  }
  if (demand.rps.empty()) return InvalidArgumentError("EvaluateController: empty demand");
  if (!history.empty() && controller.has_history()) {
    return InvalidArgumentError("EvaluateController: history given twice (to the controller and here)");
  }
  if (!(cold_start_s >= 0) || !(demand.step_s > 0)) return InvalidArgumentError("EvaluateController: cold_start_s must be >= 0");
  std::vector<double> past(history.begin(), history.end());
  past.insert(past.end(), demand.rps.begin(), demand.rps.end());
  const std::size_t h = history.size();
  const auto delay = static_cast<std::size_t>(std::max(0, Ceil(cold_start_s / demand.step_s)));
  ServingEval ev;
  ev.gpu_hours.assign(types, 0.0);
  ev.replica_hours.assign(types, 0.0);
  std::vector<std::vector<std::size_t>> live(types);  // per type: the step each live replica serves from
  std::map<std::vector<int>, double>& served_cache = controller.cache().served;
  double served = 0, offered = 0;
  const double hours = demand.step_s / 3600;
  for (std::size_t k = 0; k < demand.rps.size(); ++k) {
    const ServingMix want = controller.Desired(h + k, past);
    std::vector<std::size_t> want_n(types);
    for (std::size_t g = 0; g < types; ++g) {
      want_n[g] = static_cast<std::size_t>(std::max(0, g < want.replicas.size() ? want.replicas[g] : 0));
      // The deployment ran before the week: its first replicas are warm.
      while (live[g].size() < want_n[g]) live[g].push_back(k == 0 ? 0 : k + delay);
    }
    // Scale-down: booting replicas go first; serving ones go at once unless another type's new
    // replicas are still booting (a mix that changes its types is made before it is broken).
    for (std::size_t g = 0; g < types; ++g) {
      bool others_booting = false;
      for (std::size_t o = 0; o < types; ++o) {
        if (o != g && !live[o].empty() && live[o].back() > k) others_booting = true;
      }
      while (live[g].size() > want_n[g] && (live[g].back() > k || !others_booting)) live[g].pop_back();
    }
    ServingMix ready;
    int total = 0;
    for (std::size_t g = 0; g < types; ++g) {
      const auto r = std::count_if(live[g].begin(), live[g].end(), [&](std::size_t at) { return at <= k; });
      ready.replicas.push_back(static_cast<int>(r));
      const double billed = static_cast<double>(live[g].size());
      total += static_cast<int>(live[g].size());
      ev.replica_hours[g] += billed * hours;
      ev.gpu_hours[g] += billed * p.tp[g] * hours;
      ev.usd += billed * p.tp[g] * usd_per_gpu_hour[g] * hours;
    }
    ev.peak_replicas = std::max(ev.peak_replicas, total);
    auto it = served_cache.find(ready.replicas);
    if (it == served_cache.end()) it = served_cache.emplace(ready.replicas, MaxServedRps(p, ready)).first;
    const double rps = demand.rps[k];
    served += std::min(rps, it->second) * demand.step_s;
    offered += rps * demand.step_s;
    if (keep_trace) ev.ready.push_back(ready.replicas);
  }
  ev.served_share = offered > 0 ? served / offered : 1;
  const double tokens = demand.tokens_per_request > 0 ? demand.tokens_per_request : p.tokens_per_request;
  ev.served_mtok = served * tokens / 1e6;
  ev.usd_per_mtok = ev.served_mtok > 0 ? ev.usd / ev.served_mtok : 0;
  return ev;
}

}  // namespace seedance::fleet
