#include "seedance/ledger/job_telemetry.h"

#include <algorithm>
#include <map>
#include <set>

#include "seedance/ledger/internal/sqlite.h"
#include "seedance/telemetry/sample.h"

namespace seedance::ledger {

using internal::Stmt;

namespace {

// A gpu label as a device index; -1 when it is not one (a MIG profile, ...).
int GpuIndexOf(const std::string& label) {
  if (label.empty() || label.size() > 6 || label.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(label);
}

// The utilisation series of one GPU: GR_ENGINE_ACTIVE where it has one, else GPU_UTIL.
struct UtilSeries {
  std::int64_t id = 0;
  double scale = 1;
};

// (hostname, gpu index) -> the GPU's utilisation series (the preferred field only).
Result<std::map<NodeGpu, std::vector<UtilSeries>>> UtilSeriesByGpu(Ledger& ledger) {
  const std::string engine(telemetry::FieldName(telemetry::Field::kGrEngineActive));
  const std::string util(telemetry::FieldName(telemetry::Field::kGpuUtil));
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      ledger.db(), "SELECT id, metric, field, hostname, gpu FROM series WHERE gpu<>'' AND field IN (?1, ?2) "
                   "ORDER BY id"));
  st.Bind(1, engine);
  st.Bind(2, util);
  std::map<NodeGpu, std::vector<UtilSeries>> engine_series, util_series;
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    const int index = GpuIndexOf(st.Text(4));
    if (index < 0) continue;
    NodeGpu g{st.Text(3), index};
    UtilSeries s{st.Int(0), telemetry::LookupField(st.Text(1)).scale};
    (st.Text(2) == engine ? engine_series : util_series)[g].push_back(s);
  }
  for (auto& [g, s] : util_series) engine_series.try_emplace(g, std::move(s));
  return engine_series;
}

}  // namespace

double GpuActivity::IdleSeconds(std::int64_t since_ms) const {
  if (samples == 0) return 0;
  const std::int64_t from = std::max(since_ms, last_busy_ms);
  return static_cast<double>(std::max<std::int64_t>(0, last_ms - from)) / 1000.0;
}

Result<std::vector<ProcessEvent>> JobAllocationEvents(Ledger& ledger, std::int64_t from_ms,
                                                      std::int64_t to_ms) {
  std::vector<ProcessEvent> out;
  // (hostname, gpu index) -> the UUIDs its samples carry.
  std::map<NodeGpu, std::set<std::string>> uuids;
  {
    Stmt st;
    SEEDANCE_RETURN_IF_ERROR(st.Prepare(
        ledger.db(), "SELECT DISTINCT hostname, gpu, gpu_uuid FROM series WHERE gpu<>'' AND gpu_uuid<>''"));
    while (true) {
      SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      const int index = GpuIndexOf(st.Text(1));
      if (index >= 0) uuids[{st.Text(0), index}].insert(st.Text(2));
    }
  }
  if (uuids.empty()) return out;
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      ledger.db(),
      "SELECT a.node, a.start_ms, a.end_ms, a.gpu_indices, w.name, w.namespace, w.job, a.cluster, a.job_id "
      "FROM job_allocations AS a LEFT JOIN workloads w ON w.id = a.workload_id "
      "WHERE a.gpu_indices<>'' AND a.start_ms<?2 AND a.end_ms>?1 "
      "ORDER BY a.node, a.start_ms, a.cluster, a.job_id, a.incarnation"));
  st.Bind(1, from_ms);
  st.Bind(2, to_ms);
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    SEEDANCE_ASSIGN_OR_RETURN(std::vector<int> indices, ParseGpuIndexList(st.Text(3)));
    for (int i : indices) {
      auto it = uuids.find({st.Text(0), i});
      if (it == uuids.end()) continue;  // no telemetry for that GPU
      for (const std::string& uuid : it->second) {
        ProcessEvent e;
        e.gpu_uuid = uuid;
        e.start_ms = st.Int(1);
        e.end_ms = st.Int(2);
        e.pod = st.Text(4);
        e.namespace_name = st.Text(5);
        e.job = st.Text(6);
        e.node = st.Text(0);
        e.request_milli = 1000;
        out.push_back(std::move(e));
      }
    }
  }
  return out;
}

Result<GpuActivity> ReadGpuActivity(Ledger& ledger, const std::vector<NodeGpu>& gpus,
                                    std::int64_t from_ms, std::int64_t to_ms, double busy_above) {
  GpuActivity out;
  if (gpus.empty() || from_ms >= to_ms) return out;
  SEEDANCE_ASSIGN_OR_RETURN(auto by_gpu, UtilSeriesByGpu(ledger));
  internal::SeriesSamples read;
  SEEDANCE_RETURN_IF_ERROR(read.Prepare(ledger.db()));
  double sum = 0;
  for (const NodeGpu& g : gpus) {
    auto it = by_gpu.find(g);
    if (it == by_gpu.end()) continue;
    for (const UtilSeries& s : it->second) {
      SEEDANCE_RETURN_IF_ERROR(read.ForEach(s.id, from_ms, to_ms, [&](std::int64_t ts, double value) {
        const double v = value * s.scale;
        out.first_ms = out.samples == 0 ? ts : std::min(out.first_ms, ts);
        out.last_ms = std::max(out.last_ms, ts);
        ++out.samples;
        sum += v;
        if (v > busy_above) out.last_busy_ms = std::max(out.last_busy_ms, ts);
      }));
    }
  }
  if (out.samples > 0) out.mean_utilization = sum / static_cast<double>(out.samples);
  return out;
}

Result<std::vector<std::string>> TelemetryNodes(Ledger& ledger) {
  Stmt st;
  SEEDANCE_RETURN_IF_ERROR(st.Prepare(
      ledger.db(), "SELECT DISTINCT hostname FROM series WHERE gpu<>'' ORDER BY hostname"));
  std::vector<std::string> out;
  while (true) {
    SEEDANCE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(st.Text(0));
  }
  return out;
}

}  // namespace seedance::ledger
