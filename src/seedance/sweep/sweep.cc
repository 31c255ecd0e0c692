#include "seedance/sweep/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "seedance/core/file_util.h"
#include "seedance/sim/scenarios.h"

namespace seedance::sweep {
namespace {

Result<nlohmann::json> ReadJson(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(path + ": " + e.what());
  }
}

std::string Describe(const Cell& c) {
  return fmt::format("cell {} ({} {} seed {}{}{})", c.id, c.workload, c.policy, c.seed, c.values.empty() ? "" : " ",
                     c.values.empty() ? "" : c.values.dump());
}

}  // namespace

Result<Plan> MakePlan(const Grid& grid, const std::string& data_dir, const std::string& build) {
  Plan p;
  p.build = build;
  p.data_dir = data_dir;
  nlohmann::json values = nlohmann::json::object();
  for (const auto& a : grid.axes) values[a.key] = a.values;
  p.grid = {{"workloads", grid.workloads},
            {"policies", grid.policies},
            {"seeds", grid.seeds},
            {"values", values},
            {"config_file", grid.config_path.empty()
                                ? nlohmann::json(nullptr)
                                : nlohmann::json(std::filesystem::path(grid.config_path).filename().string())}};
  for (const Cell& c : ExpandGrid(grid)) {
    SEEDANCE_ASSIGN_OR_RETURN(CellTask t, TaskOf(grid, c));
    p.tasks.push_back(std::move(t));
  }
  return p;
}

Status WritePlan(const Plan& plan, const std::string& dir) {
  SEEDANCE_RETURN_IF_ERROR(EnsureDirectory(dir + "/cells"));
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : plan.tasks) tasks.push_back(TaskJson(t));
  nlohmann::json j = {{"build", plan.build}, {"data_dir", plan.data_dir}, {"grid", plan.grid}, {"cells", tasks}};
  return WriteFileAtomically(dir + "/plan.json", j.dump(1) + "\n");
}

Result<Plan> ReadPlan(const std::string& dir) {
  const std::string path = dir + "/plan.json";
  SEEDANCE_ASSIGN_OR_RETURN(nlohmann::json j, ReadJson(path));
  Plan p;
  try {
    p.build = j.at("build").get<std::string>();
    p.data_dir = j.at("data_dir").get<std::string>();
    p.grid = j.at("grid");
    const auto& cells = j.at("cells");
    if (!cells.is_array()) return InvalidArgumentError(path + ": field 'cells': expected a list");
    for (std::size_t i = 0; i < cells.size(); ++i) {
      SEEDANCE_ASSIGN_OR_RETURN(CellTask t, TaskFromJson(cells[i], path + ": cells[" + std::to_string(i) + "]"));
      p.tasks.push_back(std::move(t));
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError(path + ": " + e.what());
  }
  return p;
}

std::string CellPath(const std::string& dir, const std::string& id) { return dir + "/cells/" + id + ".json"; }

std::vector<const CellTask*> MissingCells(const Plan& plan, const std::string& dir) {
  std::vector<const CellTask*> out;
  for (const auto& t : plan.tasks) {
    auto j = ReadJson(CellPath(dir, t.cell.id));
    bool ok = false;
    if (j.has_value() && j->is_object() && j->contains("cell") && j->contains("run")) {
      const auto& c = (*j)["cell"];
      const auto& r = (*j)["run"];
      ok = c.is_object() && c.value("id", "") == t.cell.id && c.contains("params") &&
           c["params"] == t.cell.Params() && c.contains("metrics") && r.is_object() &&
           r.value("build", "") == plan.build;
    }
    if (!ok) out.push_back(&t);
  }
  return out;
}

Status RunAndStore(const Plan& plan, const CellTask& task, const std::string& dir, const RunInfo& info,
                   const Clock& clock) {
  const Duration start = clock.Now();
  auto result = RunCell(task, plan.data_dir);
  const std::string error_path = dir + "/cells/" + task.cell.id + ".error";
  if (!result.has_value()) {
    (void)WriteFileAtomically(error_path, result.error().message() + "\n");
    return result.error();
  }
  nlohmann::json run = {{"build", plan.build},          {"host", info.host},
                        {"node", info.node},            {"slurm_job", info.slurm_job},
                        {"attempt", info.attempt},      {"wall_seconds", ToSeconds(clock.Now() - start)}};
  nlohmann::json file = {{"cell", std::move(*result)}, {"run", run}};
  SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(CellPath(dir, task.cell.id), file.dump(1) + "\n"));
  std::error_code ec;
  std::filesystem::remove(error_path, ec);
  return Status::Ok();
}

std::string CellError(const std::string& dir, const std::string& id) {
  std::ifstream in(dir + "/cells/" + id + ".error");
  std::string line;
  std::getline(in, line);
  return line;
}

std::vector<std::string> RunLocal(const Plan& plan, const std::vector<const CellTask*>& todo,
                                  const std::string& dir, int threads, const RunInfo& info, const Clock& clock,
                                  const Progress& progress) {
  const std::size_t total = plan.tasks.size();
  const std::size_t already = total - todo.size();
  std::size_t n = threads > 0 ? static_cast<std::size_t>(threads)
                              : static_cast<std::size_t>(std::max(1u, std::thread::hardware_concurrency()));
  n = std::max<std::size_t>(1, std::min(n, todo.size()));
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::size_t done = 0;
  std::vector<std::string> errors(todo.size());
  auto worker = [&] {
    for (std::size_t i = next++; i < todo.size(); i = next++) {
      Status s = RunAndStore(plan, *todo[i], dir, info, clock);
      std::lock_guard<std::mutex> lock(mu);
      ++done;
      if (!s.ok()) errors[i] = Describe(todo[i]->cell) + ": " + s.message();
      if (progress) {
        progress("sweep: " + std::to_string(already + done) + "/" + std::to_string(total) + " cells done" +
                 (s.ok() ? "" : " (" + Describe(todo[i]->cell) + " failed)"));
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  std::erase_if(errors, [](const std::string& e) { return e.empty(); });
  return errors;
}

Result<nlohmann::json> MergeResults(const Plan& plan, const std::string& dir) {
  const std::vector<const CellTask*> missing = MissingCells(plan, dir);
  if (!missing.empty()) {
    std::string ids;
    for (std::size_t i = 0; i < missing.size() && i < 5; ++i) ids += (i ? ", " : "") + missing[i]->cell.id;
    if (missing.size() > 5) ids += ", ...";
    return FailedPreconditionError(std::to_string(missing.size()) + " of " + std::to_string(plan.tasks.size()) +
                                   " cells are not finished (" + ids + ")");
  }
  std::vector<nlohmann::json> cells;
  cells.reserve(plan.tasks.size());
  for (const auto& t : plan.tasks) {
    SEEDANCE_ASSIGN_OR_RETURN(nlohmann::json j, ReadJson(CellPath(dir, t.cell.id)));
    cells.push_back(std::move(j["cell"]));
  }
  // The summary: per (workload, values) group, per policy over the seeds, in expansion order.
  nlohmann::json summary = nlohmann::json::array();
  std::map<std::string, std::size_t> group_of;
  struct Acc {
    std::string policy;
    bool baseline = false, reference = false;
    std::vector<double> cost, avg, p99;
    int unfinished_runs = 0;
  };
  std::vector<std::vector<Acc>> accs;
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) {
    const Cell& c = plan.tasks[i].cell;
    const std::string key = c.workload + "|" + c.values.dump();
    auto [it, fresh] = group_of.try_emplace(key, summary.size());
    if (fresh) {
      summary.push_back({{"workload", c.workload}, {"values", c.values}});
      accs.emplace_back();
    }
    std::vector<Acc>& group = accs[it->second];
    auto a = std::find_if(group.begin(), group.end(), [&c](const Acc& x) { return x.policy == c.policy; });
    if (a == group.end()) {
      group.emplace_back();
      group.back().policy = c.policy;
      a = group.end() - 1;
    }
    const nlohmann::json& m = cells[i]["metrics"];
    const nlohmann::json& sc = cells[i]["scenario"];
    a->baseline = sc.value("baseline", false);
    a->reference = sc.value("reference", false);
    a->cost.push_back(m.value("total_cost_usd", 0.0));
    a->avg.push_back(m["avg_jct_hours"].is_number() ? m["avg_jct_hours"].get<double>() : 0.0);
    a->p99.push_back(m["p99_jct_hours"].is_number() ? m["p99_jct_hours"].get<double>() : 0.0);
    a->unfinished_runs += m.value("unfinished_jobs", 0) > 0 ? 1 : 0;
  }
  auto mean_sd = [](const std::vector<double>& v) {
    const sim::MeanSd s = sim::MeanAndSd(v);
    return nlohmann::json{{"mean", s.mean}, {"sd", s.sd}};
  };
  for (std::size_t g = 0; g < summary.size(); ++g) {
    nlohmann::json policies = nlohmann::json::array();
    const Acc* cheapest = nullptr;
    double cheapest_cost = 0;
    for (const Acc& a : accs[g]) {
      policies.push_back({{"policy", a.policy},
                          {"baseline", a.baseline},
                          {"reference", a.reference},
                          {"seeds", a.cost.size()},
                          {"total_cost_usd", mean_sd(a.cost)},
                          {"avg_jct_hours", mean_sd(a.avg)},
                          {"p99_jct_hours", mean_sd(a.p99)},
                          {"unfinished_runs", a.unfinished_runs}});
      const double cost = sim::MeanAndSd(a.cost).mean;
      if (a.reference || a.unfinished_runs > 0) continue;
      if (cheapest == nullptr || cost < cheapest_cost || (cost == cheapest_cost && a.policy < cheapest->policy)) {
        cheapest = &a;
        cheapest_cost = cost;
      }
    }
    summary[g]["policies"] = std::move(policies);
    summary[g]["cheapest"] = cheapest == nullptr ? nlohmann::json(nullptr) : nlohmann::json(cheapest->policy);
  }
  std::sort(cells.begin(), cells.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["id"].get<std::string>() < b["id"].get<std::string>();
  });
  nlohmann::json assumptions = nlohmann::json::array(
      {"each cell is one run of the cost-benchmark simulator (sim::BuildScenario, sim::Simulate) for one policy on "
       "one seeded workload instance; the LP lower bound is not computed per cell",
       "fleet (the grid's fleet file, else each workload's bundled one in data/fleets/), prices, spot availability "
       "series, speeds and policy assumptions are cost-benchmark's (docs/FLEET_FILE.md, docs/WORKLOADS.md) unless a "
       "value of the grid overrides them",
       "spot price at spot_price_ratio x on-demand where the grid sets it, else the fleet's: the fleet file's, else "
       "the price table's spot quote, else 0.37 x on-demand",
       "means and sample standard deviations are over the grid's seeds; 'cheapest' counts only policies that "
       "finished every job on every seed and are not references"});
  return nlohmann::json{{"generated_by", "seedance sweep"},
                        {"grid", plan.grid},
                        {"cells_total", plan.tasks.size()},
                        {"cells", cells},
                        {"summary", summary},
                        {"assumptions", assumptions}};
}

Status WriteMergedOutputs(const nlohmann::json& results, const std::string& dir) {
  SEEDANCE_RETURN_IF_ERROR(EnsureDirectory(dir));
  const std::string html = SweepReportHtml(results);
  SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(dir + "/results.json", results.dump(2) + "\n"));
  return WriteFileAtomically(dir + "/sweep_report.html", html);
}

}  // namespace seedance::sweep
