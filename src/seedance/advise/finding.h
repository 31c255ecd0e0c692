#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "seedance/cost/fleet_cost.h"

namespace seedance::advise {

// What a finding rests on: how many samples (GPU steps of the ledger, or simulated jobs), the
// time range they cover, and the figures behind the dollars in words.
struct Evidence {
  std::int64_t samples = 0;
  std::string samples_unit;  // "GPU steps of 60 s", "simulated jobs"
  std::string from, to;      // RFC 3339 (ledger) or simulated span ("0 s" .. "604800 s")
  std::string detail;
};

// One recommendation: what to change, where, what it saves per month and how sure we are.
// kind: idle | low-utilization | input-stall | smaller-gpu | lever | serving.
// target: "namespace/<ns>", "tenant/<t>", "job/<job>", "node/<node>", "workload/<w>",
// "deployment/<d>". The interval [ci_low, ci_high] is in $/month; ci_basis says what it is.
struct Finding {
  std::string id;  // stable: "<kind>:<target>" (what --explain takes)
  std::string kind;
  std::string target;
  double usd_per_month = 0;
  double ci_low = 0;
  double ci_high = 0;
  std::string ci_basis;
  Evidence evidence;
  std::string action;
  std::string reproduce;  // one command that prints this figure
};

// Orders by usd_per_month (largest first), ties by id.
void SortFindings(std::vector<Finding>& findings);

// {"findings": [{id, kind, target, usd_per_month, ci_low, ci_high, ci_basis, evidence: {samples,
// samples_unit, from, to, detail}, action, reproduce}], ...}: one finding as JSON.
nlohmann::json FindingJson(const Finding& f);
// The findings as a text table (rank, $/month, interval, kind, target) with evidence, action
// and the reproduce command under each row.
std::string FindingsTable(const std::vector<Finding>& findings);

// Hours in a month for $/month figures: cost's one constant (730 = 8,760 / 12).
inline constexpr double kHoursPerMonth = static_cast<double>(cost::kHoursPerMonth);

}  // namespace seedance::advise
