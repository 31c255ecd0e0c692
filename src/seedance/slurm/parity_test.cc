// Parity: one job stream through the simulator's tenancy replay (sim::RunTenancyReplay) and through
// the Slurm controller on FakeSlurm, with the same tenants, mode and placement policy: the same jobs
// start in the same order on the same nodes. Arrivals and run times are multiples of the
// controller's cycle (10 s, the tenancy cycle), and the preemption grace period is 0 in the
// simulator (on Slurm it is the victim's KillWait), so the start times agree too.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>

#include "seedance/core/rng.h"
#include "seedance/cost/price_table.h"
#include "seedance/gpu/catalog.h"
#include "seedance/sim/tenancy_replay.h"
#include "seedance/slurm/controller.h"
#include "seedance/slurm/testing/fake_slurm.h"

namespace seedance::slurm {
namespace {

constexpr std::int64_t kEpoch = 1'796'219'000;
constexpr int kCycle = 10;

struct Stream {
  sim::TenancyScenario scenario;
  std::vector<std::string> account;  // by job index
};

Stream MakeStream(std::uint64_t seed, int jobs, int nodes, int horizon_s) {
  Stream s;
  auto& sc = s.scenario;
  sc.name = "parity";
  sc.gpu_type = "H100";
  const auto h100 = static_cast<cluster::GpuModelIndex>(*gpu::ParseGpuName("H100", gpu::NameMatch::kName));
  for (int i = 0; i < nodes; ++i) {
    cluster::NodeSpec n;
    n.name = "node-" + std::to_string(i);
    n.cpu = Millicores(96000);
    n.memory = MiB(786432);
    n.gpu_count = 8;
    n.model = h100;
    sc.nodes.push_back(n);
  }
  sc.total_gpus = 8.0 * nodes;
  const char* names[] = {"team-gold", "team-silver", "team-bronze"};
  const tenancy::Tier tiers[] = {tenancy::Tier::kGold, tenancy::Tier::kSilver, tenancy::Tier::kBronze};
  const double quota = 8.0 * nodes / 3;
  for (int t = 0; t < 3; ++t) {
    tenancy::TenantConfig tc;
    tc.name = names[t];
    tc.cohort = "all";
    tc.tier = tiers[t];
    tc.quota.push_back({"gpu", std::floor(quota), std::nullopt, std::nullopt});
    sc.config.tenants.push_back(tc);
  }
  Rng rng(seed);
  const int sizes[] = {1, 2, 4, 8};
  std::vector<sim::TenancyJob> js;
  for (int k = 0; k < jobs; ++k) {
    sim::TenancyJob j;
    j.tenant = static_cast<int>(rng.UniformDouble() * 3) % 3;
    j.tier = tiers[j.tenant];
    j.arrival_s = kCycle * std::floor(rng.UniformDouble() * horizon_s / kCycle);
    j.work_s = kCycle * (10 + std::floor(rng.UniformDouble() * 120));
    j.pod.num_gpu = sizes[static_cast<int>(rng.UniformDouble() * 4) % 4];
    j.pod.gpu_milli = cluster::kMilliPerGpu;
    j.pod.cpu = Millicores(1000);
    j.pod.qos = j.tier == tenancy::Tier::kBronze ? cluster::Qos::kBestEffort : cluster::Qos::kGuaranteed;
    j.checkpoint_s = 1e12;  // Slurm does not report checkpoints: all work since the start is at stake
    j.busy_util = 1.0;      // nor utilization: a running job counts as busy
    j.idle_tail_s = 0;
    js.push_back(j);
  }
  std::stable_sort(js.begin(), js.end(), [](const sim::TenancyJob& a, const sim::TenancyJob& b) { return a.arrival_s < b.arrival_s; });
  for (std::size_t k = 0; k < js.size(); ++k) {
    js[k].id = static_cast<std::int64_t>(k) + 1;  // FakeSlurm numbers jobs 1, 2, ... in submission order
    js[k].pod.name = std::to_string(js[k].id);
    s.account.push_back(names[js[k].tenant]);
  }
  sc.jobs = js;
  sc.window_s = 1e7;
  // The grace period is Slurm's own (the victim's KillWait); the simulator frees victims at once.
  sc.config.grace_s = 0;
  return s;
}

struct Outcome {
  std::vector<std::tuple<std::int64_t, std::string, std::int64_t>> starts;  // job, node, t
  int requeues = 0;
};

Outcome ThroughSimulator(const Stream& s) {
  auto o = sim::RunTenancyReplay(s.scenario, tenancy::TenancyMode::kSeedance);
  EXPECT_TRUE(o.has_value()) << o.error().message();
  Outcome r;
  if (!o.has_value()) return r;
  for (const auto& st : o->starts) r.starts.emplace_back(st.job, st.node, static_cast<std::int64_t>(st.t));
  r.requeues = o->preemptions;
  return r;
}

Outcome ThroughController(const Stream& s) {
  SimClock clock;
  clock.Set(std::chrono::seconds(kEpoch));
  testing::FakeSlurm fake(clock);
  for (const auto& n : s.scenario.nodes) fake.AddNode(n.name, "h100", n.gpu_count);
  ControllerConfig cfg;
  cfg.slurm.partition = "gpu";
  cfg.slurm.mode = "seedance";
  cfg.slurm.placement = "bestfit";
  cfg.slurm.interval_s = kCycle;
  cfg.slurm.preempt_grace_s = 0;  // the replay requeues at once
  cfg.tenancy = s.scenario.config;
  auto prices = cost::PriceTable::LoadFile(cost::BundledPriceTablePath());
  EXPECT_TRUE(prices.has_value());
  auto c = Controller::Create(cfg, fake, clock, *prices, nullptr);
  EXPECT_TRUE(c.has_value()) << c.error().message();
  Outcome r;
  if (!c.has_value()) return r;
  std::size_t next = 0;
  const auto& jobs = s.scenario.jobs;
  for (std::int64_t t = 0; t < 1'000'000; t += kCycle) {
    clock.Set(std::chrono::seconds(kEpoch + t));
    fake.Advance();
    while (next < jobs.size() && static_cast<std::int64_t>(jobs[next].arrival_s) == t) {
      fake.Submit(s.account[next], jobs[next].pod.num_gpu, "", jobs[next].work_s);
      ++next;
    }
    auto rep = (*c)->Cycle();
    EXPECT_TRUE(rep.has_value()) << rep.error().message();
    if (!rep.has_value()) break;
    int requeued = 0;
    for (const auto& a : rep->actions) requeued += a.kind == ActionKind::kRequeue ? 1 : 0;
    if (getenv("PARITY_DUMP"))
      for (const auto& a : rep->actions)
        if (a.kind == ActionKind::kRequeue) printf("t=%lld %s\n", static_cast<long long>(t), FormatAction(a, false).c_str());
    r.requeues += requeued;
    if (requeued > 0) {
      // As `seedance slurm` does after requeueing: cycle again at once to place the preemptor
      // when the victims are gone (FakeSlurm requeues instantly; real Slurm within KillWait).
      rep = (*c)->Cycle();
      EXPECT_TRUE(rep.has_value()) << rep.error().message();
      if (!rep.has_value()) break;
    }
    bool done = next == jobs.size();
    for (const auto& [id, j] : fake.jobs()) done &= j.state == "COMPLETED";
    if (done) break;
  }
  for (const auto& [job, node, t] : fake.starts) r.starts.emplace_back(job, node, t - kEpoch);
  return r;
}

TEST(SlurmParity, SameStartsOrderAndNodesAsTheSimulator) {
  // Two seeds on three nodes: quotas bind, tenants borrow, Silver and Gold reclaim from Bronze.
  for (std::uint64_t seed : {11u, 12u}) {
    const Stream s = MakeStream(seed, 40, 3, 3000);
    const Outcome sim = ThroughSimulator(s);
    const Outcome ctl = ThroughController(s);
    if (getenv("PARITY_DUMP")) {
      for (std::size_t k = 0; k < std::max(sim.starts.size(), ctl.starts.size()); ++k) {
        auto p = [](const auto& v, std::size_t i) {
          if (i >= v.size()) return std::string("-");
          return std::to_string(std::get<0>(v[i])) + "@" + std::get<1>(v[i]) + "@" + std::to_string(std::get<2>(v[i]));
        };
        printf("%zu sim %s ctl %s\n", k, p(sim.starts, k).c_str(), p(ctl.starts, k).c_str());
      }
      printf("requeues sim %d ctl %d\n", sim.requeues, ctl.requeues);
      for (const auto& j : s.scenario.jobs) printf("job %lld tenant %d arr %.0f work %.0f gpus %d\n", static_cast<long long>(j.id), j.tenant, j.arrival_s, j.work_s, j.pod.num_gpu);
    }
    std::printf("parity seed %llu: %zu jobs, %zu starts, %d preemptions (simulator), %d requeues (controller)\n",
                static_cast<unsigned long long>(seed), s.scenario.jobs.size(), sim.starts.size(), sim.requeues, ctl.requeues);
    ASSERT_EQ(sim.starts.size(), s.scenario.jobs.size() + static_cast<std::size_t>(sim.requeues)) << "seed " << seed;
    ASSERT_EQ(ctl.starts.size(), sim.starts.size()) << "seed " << seed;
    for (std::size_t k = 0; k < sim.starts.size(); ++k) {
      EXPECT_EQ(std::get<0>(ctl.starts[k]), std::get<0>(sim.starts[k])) << "seed " << seed << " start #" << k;
      EXPECT_EQ(std::get<1>(ctl.starts[k]), std::get<1>(sim.starts[k])) << "seed " << seed << " start #" << k;
      EXPECT_EQ(std::get<2>(ctl.starts[k]), std::get<2>(sim.starts[k])) << "seed " << seed << " start #" << k;
    }
  }
}

TEST(SlurmParity, PreemptionsPickTheSameVictimsAndNodes) {
  // A heavier stream on two nodes: Gold arrivals preempt borrowing Bronze and Silver jobs.
  const Stream s = MakeStream(7, 40, 2, 1500);
  const Outcome sim = ThroughSimulator(s);
  const Outcome ctl = ThroughController(s);
  std::printf("parity seed 7 (2 nodes): %zu jobs, %zu starts, %d preemptions (simulator), %d requeues (controller)\n",
              s.scenario.jobs.size(), sim.starts.size(), sim.requeues, ctl.requeues);
  ASSERT_GT(sim.requeues, 0) << "the stream must exercise preemption";
  EXPECT_EQ(ctl.requeues, sim.requeues);
  ASSERT_EQ(ctl.starts.size(), sim.starts.size());
  for (std::size_t k = 0; k < sim.starts.size(); ++k) {
    EXPECT_EQ(std::get<0>(ctl.starts[k]), std::get<0>(sim.starts[k])) << "start #" << k;
    EXPECT_EQ(std::get<1>(ctl.starts[k]), std::get<1>(sim.starts[k])) << "start #" << k;
    EXPECT_EQ(std::get<2>(ctl.starts[k]), std::get<2>(sim.starts[k])) << "start #" << k;
  }
}

}  // namespace
}  // namespace seedance::slurm
