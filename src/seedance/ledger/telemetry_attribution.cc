#include "seedance/ledger/telemetry_attribution.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "seedance/ledger/internal/sqlite.h"
#include "seedance/ledger/job_telemetry.h"
#include "seedance/ledger/step_allocator.h"
#include "seedance/telemetry/sample.h"

namespace seedance::ledger {

using internal::Stmt;
using telemetry::Field;

namespace {

constexpr std::int64_t kHourMs = 3'600'000;
constexpr std::int64_t kWindowMs = 6 * kHourMs;  // samples are read a window at a time

struct SeriesInfo {
  std::int64_t id = 0;
  Field field = Field::kOther;
  double scale = 1;
  std::int32_t gpu = -1;  // index into gpus
  std::string pod, namespace_name, pid, job;
};

struct GpuInfo {
  std::string uuid;
  std::string model;
  std::uint32_t node = 0;
  std::int64_t price = -1;
};

// Accumulated readings of one GPU in one step.
struct StepAgg {
  double usage_sum = 0;  // GR_ENGINE_ACTIVE (ratio)
  int usage_n = 0;
  double util_sum = 0;   // GPU_UTIL scaled to ratio, the fallback
  int util_n = 0;
  double fb_peak = -1;
  double dram_sum = 0;
  int dram_n = 0;
  double tensor_sum = 0;
  int tensor_n = 0;
  double power_sum = 0;
  int power_n = 0;
  double io_sum = 0;
  std::map<std::pair<std::string, std::string>, int> pods;  // (pod, namespace) -> samples
  std::map<std::string, int> pids;                          // pid -> samples (no pod)
  std::string job;                                          // hpc_job label, if any

  double Usage() const {
    if (usage_n > 0) return usage_sum / usage_n;
    if (util_n > 0) return util_sum / util_n;
    return 0.0;
  }
};

bool FieldWanted(Field f) {
  switch (f) {
    case Field::kGrEngineActive:
    case Field::kGpuUtil:
    case Field::kFbUsed:
    case Field::kDramActive:
    case Field::kTensorActive:
    case Field::kPower:
    case Field::kPcieTxBytes:
    case Field::kPcieRxBytes:
    case Field::kNvlinkBandwidth:
      return true;
    default:
      return false;
  }
}

Field FieldFromName(const std::string& name) {
  for (int i = 0; i < static_cast<int>(Field::kCount); ++i) {
    auto f = static_cast<Field>(i);
    if (telemetry::FieldName(f) == name) return f;
  }
  return Field::kOther;
}

void AddReading(StepAgg& a, const SeriesInfo& s, double v) {
  v *= s.scale;
  switch (s.field) {
    case Field::kGrEngineActive: a.usage_sum += v; ++a.usage_n; break;
    case Field::kGpuUtil: a.util_sum += v; ++a.util_n; break;
    case Field::kFbUsed: a.fb_peak = std::max(a.fb_peak, v); break;
    case Field::kDramActive: a.dram_sum += v; ++a.dram_n; break;
    case Field::kTensorActive: a.tensor_sum += v; ++a.tensor_n; break;
    case Field::kPower: a.power_sum += v; ++a.power_n; break;
    default: a.io_sum += v; break;  // PCIe / NVLink bytes
  }
  if (!s.pod.empty()) {
    ++a.pods[{s.pod, s.namespace_name}];
  } else if (!s.pid.empty()) {
    ++a.pids[s.pid];
  }
  if (!s.job.empty()) a.job = s.job;
}

// The events of one GPU, sorted by start.
using EventIndex = std::unordered_map<std::string, std::vector<const ProcessEvent*>>;

const ProcessEvent* FindEvent(const EventIndex& index, const std::string& uuid,
                              std::int64_t start, std::int64_t end, std::int64_t tol,
                              const std::string& pod, const std::string& pid) {
  auto it = index.find(uuid);
  if (it == index.end()) return nullptr;
  for (const ProcessEvent* e : it->second) {
    // The event, widened by the tolerance on both sides, must cover the step's midpoint.
    std::int64_t mid = start + (end - start) / 2;
    if (e->start_ms - tol > mid || e->end_ms + tol <= mid) continue;
    if (!pod.empty() && e->pod != pod) continue;
    if (!pid.empty() && e->pid != pid) continue;
    return e;
  }
  return nullptr;
}

}  // namespace

Result<std::pair<std::int64_t, std::int64_t>> SampleRange(Ledger& ledger) {
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(
      st.Prepare(ledger.db(), "SELECT MIN(ts_ms), MAX(ts_ms) FROM samples"));
  SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row || st.IsNull(0)) return std::pair<std::int64_t, std::int64_t>{0, 0};
  return std::pair<std::int64_t, std::int64_t>{st.Int(0), st.Int(1) + 1};
}

Result<std::int64_t> GpuSampleIntervalMs(Ledger& ledger) {
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      ledger.db(),
      "SELECT MIN(d) FROM (SELECT ts_ms - LAG(ts_ms) OVER (PARTITION BY series_id ORDER BY ts_ms) AS d "
      "FROM samples WHERE series_id IN (SELECT id FROM series WHERE gpu_uuid <> '' OR gpu <> '' LIMIT 32)) "
      "WHERE d > 0"));
  SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row || st.IsNull(0)) return std::int64_t{0};
  return st.Int(0);
}

Result<std::pair<std::int64_t, std::int64_t>> NonTelemetryChargeRange(Ledger& ledger) {
  SEEDANCE_RETURN_IF_ERROR(ledger.Flush());
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      ledger.db(), "SELECT MIN(start_ms), MAX(end_ms) FROM bills WHERE source<>'telemetry'"));
  static_assert(kTelemetrySource == "telemetry");
  SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row || st.IsNull(0)) return std::pair<std::int64_t, std::int64_t>{0, 0};
  return std::pair<std::int64_t, std::int64_t>{st.Int(0), st.Int(1)};
}

Result<TelemetryAttribution> AttributeTelemetry(Ledger& ledger, const LedgerConfig& config,
                                                const cost::PriceTable* catalog,
                                                std::int64_t from_ms, std::int64_t to_ms) {
  if (from_ms >= to_ms) return InvalidArgumentError("empty time range");
  SEEDANCE_RETURN_IF_ERROR(ledger.Flush());
  const std::int64_t step = config.step_ms;
  from_ms = from_ms / step * step;  // align to steps
  GpuPricer pricer(config, catalog);
  TelemetryAttribution out;

  // Series of interest, their GPUs and nodes.
  std::vector<SeriesInfo> series;
  std::vector<GpuInfo> gpus;
  std::vector<std::string> nodes;
  {
    std::map<std::pair<std::string, std::string>, std::int32_t> gpu_index;  // (host, uuid)
    std::map<std::string, std::uint32_t> node_index;
    Stmt st;
    SEEDANCE_RETURN_IF_ERROR(st.Prepare(
        ledger.db(), "SELECT id, metric, field, gpu_uuid, model, hostname, pod, namespace, pid, "
                     "job FROM series WHERE gpu_uuid<>'' ORDER BY id"));
    while (true) {
      SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      Field f = FieldFromName(st.Text(2));
      if (!FieldWanted(f)) continue;
      SeriesInfo s;
      s.id = st.Int(0);
      s.field = f;
      s.scale = telemetry::LookupField(st.Text(1)).scale;
      std::string host = st.Text(5);
      if (host.empty()) host = "unknown-node";
      std::string uuid = st.Text(3);
      auto [nit, new_node] = node_index.try_emplace(host, static_cast<std::uint32_t>(nodes.size()));
      if (new_node) nodes.push_back(host);
      auto [git, new_gpu] =
          gpu_index.try_emplace({host, uuid}, static_cast<std::int32_t>(gpus.size()));
      if (new_gpu) gpus.push_back({uuid, st.Text(4), nit->second, -1});
      GpuInfo& g = gpus[static_cast<std::size_t>(git->second)];
      if (g.model.empty()) g.model = st.Text(4);
      s.gpu = git->second;
      s.pod = st.Text(6);
      s.namespace_name = st.Text(7);
      s.pid = st.Text(8);
      s.job = st.Text(9);
      series.push_back(std::move(s));
    }
  }
  // Models without a price, named only when one of their GPU steps falls in the range.
  std::set<std::string> unpriced;
  for (GpuInfo& g : gpus) {
    const auto node_price = config.node_prices.find(nodes[g.node]);
    g.price = node_price != config.node_prices.end() ? node_price->second.raw() : pricer.MicroUsdPerHour(g.model);
  }

  SEEDANCE_ASSIGN_OR_RETURN(std::vector<ProcessEvent> events, ledger.Events(from_ms, to_ms));
  // Scheduler jobs (Slurm) hold GPUs by node and device index: their holds join like pod events.
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<ProcessEvent> job_events, JobAllocationEvents(ledger, from_ms, to_ms));
  events.insert(events.end(), std::make_move_iterator(job_events.begin()), std::make_move_iterator(job_events.end()));
  EventIndex event_index;
  for (const ProcessEvent& e : events) event_index[e.gpu_uuid].push_back(&e);
  std::set<const ProcessEvent*> used_events;

  // Workloads (dense ids from 1) and their dimensions.
  std::map<std::tuple<std::string, std::string, std::string>, std::uint32_t> workload_ids;
  std::vector<WorkloadDims> workloads(1);
  std::vector<std::int64_t> weights(1, 1000);
  std::vector<bool> overhead_ns(1, false);
  auto workload_id = [&](const std::string& pod, const std::string& ns, const std::string& job) {
    auto [it, inserted] = workload_ids.try_emplace({pod, ns, job},
                                                   static_cast<std::uint32_t>(workloads.size()));
    if (inserted) {
      workloads.push_back(config.Classify(pod, ns, job));
      weights.push_back(config.TenantWeightMilli(workloads.back().tenant));
      overhead_ns.push_back(config.IsOverheadNamespace(ns));
    }
    return it->second;
  };

  ledger.set_source(std::string(kTelemetrySource));
  SEEDANCE_RETURN_IF_ERROR(ledger.DeleteCharges(from_ms, to_ms));
  StepAllocator allocator(step, config.idle_share,
                          static_cast<std::int64_t>(config.overhead_fraction * 1e6), {});
  internal::SeriesSamples read;
  SEEDANCE_RETURN_IF_ERROR(read.Prepare(ledger.db()));
  Status record_error;

  for (std::int64_t w0 = from_ms; w0 < to_ms; w0 += kWindowMs) {
    const std::int64_t w1 = std::min(to_ms, w0 + kWindowMs);
    // (gpu, step start) -> readings
    std::map<std::pair<std::int64_t, std::int32_t>, StepAgg> aggs;  // key (start, gpu)
    for (const SeriesInfo& s : series) {
      SEEDANCE_RETURN_IF_ERROR(read.ForEach(s.id, w0, w1, [&](std::int64_t ts, double value) {
        AddReading(aggs[{ts / step * step, s.gpu}], s, value);
      }));
    }
    // GPU steps, with per-step extras for apportionment and evidence.
    struct Extra {
      double dram, io, power, tensor, fb;
      std::string model;
      std::int64_t batch;
      std::string precision;
    };
    std::vector<GpuStep> steps;
    std::vector<Extra> extras;
    std::vector<std::size_t> order;
    for (const auto& [key, a] : aggs) {
      const GpuInfo& g = gpus[static_cast<std::size_t>(key.second)];
      const std::int64_t start = key.first;
      ++out.gpu_steps;
      if (g.price < 0) {
        ++out.unpriced_gpu_steps;
        unpriced.insert(g.model.empty() ? "(no modelName label)" : g.model);
        continue;
      }
      GpuStep s;
      s.start_ms = start;
      s.node = g.node;
      s.price_micro_per_hour = g.price;
      s.usage_milli = static_cast<std::int64_t>(std::clamp(a.Usage(), 0.0, 1.0) * 1000.0 + 0.5);
      std::string pod, ns, pid, job = a.job;
      int best = 0;
      for (const auto& [pn, count] : a.pods) {
        if (!pn.first.empty() && count > best) {
          best = count;
          pod = pn.first;
          ns = pn.second;
        }
      }
      if (pod.empty()) {
        for (const auto& [p, count] : a.pids) {
          if (count > best) {
            best = count;
            pid = p;
          }
        }
      }
      const ProcessEvent* ev = FindEvent(event_index, g.uuid, start, start + step,
                                         config.match_tolerance_ms, pod, pid);
      Extra x{a.dram_n > 0 ? a.dram_sum / a.dram_n : 0.0,
              a.io_sum,
              a.power_n > 0 ? a.power_sum / a.power_n : 0.0,
              a.tensor_n > 0 ? a.tensor_sum / a.tensor_n : -1.0,
              a.fb_peak,
              g.model,
              0,
              ""};
      s.request_milli = 1000;
      if (ev != nullptr) {
        used_events.insert(ev);
        s.request_milli = ev->request_milli;
        x.batch = ev->batch_size;
        x.precision = ev->precision;
        if (job.empty()) job = ev->job;
        if (pod.empty()) {
          pod = ev->pod.empty() ? "pid-" + ev->pid : ev->pod;
          ns = ev->namespace_name;
          ++out.joined_by_events;
        } else {
          ++out.joined_by_labels;
        }
      } else if (!pod.empty()) {
        ++out.joined_by_labels;
      } else if (!pid.empty()) {
        out.unmatched_samples += best;  // a process no event explains: the GPU counts as idle
      }
      if (!pod.empty()) {
        s.workload = workload_id(pod, ns, job);
        s.overhead = overhead_ns[s.workload];
      }
      steps.push_back(s);
      extras.push_back(std::move(x));
    }
    // Sort by (start, node) keeping extras aligned.
    order.resize(steps.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return steps[a].start_ms != steps[b].start_ms ? steps[a].start_ms < steps[b].start_ms
                                                     : steps[a].node < steps[b].node;
    });
    std::vector<GpuStep> sorted;
    std::vector<Extra> sorted_x;
    sorted.reserve(steps.size());
    for (std::size_t i : order) {
      sorted.push_back(steps[i]);
      sorted_x.push_back(extras[i]);
    }
    std::size_t cursor = 0;  // first GPU step of the current node interval in `sorted`
    allocator.Run(sorted, [&](const NodeInterval& n, std::span<const Charge> charges) {
      ++out.node_intervals;
      out.bill += n.bill;
      // This interval's GPU steps: sorted[cursor .. cursor + capacity/1000).
      auto n_gpus = static_cast<std::size_t>(n.capacity_milli / 1000);
      std::span<const GpuStep> gs(sorted.data() + cursor, n_gpus);
      std::span<const Extra> xs(sorted_x.data() + cursor, n_gpus);
      cursor += n_gpus;
      // Per-workload shares for apportionment and evidence.
      std::map<std::uint32_t, ApportionObservation> shares;
      double tot_w = 0, tot_dram = 0, tot_io = 0, tot_power = 0;
      for (std::size_t i = 0; i < gs.size(); ++i) {
        const GpuStep& g = gs[i];
        if (g.workload == kNoWorkload) continue;
        double w = static_cast<double>(std::max(g.request_milli, g.usage_milli));
        ApportionObservation& o = shares[g.workload];
        o.t += w;
        o.b += xs[i].dram;
        o.l += xs[i].io;
        o.y += xs[i].power;
        tot_w += w;
        tot_dram += xs[i].dram;
        tot_io += xs[i].io;
        tot_power += xs[i].power;
        const WorkloadDims& wd = workloads[g.workload];
        std::int64_t hour = n.start_ms / kHourMs * kHourMs;
        JobEvidence& ev = out.evidence[{wd.job, hour}];
        if (ev.job.empty()) {
          ev.job = wd.job;
          ev.hour_ms = hour;
          ev.model = xs[i].model;
          ev.node = nodes[n.node];
        }
        double h = static_cast<double>(step) / kHourMs;
        double prev_hours = ev.gpu_hours;
        ev.gpu_hours += h;
        double u = static_cast<double>(g.usage_milli) / 1000.0;
        ev.mean_utilization = ev.mean_utilization < 0
                                  ? u
                                  : (ev.mean_utilization * prev_hours + u * h) / ev.gpu_hours;
        if (xs[i].tensor >= 0) {
          ev.mean_tensor_active = ev.mean_tensor_active < 0
                                      ? xs[i].tensor
                                      : (ev.mean_tensor_active * prev_hours + xs[i].tensor * h) /
                                            ev.gpu_hours;
        }
        ev.peak_memory_mib = std::max(ev.peak_memory_mib, xs[i].fb);
        if (xs[i].batch > 0) ev.batch_size = xs[i].batch;
        if (!xs[i].precision.empty()) ev.precision = xs[i].precision;
        TenantInput& ti = out.tenant_inputs[wd.tenant];
        ti.tenant = wd.tenant;
        ti.alloc += h * w / 1000.0;
        ti.usage += h * u;
        ti.interconnect += xs[i].io;
      }
      if (shares.size() >= 2 && tot_w > 0 && tot_dram > 0 && tot_io > 0 && tot_power > 0 &&
          out.apportion.size() < 500'000) {
        for (auto& [wid, o] : shares) {
          out.apportion.push_back({o.t / tot_w, o.b / tot_dram, o.l / tot_io, o.y / tot_power});
        }
      }
      out.charges += static_cast<std::int64_t>(charges.size());
      if (record_error.ok()) {
        record_error = RecordCharges(ledger, n, charges, nodes[n.node],
                                     [&](std::uint32_t id) -> const WorkloadDims& {
                                       return workloads[id];
                                     });
      }
    });
    SEEDANCE_RETURN_IF_ERROR(record_error);
  }
  // GPUs a job held on average in the hour, rounded up.
  for (auto& [key, ev] : out.evidence) {
    ev.gpus = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(ev.gpu_hours - 1e-9)));
  }
  for (const ProcessEvent& e : events) {
    if (used_events.count(&e) == 0) ++out.unmatched_events;
  }
  out.unpriced_models.assign(unpriced.begin(), unpriced.end());
  SEEDANCE_RETURN_IF_ERROR(ledger.Flush());
  ledger.set_source("sim");
  return out;
}

Result<std::optional<TelemetryAttribution>> AttributeStoredTelemetry(
    Ledger& ledger, const LedgerConfig& config, const cost::PriceTable* catalog,
    std::int64_t from_ms, std::int64_t to_ms) {
  SEEDANCE_ASSIGN_OR_RETURN(auto samples, SampleRange(ledger));
  std::int64_t tf = std::max(from_ms, samples.first);
  std::int64_t tt = std::min(to_ms, samples.second);
  if (samples.first == samples.second || tf >= tt) return std::optional<TelemetryAttribution>();
  SEEDANCE_ASSIGN_OR_RETURN(auto t, AttributeTelemetry(ledger, config, catalog, tf, tt));
  return std::optional<TelemetryAttribution>(std::move(t));
}

Result<std::string> SamplesAsExposition(Ledger& ledger) {
  std::string text;
  Status s = ledger.ForEachSample([&text](std::string_view series, std::int64_t ts_ms, double value) {
    text += series;
    text += fmt::format(" {} {}\n", value, ts_ms);
  });
  if (!s.ok()) return s;
  return text;
}

}  // namespace seedance::ledger
