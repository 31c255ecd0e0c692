#include "seedance/sweep/cell.h"

#include <string>
#include <vector>

#include "seedance/sim/engine.h"
#include "seedance/sim/scenarios.h"

namespace seedance::sweep {
namespace {

Status Field(const std::string& where, const std::string& field, const std::string& why) {
  return InvalidArgumentError(where + ": field '" + field + "': " + why);
}

}  // namespace

nlohmann::json TaskJson(const CellTask& task) {
  return nlohmann::json{{"id", task.cell.id},
                        {"index", task.cell.index},
                        {"params", task.cell.Params()},
                        {"workload_path", task.cell.workload_path},
                        {"duration_s", task.duration_s},
                        {"on_demand_quota", task.on_demand_quota},
                        {"spot_price_ratio", task.spot_price_ratio},
                        {"fleet_path", task.fleet_path},
                        {"config_yaml", task.config_yaml}};
}

Result<CellTask> TaskFromJson(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return InvalidArgumentError(where + ": expected an object");
  CellTask t;
  try {
    const auto& p = j.at("params");
    t.cell.id = j.at("id").get<std::string>();
    t.cell.index = j.at("index").get<std::size_t>();
    t.cell.workload = p.at("workload").get<std::string>();
    t.cell.policy = p.at("policy").get<std::string>();
    t.cell.seed = p.at("seed").get<std::uint64_t>();
    t.cell.values = p.at("values");
    t.cell.fleet = p.value("fleet", "");
    t.fleet_path = j.value("fleet_path", "");
    t.cell.workload_path = j.at("workload_path").get<std::string>();
    t.duration_s = j.at("duration_s").get<double>();
    t.on_demand_quota = j.at("on_demand_quota").get<int>();
    t.spot_price_ratio = j.at("spot_price_ratio").get<double>();
    t.config_yaml = j.at("config_yaml").get<std::string>();
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(where + ": " + e.what());
  }
  if (!t.cell.values.is_object()) return Field(where, "params.values", "expected an object");
  if (CellId(t.cell.Params()) != t.cell.id) {
    return Field(where, "id", "'" + t.cell.id + "' is not the hash of the cell's params (edited plan?)");
  }
  return t;
}

Result<nlohmann::json> RunCell(const CellTask& task, const std::string& data_dir) {
  SEEDANCE_ASSIGN_OR_RETURN(sim::ScenarioSpec spec, ScenarioOf(task, data_dir));
  sim::Workload w;
  sim::FleetSpec fleet;
  std::vector<std::string> notes;
  SEEDANCE_RETURN_IF_ERROR(sim::BuildScenario(spec, &w, &fleet, &notes));
  std::vector<sim::ScenarioPolicy> roster = sim::ScenarioPolicies(spec);
  if (roster.size() != 1) {
    return InvalidArgumentError("cell " + task.cell.id + ": unknown policy '" + task.cell.policy + "'");
  }
  sim::ScenarioPolicy& p = roster.front();
  sim::SimOptions opt;
  opt.round_s = 360;  // the cost scenario's rounds (sim::RunCostScenario)
  opt.seed = spec.seed;
  SEEDANCE_ASSIGN_OR_RETURN(sim::SimResult r, sim::Simulate(w, fleet, *p.policy, opt));
  nlohmann::json pools = nlohmann::json::array();
  for (const auto& pool : fleet.pools) {
    pools.push_back(fleet.gpu_types[static_cast<std::size_t>(pool.type)] + " " + std::string(sim::TierName(pool.tier)));
  }
  nlohmann::json scenario = {{"workload", w.name},
                             {"fleet", fleet.name},
                             {"jobs", static_cast<std::int64_t>(w.jobs.size())},
                             {"arrival_window_hours", w.jobs.back().arrival_s / 3600.0},
                             {"pools", pools},
                             {"policy_description", p.description},
                             {"baseline", p.baseline},
                             {"reference", p.reference}};
  nlohmann::json metrics = {{"total_cost_usd", r.total_cost_usd},
                            {"gpu_cost_usd", r.gpu_cost_usd},
                            {"cold_start_idle_usd", r.cold_start_idle_usd},
                            {"idle_held_usd", r.idle_held_usd},
                            {"avg_jct_hours", r.AvgJctHours()},
                            {"p99_jct_hours", r.P99JctHours()},
                            {"makespan_hours", r.makespan_s / 3600.0},
                            {"gpu_utilization", r.Utilization()},
                            {"spot_interruptions", r.spot_interruptions},
                            {"deadline_misses", r.deadline_misses},
                            {"unfinished_jobs", r.unfinished}};
  return nlohmann::json{{"id", task.cell.id}, {"params", task.cell.Params()}, {"scenario", scenario},
                        {"metrics", metrics}};
}

}  // namespace seedance::sweep
