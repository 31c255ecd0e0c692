#include "seedance/audit/audit.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "seedance/audit/gpu_catalog.h"
#include "seedance/gpu/catalog.h"

namespace seedance::audit {

std::string_view HealthCategoryName(HealthCategory c) {
  switch (c) {
    case HealthCategory::kXid:
      return "xid";
    case HealthCategory::kEcc:
      return "ecc";
    case HealthCategory::kThermal:
      return "thermal";
    case HealthCategory::kPower:
      return "power";
    case HealthCategory::kPcieReplay:
      return "pcie_replay";
  }
  return "?";
}

std::string_view HealthResultName(HealthResult r) {
  switch (r) {
    case HealthResult::kPass:
      return "PASS";
    case HealthResult::kWarn:
      return "WARN";
    case HealthResult::kFail:
      return "FAIL";
  }
  return "?";
}

std::string_view FieldMetricName(Field f) {
  static constexpr std::array<std::string_view, kFieldCount> kNames = {
      "DCGM_FI_DEV_POWER_USAGE",        "DCGM_FI_DEV_GPU_UTIL",
      "DCGM_FI_DEV_GPU_TEMP",           "DCGM_FI_DEV_XID_ERRORS",
      "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
      "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",  "DCGM_FI_PROF_SM_ACTIVE",
      "DCGM_FI_PROF_PIPE_INT_ACTIVE",   "DCGM_FI_PROF_DRAM_ACTIVE",
      "DCGM_FI_DEV_FB_USED",            "DCGM_FI_DEV_FB_FREE"};
  return kNames[static_cast<std::size_t>(f)];
}

const std::vector<Field>& RequiredFields() {
  static const std::vector<Field> kRequired = {Field::kPowerW,       Field::kGpuUtilPct,
                                               Field::kTempC,        Field::kXid,
                                               Field::kPcieReplay,   Field::kTensorActive,
                                               Field::kEccUncorrectable};
  return kRequired;
}

Status AuditConfig::Validate() const {
  SEEDANCE_RETURN_IF_ERROR(grades.Validate());
  SEEDANCE_RETURN_IF_ERROR(admission.Validate());
  if (!(window_hours > 0)) return InvalidArgumentError("window_hours: must be > 0");
  if (!(power_residual_hours > 0 && power_residual_hours <= window_hours)) {
    return InvalidArgumentError("power_residual_hours: must be in (0, window_hours]");
  }
  if (!(min_evidence_hours >= 0)) return InvalidArgumentError("min_evidence_hours: must be >= 0");
  if (admission.pending_evidence_hours > window_hours) {
    return InvalidArgumentError(
        "admission.pending_evidence_hours: must be <= window_hours (the audit reads no more)");
  }
  if (max_clock_skew_s < 0) return InvalidArgumentError("max_clock_skew_s: must be >= 0");
  if (!(diagnostics_window_hours > 0)) {
    return InvalidArgumentError("diagnostics_window_hours: must be > 0");
  }
  const HealthThresholds& h = health;
  if (!(h.thermal_warn_c <= h.thermal_fail_c)) {
    return InvalidArgumentError("health.thermal_warn_c: must be <= health.thermal_fail_c");
  }
  if (!(h.power_warn_pct > 0 && h.power_warn_pct <= h.power_fail_pct)) {
    return InvalidArgumentError("health.power_warn_pct: must be in (0, health.power_fail_pct]");
  }
  if (!(h.pcie_warn_per_min >= 0 && h.pcie_warn_per_min <= h.pcie_fail_per_min)) {
    return InvalidArgumentError("health.pcie_warn_per_min: must be in [0, pcie_fail_per_min]");
  }
  if (!(h.healthy_deviation_pct >= 0)) {
    return InvalidArgumentError("health.healthy_deviation_pct: must be >= 0");
  }
  return Status::Ok();
}

const std::vector<std::string_view>& RawMetricNames() {
  static const std::vector<std::string_view> kNames = {
      "energy_ratio_kw_per_tops", "scheduling_deviation_pct", "idle_decay_index",
      "mean_power_w",             "mean_gpu_util_pct",        "mean_tensor_active",
      "max_gpu_temp_c",           "xid_events",               "ecc_uncorrectable_delta",
      "pcie_replays_per_min",     "power_residual_pct",       "memory_use_ratio"};
  return kNames;
}

std::vector<std::pair<std::string_view, std::optional<double>>> RawMetrics::List() const {
  const std::array<std::optional<double>, 12> v = {
      energy_ratio_kw_per_tops, scheduling_deviation_pct, idle_decay_index, mean_power_w,
      mean_gpu_util_pct,        mean_tensor_active,       max_gpu_temp_c,   xid_events,
      ecc_uncorrectable_delta,  pcie_replays_per_min,     power_residual_pct, memory_use_ratio};
  std::vector<std::pair<std::string_view, std::optional<double>>> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out.emplace_back(RawMetricNames()[i], v[i]);
  return out;
}

AuditVerdict NodeAudit::Verdict() const {
  AuditVerdict v;
  v.outcome = outcome;
  v.evidence_hours = evidence_hours;
  v.evidence = issues;
  v.evidence.insert(v.evidence.end(), failures.begin(), failures.end());
  return v;
}

std::string FormatUtc(std::int64_t unix_s) {
  const auto t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

namespace {

constexpr double kMinActivity = 1e-6;  // floor on the activity so the energy ratio stays finite

// Running increase of a counter, treating a decrease as a reset.
struct CounterDelta {
  double prev = std::numeric_limits<double>::quiet_NaN();
  double delta = 0;
  void Add(double v) {
    if (std::isnan(v)) return;
    if (!std::isnan(prev)) delta += v >= prev ? v - prev : v;
    prev = v;
  }
};

double Nan() { return std::numeric_limits<double>::quiet_NaN(); }

double At(const std::vector<float>& col, std::size_t i) {
  return col.empty() ? Nan() : static_cast<double>(col[i]);
}

// One pass over a GPU's window. Appends evidence problems to `issues`.
GpuAudit AuditGpu(const GpuSeries& g, const AuditConfig& cfg, std::int64_t now_s,
                  std::vector<std::string>& issues) {
  GpuAudit a;
  a.uuid = g.uuid;
  a.model_name = g.model_name;
  const std::string who = "GPU " + (g.uuid.empty() ? std::string("?") : g.uuid);
  bool ok = true;
  auto model = gpu::ParseGpuName(g.model_name, gpu::NameMatch::kProduct);
  std::optional<GpuAuditSpec> spec;
  if (!model.has_value()) {
    issues.push_back(who + ": field 'modelName': " + model.error().message());
    ok = false;
  } else {
    a.model = *model;
    auto s = FindGpuAuditSpec(*model);
    if (!s.has_value()) {
      issues.push_back(who + ": field 'modelName': " + s.error().message());
      ok = false;
    } else {
      spec = *s;
      a.dense_tops = s->dense_tops;
    }
  }
  for (std::size_t f = 0; f < kFieldCount; ++f) {
    if (!g.columns[f].empty() && g.columns[f].size() != g.t_s.size()) {
      issues.push_back(fmt::format("{}: field '{}': {} values for {} sample times", who,
                                   FieldMetricName(static_cast<Field>(f)), g.columns[f].size(),
                                   g.t_s.size()));
      return a;
    }
  }
  for (Field f : RequiredFields()) {
    if (!g.has(f)) {
      issues.push_back(fmt::format("{}: field '{}' is missing", who, FieldMetricName(f)));
      ok = false;
    }
  }
  const std::int64_t window_s = static_cast<std::int64_t>(cfg.window_hours * 3600);
  const std::int64_t recent_from =
      now_s - static_cast<std::int64_t>(cfg.power_residual_hours * 3600);
  if (!g.t_s.empty() && g.t_s.back() > now_s + cfg.max_clock_skew_s) {
    issues.push_back(fmt::format("{}: field 'timestamp': clock skew: sample at {} is {} s after "
                                 "the audit time {}",
                                 who, FormatUtc(g.t_s.back()), g.t_s.back() - now_s,
                                 FormatUtc(now_s)));
    ok = false;
  }
  const auto b = static_cast<std::size_t>(
      std::lower_bound(g.t_s.begin(), g.t_s.end(), now_s - window_s) - g.t_s.begin());
  const auto e = static_cast<std::size_t>(
      std::upper_bound(g.t_s.begin(), g.t_s.end(), now_s) - g.t_s.begin());
  const bool tensor_cores = !(spec.has_value() && !gpu::GpuAt(a.model).tensor_cores);
  double sum_p = 0, sum_u = 0, sum_act = 0, max_t = -1e300, max_used = 0, mem_total = 0;
  std::int64_t n_p = 0, n_u = 0, n_act = 0, n_t = 0;
  CounterDelta pcie, ecc;
  double prev_xid = 0;
  const auto& power = g.col(Field::kPowerW);
  const auto& util = g.col(Field::kGpuUtilPct);
  const auto& temp = g.col(Field::kTempC);
  const auto& xid = g.col(Field::kXid);
  const auto& tensor = g.col(Field::kTensorActive);
  const auto& sm = g.col(Field::kSmActive);
  const auto& intr = g.col(Field::kIntActive);
  const auto& dram = g.col(Field::kDramActive);
  const auto& used = g.col(Field::kFbUsedMib);
  const auto& freec = g.col(Field::kFbFreeMib);
  const auto& pcie_c = g.col(Field::kPcieReplay);
  const auto& ecc_c = g.col(Field::kEccUncorrectable);
  for (std::size_t i = b; i < e; ++i) {
    if (i > b && g.t_s[i] <= g.t_s[i - 1]) {
      issues.push_back(fmt::format("{}: field 'timestamp': clock skew: sample at {} does not "
                                   "follow the previous one at {}",
                                   who, FormatUtc(g.t_s[i]), FormatUtc(g.t_s[i - 1])));
      ok = false;
      break;
    }
    const double p = At(power, i), u = At(util, i);
    if (!std::isnan(p)) {
      sum_p += p;
      ++n_p;
    }
    if (!std::isnan(u)) {
      sum_u += u;
      ++n_u;
    }
    const double act = tensor_cores ? At(tensor, i) : u / 100.0;
    if (!std::isnan(act)) {
      sum_act += act;
      ++n_act;
    }
    if (const double t = At(temp, i); !std::isnan(t)) {
      max_t = std::max(max_t, t);
      ++n_t;
    }
    if (const double x = At(xid, i); !std::isnan(x)) {
      if (x != 0 && x != prev_xid) a.xid_codes.push_back(static_cast<int>(x));
      prev_xid = x;
    }
    pcie.Add(At(pcie_c, i));
    ecc.Add(At(ecc_c, i));
    const double fs = sm.empty() ? u / 100.0 : At(sm, i);
    const double fi = intr.empty() ? 0.0 : At(intr, i);
    const double fd = dram.empty() ? 0.0 : At(dram, i);
    if (!std::isnan(p) && !std::isnan(fs) && !std::isnan(fi) && !std::isnan(fd)) {
      a.power_acc.Add(fs, fi, fd, p);
      if (g.t_s[i] >= recent_from) {
        a.recent_sums[0] += fs;
        a.recent_sums[1] += fi;
        a.recent_sums[2] += fd;
        a.recent_sums[3] += p;
        ++a.recent_n;
      }
    }
    if (const double fu = At(used, i); !std::isnan(fu)) {
      max_used = std::max(max_used, fu);
      if (const double ff = At(freec, i); !std::isnan(ff)) mem_total = std::max(mem_total, fu + ff);
    }
  }
  const double span_h = e > b ? static_cast<double>(g.t_s[e - 1] - g.t_s[b]) / 3600.0 : 0.0;
  for (Field f : RequiredFields()) {
    if (!g.has(f)) continue;
    const auto& c = g.col(f);
    bool any = false;
    for (std::size_t i = b; i < e && !any; ++i) any = !std::isnan(c[i]);
    if (!any) {
      issues.push_back(fmt::format("{}: field '{}': no samples in the audit window", who,
                                   FieldMetricName(f)));
      ok = false;
    }
  }
  a.has_power = n_p > 0;
  a.mean_power_w = n_p > 0 ? sum_p / static_cast<double>(n_p) : 0;
  a.mean_util_pct = n_u > 0 ? sum_u / static_cast<double>(n_u) : 0;
  a.idle_index = 1.0 - a.mean_util_pct / 100.0;
  a.mean_activity = n_act > 0 ? sum_act / static_cast<double>(n_act) : 0;
  a.max_temp_c = n_t > 0 ? max_t : 0;
  a.ecc_delta = ecc.delta;
  const double minutes = std::max(span_h * 60.0, 1.0);
  a.pcie_per_min = pcie.delta / minutes;
  const double reserved = g.memory_reserved_mib > 0 ? g.memory_reserved_mib : mem_total;
  if (reserved > 0 && !used.empty()) a.memory_use_ratio = max_used / reserved;
  a.complete = ok;
  return a;
}

CategoryVerdict Worse(CategoryVerdict a, CategoryVerdict b) {
  return static_cast<int>(b.result) > static_cast<int>(a.result) ? b : a;
}

void JudgeGpu(const GpuAudit& g, const AuditConfig& cfg, NodeAudit& node) {
  const HealthThresholds& h = cfg.health;
  auto set = [&](HealthCategory c, HealthResult r, std::string ev) {
    auto& slot = node.health[static_cast<std::size_t>(c)];
    slot = Worse(slot, CategoryVerdict{r, g.uuid + ": " + std::move(ev)});
  };
  for (int code : g.xid_codes) {
    const bool fatal =
        std::find(h.xid_fail_codes.begin(), h.xid_fail_codes.end(), code) != h.xid_fail_codes.end();
    set(HealthCategory::kXid, fatal ? HealthResult::kFail : HealthResult::kWarn,
        fmt::format("XID {}", code));
  }
  if (g.ecc_delta > 0) {
    set(HealthCategory::kEcc, HealthResult::kFail,
        fmt::format("{:g} new uncorrectable ECC errors", g.ecc_delta));
  }
  if (g.max_temp_c >= h.thermal_fail_c) {
    set(HealthCategory::kThermal, HealthResult::kFail, fmt::format("max {:.1f} C", g.max_temp_c));
  } else if (g.max_temp_c >= h.thermal_warn_c) {
    set(HealthCategory::kThermal, HealthResult::kWarn, fmt::format("max {:.1f} C", g.max_temp_c));
  }
  if (g.pcie_per_min >= h.pcie_fail_per_min) {
    set(HealthCategory::kPcieReplay, HealthResult::kFail,
        fmt::format("{:.2f} replays/min", g.pcie_per_min));
  } else if (g.pcie_per_min >= h.pcie_warn_per_min) {
    set(HealthCategory::kPcieReplay, HealthResult::kWarn,
        fmt::format("{:.2f} replays/min", g.pcie_per_min));
  }
  if (auto spec = FindGpuAuditSpec(g.model); spec.has_value()) {
    if (g.mean_power_w > spec->tdp_w * (1 + h.power_over_tdp_pct / 100)) {
      set(HealthCategory::kPower, HealthResult::kFail,
          fmt::format("mean {:.0f} W above the {:.0f} W limit", g.mean_power_w, spec->tdp_w));
    }
  }
  if (g.power_residual_pct.has_value()) {
    const double r = std::abs(*g.power_residual_pct);
    if (r >= h.power_fail_pct) {
      set(HealthCategory::kPower, HealthResult::kFail,
          fmt::format("power {:+.1f}% off the model fit", *g.power_residual_pct));
    } else if (r >= h.power_warn_pct) {
      set(HealthCategory::kPower, HealthResult::kWarn,
          fmt::format("power {:+.1f}% off the model fit", *g.power_residual_pct));
    }
  }
}

std::optional<double> ResidualPct(const GpuAudit& g, const PowerFit& fit) {
  if (g.recent_n == 0) return std::nullopt;
  const double n = static_cast<double>(g.recent_n);
  const double predicted =
      fit.Predict(g.recent_sums[0] / n, g.recent_sums[1] / n, g.recent_sums[2] / n);
  if (!(predicted > 1)) return std::nullopt;
  return (g.recent_sums[3] / n - predicted) / predicted * 100.0;
}

// Fits one model per GPU model over complete GPUs; flags GPUs off by power_fail_pct, refits
// without them and sets every GPU's residual.
std::vector<ModelPowerFit> FitPowerModels(std::vector<NodeAudit>& nodes, const AuditConfig& cfg) {
  std::vector<cluster::GpuModelIndex> models;
  for (const auto& n : nodes) {
    for (const auto& g : n.gpus) {
      if (g.complete && std::find(models.begin(), models.end(), g.model) == models.end()) {
        models.push_back(g.model);
      }
    }
  }
  std::sort(models.begin(), models.end());
  std::vector<ModelPowerFit> out;
  for (cluster::GpuModelIndex m : models) {
    ModelPowerFit mf;
    mf.model = m;
    PowerAccumulator acc;
    std::vector<GpuAudit*> members;
    for (auto& n : nodes) {
      for (auto& g : n.gpus) {
        if (g.complete && g.model == m) {
          acc.Merge(g.power_acc);
          members.push_back(&g);
        }
      }
    }
    mf.gpus = static_cast<int>(members.size());
    auto fit = FitPower(acc);
    if (!fit.has_value()) {
      mf.note = fit.error().message();
      out.push_back(mf);
      continue;
    }
    PowerAccumulator clean = acc;
    for (GpuAudit* g : members) {
      auto r = ResidualPct(*g, *fit);
      if (r.has_value() && std::abs(*r) >= cfg.health.power_fail_pct) {
        clean.Subtract(g->power_acc);
        ++mf.flagged;
      }
    }
    if (mf.flagged > 0 && mf.flagged < mf.gpus) {
      if (auto refit = FitPower(clean); refit.has_value()) fit = refit;
    }
    for (GpuAudit* g : members) g->power_residual_pct = ResidualPct(*g, *fit);
    mf.fit = *fit;
    out.push_back(mf);
  }
  return out;
}

std::optional<double> DeviationPct(const std::vector<ScheduleRecord>& records) {
  double dev = 0, planned = 0;
  for (const ScheduleRecord& r : records) {
    dev += std::abs(r.actual_start_s - r.planned_start_s) +
           std::abs(r.actual_runtime_s - r.planned_runtime_s);
    planned += r.planned_runtime_s;
  }
  if (!(planned > 0)) return std::nullopt;
  return dev / planned * 100.0;
}

Diagnostics Diagnose(const NodeTelemetry& t, const AuditConfig& cfg, std::int64_t now_s) {
  Diagnostics d;
  if (t.gpus.empty()) return d;
  const GpuSeries& g0 = t.gpus.front();
  const auto& u0 = g0.col(Field::kGpuUtilPct);
  if (u0.empty()) return d;
  const auto from = now_s - static_cast<std::int64_t>(cfg.diagnostics_window_hours * 3600);
  std::vector<double> gpu, cpu, all_gpu;
  std::size_t c = 0;
  for (std::size_t i = 0; i < g0.t_s.size(); ++i) {
    if (g0.t_s[i] < from || g0.t_s[i] > now_s) continue;
    double sum = 0;
    int k = 0;
    for (const GpuSeries& g : t.gpus) {  // GPUs of one exporter share scrape times
      const auto& u = g.col(Field::kGpuUtilPct);
      if (i < g.t_s.size() && g.t_s[i] == g0.t_s[i] && !u.empty() && !std::isnan(u[i])) {
        sum += u[i];
        ++k;
      }
    }
    if (k == 0) continue;
    const double mean = sum / k;
    all_gpu.push_back(mean);
    while (c < t.cpu_t_s.size() && t.cpu_t_s[c] < g0.t_s[i] - 30) ++c;
    if (c < t.cpu_t_s.size() && std::abs(t.cpu_t_s[c] - g0.t_s[i]) <= 30 &&
        !std::isnan(t.cpu_util_pct[c])) {
      gpu.push_back(mean);
      cpu.push_back(t.cpu_util_pct[c]);
    }
  }
  auto mean_sd = [](const std::vector<double>& v) {
    double m = 0, s = 0;
    for (double x : v) m += x;
    m /= static_cast<double>(v.size());
    for (double x : v) s += (x - m) * (x - m);
    return std::pair{m, std::sqrt(s / static_cast<double>(v.size()))};
  };
  if (all_gpu.size() >= 2) {
    auto [m, sd] = mean_sd(all_gpu);
    if (m > 0) d.gpu_duty_cv = sd / m;
  }
  if (gpu.size() >= 3) {
    auto [mg, sg] = mean_sd(gpu);
    auto [mc, sc] = mean_sd(cpu);
    if (sg > 0 && sc > 0) {
      double cov = 0;
      for (std::size_t i = 0; i < gpu.size(); ++i) cov += (gpu[i] - mg) * (cpu[i] - mc);
      d.cpu_gpu_correlation = cov / static_cast<double>(gpu.size()) / (sg * sc);
    }
  }
  if (d.gpu_duty_cv.has_value() && *d.gpu_duty_cv > 0.5 && d.cpu_gpu_correlation.has_value() &&
      *d.cpu_gpu_correlation < 0.3) {
    d.findings.push_back(fmt::format(
        "pulse workload: GPU duty cycle varies (cv {:.2f}) but CPU use does not follow it "
        "(r = {:.2f}); scale this workload on GPU metrics, not CPU",
        *d.gpu_duty_cv, *d.cpu_gpu_correlation));
  }
  return d;
}

}  // namespace

Result<FleetAudit> AuditFleet(const std::vector<NodeTelemetry>& fleet, const AuditConfig& cfg,
                              std::int64_t now_s) {
  SEEDANCE_RETURN_IF_ERROR(cfg.Validate());
  FleetAudit out;
  out.now_s = now_s;
  std::vector<std::size_t> order(fleet.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return fleet[a].host < fleet[b].host; });
  for (std::size_t k = 1; k < order.size(); ++k) {
    if (fleet[order[k]].host == fleet[order[k - 1]].host) {
      return InvalidArgumentError("node '" + fleet[order[k]].host + "' is listed twice");
    }
  }
  out.nodes.reserve(fleet.size());
  for (std::size_t idx : order) {
    const NodeTelemetry& t = fleet[idx];
    NodeAudit n;
    n.host = t.host;
    n.window_end_s = now_s;
    n.window_start_s = now_s - static_cast<std::int64_t>(cfg.window_hours * 3600);
    if (t.gpus.empty()) n.issues.push_back("node reports no GPUs");
    std::int64_t first = std::numeric_limits<std::int64_t>::max(), last_min = first;
    std::int64_t last_max = std::numeric_limits<std::int64_t>::min();
    for (const GpuSeries& g : t.gpus) {
      n.gpus.push_back(AuditGpu(g, cfg, now_s, n.issues));
      if (n.driver.empty()) n.driver = g.driver;
      auto b = std::lower_bound(g.t_s.begin(), g.t_s.end(), n.window_start_s);
      auto e = std::upper_bound(g.t_s.begin(), g.t_s.end(), now_s);
      if (b != e) {
        first = std::min(first, *b);
        last_min = std::min(last_min, *(e - 1));
        last_max = std::max(last_max, *(e - 1));
      } else {
        last_min = std::numeric_limits<std::int64_t>::min();
      }
    }
    if (last_max >= first && last_min != std::numeric_limits<std::int64_t>::min()) {
      n.evidence_hours = static_cast<double>(last_min - first) / 3600.0;
      if (last_max - last_min > cfg.max_clock_skew_s) {
        n.issues.push_back(fmt::format(
            "field 'timestamp': clock skew: the GPUs' latest samples differ by {} s (> {} s)",
            last_max - last_min, cfg.max_clock_skew_s));
      }
    }
    if (n.evidence_hours < cfg.min_evidence_hours) {
      n.issues.push_back(fmt::format("field 'timestamp': {:.2f} h of telemetry in the window, "
                                     "{:.2f} h needed",
                                     n.evidence_hours, cfg.min_evidence_hours));
    }
    n.metrics.scheduling_deviation_pct = DeviationPct(t.schedule);
    if (cfg.require_scheduling_deviation && !n.metrics.scheduling_deviation_pct.has_value()) {
      n.issues.push_back("field 'schedule': no planned-versus-actual records for this node");
    }
    n.diagnostics = Diagnose(t, cfg, now_s);
    out.nodes.push_back(std::move(n));
  }
  out.power_models = FitPowerModels(out.nodes, cfg);
  for (NodeAudit& n : out.nodes) {
    double kw = 0, tops = 0, idle = 0, power = 0, util = 0, act = 0, max_t = 0, xid = 0, ecc = 0,
           pcie = 0, mem = 0;
    int mem_n = 0;
    std::optional<double> worst_resid;
    bool all_power = true;
    for (const GpuAudit& g : n.gpus) {
      all_power &= g.has_power;
      kw += g.mean_power_w / 1000.0;
      tops += g.dense_tops * std::max(g.mean_activity, kMinActivity);
      idle += g.idle_index;
      power += g.mean_power_w;
      util += g.mean_util_pct;
      act += g.mean_activity;
      max_t = std::max(max_t, g.max_temp_c);
      xid += static_cast<double>(g.xid_codes.size());
      ecc += g.ecc_delta;
      pcie = std::max(pcie, g.pcie_per_min);
      if (g.memory_use_ratio.has_value()) {
        mem += *g.memory_use_ratio;
        ++mem_n;
      }
      if (g.power_residual_pct.has_value() &&
          (!worst_resid.has_value() || std::abs(*g.power_residual_pct) > std::abs(*worst_resid))) {
        worst_resid = g.power_residual_pct;
      }
      JudgeGpu(g, cfg, n);
    }
    const auto gpus = static_cast<double>(n.gpus.size());
    const bool complete = n.issues.empty();
    if (!n.gpus.empty()) {
      if (tops > 0 && all_power) n.metrics.energy_ratio_kw_per_tops = kw / tops;
      n.metrics.idle_decay_index = idle / gpus;
      n.metrics.mean_power_w = power / gpus;
      n.metrics.mean_gpu_util_pct = util / gpus;
      n.metrics.mean_tensor_active = act / gpus;
      n.metrics.max_gpu_temp_c = max_t;
      n.metrics.xid_events = xid;
      n.metrics.ecc_uncorrectable_delta = ecc;
      n.metrics.pcie_replays_per_min = pcie;
      n.metrics.power_residual_pct = worst_resid;
      if (mem_n > 0) n.metrics.memory_use_ratio = mem / mem_n;
      if (n.metrics.memory_use_ratio.has_value() && *n.metrics.memory_use_ratio < 0.5) {
        n.diagnostics.findings.push_back(fmt::format(
            "GPU memory over-reserved: peak use is {:.0f}% of what is reserved",
            *n.metrics.memory_use_ratio * 100));
      }
    }
    const auto& dev = n.metrics.scheduling_deviation_pct;
    const GradeDecision grade = cfg.grades.Decide(n.metrics.energy_ratio_kw_per_tops, dev);
    n.grade_missing.assign(grade.missing.begin(), grade.missing.end());
    // No power samples means incomplete evidence (the field is required), so a node is never
    // graded without its energy ratio; a missing deviation caps the grade (GradeTable).
    if (!complete || !n.metrics.energy_ratio_kw_per_tops.has_value()) {
      n.outcome = AuditOutcome::kIncomplete;
      continue;
    }
    n.grade = grade.row->name;
    n.weight = grade.row->weight;
    n.grade_capped = grade.capped;
    for (std::size_t c = 0; c < kHealthCategoryCount; ++c) {
      if (n.health[c].result == HealthResult::kFail) {
        n.failures.push_back(fmt::format("{} FAIL: {}",
                                         HealthCategoryName(static_cast<HealthCategory>(c)),
                                         n.health[c].evidence));
      }
    }
    if (dev.has_value() && *dev > cfg.health.healthy_deviation_pct) {
      n.failures.push_back(fmt::format("scheduling deviation {:.2f}% > {:.2f}% healthy", *dev,
                                       cfg.health.healthy_deviation_pct));
    }
    n.outcome = n.failures.empty() ? AuditOutcome::kPass : AuditOutcome::kFail;
  }
  return out;
}

}  // namespace seedance::audit
