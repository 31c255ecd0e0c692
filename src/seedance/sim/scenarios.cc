#include "seedance/sim/scenarios.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>

#include "seedance/sim/policies/gavel_policies.h"
#include "seedance/sim/policies/seedance_cost_policy.h"
#include "seedance/sim/policies/skypilot_policy.h"
#include "seedance/cluster/gpu_model.h"
#include "seedance/cost/price_table.h"
#include "seedance/sim/workloads.h"

namespace seedance::sim {
namespace {

// On-demand $/GPU-hour of `type` from the price table (data/prices/gpu_prices.csv by default).
Result<double> OnDemandPrice(const cost::PriceTable& prices, const std::string& type) {
  auto model = cluster::ParseGpuModel(type);
  const cost::GpuPrice* p = model.has_value() ? prices.Find(*model) : nullptr;
  if (p == nullptr) {
    return InvalidArgumentError(prices.name() + ": no on-demand price for GPU type '" + type + "'");
  }
  return ToUsd(p->usd_per_gpu_hour);
}

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

void ApplyConfig(const SimConfig& c, FleetSpec* f) {
  f->cold_start_s = c.cold_start_s;
  f->scale_down_delay_s = c.scale_down_delay_s;
  f->checkpoint_cost_s = c.checkpoint_cost_s;
  f->restart_s = c.restart_s;
}

Status BuildFleet(const ScenarioSpec& spec, const std::vector<std::string>& types, int quota,
                  FleetSpec* fleet) {
  const std::string price_path =
      spec.prices_path.empty() ? spec.data_dir + "/prices/gpu_prices.csv" : spec.prices_path;
  SEEDANCE_ASSIGN_OR_RETURN(cost::PriceTable prices, cost::PriceTable::LoadFile(price_path));
  fleet->gpu_types = types;
  fleet->pools.clear();
  ApplyConfig(spec.config, fleet);
  for (std::size_t t = 0; t < types.size(); ++t) {
    SEEDANCE_ASSIGN_OR_RETURN(double od, OnDemandPrice(prices, types[t]));
    fleet->pools.push_back(Pool(static_cast<int>(t), Tier::kOnDemand, quota, od));
  }
  // Spot pools where a published availability series exists (skypilot-org/spot-traces).
  auto add_spot = [&](const std::string& type, const std::vector<std::string>& files, int gpi) -> Status {
    auto it = std::find(types.begin(), types.end(), type);
    if (it == types.end()) return Status::Ok();
    auto t = static_cast<int>(it - types.begin());
    SEEDANCE_ASSIGN_OR_RETURN(SpotSeries s, LoadSpot(spec.data_dir, files, gpi));
    SEEDANCE_ASSIGN_OR_RETURN(double od, OnDemandPrice(prices, type));
    PoolSpec p = Pool(t, Tier::kSpot, 2 * quota, od * cost::kDefaultSpotRatio);
    p.spot = std::move(s);
    fleet->pools.push_back(std::move(p));
    return Status::Ok();
  };
  SEEDANCE_RETURN_IF_ERROR(add_spot("V100", {"aws-10-26-2022_us-west-2a_v100_8.json",
                                             "aws-10-26-2022_us-west-2b_v100_8.json"}, 8));
  SEEDANCE_RETURN_IF_ERROR(add_spot("K80", {"aws-10-26-2022_us-west-2a_k80_8.json",
                                            "aws-10-26-2022_us-west-2b_k80_8.json"}, 8));
  // Modern GPUs: no public spot series; borrow the 16-node p3 availability patterns (one zone
  // per type), each instance standing for a GPU (documented in docs/WORKLOADS.md).
  SEEDANCE_RETURN_IF_ERROR(add_spot("H100", {"aws-08-27-2023_16node_us-east-2b_v100_1.json"}, 4));
  SEEDANCE_RETURN_IF_ERROR(add_spot("A100-80G", {"aws-08-27-2023_16node_us-west-2a_v100_1.json"}, 4));
  SEEDANCE_RETURN_IF_ERROR(add_spot("A100", {"aws-08-27-2023_16node_us-west-2c_v100_1.json"}, 4));
  return Status::Ok();
}

}  // namespace

std::vector<std::string> ScenarioWorkloadNames() { return {"llm-finetune", "gavel", "philly", "openb"}; }

Status BuildScenario(const ScenarioSpec& spec, Workload* workload, FleetSpec* fleet,
                     std::vector<std::string>* notes) {
  const double week = 7 * 86400.0;
  double duration = spec.duration_s > 0 ? spec.duration_s : week;
  const std::string& w = spec.workload;
  int quota = 64;
  if (w == "llm-finetune") {
    *workload = GenerateLlmFinetune(1200, week, 2026);
    quota = 24;
  } else if (w == "gavel" || w == "philly") {
    SEEDANCE_ASSIGN_OR_RETURN(GavelThroughputs thr,
                              GavelThroughputs::LoadFile(spec.data_dir + "/gavel/gavel_isolated_throughputs.csv"));
    if (w == "gavel") {
      *workload = GenerateGavel(thr, 2.0, static_cast<std::int64_t>(duration / 3600.0 * 2.0) + 1, true, spec.seed);
      quota = 36;
    } else {
      std::int64_t skipped = 0;
      SEEDANCE_ASSIGN_OR_RETURN(*workload, LoadPhillyJobs(spec.data_dir + "/gavel/msr_philly_vc_jobs_seed0.csv",
                                                          thr, &skipped));
      notes->push_back(std::to_string(skipped) + " Philly jobs wider than 8 GPUs have no measured throughput and were skipped");
      quota = 96;
    }
  } else if (w == "openb") {
    std::vector<std::string> types{"G2", "T4", "P100", "V100M16", "V100M32", "G3", "A10"};
    std::int64_t never_ran = 0;
    SEEDANCE_ASSIGN_OR_RETURN(*workload, LoadOpenbJobs(spec.data_dir + "/openb/openb_pod_list_default.csv", types,
                                                       &never_ran));
    notes->push_back(std::to_string(never_ran) + " openb pods deleted when created (never scheduled) carry no work and were skipped");
    notes->push_back("openb: run times are the trace's deletion - creation times on any allowed type; fractional-GPU pods take a whole GPU; no spot series exists for these types");
    quota = 2000;
  } else {
    SEEDANCE_ASSIGN_OR_RETURN(*workload, LoadJobsCsv(w));
    quota = 64;
  }
  // openb spans 149 days with most pods in its last 30: without --duration it is replayed whole.
  if (w == "openb" && spec.duration_s <= 0) duration = std::numeric_limits<double>::infinity();
  workload->TruncateArrivals(duration);
  if (workload->jobs.empty()) {
    return InvalidArgumentError("--duration: no job of workload '" + workload->name + "' arrives within " +
                                std::to_string(static_cast<long long>(duration)) + " s");
  }
  fleet->name = "cloud-" + workload->name;
  return BuildFleet(spec, workload->gpu_types, quota, fleet);
}

Result<ScenarioResult> RunCostScenario(const ScenarioSpec& spec,
                                       const std::function<void(const std::string&)>& progress) {
  Workload w;
  FleetSpec fleet;
  ScenarioResult out;
  SEEDANCE_RETURN_IF_ERROR(BuildScenario(spec, &w, &fleet, &out.notes));
  out.workload = w.name;
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
  struct Entry {
    std::unique_ptr<JobPolicy> policy;
    std::string name, description;
    bool baseline = false, reference = false;
  };
  std::vector<Entry> entries;
  entries.push_back({std::make_unique<FifoOnDemandPolicy>(), "fifo",
                     "FIFO, heterogeneity-agnostic, on-demand only, reactive autoscaling (baseline)", true});
  auto las = std::make_unique<GavelLasPolicy>(false);
  las->exclude_spot = true;
  entries.push_back({std::move(las), "gavel-las",
                     "Gavel-LAS: heterogeneity-aware max-min fairness (LP), on-demand only, reactive (baseline)", true});
  entries.push_back({std::make_unique<SkyPilotPolicy>(), "skypilot",
                     "SkyPilot managed jobs: one GPU type per job (cheapest per step on-demand), spot first, "
                     "EAGER_NEXT_REGION recovery, on-demand when spot cannot launch, 30-min checkpoints (baseline)",
                     true});
  // Both ways a SkyPilot user picks the one GPU type: the rows are swept together because neither
  // dominates (cheapest per step is cheaper on llm-finetune, philly and gavel; fastest has the
  // lower average JCT), and the best-baseline rule picks whichever is eligible.
  SkyPilotPolicy::Options fastest;
  fastest.type = SkyPilotPolicy::TypeChoice::kFastest;
  entries.push_back({std::make_unique<SkyPilotPolicy>(fastest), "skypilot-fastest",
                     "SkyPilot managed jobs as above, each job requesting its fastest GPU type (baseline)", true});
  auto las_spot = std::make_unique<GavelLasPolicy>(false);
  las_spot->spot_recovery = true;
  entries.push_back({std::move(las_spot), "gavel-las-spot",
                     "Gavel-LAS with spot pools as worker types, SkyPilot's recovery (on-demand of the same type "
                     "when spot has no room), 30-min checkpoints (baseline)",
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
  CostAwareConfig other = spec.config.cost_aware;
  other.autoscale = other.autoscale == AutoscaleMode::kPredictive ? AutoscaleMode::kReactive : AutoscaleMode::kPredictive;
  std::string other_name = std::string("seedance-") + std::string(AutoscaleModeName(other.autoscale));
  entries.push_back({std::make_unique<SeedanceCostPolicy>(other), other_name,
                     "Seedance with " + std::string(AutoscaleModeName(other.autoscale)) +
                         " autoscaling (S3.4 comparison)"});
  for (double v : spec.frontier_time_values) {
    CostAwareConfig c = spec.config.cost_aware;
    c.time_value_per_hour = v;
    std::ostringstream os;
    os << v;  // 6, 0.5, 12.25
    const std::string value = os.str();
    entries.push_back({std::make_unique<SeedanceCostPolicy>(c), "seedance-tv" + value,
                       "Seedance valuing an hour of a job's time at $" + value + " (cost/JCT frontier)"});
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
    out.policies.push_back(PolicyOutcome{e.name, e.description, std::move(r), e.baseline, e.reference});
  }
  if (progress) progress("solving the LP lower bound (GLPK)");
  // The bound is taken over the span the baseline needs to finish the trace: the cheapest way to
  // do the same work by the time FIFO on on-demand capacity has done it.
  LowerBoundOptions lbo;
  lbo.horizon_s = std::max(out.policies.front().result.makespan_s, w.jobs.back().arrival_s + lbo.bucket_s);
  auto lb = CostLowerBound(w, fleet, lbo);
  if (!lb.has_value()) {
    out.notes.push_back("the LP over FIFO's span was infeasible; the bound uses the default horizon instead");
    lb = CostLowerBound(w, fleet);
  }
  if (!lb.has_value()) return lb.error();
  out.bound = *lb;
  out.bound_horizon_s = lbo.horizon_s;
  // The bound at Gavel-LAS's average JCT (the service level of the savings target).
  for (const auto& p : out.policies) {
    if (p.name != "gavel-las" || p.result.unfinished > 0) continue;
    if (progress) progress("solving the LP lower bound at " + p.name + "'s average JCT (GLPK)");
    LowerBoundOptions sl = lbo;
    sl.max_avg_jct_s = p.result.AvgJctHours() * 3600.0;
    SEEDANCE_ASSIGN_OR_RETURN(LowerBound b, CostLowerBound(w, fleet, sl));
    out.service_bounds.push_back({p.name, std::move(b)});
  }
  return out;
}

}  // namespace seedance::sim
