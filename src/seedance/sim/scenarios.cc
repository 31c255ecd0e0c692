#include "seedance/sim/scenarios.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <tuple>

#include "seedance/sim/policies/gavel_policies.h"
#include "seedance/sim/policies/seedance_cost_policy.h"
#include "seedance/sim/policies/skypilot_policy.h"
#include "seedance/cluster/gpu_model.h"
#include "seedance/cost/price_table.h"
#include "seedance/sim/fleet_file.h"
#include "seedance/sim/workloads.h"

namespace seedance::sim {
namespace {

Result<SpotSeries> LoadSpot(const std::string& dir, const std::vector<std::string>& files, int gpus_per_instance) {
  std::vector<SpotSeries> parts;
  for (const auto& f : files) {
    SEEDANCE_ASSIGN_OR_RETURN(SpotSeries s, SpotSeries::LoadFile(dir + "/spot_traces/" + f, gpus_per_instance));
    parts.push_back(std::move(s));
  }
  return SpotSeries::Sum(parts);
}

PoolSpec Pool(int type, Tier tier, int max_gpus, double usd) {
  PoolSpec p;
  p.type = type;
  p.tier = tier;
  p.max_gpus = max_gpus;
  p.usd_per_gpu_hour = usd;
  return p;
}

// The spot availability series of each GPU type. Modern GPUs have no public spot series: they
// borrow the 16-node p3 availability patterns (one zone per type), each instance standing for a
// GPU (documented in docs/WORKLOADS.md).
struct SpotSource {
  std::string type;
  std::vector<std::string> files;
  int gpus_per_instance;
  bool borrowed;  // another instance type's series
};
const std::vector<SpotSource>& SpotSources() {
  static const std::vector<SpotSource> sources = {
      {"V100", {"aws-10-26-2022_us-west-2a_v100_8.json", "aws-10-26-2022_us-west-2b_v100_8.json"}, 8, false},
      {"K80", {"aws-10-26-2022_us-west-2a_k80_8.json", "aws-10-26-2022_us-west-2b_k80_8.json"}, 8, false},
      {"H100", {"aws-08-27-2023_16node_us-east-2b_v100_1.json"}, 4, true},
      {"A100-80G", {"aws-08-27-2023_16node_us-west-2a_v100_1.json"}, 4, true},
      {"A100", {"aws-08-27-2023_16node_us-west-2c_v100_1.json"}, 4, true},
  };
  return sources;
}


void ApplyConfig(const config::SimConfig& c, FleetSpec* f) {
  f->cold_start_s = c.cold_start_s;
  f->scale_down_delay_s = c.scale_down_delay_s;
  f->checkpoint_cost_s = c.checkpoint_cost_s;
  f->restart_s = c.restart_s;
}

// The generic cloud fleet of a jobs CSV run without a fleet file: `quota` on-demand GPUs of each
// type at the price table's price, and spot pools (twice the quota) where a bundled series exists,
// at the table's spot quote, else cost::kDefaultSpotRatio x on-demand.
Status BuildGenericFleet(const ScenarioSpec& spec, const std::vector<std::string>& types, int quota,
                         const cost::PriceTable& prices, FleetSpec* fleet) {
  fleet->gpu_types = types;
  fleet->pools.clear();
  for (std::size_t t = 0; t < types.size(); ++t) {
    SEEDANCE_ASSIGN_OR_RETURN(double od, OnDemandPrice(prices, types[t]));
    fleet->pools.push_back(Pool(static_cast<int>(t), Tier::kOnDemand, quota, od));
  }
  // Spot pools where a published availability series exists (skypilot-org/spot-traces).
  for (const auto& src : SpotSources()) {
    auto it = std::find(types.begin(), types.end(), src.type);
    if (it == types.end()) continue;
    auto t = static_cast<int>(it - types.begin());
    SEEDANCE_ASSIGN_OR_RETURN(SpotSeries series, LoadSpot(spec.data_dir, src.files, src.gpus_per_instance));
    SEEDANCE_ASSIGN_OR_RETURN(double od, OnDemandPrice(prices, src.type));
    auto model = cluster::ParseGpuModel(src.type);
    const cost::GpuPrice* row = model.has_value() ? prices.Find(*model) : nullptr;
    const double usd = row != nullptr && row->spot_usd_per_gpu_hour.raw() > 0 ? ToUsd(row->spot_usd_per_gpu_hour)
                                                                              : od * cost::kDefaultSpotRatio;
    PoolSpec p = Pool(t, Tier::kSpot, 2 * quota, usd);
    p.spot = std::move(series);
    fleet->pools.push_back(std::move(p));
  }
  return Status::Ok();
}

// The grid's overrides: every on-demand quota (spot pools twice it), every spot price (a price
// series included) as a ratio of its type's on-demand price.
Status ApplyOverrides(const ScenarioSpec& spec, const cost::PriceTable& prices, FleetSpec* fleet) {
  for (auto& p : fleet->pools) {
    if (spec.on_demand_quota > 0 && p.tier == Tier::kOnDemand) p.max_gpus = spec.on_demand_quota;
    if (spec.on_demand_quota > 0 && p.tier == Tier::kSpot) p.max_gpus = 2 * spec.on_demand_quota;
    if (spec.spot_price_ratio > 0 && p.tier == Tier::kSpot) {
      const int od = fleet->FindPool(p.type, Tier::kOnDemand);
      double usd = 0;
      if (od >= 0) {
        usd = fleet->pools[static_cast<std::size_t>(od)].usd_per_gpu_hour;
      } else {
        SEEDANCE_ASSIGN_OR_RETURN(usd, OnDemandPrice(prices, fleet->gpu_types[static_cast<std::size_t>(p.type)]));
      }
      p.usd_per_gpu_hour = usd * spec.spot_price_ratio;
      p.price = {};  // the grid's ratio replaces a fleet file's price series too
    }
  }
  return Status::Ok();
}

}  // namespace

Result<double> OnDemandPrice(const cost::PriceTable& prices, const std::string& type) {
  auto model = cluster::ParseGpuModel(type);
  const cost::GpuPrice* p = model.has_value() ? prices.Find(*model) : nullptr;
  if (p == nullptr) {
    return InvalidArgumentError(prices.name() + ": no on-demand price for GPU type '" + type + "'");
  }
  return ToUsd(p->usd_per_gpu_hour);
}


std::string PricePath(const ScenarioSpec& spec) {
  return spec.prices_path.empty() ? spec.data_dir + "/prices/gpu_prices.csv" : spec.prices_path;
}

std::vector<std::string> ScenarioWorkloadNames() { return {"llm-finetune", "gavel", "philly", "openb"}; }

std::string FleetPath(const ScenarioSpec& spec) {
  if (!spec.fleet_path.empty()) return spec.fleet_path;
  const auto bundled = ScenarioWorkloadNames();
  if (std::find(bundled.begin(), bundled.end(), spec.workload) == bundled.end()) return "";
  return spec.data_dir + "/fleets/cloud-" + spec.workload + ".yaml";
}

std::string ShownPath(const ScenarioSpec& spec, const std::string& path) {
  const std::string root = spec.data_dir + "/";
  return !spec.data_dir.empty() && path.rfind(root, 0) == 0 ? "data/" + path.substr(root.size()) : path;
}

namespace {

// Where a scenario's fleet came from, for the assumptions its report states.
struct FleetSource {
  std::optional<FleetFile> file;  // empty: the generic cloud fleet of a jobs CSV
  std::string shown_path;
  std::vector<SpotSource> spot;   // per spot pool: its series files
};

// BuildScenario, telling where the fleet came from.
Status BuildScenarioFrom(const ScenarioSpec& spec, Workload* workload, FleetSpec* fleet,
                         std::vector<std::string>* notes, FleetSource* source) {
  const double week = 7 * 86400.0;
  double duration = spec.duration_s > 0 ? spec.duration_s : week;
  const std::string& w = spec.workload;
  const int quota = 64;  // the generic cloud fleet of a jobs CSV; bundled workloads read data/fleets/
  if (w == "llm-finetune") {
    *workload = GenerateLlmFinetune(1200, week, spec.seed);
  } else if (w == "gavel" || w == "philly") {
    SEEDANCE_ASSIGN_OR_RETURN(GavelThroughputs thr,
                              GavelThroughputs::LoadFile(spec.data_dir + "/gavel/gavel_isolated_throughputs.csv"));
    if (w == "gavel") {
      *workload = GenerateGavel(thr, 2.0, static_cast<std::int64_t>(duration / 3600.0 * 2.0) + 1, true, spec.seed);
    } else {
      std::int64_t skipped = 0;
      SEEDANCE_ASSIGN_OR_RETURN(*workload, LoadPhillyJobs(spec.data_dir + "/gavel/msr_philly_vc_jobs_seed0.csv",
                                                          thr, &skipped));
      notes->push_back(std::to_string(skipped) + " Philly jobs wider than 8 GPUs have no measured throughput and were skipped");
    }
  } else if (w == "openb") {
    std::vector<std::string> types{"G2", "T4", "P100", "V100M16", "V100M32", "G3", "A10"};
    std::int64_t never_ran = 0;
    SEEDANCE_ASSIGN_OR_RETURN(*workload, LoadOpenbJobs(spec.data_dir + "/openb/openb_pod_list_default.csv", types,
                                                       &never_ran));
    notes->push_back(std::to_string(never_ran) + " openb pods deleted when created (never scheduled) carry no work and were skipped");
    notes->push_back(OpenbSpeedNote(types));
  } else {
    SEEDANCE_ASSIGN_OR_RETURN(*workload, LoadJobsCsv(w));
  }
  // openb spans 149 days with most pods in its last 30: without --duration it is replayed whole.
  if (w == "openb" && spec.duration_s <= 0) duration = std::numeric_limits<double>::infinity();
  const std::size_t before = workload->jobs.size();
  workload->TruncateArrivals(duration);
  if (workload->jobs.size() < before && !workload->jobs.empty()) {
    // Counted and said, never dropped silently.
    notes->push_back(std::to_string(before - workload->jobs.size()) + " of " + std::to_string(before) + " jobs of '" +
                     workload->name + "' arrive at or after the " +
                     std::to_string(static_cast<long long>(duration)) +
                     " s --duration window and were left out (pass a longer --duration to include them)");
  }
  if (workload->jobs.empty()) {
    return InvalidArgumentError("--duration: no job of workload '" + workload->name + "' arrives within " +
                                std::to_string(static_cast<long long>(duration)) + " s");
  }
  if (spec.on_demand_quota < 0) return InvalidArgumentError("on-demand quota must be >= 0");
  if (spec.spot_price_ratio < 0) return InvalidArgumentError("spot price ratio must be >= 0");
  SEEDANCE_ASSIGN_OR_RETURN(cost::PriceTable prices, cost::PriceTable::LoadFile(PricePath(spec)));
  const std::string fleet_path = FleetPath(spec);
  if (source != nullptr) *source = FleetSource{};
  if (fleet_path.empty()) {
    fleet->name = "cloud-" + workload->name;
    SEEDANCE_RETURN_IF_ERROR(BuildGenericFleet(spec, workload->gpu_types, quota, prices, fleet));
    if (source != nullptr) {
      for (const auto& src : SpotSources()) {
        if (std::find(fleet->gpu_types.begin(), fleet->gpu_types.end(), src.type) != fleet->gpu_types.end()) {
          source->spot.push_back(src);
        }
      }
    }
  } else {
    SEEDANCE_ASSIGN_OR_RETURN(FleetFile file, LoadFleetFile(fleet_path));
    SEEDANCE_ASSIGN_OR_RETURN(*fleet, BuildFleetSpec(file, workload->gpu_types, prices));
    if (source != nullptr) {
      source->file = file;
      source->shown_path = ShownPath(spec, fleet_path);
      for (const auto& g : file.gpus) {
        if (g.spot.empty()) continue;
        SpotSource src{g.type, {}, 1, false};
        for (const auto& sp : g.spot) {
          for (const auto& f : sp.series_as_written) src.files.push_back(std::filesystem::path(f).filename().string());
          src.borrowed = src.borrowed || sp.borrowed;
        }
        source->spot.push_back(std::move(src));
      }
    }
  }
  ApplyConfig(spec.config, fleet);
  return ApplyOverrides(spec, prices, fleet);
}

}  // namespace

Status BuildScenario(const ScenarioSpec& spec, Workload* workload, FleetSpec* fleet,
                     std::vector<std::string>* notes) {
  return BuildScenarioFrom(spec, workload, fleet, notes, nullptr);
}

namespace {

// A policy as the best-baseline rule sees it.
struct Candidate {
  std::string name;
  bool eligible;  // flagged baseline, not reference, finished every job
  double cost, avg_jct_hours;
};

int BestCandidate(const std::vector<Candidate>& c) {
  int best = -1;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (!c[i].eligible) continue;
    const auto key = [](const Candidate& o) { return std::make_tuple(o.cost, o.avg_jct_hours, o.name); };
    if (best < 0 || key(c[i]) < key(c[static_cast<std::size_t>(best)])) best = static_cast<int>(i);
  }
  return best;
}

// The cheapest eligible candidate whose average JCT is at most `max_avg_jct_hours`; when none is
// that fast, the fastest eligible one (the closest in service), ties by cost and name.
int BestCandidateAtService(std::vector<Candidate> c, double max_avg_jct_hours) {
  std::vector<Candidate> fast = c;
  for (auto& x : fast) x.eligible = x.eligible && x.avg_jct_hours <= max_avg_jct_hours * (1 + 1e-9);
  const int best = BestCandidate(fast);
  if (best >= 0) return best;
  for (auto& x : c) std::swap(x.cost, x.avg_jct_hours);  // order by JCT first
  return BestCandidate(c);
}

std::string SpeedSource(const ScenarioSpec& spec) {
  const std::string& w = spec.workload;
  if (w == "llm-finetune") {
    return "llm-finetune: dense FP16 tensor TFLOPS (NVIDIA datasheets) x model-FLOPs utilization 0.35 (H100) "
           "or 0.40 (other types)";
  }
  if (w == "gavel" || w == "philly") {
    return w + ": Gavel's measured throughputs per job type and GPU type "
               "(data/gavel/gavel_isolated_throughputs.csv, Narayanan et al., OSDI 2020)";
  }
  if (w == "openb") return "openb: the per-GPU-type speeds of the openb loader (source in docs/WORKLOADS.md)";
  return "the steps_per_s_<TYPE> columns of " + ShownPath(spec, w);
}

// 180 -> "180", 0.37 -> "0.37" (up to 6 significant digits).
std::string Num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string Seconds(double s) { return Num(s) + " s"; }

// The facts the figures rest on, each tagged with the report sections it shapes.
// "0.37x on-demand" when every spot pool has that ratio, else "A100-80G 0.66x, V100 0.37x on-demand".
std::string SpotPriceText(const FleetSpec& fleet) {
  std::vector<std::pair<std::string, double>> ratios;
  std::string series;  // pools priced by a price series
  for (const auto& p : fleet.pools) {
    if (p.tier != Tier::kSpot) continue;
    if (!p.price.empty()) {
      std::ostringstream os;
      os << fleet.gpu_types[static_cast<std::size_t>(p.type)] << " by a price series of " << p.price.points().size()
         << " points, $" << std::fixed << std::setprecision(3) << p.price.Min() << " to $" << p.price.Max()
         << "/GPU-hour";
      series += (series.empty() ? "" : ", ") + os.str();
      continue;
    }
    const int od = fleet.FindPool(p.type, Tier::kOnDemand);
    if (od < 0) continue;
    ratios.emplace_back(fleet.gpu_types[static_cast<std::size_t>(p.type)],
                        p.usd_per_gpu_hour / fleet.pools[static_cast<std::size_t>(od)].usd_per_gpu_hour);
  }
  if (!series.empty()) {
    series += " (step-wise, its first point at the run's start, the last price holding after its last point; "
              "billed at the price in force at each instant, the policies seeing only the price in force now)";
    if (ratios.empty()) return series;
    series = "; " + series;
  }
  if (ratios.empty()) return Num(cost::kDefaultSpotRatio) + "x on-demand";  // no spot pool: the default
  const auto shown = [](double r) { return Num(std::round(r * 1000) / 1000); };  // 0.37, 0.665
  bool same = true;
  for (const auto& [type, r] : ratios) same = same && shown(r) == shown(ratios.front().second);
  if (same) return shown(ratios.front().second) + "x on-demand" + series;
  std::string out;
  for (const auto& [type, r] : ratios) out += (out.empty() ? "" : ", ") + type + " " + shown(r) + "x";
  return out + " on-demand (the price table's spot quote where it has one, else " + Num(cost::kDefaultSpotRatio) +
         "x)" + series;
}

// The fleet file's committed pools and their accounting, for a run on a fleet file the user gave
// or one with committed capacity ("" otherwise).
std::string FleetText(const ScenarioSpec& spec, const FleetSpec& fleet, const FleetSource& source) {
  if (!source.file.has_value() || (spec.fleet_path.empty() &&
                                   std::none_of(fleet.pools.begin(), fleet.pools.end(),
                                                [](const PoolSpec& p) { return p.committed; }))) {
    return "";
  }
  std::string out = "fleet '" + fleet.name + "' from " + source.shown_path;
  std::string committed;
  for (const auto& p : fleet.pools) {
    if (!p.committed) continue;
    const std::string& type = fleet.gpu_types[static_cast<std::size_t>(p.type)];
    std::ostringstream os;
    os << p.max_gpus << " " << TierName(p.tier) << " " << type << " at $" << std::fixed << std::setprecision(3)
       << p.usd_per_gpu_hour << "/GPU-hour";
    if (p.tier == Tier::kOwned) {
      for (const auto& g : source.file->gpus) {
        if (g.type != type || !g.owned_tco) continue;
        os << std::setprecision(0) << " (TCO: $" << g.tco.gpu_price_usd << std::defaultfloat << std::setprecision(6)
           << " per GPU over " << g.tco.life_years
           << " years, " << g.tco.watts_per_tflops * g.tco.tflops << " W at " << g.tco.utilization * 100
           << "% draw, $" << g.tco.usd_per_kwh << "/kWh, PUE " << g.tco.pue << ", ops $" << g.tco.ops_usd_per_tflops_year
           << " per TFLOPS-year)";
      }
    }
    committed += (committed.empty() ? "" : ", ") + os.str();
  }
  if (!committed.empty()) {
    out += ": " + committed +
           ", billed for every GPU from the first arrival to the end of the run, used or not, and seen by the "
           "policies at a marginal price of 0 (used first); on-demand and spot billed per second held";
  }
  return out;
}

std::vector<Assumption> ScenarioAssumptions(const ScenarioSpec& spec, const FleetSpec& fleet,
                                            const FleetSource& source, const ScenarioResult& r) {
  using A = Assumption;
  std::vector<Assumption> out;
  out.push_back({A::kCosts | A::kCharts,
                 "job sizes are not known to the policies: they estimate remaining work online from the completed "
                 "jobs of the same class and the service attained (reference rows see true sizes)"});
  out.push_back({A::kCosts | A::kCharts,
                 "spot statistics (time between capacity drops) come from the past 7 days of each series only"});
  out.push_back({A::kCosts | A::kCharts | A::kBounds, "speeds from " + SpeedSource(spec)});
  out.push_back({A::kCosts | A::kCharts | A::kBounds | A::kLedger,
                 "on-demand prices from " + ShownPath(spec, PricePath(spec)) + "; spot at " + SpotPriceText(fleet)});
  if (const std::string text = FleetText(spec, fleet, source); !text.empty()) {
    out.push_back({A::kCosts | A::kCharts | A::kBounds | A::kLedger, text});
  }
  out.push_back({A::kCosts | A::kCharts | A::kLedger,
                 "cold start " + Seconds(fleet.cold_start_s) + ", restart after an interruption " +
                     Seconds(fleet.restart_s) + ", checkpoint " + Seconds(fleet.checkpoint_cost_s) +
                     ", scale-down delay " + Seconds(fleet.scale_down_delay_s) + ", scheduling rounds of 360 s"});
  std::string spot;
  std::string borrowed;
  for (const auto& src : source.spot) {
    std::string files;
    for (const auto& f : src.files) files += (files.empty() ? "" : " + ") + f;
    spot += (spot.empty() ? "" : "; ") + src.type + ": " + files;
    if (src.borrowed) borrowed += (borrowed.empty() ? "" : ", ") + src.type;
  }
  if (spot.empty()) {
    out.push_back({A::kCosts | A::kCharts | A::kBounds, "no spot pools: no published spot series for these GPU types"});
  } else {
    if (!borrowed.empty()) {
      spot += " (" + borrowed + " have no public spot series and borrow p3 (V100) 16-node availability patterns)";
    }
    out.push_back({A::kCosts | A::kCharts | A::kBounds,
                   "spot availability from skypilot-org/spot-traces, repeated when a run outlasts it: " + spot});
  }
  out.push_back({A::kBounds,
                 "the bounds ignore queueing, cold starts, checkpoints and interruptions and hold for schedules "
                 "that meet every deadline and finish every job within " +
                     Num(std::round(r.bound_horizon_s / 360.0) / 10.0) +
                     " h (the latest makespan of a policy that finished every job)"});
  out.push_back({A::kLedger,
                 "each pool interval's bill is split into job and idle charges by the GPU-seconds jobs used"});
  return out;
}

// The plain bound over the latest makespan of a policy that finished every job, and the bounds
// at the best baseline's (and gavel-las's) average JCT on the same horizon.
Status AddBounds(const Workload& w, const FleetSpec& fleet, const std::function<void(const std::string&)>& progress,
                 ScenarioResult* out) {
  LowerBoundOptions lbo;
  lbo.horizon_s = w.jobs.back().arrival_s + lbo.bucket_s;
  for (const auto& p : out->policies) {
    if (p.result.unfinished == 0) lbo.horizon_s = std::max(lbo.horizon_s, p.result.makespan_s);
  }
  if (progress) progress("solving the LP lower bound (GLPK)");
  auto lb = CostLowerBound(w, fleet, lbo);
  if (!lb.has_value()) {
    out->notes.push_back("the LP over the policies' span was infeasible; the bounds use the default horizon instead");
    lbo.horizon_s = 0;
    lb = CostLowerBound(w, fleet, lbo);
  }
  if (!lb.has_value()) return lb.error();
  out->bound = *lb;
  out->bound_horizon_s = lb->horizon_s;
  lbo.horizon_s = lb->horizon_s;
  std::vector<const PolicyOutcome*> levels;
  const PolicyOutcome* seedance = out->Find("seedance");
  const double service = seedance != nullptr && seedance->result.unfinished == 0
                             ? seedance->result.AvgJctHours()
                             : std::numeric_limits<double>::infinity();
  const int best = BestBaseline(out->policies);
  if (best >= 0) {
    out->best_baseline = out->policies[static_cast<std::size_t>(best)].name;
    levels.push_back(&out->policies[static_cast<std::size_t>(best)]);
  }
  const int matched = BestBaseline(out->policies, service);
  if (matched >= 0) {
    out->matched_baseline = out->policies[static_cast<std::size_t>(matched)].name;
    if (matched != best) levels.push_back(&out->policies[static_cast<std::size_t>(matched)]);
  }
  const PolicyOutcome* las = out->Find("gavel-las");
  if (las != nullptr && las->result.unfinished == 0 && las->name != out->best_baseline &&
      las->name != out->matched_baseline) {
    levels.push_back(las);
  }
  for (const PolicyOutcome* p : levels) {
    if (progress) progress("solving the LP lower bound at " + p->name + "'s average JCT (GLPK)");
    LowerBoundOptions sl = lbo;
    sl.max_avg_jct_s = p->result.AvgJctHours() * 3600.0;
    auto b = CostLowerBound(w, fleet, sl);
    if (!b.has_value()) {
      out->notes.push_back("no bound at " + p->name + "'s average JCT: " + b.error().message());
      continue;
    }
    out->service_bounds.push_back({p->name, std::move(*b)});
  }
  return Status::Ok();
}

}  // namespace

const PolicyOutcome* ScenarioResult::Find(const std::string& name) const {
  for (const auto& p : policies) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const LowerBound* ScenarioResult::BoundAtBestBaseline() const {
  for (const auto& sb : service_bounds) {
    if (sb.policy == best_baseline) return &sb.bound;
  }
  return nullptr;
}

std::string ScenarioResult::AssumesLine(Assumption::Section section) const {
  std::string out;
  for (const auto& a : assumptions) {
    if ((a.sections & section) != 0) out += (out.empty() ? "Assumes: " : "; ") + a.text;
  }
  return out.empty() ? out : out + ".";
}

int BestBaseline(const std::vector<PolicyOutcome>& policies, double max_avg_jct_hours) {
  std::vector<Candidate> c;
  for (const auto& p : policies) {
    c.push_back({p.name, p.baseline && !p.reference && p.result.unfinished == 0, p.result.total_cost_usd,
                 p.result.AvgJctHours()});
  }
  return BestCandidateAtService(c, max_avg_jct_hours);
}

MeanSd MeanAndSd(const std::vector<double>& values) {
  MeanSd out;
  if (values.empty()) return out;
  for (double v : values) out.mean += v;
  out.mean /= static_cast<double>(values.size());
  if (values.size() < 2) return out;
  double ss = 0;
  for (double v : values) ss += (v - out.mean) * (v - out.mean);
  out.sd = std::sqrt(ss / static_cast<double>(values.size() - 1));
  return out;
}

std::vector<ScenarioPolicy> ScenarioPolicies(const ScenarioSpec& spec) {
  std::vector<ScenarioPolicy> entries;
  entries.push_back({std::make_unique<FifoOnDemandPolicy>(), "fifo",
                     "FIFO, heterogeneity-agnostic, on-demand only, reactive autoscaling (baseline)", true});
  auto las = std::make_unique<GavelLasPolicy>(false);
  las->exclude_spot = true;
  entries.push_back({std::move(las), "gavel-las",
                     "Gavel-LAS: heterogeneity-aware max-min fairness (LP), on-demand only, reactive (baseline)", true});
  const double ckpt = spec.config.baseline_checkpoint_interval_s;
  SkyPilotPolicy::Options one_type;
  one_type.checkpoint_interval_s = ckpt;
  entries.push_back({std::make_unique<SkyPilotPolicy>(one_type), "skypilot",
                     "SkyPilot managed jobs: one GPU type per job (cheapest per step on-demand), spot first, "
                     "EAGER_NEXT_REGION recovery, on-demand when spot cannot launch, checkpoints every scheduler.baselines.checkpoint_interval (600 s) (baseline)",
                     true});
  // Both ways a SkyPilot user picks the one GPU type: the rows are swept together because neither
  // dominates (cheapest per step is cheaper on llm-finetune, philly and gavel; fastest has the
  // lower average JCT), and the best-baseline rule picks whichever is eligible.
  SkyPilotPolicy::Options fastest = one_type;
  fastest.type = SkyPilotPolicy::TypeChoice::kFastest;
  entries.push_back({std::make_unique<SkyPilotPolicy>(fastest), "skypilot-fastest",
                     "SkyPilot managed jobs as above, each job requesting its fastest GPU type (baseline)", true});
  // SkyPilot as its users run it (issue 29): `any_of` over every feasible type, the optimizer's
  // cheapest per step first, failover down the list; and spot only, waiting for spot.
  SkyPilotPolicy::Options any_of = one_type;
  any_of.any_of = true;
  entries.push_back({std::make_unique<SkyPilotPolicy>(any_of), "skypilot-any-of",
                     "SkyPilot managed jobs with resources any_of over every feasible type, spot and on-demand, "
                     "in the optimizer's order (cheapest per step first), failover down the list (baseline)",
                     true});
  SkyPilotPolicy::Options spot_only = any_of;
  spot_only.spot_only = true;
  entries.push_back({std::make_unique<SkyPilotPolicy>(spot_only), "skypilot-spot-only",
                     "SkyPilot managed jobs, any_of over every feasible type on spot only; waits for spot (baseline)",
                     true});
  // Gavel on spot pools (issue 29): its cost policies are the Gavel rows of a cost comparison;
  // LAS stays beside them, labelled as Gavel's fairness policy.
  for (bool slos : {false, true}) {
    auto cost = std::make_unique<GavelCostPolicy>(slos);
    cost->spot_recovery = true;
    cost->spot_checkpoint_interval_s = ckpt;
    std::string name(cost->name());
    entries.push_back({std::move(cost), name,
                       slos ? "Gavel max_sum_throughput_normalized_by_cost_perf_SLOs: as gavel-cost, with each "
                              "deadline job's SLO row (estimated steps left / time to its deadline) (baseline)"
                            : "Gavel max_sum_throughput_normalized_by_cost_perf: throughput per dollar (LP), "
                              "spot pools as worker types, SkyPilot's recovery (on-demand of the same type when "
                              "spot has no room), checkpoints every scheduler.baselines.checkpoint_interval "
                              "(600 s) (baseline)",
                       true});
  }
  auto las_spot = std::make_unique<GavelLasPolicy>(false);
  las_spot->spot_recovery = true;
  las_spot->spot_checkpoint_interval_s = ckpt;
  entries.push_back({std::move(las_spot), "gavel-las-spot",
                     "Gavel-LAS (Gavel's fairness policy, not its cost policy) with spot pools as worker types, "
                     "SkyPilot's recovery, checkpoints every scheduler.baselines.checkpoint_interval (600 s) (baseline)",
                     true});
  entries.push_back({std::make_unique<SeedanceCostPolicy>(spec.config.cost_aware), "seedance",
                     std::string("Seedance cost-aware: sizes estimated online, spot statistics of the past 7 days, "
                                 "type by throughput per dollar, spot with fallback, Young/Daly checkpoints, "
                                 "deadline switch, ") +
                         std::string(AutoscaleModeName(spec.config.cost_aware.autoscale)) + " autoscaling"});
  entries.push_back({std::make_unique<SeedanceCostPolicy>(spec.config.cost_aware, /*oracle=*/true),
                     "seedance-oracle",
                     "Reference, not an online scheduler: Seedance given the true job sizes and the whole spot "
                     "series (future included)",
                     false, true});
  config::CostAwareConfig other = spec.config.cost_aware;
  other.autoscale = other.autoscale == AutoscaleMode::kPredictive ? AutoscaleMode::kReactive : AutoscaleMode::kPredictive;
  std::string other_name = std::string("seedance-") + std::string(AutoscaleModeName(other.autoscale));
  entries.push_back({std::make_unique<SeedanceCostPolicy>(other), other_name,
                     "Seedance with " + std::string(AutoscaleModeName(other.autoscale)) +
                         " autoscaling (the autoscaler comparison)"});
  for (double v : spec.frontier_time_values) {
    config::CostAwareConfig c = spec.config.cost_aware;
    c.time_value_per_hour = v;
    c.spot_wait_priced = true;
    std::ostringstream os;
    os << v;  // 6, 0.5, 12.25
    const std::string value = os.str();
    entries.push_back({std::make_unique<SeedanceCostPolicy>(c), "seedance-tv" + value,
                       "Seedance valuing an hour of a job's time at $" + value + " (cost/JCT frontier)"});
  }
  if (!spec.only_policies.empty()) {
    std::erase_if(entries, [&spec](const ScenarioPolicy& e) {
      return std::find(spec.only_policies.begin(), spec.only_policies.end(), e.name) == spec.only_policies.end();
    });
  }
  return entries;
}

Result<ScenarioResult> RunCostScenario(const ScenarioSpec& spec,
                                       const std::function<void(const std::string&)>& progress) {
  Workload w;
  FleetSpec fleet;
  ScenarioResult out;
  FleetSource source;
  SEEDANCE_RETURN_IF_ERROR(BuildScenarioFrom(spec, &w, &fleet, &out.notes, &source));
  out.workload = w.name;
  out.seed = spec.seed;
  out.fleet = fleet.name;
  out.jobs = static_cast<std::int64_t>(w.jobs.size());
  out.duration_s = w.jobs.back().arrival_s;
  out.gpu_types = w.gpu_types;
  for (const auto& p : fleet.pools) {
    out.pool_names.push_back(fleet.gpu_types[static_cast<std::size_t>(p.type)] + " " + std::string(TierName(p.tier)));
  }
  for (const auto& j : w.jobs) {
    double best = *std::max_element(j.steps_per_s.begin(), j.steps_per_s.end());
    out.total_work_gpu_hours_fastest += j.total_steps / best * j.gpus / 3600.0;
  }
  std::vector<ScenarioPolicy> entries = ScenarioPolicies(spec);
  // Spot only on a fleet without spot would wait for ever (until the simulator's safety stop) and
  // bill committed pools all that time: no row rather than a number nobody could pay.
  const bool has_spot = std::any_of(fleet.pools.begin(), fleet.pools.end(),
                                    [](const PoolSpec& p) { return p.tier == Tier::kSpot; });
  if (!has_spot) {
    const auto before = entries.size();
    std::erase_if(entries, [](const ScenarioPolicy& e) { return e.name == "skypilot-spot-only"; });
    if (entries.size() != before) {
      out.notes.push_back("skypilot-spot-only not run: the fleet has no spot pool, so it could never start a job");
    }
  }
  // Gavel's SLO variant differs from gavel-cost only through deadline jobs: without any it would
  // repeat that row.
  const bool has_deadlines =
      std::any_of(w.jobs.begin(), w.jobs.end(), [](const JobSpec& j) { return std::isfinite(j.deadline_s); });
  if (!has_deadlines) {
    const auto before = entries.size();
    std::erase_if(entries, [](const ScenarioPolicy& e) { return e.name == "gavel-cost-slo"; });
    if (entries.size() != before) {
      out.notes.push_back("gavel-cost-slo not run: no job has a deadline, so it is gavel-cost (no SLO rows)");
    }
  }
  SimOptions opt;
  opt.round_s = 360;
  opt.seed = spec.seed;
  for (auto& e : entries) {
    if (progress) progress("simulating " + e.name + " on " + w.name + " (" + std::to_string(w.jobs.size()) + " jobs)");
    if (spec.on_pool_interval) {
      opt.on_pool_interval = [&spec, name = e.name](const PoolInterval& iv) { spec.on_pool_interval(name, iv); };
    }
    if (spec.on_decision) {
      opt.on_decision = [&spec, name = e.name](const Decision& d) { spec.on_decision(name, d); };
    }
    SEEDANCE_ASSIGN_OR_RETURN(SimResult r, Simulate(w, fleet, *e.policy, opt));
    r.policy = e.name;
    out.policies.push_back(PolicyOutcome{e.name, e.description, e.baseline, e.reference, std::move(r)});
  }
  SEEDANCE_RETURN_IF_ERROR(AddBounds(w, fleet, progress, &out));
  out.assumptions = ScenarioAssumptions(spec, fleet, source, out);
  return out;
}

Result<SeedSweep> RunCostScenarioSeeds(const ScenarioSpec& spec, const std::vector<std::uint64_t>& seeds,
                                       const std::function<void(const std::string&)>& progress) {
  if (seeds.empty()) return InvalidArgumentError("--seeds: no seed given");
  SeedSweep out;
  out.seeds = seeds;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    ScenarioSpec s = spec;
    s.seed = seeds[i];
    if (i > 0) {  // the ledger and the decision log hold the first seed's instance
      s.on_pool_interval = nullptr;
      s.on_decision = nullptr;
    }
    if (progress) progress("workload seed " + std::to_string(seeds[i]));
    SEEDANCE_ASSIGN_OR_RETURN(ScenarioResult r, RunCostScenario(s, progress));
    out.runs.push_back(std::move(r));
  }
  // Per policy, in the first run's order (every seed runs the same policies).
  std::vector<double> bounds;
  for (const auto& r : out.runs) bounds.push_back(r.bound.usd);
  out.lower_bound_usd = MeanAndSd(bounds);
  std::vector<Candidate> means;  // the best-baseline rule over the means
  for (const auto& p0 : out.runs.front().policies) {
    SeedSweep::PolicySummary ps;
    ps.name = p0.name;
    ps.description = p0.description;
    ps.baseline = p0.baseline;
    ps.reference = p0.reference;
    std::vector<double> cost, avg, p99;
    for (const auto& r : out.runs) {
      const PolicyOutcome* p = r.Find(p0.name);
      if (p == nullptr) return InternalError("policy " + p0.name + " is missing from a seed's run");
      cost.push_back(p->result.total_cost_usd);
      avg.push_back(p->result.AvgJctHours());
      p99.push_back(p->result.P99JctHours());
      ps.unfinished_runs += p->result.unfinished > 0 ? 1 : 0;
    }
    ps.total_cost_usd = MeanAndSd(cost);
    ps.avg_jct_hours = MeanAndSd(avg);
    ps.p99_jct_hours = MeanAndSd(p99);
    means.push_back({ps.name, ps.baseline && !ps.reference && ps.unfinished_runs == 0, ps.total_cost_usd.mean,
                     ps.avg_jct_hours.mean});
    out.policies.push_back(std::move(ps));
  }
  double service = std::numeric_limits<double>::infinity();
  for (const auto& ps : out.policies) {
    if (ps.name == "seedance" && ps.unfinished_runs == 0) service = ps.avg_jct_hours.mean;
  }
  const int matched = BestCandidateAtService(means, service);
  if (matched >= 0) out.matched_baseline = out.policies[static_cast<std::size_t>(matched)].name;
  const int best = BestCandidate(means);
  if (best < 0) return out;
  out.best_baseline = out.policies[static_cast<std::size_t>(best)].name;
  // The bound at that policy's JCT on every seed (a seed whose own best baseline is another
  // policy gets it added, on the same horizon).
  std::vector<double> at_best;
  for (std::size_t i = 0; i < out.runs.size(); ++i) {
    ScenarioResult& r = out.runs[i];
    const LowerBound* found = nullptr;
    for (const auto& sb : r.service_bounds) {
      if (sb.policy == out.best_baseline) found = &sb.bound;
    }
    if (found == nullptr) {
      ScenarioSpec s = spec;
      s.seed = seeds[i];
      Workload w;
      FleetSpec fleet;
      std::vector<std::string> notes;
      SEEDANCE_RETURN_IF_ERROR(BuildScenario(s, &w, &fleet, &notes));
      LowerBoundOptions o;
      o.horizon_s = r.bound_horizon_s;
      o.max_avg_jct_s = r.Find(out.best_baseline)->result.AvgJctHours() * 3600.0;
      if (progress) progress("solving the LP lower bound at " + out.best_baseline + "'s average JCT, seed " +
                             std::to_string(seeds[i]));
      SEEDANCE_ASSIGN_OR_RETURN(LowerBound b, CostLowerBound(w, fleet, o));
      r.service_bounds.push_back({out.best_baseline, std::move(b)});
      found = &r.service_bounds.back().bound;
    }
    at_best.push_back(found->usd);
  }
  out.bound_at_best_baseline_usd = MeanAndSd(at_best);
  return out;
}

}  // namespace seedance::sim
