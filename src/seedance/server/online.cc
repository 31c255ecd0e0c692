#include "seedance/server/online.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "seedance/audit/telemetry_adapter.h"
#include "seedance/cost/money.h"
#include "seedance/gpu/catalog.h"
#include "seedance/ledger/breaker.h"
#include "seedance/ledger/telemetry_attribution.h"
#include "seedance/telemetry/parse.h"

namespace seedance::server {

ledger::LedgerConfig LedgerConfigOf(const ServerConfig& config) {
  ledger::LedgerConfig c;
  c.breaker_jobs = config.breaker_jobs;
  return c;
}

namespace {

std::string Dollars(Money m) { return cost::FormatUsd(m, 2); }

std::string Reason(std::string_view scope, const std::string& key, Money cost, Money threshold,
                   const ledger::BreakerFinding* f) {
  std::string r = fmt::format("{} {}: hourly cost {} > threshold {}: ", scope, key, Dollars(cost),
                              Dollars(threshold));
  if (f == nullptr) {
    r += "no GPU evidence for its jobs; suggestion: check the namespace's workloads";
    return r;
  }
  r += ledger::DescribeEvidence(f->evidence);
  r += "; suggestion: ";
  r += f->suggestion;
  return r;
}

BreakerCrossing Crossing(BreakerTrip::Scope scope, const std::string& key, std::int64_t hour_ms,
                         Money cost, Money threshold, std::string reason,
                         const ServerConfig& config, std::int64_t now_ms) {
  BreakerCrossing c;
  c.trip.scope = scope;
  c.trip.key = key;
  c.trip.reason = std::move(reason);
  c.trip.tripped_ms = now_ms;
  c.trip.until_ms = config.breaker_cooldown_ms > 0 ? now_ms + config.breaker_cooldown_ms : 0;
  c.hour_ms = hour_ms;
  c.cost = cost;
  c.threshold = threshold;
  return c;
}

}  // namespace

Result<std::vector<BreakerCrossing>> EvaluateBreakerOnline(ledger::Ledger& ledger,
                                                           const ServerConfig& config,
                                                           const cost::PriceTable& catalog,
                                                           std::int64_t now_ms) {
  const ledger::LedgerConfig lc = LedgerConfigOf(config);
  const std::int64_t current = now_ms / kHourMs * kHourMs;
  const std::int64_t from = current - kHourMs, to = current + kHourMs;
  SEEDANCE_ASSIGN_OR_RETURN(auto tel,
                            ledger::AttributeStoredTelemetry(ledger, lc, &catalog, from, to));
  std::map<std::pair<std::string, std::int64_t>, ledger::JobEvidence> no_evidence;
  const auto& evidence = tel.has_value() ? tel->evidence : no_evidence;
  SEEDANCE_ASSIGN_OR_RETURN(auto jobs, ledger.JobHours(from, to));
  std::vector<BreakerCrossing> out;

  // Namespaces.
  SEEDANCE_ASSIGN_OR_RETURN(auto by_ns, ledger.Attribute(ledger::Dimension::kNamespace, from, to, true));
  std::map<std::pair<std::string, std::int64_t>, std::map<std::string, Money>> ns_jobs;
  SEEDANCE_RETURN_IF_ERROR(ledger.ForEachChargeLine(from, to, [&](const ledger::Ledger::ChargeLine& l) {
    if (l.kind == ledger::ChargeKind::kWorkload) {
      ns_jobs[{l.workload.namespace_name, l.start_ms}][l.workload.job] += l.cost;
    }
  }));
  for (const auto& row : by_ns.rows) {
    if (row.key.empty()) continue;
    Money threshold = config.breaker_default_hourly;
    if (auto it = config.breaker_namespaces.find(row.key); it != config.breaker_namespaces.end()) {
      threshold = it->second;
    }
    if (threshold.raw() <= 0 || row.cost <= threshold) continue;
    // Diagnose through the namespace's most expensive job of the hour (ties by name).
    std::optional<ledger::BreakerFinding> finding;
    if (auto it = ns_jobs.find({row.key, row.hour_ms}); it != ns_jobs.end() && !it->second.empty()) {
      auto top = std::max_element(it->second.begin(), it->second.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
      });
      for (const auto& jh : jobs) {
        if (jh.job != top->first || jh.hour_ms != row.hour_ms) continue;
        ledger::LedgerConfig one = lc;
        one.breaker_jobs = {{jh.job, MicroUsd(1)}};  // any cost crosses: diagnose
        one.breaker_default_hourly = MicroUsd(0);
        auto found = ledger::EvaluateBreaker({jh}, evidence, one, &catalog);
        if (!found.empty()) finding = found.front();
      }
    }
    out.push_back(Crossing(BreakerTrip::Scope::kNamespace, row.key, row.hour_ms, row.cost, threshold,
                           Reason("namespace", row.key, row.cost, threshold,
                                  finding.has_value() ? &*finding : nullptr),
                           config, now_ms));
  }
  // Jobs.
  for (const auto& f : ledger::EvaluateBreaker(jobs, evidence, lc, &catalog)) {
    out.push_back(Crossing(BreakerTrip::Scope::kJob, f.job, f.hour_ms, f.cost, f.threshold,
                           Reason("job", f.job, f.cost, f.threshold, &f), config, now_ms));
  }
  std::stable_sort(out.begin(), out.end(), [](const BreakerCrossing& a, const BreakerCrossing& b) {
    return std::tie(a.trip.scope, a.trip.key, a.hour_ms) < std::tie(b.trip.scope, b.trip.key, b.hour_ms);
  });
  return out;
}

Result<std::map<std::string, NodeHealth>> RunAuditOnline(ledger::Ledger& ledger,
                                                         const audit::AuditConfig& config,
                                                         audit::AdmissionLedger& admission,
                                                         std::int64_t now_ms) {
  std::map<std::string, NodeHealth> out;
  SEEDANCE_ASSIGN_OR_RETURN(std::string text, ledger::SamplesAsExposition(ledger));
  if (text.empty()) return out;
  SEEDANCE_ASSIGN_OR_RETURN(auto fleet,
                            audit::LoadTelemetryText(text, "ledger", telemetry::InputFormat::kPrometheus));
  const std::int64_t now_s = now_ms / 1000;
  SEEDANCE_ASSIGN_OR_RETURN(auto fa, audit::AuditFleet(fleet, config, now_s));
  double best = 0;
  for (const auto& row : config.grades.rows) best = std::max(best, row.weight);
  for (const audit::NodeAudit& n : fa.nodes) {
    auto [it, is_new] = admission.nodes.try_emplace(n.host);
    audit::NodeAdmission& rec = it->second;
    if (is_new) {
      rec.state = audit::AdmissionState::kAdmitted;
      rec.since_s = now_s;
    }
    audit::AuditVerdict verdict = n.Verdict();
    // A node the audit has never completed keeps serving while its evidence accumulates (a
    // fresh server has under min_evidence_hours of telemetry for every node); once graded, the
    // S7.3 state machine applies in full: incomplete evidence then counts as a failure.
    const bool awaiting = rec.grade.empty() && n.outcome == audit::AuditOutcome::kIncomplete;
    if (n.outcome != audit::AuditOutcome::kIncomplete) rec.grade = n.grade;
    std::optional<audit::Transition> t;
    if (!awaiting) t = audit::ApplyAudit(config.admission, n.host, verdict, now_s, rec);
    NodeHealth h;
    h.state = rec.state;
    h.updated_ms = now_ms;
    h.grade_weight = n.outcome == audit::AuditOutcome::kIncomplete || best <= 0
                         ? 1.0
                         : std::clamp(n.weight / best, 0.0, 1.0);
    std::string why = t.has_value() ? t->reason : std::string();
    for (const auto& e : verdict.evidence) {
      if (!why.empty()) why += "; ";
      why += e;
    }
    h.reason = fmt::format("audit: node {} {} (grade {}, audit {}){}{}", n.host,
                           audit::AdmissionStateName(rec.state), rec.grade.empty() ? "ungraded" : rec.grade,
                           audit::AuditOutcomeName(n.outcome), why.empty() ? "" : ": ", why);
    if (t.has_value()) admission.log.push_back(std::move(*t));
    out[n.host] = std::move(h);
  }
  return out;
}

nlohmann::json UnitCost::ToJson() const {
  return {{"from", telemetry::FormatTimestamp(from_ms)},
          {"to", telemetry::FormatTimestamp(to_ms)},
          {"usd_per_tflops_hour", usd_per_tflops_hour},
          {"total_usd_per_hour", total_usd_per_hour},
          {"opex_usd_per_hour", opex_usd_per_hour},
          {"cooling_usd_per_hour", cooling_usd_per_hour},
          {"effective_tflops", effective_tflops},
          {"breach_rate", breach_rate},
          {"w_cooling", w_cooling},
          {"w_sla", w_sla},
          {"assumptions",
           "C_total: the ledger's bill of the period per hour; effective TFLOPS: catalog dense "
           "FP16 tensor peak x measured utilization (GR_ENGINE_ACTIVE, else GPU_UTIL) over the "
           "GPU-hours held, per hour; breach_rate: the newest ingested seedance_sla_breach_ratio "
           "gauge (0..1; 0 when none was ingested)"}};
}

Result<UnitCost> ComputeUnitCost(ledger::Ledger& ledger, const ServerConfig& config,
                                 const cost::PriceTable& catalog, double breach_rate,
                                 std::int64_t now_ms) {
  UnitCost u;
  u.to_ms = now_ms;
  u.from_ms = now_ms - std::max<std::int64_t>(config.unit_cost_period_ms, 1);
  const double hours = static_cast<double>(u.to_ms - u.from_ms) / static_cast<double>(kHourMs);
  const ledger::LedgerConfig lc = LedgerConfigOf(config);
  SEEDANCE_ASSIGN_OR_RETURN(auto tel,
                            ledger::AttributeStoredTelemetry(ledger, lc, &catalog, u.from_ms, u.to_ms));
  SEEDANCE_ASSIGN_OR_RETURN(auto rep, ledger.Attribute(ledger::Dimension::kNode, u.from_ms, u.to_ms, false));
  u.total_usd_per_hour = ToUsd(rep.reconciliation.bill) / hours;
  double tflops_hours = 0;
  if (tel.has_value()) {
    for (const auto& [key, e] : tel->evidence) {
      auto idx = gpu::ParseGpuName(e.model, gpu::NameMatch::kProduct);
      if (!idx.has_value() || e.mean_utilization <= 0) continue;
      tflops_hours += e.gpu_hours * e.mean_utilization * gpu::GpuAt(*idx).fp16_tflops;
    }
  }
  u.effective_tflops = tflops_hours / hours;
  u.opex_usd_per_hour = config.opex_usd_per_hour;
  u.cooling_usd_per_hour = config.cooling_usd_per_hour;
  u.breach_rate = std::clamp(breach_rate, 0.0, 1.0);
  u.w_cooling = 1 + 0.32 * std::min(config.cooling_usd_per_hour / 100.0, 1.0);
  u.w_sla = 1 + 2.1 * u.breach_rate;
  if (u.effective_tflops > 0) {
    u.usd_per_tflops_hour = (u.total_usd_per_hour + u.opex_usd_per_hour) / u.effective_tflops *
                            u.w_cooling * u.w_sla;
  }
  return u;
}

Result<nlohmann::json> CostReport(ledger::Ledger& ledger, const ServerConfig& config,
                                  const cost::PriceTable& catalog, ledger::Dimension by,
                                  std::int64_t from_ms, std::int64_t to_ms) {
  if (from_ms >= to_ms) return InvalidArgumentError("from must be before to");
  const ledger::LedgerConfig lc = LedgerConfigOf(config);
  auto refreshed = ledger::AttributeStoredTelemetry(ledger, lc, &catalog, from_ms, to_ms);
  if (!refreshed.has_value()) return refreshed.error();
  SEEDANCE_ASSIGN_OR_RETURN(auto rep, ledger.Attribute(by, from_ms, to_ms, false));
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& row : rep.rows) {
    rows.push_back({{"key", row.key},
                    {"cost_usd", ToUsd(row.cost)},
                    {"cost_micro_usd", row.cost.raw()},
                    {"gpu_hours", static_cast<double>(row.gpu_ms) / static_cast<double>(kHourMs)}});
  }
  const auto& r = rep.reconciliation;
  return nlohmann::json{
      {"by", std::string(ledger::DimensionName(by))},
      {"from", telemetry::FormatTimestamp(from_ms)},
      {"to", telemetry::FormatTimestamp(to_ms)},
      {"rows", rows},
      {"reconciliation",
       {{"bill_usd", ToUsd(r.bill)}, {"attributed_usd", ToUsd(r.attributed)},
        {"idle_usd", ToUsd(r.idle)}, {"overhead_usd", ToUsd(r.overhead)}, {"exact", r.exact()}}}};
}

}  // namespace seedance::server
