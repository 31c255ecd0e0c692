#pragma once

#include <string>
#include <vector>

#include "seedance/core/clock.h"
#include "seedance/core/process.h"
#include "seedance/core/status.h"
#include "seedance/sweep/sweep.h"

namespace seedance::sweep {

// Running a sweep's cells as Slurm array jobs: one array per attempt, one task per missing cell,
// each task `seedance sweep --run-task --out DIR --attempt K --index $SLURM_ARRAY_TASK_ID` on a
// node (the same binary, by absolute path; the nodes share DIR). The cells directory is the one
// truth: a task that Slurm kills, requeues or never starts leaves no cell file, and the driver
// resubmits what is missing.

// Waits between polls; injected so tests do not sleep.
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual void Sleep(double seconds) = 0;
};
class RealSleeper final : public Sleeper {
 public:
  void Sleep(double seconds) override;
};

struct SlurmOptions {
  std::string exe;          // absolute path of the seedance binary the tasks run
  std::string partition;    // empty: the cluster's default partition
  int array_limit = 0;      // at most this many tasks at once (--array=0-N%limit); 0: no limit
  int cpus_per_task = 1;    // CPUs, not GPUs: a sweep never takes GPUs from real work
  int max_attempts = 3;     // arrays submitted per driver run (the first included)
  double poll_s = 1.0;      // squeue polling interval
  std::string time_limit;   // --time for each task; empty: the partition's default
};

// One submitted array.
struct SlurmAttempt {
  int attempt = 0;          // K of DIR/slurm/attempt-K.*; grows across reruns of the same DIR
  std::string job_id;       // the array job id sbatch printed
  std::size_t cells = 0;    // tasks in the array
  std::size_t finished = 0; // of which left a valid cell file
  std::size_t released = 0; // requeued tasks released from Slurm's BeginTime hold
};

struct SlurmReport {
  std::vector<SlurmAttempt> attempts;
  std::vector<std::string> missing;  // cell ids still missing after the last attempt
};

// The sbatch command line of one attempt (for tests and --help): sbatch --parsable
// --job-name=seedance-sweep --array=0-<n-1>[%limit] --cpus-per-task=C --requeue
// --output=DIR/slurm/logs/%A_%a.out [--partition=P] [--time=T] DIR/slurm/attempt-K.sh
std::vector<std::string> SbatchCommand(const SlurmOptions& options, const std::string& dir, int attempt,
                                       std::size_t tasks);

// First waits for any array of an earlier run into `dir` that is still queued
// (DIR/slurm/attempt-K.job), then submits `todo` (the plan's missing cells) as an array, polls squeue until the array has left
// the queue (sending `scontrol update jobid=X StartTime=now` to requeued tasks that Slurm holds
// until BeginTime), then resubmits the cells still missing, up to options.max_attempts arrays.
// Progress goes to `progress`. Errors: kUnavailable when sbatch fails or squeue keeps failing;
// the report lists cells still missing (not an error: the caller decides).
Result<SlurmReport> RunOnSlurm(const Plan& plan, const std::string& dir, const std::vector<const CellTask*>& todo,
                               const SlurmOptions& options, CommandRunner& runner, Sleeper& sleeper,
                               const Progress& progress);

// The task side: runs line `index` of DIR/slurm/attempt-K.ids (a cell that already has a valid
// file is left alone, so a requeued task is idempotent). Errors: kInvalidArgument for a bad
// index or attempt; the cell's own error otherwise.
Status RunSlurmTask(const std::string& dir, int attempt, std::size_t index, const RunInfo& info, const Clock& clock);

}  // namespace seedance::sweep
