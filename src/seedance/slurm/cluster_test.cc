// The controller against a real Slurm 22.05 cluster: tests/slurm/slurm-up.sh's three fake-GPU nodes
// (n1, n2: 4 x h100; n3: 2 x a100) with slurmdbd accounting, started by cluster_test.sh inside a
// private network namespace (SLURM_BASE and SLURM_CONF point at it). Everything is checked with
// squeue, sinfo and sacct, never with the controller's own record alone.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "seedance/audit/admission.h"
#include "seedance/config/seedance_config.h"
#include "seedance/cost/price_table.h"
#include "seedance/ledger/ledger.h"
#include "seedance/ledger/telemetry_attribution.h"
#include "seedance/telemetry/parse.h"
#include "seedance/sim/tenancy_replay.h"
#include "seedance/slurm/controller.h"
#include "seedance/slurm/testing/dcgm_lines.h"
#include "seedance/gpu/catalog.h"
#include "seedance/core/testing/require_peer.h"

namespace seedance::slurm {
namespace {

std::string Base() {
  const char* b = std::getenv("SLURM_BASE");
  return b != nullptr ? b : "";
}

// Runs a shell command, returns its stdout (trailing newline trimmed).
std::string Sh(const std::string& cmd) {
  ProcessRunner runner(120);
  auto r = runner.Run({"bash", "-c", cmd});
  EXPECT_TRUE(r.has_value()) << cmd;
  if (!r.has_value()) return "";
  std::string out = r->out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::int64_t Submit(const std::string& args) {
  const std::string wrap = args.find("--wrap") == std::string::npos ? " --wrap 'sleep 600'" : "";
  const std::string out = Sh("sbatch --parsable " + args + wrap + " 2>&1");
  std::int64_t id = 0;
  try {
    id = std::stoll(out);
  } catch (...) {
    ADD_FAILURE() << "sbatch " << args << ": " << out;
  }
  return id;
}

// Polls `done` every 0.2 s until it holds (true) or `seconds` pass (false): waits for a condition,
// never for a fixed time, so a loaded machine only makes the wait longer.
bool WaitFor(double seconds, const std::function<bool()>& done) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

// squeue's %M ("[days-][hours:]minutes:seconds") in seconds; -1 when it is not that.
std::int64_t ElapsedS(const std::string& m) {
  std::int64_t total = 0, field = 0, days = 0;
  bool digits = false;
  for (char c : m) {
    if (c >= '0' && c <= '9') {
      field = field * 10 + (c - '0');
      digits = true;
    } else if (c == ':' && digits) {
      total = total * 60 + field;
      field = 0;
      digits = false;
    } else if (c == '-' && digits) {
      days = field;
      field = 0;
      digits = false;
    } else {
      return -1;
    }
  }
  return digits ? days * 86'400 + total * 60 + field : -1;
}

// squeue -o for one job ("" when squeue no longer lists it).
std::string Job(std::int64_t id, const std::string& fmt) { return Sh("squeue -h -j " + std::to_string(id) + " -o '" + fmt + "' 2>/dev/null"); }

const char* kConfig = R"(
tenancy:
  tenants:
    - {name: gold, cohort: all, tier: gold, quota: {gpu: {nominal: 4}}}
    - {name: bronze, cohort: all, tier: bronze, quota: {gpu: {nominal: 4}}}
    - {name: burn, cohort: all, tier: silver, quota: {gpu: {nominal: 2}}}
slurm:
  partition: gpu
  interval: 1s
  mode: seedance
  placement: bestfit
  preempt: {grace: 0s}
  breaker: {accounts: {burn: 0.0001}}
)";

class SlurmCluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (Base().empty()) return;
    for (const char* a : {"gold", "bronze", "burn"}) {
      Sh(std::string("sacctmgr -i add account ") + a + " Description=x Organization=fleet >/dev/null 2>&1");
    }
    Sh("sacctmgr -i add user root Account=gold,bronze,burn >/dev/null 2>&1");
  }
  void SetUp() override {
    SEEDANCE_SKIP_WITHOUT_PEER(Base().empty()) << "SLURM_BASE not set: run through cluster_test.sh";
    Sh("scancel --user=root; for i in $(seq 100); do [ -z \"$(squeue -h)\" ] && break; sleep 0.2; done");
    auto p = cost::PriceTable::LoadFile(cost::BundledPriceTablePath());
    ASSERT_TRUE(p.has_value());
    prices_ = std::move(*p);
    auto cfg = config::ParseSimConfig("cluster_test.yaml", kConfig);
    ASSERT_TRUE(cfg.has_value()) << cfg.error().message();
    config_.slurm = cfg->slurm;
    config_.tenancy = cfg->tenancy;
    config_.admission_path = Base() + "/admission-" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
    std::remove(config_.admission_path.c_str());
    const std::string db = Base() + "/ledger-" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    std::remove(db.c_str());
    auto l = ledger::Ledger::Open(db);
    ASSERT_TRUE(l.has_value());
    ledger_ = std::move(*l);
    auto c = Controller::Create(config_, runner_, clock_, prices_, ledger_.get());
    ASSERT_TRUE(c.has_value()) << c.error().message();
    controller_ = std::move(*c);
  }
  void TearDown() override {
    if (!Base().empty()) Sh("scancel --user=root");
  }
  // Cycles every second until `done` holds (true) or `seconds` pass (false).
  bool CycleUntil(double seconds, const std::function<bool()>& done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      auto r = controller_->Cycle();
      if (r.has_value()) {
        tripped_ = r->tripped;
        for (const auto& a : r->actions) log_ += FormatAction(a, true) + "\n";
        for (const auto& n : r->notes) log_ += "note: " + n + "\n";
      } else {
        log_ += "cycle failed: " + r.error().message() + "\n";
      }
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    return false;
  }
  void Cycles(int n) {
    int k = 0;
    CycleUntil(n + 0.5, [&] { return ++k >= n; });
  }
  std::string NodeOf(std::int64_t id) const {
    for (const auto& [job, node] : controller_->releases())
      if (job == id) return node;
    return "";
  }

  SystemClock clock_;
  ProcessRunner runner_;
  cost::PriceTable prices_;
  ControllerConfig config_;
  std::unique_ptr<ledger::Ledger> ledger_;
  std::unique_ptr<Controller> controller_;
  std::string log_;
  std::set<std::string> tripped_;  // the last cycle's
};

// GPU-ms the ledger charges to Slurm job `id`.
std::int64_t LedgerGpuMs(ledger::Ledger& l, std::int64_t id) {
  auto rep = l.Attribute(ledger::Dimension::kJob, 0, INT64_MAX, false);
  EXPECT_TRUE(rep.has_value());
  std::int64_t ms = 0;
  if (rep.has_value()) {
    for (const auto& row : rep->rows)
      if (row.key == "slurm-" + std::to_string(id)) ms += row.gpu_ms;
  }
  return ms;
}

TEST_F(SlurmCluster, HeldJobsOfTwoAccountsAreReleasedWhereThePipelineChose) {
  const auto g1 = Submit("--hold -A gold --gres=gpu:h100:2");
  const auto b1 = Submit("--hold -A bronze --gres=gpu:2");        // any model: the pipeline picks it
  const auto b2 = Submit("--hold -A bronze --gres=gpu:a100:2");
  const auto b3 = Submit("--hold -A bronze --gres=gpu:h100:2");   // beyond bronze's 4: borrows (seedance)
  ASSERT_TRUE(CycleUntil(30, [&] {
    return Job(g1, "%T") == "RUNNING" && Job(b1, "%T") == "RUNNING" && Job(b2, "%T") == "RUNNING" && Job(b3, "%T") == "RUNNING";
  })) << log_;
  for (auto id : {g1, b1, b2, b3}) {
    EXPECT_EQ(Job(id, "%N"), NodeOf(id)) << "job " << id << "\n" << log_;
  }
  // The untyped request got the model ranked first by throughput per dollar, and Slurm's
  // accounting agrees.
  const std::string first(gpu::GpuAt(static_cast<gpu::GpuIndex>(controller_->gpu_order()[0])).name);
  const std::string b1_gres = Sh("scontrol -d show job " + std::to_string(b1) + " | grep -o 'GRES=gpu:[a-z0-9]*:2' | head -1");
  EXPECT_EQ(b1_gres, first == "H100" ? "GRES=gpu:h100:2" : "GRES=gpu:a100:2") << b1_gres;
  EXPECT_EQ(Job(b2, "%N"), "n3");
  // bestfit packs: g1 and the next 2-GPU H100 job share a node.
  EXPECT_EQ(controller_->releases().size(), 4u);
  // sacct: one incarnation each, on the node chosen (slurmdbd records the starts a little later).
  for (auto id : {g1, b1, b2, b3}) {
    const std::string cmd = "sacct -n -X -j " + std::to_string(id) + " -o NodeList%20 | tr -d ' '";
    EXPECT_TRUE(WaitFor(30, [&] { return Sh(cmd) == NodeOf(id); })) << "job " << id << ": sacct says " << Sh(cmd);
  }
}

TEST_F(SlurmCluster, GoldPreemptsBronzeByRequeue) {
  const auto b1 = Submit("--hold -A bronze --requeue --gres=gpu:h100:4");
  ASSERT_TRUE(CycleUntil(20, [&] { return Job(b1, "%T") == "RUNNING"; })) << log_;
  // b1 has run 2 s or more (squeue's %M: [days-][hours:]minutes:seconds), so b2 starts strictly
  // later and loses less work when preempted.
  ASSERT_TRUE(WaitFor(30, [&] { return ElapsedS(Job(b1, "%M")) >= 2; })) << Job(b1, "%M");
  const auto b2 = Submit("--hold -A bronze --requeue --gres=gpu:h100:4");  // borrows gold's idle quota
  ASSERT_TRUE(CycleUntil(20, [&] { return Job(b2, "%T") == "RUNNING"; })) << log_;
  // Both H100 nodes are full of Bronze. Gold asks for 2 H100s within its quota.
  const auto g = Submit("--hold -A gold --gres=gpu:h100:2");
  ASSERT_TRUE(CycleUntil(60, [&] { return Job(g, "%T") == "RUNNING"; })) << log_;
  // The victim is the Bronze job that loses the least work (the later one), requeued and held.
  EXPECT_EQ(Job(b1, "%T"), "RUNNING") << log_;
  EXPECT_EQ(Job(b2, "%T"), "PENDING") << log_;
  EXPECT_EQ(Job(g, "%N"), NodeOf(b2)) << log_;
  EXPECT_NE(log_.find("requeue job " + std::to_string(b2)), std::string::npos) << log_;
  EXPECT_EQ(Sh("sacct -n -D -j " + std::to_string(b2) + " -X -o State | tr -d ' ' | head -1"), "REQUEUED");
}

TEST_F(SlurmCluster, TrippedAccountsNextJobStaysHeldWithTheBreakersReason) {
  const auto k1 = Submit("--hold -A burn --gres=gpu:h100:1");
  ASSERT_TRUE(CycleUntil(20, [&] { return Job(k1, "%T") == "RUNNING"; })) << log_;
  // A few seconds of one H100 cost more than the account's $0.0001/h: cycles until it trips.
  ASSERT_TRUE(CycleUntil(60, [&] { return tripped_.count("burn") > 0; })) << log_;
  const auto k2 = Submit("--hold -A burn --gres=gpu:h100:1");
  const auto g = Submit("--hold -A gold --gres=gpu:h100:1");
  ASSERT_TRUE(CycleUntil(30, [&] { return Job(g, "%T") == "RUNNING" && Job(k2, "%k").rfind("seedance: breaker", 0) == 0; }))
      << log_;
  Cycles(2);
  EXPECT_EQ(Job(k2, "%T|%r"), "PENDING|JobHeldUser") << log_;
  const std::string comment = Job(k2, "%k");
  EXPECT_EQ(comment.rfind("seedance: breaker: account burn spent $", 0), 0u) << comment << "\n" << log_;
  // The charges are in the ledger by account.
  auto rep = ledger_->Attribute(ledger::Dimension::kNamespace, 0, INT64_MAX, false);
  ASSERT_TRUE(rep.has_value());
  bool burn = false;
  for (const auto& row : rep->rows) burn |= row.key == "burn" && row.cost.raw() > 0;
  EXPECT_TRUE(burn);
}

TEST_F(SlurmCluster, AuditRemovedNodeIsDrainedThenResumed) {
  audit::AdmissionLedger al;
  al.nodes["n3"].state = audit::AdmissionState::kRemoved;
  al.log.push_back({"n3", 0, audit::AdmissionState::kObservation, audit::AdmissionState::kRemoved, "xid 79 twice", {}});
  std::ofstream(config_.admission_path) << al.ToJson();
  ASSERT_TRUE(CycleUntil(15, [&] { return Sh("sinfo -h -n n3 -o '%t'").rfind("drain", 0) == 0; })) << log_;
  EXPECT_EQ(Sh("sinfo -h -n n3 -o '%E'"), "seedance: audit removed the node: xid 79 twice");
  const auto a = Submit("--hold -A gold --gres=gpu:a100:1");  // only n3 has A100s: stays held
  Cycles(3);
  EXPECT_EQ(Job(a, "%T|%r"), "PENDING|JobHeldUser");
  al.nodes["n3"].state = audit::AdmissionState::kAdmitted;
  std::ofstream(config_.admission_path) << al.ToJson();
  ASSERT_TRUE(CycleUntil(20, [&] { return Job(a, "%T") == "RUNNING"; })) << log_;
  EXPECT_EQ(Sh("sinfo -h -n n3 -o '%t'").find("drain"), std::string::npos);
}

// Runs real commands, and kills slurmctld right after the first `scontrol release` it passes on.
class KillCtldAfterFirstRelease final : public CommandRunner {
 public:
  Result<CommandResult> Run(const std::vector<std::string>& argv) override {
    auto r = real_.Run(argv);
    if (!fired && argv.size() >= 2 && argv[0] == "scontrol" && argv[1] == "release") {
      fired = true;
      Sh("kill $(cat " + Base() + "/run/slurmctld.pid); while kill -0 $(cat " + Base() + "/run/slurmctld.pid) 2>/dev/null; do sleep 0.1; done");
    }
    return r;
  }
  bool fired = false;

 private:
  ProcessRunner real_;
};

TEST_F(SlurmCluster, SlurmctldRestartedMidCycleResumesWithoutDuplicateReleases) {
  KillCtldAfterFirstRelease runner;
  auto c = Controller::Create(config_, runner, clock_, prices_, nullptr);
  ASSERT_TRUE(c.has_value());
  const auto j1 = Submit("--hold -A gold --gres=gpu:h100:1");
  const auto j2 = Submit("--hold -A gold --gres=gpu:h100:1");
  const auto j3 = Submit("--hold -A bronze --gres=gpu:h100:1");
  auto r = (*c)->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_TRUE(runner.fired);
  int failed = 0;
  for (const auto& a : r->actions) failed += a.ok ? 0 : 1;
  EXPECT_EQ(failed, 2);  // the releases after the kill
  auto down = (*c)->Cycle();
  EXPECT_FALSE(down.has_value());  // cannot read: no action
  // slurmctld comes back (its state is saved).
  Sh("cd " + Base() + " && (slurmctld -D -f $SLURM_CONF > log/slurmctld.stdout 2>&1 & echo $! > run/slurmctld.pid); "
     "for i in $(seq 300); do scontrol ping 2>/dev/null | grep -q UP && break; sleep 0.1; done");
  std::string log;
  // A deadline, not a wait: after a restart slurmctld waits for the slurmds to register again before
  // it starts released jobs, which took over 30 s once on a 2-core machine at load 12.
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  bool all = false;
  while (!all && std::chrono::steady_clock::now() < end) {
    auto rr = (*c)->Cycle();
    if (rr.has_value())
      for (const auto& a : rr->actions) log += FormatAction(a, true) + "\n";
    all = Job(j1, "%T") == "RUNNING" && Job(j2, "%T") == "RUNNING" && Job(j3, "%T") == "RUNNING";
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  ASSERT_TRUE(all) << log << Sh("squeue -o '%i %T %r %N'; sinfo -N -o '%N %t'");
  std::map<std::int64_t, int> n;
  for (const auto& [id, node] : (*c)->releases()) ++n[id];
  for (auto id : {j1, j2, j3}) {
    EXPECT_EQ(n[id], 1) << "job " << id << "\n" << log;
    EXPECT_EQ(Job(id, "%N"), (*c)->releases().empty() ? "" : [&] {
      for (const auto& [j, node] : (*c)->releases())
        if (j == id) return node;
      return std::string();
    }());
    EXPECT_EQ(Sh("scontrol show job " + std::to_string(id) + " | grep -o 'Restarts=[0-9]*'"), "Restarts=0");
  }
}

TEST_F(SlurmCluster, KilledSlurmdsRequeuedJobIsPlacedAgainAndChargedOnce) {
  const auto j = Submit("--hold -A gold --requeue --gres=gpu:h100:4");
  ASSERT_TRUE(CycleUntil(20, [&] { return Job(j, "%T") == "RUNNING"; })) << log_;
  const std::string first = Job(j, "%N");
  ASSERT_FALSE(first.empty());
  Sh("kill -9 $(cat " + Base() + "/run/slurmd-" + first + ".pid)");
  // slurmctld marks the node down after SlurmdTimeout and requeues the job; the controller holds
  // it, places it again (not on the dead node) and releases it with StartTime=now.
  ASSERT_TRUE(CycleUntil(90, [&] {
    const std::string s = Job(j, "%T|%N");
    return s.rfind("RUNNING|", 0) == 0 && s != "RUNNING|" + first;
  })) << log_;
  EXPECT_NE(log_.find("requeued by Slurm"), std::string::npos) << log_;
  // The second incarnation runs at least a second (whole-second times), then ends.
  const std::int64_t started = std::stoll(Sh("date +%s"));
  ASSERT_TRUE(WaitFor(30, [&] { return std::stoll(Sh("date +%s")) > started + 1; }));
  Sh("scancel " + std::to_string(j));
  ASSERT_TRUE(WaitFor(60, [&] { return Sh("squeue -h -j " + std::to_string(j) + " -t R,CG").empty(); }));
  // Each incarnation sacct lists is charged once: ledger GPU time = sum of (end - start) x GPUs,
  // once slurmdbd has recorded every end (it does so a little after the job ends).
  std::int64_t want_ms = 0;
  int incarnations = 0;
  std::string rows;
  ASSERT_TRUE(WaitFor(60, [&] {
    want_ms = 0;
    incarnations = 0;
    rows = Sh("sacct --json -D -j " + std::to_string(j));
    auto acct = ParseSacctJson(rows);
    if (!acct.has_value()) return false;
    bool open = false;
    for (const auto& a : *acct) {
      if (a.node.empty() || a.gpus == 0 || a.start_s <= 0) continue;
      open |= a.end_s <= 0;
      if (a.end_s <= a.start_s) continue;
      want_ms += (a.end_s - a.start_s) * a.gpus * 1000;
      ++incarnations;
    }
    return !open && incarnations >= 2;
  })) << rows;
  EXPECT_TRUE(CycleUntil(30, [&] { return LedgerGpuMs(*ledger_, j) == want_ms; }))
      << "ledger " << LedgerGpuMs(*ledger_, j) << " GPU-ms, sacct " << want_ms << "\n" << rows;
  // Bring the node back for later tests.
  Sh("cd " + Base() + " && (slurmd -D -f $SLURM_CONF -N " + first + " > log/slurmd-" + first + ".stdout 2>&1 & echo $! > run/slurmd-" +
     first + ".pid); for i in $(seq 100); do sinfo -h -n " + first + " -o %t | grep -qE '^(idle|mix|alloc)$' && break; sleep 0.3; done");
}

// The same job stream through the simulator's tenancy replay and through the controller on the
// real cluster: the same release order and nodes (times differ by Slurm's own scheduling delays).
TEST_F(SlurmCluster, ParityWithTheSimulator) {
  struct J {
    const char* account;
    const char* type;
    int gpus;
    int seconds;
  };
  // All submitted at once; run times far enough apart that Slurm's 1-2 s start delays and the 1 s
  // cycle cannot reorder their ends.
  // Gold fits at once (no preemption: the FakeSlurm parity tests cover preemption exactly); Bronze
  // borrows and waits, so quota, borrowing, GPU model and bestfit all shape the starts.
  const std::vector<J> stream = {{"gold", "h100", 2, 30},   {"gold", "a100", 1, 20},   {"bronze", "h100", 4, 12},
                                 {"bronze", "h100", 2, 40}, {"bronze", "h100", 4, 25}, {"bronze", "a100", 1, 18},
                                 {"bronze", "h100", 2, 15}};
  sim::TenancyScenario sc;
  sc.name = "slurm-parity";
  sc.config = config_.tenancy;
  sc.config.grace_s = 0;
  const auto h100 = static_cast<cluster::GpuModelIndex>(*gpu::ParseGpuName("H100", gpu::NameMatch::kName));
  const auto a100 = static_cast<cluster::GpuModelIndex>(*gpu::ParseGpuName("a100", gpu::NameMatch::kProduct));
  for (const char* n : {"n1", "n2", "n3"}) {
    cluster::NodeSpec s;
    s.name = n;
    s.cpu = Millicores(8000);
    s.memory = MiB(16000);
    s.gpu_count = std::string(n) == "n3" ? 2 : 4;
    s.model = std::string(n) == "n3" ? a100 : h100;
    sc.nodes.push_back(s);
  }
  sc.total_gpus = 10;
  sc.window_s = 1e6;
  std::vector<std::int64_t> ids;
  for (std::size_t k = 0; k < stream.size(); ++k) {
    const auto& s = stream[k];
    ids.push_back(Submit(std::string("--hold -A ") + s.account + " --gres=gpu:" + s.type + ":" + std::to_string(s.gpus) +
                         " --wrap 'sleep " + std::to_string(s.seconds) + "' -o /dev/null"));
    sim::TenancyJob j;
    j.id = ids.back();
    j.tenant = std::string(s.account) == "gold" ? 0 : 1;
    j.tier = std::string(s.account) == "gold" ? tenancy::Tier::kGold : tenancy::Tier::kBronze;
    j.arrival_s = 0;
    j.work_s = s.seconds;
    j.pod.name = std::to_string(j.id);
    j.pod.cpu = Millicores(1000);
    j.pod.num_gpu = s.gpus;
    j.pod.gpu_milli = cluster::kMilliPerGpu;
    j.pod.allowed_models = cluster::GpuModelSet::Of(std::string(s.type) == "a100" ? a100 : h100);
    j.pod.qos = j.tier == tenancy::Tier::kBronze ? cluster::Qos::kBestEffort : cluster::Qos::kGuaranteed;
    j.checkpoint_s = 1e12;
    j.busy_util = 1.0;
    sc.jobs.push_back(j);
  }
  auto sim = sim::RunTenancyReplay(sc, tenancy::TenancyMode::kSeedance);
  ASSERT_TRUE(sim.has_value()) << sim.error().message();
  ASSERT_TRUE(CycleUntil(150, [&] {
    for (auto id : ids)
      if (!Job(id, "%T").empty() && Job(id, "%T") != "COMPLETED") return false;
    return true;
  })) << log_;
  std::string sim_log;
  for (const auto& st : sim->starts) sim_log += "sim: t=" + std::to_string(st.t) + " job " + std::to_string(st.job) + " -> " + st.node + "\n";
  std::printf("%s", sim_log.c_str());
  ASSERT_EQ(controller_->releases().size(), sim->starts.size()) << sim_log << log_;
  // Starts the simulator makes at the same instant may reach Slurm in either order (two jobs that
  // end together in the simulator end a second apart on Slurm): compare instant by instant, as sets.
  for (std::size_t k = 0; k < sim->starts.size();) {
    std::size_t e = k;
    while (e < sim->starts.size() && sim->starts[e].t == sim->starts[k].t) ++e;
    std::set<std::pair<std::int64_t, std::string>> want, got;
    for (std::size_t i = k; i < e; ++i) {
      want.insert({sim->starts[i].job, sim->starts[i].node});
      got.insert(controller_->releases()[i]);
    }
    EXPECT_EQ(got, want) << "releases #" << k << ".." << e - 1 << "\n" << sim_log << log_;
    k = e;
  }
}

// ---- issue 27: each runs as its own ctest (slurm_multinode, slurm_checkpoint_signal, ...) ----
class SlurmCluster27 : public SlurmCluster {};

std::set<std::string> Hosts(const std::string& list) {
  auto h = ExpandHostlist(list, "nodes");
  EXPECT_TRUE(h.has_value()) << list;
  return h.has_value() ? std::set<std::string>(h->begin(), h->end()) : std::set<std::string>{};
}

// A 2-node job lands on 2 nodes of the model chosen (n1, n2: the only two nodes of one model),
// released with the node list seedance chose; a 2-node A100 job (one A100 node) stays held.
TEST_F(SlurmCluster27, MultinodeGangIsReleasedOntoNodesOfOneModel) {
  const auto a = Submit("--hold -A bronze -N2 --gres=gpu:a100:1");
  const auto g = Submit("--hold -A gold -N2 --gres=gpu:2");
  ASSERT_TRUE(CycleUntil(30, [&] { return Job(g, "%T") == "RUNNING"; })) << log_;
  EXPECT_EQ(Hosts(Job(g, "%N")), (std::set<std::string>{"n1", "n2"})) << log_;
  EXPECT_EQ(Hosts(Job(g, "%N")), Hosts(NodeOf(g))) << log_;
  EXPECT_EQ(Job(g, "%D"), "2");
  // Slurm gave it 2 H100s on each node: 4 in all (scontrol -d groups nodes with equal devices).
  const std::string show = Sh("scontrol -d show job " + std::to_string(g));
  EXPECT_NE(show.find("JOB_GRES=gpu:h100:4"), std::string::npos) << show;
  EXPECT_NE(show.find("GRES=gpu:h100:2(IDX:"), std::string::npos) << show;
  Cycles(2);
  EXPECT_EQ(Job(a, "%T|%r"), "PENDING|JobHeldUser") << log_;
  EXPECT_EQ(log_.find("release job " + std::to_string(a)), std::string::npos) << log_;
  // slurmdbd's record: both nodes.
  const std::string cmd = "sacct -n -X -j " + std::to_string(g) + " -o NodeList%30 | tr -d ' '";
  EXPECT_TRUE(WaitFor(30, [&] { return Hosts(Sh(cmd)) == std::set<std::string>{"n1", "n2"}; })) << Sh(cmd);
}

// Preemption with a checkpoint: the victim's batch script traps USR1 and writes it to its output;
// the line is there while the job still runs, and the requeue comes after the grace period.
TEST_F(SlurmCluster27, CheckpointSignalReachesTheVictimBeforeTheRequeue) {
  config_.slurm.preempt_signal = "USR1";
  config_.slurm.preempt_grace_s = 4;
  auto c = Controller::Create(config_, runner_, clock_, prices_, ledger_.get());
  ASSERT_TRUE(c.has_value()) << c.error().message();
  controller_ = std::move(*c);
  const std::string script = Base() + "/checkpointing.sh";
  std::ofstream(script) << "#!/bin/bash\n"
                           "trap 'echo \"USR1 $(date +%s)\"' USR1\n"
                           "echo \"started $(date +%s)\"\n"
                           "while true; do sleep 1 & wait $!; done\n";
  auto submit = [&] {
    return Submit("--hold -A bronze --requeue --gres=gpu:h100:4 -o " + Base() + "/ckpt-%j.out --wrap 'exec bash " + script + "'");
  };
  const auto b1 = submit();
  ASSERT_TRUE(CycleUntil(20, [&] { return Job(b1, "%T") == "RUNNING"; })) << log_;
  ASSERT_TRUE(WaitFor(30, [&] { return ElapsedS(Job(b1, "%M")) >= 2; }));
  const auto b2 = submit();  // borrows gold's idle quota; loses less work when preempted
  ASSERT_TRUE(CycleUntil(20, [&] { return Job(b2, "%T") == "RUNNING"; })) << log_;
  const std::string out = Base() + "/ckpt-" + std::to_string(b2) + ".out";
  ASSERT_TRUE(WaitFor(20, [&] { return Sh("cat " + out).find("started") != std::string::npos; })) << Sh("cat " + out);
  const auto g = Submit("--hold -A gold --gres=gpu:h100:2");
  // The signal reaches b2 while it still runs (the controller has not requeued it yet).
  std::string state_at_signal;
  ASSERT_TRUE(CycleUntil(30, [&] {
    if (Sh("cat " + out).find("USR1 ") == std::string::npos) return false;
    state_at_signal = Job(b2, "%T");
    return true;
  })) << log_ << Sh("cat " + out);
  EXPECT_EQ(state_at_signal, "RUNNING") << log_;
  EXPECT_NE(log_.find("signal job " + std::to_string(b2)), std::string::npos) << log_;
  EXPECT_NE(log_.find("scancel --signal=USR1 --batch " + std::to_string(b2)), std::string::npos) << log_;
  // Then the requeue, then Gold runs where b2 ran.
  ASSERT_TRUE(CycleUntil(60, [&] { return Job(g, "%T") == "RUNNING"; })) << log_;
  EXPECT_EQ(Job(b2, "%T|%r"), "PENDING|job requeued in held state") << log_;
  EXPECT_EQ(Job(b1, "%T"), "RUNNING") << log_;
  EXPECT_EQ(Sh("grep -c USR1 " + Base() + "/ckpt-" + std::to_string(b1) + ".out"), "0");
  // sacct: the requeued incarnation ended at least the grace period after the signal line.
  const std::string text = Sh("cat " + out);
  const std::int64_t signalled = std::stoll(text.substr(text.find("USR1 ") + 5));
  std::int64_t ended = 0;
  ASSERT_TRUE(WaitFor(30, [&] {
    auto acct = ParseSacctJson(Sh("sacct --json -D -j " + std::to_string(b2)));
    if (!acct.has_value()) return false;
    for (const auto& a : *acct)
      if (a.state == "REQUEUED" && a.end_s > 0) ended = a.end_s;
    return ended > 0;
  }));
  EXPECT_GE(ended - signalled, 4 - 1) << "signal at " << signalled << ", requeued at " << ended << "\n" << log_;
}

// Fail-open: slurmctld runs deploy/slurm/job_submit.lua (cluster_test.sh with JOB_SUBMIT_LUA,
// FAIL_OPEN_AFTER=5): new jobs are held while the controller's heartbeat is fresh; with the
// controller stopped, a new job starts by Slurm alone once the heartbeat is 5 s old; a controller
// shutting down removes the heartbeat, so the next job starts at once.
TEST_F(SlurmCluster27, FailOpenNewJobStartsWhenTheControllerIsDown) {
  if (std::getenv("JOB_SUBMIT_LUA") == nullptr) GTEST_SKIP() << "run as ctest slurm_fail_open (JOB_SUBMIT_LUA)";
  const std::string hb = Base() + "/run/seedance.heartbeat";
  config_.slurm.heartbeat_path = hb;
  config_.slurm.fail_open_after_s = 5;
  auto c = Controller::Create(config_, runner_, clock_, prices_, ledger_.get());
  ASSERT_TRUE(c.has_value()) << c.error().message();
  controller_ = std::move(*c);
  Cycles(1);
  ASSERT_FALSE(Sh("cat " + hb).empty());
  // Alive: a job submitted without --hold is held by the plugin, then released by seedance.
  const auto j1 = Submit("-A gold --gres=gpu:h100:1");
  EXPECT_EQ(Job(j1, "%T|%r"), "PENDING|JobHeldUser") << Sh("tail -5 " + Base() + "/log/slurmctld.log");
  ASSERT_TRUE(CycleUntil(30, [&] { return Job(j1, "%T") == "RUNNING"; })) << log_;
  // The controller stops cycling (as if killed). Right after, new jobs are still held ...
  const auto stopped = std::chrono::steady_clock::now();
  const auto j2 = Submit("-A gold --gres=gpu:h100:1");
  EXPECT_EQ(Job(j2, "%T|%r"), "PENDING|JobHeldUser");
  // ... once the heartbeat is older than fail_open_after, a new job is Slurm's alone.
  ASSERT_TRUE(WaitFor(30, [&] { return std::stoll(Sh("date +%s")) - std::stoll(Sh("cat " + hb)) > 5; }));
  const auto j3 = Submit("-A gold --gres=gpu:h100:1");
  ASSERT_TRUE(WaitFor(30, [&] { return Job(j3, "%T") == "RUNNING"; })) << Job(j3, "%T|%r");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  std::printf("fail-open: a new job ran %.1f s after the controller stopped (fail_open_after 5 s)\n", took);
  EXPECT_LT(took, 5 + 30);
  EXPECT_EQ(Job(j2, "%T|%r"), "PENDING|JobHeldUser");  // held while fresh: left to a standby
  // Back: the held job is released and the Slurm-started one adopted; then a clean stop.
  ASSERT_TRUE(CycleUntil(30, [&] { return Job(j2, "%T") == "RUNNING"; })) << log_;
  EXPECT_NE(log_.find("job " + std::to_string(j3) + ": running on"), std::string::npos) << log_;
  const auto bye = controller_->Shutdown();
  EXPECT_TRUE(bye.notes.empty());
  EXPECT_EQ(Sh("test -e " + hb + " && echo present"), "");
  const auto j4 = Submit("-A gold --gres=gpu:h100:1");
  EXPECT_TRUE(WaitFor(30, [&] { return Job(j4, "%T") == "RUNNING"; })) << Job(j4, "%T|%r");
}

// GPU telemetry per job: a 2-node job (2 H100s on each of n1, n2) runs 30 s beside a 1-GPU job;
// generated dcgm samples (1 s apart) for every GPU of the three nodes, the 2-node job's GPUs at 60%,
// every other GPU at 80% (the other job's, and work Slurm does not know of), are ingested into the
// ledger and attributed. The job's GPU-hours from its samples match its allocation (GPUs x run time
// by sacct) within 1%, at its own utilisation: no sample of a GPU it did not hold is charged to it.
TEST_F(SlurmCluster27, GpuTelemetryJoinsTheJobsOwnGpusOnEveryNode) {
  const auto other = Submit("--hold -A bronze --gres=gpu:h100:1 --wrap 'sleep 600'");
  ASSERT_TRUE(CycleUntil(30, [&] { return Job(other, "%T") == "RUNNING"; })) << log_;
  const auto gang = Submit("--hold -A gold -N2 --gres=gpu:h100:2 --wrap 'sleep 30'");
  ASSERT_TRUE(CycleUntil(30, [&] { return Job(gang, "%T") == "RUNNING"; })) << log_;
  Cycles(2);  // the devices are read (scontrol show job -d) while it runs
  // Slurm's record of the job: its nodes, devices and run time (sacct once it has ended).
  auto detail = ParseScontrolJobDetail(Sh("scontrol -d show job " + std::to_string(gang)));
  ASSERT_TRUE(detail.has_value() && detail->size() == 1) << Sh("scontrol -d show job " + std::to_string(gang));
  const auto devices = detail->front().node_gpus;
  ASSERT_EQ(devices.size(), 2u);
  std::int64_t start = 0, end = 0;
  ASSERT_TRUE(CycleUntil(90, [&] {
    auto acct = ParseSacctJson(Sh("sacct --json -D -j " + std::to_string(gang)));
    if (!acct.has_value() || acct->empty() || acct->back().end_s == 0) return false;
    start = acct->back().start_s;
    end = acct->back().end_s;
    return true;
  })) << log_;
  Cycles(2);  // the ended incarnation is charged
  ledger_->set_source("slurm");
  auto allocs = ledger_->FindJobAllocations("fleet", gang, start);
  ASSERT_TRUE(allocs.has_value()) << allocs.error().message();
  ASSERT_EQ(allocs->size(), 2u) << log_;
  for (const auto& a : *allocs) {
    EXPECT_TRUE(a.ended) << a.node;
    EXPECT_EQ(a.gpu_indices, devices.at(a.node)) << a.node;
  }
  // dcgm samples of every GPU, from 10 s before the start to 10 s after the end.
  std::vector<testing::DcgmGpu> gpus;
  for (const auto& [node, count] : std::vector<std::pair<std::string, int>>{{"n1", 4}, {"n2", 4}, {"n3", 2}}) {
    for (int i = 0; i < count; ++i) {
      testing::DcgmGpu g;
      g.node = node;
      g.index = i;
      if (node == "n3") g.model = "NVIDIA A100-SXM4-80GB";
      const bool held = devices.count(node) && std::count(devices.at(node).begin(), devices.at(node).end(), i);
      g.util = [held](std::int64_t) { return held ? 0.6 : 0.8; };
      gpus.push_back(g);
    }
  }
  const std::int64_t from_ms = (start - 10) * 1000, to_ms = (end + 10) * 1000;
  auto w = ledger_->NewSampleWriter("dcgm", 10'000);
  ASSERT_TRUE(w.has_value());
  telemetry::ParseStats stats;
  telemetry::ParseText(telemetry::InputFormat::kDcgm, testing::DcgmScrapes(gpus, from_ms, to_ms, 1000), telemetry::ParseOptions{},
                       **w, stats);
  ASSERT_EQ(stats.rejected, 0u);
  ASSERT_TRUE((*w)->Finish().ok());
  auto config = ledger::LedgerConfig::Parse(R"({"step_seconds": 1, "match_tolerance_seconds": 0})", "cfg.json");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  auto t = ledger::AttributeTelemetry(*ledger_, *config, &prices_, from_ms, to_ms);
  ASSERT_TRUE(t.has_value()) << t.error().message();
  double hours = 0, util_hours = 0;
  for (const auto& [key, ev] : t->evidence) {
    if (ev.job != "slurm-" + std::to_string(gang)) continue;
    hours += ev.gpu_hours;
    util_hours += ev.gpu_hours * ev.mean_utilization;
  }
  const double allocated = 4.0 * static_cast<double>(end - start) / 3600.0;
  std::string where;
  for (const auto& [node, idx] : devices) where += (where.empty() ? "" : " ") + node + ":" + std::to_string(idx.size());
  std::printf("gpu telemetry: job %lld ran %llds on %s GPUs: %.6f GPU-hours from samples, %.6f allocated\n",
              static_cast<long long>(gang), static_cast<long long>(end - start), where.c_str(), hours, allocated);
  ASSERT_GT(end - start, 20);
  EXPECT_NEAR(hours, allocated, 0.01 * allocated);
  EXPECT_NEAR(util_hours / hours, 0.6, 1e-6);  // none of the 80% GPUs it did not hold
}

}  // namespace
}  // namespace seedance::slurm
