// seedance attribute / export focus / breaker: the cost-ledger commands. Each one first turns the
// telemetry stored in the ledger into charges (replacing earlier telemetry charges of the range),
// then reads the ledger, which also holds what the simulator recorded.
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "as_run.h"
#include "commands.h"
#include "common.h"
#include "ledger_prepare.h"
#include "seedance/cost/money.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/breaker.h"
#include "seedance/ledger/focus.h"
#include "seedance/ledger/ledger.h"
#include "seedance/ledger/node_inventory.h"
#include "seedance/ledger/telemetry_attribution.h"
#include "seedance/sim/fleet_file.h"
#include "seedance/telemetry/parse.h"

namespace seedance::cli {

// Options every ledger command shares (ledger_prepare.h).
void AddLedgerOptions(CLI::App* cmd, LedgerOptions& o) {
  cmd->add_option("--db", o.db, "ledger file (SQLite)")->required();
  cmd->add_option("--fleet", o.fleet,
                  "fleet file whose node_pools price every node by its labels or name: owned, reserved, on-demand, "
                  "spot (docs/FLEET_FILE.md); default: every GPU at its type's list price");
  AddLedgerOptionsWithoutDb(cmd, o);
}

void AddLedgerOptionsWithoutDb(CLI::App* cmd, LedgerOptions& o) {
  cmd->add_option("--config", o.config,
                  "attribution config, YAML or JSON (docs/ATTRIBUTION.md: namespace -> tenant/business "
                  "unit/tier, idle sharing, overhead, prices, breaker thresholds)");
  cmd->add_option("--prices", o.prices,
                  "GPU price CSV (default: the bundled data/prices/gpu_prices.csv)");
  cmd->add_option("--from", o.from, "start (inclusive): 2026-11-29T00:00:00Z or Unix seconds");
  cmd->add_option("--to", o.to, "end (exclusive)");
  cmd->add_option("--step", o.step,
                  "attribution step, each GPU sample billed for one step: the samples' interval or a multiple "
                  "(5m for a history scraped or ingested every 5 minutes; default: --config step_seconds, else 60s)");
  cmd->add_flag("--allow-unpriced", o.allow_unpriced,
                "leave GPUs of a type without a price out (the report names them) instead of exit 2");
}

Result<std::unique_ptr<ledger::FleetPools>> FleetPoolsOf(const Prepared& p) {
  if (p.pools.empty()) return std::unique_ptr<ledger::FleetPools>();
  auto f = std::make_unique<ledger::FleetPools>();
  f->pools = p.pools;
  for (const auto& [node, at] : p.node_pool) f->node_pool[node] = &f->pools[at];
  SEEDANCE_ASSIGN_OR_RETURN(f->rented, cost::RentedPoolPrices(f->pools, p.fleet_path + " (rented pools)"));
  return f;
}

std::string UnpricedNote(const Prepared& p) {
  if (!p.has_telemetry || p.telemetry.unpriced_gpu_steps == 0) return "";
  std::string models;
  for (const auto& m : p.telemetry.unpriced_models) models += (models.empty() ? "" : ", ") + m;
  return fmt::format("unpriced GPU types left out (--allow-unpriced): {} ({} GPU steps)", models,
                     p.telemetry.unpriced_gpu_steps);
}

namespace {

// Prices every GPU node of the ledger by the fleet file's node pools (config.node_prices).
Status PriceNodesByPools(Prepared& p) {
  SEEDANCE_ASSIGN_OR_RETURN(const std::vector<ledger::LedgerNode> nodes, ledger::LedgerNodes(*p.ledger));
  for (const ledger::LedgerNode& n : nodes) {
    cost::NodeFacts facts{n.name, n.labels, ""};
    SEEDANCE_ASSIGN_OR_RETURN(const cost::NodePool* pool, cost::FindNodePool(p.pools, facts, p.fleet_path));
    for (const std::string& model : n.models) {
      const std::string type = sim::CanonicalGpuType(model);
      if (type != pool->gpu_type) {
        return InvalidArgumentError(fmt::format("{}:{}: node '{}' has {} GPUs ('{}') but matches node pool '{}' of {} GPUs",
                                                p.fleet_path, pool->line, n.name, type, model, pool->name,
                                                pool->gpu_type));
      }
    }
    p.node_pool[n.name] = static_cast<std::size_t>(pool - p.pools.data());
    p.config.node_prices[n.name] = UsdFromDouble(pool->usd_per_gpu_hour);
    p.focus_nodes[n.name] = ledger::FocusNode{pool->provider, pool->name, std::string(cost::PoolKindName(pool->kind))};
  }
  std::string list;
  for (std::size_t i = 0; i < p.pools.size(); ++i) {
    int count = 0;
    for (const auto& [node, at] : p.node_pool) count += at == i ? 1 : 0;
    const cost::NodePool& pool = p.pools[i];
    list += fmt::format("{}{} ({} {}, {} node{}, ${:.4f}/GPU-h from {})", list.empty() ? "" : "; ", pool.name,
                        cost::PoolKindName(pool.kind), pool.gpu_type, count, count == 1 ? "" : "s",
                        pool.usd_per_gpu_hour, pool.price_source);
  }
  p.price_source = fmt::format("prices: fleet file {} ('{}'), node pools: {}", p.fleet_path, p.fleet_name, list);
  return Status::Ok();
}

}  // namespace

Status ApplyStep(const LedgerOptions& o, ledger::LedgerConfig& config) {
  if (o.step.empty()) return Status::Ok();
  SEEDANCE_ASSIGN_OR_RETURN(const double seconds, ParseFlagDuration(o.step, "--step"));
  const auto ms = static_cast<std::int64_t>(std::llround(seconds * 1000.0));
  if (ms % 1000 != 0) {
    return InvalidArgumentError(fmt::format("--step '{}': a whole number of seconds (e.g. 60s, 5m)", o.step));
  }
  // Two statements of one fact: the flag wins only when the file is silent, never silently over it.
  if (config.step_in_file && config.step_ms != ms) {
    return InvalidArgumentError(fmt::format("--step {} ({} s) and step_seconds: {} in {} disagree; give one of them",
                                            o.step, ms / 1000, config.step_ms / 1000, o.config));
  }
  config.step_ms = ms;
  return Status::Ok();
}

Result<Prepared> Prepare(const LedgerOptions& o) {
  Prepared p;
  if (!o.config.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(p.config, ledger::LedgerConfig::LoadFile(o.config));
  }
  SEEDANCE_RETURN_IF_ERROR(ApplyStep(o, p.config));
  const std::string table = o.prices.empty() ? cost::BundledPriceTablePath() : o.prices;
  SEEDANCE_ASSIGN_OR_RETURN(p.catalog, cost::PriceTable::LoadFile(table));
  std::optional<sim::FleetFile> fleet;
  if (!o.fleet.empty()) {  // read first: a bad fleet file fails before the ledger is read
    SEEDANCE_ASSIGN_OR_RETURN(fleet, sim::LoadFleetFile(o.fleet));
    if (fleet->node_pools.empty()) {
      return InvalidArgumentError(o.fleet + ": no node_pools: the fleet file says how many GPUs you have, not which "
                                  "nodes are owned or rented; add node_pools (docs/FLEET_FILE.md)");
    }
    WarnImplausiblePrices(*fleet, p.catalog);
    SEEDANCE_ASSIGN_OR_RETURN(p.pools, sim::ResolveNodePools(*fleet, p.catalog));
    p.fleet_path = o.fleet;
    p.fleet_name = fleet->name;
  } else {
    p.price_source = fmt::format(
        "prices: list prices of {}{} (no --fleet: every GPU at its type's on-demand price, owned or rented; "
        "a fleet file's node_pools price your own nodes)",
        o.prices.empty() ? "the bundled data/prices/gpu_prices.csv" : o.prices,
        p.config.price_overrides.empty() ? "" : " and --config prices_usd_per_gpu_hour");
  }
  std::int64_t from = INT64_MIN, to = INT64_MAX;
  if (!o.from.empty()) {
    auto t = telemetry::ParseTimestamp(o.from);
    if (!t.has_value()) return InvalidArgumentError("--from: " + t.error().message());
    from = *t;
  }
  if (!o.to.empty()) {
    auto t = telemetry::ParseTimestamp(o.to);
    if (!t.has_value()) return InvalidArgumentError("--to: " + t.error().message());
    to = *t;
  }
  if (from >= to) return InvalidArgumentError("--from must be before --to");
  if (!std::ifstream(o.db)) return NotFoundError(o.db + ": no such ledger (run seedance ingest)");
  SEEDANCE_ASSIGN_OR_RETURN(p.ledger, ledger::Ledger::Open(o.db));
  if (fleet) SEEDANCE_RETURN_IF_ERROR(PriceNodesByPools(p));
  // The data's range: samples in whole attribution steps, and the charges other sources recorded.
  // Not the charges an earlier read wrote from telemetry (they end at a step boundary past the last
  // sample): a range that grew with each read made the first read and every rerun differ.
  SEEDANCE_ASSIGN_OR_RETURN(auto samples, ledger::SampleRange(*p.ledger));
  SEEDANCE_ASSIGN_OR_RETURN(auto charges, ledger::NonTelemetryChargeRange(*p.ledger));
  const std::int64_t step = p.config.step_ms;
  // Each sample is billed for one step: samples sparser than the step would bill part of the time.
  SEEDANCE_ASSIGN_OR_RETURN(const std::int64_t interval, ledger::GpuSampleIntervalMs(*p.ledger));
  if (interval > step) {
    return InvalidArgumentError(fmt::format(
        "{}: the GPU samples are {} s apart and step_seconds is {}: each sample is billed for one step, so {:.0f} % "
        "of the time would go unbilled; pass --step {}s or set step_seconds: {} in --config (a multiple of the samples' "
        "interval)",
        o.db, interval / 1000, step / 1000, 100.0 * (1.0 - static_cast<double>(step) / static_cast<double>(interval)),
        (interval + 999) / 1000, (interval + 999) / 1000));
  }
  std::int64_t lo = INT64_MAX, hi = INT64_MIN;
  if (samples.first != samples.second) {
    lo = samples.first / step * step;
    hi = (samples.second - 1) / step * step + step;
  }
  if (charges.first != charges.second) {
    lo = std::min(lo, charges.first);
    hi = std::max(hi, charges.second);
  }
  if (lo == INT64_MAX) {
    return InvalidArgumentError(o.db + ": the ledger holds no samples and no charges (run seedance ingest)");
  }
  p.from_ms = from != INT64_MIN ? from : lo;
  p.to_ms = to != INT64_MAX ? to : hi;
  // A range with no data would read as a $0.00 bill.
  auto no_data = [&] {
    return InvalidArgumentError(fmt::format(
        "--from/--to: no data in {} .. {}; the ledger holds data from {} to {}",
        from != INT64_MIN ? telemetry::FormatTimestamp(from) : "(start)",
        to != INT64_MAX ? telemetry::FormatTimestamp(to) : "(end)", telemetry::FormatTimestamp(lo),
        telemetry::FormatTimestamp(hi)));
  };
  if (p.from_ms >= p.to_ms) return no_data();  // only one bound given, beyond the data
  const bool samples_in_range = samples.first != samples.second && p.from_ms < samples.second && p.to_ms > samples.first;
  const bool charges_in_range = charges.first != charges.second && p.from_ms < charges.second && p.to_ms > charges.first;
  if (!samples_in_range && !charges_in_range) return no_data();
  SEEDANCE_ASSIGN_OR_RETURN(
      auto telemetry,
      ledger::AttributeStoredTelemetry(*p.ledger, p.config, &p.catalog, p.from_ms, p.to_ms));
  if (telemetry.has_value()) {
    p.telemetry = std::move(*telemetry);
    p.has_telemetry = true;
  }
  if (!charges_in_range && p.telemetry.gpu_steps == 0) return no_data();  // a gap between samples
  // A GPU without a price would cost $0 and hide its waste: an error unless asked for.
  if (p.telemetry.unpriced_gpu_steps > 0 && !o.allow_unpriced) {
    std::string models;
    for (const auto& m : p.telemetry.unpriced_models) models += (models.empty() ? "'" : ", '") + m + "'";
    return InvalidArgumentError(fmt::format(
        "GPU type {} has no price ({} GPU steps in the range); add it to --prices (gpu_model,"
        "usd_per_gpu_hour_on_demand) or --config prices_usd_per_gpu_hour, or pass --allow-unpriced "
        "to leave it out",
        models, p.telemetry.unpriced_gpu_steps));
  }
  return p;
}

namespace {

using Json = nlohmann::json;

std::string Usd(Money m) { return cost::FormatUsd(m, 2); }
double UsdNumber(Money m) { return ToUsd(m); }
double Hours(std::int64_t gpu_ms) { return static_cast<double>(gpu_ms) / 3'600'000.0; }

void PrintJoinWarnings(const Prepared& p) {
  if (!p.has_telemetry) return;
  const auto& t = p.telemetry;
  if (t.unpriced_gpu_steps > 0) {
    std::string models;
    for (const auto& m : t.unpriced_models) models += (models.empty() ? "" : ", ") + m;
    std::cerr << "seedance: warning: " << t.unpriced_gpu_steps
              << " GPU steps of models without a price were left out (" << models
              << "); price them in --prices or --config prices_usd_per_gpu_hour\n";
  }
}

struct AttributeOptions {
  LedgerOptions ledger;
  std::string by = "tenant";
  std::string output = "table";
  bool hourly = false;
  std::uint64_t seed = 42;
  int mc_samples = 10'000;
};

int RunAttribute(const AttributeOptions& o) {
  auto dim = ledger::ParseDimension(o.by);
  if (!dim.has_value()) return ReportError(InvalidArgumentError("--by: " + dim.error().message()));
  if (o.output != "table" && o.output != "json" && o.output != "csv") {
    return ReportError(InvalidArgumentError("--output must be table, json or csv, got '" +
                                            o.output + "'"));
  }
  auto prepared = Prepare(o.ledger);
  if (!prepared.has_value()) return ReportError(prepared.error());
  Prepared& p = *prepared;
  PrintJoinWarnings(p);
  // idle_share other than none: the idle of empty nodes is shared too (issue 38), cluster-wide by cost.
  const bool spread_idle = p.config.idle_share != ledger::IdleShare::kNone;
  auto rep = p.ledger->Attribute(*dim, p.from_ms, p.to_ms, o.hourly, spread_idle);
  if (!rep.has_value()) return ReportError(rep.error());
  const ledger::Reconciliation& r = rep->reconciliation;
  const std::string dim_name(ledger::DimensionName(*dim));

  // Three-factor fit and Monte Carlo intervals (per tenant).
  Json apportion = nullptr;
  std::string apportion_line;
  if (p.has_telemetry) {
    auto fit = ledger::FitApportionment(p.telemetry.apportion);
    if (fit.has_value()) {
      apportion = {{"alpha", fit->alpha}, {"beta", fit->beta}, {"gamma", fit->gamma},
                   {"r2", fit->r2}, {"observations", fit->observations},
                   {"target", "power share"}};
      apportion_line = fmt::format(
          "three-factor fit (power share ~ a*time + b*membw + g*interconnect): alpha={:.3f} "
          "beta={:.3f} gamma={:.3f} R2={:.3f} ({} observations)",
          fit->alpha, fit->beta, fit->gamma, fit->r2, fit->observations);
    } else {
      apportion_line = "three-factor fit: not available (" + fit.error().message() + ")";
    }
  }
  std::vector<ledger::TenantInterval> intervals;
  auto tenants = p.ledger->CostByTenant(p.from_ms, p.to_ms, spread_idle);
  if (!tenants.has_value()) return ReportError(tenants.error());
  if (!tenants->empty()) {
    std::vector<ledger::TenantInput> in;
    for (const auto& row : *tenants) {
      ledger::TenantInput t;
      t.tenant = row.key;
      t.workload_usd = UsdNumber(row.cost);
      t.alloc = Hours(row.gpu_ms);
      t.usage = t.alloc;
      if (p.has_telemetry) {
        if (auto it = p.telemetry.tenant_inputs.find(row.key); it != p.telemetry.tenant_inputs.end()) {
          t.usage = it->second.usage;
          t.interconnect = it->second.interconnect;
        }
      }
      in.push_back(t);
    }
    Rng rng(o.seed);
    intervals = ledger::MonteCarloIntervals(in, UsdNumber(r.idle), o.mc_samples, rng);
  }

  if (o.output == "json") {
    Json rows = Json::array();
    for (const auto& row : rep->rows) {
      Json j = {{dim_name, row.key}, {"cost_usd", UsdNumber(row.cost)},
                {"cost_micro_usd", row.cost.raw()}, {"gpu_hours", Hours(row.gpu_ms)}};
      if (o.hourly) j["hour"] = telemetry::FormatTimestamp(row.hour_ms);
      rows.push_back(j);
    }
    Json unc = Json::array();
    for (const auto& t : intervals) {
      unc.push_back({{"tenant", t.tenant}, {"cost_usd", t.ledger_usd}, {"point_usd", t.point_usd},
                     {"mean_usd", t.mean_usd}, {"p2_5_usd", t.p025_usd}, {"p97_5_usd", t.p975_usd}});
    }
    Json doc = {
        {"price_source", p.price_source},
        {"dimension", dim_name},
        {"from", telemetry::FormatTimestamp(p.from_ms)},
        {"to", telemetry::FormatTimestamp(p.to_ms)},
        {"rows", rows},
        {"reconciliation",
         {{"bill_usd", UsdNumber(r.bill)},
          {"attributed_usd", UsdNumber(r.attributed)},
          {"idle_usd", UsdNumber(r.idle)},
          {"overhead_usd", UsdNumber(r.overhead)},
          {"idle_shared_usd", UsdNumber(r.idle_shared)},
          {"idle_spread_usd", UsdNumber(r.idle_spread)},
          {"bill_micro_usd", r.bill.raw()},
          {"attributed_micro_usd", r.attributed.raw()},
          {"idle_micro_usd", r.idle.raw()},
          {"overhead_micro_usd", r.overhead.raw()},
          {"exact", r.exact()}}},
        {"apportionment", apportion},
        {"uncertainty",
         {{"quantity", std::string(ledger::kMonteCarloQuantity)},
          {"samples", o.mc_samples},
          {"seed", o.seed},
          {"tenants", unc}}},
        {"join",
         {{"gpu_steps", p.telemetry.gpu_steps},
          {"by_labels", p.telemetry.joined_by_labels},
          {"by_events", p.telemetry.joined_by_events},
          {"unmatched_samples", p.telemetry.unmatched_samples},
          {"unmatched_events", p.telemetry.unmatched_events},
          {"unpriced_gpu_steps", p.telemetry.unpriced_gpu_steps},
          {"unpriced_gpu_types", p.telemetry.unpriced_models}}},
    };
    std::cout << doc.dump(2) << "\n";
  } else if (o.output == "csv") {
    std::cerr << p.price_source << "\n";
    std::cout << dim_name << (o.hourly ? ",hour" : "") << ",cost_usd,gpu_hours\n";
    for (const auto& row : rep->rows) {
      std::string key = row.key;
      if (key.find_first_of(",\"\n") != std::string::npos) {
        std::string q = "\"";
        for (char c : key) q += c == '"' ? std::string("\"\"") : std::string(1, c);
        key = q + "\"";
      }
      std::cout << key;
      if (o.hourly) std::cout << "," << telemetry::FormatTimestamp(row.hour_ms);
      std::cout << "," << ledger::DecimalUsd(row.cost) << "," << fmt::format("{:.6f}", Hours(row.gpu_ms))
                << "\n";
    }
  } else {
    std::cout << p.price_source << "\n";
    std::size_t w = dim_name.size();
    for (const auto& row : rep->rows) w = std::max(w, row.key.size());
    std::cout << fmt::format("{:<{}}{}  {:>14}  {:>10}\n", dim_name, w,
                             o.hourly ? "  hour                " : "", "cost", "GPU-hours");
    for (const auto& row : rep->rows) {
      std::cout << fmt::format("{:<{}}{}  {:>14}  {:>10.2f}\n", row.key, w,
                               o.hourly ? "  " + telemetry::FormatTimestamp(row.hour_ms) : "",
                               Usd(row.cost), Hours(row.gpu_ms));
    }
    if (!apportion_line.empty()) std::cout << apportion_line << "\n";
    // What the tenants' ledger figures hold of the idle: idle_share shares a node's idle among the
    // workloads on that node in that step, and the idle of nodes no workload used among all the
    // workloads of the period (of the hour, hourly) in proportion to their cost.
    const std::string idle_note =
        p.config.idle_share == ledger::IdleShare::kNone
            ? "idle not apportioned"
            : fmt::format("idle shared by {}, empty nodes' idle by cost", ledger::IdleShareName(p.config.idle_share));
    if (p.config.idle_share != ledger::IdleShare::kNone) {
      std::cout << fmt::format(
          "idle_share {}: {} of idle shared, of which {} among the workloads of the node and step it occurred in and "
          "{} from nodes or steps no workload used, spread over every workload in proportion to its cost; {} stays "
          "idle (hours no workload ran at all)\n",
          ledger::IdleShareName(p.config.idle_share), Usd(r.idle_shared), Usd(r.idle_shared - r.idle_spread),
          Usd(r.idle_spread), Usd(r.idle));
    }
    for (const auto& t : intervals) {
      std::cout << fmt::format("tenant {}: ledger {} ({}); {}: ${:.2f}, Monte "
                               "Carlo mean ${:.2f}, 95% interval ${:.2f} .. ${:.2f} ({} samples)\n",
                               t.tenant, Usd(UsdFromDouble(t.ledger_usd)), idle_note,
                               ledger::kMonteCarloQuantity, t.point_usd, t.mean_usd, t.p025_usd,
                               t.p975_usd, o.mc_samples);
    }
    if (p.has_telemetry) {
      std::cout << fmt::format(
          "join: {} GPU steps, {} by pod labels, {} by events; unmatched: {} samples, {} events\n",
          p.telemetry.gpu_steps, p.telemetry.joined_by_labels, p.telemetry.joined_by_events,
          p.telemetry.unmatched_samples, p.telemetry.unmatched_events);
    }
    if (const std::string note = UnpricedNote(p); !note.empty()) std::cout << note << "\n";
  }
  // The reconciliation line (stderr for machine-readable outputs).
  std::ostream& rec_out = o.output == "table" ? std::cout : std::cerr;
  rec_out << fmt::format("reconciliation: bill {} = attributed {} + idle {} + overhead {} ({})\n",
                         Usd(r.bill), Usd(r.attributed), Usd(r.idle), Usd(r.overhead),
                         r.exact() ? "exact to the micro-dollar"
                                   : fmt::format("MISMATCH by {} micro-USD",
                                                 (r.bill - r.attributed - r.idle - r.overhead).raw()));
  return r.exact() ? kExitOk : kExitFailure;
}

struct ExportOptions {
  LedgerOptions ledger;
  std::string out;
};

int RunExportFocus(const ExportOptions& o) {
  auto prepared = Prepare(o.ledger);
  if (!prepared.has_value()) return ReportError(prepared.error());
  PrintJoinWarnings(*prepared);
  const Prepared& p = *prepared;
  Status s = ledger::ExportFocus(*p.ledger, p.from_ms, p.to_ms, o.out, p.pools.empty() ? nullptr : &p.focus_nodes);
  if (!s.ok()) return ReportError(s);
  std::cout << p.price_source << "\n";
  std::cout << "wrote " << o.out << " (FOCUS 1.2 columns; ProviderName "
            << (p.pools.empty() ? "OnPrem for every node: no --fleet says who bills which node"
                                : "by node pool: owned pools the fleet file's on_prem_provider, the others their provider")
            << ")\n";
  return kExitOk;
}

struct BreakerOptions {
  LedgerOptions ledger;
  std::string output = "table";
};

int RunBreaker(const BreakerOptions& o) {
  if (o.output != "table" && o.output != "json") {
    return ReportError(InvalidArgumentError("--output must be table or json"));
  }
  auto prepared = Prepare(o.ledger);
  if (!prepared.has_value()) return ReportError(prepared.error());
  Prepared& p = *prepared;
  PrintJoinWarnings(p);
  auto hours = p.ledger->JobHours(p.from_ms, p.to_ms);
  if (!hours.has_value()) return ReportError(hours.error());
  // A threshold keyed by a name no job has would watch nothing, silently.
  for (const auto& [key, threshold] : p.config.breaker_jobs) {
    bool seen = false;
    for (const auto& h : *hours) seen = seen || h.job == key;
    if (!seen) {
      std::string jobs;
      for (const auto& h : *hours) {
        if (jobs.find(h.job) == std::string::npos && jobs.size() < 200) jobs += (jobs.empty() ? "" : ", ") + h.job;
      }
      std::cerr << fmt::format("seedance: warning: breaker.jobs.{}: no job of that name in the range (a job is its "
                               "hpc_job / job label, else its pod name: {})\n",
                               key, jobs.empty() ? "none" : jobs);
    }
  }
  auto fleet = FleetPoolsOf(p);
  if (!fleet.has_value()) return ReportError(fleet.error());
  auto findings = ledger::EvaluateBreaker(*hours, p.telemetry.evidence, p.config, &p.catalog,
                                          *fleet ? &**fleet : nullptr);
  for (const auto& f : findings) {
    if (!f.pause) continue;
    Status s = p.ledger->RecordBreakerAction(f.job, f.hour_ms, f.cost, f.threshold, true,
                                             f.suggestion);
    if (!s.ok()) return ReportError(s);
  }
  Status s = p.ledger->Flush();
  if (!s.ok()) return ReportError(s);
  if (o.output == "json") {
    Json arr = Json::array();
    for (const auto& f : findings) {
      const auto& e = f.evidence;
      arr.push_back({{"job", f.job},
                     {"tenant", f.tenant},
                     {"hour", telemetry::FormatTimestamp(f.hour_ms)},
                     {"cost_usd", UsdNumber(f.cost)},
                     {"threshold_usd", UsdNumber(f.threshold)},
                     {"evidence",
                      {{"model", e.model},
                       {"gpus", e.gpus},
                       {"utilization", e.mean_utilization},
                       {"peak_memory_mib", e.peak_memory_mib},
                       {"tensor_active", e.mean_tensor_active},
                       {"batch_size", e.batch_size},
                       {"precision", e.precision}}},
                     {"suggestion", f.suggestion},
                     {"saving_usd_per_hour", UsdNumber(f.saving_per_hour)},
                     {"saving_is_estimate", f.saving_is_estimate},
                     {"pause", f.pause}});
    }
    std::cout << Json{{"price_source", p.price_source}, {"findings", arr}, {"unpriced_gpu_types", p.telemetry.unpriced_models}}.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << p.price_source << "\n";
  if (const std::string note = UnpricedNote(p); !note.empty()) std::cout << note << "\n";
  if (findings.empty()) {
    std::cout << "no job crossed its hourly threshold (" << hours->size() << " job-hours checked)\n";
  }
  for (const auto& f : findings) {
    std::cout << fmt::format(
        "{} job {} (tenant {}): {}/h over the {}/h threshold\n  evidence: {}\n  suggestion: {}\n",
        telemetry::FormatTimestamp(f.hour_ms), f.job, f.tenant, Usd(f.cost), Usd(f.threshold),
        ledger::DescribeEvidence(f.evidence), f.suggestion);
    if (f.pause) std::cout << "  action: PAUSE requested (recorded in breaker_actions)\n";
  }
  return kExitOk;
}

}  // namespace

Action RegisterAttribute(CLI::App& app) {
  auto o = std::make_shared<AttributeOptions>();
  CLI::App* cmd = AddCommand(
      app, "attribute", "Attribute GPU cost by a dimension, reconciled to the bill",
      "Telemetry in the ledger is first charged (every GPU-second of every node to exactly one "
      "workload, idle or overhead; OpenCost max(request, usage); largest-remainder rounding, ties "
      "by id), then the ledger (telemetry and simulator charges) is summed. Dimensions: " +
      ledger::DimensionList() + ". The reconciliation line goes to stdout for table output, to "
      "stderr otherwise. The default range is the data's (samples in whole steps, and the charges "
      "other sources recorded), so a rerun reads exactly what the first read did. Exit 2 for a range "
      "with no data, or telemetry on a GPU type without a price (unless --allow-unpriced); exit 1 if "
      "the charges do not reconcile. The first line names the prices: the price table's list prices, or with --fleet "
      "the fleet file's node pools (each node by its labels or name; a node no pool matches is exit 2).",
      "seedance attribute --db ledger.db --by namespace");
  AddLedgerOptions(cmd, o->ledger);
  cmd->add_option("--by", o->by, "dimension")->capture_default_str();
  cmd->add_option("--output", o->output, "table | json | csv")->capture_default_str();
  cmd->add_flag("--hourly", o->hourly, "one row per hour and value");
  cmd->add_option("--seed", o->seed, "Monte Carlo seed")->capture_default_str();
  cmd->add_option("--mc-samples", o->mc_samples, "Monte Carlo samples")
      ->capture_default_str()
      ->check(CLI::Range(1, 10'000'000));
  return [cmd, o]() { return cmd->parsed() ? RunAttribute(*o) : -1; };
}

Action RegisterExport(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  CLI::App* exp = AddCommand(app, "export", "Export the cost ledger in a standard format", "",
                             "seedance export focus --db ledger.db --out focus.csv");
  exp->require_subcommand(1);
  CLI::App* cmd = AddCommand(*exp, "focus", "Write the ledger as a FinOps FOCUS 1.2 CSV",
                             "One row per hour, node, charge kind and workload.",
                             "seedance export focus --db ledger.db --out focus.csv");
  AddLedgerOptions(cmd, o->ledger);
  cmd->add_option("--out", o->out, "output CSV (written atomically)")->required();
  Action workload = RegisterExportWorkload(*exp);
  return [cmd, o, workload]() { return cmd->parsed() ? RunExportFocus(*o) : workload(); };
}

Action RegisterBreaker(CLI::App& app) {
  auto o = std::make_shared<BreakerOptions>();
  CLI::App* cmd = AddCommand(
      app, "breaker", "List jobs whose hourly cost crossed their threshold",
      "The cost circuit breaker: each tripped job with its evidence and a priced suggestion (a "
      "cheaper GPU by the rule advise's smaller-gpu finding uses, consolidation, precision). "
      "Thresholds come from --config breaker.jobs / breaker.default_hourly_usd; breaker.pause "
      "records a pause action in the ledger.",
      "seedance breaker --db ledger.db --config examples/attribution.yaml");
  AddLedgerOptions(cmd, o->ledger);
  cmd->add_option("--output", o->output, "table | json")->capture_default_str();
  return [cmd, o]() { return cmd->parsed() ? RunBreaker(*o) : -1; };
}

}  // namespace seedance::cli
