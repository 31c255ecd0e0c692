// seedance sweep: a what-if grid (workloads x config values x policies x seeds) run on all local
// cores or as Slurm array jobs, then merged into one results.json and one HTML report.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "seedance/core/file_util.h"
#include "seedance/sweep/grid.h"
#include "seedance/sweep/slurm_array.h"
#include "seedance/sweep/sweep.h"
#include "version.h"

namespace seedance::cli {
namespace {

struct Flags {
  std::string grid;
  std::string out = "seedance-sweep";
  int threads = 0;
  bool slurm = false;
  std::string partition;
  int array_limit = 0;
  int cpus_per_task = 1;
  int max_attempts = 3;
  std::string poll = "1s";
  std::string time_limit;
  // Internal: one Slurm array task.
  bool run_task = false;
  int attempt = 0;
  long long index = -1;
};

std::string BuildId() { return std::string("seedance ") + kVersion + " (" + kGitCommit + ")"; }

std::string HostName() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

int RunTask(const Flags& f) {
  if (f.attempt < 1) return ReportError(InvalidArgumentError("--run-task: --attempt K (>= 1) is required"));
  long long index = f.index;
  if (index < 0) {
    const std::string env = Env("SLURM_ARRAY_TASK_ID");
    if (env.empty()) return ReportError(InvalidArgumentError("--run-task: --index or SLURM_ARRAY_TASK_ID is required"));
    index = std::atoll(env.c_str());
  }
  sweep::RunInfo info;
  info.host = HostName();
  info.node = Env("SLURMD_NODENAME");
  if (!Env("SLURM_ARRAY_JOB_ID").empty()) info.slurm_job = Env("SLURM_ARRAY_JOB_ID") + "_" + Env("SLURM_ARRAY_TASK_ID");
  info.attempt = f.attempt;
  SteadyClock clock;
  Status s = sweep::RunSlurmTask(f.out, f.attempt, static_cast<std::size_t>(index), info, clock);
  if (!s.ok()) return ReportError(s);
  return kExitOk;
}

// {host: cells} and one row per cell run by this driver run, from the cell files' "run" part.
nlohmann::json CellRuns(const std::string& dir, const std::vector<std::string>& ids) {
  nlohmann::json rows = nlohmann::json::array();
  std::map<std::string, int> hosts;
  for (const auto& id : ids) {
    std::ifstream in(sweep::CellPath(dir, id));
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded() || !j.contains("run")) continue;
    nlohmann::json run = j["run"];
    run["id"] = id;
    const std::string where = run.value("node", "").empty() ? run.value("host", "") : run.value("node", "");
    ++hosts[where];
    rows.push_back(std::move(run));
  }
  return nlohmann::json{{"by_host", hosts}, {"cells", rows}};
}

void PrintSummary(const nlohmann::json& results) {
  std::cout << fmt::format("{:<16} {:<44} {:<18} {:>20} {:>14} {:>10}\n", "workload", "values", "policy",
                           "total cost (USD)", "avg JCT (h)", "unfinished");
  for (const auto& g : results["summary"]) {
    std::string values;
    for (const auto& [k, v] : g["values"].items()) {
      values += (values.empty() ? "" : " ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    if (values.empty()) values = "-";
    for (const auto& p : g["policies"]) {
      const bool best = g["cheapest"].is_string() && g["cheapest"] == p["policy"];
      std::cout << fmt::format("{:<16} {:<44} {:<18} {:>20} {:>14.2f} {:>10}\n", g["workload"].get<std::string>(),
                               values, p["policy"].get<std::string>() + (best ? " *" : ""),
                               fmt::format("{:.2f} +- {:.2f}", p["total_cost_usd"]["mean"].get<double>(),
                                           p["total_cost_usd"]["sd"].get<double>()),
                               p["avg_jct_hours"]["mean"].get<double>(), p["unfinished_runs"].get<int>());
    }
  }
  std::cout << "* the cheapest policy that finished every job on every seed\n";
}

int Run(const Flags& f) {
  if (f.run_task) return RunTask(f);
  if (f.grid.empty()) return ReportError(InvalidArgumentError("--grid: a grid file is required"));
  if (!f.slurm && (!f.partition.empty() || f.array_limit > 0 || !f.time_limit.empty())) {
    return ReportError(InvalidArgumentError("--partition, --array-limit and --time-limit need --slurm"));
  }
  const auto poll = ParseFlagDuration(f.poll, "--poll");
  if (!poll.has_value()) return ReportError(poll.error());
  auto grid = sweep::LoadGrid(f.grid);
  if (!grid.has_value()) return ReportError(grid.error());
  auto plan = sweep::MakePlan(*grid, DataDir(), BuildId());
  if (!plan.has_value()) return ReportError(plan.error());
  const std::string dir = std::filesystem::absolute(f.out).lexically_normal().string();
  if (Status s = sweep::WritePlan(*plan, dir); !s.ok()) return ReportError(s);
  SteadyClock clock;
  const Duration start = clock.Now();
  const std::vector<const sweep::CellTask*> todo = sweep::MissingCells(*plan, dir);
  const std::size_t total = plan->tasks.size();
  std::cerr << "sweep: " << total << " cells, " << total - todo.size() << " already finished in " << dir << ", "
            << todo.size() << " to run " << (f.slurm ? "on Slurm" : "locally") << "\n";
  auto progress = [](const std::string& line) { std::cerr << line << "\n"; };
  nlohmann::json manifest = {{"build", plan->build},    {"grid_file", std::filesystem::absolute(f.grid).string()},
                             {"out", dir},              {"mode", f.slurm ? "slurm" : "local"},
                             {"cells_total", total},    {"cells_already_finished", total - todo.size()},
                             {"cells_to_run", todo.size()}};
  std::vector<std::string> failures;
  if (!todo.empty() && !f.slurm) {
    sweep::RunInfo info;
    info.host = HostName();
    failures = sweep::RunLocal(*plan, todo, dir, f.threads, info, clock, progress);
  } else if (!todo.empty()) {
    sweep::SlurmOptions o;
    std::error_code ec;
    o.exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    if (ec) return ReportError(UnavailableError("cannot find the seedance binary's path: " + ec.message()));
    o.partition = f.partition;
    o.array_limit = f.array_limit;
    o.cpus_per_task = f.cpus_per_task;
    o.max_attempts = f.max_attempts;
    o.poll_s = *poll;
    o.time_limit = f.time_limit;
    ProcessRunner runner;
    sweep::RealSleeper sleeper;
    auto report = sweep::RunOnSlurm(*plan, dir, todo, o, runner, sleeper, progress);
    if (!report.has_value()) return ReportError(report.error());
    nlohmann::json attempts = nlohmann::json::array();
    for (const auto& a : report->attempts) {
      attempts.push_back({{"attempt", a.attempt}, {"job_id", a.job_id}, {"cells", a.cells},
                          {"finished", a.finished}, {"released_from_begin_time", a.released}});
    }
    manifest["slurm"] = {{"partition", f.partition}, {"array_limit", f.array_limit},
                         {"cpus_per_task", f.cpus_per_task}, {"attempts", attempts}};
    for (const auto& id : report->missing) {
      const std::string why = sweep::CellError(dir, id);
      failures.push_back("cell " + id + (why.empty() ? ": no result (task cancelled, preempted or failed; see " + dir +
                                                            "/slurm/logs)"
                                                      : ": " + why));
    }
  }
  std::vector<std::string> ran;
  for (const auto* t : todo) ran.push_back(t->cell.id);
  manifest["runs"] = CellRuns(dir, ran);
  manifest["failed"] = failures;
  manifest["wall_seconds"] = ToSeconds(clock.Now() - start);
  const std::vector<const sweep::CellTask*> missing = sweep::MissingCells(*plan, dir);
  manifest["cells_missing"] = missing.size();
  if (Status s = WriteFileAtomically(dir + "/manifest.json", manifest.dump(2) + "\n"); !s.ok()) return ReportError(s);
  if (!missing.empty()) {
    for (const auto& e : failures) std::cerr << "sweep: " << e << "\n";
    std::cerr << "seedance: error: " << missing.size() << " of " << total
              << " cells have no result; rerun the same command to run only those\n";
    return kExitFailure;
  }
  auto results = sweep::MergeResults(*plan, dir);
  if (!results.has_value()) return ReportError(results.error());
  if (Status s = sweep::WriteMergedOutputs(*results, dir); !s.ok()) return ReportError(s);
  PrintSummary(*results);
  std::cout << "wrote " << dir << "/results.json, " << dir << "/sweep_report.html (manifest: " << dir
            << "/manifest.json)\n";
  return kExitOk;
}

}  // namespace

Action RegisterSweep(CLI::App& app) {
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = AddCommand(
      app, "sweep", "Run a what-if grid of simulations, locally or as Slurm array jobs",
      "Every combination of the grid's workloads, values, policies and seeds is one cell: one cost-benchmark "
      "simulation of one policy. Cells run on all local cores, or with --slurm as one Slurm array job (one task "
      "per cell, CPUs only, --requeue); each writes OUT/cells/<id>.json atomically. Cells a task could not finish "
      "are resubmitted (--max-attempts), and a rerun into the same --out runs only the cells still missing. Then "
      "OUT/results.json (cells sorted by id: the same bytes wherever they ran) and OUT/sweep_report.html are "
      "merged; hosts, times and Slurm job ids go to OUT/manifest.json. Grid format: docs/SWEEP.md.",
      "seedance sweep --grid examples/sweep-grid.yaml --slurm --array-limit 24 --out sweep-out");
  cmd->add_option("--grid", f->grid, "grid file (YAML: workloads, policies, seeds, values, config)");
  cmd->add_option("--out", f->out, "output directory (reruns into it skip finished cells)")->capture_default_str();
  cmd->add_option("--threads", f->threads, "local worker threads (0: all cores; results do not depend on it)")
      ->capture_default_str()->check(CLI::Range(0, 1024));
  cmd->add_flag("--slurm", f->slurm, "run the cells as a Slurm array job (sbatch, squeue; SLURM_CONF as usual)");
  cmd->add_option("--partition", f->partition, "Slurm partition (default: the cluster's default)");
  cmd->add_option("--array-limit", f->array_limit, "at most N array tasks at once (--array=0-M%N; 0: no limit)")
      ->capture_default_str()->check(CLI::Range(0, 1000000));
  cmd->add_option("--cpus-per-task", f->cpus_per_task, "CPUs per array task (no GPUs are requested)")
      ->capture_default_str()->check(CLI::Range(1, 1024));
  cmd->add_option("--max-attempts", f->max_attempts, "arrays submitted per run: the first plus resubmissions of missing cells")
      ->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_option("--poll", f->poll, "squeue polling interval (a duration)")->capture_default_str();
  cmd->add_option("--time-limit", f->time_limit, "Slurm --time of each task (default: the partition's)");
  // The array tasks' entry point, not for users.
  cmd->add_flag("--run-task", f->run_task)->group("");
  cmd->add_option("--attempt", f->attempt)->group("");
  cmd->add_option("--index", f->index)->group("");
  return [cmd, f]() { return cmd->parsed() ? Run(*f) : -1; };
}

}  // namespace seedance::cli
