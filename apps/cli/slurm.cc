// seedance slurm: the controller beside slurmctld (parsing, the loop and printing; the work is in
// src/seedance/slurm).
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "commands.h"
#include "common.h"
#include "seedance/config/seedance_config.h"
#include "seedance/core/clock.h"
#include "seedance/cost/price_table.h"
#include "seedance/sim/fleet_file.h"
#include "seedance/ledger/ledger.h"
#include "seedance/slurm/controller.h"
#include "seedance/slurm/standby.h"

namespace seedance::cli {
namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }

struct SlurmFlags {
  std::string config;
  std::string db;
  std::string interval;
  std::string admission;
  std::string jobcomp;
  std::string prices;
  std::string fleet;
  bool dry_run = false;
  bool once = false;
  bool check_config = false;
  int cycles = 0;
};

std::string Stamp(double unix_s) {
  const auto t = static_cast<std::time_t>(std::floor(unix_s));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

int Run(const SlurmFlags& f) {
  auto cfg = config::LoadSimConfig(f.config);
  if (!cfg.has_value()) return ReportError(cfg.error());
  slurm::ControllerConfig cc;
  cc.slurm = cfg->slurm;
  cc.tenancy = cfg->tenancy;
  cc.admission_path = f.admission;
  cc.jobcomp_path = f.jobcomp;
  cc.dry_run = f.dry_run;
  if (!f.interval.empty()) {
    auto d = ParseFlagDuration(f.interval, "--interval");
    if (!d.has_value()) return ReportError(d.error());
    cc.slurm.interval_s = *d;
  }
  if (f.cycles < 0) return ReportError(InvalidArgumentError("--cycles: must be >= 0 (0: run until stopped)"));
  auto prices = cost::PriceTable::LoadFile(f.prices.empty() ? cost::BundledPriceTablePath() : f.prices);
  if (!prices.has_value()) return ReportError(prices.error());
  if (!f.fleet.empty()) {
    // Node pools: each node charged as it is paid for (owned at its TCO); a node no pool matches is
    // reported and not charged, never priced at a list price.
    auto fleet = sim::LoadFleetFile(f.fleet);
    if (!fleet.has_value()) return ReportError(fleet.error());
    if (fleet->node_pools.empty()) {
      return ReportError(InvalidArgumentError("--fleet " + f.fleet +
                                              ": the fleet file has no node_pools (which nodes are owned, reserved, "
                                              "on-demand or spot: docs/FLEET_FILE.md)"));
    }
    auto pools = sim::ResolveNodePools(*fleet, *prices);
    if (!pools.has_value()) return ReportError(pools.error());
    cc.node_pools = std::move(*pools);
    cc.node_pools_source = f.fleet;
  }
  std::unique_ptr<ledger::Ledger> ledger;
  if (!f.db.empty()) {
    auto l = ledger::Ledger::Open(f.db);
    if (!l.has_value()) return ReportError(l.error());
    ledger = std::move(*l);
  }
  SystemClock clock;
  ProcessRunner runner;
  auto created = slurm::Controller::Create(cc, runner, clock, *prices, ledger.get());
  if (!created.has_value()) return ReportError(created.error());
  slurm::Controller& c = **created;
  if (f.check_config) {
    // The config is valid (parsed, tenants and policy checked by Create); now what the daemon
    // needs at run time: Slurm readable, the heartbeat and lock paths writable. Nothing is changed.
    int bad = 0;
    auto check = [&](bool ok, const std::string& what) {
      std::cout << (ok ? "ok    " : "FAIL  ") << what << "\n";
      bad += ok ? 0 : 1;
    };
    check(!cc.slurm.partition.empty(), cc.slurm.partition.empty()
                                           ? "slurm.partition: empty: every partition's jobs would be managed (name one)"
                                           : "slurm.partition: " + cc.slurm.partition + " (no job of another partition is touched)");
    // The reads of a cycle (sinfo -N: one entry per node on 23.11, ignored by 22.05's --json).
    for (const std::vector<std::string>& argv : {std::vector<std::string>{"sinfo", "--json", "-N"}, {"squeue", "--json"}}) {
      auto r = runner.Run(argv);
      check(r.has_value() && r->exit_code == 0,
            JoinArgv(argv) + ": " +
                (r.has_value() ? (r->exit_code == 0 ? "readable" : "exit " + std::to_string(r->exit_code) + ": " + r->err.substr(0, r->err.find('\n')))
                               : r.error().message()));
    }
    if (!cc.slurm.heartbeat_path.empty()) {
      const std::string probe = cc.slurm.heartbeat_path + ".check";
      const Status s = slurm::WriteHeartbeat(probe, ToSeconds(clock.Now()));
      std::remove(probe.c_str());
      check(s.ok(), "slurm.heartbeat: " + cc.slurm.heartbeat_path + (s.ok() ? " writable" : ": " + s.message()) +
                        "; fail-open after " + std::to_string(static_cast<long long>(cc.slurm.fail_open_after_s)) + " s");
    } else {
      check(true, "slurm.heartbeat: none (no job_submit plugin: jobs must be submitted --hold, and nothing starts while the controller is down)");
    }
    if (!cc.slurm.lock_path.empty()) {
      auto l = slurm::LeaderLock::TryAcquire(cc.slurm.lock_path);
      check(l.has_value(), "slurm.lock: " + cc.slurm.lock_path + ": " +
                               (!l.has_value() ? l.error().message()
                                               : *l ? std::string("free (this would be the active controller)")
                                                    : "held by " + slurm::LeaderLock::Holder(cc.slurm.lock_path) + " (this would wait as standby)"));
    }
    check(true, "preempt: " + (cc.slurm.preempt_signal.empty() || cc.slurm.preempt_grace_s <= 0
                                   ? std::string("requeue at once (no signal)")
                                   : "SIG" + cc.slurm.preempt_signal + ", then requeue after " +
                                         std::to_string(static_cast<long long>(cc.slurm.preempt_grace_s)) + " s"));
    return bad == 0 ? kExitOk : kExitFailure;
  }
  signal(SIGTERM, OnSignal);
  signal(SIGINT, OnSignal);
  // Hot standby: wait on the lock until the active controller's process ends.
  std::unique_ptr<slurm::LeaderLock> lock;
  if (!cc.slurm.lock_path.empty() && !cc.dry_run) {
    bool said = false;
    while (!g_stop.load()) {
      auto l = slurm::LeaderLock::TryAcquire(cc.slurm.lock_path);
      if (!l.has_value()) return ReportError(l.error());
      if (*l) {
        lock = std::move(*l);
        if (said) std::cerr << Stamp(ToSeconds(clock.Now())) << " standby: lock taken, now the active controller\n";
        break;
      }
      if (!said) {
        std::cerr << Stamp(ToSeconds(clock.Now())) << " standby: " << cc.slurm.lock_path << " is held by "
                  << slurm::LeaderLock::Holder(cc.slurm.lock_path) << "; waiting to take over\n";
        said = true;
      }
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
      while (!g_stop.load() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!lock) return kExitOk;  // stopped while standing by
  }
  std::cerr << "seedance slurm: mode " << cc.slurm.mode << ", placement " << cc.slurm.placement << ", partition "
            << (cc.slurm.partition.empty() ? "(all)" : cc.slurm.partition) << ", every " << cc.slurm.interval_s << " s"
            << (cc.dry_run ? ", DRY RUN (no action is taken)" : "") << (ledger ? ", ledger " + f.db : "") << "\n";
  int done = 0;
  int failures = 0;
  while (!g_stop.load()) {
    auto r = c.Cycle();
    ++done;
    double wait = cc.slurm.interval_s;
    if (!r.has_value()) {
      ++failures;
      if (f.once) return ReportError(r.error());
      // Slurm unreachable or its output unreadable: nothing was done; try again, backing off.
      wait = std::min(60.0, cc.slurm.interval_s * std::pow(2.0, std::min(failures - 1, 4)));
      std::cerr << Stamp(ToSeconds(clock.Now())) << " cycle failed, no action taken: " << r.error().message()
                << "; retrying in " << wait << " s\n";
    } else {
      failures = 0;
      const std::string at = Stamp(r->now_s);
      for (const auto& a : r->actions) {
        std::cout << at << (cc.dry_run ? " [dry-run] " : " ") << slurm::FormatAction(a, cc.dry_run) << "\n";
        if (a.kind == slurm::ActionKind::kRequeue) wait = std::min(wait, 1.0);  // place the preemptor soon
      }
      // A victim's grace period ends before the next cycle: requeue it on time.
      if (r->wake_at_s > 0) wait = std::max(0.05, std::min(wait, r->wake_at_s - ToSeconds(clock.Now())));
      for (const auto& n : r->notes) std::cout << at << " note: " << n << "\n";
      std::cout << at << " cycle: " << r->queued << " queued, " << r->admitted << " released or running, " << r->blocked
                << " held for a reason" << (r->tripped.empty() ? "" : ", breaker on") << "\n"
                << std::flush;
    }
    if (f.once || (f.cycles > 0 && done >= f.cycles)) return kExitOk;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait);
    while (!g_stop.load() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // SIGTERM: hand back what it holds (jobs released to Slurm, heartbeat removed).
  const auto bye = c.Shutdown();
  for (const auto& a : bye.actions) std::cout << Stamp(bye.now_s) << " " << slurm::FormatAction(a, false) << "\n";
  for (const auto& n : bye.notes) std::cout << Stamp(bye.now_s) << " note: " << n << "\n";
  std::cout << std::flush;
  return kExitOk;
}

}  // namespace

Action RegisterSlurm(CLI::App& app) {
  auto f = std::make_shared<SlurmFlags>();
  CLI::App* cmd = AddCommand(
      app, "slurm", "Run the controller beside slurmctld: admit, place and preempt held Slurm jobs",
      "Drives a Slurm cluster with the pipeline the simulator and the server use. Submit jobs held (sbatch --hold; "
      "a pending job of the managed partition that is not held is held first). Each cycle reads sinfo --json -N and "
      "squeue --json, admits by tenancy quota (account -> tenant in the config's slurm: section, tenants and tiers "
      "in tenancy:), picks the GPU model by throughput per dollar (within the job's --gres type or --constraint) "
      "and the node by the placement policy (a node's GPUs are one model), then runs scontrol update jobid=J "
      "nodelist=N and scontrol release J; preempts with scontrol requeuehold (victims that lose the least work); holds a tripped "
      "account's new jobs with comment=\"seedance: breaker ...\" (squeue -o %k shows it); drains the audit's "
      "removed nodes (--admission) with reason \"seedance: audit ...\" and resumes them when readmitted. With "
      "--db, charges from sacct --json (or --jobcomp FILE without slurmdbd) go into the ledger, so seedance "
      "attribute --by namespace reports by account; jobs of other partitions are billed and their GPUs read "
      "(scontrol show job -d) for the telemetry join, never acted on. Every action is printed with its reason; --dry-run prints "
      "the commands without running them (use it with --once). The Slurm clients find the cluster through "
      "SLURM_CONF. A failed cycle takes no action and is retried (backing off to 60 s); SIGTERM/SIGINT stop it and "
      "release the jobs it holds to Slurm. With slurm.lock a second controller waits as hot standby; with "
      "slurm.heartbeat the job_submit plugin (deploy/slurm/job_submit.lua) fails open when the controller is down. "
      "Exit 2 on a bad config or flag. Guide: docs/SLURM.md.",
      "SLURM_CONF=/etc/slurm/slurm.conf seedance slurm --config seedance-config.yaml --db ledger.db --interval 5s");
  cmd->add_option("--config", f->config, "seedance-config.yaml (slurm: and tenancy: sections)")->required();
  cmd->add_option("--db", f->db, "the ledger (SQLite, created if absent): charges and the breaker");
  cmd->add_option("--interval", f->interval, "cycle period, e.g. 5s (default: slurm.interval, else 5s)");
  cmd->add_option("--admission", f->admission, "the audit's admission state (seedance audit run --state FILE)");
  cmd->add_option("--jobcomp", f->jobcomp, "read finished jobs from this jobcomp/filetxt file instead of sacct");
  cmd->add_option("--prices", f->prices, "GPU price CSV (default: the bundled data/prices/gpu_prices.csv)");
  cmd->add_option("--fleet", f->fleet,
                  "fleet file whose node_pools price each node's charges (by node name or partition; owned at its "
                  "TCO); a node no pool matches is reported and not charged");
  cmd->add_flag("--dry-run", f->dry_run, "print the actions and their commands; take none");
  cmd->add_flag("--once", f->once, "run one cycle and exit (exit 1 when Slurm cannot be read)");
  cmd->add_flag("--check-config", f->check_config,
                "validate the config (exit 2 naming file:line:key), then check Slurm is readable and the heartbeat and "
                "lock paths usable (exit 1 on a failed check); changes nothing");
  cmd->add_option("--cycles", f->cycles, "stop after this many cycles (0: until SIGTERM)")->capture_default_str();
  return [cmd, f]() {
    if (!cmd->parsed()) return -1;
    return Run(*f);
  };
}

}  // namespace seedance::cli
