#include "as_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <tuple>

#include "seedance/core/csv.h"
#include "seedance/cost/money.h"
#include "seedance/ledger/focus.h"
#include "seedance/sim/scenarios.h"
#include "seedance/telemetry/parse.h"

namespace seedance::cli {

const char* const kAsRunAssumption =
    "the history does not say which GPUs were owned, reserved or on-demand: each job, in start order, keeps for its "
    "whole run the GPUs of its type free over all of it, owned first, then reserved, then on-demand up to the quota; "
    "nor which nodes were spot, so no job is counted on spot unless the as-run CSV's optional spot column says so";

std::pair<std::int64_t, std::int64_t> AsRunPeriod(const std::vector<AsRunRow>& rows) {
  std::pair<std::int64_t, std::int64_t> p{std::min(rows.front().start_ms, rows.front().SubmitMs()), rows.front().end_ms};
  for (const AsRunRow& r : rows) {
    p.first = std::min({p.first, r.start_ms, r.SubmitMs()});
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
  // Optional columns of the history contract (issue 38).
  const std::ptrdiff_t submit_col = t.FindColumn("submit"), pods_col = t.FindColumn("pods");
  const std::ptrdiff_t kind_col = t.FindColumn("kind"), evidence_col = t.FindColumn("evidence");
  const std::ptrdiff_t tiers_col = t.FindColumn("tiers");
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
    row.tenant = std::string(t.Str(r, ns_col));
    if (submit_col >= 0 && !t.Str(r, static_cast<std::size_t>(submit_col)).empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(row.submit, timestamp(r, static_cast<std::size_t>(submit_col)));
      if (*row.submit > row.start_ms) return t.FieldError(r, static_cast<std::size_t>(submit_col), "after its start");
    }
    if (pods_col >= 0 && !t.Str(r, static_cast<std::size_t>(pods_col)).empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(std::int64_t pods, t.Int(r, static_cast<std::size_t>(pods_col)));
      if (pods < 1 || pods > row.gpus) {
        return t.FieldError(r, static_cast<std::size_t>(pods_col), fmt::format("{} pods: must be 1..gpus ({})", pods, row.gpus));
      }
      row.pods = static_cast<int>(pods);
    }
    if (kind_col >= 0) {
      const std::string_view k = t.Str(r, static_cast<std::size_t>(kind_col));
      if (k == "service") {
        row.kind = sim::HistoryKind::kService;
      } else if (k == "notebook") {
        row.kind = sim::HistoryKind::kNotebook;
      } else if (!(k.empty() || k == "batch")) {
        return t.FieldError(r, static_cast<std::size_t>(kind_col), fmt::format("'{}': expected batch, service or notebook", k));
      }
    }
    if (evidence_col >= 0) row.evidence = std::string(t.Str(r, static_cast<std::size_t>(evidence_col)));
    if (tiers_col >= 0) row.tiers = std::string(t.Str(r, static_cast<std::size_t>(tiers_col)));
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

std::string AsRunNodesPath(const std::string& as_run_csv) {
  const std::string stem = as_run_csv.size() > 4 && as_run_csv.compare(as_run_csv.size() - 4, 4, ".csv") == 0
                               ? as_run_csv.substr(0, as_run_csv.size() - 4)
                               : as_run_csv;
  return stem + ".nodes.csv";
}

Result<std::vector<AsRunNodeRow>> ReadAsRunNodesCsv(const std::string& path) {
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  std::vector<std::size_t> col;
  for (const char* name : {"node", "pool", "kind", "gpu_type", "gpus", "up_from", "up_to", "up_hours", "bill_usd", "idle_usd"}) {
    SEEDANCE_ASSIGN_OR_RETURN(std::size_t c, t.ColumnIndex(name));
    col.push_back(c);
  }
  if (t.rows().empty()) return InvalidArgumentError(path + ": no node (a header and no rows)");
  std::vector<AsRunNodeRow> out;
  std::set<std::string> seen;
  for (const CsvTable::Row& r : t.rows()) {
    AsRunNodeRow n;
    n.line = r.line;
    n.node = std::string(t.Str(r, col[0]));
    if (n.node.empty() || !seen.insert(n.node).second) return t.FieldError(r, col[0], "empty or listed twice");
    n.pool = std::string(t.Str(r, col[1]));
    auto tier = sim::ParseTier(t.Str(r, col[2]));
    if (!tier.has_value()) return t.FieldError(r, col[2], tier.error().message());
    n.tier = *tier;
    n.gpu_type = sim::CanonicalGpuType(std::string(t.Str(r, col[3])));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t gpus, t.Int(r, col[4]));
    if (gpus < 1 || gpus > 1024) return t.FieldError(r, col[4], fmt::format("{} GPUs: must be 1..1024", gpus));
    n.gpus = static_cast<int>(gpus);
    for (auto [c, ms] : {std::pair{col[5], &n.up_from_ms}, std::pair{col[6], &n.up_to_ms}}) {
      auto v = telemetry::ParseTimestamp(t.Str(r, c));
      if (!v.has_value()) return t.FieldError(r, c, v.error().message());
      *ms = *v;
    }
    SEEDANCE_ASSIGN_OR_RETURN(double hours, t.Double(r, col[7]));
    n.up_ms = static_cast<std::int64_t>(std::llround(hours * 3.6e6));
    if (n.up_to_ms < n.up_from_ms || hours < 0 || n.up_ms > n.up_to_ms - n.up_from_ms + 1) {
      return t.FieldError(r, col[7], "up_hours longer than up_from .. up_to, or up_to before up_from");
    }
    for (auto [c, m] : {std::pair{col[8], &n.bill}, std::pair{col[9], &n.idle}}) {
      auto usd = cost::ParseUsd(t.Str(r, c));
      if (!usd.has_value()) return t.FieldError(r, c, usd.error().message());
      *m = *usd;
    }
    out.push_back(std::move(n));
  }
  return out;
}

Result<std::string> AsRunNodesCsv(const std::vector<ledger::NodeUpTime>& nodes,
                                  const std::function<const cost::NodePool*(const std::string&)>& pool_of) {
  std::string out = "node,pool,kind,gpu_type,gpus,up_from,up_to,up_hours,usd_per_gpu_hour,bill_usd,idle_usd\n";
  for (const ledger::NodeUpTime& n : nodes) {
    const cost::NodePool* pool = pool_of(n.node);
    if (pool == nullptr) {  // never dropped: the inventory's bills must add up to the ledger's
      return InvalidArgumentError("node inventory: node " + n.node + " has no node pool of the fleet file");
    }
    out += fmt::format("{},{},{},{},{},{},{},{:.6f},{:.6f},{},{}\n", n.node, pool->name, cost::PoolKindName(pool->kind),
                       pool->gpu_type, n.gpus, telemetry::FormatTimestamp(n.first_ms),
                       telemetry::FormatTimestamp(n.last_ms), static_cast<double>(n.up_ms) / 3.6e6,
                       pool->usd_per_gpu_hour, ledger::DecimalUsd(n.bill), ledger::DecimalUsd(n.idle));
  }
  return out;
}

namespace {

// The rows' tiers as the `tiers` column states them by node pool ("on-demand 1 (l4-on-demand)",
// parts joined by " + "), each naming a node pool of `fleet`; empty when a row has none or names
// no pool of this fleet (then the placement rule applies).
Result<std::vector<sim::AsRunInterval>> PlacedByTiersColumn(const sim::FleetFile& fleet, const std::vector<AsRunRow>& rows,
                                                            const std::vector<sim::AsRunJob>& jobs) {
  std::set<std::string, std::less<>> pools;
  for (const sim::FleetFileNodePool& np : fleet.node_pools) pools.insert("(" + np.name + ")");
  std::vector<sim::AsRunInterval> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].tiers.empty()) return std::vector<sim::AsRunInterval>{};
    std::string_view rest = rows[i].tiers;
    int sum = 0;
    while (!rest.empty()) {
      const std::size_t plus = rest.find(" + ");
      std::string_view part = rest.substr(0, plus);
      rest = plus == std::string_view::npos ? std::string_view{} : rest.substr(plus + 3);
      const std::size_t sp = part.find(' ');
      if (sp == std::string_view::npos) return std::vector<sim::AsRunInterval>{};
      auto tier = sim::ParseTier(part.substr(0, sp));
      const std::size_t sp2 = part.find(' ', sp + 1);
      if (sp2 == std::string_view::npos || !pools.count(part.substr(sp2 + 1))) return std::vector<sim::AsRunInterval>{};
      const std::string_view n = part.substr(sp + 1, sp2 - sp - 1);
      int gpus = 0;
      for (char ch : n) gpus = ch >= '0' && ch <= '9' ? gpus * 10 + (ch - '0') : -1000000;
      if (!tier.has_value() || gpus < 1) return std::vector<sim::AsRunInterval>{};
      out.push_back(sim::AsRunInterval{jobs[i].job, jobs[i].gpu_type, *tier, jobs[i].start_s, jobs[i].end_s, gpus});
      sum += gpus;
    }
    if (sum != rows[i].gpus) return std::vector<sim::AsRunInterval>{};
  }
  return out;
}

}  // namespace

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
  auto placed = PlacedByTiersColumn(fleet, rows, jobs);
  out.by_tiers_column = placed.has_value() && !placed->empty();
  if (!out.by_tiers_column) placed = sim::PlaceAsRun(fleet, jobs);
  if (!placed.has_value()) {
    return InvalidArgumentError(fmt::format("{} (times: seconds after the first start, {})", placed.error().message(),
                                            telemetry::FormatTimestamp(out.period_start_ms)));
  }
  out.placed = *placed;
  SEEDANCE_ASSIGN_OR_RETURN(out.cost, sim::PriceAsRun(fleet, out.placed, prices, 0, seconds(out.period_end_ms),
                                                             static_cast<double>(out.period_start_ms) / 1000.0));
  return out;
}

Status HoldServicesAsRun(const sim::FleetFile& fleet, const cost::PriceTable& prices, const std::vector<AsRunRow>& rows,
                         const FleetAsRun& as_run, sim::AsRunBaseline* out) {
  std::set<std::string> held;
  for (const AsRunRow& r : rows) {
    if (r.kind != sim::HistoryKind::kBatch) held.insert(JobKey(r));
  }
  out->held_rows = static_cast<int>(held.size());
  std::vector<sim::AsRunInterval> rented;
  for (const sim::AsRunInterval& iv : as_run.placed) {
    if (held.count(iv.job) && !sim::AlwaysHeld(iv.tier)) rented.push_back(iv);
  }
  for (const sim::AsRunInterval& iv : out->rented.whole_nodes ? rented : std::vector<sim::AsRunInterval>{}) {
    out->rented.fixed.push_back(
        sim::GpuUse{sim::CanonicalGpuType(iv.gpu_type), iv.tier, iv.start_s, iv.end_s, static_cast<double>(iv.gpus)});
  }
  if (rented.empty()) return Status::Ok();
  SEEDANCE_ASSIGN_OR_RETURN(sim::AsRunCost c, sim::PriceAsRun(fleet, rented, prices, 0, as_run.cost.period_end_s,
                                                              static_cast<double>(as_run.period_start_ms) / 1000.0));
  // Whole nodes: their GPUs share the policies' rented nodes (RentedNodes::fixed), no price of their own.
  out->held_cloud_usd = out->rented.whole_nodes ? 0.0 : c.on_demand_usd + c.spot_usd;
  for (const sim::AsRunInterval& iv : rented) out->held_cloud_gpu_hours += iv.gpus * (iv.end_s - iv.start_s) / 3600.0;
  return Status::Ok();
}

sim::ReplayScheduler DefaultReplayScheduler(const std::vector<AsRunRow>& rows) {
  for (const AsRunRow& r : rows) {
    if (r.evidence != "sacct") return sim::ReplayScheduler::kKube;
  }
  return rows.empty() ? sim::ReplayScheduler::kKube : sim::ReplayScheduler::kSlurm;
}

Result<sim::AsRunBaseline::Replayed> ReplayAsRunOnFleet(const sim::FleetFile& fleet, const cost::PriceTable& prices,
                                                        const std::vector<AsRunRow>& rows, const FleetAsRun& as_run,
                                                        const sim::ReplayOptions& options) {
  const auto seconds = [&as_run](std::int64_t ms) { return static_cast<double>(ms - as_run.period_start_ms) / 1000.0; };
  std::vector<sim::ReplayJob> jobs;
  for (const AsRunRow& r : rows) {
    sim::ReplayJob j;
    j.job = JobKey(r);
    j.tenant = r.tenant;
    j.gpu_type = sim::CanonicalGpuType(r.gpu_type);
    j.gpus = r.gpus;
    j.pods = r.pods;
    j.submit_s = seconds(r.SubmitMs());
    j.start_s = seconds(r.start_ms);
    j.end_s = seconds(r.end_ms);
    j.spot = r.spot;
    j.kind = r.kind;
    jobs.push_back(std::move(j));
  }
  SEEDANCE_ASSIGN_OR_RETURN(sim::ReplayOutcome replay, sim::ReplayHistory(fleet, jobs, options));
  std::vector<std::string> types;
  for (const sim::FleetFileGpu& g : fleet.gpus) types.push_back(g.type);
  SEEDANCE_ASSIGN_OR_RETURN(sim::FleetSpec spec, sim::BuildFleetSpec(fleet, types, prices));
  SEEDANCE_ASSIGN_OR_RETURN(sim::MarginalPrices marginal, sim::FleetMarginalPrices(fleet, spec));
  auto out = sim::PriceReplay(fleet, prices, replay, seconds(as_run.period_end_ms),
                              static_cast<double>(as_run.period_start_ms) / 1000.0, marginal, as_run.cost.total_usd,
                              options.whole_nodes);
  if (!out.has_value()) return InvalidArgumentError("as run, replayed: " + out.error().message());
  out->scheduler = std::string(sim::ReplaySchedulerName(options.scheduler));
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

namespace {

// The as-run row from the history's node inventory (AsRunNodesPath): the sum of the ledger's node
// bills (what `attribute --fleet` bills over the period, to the cent), split by pool kind; the
// window bill's rented GPU-hours are the rented nodes' up-time; `a->rented` says that every row
// bills rented capacity in whole nodes, of the history's sizes, and whether the history's rented
// nodes were up all its window (within one scale-down delay at each end: static).
Status BillAsRunByNodes(const sim::FleetFile& fleet, const std::string& path, const std::vector<AsRunNodeRow>& nodes,
                        const FleetAsRun& priced, sim::AsRunBaseline* a) {
  std::set<std::string> pools;
  for (const sim::FleetFileNodePool& np : fleet.node_pools) pools.insert(np.name);
  sim::AsRunCost c;
  c.period_start_s = 0;
  c.period_end_s = static_cast<double>(priced.period_end_ms - priced.period_start_ms) / 1000.0;
  c.usd_by_job = priced.cost.usd_by_job;
  Money total, owned, reserved, on_demand, spot, idle;
  std::map<std::string, Money> by_pool;
  sim::RentedNodes& r = a->rented;
  r.whole_nodes = true;
  r.static_rented = true;
  const std::int64_t slack_ms = 600'000;  // the cluster autoscaler's default scale-down delay
  double rented_gpu_hours = 0;
  for (const AsRunNodeRow& n : nodes) {
    const auto where = [&] { return fmt::format("{}:{}: node {}", path, n.line, n.node); };
    if (!pools.count(n.pool)) {
      return InvalidArgumentError(fmt::format("{}: pool '{}' is not a node pool of fleet '{}' (exported with another "
                                              "fleet file?)", where(), n.pool, fleet.name));
    }
    if (n.up_from_ms < priced.period_start_ms || n.up_from_ms >= priced.period_end_ms) {
      return InvalidArgumentError(fmt::format("{}: up from {}, outside the as-run CSV's period {} .. {} (the nodes of "
                                              "another export?)", where(), telemetry::FormatTimestamp(n.up_from_ms),
                                              telemetry::FormatTimestamp(priced.period_start_ms),
                                              telemetry::FormatTimestamp(priced.period_end_ms)));
    }
    total += n.bill;
    by_pool[n.pool] += n.bill;
    switch (n.tier) {
      case sim::Tier::kOwned: owned += n.bill; idle += n.idle; break;
      case sim::Tier::kReserved: reserved += n.bill; idle += n.idle; break;
      case sim::Tier::kOnDemand: on_demand += n.bill; break;
      case sim::Tier::kSpot: spot += n.bill; break;
    }
    if (sim::AlwaysHeld(n.tier)) continue;
    int& per = r.gpus_per_node[{n.gpu_type, n.tier}];
    per = std::max(per, n.gpus);
    rented_gpu_hours += n.gpus * static_cast<double>(n.up_ms) / 3.6e6;
    const bool up_all_window = n.up_from_ms <= priced.period_start_ms + slack_ms &&
                               n.up_to_ms >= priced.period_end_ms - slack_ms &&
                               n.up_ms >= (priced.period_end_ms - priced.period_start_ms) - 2 * slack_ms;
    r.static_rented = r.static_rented && up_all_window;
  }
  c.total_usd = ToUsd(total);
  c.SetTiers(owned, reserved, on_demand, spot, idle);
  for (const auto& [name, usd] : by_pool) {
    c.pool_names.push_back(name);
    c.usd_by_pool.push_back(ToUsd(usd));
  }
  a->cost = c;
  a->bill = sim::WindowBill{};
  a->bill.committed_usd = c.committed_usd;
  a->bill.cloud_usd = c.on_demand_usd + c.spot_usd;
  a->bill.cloud_gpu_hours = rented_gpu_hours;
  a->assumption = fmt::format("every node at its node pool's price for the time the ledger billed it ({}: {} nodes), "
                              "rented nodes whole whatever their GPUs did: the ledger's bill, what `attribute --fleet` "
                              "bills over the same period", path, nodes.size());
  return Status::Ok();
}

}  // namespace

// --as-run: the as-run CSV of the jobs the policies run, priced by the same fleet file. The two
// files must describe the same jobs: every job id in both, with the same pod, GPUs and start
// offsets (the jobs CSV's arrivals are the export's starts less its window start).
Result<sim::AsRunBaseline> LoadAsRunBaseline(const AsRunInputs& o, const sim::ScenarioSpec& spec) {
  if (o.fleet.empty()) {
    return InvalidArgumentError("--as-run: give --fleet FILE too: the period as it ran is priced by the fleet file the "
                                "policies run on");
  }
  if (o.workload.find(".csv") == std::string::npos) {
    return InvalidArgumentError("--as-run: --workload must be the jobs CSV `seedance export workload` wrote with it, "
                                "not '" + o.workload + "'");
  }
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<AsRunRow> rows, ReadAsRunCsv(o.as_run));
  sim::Workload w;
  sim::FleetSpec unused_fleet;
  std::vector<std::string> notes;
  SEEDANCE_RETURN_IF_ERROR(sim::BuildScenario(spec, &w, &unused_fleet, &notes));
  std::map<std::int64_t, const sim::JobSpec*> by_id;
  for (const sim::JobSpec& j : w.jobs) by_id[j.id] = &j;
  // Services and notebooks are not batch jobs: the jobs CSV holds none; they stay as they ran.
  const AsRunRow* first_batch = nullptr;
  for (const AsRunRow& r : rows) {
    if (r.kind == sim::HistoryKind::kBatch && first_batch == nullptr) first_batch = &r;
  }
  if (first_batch == nullptr) return InvalidArgumentError("--as-run " + o.as_run + ": no batch job (kind=batch) to match");
  const AsRunRow& first = *first_batch;
  const auto where = [&o](const AsRunRow& r) { return fmt::format("--as-run {}:{}: job {} ({})", o.as_run, r.line, r.job_id, r.job); };
  std::set<std::int64_t> seen;
  for (const AsRunRow& r : rows) {
    if (r.kind != sim::HistoryKind::kBatch) continue;
    auto it = by_id.find(r.job_id);
    if (it == by_id.end()) {
      return InvalidArgumentError(fmt::format("{} is not among the {} jobs run from {} (another export, or outside "
                                              "--duration?)", where(r), w.jobs.size(), o.workload));
    }
    const sim::JobSpec& j = *it->second;
    if (j.job_type != r.job || j.gpus != r.gpus) {
      return InvalidArgumentError(fmt::format("{} with {} GPUs is job {} ({}) with {} GPUs in {}: not the same jobs",
                                              where(r), r.gpus, j.id, j.job_type, j.gpus, o.workload));
    }
    // The jobs CSV's arrival is the submit time (its start when the history has none).
    const double after_first = static_cast<double>(r.SubmitMs() - first.SubmitMs()) / 1000.0;
    const double arrives_after = j.arrival_s - by_id.at(first.job_id)->arrival_s;
    if (std::abs(after_first - arrives_after) > 1e-3) {
      return InvalidArgumentError(fmt::format("{} starts {:.3f} s after job {} but arrives {:.3f} s after it in {}: "
                                              "not the same export", where(r), after_first, first.job_id, arrives_after,
                                              o.workload));
    }
    seen.insert(r.job_id);
  }
  for (const sim::JobSpec& j : w.jobs) {
    if (!seen.count(j.id)) {
      return InvalidArgumentError(fmt::format("--as-run {}: job {} ({}) of {} is missing: not the same jobs", o.as_run,
                                              j.id, j.job_type, o.workload));
    }
  }
  SEEDANCE_ASSIGN_OR_RETURN(sim::FleetFile fleet, sim::LoadFleetFile(o.fleet));
  SEEDANCE_ASSIGN_OR_RETURN(cost::PriceTable prices, cost::PriceTable::LoadFile(sim::PricePath(spec)));
  auto priced = PriceAsRunOnFleet(fleet, prices, rows);
  if (!priced.has_value()) return InvalidArgumentError("--as-run " + o.as_run + ": " + priced.error().message());
  sim::AsRunBaseline a;
  a.source = o.as_run;
  a.assumption = priced->by_tiers_column
                     ? "each job in the tier of the node pool it ran on (the as-run CSV's tiers column), its GPUs "
                       "billed per second of use as the replay's are"
                     : kAsRunAssumption;
  a.cost = priced->cost;
  a.bill = sim::AsRunWindowBill(priced->cost, priced->placed);
  // The history's node inventory beside the as-run CSV: the as-run row is the ledger's bill of its
  // nodes (every rented node whole while up), and every row bills rented capacity in whole nodes.
  std::vector<AsRunNodeRow> nodes;
  const std::string nodes_path = AsRunNodesPath(o.as_run);
  if (std::filesystem::exists(nodes_path)) {
    SEEDANCE_ASSIGN_OR_RETURN(nodes, ReadAsRunNodesCsv(nodes_path));
    SEEDANCE_RETURN_IF_ERROR(BillAsRunByNodes(fleet, nodes_path, nodes, *priced, &a));
  }
  // The window on the policies' clock: the first batch job's arrival is its submit.
  const double origin_s = by_id.at(first.job_id)->arrival_s - static_cast<double>(first.SubmitMs() - priced->period_start_ms) / 1000.0;
  a.window_start_s = origin_s;
  a.window_end_s = origin_s + static_cast<double>(priced->period_end_ms - priced->period_start_ms) / 1000.0;
  sim::ReplayOptions replay;
  replay.scheduler = DefaultReplayScheduler(rows);
  if (!o.scheduler.empty()) {
    auto sched = sim::ParseReplayScheduler(o.scheduler);
    if (!sched.has_value()) return InvalidArgumentError("--as-run-scheduler: " + sched.error().message());
    replay.scheduler = *sched;
  }
  if (replay.scheduler == sim::ReplayScheduler::kKueue) {  // the namespaces' GPU quotas from --config's tenancy
    for (const auto& t : spec.config.tenancy.tenants) {
      for (const auto& q : t.quota) {
        if (q.resource.find("gpu") != std::string::npos) replay.quotas[t.name] += static_cast<int>(q.nominal);
      }
    }
  }
  replay.whole_nodes = a.rented.whole_nodes;
  replay.static_rented = a.rented.static_rented;
  for (const AsRunNodeRow& n : nodes) {
    if (!sim::AlwaysHeld(n.tier)) replay.rented_nodes.push_back(sim::ReplayOptions::HistoryNode{n.gpu_type, n.tier, n.gpus});
  }
  SEEDANCE_RETURN_IF_ERROR(HoldServicesAsRun(fleet, prices, rows, *priced, &a));
  auto replayed = ReplayAsRunOnFleet(fleet, prices, rows, *priced, replay);
  if (!replayed.has_value()) return InvalidArgumentError("--as-run " + o.as_run + ": " + replayed.error().message());
  // The gap against this row's bill (the node inventory's when there is one).
  if (a.cost.total_usd > 0) replayed->gap_pct = 100.0 * (replayed->bill.TotalUsd() - a.cost.total_usd) / a.cost.total_usd;
  a.replayed = std::move(*replayed);
  sim::SimResult& s = a.result;
  s.policy = sim::AsRunBaseline::kLabel;
  for (const AsRunRow& r : rows) {
    if (r.kind != sim::HistoryKind::kBatch) continue;
    const sim::JobSpec& j = *by_id.at(r.job_id);
    sim::JobResult jr;
    jr.id = j.id;
    jr.arrival_s = j.arrival_s;
    jr.first_start_s = j.arrival_s + static_cast<double>(r.start_ms - r.SubmitMs()) / 1000.0;
    jr.finish_s = jr.first_start_s + static_cast<double>(r.end_ms - r.start_ms) / 1000.0;
    jr.gpu_seconds = jr.useful_gpu_seconds = r.gpus * (jr.finish_s - jr.first_start_s);
    jr.tenant = j.tenant;
    s.busy_gpu_seconds += jr.gpu_seconds;
    s.jobs.push_back(jr);
  }
  std::sort(s.jobs.begin(), s.jobs.end(), [](const sim::JobResult& x, const sim::JobResult& y) { return x.id < y.id; });
  s.useful_gpu_seconds = s.busy_gpu_seconds;
  s.total_cost_usd = s.gpu_cost_usd = a.cost.total_usd;
  s.makespan_s = a.cost.period_end_s - a.cost.period_start_s;
  // Held: every committed GPU over the period, on-demand and spot GPUs while a job ran on them
  // (whole nodes: while the rented node was up).
  for (const sim::AsRunInterval& iv : priced->placed) {
    if (!sim::AlwaysHeld(iv.tier) && nodes.empty()) s.held_gpu_seconds += iv.gpus * (iv.end_s - iv.start_s);
  }
  for (const AsRunNodeRow& n : nodes) {
    if (!sim::AlwaysHeld(n.tier)) s.held_gpu_seconds += n.gpus * static_cast<double>(n.up_ms) / 1000.0;
  }
  for (const sim::FleetFileGpu& g : fleet.gpus) s.held_gpu_seconds += (g.owned + g.reserved) * s.makespan_s;
  return a;
}

// Bills every policy of `run` over the as-run window (sim::ApplyAsRunWindow) on the fleet the
// policies ran on.
Status ApplyAsRunWindowOnFleet(const AsRunInputs& o, const sim::ScenarioSpec& spec,
                               const std::map<std::string, std::vector<sim::PoolInterval>>& intervals,
                               sim::ScenarioResult* run) {
  sim::Workload w;
  sim::FleetSpec fleet;
  std::vector<std::string> notes;
  SEEDANCE_RETURN_IF_ERROR(sim::BuildScenario(spec, &w, &fleet, &notes));
  SEEDANCE_ASSIGN_OR_RETURN(sim::FleetFile file, sim::LoadFleetFile(o.fleet));
  SEEDANCE_ASSIGN_OR_RETURN(sim::MarginalPrices marginal, sim::FleetMarginalPrices(file, fleet));
  return sim::ApplyAsRunWindow(run, fleet, marginal, intervals);
}


}  // namespace seedance::cli
