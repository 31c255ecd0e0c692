#include "seedance/fleet/history.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "seedance/core/csv.h"
#include "seedance/gpu/catalog.h"
#include "seedance/sim/workloads.h"
#include "seedance/telemetry/parse.h"

namespace seedance::fleet {
namespace {

int FleetType(const sim::FleetSpec& fleet, const std::string& canonical) {
  for (std::size_t k = 0; k < fleet.gpu_types.size(); ++k) {
    if (fleet.gpu_types[k] == canonical) return static_cast<int>(k);
  }
  return -1;
}

// A CSV field's GPU type as a fleet type; an error names file:line:column and the field.
Result<int> TypeField(const CsvTable& t, const CsvTable::Row& row, std::size_t col, const sim::FleetSpec& fleet) {
  const std::string text(t.Str(row, col));
  auto idx = gpu::ParseGpuName(text, gpu::NameMatch::kProduct);
  const int k = idx.has_value() ? FleetType(fleet, std::string(gpu::GpuAt(*idx).name)) : -1;
  if (k < 0) {
    return t.FieldError(row, col, fmt::format("'{}' is not a GPU type of the fleet file (its types: {})", text,
                                              fmt::join(fleet.gpu_types, ", ")));
  }
  return k;
}

Result<double> TimeField(const CsvTable& t, const CsvTable::Row& row, std::size_t col) {
  auto ms = telemetry::ParseTimestamp(t.Str(row, col));
  if (!ms.has_value()) return t.FieldError(row, col, ms.error().message());
  return static_cast<double>(*ms) / 1000.0;
}

Result<int> PositiveInt(const CsvTable& t, const CsvTable::Row& row, std::size_t col) {
  SEEDANCE_ASSIGN_OR_RETURN(const std::int64_t v, t.Int(row, col));
  if (v <= 0 || v > 100000) return t.FieldError(row, col, "expected a positive count");
  return static_cast<int>(v);
}

// The indexes of required columns, in order; an error names the file and the missing column.
Result<std::vector<std::size_t>> Columns(const CsvTable& t, std::initializer_list<std::string_view> names) {
  std::vector<std::size_t> out;
  for (std::string_view n : names) {
    SEEDANCE_ASSIGN_OR_RETURN(const std::size_t c, t.ColumnIndex(n));
    out.push_back(c);
  }
  return out;
}

// One as-run row, read.
struct AsRunRow {
  std::uint32_t line = 0;
  std::optional<std::int64_t> job_id;
  std::string ns, pod, kind;
  int type = 0, gpus = 1;
  std::optional<int> pods;  // a gang's pods (batch rows)
  double submit_s = 0, start_s = 0, end_s = 0;  // Unix seconds
  std::optional<double> busy_s;
};

Result<std::vector<AsRunRow>> ReadAsRun(const std::string& path, const sim::FleetSpec& fleet) {
  SEEDANCE_ASSIGN_OR_RETURN(const CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(const std::vector<std::size_t> cols,
                            Columns(t, {"namespace", "pod", "gpu_type", "gpus", "start", "end"}));
  const std::size_t c_ns = cols[0], c_pod = cols[1], c_type = cols[2], c_gpus = cols[3], c_start = cols[4], c_end = cols[5];
  const std::ptrdiff_t c_id = t.FindColumn("job_id"), c_kind = t.FindColumn("kind"), c_busy = t.FindColumn("busy_s"),
                       c_submit = t.FindColumn("submit"), c_pods = t.FindColumn("pods");
  auto present = [&](const CsvTable::Row& r, std::ptrdiff_t c) { return c >= 0 && !t.Str(r, static_cast<std::size_t>(c)).empty(); };
  std::vector<AsRunRow> rows;
  for (const CsvTable::Row& r : t.rows()) {
    AsRunRow a;
    a.line = r.line;
    if (present(r, c_id)) {
      SEEDANCE_ASSIGN_OR_RETURN(a.job_id, t.Int(r, static_cast<std::size_t>(c_id)));
    }
    a.ns = std::string(t.Str(r, c_ns));
    if (a.ns.empty()) return t.FieldError(r, c_ns, "empty namespace");
    a.pod = std::string(t.Str(r, c_pod));
    a.kind = present(r, c_kind) ? std::string(t.Str(r, static_cast<std::size_t>(c_kind))) : "batch";
    if (a.kind != "batch" && a.kind != "service" && a.kind != "notebook") {
      return t.FieldError(r, static_cast<std::size_t>(c_kind),
                          "'" + a.kind + "': expected batch, service or notebook");
    }
    SEEDANCE_ASSIGN_OR_RETURN(a.type, TypeField(t, r, c_type, fleet));
    SEEDANCE_ASSIGN_OR_RETURN(a.gpus, PositiveInt(t, r, c_gpus));
    if (present(r, c_pods)) {
      SEEDANCE_ASSIGN_OR_RETURN(a.pods, PositiveInt(t, r, static_cast<std::size_t>(c_pods)));
    }
    SEEDANCE_ASSIGN_OR_RETURN(a.start_s, TimeField(t, r, c_start));
    SEEDANCE_ASSIGN_OR_RETURN(a.end_s, TimeField(t, r, c_end));
    if (a.end_s < a.start_s) return t.FieldError(r, c_end, "ends before its start");
    a.submit_s = a.start_s;
    if (present(r, c_submit)) {
      SEEDANCE_ASSIGN_OR_RETURN(a.submit_s, TimeField(t, r, static_cast<std::size_t>(c_submit)));
      if (a.submit_s > a.start_s) return t.FieldError(r, static_cast<std::size_t>(c_submit), "after the row's start");
    }
    if (present(r, c_busy)) {
      SEEDANCE_ASSIGN_OR_RETURN(const double busy, t.Double(r, static_cast<std::size_t>(c_busy)));
      if (!(busy >= 0) || busy > a.end_s - a.start_s + 1e-6) {
        return t.FieldError(r, static_cast<std::size_t>(c_busy),
                            fmt::format("{} s: expected 0 to the run's {} s", busy, a.end_s - a.start_s));
      }
      a.busy_s = busy;
    }
    rows.push_back(std::move(a));
  }
  return rows;
}

// One services.csv row, read.
struct ServiceRow {
  std::string ns, deployment;
  double time_s = 0, replicas = 0;
  std::optional<double> rps;  // requests_per_s, when the row has it
  int type = 0, gpus = 1;     // fleet type, GPUs per replica
  std::uint32_t line = 0;
};

Result<std::vector<ServiceRow>> ReadServices(const std::string& path, const sim::FleetSpec& fleet) {
  SEEDANCE_ASSIGN_OR_RETURN(const CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(const std::vector<std::size_t> cols,
                            Columns(t, {"namespace", "deployment", "gpu_type", "gpus_per_replica", "time", "replicas"}));
  const std::size_t c_ns = cols[0], c_dep = cols[1], c_type = cols[2], c_gpus = cols[3], c_time = cols[4], c_rep = cols[5];
  const std::ptrdiff_t c_rps = t.FindColumn("requests_per_s");
  std::vector<ServiceRow> rows;
  for (const CsvTable::Row& r : t.rows()) {
    ServiceRow s;
    s.line = r.line;
    s.ns = std::string(t.Str(r, c_ns));
    s.deployment = std::string(t.Str(r, c_dep));
    if (s.ns.empty()) return t.FieldError(r, c_ns, "empty namespace");
    if (s.deployment.empty()) return t.FieldError(r, c_dep, "empty deployment");
    SEEDANCE_ASSIGN_OR_RETURN(s.type, TypeField(t, r, c_type, fleet));
    SEEDANCE_ASSIGN_OR_RETURN(s.gpus, PositiveInt(t, r, c_gpus));
    SEEDANCE_ASSIGN_OR_RETURN(s.time_s, TimeField(t, r, c_time));
    SEEDANCE_ASSIGN_OR_RETURN(const std::int64_t rep, t.Int(r, c_rep));
    if (rep < 0) return t.FieldError(r, c_rep, "expected replicas >= 0");
    s.replicas = static_cast<double>(rep);
    if (c_rps >= 0 && !t.Str(r, static_cast<std::size_t>(c_rps)).empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(const double v, t.Double(r, static_cast<std::size_t>(c_rps)));
      if (!(v >= 0)) return t.FieldError(r, static_cast<std::size_t>(c_rps), "expected requests_per_s >= 0");
      s.rps = v;
    }
    if (!rows.empty() && std::tie(s.ns, s.deployment, s.time_s) < std::tie(rows.back().ns, rows.back().deployment,
                                                                           rows.back().time_s)) {
      return t.FieldError(r, c_time, "rows must be sorted by (namespace, deployment, time)");
    }
    rows.push_back(std::move(s));
  }
  return rows;
}

// A step function on the window's 60 s clock: value v from `from_s` (seconds from the window
// start) until the next change.
void Fill(std::vector<double>* steps, double from_s, double v) {
  const auto k0 = static_cast<std::size_t>(std::max(0.0, std::floor(from_s / kStepS)));
  for (std::size_t k = k0; k < steps->size(); ++k) (*steps)[k] = v;
}

// The history's namespaces as tenants: Gold when it runs services, Bronze when it runs only
// notebooks, else Silver; its nominal quota the peak GPUs it held at once in the as-run rows,
// and at least its largest gang.
std::vector<UserHistory::Tenant> Tenants(const std::vector<AsRunRow>& rows, const UserHistory& h,
                                         const std::vector<std::string>& job_tenants) {
  std::map<std::string, UserHistory::Tenant> by;
  std::map<std::string, std::set<std::string>> kinds;
  for (const auto& r : rows) kinds[r.ns].insert(r.kind);
  for (const auto& s : h.services) kinds[s.tenant].insert("service");
  for (const auto& t : job_tenants) kinds[t].insert("batch");
  for (const auto& [ns, k] : kinds) {
    UserHistory::Tenant t;
    t.name = ns;
    t.tier = k.count("service") ? tenancy::Tier::kGold
             : (k.size() == 1 && k.count("notebook")) ? tenancy::Tier::kBronze
                                                       : tenancy::Tier::kSilver;
    // Peak GPUs held at once: +gpus at each start, -gpus at each end.
    std::vector<std::pair<double, int>> ev;
    for (const auto& r : rows) {
      if (r.ns != ns) continue;
      ev.emplace_back(r.start_s, r.gpus);
      ev.emplace_back(r.end_s, -r.gpus);
    }
    std::sort(ev.begin(), ev.end());
    int held = 0;
    for (const auto& e : ev) {
      held += e.second;
      t.nominal_gpus = std::max(t.nominal_gpus, static_cast<double>(held));
    }
    by[ns] = t;
  }
  std::vector<UserHistory::Tenant> out;
  for (auto& [ns, t] : by) out.push_back(t);
  return out;
}

// PFLOP of one step at the job's fastest fleet type, at the generator's MFU rule (0.35 above 500
// dense FP16 TFLOPS, else 0.40): the history does not say what a job computes.
double PflopPerStep(const TrainingJob& j, const sim::FleetSpec& fleet) {
  std::size_t best = 0;
  for (std::size_t k = 0; k < j.steps_per_s.size(); ++k) {
    if (j.steps_per_s[k] > j.steps_per_s[best]) best = k;
  }
  const gpu::GpuFacts& g = gpu::GpuAt(*gpu::ParseGpuName(fleet.gpu_types[best], gpu::NameMatch::kCanonical));
  const double mfu = g.fp16_tflops > 500 ? 0.35 : 0.40;
  return j.gpus * g.fp16_tflops * mfu / 1000.0 / j.steps_per_s[best];
}

// A gang's pods: the history's count (at most one per GPU: pods without GPUs, such as an MPIJob's
// launcher, hold none of the gang's), else one per node's worth of GPUs; raised until every pod
// has the same GPUs, at most a node's (the engine's gang shape). `reshaped`: the history's count
// was changed.
int GangPods(int gpus, std::optional<int> history_pods, bool* reshaped) {
  int pods = std::max(std::min(history_pods.value_or(1), gpus), (gpus + kGpusPerNode - 1) / kGpusPerNode);
  while (pods < gpus && (gpus % pods != 0 || gpus / pods > kGpusPerNode)) ++pods;
  *reshaped = history_pods.has_value() && pods != *history_pods;
  return pods;
}

}  // namespace

Result<UserHistory> ReadUserHistory(const std::string& dir, const sim::FleetSpec& fleet) {
  namespace fs = std::filesystem;
  UserHistory h;
  h.dir = dir;
  const std::string jobs_path = (fs::path(dir) / kHistoryJobsFile).string();
  const std::string as_run_path = (fs::path(dir) / kHistoryAsRunFile).string();
  const std::string services_path = (fs::path(dir) / kHistoryServicesFile).string();
  for (const std::string& p : {jobs_path, as_run_path}) {
    if (!fs::exists(p)) {
      return NotFoundError(fmt::format("--history {}: no {} (the directory needs jobs.csv and as-run.csv from "
                                       "`seedance export workload`; services.csv is optional)",
                                       dir, fs::path(p).filename().string()));
    }
  }
  SEEDANCE_ASSIGN_OR_RETURN(const sim::Workload w, sim::LoadJobsCsv(jobs_path));
  SEEDANCE_ASSIGN_OR_RETURN(const std::vector<AsRunRow> rows, ReadAsRun(as_run_path, fleet));
  std::vector<ServiceRow> svc;
  const bool has_services = fs::exists(services_path);
  if (has_services) {
    SEEDANCE_ASSIGN_OR_RETURN(svc, ReadServices(services_path, fleet));
  }

  // One clock: the window starts at the first submit / start / replica change.
  double t0 = std::numeric_limits<double>::infinity(), t1 = -t0;
  for (const auto& r : rows) {
    t0 = std::min(t0, r.submit_s);
    t1 = std::max(t1, r.end_s);
  }
  for (const auto& s : svc) {
    t0 = std::min(t0, s.time_s);
    t1 = std::max(t1, s.time_s);
  }
  if (!std::isfinite(t0)) return InvalidArgumentError(as_run_path + ": no rows (and no services.csv rows)");
  // jobs.csv counts arrival_s from its own window start: a batch row of as-run.csv with the same
  // job_id puts it on this clock (else both files are taken to start together).
  std::map<std::int64_t, const AsRunRow*> by_id;
  for (const auto& r : rows) {
    if (r.job_id && r.kind == "batch") by_id.emplace(*r.job_id, &r);
  }
  double jobs_offset = 0;
  for (const sim::JobSpec& j : w.jobs) {
    if (auto it = by_id.find(j.id); it != by_id.end()) {
      jobs_offset = it->second->submit_s - j.arrival_s - t0;
      break;
    }
  }
  for (const sim::JobSpec& j : w.jobs) t1 = std::max(t1, t0 + jobs_offset + j.arrival_s);
  h.window_s = std::min(kWeekS, std::max(3600.0, 3600.0 * std::ceil((t1 - t0) / 3600.0)));
  const auto steps = static_cast<std::size_t>(std::ceil(h.window_s / kStepS));

  // Services: services.csv's deployments, else the as-run rows of kind service grouped by
  // (namespace, GPU type), replicas = the rows running at each step.
  auto add_service = [&](const std::string& ns, const std::string& name, int type, int gpus, const std::string& origin) {
    HistoryService s;
    s.name = name;
    s.tenant = ns;
    s.type = type;
    s.gpus_per_replica = gpus;
    s.replicas.assign(steps, 0.0);
    s.origin = origin;
    h.services.push_back(std::move(s));
  };
  if (has_services) {
    for (std::size_t i = 0; i < svc.size(); ++i) {
      const ServiceRow& r = svc[i];
      if (i == 0 || r.ns != svc[i - 1].ns || r.deployment != svc[i - 1].deployment) {
        add_service(r.ns, r.ns + "/" + r.deployment, r.type, r.gpus, fmt::format("{}:{}", services_path, r.line));
      }
      HistoryService& s = h.services.back();
      Fill(&s.replicas, r.time_s - t0, r.replicas);
      if (r.rps) {
        if (s.requests_per_s.empty()) s.requests_per_s.assign(steps, 0.0);
        Fill(&s.requests_per_s, r.time_s - t0, *r.rps);
      }
    }
    // A deployment uses the request rate only when every one of its rows has it.
    for (std::size_t i = 0, d = 0; i < svc.size(); ++i) {
      if (i > 0 && (svc[i].ns != svc[i - 1].ns || svc[i].deployment != svc[i - 1].deployment)) ++d;
      if (!svc[i].rps) h.services[d].requests_per_s.clear();
    }
  } else {
    std::map<std::pair<std::string, int>, std::size_t> idx;
    for (const auto& r : rows) {
      if (r.kind != "service") continue;
      auto [it, fresh] = idx.emplace(std::make_pair(r.ns, r.type), h.services.size());
      if (fresh) {
        add_service(r.ns, r.ns + "/" + fleet.gpu_types[static_cast<std::size_t>(r.type)], r.type, r.gpus,
                    fmt::format("{} (kind=service rows of namespace {})", as_run_path, r.ns));
      }
      HistoryService& s = h.services[it->second];
      const auto a = static_cast<std::size_t>(std::max(0.0, (r.start_s - t0) / kStepS));
      const auto b = std::min(steps, static_cast<std::size_t>(std::ceil((r.end_s - t0) / kStepS)));
      for (std::size_t k = a; k < b; ++k) s.replicas[k] += 1.0;
    }
  }

  // Notebooks: a session per GPU of each notebook row, in use for busy_s (all of it when unknown),
  // then idle until the row's end.
  std::int64_t next_id = 1;
  for (const sim::JobSpec& j : w.jobs) next_id = std::max(next_id, j.id + 1);
  std::vector<std::string> job_tenants;
  int unknown_busy = 0;
  for (const auto& r : rows) {
    if (r.kind != "notebook") continue;
    if (r.start_s - t0 >= h.window_s) {
      ++h.rows_after_window;
      continue;
    }
    const double run = r.end_s - r.start_s;
    const double active = r.busy_s.value_or(run);
    unknown_busy += r.busy_s ? 0 : 1;
    for (int g = 0; g < r.gpus; ++g) {
      DevPod d;
      d.id = next_id++;
      d.arrival_s = r.start_s - t0;
      d.type = r.type;
      d.active_s = std::max(kStepS, active);
      d.idle_tail_s = std::max(0.0, run - active);
      h.dev.push_back(d);
    }
  }
  // Batch jobs: jobs.csv, speeds on the fleet's types (0 where jobs.csv has no column).
  std::vector<int> col(fleet.gpu_types.size(), -1);
  for (std::size_t k = 0; k < fleet.gpu_types.size(); ++k) col[k] = w.TypeIndex(fleet.gpu_types[k]);
  for (const sim::JobSpec& j : w.jobs) {
    TrainingJob t;
    t.id = j.id;
    t.name = j.job_type;
    t.kind = "history";
    t.arrival_s = std::max(0.0, j.arrival_s + jobs_offset);
    if (t.arrival_s >= h.window_s) {
      ++h.rows_after_window;
      continue;
    }
    t.gpus = j.gpus;
    bool any = false;
    for (int c : col) {
      const double v = c >= 0 ? j.steps_per_s[static_cast<std::size_t>(c)] : 0.0;
      t.steps_per_s.push_back(v);
      any = any || v > 0;
    }
    if (!any) {
      ++h.jobs_dropped;
      continue;
    }
    const auto ar = by_id.find(j.id);
    bool reshaped = false;
    t.pods = GangPods(t.gpus, ar != by_id.end() ? ar->second->pods : std::nullopt, &reshaped);
    h.gangs += t.pods > 1;
    h.gangs_reshaped += reshaped;
    t.total_steps = j.total_steps;
    t.pflop_per_step = PflopPerStep(t, fleet);
    t.deadline_s = std::isfinite(j.deadline_s) ? j.deadline_s + jobs_offset : j.deadline_s;
    t.checkpoint_s = 600;
    job_tenants.push_back(j.tenant.empty() ? "default" : j.tenant);
    h.jobs.push_back(std::move(t));
  }
  h.tenants = Tenants(rows, h, job_tenants);
  auto tenant_of = [&](const std::string& ns) {
    for (std::size_t i = 0; i < h.tenants.size(); ++i) {
      if (h.tenants[i].name == ns) return static_cast<int>(i);
    }
    return 0;
  };
  for (std::size_t i = 0; i < h.jobs.size(); ++i) {
    h.jobs[i].tenant = tenant_of(job_tenants[i]);
    auto& q = h.tenants[static_cast<std::size_t>(h.jobs[i].tenant)].nominal_gpus;
    q = std::max(q, static_cast<double>(h.jobs[i].gpus));
  }
  std::size_t di = 0;
  for (const auto& r : rows) {
    if (r.kind != "notebook" || r.start_s - t0 >= h.window_s) continue;
    for (int g = 0; g < r.gpus; ++g) h.dev[di++].tenant = tenant_of(r.ns);
  }
  std::sort(h.jobs.begin(), h.jobs.end(), [](const TrainingJob& a, const TrainingJob& b) {
    return std::tie(a.arrival_s, a.id) < std::tie(b.arrival_s, b.id);
  });
  std::sort(h.dev.begin(), h.dev.end(),
            [](const DevPod& a, const DevPod& b) { return std::tie(a.arrival_s, a.id) < std::tie(b.arrival_s, b.id); });

  h.notes.push_back(fmt::format(
      "your week: {} ({} batch jobs from jobs.csv, {} notebook sessions and {} serving deployments from {}; window "
      "{:.0f} h from the first submit; {} jobs that run on no fleet type dropped, {} rows after a week left out)",
      dir, h.jobs.size(), h.dev.size(), h.services.size(), has_services ? "as-run.csv and services.csv" : "as-run.csv",
      h.window_s / 3600.0, h.jobs_dropped, h.rows_after_window));
  h.notes.push_back(fmt::format(
      "your gangs: {} jobs of more than one pod (pods from as-run.csv's `pods` by job_id; without it one pod per 8 GPUs), "
      "{} of as-run.csv's counts changed so that every pod has the same GPUs, at most a node's; a gang runs all or "
      "nothing in one pool, in every stack; a gang wider than every pool of its GPU types is counted, never run",
      h.gangs, h.gangs_reshaped));
  h.notes.push_back("your training: PFLOP of a step = the job's GPUs x dense FP16 peak x MFU (0.35 above 500 TFLOPS, "
                    "else 0.40) of its fastest fleet type / its steps per second there; checkpoints every 600 s");
  h.notes.push_back(fmt::format("your notebooks: in use for busy_s ({} rows without it: in use all their run), then "
                                "idle until the row's end; no think time inside busy_s",
                                unknown_busy));
  std::vector<std::string> tenants;
  for (const auto& t : h.tenants) {
    tenants.push_back(fmt::format("{} ({}, {:.0f} GPUs)", t.name, tenancy::TierName(t.tier), t.nominal_gpus));
  }
  h.notes.push_back(fmt::format("your tenants, one per namespace: Gold when it runs services, Bronze when it runs only "
                                "notebooks, else Silver; quota = its peak GPUs held at once in the history: {}",
                                fmt::join(tenants, ", ")));
  return h;
}

Status ApplyUserHistory(const UserHistory& h, const std::vector<std::string>& serving_types, FleetWeekScenario* s) {
  const FleetWeekOptions& o = s->options;
  s->horizon_s = h.window_s;
  s->tenancy.tenants.clear();
  for (const auto& t : h.tenants) {
    tenancy::TenantConfig c;
    c.name = t.name;
    c.cohort = "fleet";
    c.tier = t.tier;
    c.quota.push_back({"gpu", std::max(1.0, t.nominal_gpus), std::nullopt, std::nullopt});
    s->tenancy.tenants.push_back(c);
  }
  s->tenancy.cycle_s = kStepS;
  s->jobs = h.jobs;
  s->dev = h.dev;
  s->serving.clear();
  std::vector<std::string> how;
  const auto steps = static_cast<std::size_t>(std::ceil(h.window_s / kStepS));
  for (std::size_t i = 0; i < h.services.size(); ++i) {
    const HistoryService& hs = h.services[i];
    ServingDeployment sd;
    sd.spec.name = hs.name;
    sd.spec.model = "llama-2-7b";
    sd.spec.trace = "conv";
    sd.spec.gpus = serving_types;
    sd.tenant = hs.tenant;
    const FleetWeekScenario* from = o.profiles_from;
    if (!s->serving.empty()) {
      sd.vllm = s->serving.front().vllm;
      sd.seedance = s->serving.front().seedance;
    } else if (from != nullptr && !from->serving.empty() && from->serving.front().spec.gpus == serving_types &&
               from->serving.front().spec.trace == "conv") {
      sd.vllm = from->serving.front().vllm;
      sd.seedance = from->serving.front().seedance;
    } else {
      if (o.progress != nullptr) {
        *o.progress << fmt::format("your week: serving profiles of llama-2-7b on {}, vllm and seedance (cached in {})\n",
                                   fmt::join(serving_types, ", "), o.cache_dir.empty() ? "no cache" : o.cache_dir);
      }
      SEEDANCE_RETURN_IF_ERROR(ProfileBothEngines(sd.spec, o.data_dir, o.cache_dir, o.progress, &sd.vllm, &sd.seedance));
    }
    sd.demand.step_s = kStepS;
    sd.demand.tokens_per_request = sd.vllm.tokens_per_request;
    sd.demand.week = 1;
    if (!hs.requests_per_s.empty()) {
      sd.demand.rps = hs.requests_per_s;
      how.push_back(hs.name + ": its requests_per_s");
    } else {
      const std::string& type = s->fleet.gpu_types[static_cast<std::size_t>(hs.type)];
      double per_replica = 0;
      for (std::size_t g = 0; g < sd.vllm.gpus.size(); ++g) {
        if (sd.vllm.gpus[g] == type) per_replica = sd.vllm.replica_rps[g];
      }
      if (per_replica <= 0) {
        return InvalidArgumentError(fmt::format(
            "{}: gpu_type {}: the fleet week measures llama-2-7b replicas on {} only, so the demand of {} cannot be "
            "read from its replicas; add requests_per_s to its rows", hs.origin, type,
            fmt::join(sd.vllm.gpus, ", "), hs.name));
      }
      sd.demand.rps.assign(steps, 0.0);
      for (std::size_t k = 0; k < steps && k < hs.replicas.size(); ++k) sd.demand.rps[k] = hs.replicas[k] * per_replica;
      how.push_back(fmt::format("{}: replicas x {:.2f} req/s (one vLLM replica on {} at the SLOs)", hs.name,
                                per_replica, type));
    }
    sd.demand.rps.resize(steps, 0.0);
    sd.spec.mean_rate_rps = sd.demand.Mean();
    sd.history = sd.demand;
    sd.tuning_demand = sd.demand;
    sd.tuning_history = sd.demand;
    sd.tuning_peak_rps = sd.demand.Peak();
    s->serving.push_back(std::move(sd));
  }
  std::string fleet_line = s->assumptions.front();
  if (const auto at = fleet_line.find("billed all week"); at != std::string::npos) {
    fleet_line.replace(at, std::string("billed all week").size(), "billed for the whole window");
  }
  s->assumptions = {fleet_line};
  s->assumptions.insert(s->assumptions.end(), h.notes.begin(), h.notes.end());
  s->assumptions.push_back(
      "your services: every deployment modelled as Llama-2-7B on the Azure conversation mix (TTFT 2 s, TPOT 120 ms); "
      "demand from " + (how.empty() ? std::string("(no services)") : fmt::format("{}", fmt::join(how, "; "))) +
      "; every stack's controllers are tuned on and read this week as the week before (a single exported week has "
      "no other): in-sample for both stacks");
  s->assumptions.push_back("clock: 60 s steps; the window is the history's, not a calendar week");
  return Status::Ok();
}

}  // namespace seedance::fleet
