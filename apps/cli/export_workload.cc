// seedance export workload: the jobs that ran in a ledger's window (Kubernetes pods from
// dcgm-exporter samples, kube-state-metrics and pod events; ledger/workload_history.h) as the
// jobs CSV cost-benchmark reads, with each job's speed on every --types GPU by the stated rule
// (ledger::StepsPerSecondOn), and the as-run baseline: each job as it ran, priced.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <memory>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "as_run.h"
#include "commands.h"
#include "common.h"
#include "ledger_prepare.h"
#include "seedance/core/file_util.h"
#include "seedance/gpu/catalog.h"
#include "seedance/ledger/focus.h"
#include "seedance/ledger/node_inventory.h"
#include "seedance/ledger/workload_history.h"
#include "seedance/report/scenario_report.h"
#include "seedance/sim/fleet_file.h"
#include "seedance/sim/workloads.h"
#include "seedance/slurm/slurm_json.h"
#include "seedance/telemetry/parse.h"

namespace seedance::cli {
namespace {

struct ExportWorkloadOptions {
  LedgerOptions ledger;
  std::string sacct;
  std::string out, as_run, types;
  std::string fleet;    // prices the as-run period (owned, reserved, on-demand, spot)
  std::string summary;  // JSON summary of the as-run cost
  std::string services; // services CSV: replicas over time per deployment
};

// Slurm accounting (`sacct --json`, 22.05's data_parser v0.0.38) as jobs: account for namespace,
// job-<id>[-<start>] for pod (one per incarnation), its GPUs (gres gpu:<type>) on its first node,
// start and end clipped to [from, to). Records that never ran or hold no GPU are left out;
// a running one ends at `to`.
Result<std::vector<ledger::RanJob>> JobsFromSacct(const std::string& path, std::int64_t& from_ms, std::int64_t& to_ms,
                                                  int& left_out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("--sacct " + path + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  auto records = slurm::ParseSacctJson(text.str());
  if (!records.has_value()) return InvalidArgumentError("--sacct " + path + ": " + records.error().message());
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  std::vector<ledger::RanJob> jobs;
  std::map<std::int64_t, int> incarnations;
  for (const slurm::AcctRecord& r : *records) {
    if (r.start_s <= 0 || r.gpus <= 0 || r.node.empty()) {
      ++left_out;
      continue;
    }
    ledger::RanJob j;
    j.namespace_name = r.account.empty() ? "(no account)" : r.account;
    j.pod = fmt::format("job-{}", r.job_id);
    if (incarnations[r.job_id]++ > 0) j.pod += fmt::format("-{}", r.start_s);
    j.node = r.node;
    auto g = gpu::ParseGpuName(r.gpu_type, gpu::NameMatch::kProduct);
    if (!g.has_value()) {
      return InvalidArgumentError(fmt::format("--sacct {}: job {}: GPU type '{}': {}", path, r.job_id, r.gpu_type,
                                              g.error().message()));
    }
    j.gpu = *g;
    j.model_label = std::string(gpu::GpuAt(*g).name);
    j.gpus = r.gpus;
    j.start_ms = r.start_s * 1000;
    j.end_ms = r.end_s > 0 ? r.end_s * 1000 : INT64_MAX;
    j.evidence = "sacct";
    // One Slurm job is one gang: every node of its allocation; its submit time.
    j.nodes = r.nodes.empty() ? std::vector<std::string>{r.node} : r.nodes;
    std::sort(j.nodes.begin(), j.nodes.end());
    j.member_pods = {j.pod};
    if (r.submit_s > 0) j.submit_ms = std::min(r.submit_s * 1000, j.start_ms);
    lo = std::min(lo, j.submit_ms >= 0 ? j.submit_ms : j.start_ms);  // the window opens at the first submit
    if (r.end_s > 0) hi = std::max(hi, j.end_ms);
    jobs.push_back(std::move(j));
  }
  if (from_ms == INT64_MIN) from_ms = lo;
  if (to_ms == INT64_MAX) to_ms = hi;
  std::vector<ledger::RanJob> kept;
  for (ledger::RanJob& j : jobs) {
    if (j.end_ms <= from_ms || j.start_ms >= to_ms) {
      ++left_out;
      continue;
    }
    j.clipped = j.start_ms < from_ms || j.end_ms > to_ms;
    j.clipped_pods = j.clipped ? 1 : 0;
    j.start_ms = std::max(j.start_ms, from_ms);
    j.end_ms = std::min(j.end_ms, to_ms);
    kept.push_back(std::move(j));
  }
  std::sort(kept.begin(), kept.end(), [](const ledger::RanJob& a, const ledger::RanJob& b) {
    return std::tie(a.start_ms, a.namespace_name, a.pod) < std::tie(b.start_ms, b.namespace_name, b.pod);
  });
  return kept;
}

Result<std::int64_t> OptionalTime(const std::string& flag, const std::string& text, std::int64_t absent) {
  if (text.empty()) return absent;
  auto t = telemetry::ParseTimestamp(text);
  if (!t.has_value()) return InvalidArgumentError(flag + ": " + t.error().message());
  return *t;
}

// The default pricer: what the ledger charges per GPU-hour for the job's model (the config's
// override, else the price table). With --fleet the whole period is priced at once instead
// (as_run.h): which tier a job's GPUs were in depends on the jobs before it.
ledger::AsRunPricer PriceTablePricer(const Prepared& p) {
  return [&p](const ledger::RanJob& j) -> Result<ledger::AsRunPrice> {
    const ledger::GpuPricer pricer(p.config, &p.catalog);
    const std::int64_t micro_per_hour = pricer.MicroUsdPerHour(j.model_label);
    if (micro_per_hour < 0) {
      return InvalidArgumentError(fmt::format("job {}/{}: GPU model '{}' has no price (add it to --prices or "
                                              "prices_usd_per_gpu_hour in --config)",
                                              j.namespace_name, j.pod, j.model_label));
    }
    const double gpu_ms = static_cast<double>(j.gpus) * static_cast<double>(j.end_ms - j.start_ms);
    return ledger::AsRunPrice{
        MicroUsd(micro_per_hour),
        MicroUsd(static_cast<std::int64_t>(std::llround(gpu_ms * static_cast<double>(micro_per_hour) / 3.6e6)))};
  };
}

// The period as it ran priced by the fleet file: the CSV's per-job cost and tiers, and the total.
struct FleetPricing {
  sim::FleetFile fleet;
  FleetAsRun priced;
  std::map<std::string, double> usd_by_job;       // JobKey -> USD (committed GPUs at their price per use)
  std::map<std::string, std::string> tiers;       // JobKey -> "owned 2 + on-demand 2"
};

const char* const kByPoolsAssumption =
    "each node at its node pool's price (the fleet file's node_pools, by its labels and name): every GPU that "
    "reported, busy or idle, for the steps it reported";

// The period as it ran priced by the fleet file's node pools (issue 38): history names each job's
// node, so no placement rule is assumed. The total is the ledger's bill over the period with every
// node at its pool's price (what `attribute --fleet` bills over the same range, to the cent):
// every GPU of a node that reported, busy or idle. A job's share is its GPU-hours at its node's
// pool price; the split is by pool kind, and the committed idle is the owned / reserved nodes' idle.
Result<FleetAsRun> PriceAsRunByNodePools(Prepared& p, const std::vector<ledger::RanJob>& jobs,
                                         const std::vector<AsRunRow>& rows, std::map<std::string, std::string>& tiers) {
  FleetAsRun out;
  std::tie(out.period_start_ms, out.period_end_ms) = AsRunPeriod(rows);
  sim::AsRunCost& c = out.cost;
  c.period_start_s = 0;
  c.period_end_s = static_cast<double>(out.period_end_ms - out.period_start_ms) / 1000.0;
  const auto pool_of = [&p](const std::string& node) -> Result<const cost::NodePool*> {
    if (auto it = p.node_pool.find(node); it != p.node_pool.end()) return &p.pools[it->second];
    return cost::FindNodePool(p.pools, cost::NodeFacts{node, {}, ""}, p.fleet_path);  // no GPU samples: by name
  };
  for (const cost::NodePool& pool : p.pools) {
    c.pool_names.push_back(fmt::format("{} ({} {})", pool.name, cost::PoolKindName(pool.kind), pool.gpu_type));
  }
  c.usd_by_pool.assign(p.pools.size(), 0.0);
  SEEDANCE_ASSIGN_OR_RETURN(const auto totals, ledger::NodeTotals(*p.ledger, out.period_start_ms, out.period_end_ms));
  Money total, owned, reserved, on_demand, spot, committed_idle;
  for (const ledger::NodeTotal& t : totals) {
    SEEDANCE_ASSIGN_OR_RETURN(const cost::NodePool* pool, pool_of(t.node));
    total += t.bill;
    c.usd_by_pool[static_cast<std::size_t>(pool - p.pools.data())] += ToUsd(t.bill);
    switch (pool->kind) {
      case cost::PoolKind::kOwned: owned += t.bill; break;
      case cost::PoolKind::kReserved: reserved += t.bill; break;
      case cost::PoolKind::kOnDemand: on_demand += t.bill; break;
      case cost::PoolKind::kSpot: spot += t.bill; break;
    }
    if (cost::IsCommitted(pool->kind)) committed_idle += t.idle;
  }
  c.total_usd = ToUsd(total);
  c.SetTiers(owned, reserved, on_demand, spot, committed_idle);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    // A gang's GPUs node by node (its pods may span pools: owned and spot nodes), in pool order.
    std::vector<std::pair<std::string, int>> by_node = jobs[i].gpus_by_node;
    if (by_node.empty()) by_node = {{jobs[i].node, jobs[i].gpus}};
    std::map<std::size_t, int> gpus_by_pool;
    for (const auto& [node, gpus] : by_node) {
      SEEDANCE_ASSIGN_OR_RETURN(const cost::NodePool* pool, pool_of(node));
      gpus_by_pool[static_cast<std::size_t>(pool - p.pools.data())] += gpus;
    }
    const std::string key = JobKey(rows[i]);
    const double hours = static_cast<double>(jobs[i].end_ms - jobs[i].start_ms) / 3.6e6;
    double usd = 0;
    std::string& t = tiers[key];
    for (const auto& [index, gpus] : gpus_by_pool) {
      const cost::NodePool& pool = p.pools[index];
      usd += static_cast<double>(gpus) * hours * pool.usd_per_gpu_hour;
      t += fmt::format("{}{} {} ({})", t.empty() ? "" : " + ", cost::PoolKindName(pool.kind), gpus, pool.name);
    }
    c.usd_by_job.emplace_back(key, usd);
  }
  return out;
}

// The history's shape in numbers (issue 38): rows by kind, pods, clipped pods, queueing.
struct HistoryShape {
  int pods = 0, clipped_pods = 0, gangs = 0, batch = 0, services = 0, notebooks = 0, spot = 0, with_submit = 0, queued = 0;
  std::set<std::pair<std::string, std::string>> deployments;
  std::int64_t max_queue_ms = 0;
  double queue_sum_s = 0;
  void Add(const ledger::RanJob& j) {
    pods += j.pods;
    clipped_pods += j.clipped_pods;
    spot += j.spot ? 1 : 0;
    if (j.kind == "service") {
      ++services;
      deployments.insert({j.namespace_name, j.owner_name.empty() ? j.pod : j.owner_name});
    } else if (j.kind == "notebook") {
      ++notebooks;
    } else {
      ++batch;
      gangs += j.pods >= 2 || j.nodes.size() >= 2 ? 1 : 0;  // several pods, or one Slurm job on several nodes
    }
    if (j.submit_ms >= 0) ++with_submit;
    if (j.submit_ms >= 0 && j.kind == "batch") {  // queueing of the batch jobs
      ++queued;
      max_queue_ms = std::max(max_queue_ms, j.start_ms - j.submit_ms);
      queue_sum_s += static_cast<double>(j.start_ms - j.submit_ms) / 1000.0;
    }
  }
  std::string Line() const {
    return fmt::format("shape: {} pods ({} clipped: no completion time or past the window's edges) as {} batch jobs "
                       "({} gangs of 2 or more pods or nodes), {} service replicas of {} deployments, {} notebook sessions; {} on spot nodes; "
                       "submit times for {} (batch queueing mean {:.0f} s, max {:.0f} s)",
                       pods, clipped_pods, batch, gangs, services, deployments.size(), notebooks, spot, with_submit,
                       queued > 0 ? queue_sum_s / queued : 0.0, static_cast<double>(max_queue_ms) / 1000.0);
  }
  void AddJson(nlohmann::json& j) const {
    j["pods"] = pods;
    j["clipped_pods"] = clipped_pods;
    j["batch_jobs"] = batch;
    j["gangs"] = gangs;
    j["service_replicas"] = services;
    j["deployments"] = deployments.size();
    j["notebook_sessions"] = notebooks;
    j["spot_rows"] = spot;
    j["max_queueing_s"] = static_cast<double>(max_queue_ms) / 1000.0;
  }
};

// The services CSV (docs/WORKLOADS.md): one row per change of a deployment's running replicas.
std::string ServicesCsv(const std::vector<ledger::RanJob>& jobs, std::int64_t to_ms) {
  std::string out = "namespace,deployment,gpu_type,gpus_per_replica,time,replicas,requests_per_s\n";
  for (const ledger::ServiceReplicas& r : ledger::ServiceReplicasOverTime(jobs, to_ms)) {
    out += fmt::format("{},{},{},{},{},{},\n", r.namespace_name, r.deployment, r.gpu_type, r.gpus_per_replica,
                       telemetry::FormatTimestamp(r.time_ms), r.replicas);
  }
  return out;
}

Status RunExportWorkload(const ExportWorkloadOptions& o) {
  if (o.sacct.empty() == o.ledger.db.empty()) return InvalidArgumentError("--db/--sacct: give exactly one source");
  if (!o.summary.empty() && o.summary == o.as_run) return InvalidArgumentError("--summary: the same file as --as-run");
  std::optional<FleetPricing> fleet;
  if (!o.fleet.empty()) {  // read first: a bad fleet file fails before the ledger is read
    fleet.emplace();
    SEEDANCE_ASSIGN_OR_RETURN(fleet->fleet, sim::LoadFleetFile(o.fleet));
  }
  Prepared p;
  std::vector<ledger::RanJob> jobs;
  int left_out = 0;
  if (!o.sacct.empty()) {
    if (!o.ledger.config.empty()) {
      SEEDANCE_ASSIGN_OR_RETURN(p.config, ledger::LedgerConfig::LoadFile(o.ledger.config));
    }
    SEEDANCE_RETURN_IF_ERROR(ApplyStep(o.ledger, p.config));
    SEEDANCE_ASSIGN_OR_RETURN(p.catalog, cost::PriceTable::LoadFile(o.ledger.prices.empty() ? cost::BundledPriceTablePath()
                                                                                            : o.ledger.prices));
    SEEDANCE_ASSIGN_OR_RETURN(p.from_ms, OptionalTime("--from", o.ledger.from, INT64_MIN));
    SEEDANCE_ASSIGN_OR_RETURN(p.to_ms, OptionalTime("--to", o.ledger.to, INT64_MAX));
    if (p.from_ms >= p.to_ms) return InvalidArgumentError("--from must be before --to");
    SEEDANCE_ASSIGN_OR_RETURN(jobs, JobsFromSacct(o.sacct, p.from_ms, p.to_ms, left_out));
  } else {
    LedgerOptions lo = o.ledger;
    if (fleet && !fleet->fleet.node_pools.empty()) lo.fleet = o.fleet;  // every node at its pool's price
    SEEDANCE_ASSIGN_OR_RETURN(p, Prepare(lo));
    SEEDANCE_ASSIGN_OR_RETURN(std::vector<ledger::RanJob> pods,
                              ledger::ReadRanJobs(*p.ledger, p.from_ms, p.to_ms, p.config.step_ms));
    jobs = ledger::ShapeJobs(std::move(pods));  // gangs, services, notebook sessions (issue 38)
  }
  if (jobs.empty()) {
    return InvalidArgumentError(fmt::format("--from/--to: no job (pod with GPUs) in {} .. {}",
                                            telemetry::FormatTimestamp(p.from_ms), telemetry::FormatTimestamp(p.to_ms)));
  }
  // GPU types: --types (any spelling the GPU-name parser knows), else those the jobs ran on.
  std::vector<gpu::GpuIndex> types;
  auto add_type = [&](gpu::GpuIndex g) {
    if (std::find(types.begin(), types.end(), g) == types.end()) types.push_back(g);
  };
  for (const ledger::RanJob& j : jobs) {
    if (j.gpu == cluster::kNoGpuModel) {
      return InvalidArgumentError(fmt::format("job {}/{}: GPU model '{}' is not one the GPU-name parser knows",
                                              j.namespace_name, j.pod, j.model_label.empty() ? "(no modelName label)" : j.model_label));
    }
  }
  if (!o.types.empty()) {
    for (const std::string& t : SplitCommaList(o.types)) {
      auto g = gpu::ParseGpuName(t, gpu::NameMatch::kProduct);
      if (!g.has_value()) return InvalidArgumentError("--types: " + g.error().message());
      add_type(*g);
    }
  }
  for (const ledger::RanJob& j : jobs) add_type(j.gpu);

  // The jobs as they ran (the as-run CSV's rows), priced by the fleet file when there is one.
  std::vector<AsRunRow> rows;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const ledger::RanJob& j = jobs[i];
    rows.push_back(AsRunRow{0, static_cast<std::int64_t>(i + 1), j.namespace_name + "/" + j.pod,
                            std::string(gpu::GpuAt(j.gpu).name), j.gpus, j.start_ms, j.end_ms});
  }
  const bool by_pools = fleet && !p.pools.empty();
  if (by_pools) {
    SEEDANCE_ASSIGN_OR_RETURN(fleet->priced, PriceAsRunByNodePools(p, jobs, rows, fleet->tiers));
    for (const auto& [job, usd] : fleet->priced.cost.usd_by_job) fleet->usd_by_job[job] = usd;
  } else if (fleet) {
    WarnImplausiblePrices(fleet->fleet, p.catalog);
    auto priced = PriceAsRunOnFleet(fleet->fleet, p.catalog, rows);
    if (!priced.has_value()) return InvalidArgumentError("--fleet " + o.fleet + ": " + priced.error().message());
    fleet->priced = std::move(*priced);
    for (const auto& [job, usd] : fleet->priced.cost.usd_by_job) fleet->usd_by_job[job] = usd;
    fleet->tiers = TiersByJob(fleet->priced);
  }

  sim::Workload w;
  w.name = "history";
  for (gpu::GpuIndex g : types) w.gpu_types.emplace_back(gpu::GpuAt(g).name);
  const ledger::AsRunPricer price = PriceTablePricer(p);
  std::string as_run =
      "job_id,namespace,pod,node,gpu_type,gpus,start,end,gpu_hours,mean_util,usd_per_gpu_hour,cost_usd,evidence,clipped,"
      "submit,pods,kind,nodes,spot,busy_s";
  as_run += fleet ? ",tiers\n" : "\n";
  Money total;
  double gpu_hours = 0;
  int clipped = 0;
  HistoryShape shape;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const ledger::RanJob& j = jobs[i];
    shape.Add(j);
    if (j.kind == "batch") {  // services and notebooks are not jobs (the services CSV, the as-run rows)
      sim::JobSpec s;
      s.id = static_cast<std::int64_t>(i + 1);
      // Arrival: its submit time when the history says it (the queueing stays), else its start.
      const std::int64_t arrival = j.submit_ms >= 0 ? std::max(j.submit_ms, p.from_ms) : j.start_ms;
      s.arrival_s = static_cast<double>(arrival - p.from_ms) / 1000.0;
      s.job_type = j.namespace_name + "/" + j.pod;
      s.gpus = j.gpus;
      s.total_steps = static_cast<double>(j.end_ms - j.start_ms) / 1000.0;  // 1 step/s where it ran
      for (gpu::GpuIndex g : types) s.steps_per_s.push_back(ledger::StepsPerSecondOn(j, g));
      s.tenant = j.namespace_name;
      w.jobs.push_back(std::move(s));
    }
    const double hours = j.gpu_hours();
    ledger::AsRunPrice priced;
    if (fleet) {  // the job's share: its GPU-hours in each tier at that tier's price
      const std::string key = JobKey(rows[i]);
      priced.cost = UsdFromDouble(fleet->usd_by_job[key]);
      priced.usd_per_gpu_hour = hours > 0 ? UsdFromDouble(ToUsd(priced.cost) / hours) : Money();
    } else {
      SEEDANCE_ASSIGN_OR_RETURN(priced, price(j));
    }
    total += priced.cost;
    gpu_hours += hours;
    clipped += j.clipped ? 1 : 0;
    as_run += fmt::format("{},{},{},{},{},{},{},{},{:.6f},{},{},{},{},{}", i + 1, j.namespace_name, j.pod, j.node,
                          gpu::GpuAt(j.gpu).name, j.gpus, telemetry::FormatTimestamp(j.start_ms),
                          telemetry::FormatTimestamp(j.end_ms), hours,
                          j.mean_util >= 0 ? fmt::format("{:.3f}", j.mean_util) : std::string(),
                          ledger::DecimalUsd(priced.usd_per_gpu_hour), ledger::DecimalUsd(priced.cost), j.evidence,
                          j.clipped ? "yes" : "no");
    as_run += fmt::format(",{},{},{},{},{},{}", j.submit_ms >= 0 ? telemetry::FormatTimestamp(j.submit_ms) : "", j.pods,
                          j.kind, fmt::join(j.nodes, ";"), j.spot ? "true" : "false",
                          j.busy_ms >= 0 ? fmt::format("{}", j.busy_ms / 1000) : std::string());
    as_run += fleet ? "," + fleet->tiers[JobKey(rows[i])] + "\n" : "\n";
  }
  // The jobs CSV is in arrival order.
  std::sort(w.jobs.begin(), w.jobs.end(), [](const sim::JobSpec& a, const sim::JobSpec& b) {
    return std::tie(a.arrival_s, a.id) < std::tie(b.arrival_s, b.id);
  });
  SEEDANCE_RETURN_IF_ERROR(w.Validate());
  // What the ledger charged the same pods, beside the bill, so the baseline can be checked; with a
  // fleet file also the ledger's bill over the as-run period (first start to last end).
  nlohmann::json summary = {{"jobs", jobs.size()}, {"gpu_hours", gpu_hours}, {"clipped_jobs", clipped}};
  shape.AddJson(summary);
  std::string ledger_line;
  if (p.ledger != nullptr) {
    SEEDANCE_ASSIGN_OR_RETURN(ledger::AttributionReport report,
                              p.ledger->Attribute(ledger::Dimension::kWorkload, p.from_ms, p.to_ms, false));
    std::set<std::string> pods;
    for (const ledger::RanJob& j : jobs) pods.insert(j.member_pods.begin(), j.member_pods.end());
    Money charged;
    for (const ledger::AttributionRow& r : report.rows) {
      if (pods.count(r.key)) charged += r.cost;
    }
    ledger_line = fmt::format("the ledger charged these jobs ${} of a bill ${} (idle ${}, overhead ${})",
                              ledger::DecimalUsd(charged), ledger::DecimalUsd(report.reconciliation.bill),
                              ledger::DecimalUsd(report.reconciliation.idle),
                              ledger::DecimalUsd(report.reconciliation.overhead));
    summary["ledger"] = {{"from", telemetry::FormatTimestamp(p.from_ms)},
                         {"to", telemetry::FormatTimestamp(p.to_ms)},
                         {"charged_these_jobs_usd", ToUsd(charged)},
                         {"charged_these_jobs_micro_usd", charged.raw()},
                         {"bill_usd", ToUsd(report.reconciliation.bill)},
                         {"idle_usd", ToUsd(report.reconciliation.idle)},
                         {"overhead_usd", ToUsd(report.reconciliation.overhead)}};
    if (fleet) {
      SEEDANCE_ASSIGN_OR_RETURN(
          ledger::AttributionReport same,
          p.ledger->Attribute(ledger::Dimension::kWorkload, fleet->priced.period_start_ms, fleet->priced.period_end_ms, false));
      ledger_line += fmt::format("; its bill over the as-run period ${}", ledger::DecimalUsd(same.reconciliation.bill));
      summary["ledger"]["bill_over_as_run_period_usd"] = ToUsd(same.reconciliation.bill);
      summary["ledger"]["bill_over_as_run_period_micro_usd"] = same.reconciliation.bill.raw();
    }
  }
  std::string as_run_line;
  if (fleet) {
    const sim::AsRunCost& c = fleet->priced.cost;
    as_run_line = fmt::format(
        "as run on fleet '{}' ({}) over {} .. {} (first start to last end): ${:.2f} = {}{}\nassumed: {}\n",
        fleet->fleet.name, o.fleet, telemetry::FormatTimestamp(fleet->priced.period_start_ms),
        telemetry::FormatTimestamp(fleet->priced.period_end_ms), c.total_usd, report::AsRunSplit(c),
        ledger_line.empty() ? "" : "; " + ledger_line, by_pools ? kByPoolsAssumption : kAsRunAssumption);
    nlohmann::json pools = nlohmann::json::object();
    for (std::size_t k = 0; k < c.pool_names.size(); ++k) pools[c.pool_names[k]] = c.usd_by_pool[k];
    summary["fleet"] = {{"name", fleet->fleet.name}, {"path", o.fleet}};
    summary["period"] = {{"start", telemetry::FormatTimestamp(fleet->priced.period_start_ms)},
                         {"end", telemetry::FormatTimestamp(fleet->priced.period_end_ms)},
                         {"hours", (c.period_end_s - c.period_start_s) / 3600.0}};
    summary["total_usd"] = c.total_usd;
    summary["total_micro_usd"] = UsdFromDouble(c.total_usd).raw();
    summary["usd_by_tier"] = {{"owned", c.owned_usd}, {"reserved", c.reserved_usd}, {"on_demand", c.on_demand_usd},
                              {"spot", c.spot_usd}};
    summary["committed_idle_usd"] = c.committed_idle_usd;
    summary["usd_by_pool"] = pools;
    summary["assumption"] = by_pools ? kByPoolsAssumption : kAsRunAssumption;
    summary["price_source"] = by_pools ? p.price_source : "fleet file " + o.fleet + " (gpus[])";
  } else {
    as_run_line = fmt::format("as run: ${} (each job's GPU-hours at its type's price{}){}\n", ledger::DecimalUsd(total),
                              o.as_run.empty() ? "" : ", " + o.as_run, ledger_line.empty() ? "" : "; " + ledger_line);
    summary["total_usd"] = ToUsd(total);
    summary["total_micro_usd"] = total.raw();
    summary["assumption"] = "each job's GPU-hours at its type's price (the ledger config's, else the price table's)";
  }
  std::string services_csv;
  if (!o.services.empty()) services_csv = ServicesCsv(jobs, p.to_ms);
  // The node inventory beside the as-run CSV (as_run.h, AsRunNodesPath): cost-benchmark bills
  // rented nodes whole while they were up, as the ledger did. Read before any file is written.
  std::string nodes_csv;
  if (!o.as_run.empty() && by_pools) {
    SEEDANCE_ASSIGN_OR_RETURN(const auto up, ledger::NodeUpTimes(*p.ledger, fleet->priced.period_start_ms,
                                                                 fleet->priced.period_end_ms));
    SEEDANCE_ASSIGN_OR_RETURN(nodes_csv, AsRunNodesCsv(up, [&p](const std::string& n) -> const cost::NodePool* {
      auto it = p.node_pool.find(n);
      return it == p.node_pool.end() ? nullptr : &p.pools[it->second];
    }));
  }
  SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(o.out, sim::JobsToCsv(w)));
  if (!o.services.empty()) SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(o.services, services_csv));
  if (!o.as_run.empty()) SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(o.as_run, as_run));
  if (!nodes_csv.empty()) {
    SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(AsRunNodesPath(o.as_run), nodes_csv));
  } else if (!o.as_run.empty()) {
    std::error_code ignored;  // a stale inventory of an earlier export must not be read with this CSV
    std::filesystem::remove(AsRunNodesPath(o.as_run), ignored);
  }
  if (!o.summary.empty()) SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(o.summary, summary.dump(2) + "\n"));
  if (fleet && !by_pools) {
    std::cout << "prices: fleet file " << o.fleet << " ('" << fleet->fleet.name
              << "'), gpus[]: owned at their TCO or stated price, reserved, on-demand at the file's price else "
              << (o.ledger.prices.empty() ? "the bundled data/prices/gpu_prices.csv" : o.ledger.prices) << "\n";
  } else if (!p.price_source.empty()) {
    std::cout << p.price_source << "\n";
  } else {
    std::cout << "prices: list prices of "
              << (o.ledger.prices.empty() ? "the bundled data/prices/gpu_prices.csv" : o.ledger.prices)
              << " (no --fleet: every GPU at its type's on-demand price)\n";
  }
  std::cout << fmt::format(
      "{}: {} jobs ({} clipped: running at the window's edges {} .. {} or without a completion time{}), {:.4f} GPU-hours on {}; speeds: 1 step/s where a job ran, "
      "elsewhere 1 / (u / r + 1 - u) with u its mean utilization (1 when unknown) and r the FP16-peak ratio "
      "(0 if its memory does not fit)\n",
      o.out, jobs.size(), clipped, telemetry::FormatTimestamp(p.from_ms), telemetry::FormatTimestamp(p.to_ms),
      left_out > 0 ? fmt::format("; {} records left out: never ran, no GPU or outside the window", left_out) : "",
      gpu_hours, fmt::join(w.gpu_types, ", "));
  std::cout << shape.Line() << "\n" << as_run_line;
  return Status::Ok();
}

}  // namespace

Action RegisterExportWorkload(CLI::App& exp) {
  auto o = std::make_shared<ExportWorkloadOptions>();
  CLI::App* cmd = AddCommand(
      exp, "workload", "Write the jobs that ran as cost-benchmark's jobs CSV, and the as-run cost",
      "A job is a Kubernetes pod that held GPUs in the window: from dcgm-exporter samples naming it "
      "(GPUs, model, utilization, peak memory, first and last sample), kube-state-metrics "
      "(kube_pod_container_resource_requests nvidia_com_gpu, kube_pod_start_time, "
      "kube_pod_completion_time, kube_pod_info) and pod events; kube-state-metrics' GPU count and "
      "times win. Jobs running at the window's edges are clipped to it and counted. The jobs CSV "
      "(docs/WORKLOADS.md) gives each job 1 step per second on the type it ran on for its run time; "
      "on another --types GPU its busy share u (mean GR_ENGINE_ACTIVE, else GPU_UTIL) runs r = FP16 "
      "peak ratio faster and the rest does not: 1 / (u / r + 1 - u) steps/s, 0 when its peak memory "
      "does not fit. --as-run writes each job as it ran (type, GPUs, times, GPU-hours) priced at "
      "what the ledger charges per GPU-hour (--config prices, else --prices); the summary puts its "
      "total beside what the ledger charged the same pods and the bill. --sacct FILE reads Slurm "
      "accounting instead of a ledger (account as namespace, job-<id> as pod, gres gpu:<type>; "
      "records that never ran are counted and left out). --fleet FILE (docs/FLEET_FILE.md) prices the "
      "period as it ran by your fleet instead: each job, in start order, keeps the GPUs of its type free "
      "over its whole run, owned first (the catalog's TCO), then reserved, then on-demand up to the quota "
      "(the history does not say which nodes were spot: no job is counted on spot); owned and reserved "
      "GPUs are paid from the first start to the last end, used or not. It prints the total and its "
      "split (owned / reserved / on-demand / spot, idle committed GPUs), adds a tiers column to the "
      "--as-run CSV, and a job that does not fit the fleet is an error naming it and its GPU type. A fleet file with "
      "node_pools prices each node by its pool instead (by its kube_node_labels labels or its name; no placement "
      "assumed): the total is the ledger's bill over the period with every node at its pool's price, what "
      "`attribute --fleet` bills, and a node no pool matches is an error naming it. "
      "--summary writes the totals as JSON. `cost-benchmark --as-run` puts the same figure beside every policy. "
      "The history keeps its shape (docs/WORKLOADS.md \"From your own history\"): pods of one Job, JobSet, "
      "PyTorchJob, RayJob or MPIJob (kube_pod_owner) are one gang row (pod <Kind>/<name>, GPUs summed, first start "
      "to last end; one Slurm job is one gang); pods of a ReplicaSet / Deployment are kind=service rows and "
      "--services writes their replicas over time; StatefulSet and JupyterHub / Kubeflow notebook pods are "
      "kind=notebook sessions with busy_s; submit times (kube_pod_created, kube_job_created, sacct "
      "time.submission) are the as-run CSV's submit and the jobs CSV's arrival_s; spot from kube_node_labels. "
      "The jobs CSV holds the batch jobs only.",
      "seedance export workload --db ledger.db --out jobs.csv --as-run as-run.csv --fleet fleet.yaml --types H100,A100-80G,L4");
  cmd->add_option("--db,--ledger", o->ledger.db, "ledger file (SQLite) to read the jobs from");
  cmd->add_option("--sacct", o->sacct, "read the jobs from this `sacct --json` output (Slurm 22.05 and later) instead");
  AddLedgerOptionsWithoutDb(cmd, o->ledger);
  cmd->add_option("--out", o->out, "jobs CSV to write (atomically)")->required();
  cmd->add_option("--as-run", o->as_run,
                  "as-run baseline CSV to write; with a --fleet that has node_pools, its node inventory "
                  "(each node's pool, hours up and bill) goes beside it (as-run.csv -> as-run.nodes.csv), which "
                  "cost-benchmark --as-run reads to bill rented nodes whole");
  cmd->add_option("--fleet", o->fleet,
                  "price the as-run period by this fleet file (owned at TCO, reserved, on-demand; docs/FLEET_FILE.md) "
                  "instead of the price table");
  cmd->add_option("--summary", o->summary,
                  "write the as-run total, its split by tier and the ledger's bill as JSON to this file");
  cmd->add_option("--services", o->services,
                  "write the services (pods of a ReplicaSet / Deployment) as replicas over time to this CSV");
  cmd->add_option("--types", o->types,
                  "GPU types of the speed columns, any spelling the GPU-name parser knows (default: those the jobs ran on)");
  return [cmd, o]() {
    if (!cmd->parsed()) return -1;
    Status s = RunExportWorkload(*o);
    return s.ok() ? kExitOk : ReportError(s);
  };
}

}  // namespace seedance::cli
