// seedance cost-benchmark: the product's main command. Replays a workload on a cloud fleet under
// the baseline and the Seedance policies (the time simulator, with the LP lower bound), adds the
// packing comparison on the openb trace as a section, prints the tables and writes results.json
// and cost_optimization_report.html.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>

#include "as_run.h"
#include "commands.h"
#include "common.h"
#include "seedance/advise/finding.h"
#include "seedance/advise/levers.h"
#include "seedance/report/advice_report.h"
#include "seedance/core/file_util.h"
#include "seedance/ledger/ledger.h"
#ifdef SEEDANCE_HAVE_POSTGRESQL
#include "seedance/ledger/pg_charge_store.h"
#endif
#include "seedance/audit/enforcement.h"
#include "seedance/report/audit_report.h"
#include "seedance/report/batching_report.h"
#include "seedance/report/cost_benchmark.h"
#include "seedance/report/html.h"
#include "seedance/report/scenario_report.h"
#include "seedance/report/seed_split_report.h"
#include "seedance/report/tenancy_report.h"
#include "seedance/config/seedance_config.h"
#include "seedance/sim/fleet_file.h"
#include "seedance/fleet/comparison.h"
#include "seedance/sim/scenarios.h"
#include "seedance/sim/seed_split.h"
#include "seedance/sim/tenancy_replay.h"

namespace seedance::cli {
namespace {

struct CostBenchmarkOptions {
  std::string workload = "llm-finetune";
  std::string duration;
  std::string config;
  std::uint64_t seed = 42;
  std::string seeds;  // workload seeds; empty: --seed
  bool packing = true;
  std::string nodes;
  std::string pods;
  std::string prices;
  std::string fleet;  // fleet.yaml; empty: the workload's bundled fleet (data/fleets/)
  std::string as_run;  // as-run CSV (export workload --as-run) of the same jobs: the "as run" row
  std::string history;  // fleet-week: a directory of the user's history (export workload), with --fleet
  std::string as_run_scheduler;  // kube | kueue | slurm: the "as run, replayed" row's scheduler (default: by source)
  std::string packing_seeds = "42-51";
  std::string out = "seedance-report";
  std::string ledger;
  std::string frontier;
  std::string decisions;
  int threads = 0;
  bool seed_given = false;
  bool with_tuning = false;  // default seeds: add the workload's tuning seeds beside the held-out ones
  bool with_owned_fleet = false;  // fleet-week: add the owned fleet c with a training backlog
  std::string tenancy = "all";  // all | none | a comma list of modes
  std::string tenancy_window_start;  // held-out tenancy window start (philly): "35d"; empty = 0
};

// --tenancy: "all" (strict, borrowing, the three Kueue Fair Sharing modes, seedance), "none", or a
// comma list of modes.
Result<std::vector<tenancy::TenancyMode>> ParseTenancyModes(const std::string& text) {
  using tenancy::TenancyMode;
  if (text == "all") {
    return std::vector<TenancyMode>{TenancyMode::kStrict, TenancyMode::kBorrowing, TenancyMode::kFairSharing,
                                    TenancyMode::kFairSharingFinal, TenancyMode::kFairSharingInitial, TenancyMode::kSeedance};
  }
  if (text == "none") return std::vector<TenancyMode>{};
  std::vector<TenancyMode> modes;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto m = tenancy::ParseTenancyMode(item);
    if (!m.has_value() || *m == TenancyMode::kKueue) {
      return InvalidArgumentError("--tenancy: unknown mode '" + item + "' (accepted: all, none, strict, borrowing, fair-sharing, fair-sharing-ltefs, fair-sharing-ltis, seedance)");
    }
    if (std::find(modes.begin(), modes.end(), *m) == modes.end()) modes.push_back(*m);
  }
  if (modes.empty()) return InvalidArgumentError("--tenancy: no mode given");
  return modes;
}

// --duration: "600s", "30m", "6h", "7d" -> seconds; empty -> 0 (the workload's default).
Result<double> ParseDuration(const std::string& text) {
  if (text.empty()) return 0.0;
  return ParseFlagDuration(text, "--duration");
}

// The simulator writes every pool interval into a cost ledger per policy (in memory), split by
// ledger::RecordAllocatedInterval into workload and idle charges; cost by tenant is read back.
class SimLedgers {
 public:
  Status Record(const std::string& policy, const sim::PoolInterval& iv) {
    if (!status_.ok()) return status_;
    if (policy == "seedance" && keep_seedance_) seedance_intervals_.push_back(iv);
    auto& slot = ledgers_[policy];
    if (!slot) {
      auto l = ledger::Ledger::Open(":memory:");
      if (!l.has_value()) return status_ = l.error();
      slot = std::move(*l);
    }
    status_ = RecordInto(*slot, iv);
    return status_;
  }

  Status RecordInto(ledger::ChargeSink& sink, const sim::PoolInterval& iv) {
    std::vector<ledger::GpuUse> uses;
    const double len = iv.end_s - iv.start_s;
    for (const auto& u : iv.uses) {
      auto id = static_cast<std::uint32_t>(u.job_id + 1);
      auto milli = static_cast<std::int64_t>(std::llround(u.gpu_seconds / len * 1000.0));
      uses.push_back(ledger::GpuUse{id, milli, milli, 1000, false});
      ledger::WorkloadDims& d = dims_[id];
      d.name = d.job = "job-" + std::to_string(u.job_id);
      d.tenant = u.tenant.empty() ? "unassigned" : u.tenant;
      d.task_type = "training";
    }
    ledger::NodeInterval n;
    n.start_ms = static_cast<std::int64_t>(std::llround(iv.start_s * 1000));
    n.end_ms = static_cast<std::int64_t>(std::llround(iv.end_s * 1000));
    if (n.end_ms <= n.start_ms) return Status::Ok();
    n.node = static_cast<std::uint32_t>(iv.pool);
    n.bill = UsdFromDouble(iv.held_gpus * len * iv.usd_per_gpu_hour / 3600.0);
    n.capacity_milli = static_cast<std::int64_t>(iv.held_gpus) * 1000;
    n.uses = uses;
    return ledger::RecordAllocatedInterval(sink, n, ledger::IdleShare::kNone, "pool-" + std::to_string(iv.pool),
                                           [this](std::uint32_t id) -> const ledger::WorkloadDims& { return dims_[id]; });
  }
  const Status& status() const { return status_; }
  void KeepSeedance() { keep_seedance_ = true; }

  // Writes the Seedance policy's charges into `target`: a SQLite ledger file, or PostgreSQL when
  // it is a connection string ("postgresql://..." or "host=..."). Called after the whole run,
  // so a failed run leaves no partial ledger behind.
  Status WriteSeedance(const std::string& target, const std::string& workload) {
    auto record_all = [&](ledger::ChargeSink& sink) -> Status {
      for (const auto& iv : seedance_intervals_) {
        SEEDANCE_RETURN_IF_ERROR(RecordInto(sink, iv));
      }
      return Status::Ok();
    };
    const std::string source = "sim:" + workload + ":seedance";
    if (target.rfind("postgresql://", 0) == 0 || target.rfind("postgres://", 0) == 0 ||
        target.find("host=") != std::string::npos) {
#ifdef SEEDANCE_HAVE_POSTGRESQL
      SEEDANCE_ASSIGN_OR_RETURN(auto pg, ledger::PgChargeStore::Open(target));
      pg->set_source(source);
      SEEDANCE_RETURN_IF_ERROR(record_all(*pg));
      return pg->Flush();
#else
      return InvalidArgumentError("--ledger: this build has no PostgreSQL support (libpq-dev)");
#endif
    }
    SEEDANCE_ASSIGN_OR_RETURN(auto l, ledger::Ledger::Open(target));
    l->set_source(source);
    SEEDANCE_RETURN_IF_ERROR(l->DeleteCharges(0, std::numeric_limits<std::int64_t>::max()));
    SEEDANCE_RETURN_IF_ERROR(record_all(*l));
    return l->Flush();
  }
  // {policy: {"tenants": [{tenant, cost_usd, gpu_hours}], "idle_usd", "bill_usd"}}
  Result<nlohmann::json> CostByTenant() {
    nlohmann::json out = nlohmann::json::object();
    for (auto& [policy, l] : ledgers_) {
      SEEDANCE_RETURN_IF_ERROR(l->Flush());
      SEEDANCE_ASSIGN_OR_RETURN(auto rep, l->Attribute(ledger::Dimension::kTenant, 0,
                                                       std::numeric_limits<std::int64_t>::max(), false));
      if (!rep.reconciliation.exact()) return InternalError("ledger does not reconcile for " + policy);
      nlohmann::json t = nlohmann::json::array();
      for (const auto& r : rep.rows) {
        t.push_back({{"tenant", r.key}, {"cost_usd", ToUsd(r.cost)},
                     {"gpu_hours", static_cast<double>(r.gpu_ms) / 3.6e6}});
      }
      t.push_back({{"tenant", "(idle)"}, {"cost_usd", ToUsd(rep.reconciliation.idle)}, {"gpu_hours", 0.0}});
      out[policy] = t;
    }
    return out;
  }

 private:
  std::map<std::string, std::unique_ptr<ledger::Ledger>> ledgers_;
  std::map<std::uint32_t, ledger::WorkloadDims> dims_;
  Status status_;
  bool keep_seedance_ = false;
  std::vector<sim::PoolInterval> seedance_intervals_;
};

std::string TenantSection(const nlohmann::json& by_policy, const std::string& assumes) {
  std::string h = "<section>\n<h2>Cost by tenant (from the cost ledger)</h2>\n"
                  "<p>The simulator writes every pool interval into the ledger; it splits each bill into "
                  "workload and idle charges to the micro-dollar (idle is the GPUs held but not running a job).</p>\n";
  std::map<std::string, int> tenants;
  for (const auto& [policy, rows] : by_policy.items()) {
    for (const auto& r : rows) tenants[r["tenant"].get<std::string>()] = 0;
  }
  const char* colors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#bab0ac"};
  int k = 0;
  for (auto& [t, c] : tenants) c = k++;
  double max_total = 0;
  for (const auto& [policy, rows] : by_policy.items()) {
    double tot = 0;
    for (const auto& r : rows) tot += r["cost_usd"].get<double>();
    max_total = std::max(max_total, tot);
  }
  const int width = 760, left = 170, bar_h = 26;
  int height = static_cast<int>(by_policy.size()) * (bar_h + 10) + 30 + 18 * static_cast<int>((tenants.size() + 3) / 4);
  h += fmt::format("<svg viewBox=\"0 0 {0} {1}\" width=\"{0}\" height=\"{1}\" role=\"img\" aria-label=\"cost by tenant\">\n", width, height);
  int y = 10;
  const double scale = max_total > 0 ? (width - left - 20) / max_total : 0;
  for (const auto& [policy, rows] : by_policy.items()) {
    h += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"13\">{}</text>\n", left - 8, y + 18, policy);
    double x = left;
    for (const auto& r : rows) {
      double w = r["cost_usd"].get<double>() * scale;
      const std::string t = r["tenant"].get<std::string>();
      h += fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{} {}: ${:.2f}</title></rect>\n",
                       x, y, w, bar_h, colors[tenants[t] % 8], policy, t, r["cost_usd"].get<double>());
      x += w;
    }
    y += bar_h + 10;
  }
  int i = 0;
  for (const auto& [t, c] : tenants) {
    int lx = left + (i % 4) * 140, ly = y + 14 + (i / 4) * 18;
    h += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" font-size=\"12\">{}</text>\n",
                     lx, ly - 10, colors[c % 8], lx + 16, ly, t);
    ++i;
  }
  h += "</svg>\n";
  if (!assumes.empty()) h += "<p class=\"note\">" + report::HtmlEscape(assumes) + "</p>\n";
  h += "</section>\n";
  return h;
}

// results.json and cost_optimization_report.html into `out`, each written atomically.
int WriteResultsAndReport(const std::string& out, const nlohmann::json& results, const std::string& page) {
  Status s = EnsureDirectory(out);
  if (s.ok()) s = WriteFileAtomically(out + "/results.json", results.dump(2) + "\n");
  if (s.ok()) s = WriteFileAtomically(out + "/cost_optimization_report.html", page);
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << out << "/cost_optimization_report.html and " << out << "/results.json\n";
  return kExitOk;
}

// `--workload llm-inference`: the batching engine on the bundled Azure conversation trace.
int RunInference(const CostBenchmarkOptions& o) {
  auto r = report::RunBundledBatching(&std::cerr);
  if (!r.has_value()) return ReportError(r.error());
  std::cout << report::FormatBatchingTable(r->results);
  nlohmann::json results = nlohmann::json::parse(report::BatchingJson(r->results));
  results["generated_by"] = "seedance cost-benchmark --workload llm-inference";
  std::string page = report::BatchingReportHtml(r->results);
  return WriteResultsAndReport(o.out, results, page);
}

// `--workload fleet-week` (issue 30): every layer on one fleet and one clock, the standard stack
// against Seedance, held-out weeks in the headline (fleet/comparison.h).
int RunFleetWeekBenchmark(const CostBenchmarkOptions& o) {
  if (o.seed_given || !o.seeds.empty()) {
    return ReportError(InvalidArgumentError(
        "--workload fleet-week runs its own seed sets (held out: week 2 and seeds 5-9 on fleets a and b; "
        "--with-tuning adds week 1, seeds 0-4): --seed / --seeds are not accepted"));
  }
  fleet::FleetWeekRunOptions run;
  run.data_dir = DataDir();
  run.cache_dir = PlanCacheDir();
  if (!o.history.empty() && o.fleet.empty()) {
    return ReportError(InvalidArgumentError("--history: give --fleet FILE too: your week runs on your fleet"));
  }
  run.sets = fleet::DefaultWeekSets(o.with_tuning, o.fleet, o.history, o.with_owned_fleet);
  run.profile_progress = &std::cerr;
  run.threads = static_cast<unsigned>(o.threads);
  auto c = fleet::RunFleetWeekComparison(run, [](const std::string& line) { std::cerr << line << "\n"; });
  if (!c.has_value()) return ReportError(c.error());
  std::cout << fleet::FleetWeekTable(*c);
  nlohmann::json results;
  results["generated_by"] = std::string("seedance cost-benchmark --workload fleet-week") + (o.with_tuning ? " --with-tuning" : "") +
                            (o.with_owned_fleet ? " --with-owned-fleet" : "") +
                            (o.fleet.empty() ? "" : " --fleet " + o.fleet) + (o.history.empty() ? "" : " --history " + o.history);
  results["fleet_week"] = nlohmann::json::parse(fleet::FleetWeekJson(*c));
  const std::string page = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Seedance: the fleet week</title>"
                           "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}table{border-collapse:collapse}"
                           "td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}td:first-child{text-align:left}</style>"
                           "</head><body>\n" + fleet::FleetWeekHtml(*c) + "</body></html>\n";
  return WriteResultsAndReport(o.out, results, page);
}

int RunCostBenchmarkCommand(const CostBenchmarkOptions& o) {
  if (o.workload == "llm-inference") return RunInference(o);
  if (o.workload == "fleet-week") return RunFleetWeekBenchmark(o);
  if (!o.history.empty()) {
    return ReportError(InvalidArgumentError("--history is for --workload fleet-week (a jobs CSV runs with --workload FILE.csv)"));
  }
  if (o.with_owned_fleet) return ReportError(InvalidArgumentError("--with-owned-fleet is for --workload fleet-week"));
  sim::ScenarioSpec spec;
  spec.workload = o.workload;
  spec.seed = o.seed;
  spec.data_dir = DataDir();
  spec.prices_path = o.prices;
  spec.fleet_path = o.fleet;
  auto duration = ParseDuration(o.duration);
  if (!duration.has_value()) return ReportError(duration.error());
  spec.duration_s = *duration;
  auto frontier = ParseNumberList(o.frontier, "--frontier", /*allow_zero=*/true, "USD per job-hour");
  if (!frontier.has_value()) return ReportError(frontier.error());
  spec.frontier_time_values = *frontier;
  if (!o.config.empty()) {
    auto cfg = config::LoadSimConfig(o.config);
    if (!cfg.has_value()) return ReportError(cfg.error());
    spec.config = *cfg;
  }
  bool named = false;
  for (const auto& w : sim::ScenarioWorkloadNames()) named = named || w == o.workload;
  if (!named && o.workload.find('/') == std::string::npos && o.workload.find(".csv") == std::string::npos) {
    std::string list;
    for (const auto& w : sim::ScenarioWorkloadNames()) list += (list.empty() ? "" : ", ") + w;
    return ReportError(InvalidArgumentError("--workload: unknown workload '" + o.workload + "' (accepted: " + list +
                                            ", llm-inference, fleet-week, or a jobs CSV file)"));
  }
  if (!o.fleet.empty()) {  // prices that look like a whole node's, before any run (errors come later, from the run)
    auto file = sim::LoadFleetFile(o.fleet);
    auto prices = cost::PriceTable::LoadFile(sim::PricePath(spec));
    if (file.has_value() && prices.has_value()) WarnImplausiblePrices(*file, *prices);
  }
  auto tenancy_modes = ParseTenancyModes(o.tenancy);
  if (!tenancy_modes.has_value()) return ReportError(tenancy_modes.error());
  double tenancy_start = 0;
  if (!o.tenancy_window_start.empty()) {
    auto t = ParseFlagDuration(o.tenancy_window_start, "--tenancy-window-start");
    if (!t.has_value()) return ReportError(t.error());
    tenancy_start = *t;
  }
  // Validate the packing inputs before the long run.
  report::CostBenchmarkInput packing_in;
  packing_in.nodes_path = o.nodes;
  packing_in.pods_path = o.pods;
  packing_in.prices_path = o.prices;
  packing_in.threads = o.threads;
  auto packing_seeds = ParseSeedList(o.packing_seeds, "--packing-seeds");
  if (!packing_seeds.has_value()) return ReportError(packing_seeds.error());
  packing_in.seeds = *packing_seeds;
  // Workload seeds: --seeds LIST, else --seed N, else the workload's held-out seeds (issue 29).
  std::vector<std::uint64_t> seeds{o.seed};
  if (o.with_tuning && (o.seed_given || !o.seeds.empty())) {
    return ReportError(InvalidArgumentError("--with-tuning: adds the tuning seeds to the default held-out seeds; with "
                                            "--seed or --seeds list every seed there instead (e.g. --seeds 0-9)"));
  }
  if (o.with_tuning && (sim::HeldOutSeeds(o.workload).empty() || sim::TuningSeeds(o.workload).empty())) {
    return ReportError(InvalidArgumentError("--with-tuning: workload '" + o.workload +
                                            "' has no held-out and tuning seeds to set side by side (llm-finetune has)"));
  }
  if (!o.seed_given && o.seeds.empty()) {
    if (auto held = sim::HeldOutSeeds(o.workload); !held.empty()) {
      seeds = held;
    } else if (auto tuning = sim::TuningSeeds(o.workload); !tuning.empty()) {
      seeds = tuning;
    }
    if (o.with_tuning) {
      for (std::uint64_t t : sim::TuningSeeds(o.workload)) seeds.push_back(t);
    }
  }
  if (!o.seeds.empty()) {
    if (o.seed_given) return ReportError(InvalidArgumentError("--seeds: give either --seed N or --seeds LIST, not both"));
    auto list = ParseSeedList(o.seeds, "--seeds");
    if (!list.has_value()) return ReportError(list.error());
    std::vector<std::uint64_t> sorted = *list;
    std::sort(sorted.begin(), sorted.end());
    if (auto d = std::adjacent_find(sorted.begin(), sorted.end()); d != sorted.end()) {
      return ReportError(InvalidArgumentError("--seeds '" + o.seeds + "': seed " + std::to_string(*d) + " given twice"));
    }
    seeds = *list;
  }
  // Split the seeds into the held-out set (the headline) and the tuning set beside it.
  std::map<sim::SeedSet, std::vector<std::uint64_t>> by_set;
  for (std::uint64_t seed : seeds) by_set[sim::ClassifySeed(o.workload, seed)].push_back(seed);
  if (by_set.count(sim::SeedSet::kOutside) && by_set.size() > 1) {
    return ReportError(InvalidArgumentError(
        "--seeds '" + o.seeds + "': mixes seeds outside the tuning / held-out split (" +
        sim::SeedRangeText(by_set[sim::SeedSet::kOutside]) + ") with held-out or tuning seeds of " + o.workload +
        "; run them separately"));
  }
  const sim::SeedSet headline_set = by_set.begin()->first;  // kHeldOut < kTuning < kOutside
  seeds = by_set.begin()->second;

  std::optional<sim::AsRunBaseline> as_run;
  if (!o.as_run.empty()) {
    auto a = LoadAsRunBaseline(AsRunInputs{o.as_run, o.fleet, o.workload, o.as_run_scheduler}, spec);
    if (!a.has_value()) return ReportError(a.error());
    as_run = std::move(*a);
  }

  if (as_run && seeds.size() > 1) {
    return ReportError(InvalidArgumentError("--as-run: one seed (the history is one instance), not " +
                                            std::to_string(seeds.size())));
  }
  SimLedgers ledgers;
  if (!o.ledger.empty()) ledgers.KeepSeedance();
  std::map<std::string, std::vector<sim::PoolInterval>> intervals_by_policy;  // --as-run: the one window's bills
  spec.on_pool_interval = [&ledgers, &intervals_by_policy, keep = as_run.has_value()](const std::string& policy,
                                                                                     const sim::PoolInterval& iv) {
    (void)ledgers.Record(policy, iv);
    if (keep) intervals_by_policy[policy].push_back(iv);
  };
  // --decisions: every policy's decisions as CSV (the first seed's instance), written with the
  // other outputs.
  std::string decisions_csv = "time_s,policy,job,action,pool\n";
  if (!o.decisions.empty()) {
    spec.on_decision = [&decisions_csv](const std::string& policy, const sim::Decision& d) {
      decisions_csv += fmt::format("{},{},{},{},{}\n", d.time_s, policy, d.job_id, sim::DecisionActionName(d.action), d.pool);
    };
  }
  const auto progress = [](const std::string& line) { std::cerr << "seedance: " << line << "\n"; };
  // Runs one set's seeds; held-out seeds leave out the policies sim::HeldOutLeftOut names.
  const auto run_set = [&](sim::SeedSet set, const std::vector<std::uint64_t>& set_seeds,
                           const sim::ScenarioSpec& set_spec) -> Result<report::SeedSetRun> {
    report::SeedSetRun run;
    run.set = set;
    sim::ScenarioSpec s = set_spec;
    s.seed = set_seeds.front();
    if (set == sim::SeedSet::kHeldOut) run.left_out = sim::HeldOutLeftOut(s.workload);
    if (!run.left_out.empty() && s.only_policies.empty()) {
      for (const sim::ScenarioPolicy& p : sim::ScenarioPolicies(s)) {
        bool left_out = false;
        for (const auto& l : run.left_out) left_out = left_out || l.policy == p.name;
        if (!left_out) s.only_policies.push_back(p.name);
      }
    }
    progress(sim::SeedSetName(set) + ": workload seeds " + sim::SeedRangeText(set_seeds));
    SEEDANCE_ASSIGN_OR_RETURN(run.sweep, sim::RunCostScenarioSeeds(s, set_seeds, progress));
    return run;
  };
  spec.seed = seeds.front();
  auto headline = run_set(headline_set, seeds, spec);
  if (!headline.has_value()) return ReportError(headline.error());
  if (!ledgers.status().ok()) return ReportError(ledgers.status());
  std::optional<report::SeedSetRun> tuning;
  if (headline_set == sim::SeedSet::kHeldOut && by_set.count(sim::SeedSet::kTuning)) {
    sim::ScenarioSpec tuning_spec = spec;  // the ledger and the decision log hold the headline's first seed
    tuning_spec.on_pool_interval = nullptr;
    tuning_spec.on_decision = nullptr;
    auto t = run_set(sim::SeedSet::kTuning, by_set[sim::SeedSet::kTuning], tuning_spec);
    if (!t.has_value()) return ReportError(t.error());
    tuning = std::move(*t);
  }
  sim::SeedSweep* sweep = &headline->sweep;
  const std::string headline_label = report::SeedSetLabel(*headline);
  for (sim::ScenarioResult& run : sweep->runs) run.as_run = as_run;
  if (as_run) {  // every row over the history's window (issue 38)
    Status w = ApplyAsRunWindowOnFleet(AsRunInputs{o.as_run, o.fleet, o.workload, o.as_run_scheduler}, spec, intervals_by_policy, &sweep->runs.front());
    if (!w.ok()) return ReportError(w);
    // One seed (checked above): the summary is that run's, over the window.
    const sim::ScenarioResult& run = sweep->runs.front();
    for (auto& ps : sweep->policies) {
      if (const sim::PolicyOutcome* p = run.Find(ps.name)) ps.total_cost_usd = {p->result.total_cost_usd, 0};
    }
    sweep->best_baseline = run.best_baseline;
    sweep->matched_baseline = run.matched_baseline;
  }
  const sim::ScenarioResult* scenario = &sweep->runs.front();  // the ledger's instance
  // What was assumed or left out (jobs outside --duration, skipped rows) goes to stderr as well as
  // into the table, results.json and the HTML report.
  for (const auto& n : scenario->notes) std::cerr << "seedance: note: " << n << "\n";
  const bool many = seeds.size() > 1;
  auto by_tenant = ledgers.CostByTenant();
  if (!by_tenant.has_value()) return ReportError(by_tenant.error());
  nlohmann::json results = many ? report::SweepJson(*sweep) : report::ScenarioJson(*scenario);
  report::AddSeedSetJson(*headline, tuning ? &*tuning : nullptr, &results);
  results["cost_by_tenant"] = *by_tenant;
  if (many) results["cost_by_tenant_seed"] = scenario->seed;
  results["generated_by"] = "seedance cost-benchmark";
  std::string packing_html;
  std::string packing_table;
  if (o.packing) {
    auto packing = report::RunCostBenchmark(packing_in, /*progress=*/true);
    if (!packing.has_value()) return ReportError(packing.error());
    packing_table = report::FormatCostTable(*packing);
    results["packing_comparison"] = nlohmann::json::parse(report::CostResultsJson(*packing));
    packing_html = report::CostReportSection(*packing);
  }
  // Tenancy section (S4): the same workload's tenants under strict quotas, Kueue-style borrowing
  // and Seedance, in one run.
  std::string tenancy_html;
  std::string tenancy_table;
  if (!tenancy_modes->empty()) {
    auto tenancy = sim::RunTenancyComparison(
        spec, *tenancy_modes, [](const std::string& line) { std::cerr << "seedance: " << line << "\n"; }, tenancy_start);
    if (!tenancy.has_value()) return ReportError(tenancy.error());
    tenancy_table = report::TenancyTable(*tenancy);
    results["tenancy"] = report::TenancyJson(*tenancy);
    results["tenancy_scenario"] = report::TenancyScenarioJson(*tenancy);
    tenancy_html = report::TenancyHtmlSection(*tenancy);
  }
  // Health audit section (S7): the bundled enforcement scenario, whose removed nodes get no work.
  // Its nodes (node-0 .. node-7) are the scenario's, not the user's: it is labelled as bundled, and
  // left out of a what-if on the user's own jobs (a jobs CSV) where it would read as theirs.
  std::string enforcement_html;
  if (named) {
    audit::EnforcementSpec audit_spec = audit::DefaultEnforcementSpec();
    auto enforcement = audit::RunEnforcementScenario(audit_spec);
    if (!enforcement.has_value()) return ReportError(enforcement.error());
    enforcement_html =
        "<p class=\"note\"><strong>Bundled example, not your fleet:</strong> the next section is the health audit's "
        "bundled enforcement scenario (its own nodes and telemetry), shown to illustrate admission; a what-if on "
        "your own jobs (a jobs CSV) leaves it out.</p>\n" +
        report::RenderEnforcementSection(*enforcement, audit_spec.config);
  }
  // Advice section: the training levers replayed on the workload (llm-finetune has a lever model),
  // the same figures `seedance advise --workload llm-finetune` prints.
  std::string advice_html;
  if (spec.workload == "llm-finetune") {
    advise::ReplaySpec rs;
    rs.data_dir = spec.data_dir;
    rs.seed = spec.seed;
    rs.duration_s = spec.duration_s;
    auto replay = advise::ReplayLevers(rs, [](const std::string& line) { std::cerr << "seedance: " << line << "\n"; });
    if (!replay.has_value()) return ReportError(replay.error());
    const std::string repro = fmt::format("seedance advise --workload llm-finetune --seed {} --replay-window {:.0f} --ci-seeds ''",
                                          spec.seed, rs.duration_s > 0 ? rs.duration_s : 7 * 86400.0);
    auto findings = advise::LeverFindings(*replay, repro);
    advise::SortFindings(findings);
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& f : findings) arr.push_back(advise::FindingJson(f));
    results["advice"] = {{"findings", arr}};
    advise::TrainingStep step;
    advise::LeverParams params;
    advice_html = report::AdviceHtmlSection(
        findings,
        "Training levers replayed on this workload under the seedance policy and seed, priced against "
        "the same run without them ($/month = the window's saving x 730 h / window hours).",
        advise::SeedLeverTable(step, params), advise::SeedTableDifferences(step, params));
  }
  // The first line names the prices (issue 38): the fleet file's, else the bundled fleet's, priced
  // from the price table where the file gives no price.
  const std::string fleet_path = sim::FleetPath(spec);
  std::cout << "prices: " << (o.fleet.empty() ? (fleet_path.empty() ? std::string("a generic cloud fleet (64 on-demand GPUs per type)")
                                                                    : "the bundled fleet " + sim::ShownPath(spec, fleet_path))
                                              : "fleet file " + o.fleet)
            << ", prices the file does not give from " << sim::ShownPath(spec, sim::PricePath(spec)) << "\n";
  std::cout << report::SeedSetTable(*headline, tuning ? &*tuning : nullptr) << "\n";
  std::cout << (many ? report::SweepTable(*sweep, headline_label)
                     : headline_label + ":\n" + report::ScenarioTable(*scenario));
  if (!tenancy_table.empty()) std::cout << "\n" << tenancy_table;
  if (!packing_table.empty()) std::cout << "\nPacking comparison (openb, FGD protocol):\n" << packing_table;

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<title>Seedance cost optimization report</title>\n<style>" + report::CostReportCss() +
                     "</style>\n</head>\n<body>\n<main>\n<h1>Seedance cost optimization report</h1>\n" +
                     report::SeedSetHtmlSection(*headline, tuning ? &*tuning : nullptr) +
                     (many ? report::SweepHtmlSection(*sweep, headline_label) : "") +
                     report::ScenarioHtmlSection(*scenario) +
                     (tuning ? report::SweepHtmlSection(tuning->sweep, report::SeedSetLabel(*tuning)) : "") +
                     TenantSection(*by_tenant, scenario->AssumesLine(sim::Assumption::kLedger)) +
                     tenancy_html + enforcement_html + packing_html +
                     advice_html + "</main>\n</body>\n</html>\n";
  Status s = EnsureDirectory(o.out);
  if (s.ok()) s = WriteFileAtomically(o.out + "/results.json", results.dump(2) + "\n");
  if (s.ok()) s = WriteFileAtomically(o.out + "/cost_optimization_report.html", html);
  if (s.ok() && !o.ledger.empty()) s = ledgers.WriteSeedance(o.ledger, spec.workload);
  if (s.ok() && !o.decisions.empty()) s = WriteFileAtomically(o.decisions, decisions_csv);
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << o.out << "/cost_optimization_report.html and " << o.out << "/results.json\n";
  if (!o.decisions.empty()) std::cout << "wrote every policy's decisions to " << o.decisions << "\n";
  if (!o.ledger.empty()) std::cout << "wrote the seedance policy's charges to the ledger " << o.ledger << "\n";
  return kExitOk;
}

}  // namespace

Action RegisterCostBenchmark(CLI::App& app) {
  auto opts = std::make_shared<CostBenchmarkOptions>();
  CLI::App* cmd = AddCommand(
      app, "cost-benchmark", "Compare scheduling policies' cost on a workload, with a lower bound",
      "Replays a workload on a fleet (--fleet fleet.yaml, docs/FLEET_FILE.md: owned GPUs at their TCO, reserved, "
      "on-demand quotas and spot pools with availability series; default: the workload's bundled cloud fleet in "
      "data/fleets/) "
      "under the baselines users run (FIFO, Gavel-LAS, SkyPilot managed jobs, Gavel's cost policies "
      "on spot, Gavel-LAS with spot) "
      "and Seedance, with the LP cost lower bound; plus the packing comparison on openb. Prints "
      "tables; writes cost_optimization_report.html + results.json. Workloads: llm-finetune (bundled, docs/WORKLOADS.md), gavel (Gavel's generator, 2 jobs/h), "
      "philly (Gavel's Philly-derived jobs), openb (the openb trace with its creation/deletion "
      "times), or a jobs CSV (docs/WORKLOADS.md); fleet-week (docs/FLEET_WEEK.md) runs every layer on one fleet for a "
      "week (training, serving, notebooks) against the standard stack (Kueue Fair Sharing, kube-scheduler, SkyPilot, "
      "a peak-sized serving type with an HPA), with a waterfall per layer, on held-out weeks, seeds and a second fleet "
      "shape (--fleet: your fleet file instead of the second shape, checked before any week runs; a set whose stacks fall "
      "short of the week's SLOs or Gold guarantees carries a warning that the fleet is too small). --duration bounds the arrival window (default "
      "7d; openb: the whole 149-day trace). --config reads seedance-config.yaml (scheduler.cost_aware, autoscaling, checkpoint; tenancy: tiers, tenants and quotas). "
      "Bad input exits 2 naming file:line and field; nothing is written then. The headline is held out: "
      "by default llm-finetune runs workload seeds 5-9, which were never run while Seedance's defaults were tuned "
      "(on seeds 0-4 and philly), without gavel-las-spot (its LP takes minutes on seed 7; said in the report); "
      "--with-tuning adds the tuning seeds 0-4 beside them, labelled (about 1.5x the run time). gavel (held out) and "
      "philly (tuning) run seed 42. --seeds 0-4 runs "
      "instances 0..4 and prints mean ± sd per policy, savings against FIFO on-demand and the best "
      "baseline (the cheapest baseline that finished every job), and the bounds; a list with held-out and tuning "
      "seeds (--seeds 0-9) puts the held-out ones in the headline and the tuning ones beside them. The tenancy section "
      "(--tenancy) replays the same workload's tenants on a GPU cluster under strict quotas, Kueue-style "
      "borrowing, Kueue's Fair Sharing (each preemption strategy list) and Seedance (tiers, reclaim, "
      "preemption, fairness), side by side; --tenancy-window-start holds it out on a later window. --as-run "
      "as-run.csv (from `seedance export workload`, with its jobs CSV as --workload and a --fleet) adds \"as run (what "
      "you paid)\": the same jobs as they ran, priced by the same fleet file (owned, then reserved, then on-demand "
      "GPUs, as `export workload --fleet` prices them), beside every policy; the jobs of both files must match.",
      "seedance cost-benchmark --workload llm-finetune --seeds 0-4 --no-packing --out report");
  cmd->add_option("--workload", opts->workload, "llm-finetune | gavel | philly | openb | llm-inference | fleet-week | FILE.csv")
      ->capture_default_str();
  cmd->add_option("--fleet", opts->fleet,
                  "fleet file (docs/FLEET_FILE.md); default: data/fleets/cloud-<workload>.yaml, or for a jobs CSV "
                  "64 on-demand GPUs per type and the bundled spot series");
  cmd->add_option("--as-run", opts->as_run,
                  "the as-run CSV `seedance export workload --as-run` wrote for the --workload jobs CSV: adds the row "
                  "\"as run (what you paid)\", those jobs as they ran priced by --fleet (a baseline row, not a policy); an "
                  "optional spot column (true / false) puts a job on the fleet's spot pool, priced by its price series "
                  "at the times it ran");
  cmd->add_option("--history", opts->history,
                  "fleet-week with --fleet: a directory from `seedance export workload` (jobs.csv, as-run.csv with kind / "
                  "busy_s, optional services.csv): your week's training, notebooks and services instead of the bundled "
                  "ones, beside the bundled fleet a (docs/FLEET_WEEK.md)");
  cmd->add_option("--as-run-scheduler", opts->as_run_scheduler,
                  "the scheduler the history ran under, emulated for the row \"as run, replayed\": kube "
                  "(kube-scheduler's default profile and the cluster autoscaler), kueue (the --config tenancy tenants' "
                  "nominal GPU quotas, by namespace), slurm (priority and backfill); "
                  "default: slurm for a sacct history, else kube");
  cmd->add_option("--duration", opts->duration, "arrival window with a unit: 90m, 6h, 7d (default: 7d; openb: whole trace)");
  cmd->add_option("--config", opts->config, "seedance-config.yaml");
  cmd->add_option("--seed", opts->seed,
                  "one workload seed: generates the llm-finetune / gavel instance and seeds the simulation (default: "
                  "llm-finetune's held-out seeds 5-9; gavel, philly, openb, a jobs CSV: 42)")
      ->each([opts](const std::string&) { opts->seed_given = true; });
  cmd->add_option("--seeds", opts->seeds,
                  "run once per workload seed and report mean ± sd per policy: 0-4, 0,1,2 or 7 (not with --seed); "
                  "held-out seeds make the headline, tuning seeds stand beside them, labelled");
  cmd->add_flag("--with-tuning", opts->with_tuning,
                "llm-finetune: also run the tuning seeds 0-4 and show them beside the held-out headline (seeds 5-9), "
                "labelled; not with --seed / --seeds");
  cmd->add_flag("--with-owned-fleet", opts->with_owned_fleet,
                "fleet-week: also run the owned fleet c (512 owned GPUs) with a standing training backlog, held out, "
                "measured by useful work per $ (beside its upper bound), owned GPU-hours idle and the committed "
                "GPUs the base and Seedance each need for the base's SLO and deadlines (a bisection over smaller "
                "fleets), with a labelled row for the base with Kueue's priority class for work with a deadline; "
                "about 9 minutes on 2 cores");
  cmd->add_option("--ledger", opts->ledger,
                  "also write the seedance policy's charges to this cost ledger: a SQLite file "
                  "(as `seedance ingest --db`) or a PostgreSQL connection string (postgresql://... or host=...)");
  cmd->add_option("--frontier", opts->frontier,
                  "also run Seedance at these values of an hour of a job's time (USD), e.g. 0,3,6,12,48: "
                  "each picks GPU types by it and waits for spot while the wait costs less than spot saves "
                  "(0: waits as SkyPilot spot-only does); the cost/JCT frontier, plotted in the report");
  cmd->add_option("--decisions", opts->decisions,
                  "write every policy's decisions as CSV time_s,policy,job,action,pool "
                  "(action: start, stop, migrate, provision, release; outcomes: finish, interrupt)");
  cmd->add_option("--out", opts->out, "output directory (created if missing)")->capture_default_str();
  cmd->add_flag("--packing,!--no-packing", opts->packing, "add the packing comparison section (default: on)");
  cmd->add_option("--nodes", opts->nodes, "packing section: node list CSV (default: openb's)");
  cmd->add_option("--pods", opts->pods, "packing section: pod list CSV (default: openb default trace)");
  cmd->add_option("--prices", opts->prices, "on-demand GPU prices CSV (default: data/prices/gpu_prices.csv)");
  cmd->add_option("--packing-seeds", opts->packing_seeds, "packing section seeds: 42-51, 42,45 or 42")
      ->capture_default_str();
  cmd->add_option("--threads", opts->threads,
                 "worker threads of the packing section and the fleet week (0, the default: all cores; the results "
                 "do not depend on it)")
      ->check(CLI::Range(0, 256));
  cmd->add_option("--tenancy", opts->tenancy,
                  "tenancy section: all (strict, borrowing, fair-sharing, fair-sharing-ltefs, fair-sharing-ltis, seedance "
                  "compared in one run), none, or a comma list of modes")
      ->capture_default_str();
  cmd->add_option("--tenancy-window-start", opts->tenancy_window_start,
                  "held-out tenancy window: replay [START, START + duration) with quotas and cluster from the arrivals "
                  "before START only (philly; e.g. 35d)");
  return [cmd, opts]() { return cmd->parsed() ? RunCostBenchmarkCommand(*opts) : -1; };
}

}  // namespace seedance::cli
