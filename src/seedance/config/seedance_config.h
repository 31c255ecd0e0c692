#pragma once

#include <map>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/config/cost_aware.h"
#include "seedance/tenancy/tiers.h"

namespace seedance::config {

// seedance-config.yaml, the sections every driver reads (the simulator, `seedance sweep`,
// `seedance slurm`; S3.1, S3.3, S3.4):
//   scheduler:
//     cost_aware: {enabled: bool, spot_fallback: bool, max_price_ratio: (0,1],
//                  warmup_window: duration >= 0, min_speed_ratio: (0,1], overflow_speed_ratio:
//                  [0,1], max_step_price_ratio: >= 0, spot_patience, max_spot_wait,
//                  migrate_min_restarts, migrate_after_queue: bool, spot_return_cooldown,
//                  time_value_per_hour, spot_mtbf_prior: duration > 0}
//                  (durations carry a unit, core ParseDurationSeconds: 300s, 4h; a bare
//                  number other than 0 is an error)
//     autoscaling: {mode: reactive|predictive, cold_start: duration, scale_down_delay: duration}
//     checkpoint: {cost: duration, restart: duration}
//     baselines: {checkpoint_interval: duration > 0}   # the spot baselines' (SkyPilot rows,
//                                                      # gavel-cost[-slo], gavel-las-spot)
//                                                      # checkpoint interval; 600s
//   tenancy: tiers, tenants and their quotas (S4.1-S4.3): tenancy::ParseTenancyConfig
//   slurm: what `seedance slurm` (the controller beside slurmctld) reads:
//     partition: gpu          # the partition whose jobs it manages ("" = every partition)
//     interval: 5s            # cycle period (core duration syntax), > 0
//     mode: seedance          # tenancy mode: strict | borrowing | seedance
//     placement: bestfit      # a sched placement policy name
//     accounts: {acct-a: team-a}   # Slurm account -> tenancy tenant (default: the tenant of the
//                                  # account's own name)
//     gpu_types: [H100, A100-80G]  # GPU models jobs may be given (catalog names; default: all)
//     gres_types: {h100: H100}     # Slurm GRES type -> catalog model (default: gpu::ParseGpuName)
//     breaker: {default_hourly_usd: 0, accounts: {acct-a: 2.5}}   # hourly cost per account; 0 = off
// Every key is optional; unknown keys and bad values are errors naming file:line and the key.
struct SlurmSection {
  bool present = false;  // the file has a `slurm:` section
  std::string partition;
  double interval_s = 5;
  std::string mode = "seedance";
  std::string placement = "bestfit";
  std::map<std::string, std::string> accounts;    // account -> tenant
  std::vector<std::string> gpu_types;             // catalog names, in file order
  std::map<std::string, std::string> gres_types;  // Slurm GRES type (lower case) -> catalog name
  double breaker_default_hourly_usd = 0;
  std::map<std::string, double> breaker_accounts;  // account -> hourly USD threshold
  // Preemption (issue 27): the victim gets `preempt_signal` (scancel --signal=SIG --batch), then
  // `preempt_grace_s` to checkpoint before `scontrol requeuehold`. "" or grace 0: requeue at once.
  std::string preempt_signal = "USR1";
  double preempt_grace_s = 60;
  // The checkpoint interval of a job whose comment declares none (seedance.checkpoint=15m); the
  // work preemption loses is the time since the last checkpoint. 0: no checkpoints (since start).
  double checkpoint_interval_s = 0;
  // Fail-open (issue 27): the heartbeat file the controller touches every cycle, read by the
  // job_submit plugin (deploy/slurm/job_submit.lua): new jobs are held only while it is younger
  // than fail_open_after_s. "" = no heartbeat. The hot-standby lock file ("" = no lock).
  std::string heartbeat_path;
  double fail_open_after_s = 300;
  std::string lock_path;
};

struct SimConfig {
  CostAwareConfig cost_aware;
  double cold_start_s = 180;
  double scale_down_delay_s = 600;
  double checkpoint_cost_s = 30;
  double restart_s = 60;
  // The spot baselines' checkpoint interval (a user's fixed choice). 600 s: the cheapest of
  // {150, 300, 600, 1800, 3600, 7200} s for skypilot, skypilot-any-of and skypilot-spot-only on
  // the tuning set (examples/sweep-baseline-checkpoint.yaml, docs/BENCHMARKS.md); was 1800.
  double baseline_checkpoint_interval_s = 600;
  tenancy::TenancyConfig tenancy;
  SlurmSection slurm;
};

Result<SimConfig> LoadSimConfig(const std::string& path);
Result<SimConfig> ParseSimConfig(const std::string& name, const std::string& text);

}  // namespace seedance::config
