#include "seedance/fleet/scenario.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seedance/core/csv.h"
#include "seedance/core/rng.h"
#include "seedance/cost/price_table.h"
#include "seedance/cost/tco.h"
#include "seedance/fleet/history.h"
#include "seedance/gpu/catalog.h"
#include "seedance/sim/fleet_file.h"
#include "seedance/sim/workloads.h"

namespace seedance::fleet {
namespace {

// Tenants (one cohort, resource "gpu"): the llm-finetune generator's tenants, the Philly batch
// tenant and the dev notebooks. Nominal quotas sum to 96 GPUs: the owned base plus what the
// platform lets tenants hold in the cloud at once.
struct TenantDef {
  const char* name;
  tenancy::Tier tier;
  double nominal;
};
constexpr TenantDef kTenants[] = {
    {"search", tenancy::Tier::kGold, 24},    {"ads", tenancy::Tier::kSilver, 16},
    {"research", tenancy::Tier::kSilver, 24}, {"philly", tenancy::Tier::kBronze, 16},
    {"dev", tenancy::Tier::kBronze, 16},
};

// The owned fleet c has six tenants (issue 39): the Philly trace's virtual clusters are split
// between two Bronze tenants, philly (VC ids beginning 0-7) and philly-2 (8-f), each with half of
// philly's quota, so the quotas sum to what they sum to on a and b (times the shape's scale).
constexpr TenantDef kSixthTenant = {"philly-2", tenancy::Tier::kBronze, 8};

int TenantIndex(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kTenants); ++i) {
    if (name == kTenants[i].name) return static_cast<int>(i);
  }
  return -1;
}

// A random stream per (seed, week): week 2 is another draw than week 1.
std::uint64_t Stream(std::uint64_t base, const FleetWeekOptions& o) {
  const std::uint64_t week = o.week > 0 ? 1u : 0u;
  return base + 2u * o.seed + week;
}

const gpu::GpuFacts& Facts(const std::string& type) {
  return gpu::GpuAt(*gpu::ParseGpuName(type, gpu::NameMatch::kCanonical));
}

// A Philly-era job's speed on `type` relative to a V100: the slower of its dense FP16 compute
// (at the llm-finetune generator's MFU rule: 0.35 above 500 TFLOPS, else 0.40) and its memory
// bandwidth, each against a V100 (125 TFLOPS at 0.40, 900 GB/s).
double SpeedVsV100(const std::string& type) {
  const gpu::GpuFacts& g = Facts(type);
  const gpu::GpuFacts& v = Facts("V100");
  const double mfu = g.fp16_tflops > 500 ? 0.35 : 0.40;
  const double compute = g.fp16_tflops * mfu / (v.fp16_tflops * 0.40);
  const double memory = g.memory_gb_s / v.memory_gb_s;
  return std::min(compute, memory);
}

// The work of a shape: a and b run issue 30's week; the owned shape c (issue 39) runs a standing
// backlog of training larger than its 512 GPUs: 16 times the fine-tunes, every Philly job of the
// week instead of one in 8 (the base leaves about a sixth of the jobs unfinished at the week's end,
// its owned GPUs busy), and quotas six times as large (their sum, 576 GPUs, is the fleet's).
struct ShapeWork {
  int llm_jobs = 400;
  double philly_keep = 1.0 / 8.0;
  double quota_scale = 1;
  bool six_tenants = false;  // philly split in two by virtual cluster (kSixthTenant)
};
ShapeWork WorkOf(const FleetWeekOptions& o) {
  if (o.fleet_file.empty() && o.shape == "c") return {6400, 1.0, 6, true};
  return {};
}

Status AddLlmJobs(const FleetWeekOptions& o, FleetWeekScenario* s, std::int64_t* next_id, int* dropped) {
  // 400 fine-tunes over the week (the generator's diurnal pulse, 30 % with deadlines); week 2 is
  // another draw of the same generator.
  const std::uint64_t seed = Stream(0xf1ee7000u, o);
  const sim::Workload w = sim::GenerateLlmFinetune(WorkOf(o).llm_jobs, kWeekS, seed);
  for (const sim::JobSpec& j : w.jobs) {
    TrainingJob t;
    t.id = (*next_id)++;
    t.name = j.job_type;
    t.kind = "llm-finetune";
    t.tenant = TenantIndex(j.tenant);
    if (t.tenant < 0) return InternalError("llm-finetune tenant '" + j.tenant + "' has no fleet-week tenant");
    t.arrival_s = j.arrival_s;
    t.gpus = j.gpus;
    bool any = false;
    for (const std::string& type : s->fleet.gpu_types) {
      const int k = w.TypeIndex(type);
      const double v = k >= 0 ? j.steps_per_s[static_cast<std::size_t>(k)] : 0.0;
      t.steps_per_s.push_back(v);
      any = any || v > 0;
    }
    if (!any) {
      ++*dropped;
      continue;
    }
    t.total_steps = j.total_steps;
    t.user_estimate_steps = j.user_estimate_steps;
    SEEDANCE_ASSIGN_OR_RETURN(const double flops, sim::LlmFinetuneFlopsPerStep(j.job_type));
    t.pflop_per_step = flops / 1e15;
    t.deadline_s = j.deadline_s;
    t.checkpoint_s = 600;
    s->jobs.push_back(std::move(t));
  }
  return Status::Ok();
}

Status AddPhillyJobs(const FleetWeekOptions& o, FleetWeekScenario* s, std::int64_t* next_id) {
  // The Philly VC stream (data/gavel/msr_philly_vc_jobs_seed0.csv, 125 days): the week starting
  // on day 14 (week 1) or day 21 (week 2), one job in 8 kept (seeded), gangs of 1, 2, 4 or 8
  // GPUs; work = the trace's estimated run time on V100s.
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable csv, CsvTable::ReadFile(o.data_dir + "/gavel/msr_philly_vc_jobs_seed0.csv"));
  SEEDANCE_ASSIGN_OR_RETURN(const std::size_t c_vc, csv.ColumnIndex("vc"));
  SEEDANCE_ASSIGN_OR_RETURN(const std::size_t c_gpus, csv.ColumnIndex("num_gpus"));
  SEEDANCE_ASSIGN_OR_RETURN(const std::size_t c_at, csv.ColumnIndex("arrival_time_s"));
  SEEDANCE_ASSIGN_OR_RETURN(const std::size_t c_dur, csv.ColumnIndex("est_duration_on_v100_s"));
  const double start = (14.0 + 7.0 * o.week) * 86400.0;
  Rng rng(Stream(0x9411117u, o));
  std::vector<double> speed;
  for (const std::string& type : s->fleet.gpu_types) speed.push_back(SpeedVsV100(type));
  const double v100_pflops = Facts("V100").fp16_tflops * 0.40 / 1000.0;  // PFLOP/s at 40 % MFU
  const int tenant = TenantIndex("philly");
  const int second = static_cast<int>(std::size(kTenants));  // kSixthTenant, on fleet c
  for (const auto& row : csv.rows()) {
    SEEDANCE_ASSIGN_OR_RETURN(const double at, csv.Double(row, c_at));
    if (at < start || at >= start + kWeekS) continue;
    if (!rng.Bernoulli(WorkOf(o).philly_keep)) continue;
    SEEDANCE_ASSIGN_OR_RETURN(const std::int64_t gpus, csv.Int(row, c_gpus));
    if (gpus != 1 && gpus != 2 && gpus != 4 && gpus != 8) continue;
    if (csv.Str(row, c_dur).empty()) continue;  // a few rows of the trace have no estimate
    SEEDANCE_ASSIGN_OR_RETURN(const double dur, csv.Double(row, c_dur));
    TrainingJob t;
    t.id = (*next_id)++;
    t.name = "philly-" + std::string(csv.Str(row, c_vc));
    t.kind = "philly";
    const char vc0 = csv.Str(row, c_vc).empty() ? '0' : csv.Str(row, c_vc)[0];
    t.tenant = WorkOf(o).six_tenants && vc0 >= '8' ? second : tenant;
    t.arrival_s = at - start;
    t.gpus = static_cast<int>(gpus);
    // A step = one second of the gang on V100s.
    for (double v : speed) t.steps_per_s.push_back(v);
    t.total_steps = std::max(60.0, dur);
    t.pflop_per_step = static_cast<double>(gpus) * v100_pflops;
    t.checkpoint_s = 600;
    s->jobs.push_back(std::move(t));
  }
  return Status::Ok();
}

void AddDevPods(const FleetWeekOptions& o, FleetWeekScenario* s, std::int64_t* next_id) {
  // Notebooks: 30 sessions per weekday (5 on weekend days) starting uniformly in 08:00-18:00 of
  // the weekly shape's clock, one GPU: L4 60 %, A10G 20 %, A100-80G 20 % (the nearest type the
  // fleet has: the first of L4, A10G, A100-80G, A100 it lists); active U(1, 4) h, then held idle
  // Exp(mean 6 h), capped at 64 h (a notebook left open over a weekend), until its user closes it.
  Rng rng(Stream(0xde7000u, o));
  auto type_of = [&](std::vector<const char*> prefs) {
    for (const char* p : prefs) {
      for (std::size_t k = 0; k < s->fleet.gpu_types.size(); ++k) {
        if (s->fleet.gpu_types[k] == p) return static_cast<int>(k);
      }
    }
    return 0;
  };
  const int tenant = TenantIndex("dev");
  for (int day = 0; day < 7; ++day) {
    const int n = day < 5 ? 30 : 5;
    for (int i = 0; i < n; ++i) {
      DevPod d;
      d.id = (*next_id)++;
      d.tenant = tenant;
      d.arrival_s = day * 86400.0 + 8 * 3600.0 + rng.UniformDouble() * 10 * 3600.0;
      const double u = rng.UniformDouble();
      d.type = u < 0.6 ? type_of({"L4", "A10G", "A100-80G", "A100"})
                       : u < 0.8 ? type_of({"A10G", "L4", "A100-80G", "A100"})
                                 : type_of({"A100-80G", "A100", "H100"});
      d.active_s = 3600.0 * (1.0 + 3.0 * rng.UniformDouble());
      d.idle_tail_s = std::min(64 * 3600.0, rng.Exponential(1.0 / (6 * 3600.0)));
      s->dev.push_back(d);
    }
  }
  // Think time (issue 39): a session in use alternates bursts of GPU use, Exp(mean 15 min), with
  // think time at zero GPU use, Exp(mean 5 min); a gap that would reach the end of the active
  // period is dropped (the idle tail follows the last burst). Its own stream, so the draws above
  // are those of issue 30.
  Rng think(Stream(0x7a1c000u, o));
  for (DevPod& d : s->dev) {
    double t = 0;
    for (;;) {
      t += think.Exponential(1.0 / kThinkBurstMeanS);
      const double gap = think.Exponential(1.0 / kThinkGapMeanS);
      if (t + gap >= d.active_s) break;
      d.think_gaps.emplace_back(t, gap);
      t += gap;
    }
  }
  // GPU memory need (issue 39, whether a MIG slice holds it): log-uniform from
  // kNotebookMemoryFloorGb to the memory of the type it asked for (assumed: no public trace of
  // notebook GPU memory is bundled). Its own stream, so the draws above are unchanged.
  Rng mem(Stream(0x3e30000u, o));
  for (DevPod& d : s->dev) {
    const auto idx = gpu::ParseGpuName(s->fleet.gpu_types[static_cast<std::size_t>(d.type)], gpu::NameMatch::kName);
    const double top = idx.has_value() ? gpu::GpuAt(*idx).memory_gib : 0.0;
    const double u = mem.UniformDouble();
    d.memory_gb = top > kNotebookMemoryFloorGb ? kNotebookMemoryFloorGb * std::pow(top / kNotebookMemoryFloorGb, u) : top;
  }
  std::sort(s->dev.begin(), s->dev.end(),
            [](const DevPod& a, const DevPod& b) { return std::tie(a.arrival_s, a.id) < std::tie(b.arrival_s, b.id); });
}

}  // namespace

double ServingTypePrice(const FleetWeekScenario& s, int fleet_type) {
  const int od = s.fleet.FindPool(fleet_type, sim::Tier::kOnDemand);
  if (od >= 0) return s.fleet.pools[static_cast<std::size_t>(od)].usd_per_gpu_hour;
  const auto t = static_cast<std::size_t>(fleet_type);
  return t < s.owned_marginal_usd_per_gpu_hour.size() ? s.owned_marginal_usd_per_gpu_hour[t] : 0.0;
}

std::string FleetFileOf(const std::string& data_dir, const std::string& shape) {
  return data_dir + "/fleets/fleet-week-" + shape + ".yaml";
}

namespace {

struct LoadedFleet {
  sim::FleetFile file;
  sim::FleetSpec spec;
  std::vector<std::string> serving_types;  // the fleet's types in ServingGpuTypes(), in file order
};

Result<LoadedFleet> LoadWeekFleet(const std::string& data_dir, const std::string& path) {
  LoadedFleet f;
  SEEDANCE_ASSIGN_OR_RETURN(f.file, sim::LoadFleetFile(path));
  std::vector<std::string> types;
  for (const auto& g : f.file.gpus) types.push_back(g.type);
  SEEDANCE_ASSIGN_OR_RETURN(cost::PriceTable prices, cost::PriceTable::LoadFile(data_dir + "/prices/gpu_prices.csv"));
  SEEDANCE_ASSIGN_OR_RETURN(f.spec, sim::BuildFleetSpec(f.file, types, prices));
  const std::vector<std::string>& servable = ServingGpuTypes();
  for (const std::string& t : types) {
    if (std::find(servable.begin(), servable.end(), t) != servable.end()) f.serving_types.push_back(t);
  }
  if (f.serving_types.empty()) {
    const std::vector<std::string> head(servable.begin(), servable.end() - 1);
    return InvalidArgumentError(fmt::format(
        "{}: gpus: the fleet week serves llama-2-7b on {} or {}, and this fleet has none of them ({})", path,
        fmt::join(head, ", "), servable.back(), fmt::join(types, ", ")));
  }
  return f;
}

}  // namespace

Status CheckFleetWeekFleet(const std::string& data_dir, const std::string& fleet_file, const std::string& history_dir) {
  auto f = LoadWeekFleet(data_dir, fleet_file);
  if (!f.has_value()) return f.error();
  if (history_dir.empty()) return Status::Ok();
  auto h = ReadUserHistory(history_dir, f->spec);
  return h.has_value() ? Status::Ok() : h.error();
}

Result<FleetWeekScenario> BuildFleetWeek(const FleetWeekOptions& o) {
  if (o.fleet_file.empty() && o.shape != "a" && o.shape != "b" && o.shape != "c") {
    return InvalidArgumentError("fleet shape '" + o.shape + "': known shapes are a (tuning), b and c (held out)");
  }
  if (o.week != 0 && o.week != 1) return InvalidArgumentError("week must be 1 or 2");
  FleetWeekScenario s;
  s.options = o;
  s.name = "fleet-week " + o.shape + " week " + std::to_string(o.week + 1) + " seed " + std::to_string(o.seed);
  SEEDANCE_ASSIGN_OR_RETURN(LoadedFleet loaded,
                            LoadWeekFleet(o.data_dir, o.fleet_file.empty() ? FleetFileOf(o.data_dir, o.shape) : o.fleet_file));
  const sim::FleetFile& file = loaded.file;
  s.fleet = loaded.spec;
  for (const sim::FleetFileGpu& g : file.gpus) {
    double marginal = 0;
    if (g.owned > 0) {
      const gpu::GpuFacts& facts = gpu::GpuAt(*gpu::ParseGpuName(g.type, gpu::NameMatch::kCanonical));
      SEEDANCE_ASSIGN_OR_RETURN(const cost::Tco tco, cost::OwnedGpuTco(facts, g.tco));
      marginal = tco.power_usd_per_gpu_hour;  // the TCO model's power and cooling per GPU-hour
    }
    s.owned_marginal_usd_per_gpu_hour.push_back(marginal);
  }
  const std::string fleet_line =
      "fleet: " + file.name + " (" + (o.fleet_file.empty() ? "data/fleets/fleet-week-" + o.shape + ".yaml" : o.fleet_file) +
      "); nodes of 8 GPUs of one type; owned GPUs at the TCO model's price, billed all week in every stack";
  if (!o.history_dir.empty()) {  // the user's own week (history.h) instead of the bundled work
    s.name = "your week " + o.history_dir;
    s.assumptions = {fleet_line};
    SEEDANCE_ASSIGN_OR_RETURN(const UserHistory h, ReadUserHistory(o.history_dir, s.fleet));
    SEEDANCE_RETURN_IF_ERROR(ApplyUserHistory(h, loaded.serving_types, &s));
    return s;
  }

  std::vector<TenantDef> tenants(std::begin(kTenants), std::end(kTenants));
  if (WorkOf(o).six_tenants) {
    tenants[static_cast<std::size_t>(TenantIndex("philly"))].nominal -= kSixthTenant.nominal;
    tenants.push_back(kSixthTenant);
  }
  for (const TenantDef& t : tenants) {
    tenancy::TenantConfig c;
    c.name = t.name;
    c.cohort = "fleet";
    c.tier = t.tier;
    c.quota.push_back({"gpu", t.nominal * WorkOf(o).quota_scale, std::nullopt, std::nullopt});
    s.tenancy.tenants.push_back(c);
  }
  s.tenancy.cycle_s = kStepS;

  std::int64_t next_id = 1;
  int dropped = 0;
  SEEDANCE_RETURN_IF_ERROR(AddLlmJobs(o, &s, &next_id, &dropped));
  SEEDANCE_RETURN_IF_ERROR(AddPhillyJobs(o, &s, &next_id));
  std::sort(s.jobs.begin(), s.jobs.end(), [](const TrainingJob& a, const TrainingJob& b) {
    return std::tie(a.arrival_s, a.id) < std::tie(b.arrival_s, b.id);
  });
  AddDevPods(o, &s, &next_id);

  // Serving: two Gold deployments on the bundled Azure traces, stretched over the week by the
  // hour-of-week shape of a public multi-day trace (serving.h).
  SEEDANCE_ASSIGN_OR_RETURN(WeeklyShape shape, LoadWeeklyShape(o.data_dir + "/fleet_week/weekly_shape.csv"));
  const std::vector<std::string>& serving_gpus = loaded.serving_types;
  const struct {
    const char* name;
    const char* model;
    const char* trace;
    double rps;
  } kDeployments[] = {{"chat", "llama-2-7b", "conv", 24.0}, {"code", "llama-2-7b", "code", 6.0}};
  for (const auto& d : kDeployments) {
    ServingDeployment sd;
    sd.spec.name = d.name;
    sd.spec.model = d.model;
    sd.spec.trace = d.trace;
    sd.spec.mean_rate_rps = d.rps;
    sd.spec.gpus = serving_gpus;
    sd.tenant = "search";
    SEEDANCE_ASSIGN_OR_RETURN(sd.demand, BuildDemand(sd.spec, shape, o.data_dir, o.week, o.seed));
    SEEDANCE_ASSIGN_OR_RETURN(sd.history, BuildHistory(sd.spec, shape, o.data_dir, o.week, o.seed));
    SEEDANCE_ASSIGN_OR_RETURN(sd.tuning_demand, BuildDemand(sd.spec, shape, o.data_dir, 0, o.seed));
    SEEDANCE_ASSIGN_OR_RETURN(sd.tuning_history, BuildHistory(sd.spec, shape, o.data_dir, 0, o.seed));
    sd.tuning_peak_rps = sd.tuning_demand.Peak();
    const FleetWeekScenario* from = o.profiles_from;
    if (from != nullptr && from->serving.size() == std::size(kDeployments) &&
        from->serving[s.serving.size()].spec.gpus == sd.spec.gpus) {
      sd.vllm = from->serving[s.serving.size()].vllm;
      sd.seedance = from->serving[s.serving.size()].seedance;
    } else {
      if (o.progress != nullptr) {
        *o.progress << fmt::format("{}: serving profiles of {} ({}) on {}, vllm and seedance (cached in {}; "
                                   "a type not yet cached takes minutes)\n",
                                   file.name, sd.spec.name, sd.spec.model, fmt::join(sd.spec.gpus, ", "),
                                   o.cache_dir.empty() ? "no cache" : o.cache_dir);
      }
      SEEDANCE_RETURN_IF_ERROR(ProfileBothEngines(sd.spec, o.data_dir, o.cache_dir, o.progress, &sd.vllm, &sd.seedance));
    }
    s.serving.push_back(std::move(sd));
  }

  s.assumptions = {
      fleet_line,
      fmt::format("training: {} llm-finetune jobs (the generator's diurnal pulse, 30 % with deadlines; ", WorkOf(o).llm_jobs) +
          std::to_string(dropped) + " that fit no fleet type dropped) + " +
          (WorkOf(o).philly_keep < 1 ? "one in 8" : "every one of the") + " Philly VC jobs of the trace's week starting on day " +
          std::to_string(14 + 7 * o.week) + " (gangs of 1-8 GPUs)",
      "Philly speeds: min(FP16 x MFU, memory bandwidth) against a V100; PFLOP = V100-seconds x 125 TFLOPS x 40 % MFU",
      "dev: 30 notebook sessions per weekday, 5 per weekend day, 1 GPU, active U(1,4) h then idle Exp(6 h) capped at 64 h",
      "dev think time: while in use, bursts of GPU use Exp(15 min) alternate with think time at zero GPU use Exp(5 min); "
      "an idle detector on GPU activity sees think time as idle, and a notebook stopped in it is a session cut in use",
      "dev GPU memory (issue 39, assumed: no public trace is bundled): log-uniform from 4 GB to the asked type's memory; "
      "Seedance runs a notebook that fits on a MIG slice (NVIDIA MIG user guide profiles), billed the GPU's price x the "
      "slice's compute fraction; an hour in use on a slice counts as min(1, slice FP16 rate / asked type's) GPU-hours "
      "of useful work (a 1g slice of the asked type: 1/7), not as a whole GPU-hour",
      "serving: chat (llama-2-7b, Azure conv, 24 req/s mean) and code (llama-2-7b, Azure code, 6 req/s mean), "
      "hour-of-week shape from data/fleet_week/weekly_shape.csv (the Philly trace's submissions by hour of week)",
      WorkOf(o).quota_scale == 1
          ? "tenants: search (Gold, 24 GPUs), ads (Silver, 16), research (Silver, 24), philly (Bronze, 16), dev (Bronze, 16): one cohort"
          : fmt::format("tenants: search (Gold), ads, research (Silver), philly, philly-2 (the Philly trace's virtual clusters "
                        "split in two: ids beginning 0-7, 8-f), dev (Bronze), quotas 24/16/24/8/8/16 GPUs x {:.0f}: "
                        "one cohort; the training is a standing backlog larger than the fleet", WorkOf(o).quota_scale),
      "clock: 60 s steps; checkpoints every 600 s for every training job in every stack",
  };
  return s;
}

}  // namespace seedance::fleet
