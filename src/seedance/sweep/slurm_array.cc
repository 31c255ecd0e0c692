#include "seedance/sweep/slurm_array.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "seedance/core/file_util.h"

namespace seedance::sweep {
namespace {

// 'text' for /bin/sh: single quotes, with ' written as '\''.
std::string ShellQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string AttemptPath(const std::string& dir, int attempt, const std::string& ext) {
  return dir + "/slurm/attempt-" + std::to_string(attempt) + "." + ext;
}

// The next attempt number in DIR/slurm: one more than the largest attempt-K.ids there.
int NextAttempt(const std::string& dir) {
  int last = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/slurm", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("attempt-", 0) != 0 || e.path().extension() != ".ids") continue;
    try {
      last = std::max(last, std::stoi(name.substr(8)));
    } catch (const std::exception&) {
    }
  }
  return last + 1;
}

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    line = Trim(line);
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::string FirstLine(const std::string& text) {
  auto lines = Lines(text);
  return lines.empty() ? "" : lines.front();
}

// Polls squeue until array `job` has left the queue (empty on two polls in a row), releasing
// requeued tasks that Slurm holds until BeginTime. Progress counts the cell files of `watched`. Returns the tasks released.
Result<std::size_t> WaitForArray(const std::string& job, const std::string& dir, std::size_t total,
                                 const std::vector<const CellTask*>& watched, const SlurmOptions& options,
                                 CommandRunner& runner, Sleeper& sleeper, const Progress& progress) {
  std::size_t released = 0;
  std::map<std::string, int> released_at;  // task id -> poll of the last StartTime=now
  int failures = 0, empty_polls = 0;
  std::size_t shown = static_cast<std::size_t>(-1);
  for (int poll = 0;; ++poll) {
    SEEDANCE_ASSIGN_OR_RETURN(CommandResult q, runner.Run({"squeue", "-h", "-r", "-j", job, "-o", "%i|%T|%r"}));
    if (q.exit_code != 0) {
      if (q.err.find("Invalid job id") != std::string::npos) return released;  // purged: long gone
      if (++failures >= 10) return UnavailableError("squeue failed 10 times for job " + job + ": " + Trim(q.err));
      sleeper.Sleep(options.poll_s);
      continue;
    }
    failures = 0;
    const std::vector<std::string> rows = Lines(q.out);
    if (rows.empty()) {
      // Confirmed by a second poll a second later: a task that `scontrol requeue` is putting back
      // can be missing from squeue's listing for a moment (seen on a loaded 2-core machine).
      if (++empty_polls < 2) {
        sleeper.Sleep(std::max(options.poll_s, 1.0));
        continue;
      }
      return released;
    }
    empty_polls = 0;
    std::size_t running = 0, pending = 0;
    for (const auto& row : rows) {
      std::vector<std::string> f;
      std::stringstream ss(row);
      std::string part;
      while (std::getline(ss, part, '|')) f.push_back(part);
      if (f.size() < 3) continue;
      if (f[1] == "RUNNING" || f[1] == "COMPLETING") ++running;
      if (f[1] != "PENDING") continue;
      ++pending;
      // A requeued task waits for BeginTime (about two minutes) unless released; the update is
      // repeated every 5 polls while it stays held (it can race with the requeue itself).
      if (f[2] == "BeginTime") {
        auto it = released_at.find(f[0]);
        if (it == released_at.end() || poll - it->second >= 5) {
          SEEDANCE_ASSIGN_OR_RETURN(CommandResult u,
                                    runner.Run({"scontrol", "update", "jobid=" + f[0], "StartTime=now"}));
          if (u.exit_code == 0 && it == released_at.end()) ++released;
          released_at[f[0]] = poll;
        }
      }
    }
    std::size_t done = total - watched.size();
    for (const CellTask* t : watched) done += std::filesystem::exists(CellPath(dir, t->cell.id)) ? 1u : 0u;
    if (progress && done != shown) {
      progress("sweep: " + std::to_string(done) + "/" + std::to_string(total) + " cells done (job " + job + ": " +
               std::to_string(running) + " running, " + std::to_string(pending) + " pending)");
      shown = done;
    }
    sleeper.Sleep(options.poll_s);
  }
}

}  // namespace

void RealSleeper::Sleep(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

std::vector<std::string> SbatchCommand(const SlurmOptions& options, const std::string& dir, int attempt,
                                       std::size_t tasks) {
  std::string array = "--array=0-" + std::to_string(tasks - 1);
  if (options.array_limit > 0) {
    // Appended in two steps: GCC 12 at -O3 reports a false -Wrestrict on `"%" + std::to_string(...)`.
    array += '%';
    array += std::to_string(options.array_limit);
  }
  std::vector<std::string> cmd = {"sbatch",
                                  "--parsable",
                                  "--job-name=seedance-sweep",
                                  array,
                                  "--cpus-per-task=" + std::to_string(options.cpus_per_task),
                                  "--requeue",
                                  "--output=" + dir + "/slurm/logs/%A_%a.out"};
  if (!options.partition.empty()) cmd.push_back("--partition=" + options.partition);
  if (!options.time_limit.empty()) cmd.push_back("--time=" + options.time_limit);
  cmd.push_back(AttemptPath(dir, attempt, "sh"));
  return cmd;
}

Result<SlurmReport> RunOnSlurm(const Plan& plan, const std::string& dir, const std::vector<const CellTask*>& todo,
                               const SlurmOptions& options, CommandRunner& runner, Sleeper& sleeper,
                               const Progress& progress) {
  SlurmReport report;
  SEEDANCE_RETURN_IF_ERROR(EnsureDirectory(dir + "/slurm/logs"));
  const std::size_t total = plan.tasks.size();
  std::vector<const CellTask*> missing = todo;
  // An earlier driver run into DIR may have left an array behind (killed driver): wait for it
  // rather than run its cells twice, then count again.
  bool waited = false;
  for (int k = 1; k < NextAttempt(dir); ++k) {
    std::ifstream in(AttemptPath(dir, k, "job"));
    std::string job;
    if (!(in >> job)) continue;
    SEEDANCE_ASSIGN_OR_RETURN(CommandResult q, runner.Run({"squeue", "-h", "-j", job, "-o", "%i"}));
    if (q.exit_code != 0 || Lines(q.out).empty()) continue;
    if (progress) progress("sweep: array job " + job + " of an earlier run into this directory is still queued; waiting");
    auto w = WaitForArray(job, dir, total, missing, options, runner, sleeper, progress);
    if (!w.has_value()) return w.error();
    waited = true;
  }
  if (waited) missing = MissingCells(plan, dir);
  for (int k = 0; k < options.max_attempts && !missing.empty(); ++k) {
    SlurmAttempt a;
    a.attempt = NextAttempt(dir);
    a.cells = missing.size();
    std::string ids;
    for (const CellTask* t : missing) ids += t->cell.id + "\n";
    SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(AttemptPath(dir, a.attempt, "ids"), ids));
    const std::string script = "#!/bin/sh\n# seedance sweep, attempt " + std::to_string(a.attempt) + ": " +
                               std::to_string(missing.size()) + " cells, one per array task\nexec " +
                               ShellQuote(options.exe) + " sweep --run-task --out " + ShellQuote(dir) +
                               " --attempt " + std::to_string(a.attempt) + " --index \"$SLURM_ARRAY_TASK_ID\"\n";
    SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(AttemptPath(dir, a.attempt, "sh"), script));
    SEEDANCE_ASSIGN_OR_RETURN(CommandResult sub, runner.Run(SbatchCommand(options, dir, a.attempt, missing.size())));
    const std::string job = FirstLine(sub.out).substr(0, FirstLine(sub.out).find(';'));
    if (sub.exit_code != 0 || job.empty() || job.find_first_not_of("0123456789") != std::string::npos) {
      return UnavailableError("sbatch failed (exit " + std::to_string(sub.exit_code) +
                              "): " + Trim(sub.err.empty() ? sub.out : sub.err));
    }
    a.job_id = job;
    SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(AttemptPath(dir, a.attempt, "job"), job + "\n"));
    if (progress) {
      progress("sweep: submitted " + std::to_string(missing.size()) + " cells as Slurm array job " + job +
               " (attempt " + std::to_string(a.attempt) + ")");
    }
    SEEDANCE_ASSIGN_OR_RETURN(a.released, WaitForArray(job, dir, total, missing, options, runner, sleeper, progress));
    const std::size_t before = missing.size();
    missing = MissingCells(plan, dir);
    a.finished = before - std::min(before, missing.size());
    if (progress) {
      progress("sweep: array job " + job + " left the queue: " + std::to_string(total - missing.size()) + "/" +
               std::to_string(total) + " cells done" +
               (missing.empty() ? "" : ", " + std::to_string(missing.size()) + " missing"));
    }
    report.attempts.push_back(a);
  }
  for (const CellTask* t : missing) report.missing.push_back(t->cell.id);
  return report;
}

Status RunSlurmTask(const std::string& dir, int attempt, std::size_t index, const RunInfo& info, const Clock& clock) {
  SEEDANCE_ASSIGN_OR_RETURN(Plan plan, ReadPlan(dir));
  const std::string path = AttemptPath(dir, attempt, "ids");
  std::ifstream in(path);
  if (!in) return InvalidArgumentError(path + ": cannot open (no attempt " + std::to_string(attempt) + ")");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::vector<std::string> ids = Lines(ss.str());
  if (index >= ids.size()) {
    return InvalidArgumentError(path + ": no line " + std::to_string(index + 1) + " (the attempt has " +
                                std::to_string(ids.size()) + " cells)");
  }
  const CellTask* task = nullptr;
  for (const auto& t : plan.tasks) {
    if (t.cell.id == ids[index]) task = &t;
  }
  if (task == nullptr) {
    return InvalidArgumentError(path + ":" + std::to_string(index + 1) + ": cell '" + ids[index] +
                                "' is not in " + dir + "/plan.json");
  }
  // Already finished (a requeued task, or an overlap with a rerun): nothing to do.
  Plan one = plan;
  one.tasks = {*task};
  if (MissingCells(one, dir).empty()) return Status::Ok();
  return RunAndStore(plan, *task, dir, info, clock);
}

}  // namespace seedance::sweep
