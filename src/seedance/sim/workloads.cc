#include "seedance/sim/workloads.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "seedance/core/csv.h"
#include "seedance/core/rng.h"
#include "seedance/gpu/catalog.h"

namespace seedance::sim {
namespace {

// Orders jobs by (arrival, id) and renumbers them 0..n-1 in that order (Workload's invariant).
void SortByArrivalAndRenumber(Workload& w) {
  std::stable_sort(w.jobs.begin(), w.jobs.end(), [](const JobSpec& a, const JobSpec& b) {
    return a.arrival_s != b.arrival_s ? a.arrival_s < b.arrival_s : a.id < b.id;
  });
  for (std::size_t i = 0; i < w.jobs.size(); ++i) w.jobs[i].id = static_cast<std::int64_t>(i);
}

// The openb replay's run-time reference: a pod that names no GPU type ran on a V100-class GPU.
constexpr std::string_view kOpenbReferenceType = "V100";

const gpu::GpuFacts& CatalogRow(std::string_view type) {
  return gpu::GpuAt(*gpu::ParseGpuName(type, gpu::NameMatch::kCanonical));
}

}  // namespace

Result<GavelThroughputs> GavelThroughputs::LoadFile(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_type, t.ColumnIndex("job_type"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_gpus, t.ColumnIndex("num_gpus"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_v, t.ColumnIndex("sim_v100_steps_per_s"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_p, t.ColumnIndex("sim_p100_steps_per_s"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_k, t.ColumnIndex("sim_k80_steps_per_s"));
  GavelThroughputs g;
  for (const auto& row : t.rows()) {
    std::string type(t.Str(row, c_type));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t gpus, t.Int(row, c_gpus));
    std::vector<double> v;
    for (std::size_t c : {c_v, c_p, c_k}) {
      SEEDANCE_ASSIGN_OR_RETURN(double x, t.Double(row, c));
      if (x < 0) return t.FieldError(row, c, "throughput must be >= 0");
      v.push_back(x);
    }
    if (gpus == 1) g.job_types.push_back(type);
    g.steps_per_s[{type, static_cast<int>(gpus)}] = v;
  }
  if (g.job_types.empty()) return InvalidArgumentError(path + ": no single-GPU job types");
  return g;
}

const std::vector<double>* GavelThroughputs::Find(const std::string& job_type, int gpus) const {
  auto it = steps_per_s.find({job_type, gpus});
  return it == steps_per_s.end() ? nullptr : &it->second;
}

bool GavelThroughputs::Distributed(const std::string& job_type) const {
  return Find(job_type, 2) != nullptr;
}

Result<Workload> LoadGavelPeerStream(const std::string& path, const GavelThroughputs& thr,
                                     double rate_per_hour) {
  if (!(rate_per_hour > 0)) return InvalidArgumentError("rate must be > 0");
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_id, t.ColumnIndex("job_id"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_arr, t.ColumnIndex("arrival_time_s"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_type, t.ColumnIndex("job_type"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_sf, t.ColumnIndex("scale_factor"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_steps, t.ColumnIndex("total_steps"));
  Workload w;
  w.name = "gavel-peer-seed0";
  w.gpu_types = thr.gpu_types;
  const double scale = 2.0 / rate_per_hour;  // recorded at 2.0 jobs/h
  for (const auto& row : t.rows()) {
    JobSpec j;
    SEEDANCE_ASSIGN_OR_RETURN(j.id, t.Int(row, c_id));
    SEEDANCE_ASSIGN_OR_RETURN(double arr, t.Double(row, c_arr));
    j.arrival_s = arr * scale;
    j.job_type = std::string(t.Str(row, c_type));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t sf, t.Int(row, c_sf));
    j.gpus = static_cast<int>(sf);
    SEEDANCE_ASSIGN_OR_RETURN(j.total_steps, t.Double(row, c_steps));
    const auto* v = thr.Find(j.job_type, j.gpus);
    if (v == nullptr) return t.FieldError(row, c_type, "no throughput for this job type");
    j.steps_per_s = *v;
    w.jobs.push_back(std::move(j));
  }
  SEEDANCE_RETURN_IF_ERROR(w.Validate());
  return w;
}

Workload GenerateGavel(const GavelThroughputs& thr, double rate_per_hour, std::int64_t num_jobs,
                       bool multi_gpu, std::uint64_t seed) {
  Rng job_rng(seed * 2 + 1);
  Rng arrival_rng(seed * 2 + 2);
  Workload w;
  w.name = multi_gpu ? "gavel-continuous-multiple" : "gavel-continuous-single";
  w.gpu_types = thr.gpu_types;
  double t = 0;
  for (std::int64_t i = 0; i < num_jobs; ++i) {
    JobSpec j;
    j.id = i;
    j.arrival_s = t;
    j.job_type = thr.job_types[static_cast<std::size_t>(job_rng.Uniform(thr.job_types.size()))];
    j.gpus = 1;
    if (multi_gpu && thr.Distributed(j.job_type)) {
      double r = job_rng.UniformDouble();
      j.gpus = r < 0.70 ? 1 : r < 0.80 ? 2 : r < 0.95 ? 4 : 8;
    }
    double u = job_rng.UniformDouble();
    double duration = u >= 0.8 ? 60.0 * std::pow(10.0, 3.0 + job_rng.UniformDouble())
                               : 60.0 * std::pow(10.0, 1.5 + 1.5 * job_rng.UniformDouble());
    const auto* v = thr.Find(j.job_type, j.gpus);
    j.steps_per_s = *v;
    j.total_steps = duration * (*v)[0];
    w.jobs.push_back(std::move(j));
    t += arrival_rng.Exponential(rate_per_hour / 3600.0);
  }
  return w;
}

Result<Workload> LoadPhillyJobs(const std::string& path, const GavelThroughputs& thr,
                                std::int64_t* skipped) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_vc, t.ColumnIndex("vc"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_type, t.ColumnIndex("job_type"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_gpus, t.ColumnIndex("num_gpus"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_steps, t.ColumnIndex("total_steps"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_arr, t.ColumnIndex("arrival_time_s"));
  Workload w;
  w.name = "philly";
  w.gpu_types = thr.gpu_types;
  std::int64_t skip = 0;
  std::int64_t line_id = 0;
  for (const auto& row : t.rows()) {
    JobSpec j;
    j.id = line_id++;
    j.tenant = "vc-" + std::string(t.Str(row, c_vc));
    j.job_type = std::string(t.Str(row, c_type));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t g, t.Int(row, c_gpus));
    if (g < 1) return t.FieldError(row, c_gpus, "must be >= 1");
    j.gpus = static_cast<int>(g);
    SEEDANCE_ASSIGN_OR_RETURN(j.total_steps, t.Double(row, c_steps));
    if (!(j.total_steps > 0)) return t.FieldError(row, c_steps, "must be > 0");
    SEEDANCE_ASSIGN_OR_RETURN(j.arrival_s, t.Double(row, c_arr));
    if (!(j.arrival_s >= 0)) return t.FieldError(row, c_arr, "must be >= 0");
    const auto* v = thr.Find(j.job_type, j.gpus);
    if (v == nullptr) {
      ++skip;
      continue;
    }
    j.steps_per_s = *v;
    w.jobs.push_back(std::move(j));
  }
  SortByArrivalAndRenumber(w);
  if (skipped != nullptr) *skipped = skip;
  SEEDANCE_RETURN_IF_ERROR(w.Validate());
  return w;
}

Result<Workload> LoadOpenbJobs(const std::string& path, const std::vector<std::string>& gpu_types,
                               std::int64_t* never_ran) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_name, t.ColumnIndex("name"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_gpu, t.ColumnIndex("num_gpu"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_spec, t.ColumnIndex("gpu_spec"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_create, t.ColumnIndex("creation_time"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_delete, t.ColumnIndex("deletion_time"));
  std::vector<double> speed;  // per fleet type, relative to a V100
  for (const auto& type : gpu_types) {
    auto model = gpu::ParseGpuName(type, gpu::NameMatch::kCanonical);
    if (!model.has_value()) return model.error();
    speed.push_back(gpu::GpuAt(*model).speed_vs_v100);
    if (speed.back() <= 0) {
      return InvalidArgumentError("openb: GPU type '" + type +
                                  "' has no relative training speed in the GPU catalog");
    }
  }
  const double reference_speed = CatalogRow(kOpenbReferenceType).speed_vs_v100;
  Workload w;
  w.name = "openb";
  w.gpu_types = gpu_types;
  std::int64_t id = 0;
  for (const auto& row : t.rows()) {
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t g, t.Int(row, c_gpu));
    if (g < 0) return t.FieldError(row, c_gpu, "must be >= 0");
    if (g == 0) continue;  // CPU-only pods are not GPU jobs
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t c0, t.Int(row, c_create));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t c1, t.Int(row, c_delete));
    if (c1 < c0) return t.FieldError(row, c_delete, "must not be before creation_time");
    if (c1 == c0) {  // deleted when created (the trace's never-scheduled Pending pods): no work
      if (never_ran != nullptr) ++*never_ran;
      continue;
    }
    JobSpec j;
    j.id = id++;
    j.job_type = std::string(t.Str(row, c_name));
    j.gpus = static_cast<int>(g);
    j.arrival_s = static_cast<double>(c0);
    j.steps_per_s.assign(gpu_types.size(), 0.0);
    std::string spec(t.Str(row, c_spec));
    bool any = false;
    double named_speed = 0;  // sum over the allowed types when the pod names some
    int named = 0;
    for (std::size_t k = 0; k < gpu_types.size(); ++k) {
      bool allowed = spec.empty();
      std::stringstream ss(spec);
      std::string item;
      while (std::getline(ss, item, '|')) allowed = allowed || item == gpu_types[k];
      if (allowed) {
        j.steps_per_s[k] = speed[k];
        any = true;
        named_speed += speed[k];
        ++named;
      }
    }
    // Work in V100-seconds: the recorded run time at the speed of the GPU it was measured on.
    const double measured_on = spec.empty() || named == 0 ? reference_speed : named_speed / named;
    j.total_steps = static_cast<double>(c1 - c0) * measured_on;
    if (!any) return t.FieldError(row, c_spec, "names no GPU type of the fleet");
    w.jobs.push_back(std::move(j));
  }
  SortByArrivalAndRenumber(w);
  SEEDANCE_RETURN_IF_ERROR(w.Validate());
  return w;
}

std::string OpenbSpeedNote(const std::vector<std::string>& gpu_types) {
  std::string speeds;
  for (const auto& type : gpu_types) {
    auto model = gpu::ParseGpuName(type, gpu::NameMatch::kCanonical);
    if (!model.has_value()) continue;
    const gpu::GpuFacts& g = gpu::GpuAt(*model);
    std::ostringstream one;
    one << (speeds.empty() ? "" : ", ") << g.name << ' ' << std::fixed << std::setprecision(2)
        << g.speed_vs_v100 << " (" << g.speed_basis << ')';
    speeds += one.str();
  }
  const std::string ref(kOpenbReferenceType);
  return "openb assumes: a pod's recorded run time (deletion - creation) is on a " + ref +
         "-class GPU (on its named types if any); speeds vs " + ref + ": " + speeds +
         " (docs/WORKLOADS.md); fractional-GPU pods take a whole GPU; no spot series exists for "
         "these types";
}

Result<Workload> LoadJobsCsv(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_id, t.ColumnIndex("job_id"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_arr, t.ColumnIndex("arrival_s"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_type, t.ColumnIndex("job_type"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_gpus, t.ColumnIndex("gpus"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_steps, t.ColumnIndex("total_steps"));
  std::ptrdiff_t c_dl = t.FindColumn("deadline_s");
  std::ptrdiff_t c_tenant = t.FindColumn("tenant");
  std::ptrdiff_t c_prio = t.FindColumn("priority");
  Workload w;
  w.name = t.name();
  std::vector<std::size_t> thr_cols;
  const std::string prefix = "steps_per_s_";
  for (std::size_t c = 0; c < t.header().size(); ++c) {
    const std::string& h = t.header()[c];
    if (h.rfind(prefix, 0) == 0 && h.size() > prefix.size()) {
      // Any spelling the GPU-name parser knows (steps_per_s_NVIDIA-A100-SXM4-80GB) names the
      // catalog's type; an unknown name stays as written (the price table then names it).
      std::string type = h.substr(prefix.size());
      if (auto idx = gpu::ParseGpuName(type, gpu::NameMatch::kProduct); idx.has_value()) {
        type = gpu::GpuAt(*idx).name;
      }
      for (std::size_t k = 0; k < w.gpu_types.size(); ++k) {
        if (w.gpu_types[k] == type) {
          return InvalidArgumentError(path + ": columns '" + t.header()[thr_cols[k]] + "' and '" + h +
                                      "' name the same GPU type " + type);
        }
      }
      w.gpu_types.push_back(type);
      thr_cols.push_back(c);
    }
  }
  if (thr_cols.empty()) {
    return InvalidArgumentError(path + ": no 'steps_per_s_<GPU type>' column");
  }
  for (const auto& row : t.rows()) {
    JobSpec j;
    auto id = t.Int(row, c_id);
    if (!id.has_value()) {
      return t.FieldError(row, c_id, "expected an integer job id, got '" + std::string(t.Str(row, c_id)) +
                                         "' (a name goes in job_type or tenant)");
    }
    j.id = *id;
    SEEDANCE_ASSIGN_OR_RETURN(j.arrival_s, t.Double(row, c_arr));
    if (!(j.arrival_s >= 0) || !std::isfinite(j.arrival_s)) {
      return t.FieldError(row, c_arr, "must be a finite number >= 0");
    }
    j.job_type = std::string(t.Str(row, c_type));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t g, t.Int(row, c_gpus));
    if (g < 1 || g > 1024) return t.FieldError(row, c_gpus, "must be in 1..1024");
    j.gpus = static_cast<int>(g);
    SEEDANCE_ASSIGN_OR_RETURN(j.total_steps, t.Double(row, c_steps));
    if (!(j.total_steps > 0) || !std::isfinite(j.total_steps)) {
      return t.FieldError(row, c_steps, "must be a finite number > 0");
    }
    bool any = false;
    for (std::size_t c : thr_cols) {
      SEEDANCE_ASSIGN_OR_RETURN(double x, t.Double(row, c));
      if (!(x >= 0) || !std::isfinite(x)) return t.FieldError(row, c, "must be a finite number >= 0");
      any = any || x > 0;
      j.steps_per_s.push_back(x);
    }
    if (!any) return t.FieldError(row, thr_cols[0], "the job runs on no GPU type (all throughputs 0)");
    if (c_dl >= 0 && !t.Str(row, static_cast<std::size_t>(c_dl)).empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(j.deadline_s, t.Double(row, static_cast<std::size_t>(c_dl)));
      if (!(j.deadline_s > j.arrival_s)) {
        return t.FieldError(row, static_cast<std::size_t>(c_dl), "must be after arrival_s");
      }
    }
    if (c_tenant >= 0) j.tenant = std::string(t.Str(row, static_cast<std::size_t>(c_tenant)));
    if (c_prio >= 0) {
      std::string_view p = t.Str(row, static_cast<std::size_t>(c_prio));
      if (p == "critical") {
        j.priority = JobPriority::kCritical;
      } else if (!p.empty() && p != "normal") {
        return t.FieldError(row, static_cast<std::size_t>(c_prio), "expected 'normal' or 'critical'");
      }
    }
    if (!w.jobs.empty()) {
      const JobSpec& prev = w.jobs.back();
      if (j.arrival_s < prev.arrival_s || (j.arrival_s == prev.arrival_s && j.id <= prev.id)) {
        return t.FieldError(row, c_arr, "rows must be sorted by (arrival_s, job_id) with unique ids");
      }
    }
    w.jobs.push_back(std::move(j));
  }
  SEEDANCE_RETURN_IF_ERROR(w.Validate());
  return w;
}

std::string JobsToCsv(const Workload& w) {
  std::ostringstream out;
  out.precision(10);
  out << "job_id,arrival_s,job_type,gpus,total_steps";
  for (const auto& g : w.gpu_types) out << ",steps_per_s_" << g;
  out << ",deadline_s,tenant,priority\n";
  for (const auto& j : w.jobs) {
    out << j.id << ',' << j.arrival_s << ',' << j.job_type << ',' << j.gpus << ',' << j.total_steps;
    for (double x : j.steps_per_s) out << ',' << x;
    out << ',';
    if (std::isfinite(j.deadline_s)) out << j.deadline_s;
    out << ',' << j.tenant << ',' << (j.priority == JobPriority::kCritical ? "critical" : "normal")
        << '\n';
  }
  return out.str();
}

namespace {

// llm-finetune's GPU types: dense FP16/BF16 tensor TFLOPS and memory GiB from the GPU catalog.
struct LlmGpu {
  std::string_view name;
  double tflops;
  double mem_gib;
};
const std::vector<LlmGpu>& LlmGpus() {
  static const std::vector<LlmGpu> gpus = [] {
    std::vector<LlmGpu> v;
    for (std::string_view name : {"H100", "A100-80G", "A100", "A10G", "L4"}) {
      const gpu::GpuFacts& g = CatalogRow(name);
      v.push_back({g.name, g.fp16_tflops, g.memory_gib});
    }
    return v;
  }();
  return gpus;
}

// Templates: parameters (billions), full fine-tune or LoRA, GPUs, tokens to train (billions),
// share of arrivals, tenant.
struct LlmTemplate {
  const char* name;
  double params_b;
  bool full;
  int gpus;
  double tokens_b_lo, tokens_b_hi;
  double share;
  const char* tenant;
};
constexpr LlmTemplate kLlmTemplates[] = {
    {"lora-7b", 7, false, 1, 0.02, 0.2, 0.35, "search"},
    {"lora-13b", 13, false, 2, 0.02, 0.2, 0.20, "ads"},
    {"full-7b", 7, true, 8, 0.1, 1.0, 0.20, "research"},
    {"full-13b", 13, true, 8, 0.05, 0.5, 0.10, "research"},
    {"lora-70b", 70, false, 8, 0.01, 0.05, 0.15, "ads"},
};
constexpr double kLlmTokensPerStep = 1.0e6 / 8.0;  // global batch of 128k tokens

// Steps/s of template `tp` on each GPU type (0 where its training state does not fit), with the
// training state scaled by `memory_factor` (1 = as generated).
std::vector<double> LlmSpeeds(const LlmTemplate& tp, double memory_factor) {
  // Training FLOPs: 6 N per token for a full fine-tune, about 4 N with LoRA (no weight grads).
  double flops_per_token = (tp.full ? 6.0 : 4.0) * tp.params_b * 1e9;
  // Memory: full fine-tune with Adam in mixed precision ~16 bytes/param; LoRA ~2 bytes/param
  // (frozen FP16 weights) plus activations; must fit in 80% of the gang's memory (S2.4).
  double bytes = tp.params_b * 1e9 * (tp.full ? 16.0 : 2.4) * memory_factor;
  std::vector<double> out;
  for (const auto& g : LlmGpus()) {
    double mem = g.mem_gib * 1024.0 * 1024.0 * 1024.0 * tp.gpus * 0.8;
    double mfu = g.tflops > 500 ? 0.35 : 0.40;  // large GPUs reach a lower MFU
    double flops = g.tflops * 1e12 * mfu * tp.gpus;
    out.push_back(bytes <= mem ? flops / (flops_per_token * kLlmTokensPerStep) : 0.0);
  }
  return out;
}

}  // namespace

Result<double> LlmFinetuneFlopsPerStep(std::string_view job_type) {
  for (const LlmTemplate& tp : kLlmTemplates) {
    if (job_type == tp.name) return (tp.full ? 6.0 : 4.0) * tp.params_b * 1e9 * kLlmTokensPerStep;
  }
  return InvalidArgumentError("not an llm-finetune job type: '" + std::string(job_type) + "'");
}

Result<LlmFinetuneJobModel> LlmFinetuneModelOf(std::string_view job_type) {
  for (const LlmTemplate& tp : kLlmTemplates) {
    if (job_type != tp.name) continue;
    LlmFinetuneJobModel m;
    m.params_b = tp.params_b;
    m.full = tp.full;
    m.gpus = tp.gpus;
    m.state_bytes_per_param = tp.full ? 16.0 : 2.4;
    return m;
  }
  return InvalidArgumentError("llm-finetune has no job type '" + std::string(job_type) + "'");
}

Result<std::vector<double>> LlmFinetuneStepsPerS(std::string_view job_type, double memory_factor) {
  for (const LlmTemplate& tp : kLlmTemplates) {
    if (job_type == tp.name) return LlmSpeeds(tp, memory_factor);
  }
  return InvalidArgumentError("llm-finetune has no job type '" + std::string(job_type) + "'");
}

Workload GenerateLlmFinetune(std::int64_t num_jobs, double duration_s, std::uint64_t seed) {
  Rng rng(seed);
  Rng estimate_rng(seed ^ 0x5eedda9ce0e57ULL);  // the submitters' size estimates (deadlines)
  Workload w;
  w.name = "llm-finetune";
  for (const auto& g : LlmGpus()) w.gpu_types.emplace_back(g.name);
  // Diurnal pulse: arrivals follow rate(t) ~ 1 + 0.8 sin(2 pi t / day); sampled by thinning.
  const double day = 86400.0;
  const double mean_rate = static_cast<double>(num_jobs) / duration_s;
  double t = 0;
  std::int64_t id = 0;
  while (id < num_jobs) {
    t += rng.Exponential(mean_rate * 1.8);
    if (t >= duration_s) t = std::fmod(t, duration_s);
    double accept = (1.0 + 0.8 * std::sin(2 * 3.14159265358979 * t / day)) / 1.8;
    if (!rng.Bernoulli(accept)) continue;
    double r = rng.UniformDouble();
    const LlmTemplate* tp = &kLlmTemplates[0];
    for (const auto& c : kLlmTemplates) {
      if (r < c.share) {
        tp = &c;
        break;
      }
      r -= c.share;
    }
    JobSpec j;
    j.id = id++;
    j.arrival_s = t;
    j.job_type = tp->name;
    j.gpus = tp->gpus;
    j.tenant = tp->tenant;
    double tokens = tp->tokens_b_lo * std::pow(tp->tokens_b_hi / tp->tokens_b_lo, rng.UniformDouble()) * 1e9;
    j.total_steps = std::ceil(tokens / kLlmTokensPerStep);
    j.steps_per_s = LlmSpeeds(*tp, 1.0);
    // 30% carry a deadline, set as a user sets one: from an estimate of the work, not the true
    // size. The estimate is drawn from the template's own token range (log-uniform), independent of
    // the job's true tokens, from a separate stream (so arrivals and sizes match earlier versions);
    // the deadline is 3x the estimate's run time on the fastest type, at least 6 h (longer than any
    // template's largest job takes there, so every deadline stays feasible). Issue 29: a deadline
    // derived from the true size told a policy the size.
    if (rng.Bernoulli(0.3)) {
      double best = *std::max_element(j.steps_per_s.begin(), j.steps_per_s.end());
      const double est_tokens =
          tp->tokens_b_lo * std::pow(tp->tokens_b_hi / tp->tokens_b_lo, estimate_rng.UniformDouble()) * 1e9;
      j.deadline_s = t + std::max(6 * 3600.0, 3.0 * std::ceil(est_tokens / kLlmTokensPerStep) / best);
    }
    w.jobs.push_back(std::move(j));
  }
  SortByArrivalAndRenumber(w);
  return w;
}

}  // namespace seedance::sim
