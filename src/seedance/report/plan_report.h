#pragma once

#include <string>

#include "seedance/core/status.h"
#include "seedance/planner/plan.h"

// The outputs of `seedance plan`: the console table, plan.json and plan_report.html (the mix,
// every single-type baseline, the cost-against-rate chart per strategy, the assumptions).
namespace seedance::report {

std::string FormatPlanTable(const planner::PlanResult& r);
std::string PlanHtml(const planner::PlanResult& r);
// Writes DIR/plan.json and DIR/plan_report.html (each atomically; the directory is created).
Status WritePlanOutputs(const planner::PlanResult& r, const std::string& dir);

}  // namespace seedance::report
