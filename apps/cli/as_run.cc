#include "as_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <tuple>

#include "seedance/core/csv.h"
#include "seedance/telemetry/parse.h"

namespace seedance::cli {

const char* const kAsRunAssumption =
    "the history does not say which GPUs were owned, reserved or on-demand: each job, in start order, keeps for its "
    "whole run the GPUs of its type free over all of it, owned first, then reserved, then on-demand up to the quota; "
    "nor which nodes were spot, so no job is counted on spot unless the as-run CSV's optional spot column says so";

std::pair<std::int64_t, std::int64_t> AsRunPeriod(const std::vector<AsRunRow>& rows) {
  std::pair<std::int64_t, std::int64_t> p{rows.front().start_ms, rows.front().end_ms};
  for (const AsRunRow& r : rows) {
    p.first = std::min(p.first, r.start_ms);
    p.second = std::max(p.second, r.end_ms);
  }
  return p;
}

std::string JobKey(const AsRunRow& row) { return fmt::format("{} (job_id {})", row.job, row.job_id); }

Result<std::vector<AsRunRow>> ReadAsRunCsv(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t id_col, t.ColumnIndex("job_id"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t ns_col, t.ColumnIndex("namespace"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t pod_col, t.ColumnIndex("pod"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t type_col, t.ColumnIndex("gpu_type"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t gpus_col, t.ColumnIndex("gpus"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t start_col, t.ColumnIndex("start"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t end_col, t.ColumnIndex("end"));
  const std::ptrdiff_t spot_col = t.FindColumn("spot");  // optional: the user says which jobs ran on spot
  if (t.rows().empty()) return InvalidArgumentError(path + ": no job (a header and no rows)");
  std::vector<AsRunRow> rows;
  std::map<std::int64_t, std::uint32_t> seen;  // job_id -> line
  const auto timestamp = [&t](const CsvTable::Row& r, std::size_t col) -> Result<std::int64_t> {
    auto ms = telemetry::ParseTimestamp(t.Str(r, col));
    if (!ms.has_value()) return t.FieldError(r, col, ms.error().message());
    return *ms;
  };
  for (const CsvTable::Row& r : t.rows()) {
    AsRunRow row;
    row.line = r.line;
    SEEDANCE_ASSIGN_OR_RETURN(row.job_id, t.Int(r, id_col));
    if (auto [at, fresh] = seen.emplace(row.job_id, r.line); !fresh) {
      return t.FieldError(r, id_col, fmt::format("job_id {} is listed already at line {}", row.job_id, at->second));
    }
    row.job = std::string(t.Str(r, ns_col)) + "/" + std::string(t.Str(r, pod_col));
    row.gpu_type = std::string(t.Str(r, type_col));
    if (row.gpu_type.empty()) return t.FieldError(r, type_col, "empty GPU type");
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t gpus, t.Int(r, gpus_col));
    if (gpus < 1 || gpus > 1000000) return t.FieldError(r, gpus_col, fmt::format("{} GPUs: must be 1..1000000", gpus));
    row.gpus = static_cast<int>(gpus);
    SEEDANCE_ASSIGN_OR_RETURN(row.start_ms, timestamp(r, start_col));
    SEEDANCE_ASSIGN_OR_RETURN(row.end_ms, timestamp(r, end_col));
    if (row.end_ms < row.start_ms) return t.FieldError(r, end_col, "ends before its start");
    if (spot_col >= 0) {
      const auto col = static_cast<std::size_t>(spot_col);
      const std::string_view v = t.Str(r, col);
      if (v == "true" || v == "yes" || v == "1") {
        row.spot = true;
      } else if (!(v.empty() || v == "false" || v == "no" || v == "0")) {
        return t.FieldError(r, col, fmt::format("'{}': expected true or false (empty: false)", v));
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<FleetAsRun> PriceAsRunOnFleet(const sim::FleetFile& fleet, const cost::PriceTable& prices,
                                     const std::vector<AsRunRow>& rows) {
  if (rows.empty()) return InvalidArgumentError("as run: no job to price");
  FleetAsRun out;
  std::tie(out.period_start_ms, out.period_end_ms) = AsRunPeriod(rows);
  // Seconds after the first start: exact in a double for any period of history.
  const auto seconds = [&out](std::int64_t ms) { return static_cast<double>(ms - out.period_start_ms) / 1000.0; };
  std::vector<sim::AsRunJob> jobs;
  for (const AsRunRow& r : rows) {
    sim::AsRunJob j;
    j.job = JobKey(r);
    j.gpu_type = r.gpu_type;
    j.start_s = seconds(r.start_ms);
    j.end_s = seconds(r.end_ms);
    j.gpus = r.gpus;
    j.spot = r.spot;
    jobs.push_back(std::move(j));
  }
  const auto placed = sim::PlaceAsRun(fleet, jobs);
  if (!placed.has_value()) {
    return InvalidArgumentError(fmt::format("{} (times: seconds after the first start, {})", placed.error().message(),
                                            telemetry::FormatTimestamp(out.period_start_ms)));
  }
  out.placed = *placed;
  SEEDANCE_ASSIGN_OR_RETURN(out.cost, sim::PriceAsRun(fleet, out.placed, prices, 0, seconds(out.period_end_ms),
                                                             static_cast<double>(out.period_start_ms) / 1000.0));
  return out;
}

void WarnImplausiblePrices(const sim::FleetFile& fleet, const cost::PriceTable& prices) {
  for (const std::string& w : sim::FleetPriceWarnings(fleet, prices)) std::cerr << "seedance: warning: " << w << "\n";
}

std::map<std::string, std::string> TiersByJob(const FleetAsRun& priced) {
  std::map<std::string, std::string> out;
  for (const sim::AsRunInterval& iv : priced.placed) {
    std::string& tiers = out[iv.job];
    tiers += fmt::format("{}{} {}", tiers.empty() ? "" : " + ", sim::TierName(iv.tier), iv.gpus);
  }
  return out;
}

}  // namespace seedance::cli
