#include "seedance/ledger/focus.h"

#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "seedance/core/file_util.h"
#include "seedance/telemetry/parse.h"

namespace seedance::ledger {
namespace {

std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

// First instant of the UTC month holding `ms`, and of the next month.
std::pair<std::int64_t, std::int64_t> MonthOf(std::int64_t ms) {
  using namespace std::chrono;  // NOLINT(google-build-using-namespace)
  sys_days day = floor<days>(sys_time<milliseconds>(milliseconds(ms)));
  year_month_day ymd{day};
  sys_days first = sys_days(ymd.year() / ymd.month() / 1);
  sys_days next = sys_days((ymd.year() / ymd.month() / 1) + months(1));
  auto to_ms = [](sys_days d) {
    return static_cast<std::int64_t>(d.time_since_epoch().count()) * 86'400'000;
  };
  return {to_ms(first), to_ms(next)};
}

std::string Hours(std::int64_t gpu_ms) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%lld.%06lld", static_cast<long long>(gpu_ms / 3'600'000),
                static_cast<long long>((gpu_ms % 3'600'000) * 1'000'000 / 3'600'000));
  return buf;
}

}  // namespace

std::string DecimalUsd(Money m) {
  std::int64_t v = m.raw();
  bool neg = v < 0;
  std::uint64_t a = neg ? static_cast<std::uint64_t>(-(v + 1)) + 1 : static_cast<std::uint64_t>(v);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s%llu.%06llu", neg ? "-" : "",
                static_cast<unsigned long long>(a / 1'000'000),
                static_cast<unsigned long long>(a % 1'000'000));
  return buf;
}

const std::vector<std::string>& FocusColumns() {
  static const std::vector<std::string> kColumns = {
      "BilledCost",        "EffectiveCost",      "ListCost",          "ContractedCost",
      "BillingCurrency",   "BillingAccountId",   "BillingAccountName", "BillingPeriodStart",
      "BillingPeriodEnd",  "ChargePeriodStart",  "ChargePeriodEnd",   "ChargeCategory",
      "ChargeClass",       "ChargeDescription",  "ChargeFrequency",   "PricingQuantity",
      "PricingUnit",       "ConsumedQuantity",   "ConsumedUnit",      "ProviderName",
      "PublisherName",     "InvoiceIssuerName",  "ServiceName",       "ServiceCategory",
      "ServiceSubcategory", "ResourceId",        "ResourceName",      "ResourceType",
      "SubAccountId",      "SubAccountName",     "Tags",              "x_ChargeKind",
      "x_Tenant",          "x_Namespace",        "x_Pod",             "x_BusinessUnit",
      "x_TaskType",        "x_DataSource",       "x_SlaTier",         "x_Job",
  };
  return kColumns;
}

Result<std::string> FocusCsv(Ledger& ledger, std::int64_t from_ms, std::int64_t to_ms, const FocusNodes* nodes) {
  static const FocusNode kOnPrem{"OnPrem", "", ""};
  std::string out;
  for (const std::string& c : FocusColumns()) out += (out.empty() ? "" : ",") + c;
  out += '\n';
  Status s = ledger.ForEachChargeLine(from_ms, to_ms, [&](const Ledger::ChargeLine& l) {
    const WorkloadDims& w = l.workload;
    auto [bp_start, bp_end] = MonthOf(l.start_ms);
    std::string cost = DecimalUsd(l.cost);
    std::string hours = Hours(l.gpu_ms);
    std::string kind(ChargeKindName(l.kind));
    std::string who = w.name.empty() ? "unallocated" : w.namespace_name + "/" + w.name;
    nlohmann::json tags = nlohmann::json::object();
    if (!w.tenant.empty()) tags["tenant"] = w.tenant;
    if (!w.namespace_name.empty()) tags["namespace"] = w.namespace_name;
    if (!w.sla_tier.empty()) tags["sla_tier"] = w.sla_tier;
    tags["charge_kind"] = kind;
    const FocusNode* node = &kOnPrem;
    if (nodes != nullptr) {
      if (auto it = nodes->find(l.node); it != nodes->end()) node = &it->second;
    }
    if (!node->pool.empty()) tags["node_pool"] = node->pool;
    if (!node->capacity.empty()) tags["capacity"] = node->capacity;
    std::string sub = w.tenant.empty() ? "" : w.tenant;
    const std::string fields[] = {
        cost, cost, cost, cost, "USD", "seedance", "Seedance cost ledger",
        telemetry::FormatTimestamp(bp_start), telemetry::FormatTimestamp(bp_end),
        telemetry::FormatTimestamp(l.start_ms), telemetry::FormatTimestamp(l.start_ms + 3'600'000),
        "Usage", "", "GPU-hours, " + kind + ", " + who, "Usage-Based", hours, "GPU-Hours", hours,
        "GPU-Hours", node->provider, node->provider, node->provider, "GPU Compute", "AI and Machine Learning",
        "Machine Learning", l.node, l.node, "GPU Node", sub, sub, tags.dump(), kind, w.tenant,
        w.namespace_name, w.name, w.business_unit, w.task_type, w.data_source, w.sla_tier, w.job};
    static_assert(std::size(fields) == 40);
    bool first = true;
    for (const std::string& f : fields) {
      if (!first) out += ',';
      out += Csv(f);
      first = false;
    }
    out += '\n';
  });
  SEEDANCE_RETURN_IF_ERROR(s);
  return out;
}

Status ExportFocus(Ledger& ledger, std::int64_t from_ms, std::int64_t to_ms,
                   const std::string& path, const FocusNodes* nodes) {
  SEEDANCE_ASSIGN_OR_RETURN(std::string csv, FocusCsv(ledger, from_ms, to_ms, nodes));
  return WriteFileAtomically(path, csv);
}

}  // namespace seedance::ledger
