#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"

namespace seedance::slurm {

// What the controller reads of Slurm 22.05's JSON output (`squeue --json`, `sinfo --json`,
// `sacct --json`, data_parser v0.0.38) and of jobcomp/filetxt lines. Samples captured from a real
// 22.05.8 cluster are in tests/data/slurm (README there). Errors are kInvalidArgument naming the
// command and the field: "squeue --json: jobs[2].job_id: expected an integer".

// A GPU request or inventory: "gres:gpu:h100:2", "gpu:2", "gpu:a100:2(S:0)". type "" = any model.
struct GpuGres {
  std::string type;  // as Slurm spells it (lower case in practice)
  int count = 0;
};
// Finds the gpu entry of a comma-separated GRES/TRES list; {"", 0} when there is none.
// Errors: a gpu entry whose count is not a number (`field` names it).
Result<GpuGres> ParseGpuGres(std::string_view text, const std::string& field);
// Device indices of "gpu:h100:2(IDX:0-1)" / "gpu:h100:3(IDX:0,2-3)"; empty for "(IDX:N/A)".
Result<std::vector<int>> ParseGresIndices(std::string_view text, const std::string& field);

// Slurm's host list: "n[1-3,7],gpu[01-02]-a,login" -> n1 n2 n3 n7 gpu01-a gpu02-a login (ranges
// keep their zero padding; several bracket groups in one name multiply out). "" -> {}.
// Errors: unbalanced brackets, a bad range, more than 100,000 names, a name longer than 255
// characters, more than 8 bracket groups in one name (`field` names it).
Result<std::vector<std::string>> ExpandHostlist(std::string_view text, const std::string& field);

struct SlurmJob {
  std::int64_t id = 0;
  std::string name;
  std::string account;
  std::string partition;
  std::string state;   // PENDING, RUNNING, COMPLETING, COMPLETED, CANCELLED, FAILED, REQUEUED, ...
  std::string reason;  // state_reason: JobHeldUser, JobHeldAdmin, BeginTime, None, ...
  std::string comment;
  std::string nodes;           // where it runs ("" while pending)
  std::string required_nodes;  // --nodelist / scontrol update nodelist=
  std::string features;        // --constraint
  GpuGres gpus;                // per node (tres_per_node), else per job (tres_per_job)
  bool gpus_per_job = false;   // `gpus` came from tres_per_job (--gpus): all nodes together
  std::vector<int> gpu_indices;  // while running: the devices Slurm gave it (gres_detail), all nodes
  std::vector<std::vector<int>> node_gpu_indices;  // the same per gres_detail entry (one per node)
  int node_count = 1;
  int cpus = 1;
  std::int64_t memory_mib = 0;  // per node, 0 when not requested
  int restarts = 0;             // restart_cnt: requeues so far
  std::int64_t submit_s = 0;
  std::int64_t start_s = 0;
  std::int64_t priority = 0;

  // Held by a user or admin, or requeued held (`scontrol requeuehold`: "job requeued in held state").
  bool held() const {
    return state == "PENDING" && (reason == "JobHeldUser" || reason == "JobHeldAdmin" || reason.find("held state") != std::string::npos);
  }
  bool pending() const { return state == "PENDING"; }
  // Holds GPUs on `nodes` now.
  bool active() const {
    return state == "RUNNING" || state == "COMPLETING" || state == "CONFIGURING" || state == "SUSPENDED" ||
           state == "STOPPED";
  }
  // Will not run again (a requeued job is PENDING again, not ended).
  bool ended() const { return !pending() && !active() && state != "REQUEUED" && state != "REQUEUE_HOLD" && state != "REQUEUE_FED"; }
};

struct SlurmNode {
  std::string name;
  std::string state;               // idle, mixed, allocated, down, ...
  std::vector<std::string> flags;  // DRAIN, NOT_RESPONDING, ...
  std::string reason;
  GpuGres gpus;
  int cpus = 0;
  std::int64_t memory_mib = 0;
  std::vector<std::string> partitions;

  bool drained() const;  // DRAIN flag (draining or drained)
  bool down() const;     // down, or not responding
  bool in_partition(const std::string& p) const;
};

// One incarnation of a job in accounting (sacct -D lists every requeued incarnation).
struct AcctRecord {
  std::string cluster;  // "" where the feed does not say (jobcomp)
  std::int64_t job_id = 0;
  std::string account;
  std::string state;
  std::string node;  // first node of the allocation ("" when it never ran)
  std::vector<std::string> nodes;  // every node (sacct's host list expanded; empty from jobcomp)
  std::string gpu_type;
  int gpus = 0;
  std::int64_t submit_s = 0;  // time.submission, 0 = not said
  std::int64_t start_s = 0;
  std::int64_t end_s = 0;  // 0 while running
};

// One job of `scontrol show job -d` (22.05: a "JobId=N ..." block with, while it runs, one line
// per group of nodes with the same devices: "Nodes=n[1-2] CPU_IDs=0 Mem=0 GRES=gpu:h100:2(IDX:0-1)";
// before 21.08 the devices were "GRES_IDX=gpu(IDX:0-1)").
struct JobGpuDetail {
  std::int64_t id = 0;
  std::string state;  // JobState
  std::map<std::string, std::vector<int>> node_gpus;  // node -> its GPU device indices, ascending
};
// Every job block of the text, in order. Errors: kInvalidArgument naming the line and the field
// ("scontrol show job -d: line 23: Nodes: unbalanced '['").
Result<std::vector<JobGpuDetail>> ParseScontrolJobDetail(std::string_view text);

Result<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text);
Result<std::vector<SlurmNode>> ParseSinfoJson(std::string_view text);
Result<std::vector<AcctRecord>> ParseSacctJson(std::string_view text);
// jobcomp/filetxt (JobCompType=jobcomp/filetxt): one "Key=Value ..." line per finished job.
// `name` (the file) and the line number appear in errors.
Result<std::vector<AcctRecord>> ParseJobcomp(std::string_view text, const std::string& name);

}  // namespace seedance::slurm
