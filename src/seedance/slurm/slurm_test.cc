#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <map>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "seedance/advise/fleet.h"
#include "seedance/audit/admission.h"
#include "seedance/cost/price_table.h"
#include "seedance/gpu/catalog.h"
#include "seedance/ledger/breaker.h"
#include "seedance/ledger/job_telemetry.h"
#include "seedance/ledger/ledger.h"
#include "seedance/ledger/telemetry_attribution.h"
#include "seedance/telemetry/parse.h"
#include "seedance/slurm/controller.h"
#include "seedance/slurm/slurm_json.h"
#include "seedance/slurm/standby.h"
#include "seedance/slurm/testing/dcgm_lines.h"
#include "seedance/slurm/testing/fake_slurm.h"

namespace seedance::slurm {
namespace {

using testing::FakeSlurm;

std::string ReadData(const std::string& name) {
  std::ifstream in(std::string(SEEDANCE_TEST_DATA_DIR) + "/../tests/data/slurm/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr std::int64_t kEpoch = 1'796'219'000;  // 2026-12-02, like the captured output

// ---- readers, on output captured from Slurm 22.05.8 ----

TEST(SlurmJson, CapturedSqueueHeldAndRunning) {
  auto jobs = ParseSqueueJson(ReadData("squeue1.json"));
  ASSERT_TRUE(jobs.has_value()) << jobs.error().message();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].id, 1);
  EXPECT_EQ((*jobs)[0].account, "gold");
  EXPECT_TRUE((*jobs)[0].held());
  EXPECT_EQ((*jobs)[0].gpus.type, "h100");
  EXPECT_EQ((*jobs)[0].gpus.count, 2);
  EXPECT_EQ((*jobs)[1].gpus.type, "a100");
  EXPECT_TRUE((*jobs)[2].active());
  EXPECT_EQ((*jobs)[2].nodes, "n1");
  EXPECT_EQ((*jobs)[2].gpu_indices, std::vector<int>({0}));
  auto after = ParseSqueueJson(ReadData("squeue2.json"));
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ((*after)[0].nodes, "n2");
  EXPECT_EQ((*after)[0].required_nodes, "n2");
  EXPECT_EQ((*after)[0].gpu_indices, std::vector<int>({0, 1}));
  EXPECT_EQ((*after)[1].comment, "seedance: breaker tripped");
  EXPECT_TRUE((*after)[1].held());
}

TEST(SlurmJson, CapturedSinfoDrainedNode) {
  auto nodes = ParseSinfoJson(ReadData("sinfo2.json"));
  ASSERT_TRUE(nodes.has_value()) << nodes.error().message();
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].gpus.type, "h100");
  EXPECT_EQ((*nodes)[0].gpus.count, 4);
  EXPECT_EQ((*nodes)[2].name, "n3");
  EXPECT_TRUE((*nodes)[2].drained());
  EXPECT_EQ((*nodes)[2].reason, "seedance: audit removed");
  EXPECT_FALSE((*nodes)[0].drained());
  EXPECT_TRUE((*nodes)[0].in_partition("gpu"));
}

TEST(SlurmJson, SinfoDashNOfSlurm23_11ReadsAsThe22_05Capture) {
  // The same three nodes in 22.05's `nodes` list (captured) and 23.11's `sinfo` entries
  // (sinfo_n_v0040.json, written from the v0.0.40 parser's field paths: see tests/data/slurm).
  auto v38 = ParseSinfoJson(ReadData("sinfo2.json"));
  auto v40 = ParseSinfoJson(ReadData("sinfo_n_v0040.json"));
  ASSERT_TRUE(v38.has_value()) << v38.error().message();
  ASSERT_TRUE(v40.has_value()) << v40.error().message();
  ASSERT_EQ(v40->size(), 3u);
  ASSERT_EQ(v38->size(), v40->size());
  for (std::size_t k = 0; k < v38->size(); ++k) {
    const SlurmNode& a = (*v38)[k];
    const SlurmNode& b = (*v40)[k];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.state, b.state) << a.name;
    EXPECT_EQ(a.flags, b.flags) << a.name;
    EXPECT_EQ(a.reason, b.reason) << a.name;
    EXPECT_EQ(a.gpus.type, b.gpus.type) << a.name;
    EXPECT_EQ(a.gpus.count, b.gpus.count) << a.name;
    EXPECT_EQ(a.cpus, b.cpus) << a.name;
    EXPECT_EQ(a.memory_mib, b.memory_mib) << a.name;
    EXPECT_EQ(a.drained(), b.drained()) << a.name;
    EXPECT_EQ(a.down(), b.down()) << a.name;
  }
  EXPECT_EQ((*v40)[0].partitions, std::vector<std::string>({"gpu"}));
  // n3 has one entry per partition: merged into one node of both.
  EXPECT_EQ((*v40)[2].partitions, std::vector<std::string>({"debug", "gpu"}));
  EXPECT_TRUE((*v40)[2].in_partition("gpu"));
  EXPECT_TRUE((*v40)[2].drained());
  // DOWN with flags reads as down, as 22.05's "down".
  auto down = ParseSinfoJson(R"({"sinfo":[{"node":{"state":["DOWN","NOT_RESPONDING"]},"nodes":{"nodes":["g1"]},
      "cpus":{"maximum":{"set":true,"infinite":false,"number":64}},"gres":{"total":"gpu:h100:8"},"partition":{"name":"gpu"}}]})");
  ASSERT_TRUE(down.has_value()) << down.error().message();
  EXPECT_TRUE((*down)[0].down());
  EXPECT_EQ((*down)[0].cpus, 64);
  EXPECT_EQ((*down)[0].gpus.count, 8);
  // sinfo without -N groups nodes whatever their GRES: refused, naming the field (the cycle acts on nothing).
  auto grouped = ParseSinfoJson(R"({"sinfo":[{"node":{"state":["IDLE"]},"nodes":{"nodes":["n1","n3"]},"cpus":{"maximum":8},
      "gres":{"total":"gpu:h100:4"}}]})");
  ASSERT_FALSE(grouped.has_value());
  EXPECT_NE(grouped.error().message().find("sinfo --json: sinfo[0].nodes.nodes: 2 nodes in one entry"), std::string::npos)
      << grouped.error().message();
  auto bad_state = ParseSinfoJson(R"({"sinfo":[{"node":{"state":"IDLE"},"nodes":{"nodes":["n1"]},"cpus":{"maximum":8}}]})");
  ASSERT_FALSE(bad_state.has_value());
  EXPECT_NE(bad_state.error().message().find("sinfo[0].node.state: expected an array"), std::string::npos)
      << bad_state.error().message();
  // A partition without nodes is an entry with an empty list: no node.
  auto empty = ParseSinfoJson(R"({"sinfo":[{"node":{"state":[]},"nodes":{"nodes":[]},"partition":{"name":"spare"}}]})");
  ASSERT_TRUE(empty.has_value()) << empty.error().message();
  EXPECT_TRUE(empty->empty());
  auto neither = ParseSinfoJson(R"({"meta":{}})");
  ASSERT_FALSE(neither.has_value());
  EXPECT_NE(neither.error().message().find("nodes (or sinfo): missing or not an array"), std::string::npos);
}

TEST(SlurmJson, HostlistsTooLongOrTooDeepAreErrorsNotGigabytesOrAStackOverflow) {
  // Found running inputs through scontrol_fuzz: a 100,000-name range with a 30,000-character tail took over 2 GB, and
  // 5,000 bracket groups in one name overflowed the stack.
  auto wide = ParseScontrolJobDetail("JobId=1\n JobState=RUNNING\n Nodes=n[0-99999]" + std::string(30'000, 'A') +
                                     " GRES=gpu:a:1(IDX:0)\n");
  ASSERT_FALSE(wide.has_value());
  EXPECT_NE(wide.error().message().find("scontrol show job -d: line 3: Nodes: a host name longer than 255 characters"),
            std::string::npos) << wide.error().message().substr(0, 200);
  std::string deep = "n";
  for (int i = 0; i < 5000; ++i) deep += "[0-1]";
  auto d = ExpandHostlist(deep, "nodes");
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().message(), "nodes: more than 8 bracket groups in one host name");
  // What real clusters write still expands: 3-D names, 100,000 names.
  auto torus = ExpandHostlist("r[0-1]c[0-1]n[00-02]", "nodes");
  ASSERT_TRUE(torus.has_value()) << torus.error().message();
  EXPECT_EQ(torus->size(), 12u);
  EXPECT_EQ(torus->back(), "r1c1n02");
  auto many = ExpandHostlist("gpu[000000-099999]", "nodes");
  ASSERT_TRUE(many.has_value()) << many.error().message();
  EXPECT_EQ(many->size(), 100'000u);
}

TEST(SlurmJson, CapturedSacctAndJobcompAgree) {
  auto acct = ParseSacctJson(ReadData("sacct3.json"));
  ASSERT_TRUE(acct.has_value()) << acct.error().message();
  auto comp = ParseJobcomp(ReadData("jobcomp.txt"), "jobcomp.txt");
  ASSERT_TRUE(comp.has_value()) << comp.error().message();
  // Job 1: 2 x h100 on n2, 5 s, account gold, in both feeds.
  auto find = [](const std::vector<AcctRecord>& v, std::int64_t id) {
    for (const auto& r : v)
      if (r.job_id == id) return r;
    return AcctRecord{};
  };
  const AcctRecord a = find(*acct, 1), c = find(*comp, 1);
  EXPECT_EQ(a.node, "n2");
  EXPECT_EQ(a.gpu_type, "h100");
  EXPECT_EQ(a.gpus, 2);
  EXPECT_EQ(a.account, "gold");
  EXPECT_EQ(a.end_s - a.start_s, 5);
  EXPECT_EQ(c.node, a.node);
  EXPECT_EQ(c.gpus, a.gpus);
  EXPECT_EQ(c.gpu_type, a.gpu_type);
  EXPECT_EQ(c.end_s - c.start_s, a.end_s - a.start_s);
  EXPECT_EQ(find(*comp, 2).node, "");  // never ran
}

TEST(SlurmJson, CapturedScontrolShowJobDetailGivesEveryNodesDevices) {
  // tests/data/slurm/scontrol_show_job_d.txt (22.05.8): a 2-node job with the same devices on both
  // nodes (one "Nodes=n[1-2]" line), a --gpus=h100:3 job split 1 + 2 over two nodes (a line each).
  auto d = ParseScontrolJobDetail(ReadData("scontrol_show_job_d.txt"));
  ASSERT_TRUE(d.has_value()) << d.error().message();
  ASSERT_EQ(d->size(), 4u);
  std::map<std::int64_t, JobGpuDetail> by_id;
  for (const auto& j : *d) by_id[j.id] = j;
  using Gpus = std::map<std::string, std::vector<int>>;
  EXPECT_EQ(by_id[8].state, "RUNNING");
  EXPECT_EQ(by_id[8].node_gpus, (Gpus{{"n1", {0, 1}}, {"n2", {0, 1}}}));
  EXPECT_EQ(by_id[9].node_gpus, (Gpus{{"n1", {2}}}));
  EXPECT_EQ(by_id[10].node_gpus, (Gpus{{"n3", {0}}}));
  EXPECT_EQ(by_id[11].node_gpus, (Gpus{{"n1", {3}}, {"n2", {2, 3}}}));
  // A pending job has no devices; the pre-21.08 spelling GRES_IDX; several GRES on one line.
  auto more = ParseScontrolJobDetail(
      "JobId=3 JobName=x\n   JobState=PENDING Reason=Priority\n   NodeList=\n\n"
      "JobId=4 JobName=y\n   JobState=RUNNING Reason=None\n     Nodes=gpu[01-02] CPU_IDs=0-3 Mem=0 GRES_IDX=gpu(IDX:0,2-3)\n"
      "JobId=5 JobName=z\n   JobState=RUNNING\n     Nodes=n7 CPU_IDs=0 Mem=0 GRES=nic:1(IDX:0),gpu:a100:2(IDX:1,3)\n");
  ASSERT_TRUE(more.has_value()) << more.error().message();
  ASSERT_EQ(more->size(), 3u);
  EXPECT_TRUE((*more)[0].node_gpus.empty());
  EXPECT_EQ((*more)[1].node_gpus, (Gpus{{"gpu01", {0, 2, 3}}, {"gpu02", {0, 2, 3}}}));
  EXPECT_EQ((*more)[2].node_gpus, (Gpus{{"n7", {1, 3}}}));
  // Errors name the line and the field.
  auto bad_id = ParseScontrolJobDetail("JobId=x JobName=a\n");
  ASSERT_FALSE(bad_id.has_value());
  EXPECT_NE(bad_id.error().message().find("scontrol show job -d: line 1: JobId"), std::string::npos) << bad_id.error().message();
  auto bad_nodes = ParseScontrolJobDetail("JobId=2\n   JobState=RUNNING\n     Nodes=n[1-2 GRES=gpu:2(IDX:0-1)\n");
  ASSERT_FALSE(bad_nodes.has_value());
  EXPECT_NE(bad_nodes.error().message().find("line 3: Nodes"), std::string::npos) << bad_nodes.error().message();
  auto bad_idx = ParseScontrolJobDetail("JobId=2\n     Nodes=n1 GRES=gpu:h100:2(IDX:1-0)\n");
  ASSERT_FALSE(bad_idx.has_value());
  EXPECT_NE(bad_idx.error().message().find("line 2: GRES"), std::string::npos) << bad_idx.error().message();
}

TEST(SlurmJson, ReadsTheDataParserV0040ShapeOfSlurm23) {
  // The shape of 23.02+/23.11 `squeue --json` and `sacct --json` (data_parser v0.0.39/v0.0.40, as
  // a public 23.11.1 capture shows it, docs/SLURM.md "Supported Slurm versions"): numbers as
  // {set, infinite, number}, job_state and state.current as lists. Values are this test's own.
  auto n = [](std::int64_t v, bool set = true, bool inf = false) {
    return nlohmann::json{{"set", set}, {"infinite", inf}, {"number", v}};
  };
  nlohmann::json running = {{"job_id", 41}, {"account", "gold"}, {"partition", "gpu"}, {"job_state", {"RUNNING"}},
                            {"state_reason", "None"}, {"nodes", "gpu[01-02]"}, {"tres_per_node", "gres:gpu:h100:2"},
                            {"gres_detail", {"gpu:h100:2(IDX:0-1)", "gpu:h100:2(IDX:2-3)"}}, {"node_count", n(2)},
                            {"cpus", n(16)}, {"memory_per_node", n(0, false)}, {"restart_cnt", 1},
                            {"submit_time", n(1'796'000'000)}, {"start_time", n(1'796'000'100)},
                            {"priority", n(4242)}, {"time_limit", n(0, true, true)}};
  nlohmann::json held = {{"job_id", 42}, {"account", "bronze"}, {"partition", "gpu"}, {"job_state", {"PENDING", "REQUEUED"}},
                         {"state_reason", "JobHeldUser"}, {"nodes", ""}, {"tres_per_job", "gres:gpu:4"},
                         {"node_count", n(2)}, {"start_time", n(0)}, {"submit_time", n(1'796'000'050)}};
  nlohmann::json doc = {{"jobs", {running, held}}, {"meta", {{"plugin", {{"data_parser", "data_parser/v0.0.40"}}}}},
                        {"errors", nlohmann::json::array()}, {"warnings", nlohmann::json::array()}};
  auto jobs = ParseSqueueJson(doc.dump());
  ASSERT_TRUE(jobs.has_value()) << jobs.error().message();
  ASSERT_EQ(jobs->size(), 2u);
  const SlurmJob& r = (*jobs)[0];
  EXPECT_EQ(r.state, "RUNNING");
  EXPECT_TRUE(r.active());
  EXPECT_EQ(r.node_count, 2);
  EXPECT_EQ(r.cpus, 16);
  EXPECT_EQ(r.memory_mib, 0);  // "set": false
  EXPECT_EQ(r.start_s, 1'796'000'100);
  EXPECT_EQ(r.priority, 4242);
  EXPECT_EQ(r.gpus.count, 2);
  EXPECT_EQ(r.node_gpu_indices, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  const SlurmJob& h = (*jobs)[1];
  EXPECT_EQ(h.state, "PENDING");
  EXPECT_TRUE(h.held());
  EXPECT_TRUE(h.gpus_per_job);
  EXPECT_EQ(h.gpus.count, 4);
  nlohmann::json acct = {
      {"jobs",
       {{{"job_id", 41}, {"cluster", "fleet"}, {"account", "gold"}, {"nodes", "gpu[01-02]"},
         {"state", {{"current", {"COMPLETED"}}, {"reason", "None"}}},
         {"time", {{"start", 1'796'000'100}, {"end", 1'796'003'700}, {"limit", n(0, true, true)}}},
         {"tres", {{"allocated", {{{"type", "gres"}, {"name", "gpu:h100"}, {"id", 1002}, {"count", 4}}}}}}}}},
      {"errors", nlohmann::json::array()}};
  auto recs = ParseSacctJson(acct.dump());
  ASSERT_TRUE(recs.has_value()) << recs.error().message();
  ASSERT_EQ(recs->size(), 1u);
  EXPECT_EQ((*recs)[0].state, "COMPLETED");
  EXPECT_EQ((*recs)[0].nodes, (std::vector<std::string>{"gpu01", "gpu02"}));
  EXPECT_EQ((*recs)[0].gpus, 4);
  EXPECT_EQ((*recs)[0].end_s - (*recs)[0].start_s, 3600);
  // A required number that is not set, and a state list that is empty, name the field.
  auto unset = ParseSqueueJson(R"({"jobs":[{"job_id":{"set":false,"infinite":false,"number":0},"job_state":["RUNNING"]}]})");
  ASSERT_FALSE(unset.has_value());
  EXPECT_NE(unset.error().message().find("jobs[0].job_id: not set"), std::string::npos) << unset.error().message();
  auto empty = ParseSqueueJson(R"({"jobs":[{"job_id":3,"job_state":[]}]})");
  ASSERT_FALSE(empty.has_value());
  EXPECT_NE(empty.error().message().find("jobs[0].job_state[0]"), std::string::npos) << empty.error().message();
}

TEST(SlurmJson, MalformedInputNamesTheField) {
  auto bad = ParseSqueueJson(R"({"meta":{},"errors":[],"jobs":[{"job_id":1,"job_state":"PENDING"},{"job_id":"x"}]})");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("jobs[1].job_id"), std::string::npos) << bad.error().message();
  auto no_state = ParseSqueueJson(R"({"jobs":[{"job_id":3}]})");
  ASSERT_FALSE(no_state.has_value());
  EXPECT_NE(no_state.error().message().find("jobs[0].job_state: missing"), std::string::npos);
  auto not_json = ParseSqueueJson("squeue: error: ...");
  ASSERT_FALSE(not_json.has_value());
  EXPECT_NE(not_json.error().message().find("not valid JSON"), std::string::npos);
  auto gres = ParseSqueueJson(R"({"jobs":[{"job_id":3,"job_state":"PENDING","tres_per_node":"gres:gpu:h100:two"}]})");
  ASSERT_FALSE(gres.has_value());
  EXPECT_NE(gres.error().message().find("jobs[0].tres_per_node"), std::string::npos) << gres.error().message();
  auto comp = ParseJobcomp("JobId=4 JobState=COMPLETED StartTime=yesterday\n", "jc.txt");
  ASSERT_FALSE(comp.has_value());
  EXPECT_NE(comp.error().message().find("jc.txt:1: field StartTime"), std::string::npos) << comp.error().message();
}

TEST(SlurmJson, GresStrings) {
  EXPECT_EQ(ParseGpuGres("gres:gpu:2", "f")->count, 2);
  EXPECT_EQ(ParseGpuGres("gres:gpu:2", "f")->type, "");
  EXPECT_EQ(ParseGpuGres("cpu=1,gres/gpu:a100=2", "f")->type, "a100");
  EXPECT_EQ(ParseGpuGres("gpu:h100:4(S:0)", "f")->count, 4);
  EXPECT_EQ(ParseGpuGres("", "f")->count, 0);
  EXPECT_EQ(*ParseGresIndices("gpu:h100:3(IDX:0,2-3)", "f"), std::vector<int>({0, 2, 3}));
  EXPECT_TRUE(ParseGresIndices("gpu:a100:0(IDX:N/A)", "f")->empty());
}

TEST(SlurmJson, HostlistsExpandAsSlurmWritesThem) {
  EXPECT_EQ(*ExpandHostlist("n[1-3,7]", "f"), (std::vector<std::string>{"n1", "n2", "n3", "n7"}));
  EXPECT_EQ(*ExpandHostlist("gpu[08-10]-a,login", "f"), (std::vector<std::string>{"gpu08-a", "gpu09-a", "gpu10-a", "login"}));
  EXPECT_EQ(*ExpandHostlist("r[1-2]n[1-2]", "f"), (std::vector<std::string>{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(*ExpandHostlist("n1,n2", "f"), (std::vector<std::string>{"n1", "n2"}));
  EXPECT_TRUE(ExpandHostlist("", "f")->empty());
  for (const char* bad : {"n[1-", "n]1", "n[3-1]", "n[a]", "n[1-200000]"}) {
    auto r = ExpandHostlist(bad, "jobs[0].nodes");
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message().find("jobs[0].nodes"), std::string::npos) << r.error().message();
  }
  // squeue: gres_detail per node of a multi-node job.
  auto j = ParseSqueueJson(R"J({"jobs":[{"job_id":5,"job_state":"RUNNING","nodes":"n[1-2]","node_count":2,
    "tres_per_node":"gres:gpu:h100:2","gres_detail":["gpu:h100:2(IDX:0-1)","gpu:h100:2(IDX:2-3)"]}]})J");
  ASSERT_TRUE(j.has_value()) << j.error().message();
  EXPECT_EQ((*j)[0].node_gpu_indices, (std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  EXPECT_FALSE((*j)[0].gpus_per_job);
  // sacct: a multi-node record's first node is the first of its host list, not "n".
  auto a = ParseSacctJson(R"({"jobs":[{"job_id":5,"nodes":"n[1-2]","state":{"current":"RUNNING"},"time":{"start":10,"end":0}}]})");
  ASSERT_TRUE(a.has_value()) << a.error().message();
  EXPECT_EQ((*a)[0].node, "n1");
  EXPECT_EQ((*a)[0].nodes, (std::vector<std::string>{"n1", "n2"}));
}

// ---- the controller on FakeSlurm ----

using testing::Tenant;

class SlurmControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clock_.Set(std::chrono::seconds(kEpoch));
    auto p = cost::PriceTable::LoadFile(cost::BundledPriceTablePath());
    ASSERT_TRUE(p.has_value()) << p.error().message();
    prices_ = std::move(*p);
    config_.slurm.partition = "gpu";
    config_.slurm.mode = "strict";
    config_.slurm.preempt_grace_s = 0;  // requeue at once (the checkpoint tests set a grace)
    config_.tenancy.tenants = {Tenant("gold", tenancy::Tier::kGold, 4), Tenant("bronze", tenancy::Tier::kBronze, 4)};
    dir_ = std::filesystem::temp_directory_path() /
           ("slurm_test_" + std::to_string(::getpid()) + "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<Controller> Make(FakeSlurm& fake, ledger::Ledger* ledger = nullptr) {
    auto c = Controller::Create(config_, fake, clock_, prices_, ledger);
    EXPECT_TRUE(c.has_value()) << c.error().message();
    return c.has_value() ? std::move(*c) : nullptr;
  }
  void At(std::int64_t s) { clock_.Set(std::chrono::seconds(kEpoch + s)); }
  static int Count(const CycleReport& r, ActionKind k) {
    int n = 0;
    for (const auto& a : r.actions) n += a.kind == k ? 1 : 0;
    return n;
  }

  SimClock clock_;
  cost::PriceTable prices_;
  ControllerConfig config_;
  std::filesystem::path dir_;
};

TEST_F(SlurmControllerTest, ReleasesWithinQuotaOntoThePolicysNodeAndTheBestGpuPerDollar) {
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  fake.AddNode("n3", "a100", 2);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  // The model order is throughput per dollar from the catalog and the price table.
  const auto a100 = *gpu::ParseGpuName("A100", gpu::NameMatch::kName);
  const auto h100 = *gpu::ParseGpuName("H100", gpu::NameMatch::kName);
  auto rank = [&](gpu::GpuIndex g) {
    return std::find(c->gpu_order().begin(), c->gpu_order().end(), static_cast<cluster::GpuModelIndex>(g)) - c->gpu_order().begin();
  };
  const double a100_value = gpu::GpuAt(a100).fp16_tflops / ToUsd(prices_.Find(static_cast<cluster::GpuModelIndex>(a100))->usd_per_gpu_hour);
  const double h100_value = gpu::GpuAt(h100).fp16_tflops / ToUsd(prices_.Find(static_cast<cluster::GpuModelIndex>(h100))->usd_per_gpu_hour);
  ASSERT_NE(a100_value, h100_value);
  const bool a100_first = a100_value > h100_value;
  EXPECT_EQ(rank(a100) < rank(h100), a100_first);

  const auto g1 = fake.Submit("gold", 2, "", 1000);       // any model: the better value per dollar
  const auto g2 = fake.Submit("gold", 2, "h100", 1000);   // pinned
  const auto g3 = fake.Submit("gold", 1, "", 1000);       // over gold's quota of 4 (strict)
  const auto b1 = fake.Submit("bronze", 4, "h100", 1000);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(Count(*r, ActionKind::kRelease), 3);
  auto& jobs = fake.jobs();
  EXPECT_EQ(jobs[g1].state, "RUNNING");
  EXPECT_EQ(jobs[g1].node, a100_first ? "n3" : "n1");
  EXPECT_EQ(jobs[g1].gres_type, "");  // the node fixes the model; the request is not retyped
  EXPECT_EQ(jobs[g2].state, "RUNNING");
  EXPECT_EQ(jobs[g3].state, "PENDING");
  EXPECT_EQ(jobs[g3].reason, "JobHeldUser");  // never released beyond the quota
  EXPECT_EQ(jobs[b1].state, "RUNNING");
  EXPECT_EQ(r->queued, 1);
  EXPECT_EQ(r->admitted, 3);
  // Every release names its reason and the commands it ran.
  for (const auto& a : r->actions) {
    if (a.kind != ActionKind::kRelease) continue;
    EXPECT_NE(a.reason.find("tenant"), std::string::npos);
    EXPECT_EQ(a.commands.back()[1], "release");
  }
  // g1 ends: g3 fits gold's quota now.
  At(1001);
  fake.Advance();
  r = c->Cycle();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(jobs[g3].state, "RUNNING");
}

TEST_F(SlurmControllerTest, GpuModelByThroughputPerDollarAgainstSlurmsFirstFit) {
  // Slurm's own choice for an untyped --gres=gpu:2 is the first node (in its order) with free GPUs:
  // the A100 node here. The controller gives it the model with the most FP16 peak per on-demand
  // dollar.
  FakeSlurm fake(clock_);
  fake.AddNode("a1", "a100", 2);
  fake.AddNode("b1", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto j = fake.Submit("gold", 2, "", 100);
  ASSERT_TRUE(c->Cycle().has_value());
  auto value = [&](const char* name) {
    const auto g = *gpu::ParseGpuName(name, gpu::NameMatch::kName);
    return gpu::GpuAt(g).fp16_tflops / ToUsd(prices_.Find(static_cast<cluster::GpuModelIndex>(g))->usd_per_gpu_hour);
  };
  const std::string baseline = "a1";  // first fit in Slurm's node order
  const std::string chosen = fake.jobs()[j].node;
  EXPECT_EQ(chosen, value("H100") > value("A100") ? "b1" : "a1");
  EXPECT_NE(chosen, baseline);
  // FP16 TFLOPS per $/h: H100 989 / 2.99 = 331, A100 312 / 1.29 = 242 (bundled catalog and prices).
  EXPECT_NEAR(value("H100") / value("A100"), (989 / 2.99) / (312 / 1.29), 1e-9);
}

TEST_F(SlurmControllerTest, GoldPreemptsBronzeByRequeueLosingTheLeastWork) {
  config_.slurm.mode = "seedance";
  config_.tenancy.tenants = {Tenant("gold", tenancy::Tier::kGold, 4), Tenant("bronze", tenancy::Tier::kBronze, 0)};
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto old_b = fake.Submit("bronze", 2, "h100", 5000);
  ASSERT_TRUE(c->Cycle().has_value());
  At(600);
  const auto new_b = fake.Submit("bronze", 2, "h100", 5000);
  ASSERT_TRUE(c->Cycle().has_value());
  auto& jobs = fake.jobs();
  ASSERT_EQ(jobs[old_b].state, "RUNNING");
  ASSERT_EQ(jobs[new_b].state, "RUNNING");  // borrowed gold's idle quota
  At(900);
  const auto gold = fake.Submit("gold", 2, "h100", 100);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(Count(*r, ActionKind::kRequeue), 1);
  for (const auto& a : r->actions) {
    if (a.kind != ActionKind::kRequeue) continue;
    EXPECT_EQ(a.job, new_b);  // 300 s of work lost, not 900 s
    EXPECT_EQ(a.commands[0], (std::vector<std::string>{"scontrol", "requeuehold", std::to_string(new_b)}));
    EXPECT_NE(a.reason.find("gold over bronze"), std::string::npos) << a.reason;
  }
  EXPECT_EQ(jobs[old_b].state, "RUNNING");
  EXPECT_EQ(jobs[new_b].state, "PENDING");
  EXPECT_EQ(jobs[gold].state, "PENDING");
  At(905);
  r = c->Cycle();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(jobs[gold].state, "RUNNING");
  EXPECT_EQ(jobs[gold].node, "n1");
  EXPECT_EQ(jobs[new_b].reason, "job requeued in held state");  // waits, held, for room
}

TEST_F(SlurmControllerTest, TrippedAccountsNextJobStaysHeldWithTheBreakersReason) {
  config_.slurm.breaker_accounts["bronze"] = 0.001;  // $0.001 per hour
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  auto ledger = ledger::Ledger::Open((dir_ / "ledger.db").string());
  ASSERT_TRUE(ledger.has_value()) << ledger.error().message();
  auto c = Make(fake, ledger->get());
  ASSERT_NE(c, nullptr);
  const auto b1 = fake.Submit("bronze", 2, "h100", 60);
  const auto g1 = fake.Submit("gold", 1, "h100", 60);
  ASSERT_TRUE(c->Cycle().has_value());
  At(61);
  fake.Advance();
  auto r = c->Cycle();  // b1's minute on 2 H100s is charged: above $0.001/h -> tripped
  ASSERT_TRUE(r.has_value()) << r.error().message();
  const auto b2 = fake.Submit("bronze", 1, "h100", 60);
  const auto g2 = fake.Submit("gold", 1, "h100", 60);
  At(62);
  r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_TRUE(r->tripped.count("bronze"));
  auto& jobs = fake.jobs();
  EXPECT_EQ(jobs[b1].state, "COMPLETED");
  EXPECT_EQ(jobs[g1].state, "COMPLETED");
  EXPECT_EQ(jobs[g2].state, "RUNNING");  // gold is not tripped
  EXPECT_EQ(jobs[b2].state, "PENDING");
  EXPECT_EQ(jobs[b2].reason, "JobHeldUser");
  EXPECT_EQ(jobs[b2].comment.rfind("seedance: breaker: account bronze spent $", 0), 0u) << jobs[b2].comment;
  EXPECT_NE(jobs[b2].comment.find("threshold"), std::string::npos);
  // The charges are in the ledger by account (namespace) and tenant.
  auto rep = (*ledger)->Attribute(ledger::Dimension::kNamespace, 0, INT64_MAX, false);
  ASSERT_TRUE(rep.has_value());
  bool bronze = false;
  for (const auto& row : rep->rows) bronze |= row.key == "bronze" && row.cost.raw() > 0;
  EXPECT_TRUE(bronze);
}

TEST_F(SlurmControllerTest, AuditRemovedNodeIsDrainedAndResumedWhenReadmitted) {
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  const std::string path = (dir_ / "admission.json").string();
  audit::AdmissionLedger al;
  al.nodes["n1"].state = audit::AdmissionState::kRemoved;
  al.log.push_back({"n1", kEpoch, audit::AdmissionState::kObservation, audit::AdmissionState::kRemoved,
                    "2 consecutive failed audits", {"xid 79"}});
  {
    std::ofstream(path) << al.ToJson();
  }
  config_.admission_path = path;
  config_.tenancy.tenants[0].quota[0].nominal = 8;
  config_.slurm.mode = "seedance";  // admits only where a node fits: the resume must bring the job back
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto j = fake.Submit("gold", 4, "h100", 100);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(Count(*r, ActionKind::kDrain), 1);
  EXPECT_TRUE(fake.nodes()[0].drain);
  EXPECT_EQ(fake.nodes()[0].reason, "seedance: audit removed the node: 2 consecutive failed audits");
  EXPECT_EQ(fake.jobs()[j].node, "n2");  // never onto the removed node
  r = c->Cycle();
  EXPECT_EQ(Count(*r, ActionKind::kDrain), 0);  // once
  const auto waits = fake.Submit("gold", 4, "h100", 100);  // n2 is full, n1 drained: held
  r = c->Cycle();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(fake.jobs()[waits].state, "PENDING");
  al.nodes["n1"].state = audit::AdmissionState::kAdmitted;
  {
    std::ofstream(path) << al.ToJson();
  }
  r = c->Cycle();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(Count(*r, ActionKind::kResume), 1);
  EXPECT_FALSE(fake.nodes()[0].drain);
  r = c->Cycle();  // the node takes work again: the waiting job goes there
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(fake.jobs()[waits].state, "RUNNING");
  EXPECT_EQ(fake.jobs()[waits].node, "n1");
}

TEST_F(SlurmControllerTest, SlurmctldDownMidCycleRetriesWithoutDuplicateReleases) {
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto j1 = fake.Submit("gold", 1, "h100", 1000);
  const auto j2 = fake.Submit("gold", 1, "h100", 1000);
  // slurmctld goes away after the reads and the first job's release: j2's release fails.
  bool down = false;
  fake.fail = [&](const std::vector<std::string>& argv) {
    if (argv[0] == "scontrol" && argv[1] == "release" && argv[2] == std::to_string(j1)) down = true;
    return down && argv[0] == "scontrol" && argv[2] != std::to_string(j1);
  };
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(fake.jobs()[j1].state, "RUNNING");
  EXPECT_EQ(fake.jobs()[j2].state, "PENDING");
  int failed = 0;
  for (const auto& a : r->actions) failed += a.ok ? 0 : 1;
  EXPECT_EQ(failed, 1);
  // Fully down: the cycle fails at its reads and takes no action.
  fake.fail = [](const std::vector<std::string>&) { return true; };
  const auto before = fake.Mutations().size();
  At(5);
  auto down_cycle = c->Cycle();
  ASSERT_FALSE(down_cycle.has_value());
  EXPECT_NE(down_cycle.error().message().find("sinfo --json"), std::string::npos);
  EXPECT_EQ(fake.Mutations().size(), before + 0);
  // Back: j2 is released once more (on the same node), j1 is not released again.
  fake.fail = nullptr;
  At(10);
  r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(fake.jobs()[j2].state, "RUNNING");
  std::map<std::int64_t, int> ok_releases;
  for (const auto& [id, node] : c->releases()) ++ok_releases[id];
  EXPECT_EQ(ok_releases[j1], 1);
  EXPECT_EQ(ok_releases[j2], 1);
  int release_cmds_j1 = 0;
  for (const auto& cmd : fake.Mutations()) release_cmds_j1 += cmd[1] == "release" && cmd[2] == std::to_string(j1) ? 1 : 0;
  EXPECT_EQ(release_cmds_j1, 1);
  EXPECT_EQ(fake.jobs()[j1].restarts, 0);
  EXPECT_EQ(fake.jobs()[j2].restarts, 0);
}

TEST_F(SlurmControllerTest, KilledNodesRequeuedJobIsPlacedAgainAndChargedOncePerIncarnation) {
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  auto ledger = ledger::Ledger::Open((dir_ / "ledger.db").string());
  ASSERT_TRUE(ledger.has_value());
  auto c = Make(fake, ledger->get());
  ASSERT_NE(c, nullptr);
  const auto j = fake.Submit("gold", 4, "h100", 600);
  ASSERT_TRUE(c->Cycle().has_value());
  const std::string first = fake.jobs()[j].node;
  ASSERT_FALSE(first.empty());
  At(100);
  fake.KillNode(first);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(fake.jobs()[j].state, "RUNNING");
  EXPECT_NE(fake.jobs()[j].node, first);
  EXPECT_EQ(fake.jobs()[j].restarts, 1);
  // The release after a requeue asks Slurm to start it now (not after its 120 s BeginTime).
  bool start_now = false;
  for (const auto& a : r->actions)
    for (const auto& cmd : a.commands) start_now |= cmd.size() == 4 && cmd[3] == "StartTime=now";
  EXPECT_TRUE(start_now);
  // Many cycles later: each incarnation is charged once (100 s on the first node, 600 s on the second).
  for (int k = 1; k <= 8; ++k) {
    At(100 + k * 100);
    fake.Advance();
    ASSERT_TRUE(c->Cycle().has_value());
  }
  EXPECT_EQ(fake.jobs()[j].state, "COMPLETED");
  auto rep = (*ledger)->Attribute(ledger::Dimension::kJob, 0, INT64_MAX, false);
  ASSERT_TRUE(rep.has_value());
  std::int64_t gpu_ms = 0;
  for (const auto& row : rep->rows)
    if (row.key == "slurm-" + std::to_string(j)) gpu_ms += row.gpu_ms;
  EXPECT_EQ(gpu_ms, 4 * (100 + 600) * 1000LL);
  const double usd = ToUsd(prices_.Find(static_cast<cluster::GpuModelIndex>(*gpu::ParseGpuName("H100", gpu::NameMatch::kName)))->usd_per_gpu_hour);
  Money total;
  for (const auto& row : rep->rows)
    if (row.key == "slurm-" + std::to_string(j)) total += row.cost;
  EXPECT_NEAR(ToUsd(total), usd * 4 * 700 / 3600.0, 1e-5);
}

TEST_F(SlurmControllerTest, ARestartedControllerAdoptsRunningJobsAndReleasesNothingTwice) {
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  const auto j1 = fake.Submit("gold", 4, "h100", 1000);
  {
    auto first = Make(fake);
    ASSERT_NE(first, nullptr);
    ASSERT_TRUE(first->Cycle().has_value());
  }
  ASSERT_EQ(fake.jobs()[j1].state, "RUNNING");
  const std::string node = fake.jobs()[j1].node;
  // A new controller (after a crash or an upgrade) knows nothing but what Slurm reports.
  auto second = Make(fake);
  ASSERT_NE(second, nullptr);
  const auto j2 = fake.Submit("gold", 4, "h100", 1000);  // over gold's 4 with j1 counted: held (strict)
  const auto b = fake.Submit("bronze", 4, "h100", 1000);
  auto r = second->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  int releases_j1 = 0;
  for (const auto& a : r->actions) releases_j1 += a.kind == ActionKind::kRelease && a.job == j1 ? 1 : 0;
  EXPECT_EQ(releases_j1, 0);
  EXPECT_EQ(fake.jobs()[j2].state, "PENDING");
  EXPECT_EQ(fake.jobs()[b].state, "RUNNING");
  EXPECT_NE(fake.jobs()[b].node, node);  // the adopted job's GPUs are taken
  EXPECT_EQ(fake.jobs()[j1].restarts, 0);
}

TEST_F(SlurmControllerTest, BadInputNeverReleasesAndNamesTheField) {
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto odd = fake.Submit("gold", 1, "tpu9000", 100);
  const auto stranger = fake.Submit("nobody", 1, "h100", 100);
  const auto fine = fake.Submit("gold", 1, "h100", 100);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  auto& jobs = fake.jobs();
  EXPECT_EQ(jobs[fine].state, "RUNNING");
  EXPECT_EQ(jobs[odd].state, "PENDING");
  EXPECT_EQ(jobs[odd].reason, "JobHeldUser");
  EXPECT_NE(jobs[odd].comment.find("tres_per_node: unknown GRES type 'tpu9000'"), std::string::npos) << jobs[odd].comment;
  EXPECT_EQ(jobs[stranger].state, "PENDING");
  EXPECT_NE(jobs[stranger].comment.find("account 'nobody' maps to no tenant"), std::string::npos) << jobs[stranger].comment;
  EXPECT_EQ(r->blocked, 2);
  // Malformed squeue: an error naming the field, and no action at all.
  fake.squeue_override = R"({"meta":{},"errors":[],"jobs":[{"job_id":9,"job_state":7}]})";
  const auto before = fake.Mutations().size();
  auto bad = c->Cycle();
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("squeue --json: jobs[0].job_state: expected a string"), std::string::npos)
      << bad.error().message();
  EXPECT_EQ(fake.Mutations().size(), before);
  // A node whose GRES type is unknown: the cycle stops before acting, naming node and field.
  fake.squeue_override.clear();
  fake.AddNode("n9", "quantum", 2);
  auto bad_node = c->Cycle();
  ASSERT_FALSE(bad_node.has_value());
  EXPECT_NE(bad_node.error().message().find("node n9: gres: unknown GRES type 'quantum'"), std::string::npos)
      << bad_node.error().message();
  EXPECT_EQ(fake.Mutations().size(), before);
}

TEST_F(SlurmControllerTest, DryRunPrintsActionsWithoutTakingThem) {
  config_.dry_run = true;
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  fake.Submit("gold", 2, "h100", 100);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(Count(*r, ActionKind::kRelease), 1);
  EXPECT_TRUE(fake.Mutations().empty());
  const std::string line = FormatAction(r->actions[0], true);
  EXPECT_NE(line.find("release job 1 -> n1 (H100 x2)"), std::string::npos) << line;
  EXPECT_NE(line.find("$ scontrol release 1"), std::string::npos) << line;
}

// ---- charges: incremental, keyed by incarnation, all or nothing per cycle ----

// The charge-window scenario: cycles 2.4 h apart over 10 days on two H100 nodes. One job runs
// throughout (adopted: it started before the controller); short jobs come and go (those of the
// first two days end about 8 days before the last cycle); n2 dies once (its jobs get a second
// incarnation); a job still runs at the end.
class SlurmChargeTest : public SlurmControllerTest {
 protected:
  static constexpr std::int64_t kStep = 8640;

  static void Arrivals(FakeSlurm& fake, int k) {
    if (k == 0) {
      const auto id = fake.Submit("gold", 2, "h100", 30 * 86'400.0);
      EXPECT_TRUE(fake.StartOn(id, "n1"));
    }
    if (k == 1) fake.Submit("gold", 2, "h100", 20 * 3600.0);
    if (k == 2) fake.Submit("bronze", 2, "h100", 10 * 3600.0);
    if (k == 5) fake.Submit("bronze", 1, "h100", 86'400.0);
    if (k == 15) fake.Submit("gold", 1, "h100", 3 * 3600.0);
    if (k > 20 && k % 10 == 7) fake.Submit("bronze", 1, "h100", 5 * 3600.0);
    if (k == 38) fake.Submit("gold", 2, "h100", 86'400.0);
    if (k == 40) fake.KillNode("n2");
    if (k == 41) fake.ReviveNode("n2");
    if (k == 95) fake.Submit("gold", 1, "h100", 86'400.0);
  }
  FakeSlurm NewCluster() {
    FakeSlurm fake(clock_);
    fake.AddNode("n1", "h100", 4);
    fake.AddNode("n2", "h100", 4);
    return fake;
  }
  // Cycles [from, to): the clock at k x kStep, jobs end, arrivals, one controller cycle.
  void Run(FakeSlurm& fake, Controller& c, int from, int to) {
    for (int k = from; k < to; ++k) {
      At(k * kStep);
      fake.Advance();
      Arrivals(fake, k);
      auto r = c.Cycle();
      ASSERT_TRUE(r.has_value()) << "cycle " << k << ": " << r.error().message();
      for (const auto& n : r->notes) ASSERT_EQ(n.find("charges not updated"), std::string::npos) << "cycle " << k << ": " << n;
    }
  }
  // GPU-ms per job that Slurm's record implies: every finished incarnation, running ones to now.
  static std::map<std::string, std::int64_t> ExpectedGpuMs(FakeSlurm& fake, std::int64_t now_s, int* incarnations) {
    std::map<std::string, std::int64_t> out;
    *incarnations = 0;
    for (const auto& i : fake.incarnations()) {
      if (i.end_s <= i.start_s) continue;
      out["slurm-" + std::to_string(i.job)] += i.gpus * (i.end_s - i.start_s) * 1000;
      ++*incarnations;
    }
    for (const auto& [id, j] : fake.jobs()) {
      if (j.state != "RUNNING" || now_s <= j.start_s) continue;
      out["slurm-" + std::to_string(id)] += j.gpus * (now_s - j.start_s) * 1000;
      ++*incarnations;
    }
    return out;
  }
  // Every charge, bill, allocation and cursor of the ledger, one per line, in key order.
  static std::string Dump(ledger::Ledger& l) {
    std::string out;
    for (const char* sql : {
             "SELECT 'charge', n.name, c.start_ms, c.end_ms, c.kind, IFNULL(w.name,''), c.cost_micro, c.gpu_ms "
             "FROM charges c JOIN nodes n ON n.id=c.node_id LEFT JOIN workloads w ON w.id=c.workload_id "
             "WHERE c.source='slurm' ORDER BY 2,3,5,6",
             "SELECT 'bill', n.name, b.start_ms, b.end_ms, b.bill_micro FROM bills b JOIN nodes n ON n.id=b.node_id "
             "WHERE b.source='slurm' ORDER BY 2,3",
             "SELECT 'alloc', cluster, job_id, incarnation, node, start_ms, end_ms, ended, gpus FROM job_allocations "
             "ORDER BY 2,3,4",
             "SELECT 'cursor', name, value FROM cursors ORDER BY 2"}) {
      sqlite3_stmt* st = nullptr;
      EXPECT_EQ(sqlite3_prepare_v2(l.db(), sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(l.db());
      while (sqlite3_step(st) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(st); ++c) {
          const unsigned char* t = sqlite3_column_text(st, c);
          out += (c > 0 ? "|" : "") + std::string(t != nullptr ? reinterpret_cast<const char*>(t) : "");
        }
        out += '\n';
      }
      sqlite3_finalize(st);
    }
    return out;
  }
};

TEST_F(SlurmChargeTest, AfterAHundredCyclesEveryIncarnationIsChargedExactlyOnceAndNothingIsLost) {
  FakeSlurm fake = NewCluster();
  auto ledger = ledger::Ledger::Open((dir_ / "ledger.db").string());
  ASSERT_TRUE(ledger.has_value()) << ledger.error().message();
  auto c = Make(fake, ledger->get());
  ASSERT_NE(c, nullptr);
  Run(fake, *c, 0, 60);
  // A restarted controller resumes from the cursor in the ledger (not from sacct's 7 days).
  c = Make(fake, ledger->get());
  ASSERT_NE(c, nullptr);
  fake.log.clear();
  Run(fake, *c, 60, 100);
  ASSERT_FALSE(HasFatalFailure());
  std::vector<std::string> since;
  for (const auto& cmd : fake.log)
    if (cmd[0] == "sacct" && cmd.size() > 5 && cmd[4] == "-S") since.push_back(cmd[5]);
  ASSERT_EQ(since.size(), 40u);
  for (const auto& s : since) EXPECT_NE(s, "now-7days");
  // Incremental: the last read starts from the last change (a start or an end within the last
  // cycles), minus the overlap, not from the start of the job running for 10 days.
  std::tm tm{};
  ASSERT_NE(strptime(since.back().c_str(), "%Y-%m-%dT%H:%M:%S", &tm), nullptr) << since.back();
  tm.tm_isdst = -1;
  const std::int64_t last_read = static_cast<std::int64_t>(std::mktime(&tm)) - kEpoch;
  EXPECT_GE(last_read, 95 * kStep - 600);
  EXPECT_LE(last_read, 99 * kStep);

  const std::int64_t now_s = kEpoch + 99 * kStep;
  int incarnations = 0;
  const auto want = ExpectedGpuMs(fake, now_s, &incarnations);
  // The jobs that ended 8 days before the end and the one running for 10 days are among them.
  const auto& first = fake.jobs().begin()->second;
  EXPECT_EQ(first.state, "RUNNING");
  EXPECT_LE(first.start_s, now_s - 9 * 86'400);
  int ended_early = 0;
  for (const auto& i : fake.incarnations()) ended_early += i.end_s < now_s - 8 * 86'400 ? 1 : 0;
  EXPECT_GE(ended_early, 3);
  bool requeued = false;
  for (const auto& [id, j] : fake.jobs()) requeued |= j.restarts > 0;
  EXPECT_TRUE(requeued);

  auto rep = (*ledger)->Attribute(ledger::Dimension::kJob, 0, INT64_MAX, false);
  ASSERT_TRUE(rep.has_value()) << rep.error().message();
  EXPECT_TRUE(rep->reconciliation.exact());
  const double usd = ToUsd(prices_.Find(static_cast<cluster::GpuModelIndex>(*gpu::ParseGpuName("H100", gpu::NameMatch::kName)))->usd_per_gpu_hour);
  std::map<std::string, std::int64_t> got;
  for (const auto& row : rep->rows) {
    if (row.key.empty()) continue;  // idle
    got[row.key] += row.gpu_ms;
    ASSERT_TRUE(want.count(row.key)) << row.key;
    // The amount: the job's GPU-hours at the H100 price (a micro-dollar of rounding per interval).
    const double want_usd = usd * static_cast<double>(want.at(row.key)) / 3.6e6;
    EXPECT_NEAR(ToUsd(row.cost), want_usd, 300e-6) << row.key;
  }
  EXPECT_EQ(got, want);
  // One allocation row per incarnation: present exactly once.
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2((*ledger)->db(), "SELECT COUNT(*), SUM(ended) FROM job_allocations", -1, &st, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), incarnations);
  EXPECT_EQ(sqlite3_column_int(st, 1), static_cast<int>(fake.incarnations().size()));
  sqlite3_finalize(st);
}

// Issue 38: with a fleet file's node pools, a node is charged at its pool's price (owned n1 at
// $1.50 per GPU-hour, not the H100 list price); a node no pool matches (n2) is reported once and not
// charged, never priced at a list price.
TEST_F(SlurmChargeTest, NodePoolsPriceEachNodeAndAnUnmatchedNodeIsReportedNotPriced) {
  cost::NodePool owned;
  owned.name = "h100-owned";
  owned.gpu_type = "H100";
  owned.kind = cost::PoolKind::kOwned;
  owned.usd_per_gpu_hour = 1.5;
  owned.match.node_name = "n1";
  config_.node_pools = {owned};
  config_.node_pools_source = "fleet.yaml";
  FakeSlurm fake = NewCluster();
  auto ledger = ledger::Ledger::Open((dir_ / "ledger.db").string());
  ASSERT_TRUE(ledger.has_value()) << ledger.error().message();
  auto c = Make(fake, ledger->get());
  ASSERT_NE(c, nullptr);
  int reported = 0;
  for (int k = 0; k < 20; ++k) {
    At(k * kStep);
    fake.Advance();
    Arrivals(fake, k);
    auto r = c->Cycle();
    ASSERT_TRUE(r.has_value()) << r.error().message();
    for (const auto& n : r->notes) {
      ASSERT_EQ(n.find("charges not updated"), std::string::npos) << n;
      if (n.find("error: node n2 is not charged") != std::string::npos) ++reported;
    }
  }
  EXPECT_EQ(reported, 1);  // once, at first sight
  ASSERT_EQ(c->unpriced_nodes().count("n2"), 1u);
  EXPECT_NE(c->unpriced_nodes().at("n2").find("n2"), std::string::npos) << c->unpriced_nodes().at("n2");
  const std::string dump = Dump(**ledger);
  EXPECT_EQ(dump.find("|n2|"), std::string::npos) << "n2 was charged:\n" << dump;
  auto rep = (*ledger)->Attribute(ledger::Dimension::kJob, 0, INT64_MAX, false);
  ASSERT_TRUE(rep.has_value()) << rep.error().message();
  EXPECT_TRUE(rep->reconciliation.exact());
  // n1's bill: its 4 GPUs at $1.50 per GPU-hour over what was charged.
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2((*ledger)->db(),
                               "SELECT SUM(b.bill_micro), SUM(b.end_ms - b.start_ms) FROM bills b JOIN nodes n "
                               "ON n.id=b.node_id WHERE n.name='n1'",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  const double bill_usd = static_cast<double>(sqlite3_column_int64(st, 0)) / 1e6;
  const double hours = static_cast<double>(sqlite3_column_int64(st, 1)) / 3.6e6;
  sqlite3_finalize(st);
  ASSERT_GT(hours, 0);
  EXPECT_NEAR(bill_usd, 4 * 1.5 * hours, 1e-3 * hours + 1e-4);
}

TEST_F(SlurmChargeTest, ChargesSurviveSacctForgettingJobsAndLateEndsAreAskedForById) {
  FakeSlurm fake = NewCluster();
  auto ledger = ledger::Ledger::Open((dir_ / "ledger.db").string());
  ASSERT_TRUE(ledger.has_value());
  auto c = Make(fake, ledger->get());
  ASSERT_NE(c, nullptr);
  auto check = [&](std::int64_t now_s) {
    int incarnations = 0;
    const auto want = ExpectedGpuMs(fake, now_s, &incarnations);
    auto rep = (*ledger)->Attribute(ledger::Dimension::kJob, 0, INT64_MAX, false);
    ASSERT_TRUE(rep.has_value());
    EXPECT_TRUE(rep->reconciliation.exact());
    std::map<std::string, std::int64_t> got;
    for (const auto& row : rep->rows)
      if (!row.key.empty()) got[row.key] += row.gpu_ms;
    EXPECT_EQ(got, want);
  };
  Run(fake, *c, 0, 10);
  ASSERT_FALSE(HasFatalFailure());
  // slurmdbd purges the finished jobs: what was charged for them stays.
  ASSERT_FALSE(fake.incarnations().empty());
  for (const auto& i : fake.incarnations()) fake.sacct_forgets.insert(i.job);
  Run(fake, *c, 10, 11);
  check(kEpoch + 10 * kStep);
  // A running job ends just after a read, and slurmdbd records the end late: the next read
  // misses it; by the read after, the cursor has moved past the end (another job started), so
  // the -S read does not return it: it is asked for by id and its end is charged.
  std::int64_t late = 0;
  for (const auto& [id, j] : fake.jobs())
    if (j.state == "RUNNING" && id != fake.jobs().begin()->first) late = id;
  ASSERT_NE(late, 0);
  auto& j = fake.jobs()[late];
  j.work_s = static_cast<double>(10 * kStep + 1 - (j.start_s - kEpoch));
  fake.sacct_forgets.insert(late);
  fake.Submit("gold", 1, "h100", 86'400.0);
  Run(fake, *c, 11, 12);
  fake.sacct_forgets.erase(late);
  fake.log.clear();
  Run(fake, *c, 12, 13);
  ASSERT_FALSE(HasFatalFailure());
  std::vector<std::string> by_id;
  for (const auto& cmd : fake.log)
    if (cmd[0] == "sacct" && cmd.size() > 5 && cmd[4] == "-j") by_id.push_back(cmd[5]);
  EXPECT_EQ(by_id, std::vector<std::string>{std::to_string(late)});
  check(kEpoch + 12 * kStep);
}

// A kill -9 while the cycle's transaction is open (SQLite's progress handler, called at every VM
// instruction, raises SIGKILL in a child process at points spread over the cycle's statements):
// the ledger is what the last committed cycle left, and a restarted controller's next cycle
// completes it exactly as an uninterrupted run did.
int g_progress = 0;
int g_kill_at = 0;
int CountProgress(void*) {
  ++g_progress;
  if (g_kill_at > 0 && g_progress >= g_kill_at) ::raise(SIGKILL);
  return 0;
}

TEST_F(SlurmChargeTest, AKillDashNineMidCycleLeavesTheLedgerConsistentAndTheNextCycleCompletesIt) {
  constexpr int kKill = 41;  // the cycle after n2 died: requeues, new incarnations, ends
  FakeSlurm ref_fake = NewCluster();
  auto ref_ledger = ledger::Ledger::Open((dir_ / "ref.db").string());
  ASSERT_TRUE(ref_ledger.has_value());
  auto ref = Make(ref_fake, ref_ledger->get());
  Run(ref_fake, *ref, 0, kKill);
  const std::string committed = Dump(**ref_ledger);
  g_progress = 0;
  g_kill_at = 0;
  sqlite3_progress_handler((*ref_ledger)->db(), 1, CountProgress, nullptr);
  Run(ref_fake, *ref, kKill, kKill + 1);
  sqlite3_progress_handler((*ref_ledger)->db(), 0, nullptr, nullptr);
  ASSERT_FALSE(HasFatalFailure());
  const int steps = g_progress;
  ASSERT_GT(steps, 50);
  const std::string completed = Dump(**ref_ledger);
  ASSERT_NE(completed, committed);

  for (int pct : {5, 25, 50, 75, 95, 100}) {
    SCOPED_TRACE("killed at " + std::to_string(pct) + "% of the cycle's SQLite steps");
    const std::string path = (dir_ / ("killed" + std::to_string(pct) + ".db")).string();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      FakeSlurm fake = NewCluster();
      auto l = ledger::Ledger::Open(path);
      if (!l.has_value()) ::_exit(2);
      auto c = Make(fake, l->get());
      Run(fake, *c, 0, kKill);
      g_progress = 0;
      g_kill_at = std::max(1, steps * pct / 100);
      sqlite3_progress_handler((*l)->db(), 1, CountProgress, nullptr);
      Run(fake, *c, kKill, kKill + 1);
      ::_exit(3);  // not killed
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
    // Consistent: what the last committed cycle left, integrity intact, bills = charges.
    auto l = ledger::Ledger::Open(path);
    ASSERT_TRUE(l.has_value()) << l.error().message();
    EXPECT_EQ(*(*l)->IntegrityCheck(), "ok");
    if (pct < 100) {
      EXPECT_EQ(Dump(**l), committed);
    } else {
      // The last step may come after the commit point (inside COMMIT): then the cycle is done,
      // and the next one must change nothing.
      const std::string d = Dump(**l);
      EXPECT_TRUE(d == committed || d == completed) << d;
    }
    auto rep = (*l)->Attribute(ledger::Dimension::kJob, 0, INT64_MAX, false);
    ASSERT_TRUE(rep.has_value());
    EXPECT_TRUE(rep->reconciliation.exact());
    // The next cycle (a restarted controller, Slurm as the killed one left it) completes it.
    FakeSlurm fake = NewCluster();
    auto replay = Make(fake);
    Run(fake, *replay, 0, kKill + 1);
    auto c = Make(fake, l->get());
    ASSERT_NE(c, nullptr);
    auto r = c->Cycle();
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_EQ(Dump(**l), completed);
  }
}

}  // namespace
}  // namespace seedance::slurm

namespace seedance::slurm {
namespace {

// ---- multi-node gangs (issue 27) ----

TEST_F(SlurmControllerTest, AGangGetsNodesOfOneModelChosenByThePolicyAndReleasedWithTheNodeList) {
  config_.tenancy.tenants = {Tenant("gold", tenancy::Tier::kGold, 16), Tenant("bronze", tenancy::Tier::kBronze, 16)};
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  fake.AddNode("n3", "a100", 4);
  fake.AddNode("n4", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  // n2 half full: bestfit puts the first member there.
  const auto small = fake.Submit("bronze", 2, "h100", 10'000);
  ASSERT_TRUE(fake.StartOn(small, "n2"));
  const auto gang = fake.Submit("gold", 2, "h100", 10'000, true, /*node_count=*/3);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  auto& jobs = fake.jobs();
  ASSERT_EQ(jobs[gang].state, "RUNNING");
  std::set<std::string> nodes;
  for (const auto& n : FakeSlurm::Split(jobs[gang].node)) nodes.insert(n);
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2", "n4"}));  // the three H100 nodes, never n3
  bool released = false;
  for (const auto& a : r->actions) {
    if (a.kind != ActionKind::kRelease || a.job != gang) continue;
    released = true;
    ASSERT_EQ(a.commands.size(), 2u);
    EXPECT_EQ(a.commands[0][3].rfind("nodelist=n2,", 0), 0u) << a.commands[0][3];  // bestfit: fullest first
    EXPECT_EQ(a.commands[1], (std::vector<std::string>{"scontrol", "release", std::to_string(gang)}));
    EXPECT_NE(a.gpu_type.find("3 nodes"), std::string::npos) << a.gpu_type;
  }
  EXPECT_TRUE(released);
  // The next cycle reads the gang back from squeue (n[1-2,4], a gres_detail per node): it holds
  // 2 GPUs on each, so a 3-GPU job fits no H100 node and a 2-GPU one fits.
  const auto three = fake.Submit("bronze", 3, "h100", 100);
  const auto two = fake.Submit("bronze", 2, "h100", 100);
  r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(jobs[three].state, "PENDING");
  EXPECT_EQ(jobs[two].state, "RUNNING");
  EXPECT_TRUE(jobs[two].node == "n1" || jobs[two].node == "n4") << jobs[two].node;
}

TEST_F(SlurmControllerTest, AGangNeverMixesModelsAndWaitsHeldUntilEnoughNodesOfOneModelAreFree) {
  config_.tenancy.tenants = {Tenant("gold", tenancy::Tier::kGold, 16), Tenant("bronze", tenancy::Tier::kBronze, 16)};
  config_.slurm.mode = "borrowing";
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  fake.AddNode("n3", "a100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto busy = fake.Submit("gold", 4, "h100", 100);
  ASSERT_TRUE(fake.StartOn(busy, "n2"));
  // Any model, 2 nodes x 4: one free H100 node and one free A100 node are not a gang.
  const auto gang = fake.Submit("gold", 4, "", 1'000, true, 2);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(Count(*r, ActionKind::kRelease), 0);
  EXPECT_EQ(fake.jobs()[gang].reason, "JobHeldUser");
  At(101);
  fake.Advance();
  r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(fake.jobs()[gang].state, "RUNNING");
  EXPECT_EQ(fake.jobs()[gang].node, "n1,n2");
}

TEST_F(SlurmControllerTest, AGangPreemptorsVictimsComeFromFindVictimsForGangOverItsNodes) {
  config_.tenancy.tenants = {Tenant("gold", tenancy::Tier::kGold, 12), Tenant("bronze", tenancy::Tier::kBronze, 0)};
  config_.slurm.mode = "seedance";
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  fake.AddNode("n3", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  // Bronze borrows everything: a 2-node gang early, a single-node job later.
  const auto bgang = fake.Submit("bronze", 4, "h100", 50'000, true, 2);
  ASSERT_TRUE(c->Cycle().has_value());
  At(600);
  const auto bone = fake.Submit("bronze", 4, "h100", 50'000);
  ASSERT_TRUE(c->Cycle().has_value());
  auto& jobs = fake.jobs();
  ASSERT_EQ(jobs[bgang].state, "RUNNING");
  ASSERT_EQ(jobs[bone].state, "RUNNING");
  // Gold asks 2 nodes x 4 H100 within its quota. Preempting the single-node job frees one node
  // (1200 s x 4 GPUs lost); the second node must come from the gang (1800 s x 8 GPUs), which frees
  // two: both are requeued, each once.
  At(1800);
  const auto ggang = fake.Submit("gold", 4, "h100", 100, true, 2);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  std::set<std::int64_t> requeued;
  for (const auto& a : r->actions) {
    if (a.kind == ActionKind::kRequeue) {
      EXPECT_TRUE(requeued.insert(a.job).second) << "twice: " << a.job;
    }
  }
  EXPECT_EQ(requeued, (std::set<std::int64_t>{bgang, bone}));
  At(1801);
  r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(jobs[ggang].state, "RUNNING");
  EXPECT_EQ(FakeSlurm::Split(jobs[ggang].node).size(), 2u);
}

TEST_F(SlurmControllerTest, AGangVictimIsSparedWhenSingleNodeVictimsFreeEnoughNodes) {
  config_.tenancy.tenants = {Tenant("gold", tenancy::Tier::kGold, 16), Tenant("bronze", tenancy::Tier::kBronze, 0)};
  config_.slurm.mode = "seedance";
  FakeSlurm fake(clock_);
  for (const char* n : {"n1", "n2", "n3", "n4"}) fake.AddNode(n, "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto bgang = fake.Submit("bronze", 4, "h100", 50'000, true, 2);  // oldest: loses the most
  ASSERT_TRUE(c->Cycle().has_value());
  At(600);
  const auto b1 = fake.Submit("bronze", 4, "h100", 50'000);
  const auto b2 = fake.Submit("bronze", 4, "h100", 50'000);
  ASSERT_TRUE(c->Cycle().has_value());
  At(900);
  const auto ggang = fake.Submit("gold", 4, "h100", 100, true, 2);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  std::set<std::int64_t> requeued;
  for (const auto& a : r->actions)
    if (a.kind == ActionKind::kRequeue) requeued.insert(a.job);
  EXPECT_EQ(requeued, (std::set<std::int64_t>{b1, b2}));
  EXPECT_EQ(fake.jobs()[bgang].state, "RUNNING");
  (void)ggang;
}

TEST_F(SlurmControllerTest, GpusPerJobOverSeveralNodesMustSplitEvenly) {
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  fake.squeue_override = R"({"jobs":[{"job_id":9,"account":"gold","partition":"gpu","job_state":"PENDING",
    "state_reason":"JobHeldUser","node_count":2,"tres_per_job":"gres:gpu:3"}]})";
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(Count(*r, ActionKind::kRelease), 0);
  bool named = false;
  for (const auto& a : r->actions)
    named |= a.kind == ActionKind::kComment && a.reason.find("tres_per_job: 3 GPUs do not split evenly over 2 nodes") != std::string::npos;
  EXPECT_TRUE(named) << (r->actions.empty() ? "" : FormatAction(r->actions[0], true));
}

// ---- checkpoint before requeue (issue 27) ----

TEST_F(SlurmControllerTest, AVictimIsSignalledThenRequeuedOnlyAfterTheGracePeriod) {
  config_.tenancy.tenants = {Tenant("gold", tenancy::Tier::kGold, 4), Tenant("bronze", tenancy::Tier::kBronze, 0)};
  config_.slurm.mode = "seedance";
  config_.slurm.preempt_signal = "USR2";
  config_.slurm.preempt_grace_s = 90;
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto b = fake.Submit("bronze", 4, "h100", 50'000);
  ASSERT_TRUE(c->Cycle().has_value());
  At(1000);
  const auto g = fake.Submit("gold", 4, "h100", 100);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  // The signal, not the requeue; the cycle asks to be woken when the grace ends.
  ASSERT_EQ(Count(*r, ActionKind::kSignal), 1);
  EXPECT_EQ(Count(*r, ActionKind::kRequeue), 0);
  for (const auto& a : r->actions) {
    if (a.kind == ActionKind::kSignal) {
      EXPECT_EQ(a.commands[0], (std::vector<std::string>{"scancel", "--signal=USR2", "--batch", std::to_string(b)}));
    }
  }
  EXPECT_EQ(r->wake_at_s, kEpoch + 1090.0);
  ASSERT_EQ(fake.signals.size(), 1u);
  EXPECT_EQ(fake.signals[0], std::make_tuple(b, std::string("USR2"), kEpoch + 1000));
  auto& jobs = fake.jobs();
  // Within the grace: it keeps running, nothing else happens, the preemptor waits held.
  for (std::int64_t t : {1001, 1050, 1089}) {
    At(t);
    r = c->Cycle();
    ASSERT_TRUE(r.has_value()) << r.error().message();
    EXPECT_TRUE(r->actions.empty()) << t << ": " << FormatAction(r->actions[0], true);
    EXPECT_EQ(jobs[b].state, "RUNNING") << t;
    EXPECT_EQ(jobs[g].state, "PENDING") << t;
  }
  EXPECT_EQ(fake.signals.size(), 1u);  // signalled once
  At(1090);
  r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(Count(*r, ActionKind::kRequeue), 1);
  EXPECT_NE(r->actions[0].reason.find("SIGUSR2 sent 90 s ago"), std::string::npos) << r->actions[0].reason;
  EXPECT_EQ(jobs[b].state, "PENDING");
  EXPECT_EQ(jobs[b].reason, "job requeued in held state");
  At(1091);
  ASSERT_TRUE(c->Cycle().has_value());
  EXPECT_EQ(jobs[g].state, "RUNNING");
  // The victim's incarnation ended at the requeue, not at the signal.
  ASSERT_FALSE(fake.incarnations().empty());
  EXPECT_EQ(fake.incarnations().back().end_s, kEpoch + 1090);
}

TEST_F(SlurmControllerTest, AFailedSignalIsRetriedAndTheGraceStartsWhenItTakes) {
  config_.tenancy.tenants = {Tenant("gold", tenancy::Tier::kGold, 4), Tenant("bronze", tenancy::Tier::kBronze, 0)};
  config_.slurm.mode = "seedance";
  config_.slurm.preempt_grace_s = 30;
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto b = fake.Submit("bronze", 4, "h100", 50'000);
  ASSERT_TRUE(c->Cycle().has_value());
  At(100);
  fake.Submit("gold", 4, "h100", 100);
  fake.fail = [](const std::vector<std::string>& argv) { return argv[0] == "scancel"; };
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(Count(*r, ActionKind::kSignal), 1);
  EXPECT_FALSE(r->actions[0].ok);
  fake.fail = nullptr;
  At(140);  // past a grace counted from the failed attempt: signalled now, not requeued
  r = c->Cycle();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(Count(*r, ActionKind::kSignal), 1);
  EXPECT_EQ(Count(*r, ActionKind::kRequeue), 0);
  EXPECT_EQ(fake.jobs()[b].state, "RUNNING");
  At(170);
  r = c->Cycle();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(Count(*r, ActionKind::kRequeue), 1);
}

TEST_F(SlurmControllerTest, LostWorkCountsFromTheLastDeclaredCheckpointNotTheStart) {
  // Two Bronze jobs on two nodes; the older one checkpoints every 15 minutes (its comment), the
  // younger declares nothing (config default: none). Gold needs one node: the victim is the job
  // that loses less since its last checkpoint, the older one (200 s lost vs 600 s).
  config_.tenancy.tenants = {Tenant("gold", tenancy::Tier::kGold, 8), Tenant("bronze", tenancy::Tier::kBronze, 0)};
  config_.slurm.mode = "seedance";
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto old_b = fake.Submit("bronze", 4, "h100", 50'000);
  fake.jobs()[old_b].comment = "nightly run seedance.checkpoint=15m";
  ASSERT_TRUE(c->Cycle().has_value());
  At(1400);
  const auto new_b = fake.Submit("bronze", 4, "h100", 50'000);
  ASSERT_TRUE(c->Cycle().has_value());
  At(2000);  // old: 2000 s = 2 checkpoints + 200 s; new: 600 s since its start
  fake.Submit("gold", 4, "h100", 100);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(Count(*r, ActionKind::kRequeue), 1);
  for (const auto& a : r->actions) {
    if (a.kind == ActionKind::kRequeue) {
      EXPECT_EQ(a.job, old_b);
    }
  }
  EXPECT_EQ(fake.jobs()[new_b].state, "RUNNING");
}

TEST_F(SlurmControllerTest, TheConfigsDefaultCheckpointIntervalAndABadTokenAreUsedAsDocumented) {
  config_.tenancy.tenants = {Tenant("gold", tenancy::Tier::kGold, 8), Tenant("bronze", tenancy::Tier::kBronze, 0)};
  config_.slurm.mode = "seedance";
  config_.slurm.checkpoint_interval_s = 500;  // old: 2000 % 500 = 0 lost; new: 600 % 500 = 100
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto old_b = fake.Submit("bronze", 4, "h100", 50'000);
  ASSERT_TRUE(c->Cycle().has_value());
  At(1400);
  const auto new_b = fake.Submit("bronze", 4, "h100", 50'000);
  fake.jobs()[new_b].comment = "seedance.checkpoint=soon";
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value());
  bool warned = false;
  for (const auto& n : r->notes) warned |= n.find("comment: seedance.checkpoint='soon' is not a positive duration") != std::string::npos;
  EXPECT_TRUE(warned);
  At(2000);
  fake.Submit("gold", 4, "h100", 100);
  r = c->Cycle();
  ASSERT_TRUE(r.has_value());
  for (const auto& a : r->actions) {
    if (a.kind == ActionKind::kRequeue) {
      EXPECT_EQ(a.job, old_b);
    }
  }
  EXPECT_EQ(Count(*r, ActionKind::kRequeue), 1);
}

// ---- fail-open and standby (issue 27) ----

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(SlurmControllerTest, EveryCycleWritesTheHeartbeatAndShutdownHandsBackWhatItHolds) {
  config_.slurm.heartbeat_path = (dir_ / "hb").string();
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  const auto running = fake.Submit("gold", 4, "h100", 10'000);
  const auto waiting = fake.Submit("gold", 4, "h100", 10'000);                 // over gold's quota: queued
  ASSERT_TRUE(c->Cycle().has_value());
  EXPECT_EQ(ReadAll(dir_ / "hb"), std::to_string(kEpoch) + "\n");
  At(7);
  ASSERT_TRUE(c->Cycle().has_value());
  EXPECT_EQ(ReadAll(dir_ / "hb"), std::to_string(kEpoch + 7) + "\n");
  // A bad request is held for its reason: it stays held after the shutdown.
  const auto bad = fake.Submit("nobody", 1, "h100", 10);
  ASSERT_TRUE(c->Cycle().has_value());
  EXPECT_EQ(fake.jobs()[running].state, "RUNNING");
  EXPECT_EQ(fake.jobs()[waiting].reason, "JobHeldUser");
  const auto before = fake.Mutations().size();
  const auto bye = c->Shutdown();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "hb"));
  ASSERT_EQ(bye.actions.size(), 1u);
  EXPECT_EQ(bye.actions[0].job, waiting);
  EXPECT_EQ(bye.actions[0].commands.back(), (std::vector<std::string>{"scontrol", "release", std::to_string(waiting)}));
  EXPECT_EQ(fake.Mutations().size(), before + 1);
  EXPECT_EQ(fake.jobs()[waiting].reason, "None");  // Slurm's to schedule now
  EXPECT_EQ(fake.jobs()[bad].reason, "JobHeldUser");
}

TEST_F(SlurmControllerTest, DryRunWritesNoHeartbeatAndShutdownDoesNothing) {
  config_.slurm.heartbeat_path = (dir_ / "hb").string();
  config_.dry_run = true;
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  fake.Submit("gold", 4, "h100", 10);
  fake.Submit("gold", 4, "h100", 10);
  ASSERT_TRUE(c->Cycle().has_value());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "hb"));
  EXPECT_TRUE(c->Shutdown().actions.empty());
  EXPECT_TRUE(fake.Mutations().empty());
}

TEST(SlurmStandby, TheLockHasOneHolderAndPassesOnWhenTheHolderIsKilled) {
  const auto dir = std::filesystem::temp_directory_path() / ("slurm_lock_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "lock").string();
  // A child takes the lock and waits to be killed.
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto l = LeaderLock::TryAcquire(path);
    const char ok = l.has_value() && *l ? '1' : '0';
    [[maybe_unused]] auto n = ::write(ready[1], &ok, 1);
    for (;;) ::pause();
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');
  auto standby = LeaderLock::TryAcquire(path);
  ASSERT_TRUE(standby.has_value()) << standby.error().message();
  EXPECT_EQ(*standby, nullptr);  // held: stands by
  EXPECT_EQ(LeaderLock::Holder(path).rfind(std::to_string(child) + "@", 0), 0u) << LeaderLock::Holder(path);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  auto taken = LeaderLock::TryAcquire(path);
  ASSERT_TRUE(taken.has_value());
  ASSERT_NE(*taken, nullptr);  // the kernel dropped the dead holder's lock
  EXPECT_EQ(LeaderLock::Holder(path).rfind(std::to_string(::getpid()) + "@", 0), 0u);
  EXPECT_EQ(*LeaderLock::TryAcquire(path), nullptr);  // one holder at a time, even in one process
  taken->reset();
  EXPECT_NE(*LeaderLock::TryAcquire(path), nullptr);
  auto nowhere = LeaderLock::TryAcquire((dir / "no" / "such" / "lock").string());
  ASSERT_FALSE(nowhere.has_value());
  EXPECT_NE(nowhere.error().message().find("slurm.lock: cannot open"), std::string::npos);
  ::close(ready[0]);
  ::close(ready[1]);
  std::filesystem::remove_all(dir);
}

TEST_F(SlurmControllerTest, AJobSubmittedWhileTheControllerWasDownIsReleasedInTheCycleThatAdoptsTheRest) {
  config_.slurm.mode = "seedance";
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  const auto started = fake.Submit("gold", 1, "h100", 10'000, /*held=*/false);
  ASSERT_TRUE(fake.StartOn(started, "n1"));  // Slurm ran it on its own (fail-open)
  const auto held = fake.Submit("gold", 1, "h100", 10'000);
  auto c = Make(fake);
  ASSERT_NE(c, nullptr);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(fake.jobs()[held].state, "RUNNING");
  EXPECT_EQ(Count(*r, ActionKind::kRelease), 1);
}

}  // namespace
}  // namespace seedance::slurm

namespace seedance::slurm {
namespace {

// ---- GPU telemetry per Slurm job (scontrol show job -d + dcgm samples by node and gpu index) ----

class SlurmGpuTelemetryTest : public SlurmControllerTest {
 protected:
  static void Ingest(ledger::Ledger& l, const std::string& text) {
    auto w = l.NewSampleWriter("dcgm", 10'000);
    ASSERT_TRUE(w.has_value());
    telemetry::ParseStats stats;
    telemetry::ParseText(telemetry::InputFormat::kDcgm, text, telemetry::ParseOptions{}, **w, stats);
    ASSERT_EQ(stats.rejected, 0u);
    ASSERT_TRUE((*w)->Finish().ok());
  }
  // Every GPU of the cluster's nodes with the utilisation of the job holding it (`busy` for GPUs no
  // job of the controller holds: other work whose samples must not be charged to these jobs).
  static std::vector<testing::DcgmGpu> Gpus(FakeSlurm& fake, const std::map<std::int64_t, double>& util, double busy) {
    std::vector<testing::DcgmGpu> out;
    for (const auto& n : fake.nodes()) {
      for (int g = 0; g < n.gpus; ++g) {
        double u = busy;
        for (const auto& [id, j] : fake.jobs()) {
          const auto names = FakeSlurm::Split(j.node);
          for (std::size_t k = 0; k < names.size(); ++k)
            if (names[k] == n.name && std::count(j.idx[k].begin(), j.idx[k].end(), g) && util.count(id)) u = util.at(id);
        }
        testing::DcgmGpu d;
        d.node = n.name;
        d.index = g;
        d.util = [u](std::int64_t) { return u; };
        out.push_back(d);
      }
    }
    return out;
  }
  static int DetailReads(const FakeSlurm& fake, std::int64_t id) {
    int n = 0;
    for (const auto& c : fake.log) n += c == std::vector<std::string>{"scontrol", "show", "job", "-d", std::to_string(id)};
    return n;
  }
};

TEST_F(SlurmGpuTelemetryTest, AMultiNodeJobIsChargedOnEveryNodeWithTheDevicesSlurmGaveIt) {
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  auto ledger = ledger::Ledger::Open((dir_ / "ledger.db").string());
  ASSERT_TRUE(ledger.has_value()) << ledger.error().message();
  auto c = Make(fake, ledger->get());
  ASSERT_NE(c, nullptr);
  const auto single = fake.Submit("bronze", 1, "h100", 86'400);
  ASSERT_TRUE(fake.StartOn(single, "n1"));
  const auto gang = fake.Submit("gold", 2, "h100", 86'400, true, /*node_count=*/2);
  ASSERT_TRUE(c->Cycle().has_value());
  auto& jobs = fake.jobs();
  ASSERT_EQ(jobs[gang].state, "RUNNING");
  ASSERT_EQ(FakeSlurm::Split(jobs[gang].node).size(), 2u);
  At(3600);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  for (const auto& n : r->notes) EXPECT_EQ(n.find("not"), std::string::npos) << n;
  At(7200);
  ASSERT_TRUE(c->Cycle().has_value());
  // The devices are read once per incarnation.
  EXPECT_EQ(DetailReads(fake, gang), 1);
  EXPECT_EQ(DetailReads(fake, single), 1);
  (*ledger)->set_source("slurm");
  auto allocs = (*ledger)->FindJobAllocations("fake", gang, jobs[gang].start_s);
  ASSERT_TRUE(allocs.has_value()) << allocs.error().message();
  ASSERT_EQ(allocs->size(), 2u);
  const auto names = FakeSlurm::Split(jobs[gang].node);
  for (std::size_t k = 0; k < 2; ++k) {
    const auto& a = (*allocs)[k];
    const auto at = std::find(names.begin(), names.end(), a.node) - names.begin();
    ASSERT_LT(at, 2);
    EXPECT_EQ(a.gpus, 2) << a.node;
    EXPECT_EQ(a.gpu_indices, jobs[gang].idx[static_cast<std::size_t>(at)]) << a.node;
    EXPECT_FALSE(a.ended);
  }
  // Charged on both nodes: 2 GPUs x 2 h on each, 4 GPUs x 2 h in all; the single-node job 1 x 2 h.
  std::map<std::pair<std::string, std::string>, std::int64_t> gpu_ms;  // (node, job)
  ASSERT_TRUE((*ledger)->ForEachChargeLine(0, INT64_MAX, [&](const ledger::Ledger::ChargeLine& l) {
    if (l.kind == ledger::ChargeKind::kWorkload) gpu_ms[{l.node, l.workload.job}] += l.gpu_ms;
  }).ok());
  const std::string g = "slurm-" + std::to_string(gang), s1 = "slurm-" + std::to_string(single);
  EXPECT_EQ(gpu_ms[std::pair(names[0], g)], 2 * 7'200'000);
  EXPECT_EQ(gpu_ms[std::pair(names[1], g)], 2 * 7'200'000);
  EXPECT_EQ(gpu_ms[std::pair(std::string("n1"), s1)], 7'200'000);
  auto rep = (*ledger)->Attribute(ledger::Dimension::kJob, 0, INT64_MAX, false);
  ASSERT_TRUE(rep.has_value());
  EXPECT_TRUE(rep->reconciliation.exact());
}

TEST_F(SlurmGpuTelemetryTest, DcgmSamplesJoinTheJobByNodeAndGpuIndexForAttributionTheBreakerAndAdvise) {
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4);
  fake.AddNode("n2", "h100", 4);
  auto ledger = ledger::Ledger::Open((dir_ / "ledger.db").string());
  ASSERT_TRUE(ledger.has_value()) << ledger.error().message();
  auto c = Make(fake, ledger->get());
  ASSERT_NE(c, nullptr);
  const auto gang = fake.Submit("gold", 2, "h100", 86'400, true, /*node_count=*/2);
  const auto single = fake.Submit("bronze", 1, "h100", 86'400);
  ASSERT_TRUE(c->Cycle().has_value());
  auto& jobs = fake.jobs();
  ASSERT_EQ(jobs[gang].state, "RUNNING");
  ASSERT_EQ(jobs[single].state, "RUNNING");
  At(3600);
  ASSERT_TRUE(c->Cycle().has_value());
  // One hour of samples every 60 s on all 8 GPUs: the gang's at 20%, the single job's at 90%, the
  // 3 others at 50% (work this controller does not know of).
  const std::int64_t t0 = kEpoch * 1000;
  Ingest(**ledger, testing::DcgmScrapes(Gpus(fake, {{gang, 0.2}, {single, 0.9}}, 0.5), t0, t0 + 3'600'000, 60'000));
  ASSERT_FALSE(HasFatalFailure());
  auto config = ledger::LedgerConfig::Parse(R"({"breaker": {"default_hourly_usd": 0.01}})", "cfg.json");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  auto t = ledger::AttributeTelemetry(**ledger, *config, &prices_, t0, t0 + 3'600'000);
  ASSERT_TRUE(t.has_value()) << t.error().message();
  std::map<std::string, double> hours, util_x_hours;
  for (const auto& [key, ev] : t->evidence) {
    hours[ev.job] += ev.gpu_hours;
    util_x_hours[ev.job] += ev.gpu_hours * ev.mean_utilization;
  }
  const std::string g = "slurm-" + std::to_string(gang), s1 = "slurm-" + std::to_string(single);
  // Exactly the GPUs each job holds, never the 3 busy GPUs it does not.
  EXPECT_EQ(hours.size(), 2u);
  EXPECT_NEAR(hours[g], 4.0, 1e-9);
  EXPECT_NEAR(hours[s1], 1.0, 1e-9);
  EXPECT_NEAR(util_x_hours[g] / hours[g], 0.2, 1e-6);
  EXPECT_NEAR(util_x_hours[s1] / hours[s1], 0.9, 1e-6);
  EXPECT_EQ(t->joined_by_events, 60 * 5);
  EXPECT_EQ(t->unmatched_events, 0);
  // The breaker diagnoses the Slurm job from that evidence as it does a pod: 20% busy on 4 GPUs.
  auto job_hours = (*ledger)->JobHours(t0, t0 + 3'600'000);
  ASSERT_TRUE(job_hours.has_value());
  const auto findings = ledger::EvaluateBreaker(*job_hours, t->evidence, *config, &prices_);
  bool diagnosed = false;
  for (const auto& f : findings) {
    if (f.job != g || f.evidence.job.empty()) continue;
    diagnosed = true;
    EXPECT_NEAR(f.evidence.mean_utilization, 0.2, 1e-6);
    EXPECT_FALSE(f.suggestion.empty());
  }
  EXPECT_TRUE(diagnosed);
  // seedance advise reads the same evidence: the Slurm job is a job of the fleet rules, 20% busy.
  auto in = advise::FleetInputsFromLedger(**ledger, *t, *config, t0, t0 + 3'600'000);
  ASSERT_TRUE(in.has_value()) << in.error().message();
  const advise::JobUsage* usage = nullptr;
  for (const auto& j : in->jobs)
    if (j.job == g) usage = &j;
  ASSERT_NE(usage, nullptr);
  EXPECT_NEAR(usage->gpu_hours, 4.0, 1e-9);
  EXPECT_NEAR(usage->activity, 0.2, 1e-6);
  advise::FleetRules rules;
  rules.mc_samples = 500;
  auto advice = advise::FleetFindings(*in, prices_, *config, rules);
  ASSERT_TRUE(advice.has_value()) << advice.error().message();
  bool advised = false;
  for (const auto& f : *advice) advised |= f.target.find(g) != std::string::npos && f.usd_per_month > 0;
  EXPECT_TRUE(advised) << advise::FindingsTable(*advice);
}

TEST_F(SlurmGpuTelemetryTest, JobsOfUnmanagedPartitionsAreBilledAndJoinedToTelemetryButNeverTouched) {
  // The controller manages partition "gpu" only. n1 is also in "shared" (overlapping partitions),
  // n3 only in "research". The bill covers the whole cluster: the GPU jobs of the other partitions
  // are charged and joined to their dcgm samples, read-only.
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 4, {"gpu", "shared"});
  fake.AddNode("n2", "h100", 4);
  fake.AddNode("n3", "a100", 2, {"research"});
  fake.sacct_untyped = true;  // n3's model comes from sinfo, not from sacct
  auto ledger = ledger::Ledger::Open((dir_ / "ledger.db").string());
  ASSERT_TRUE(ledger.has_value()) << ledger.error().message();
  auto c = Make(fake, ledger->get());
  ASSERT_NE(c, nullptr);
  auto& jobs = fake.jobs();
  // Started by Slurm alone in their partitions, by accounts the config does not know.
  const auto shared = fake.Submit("lab", 2, "h100", 86'400);
  jobs[shared].partition = "shared";
  ASSERT_TRUE(fake.StartOn(shared, "n1"));
  const auto research = fake.Submit("physics", 2, "a100", 86'400);
  jobs[research].partition = "research";
  ASSERT_TRUE(fake.StartOn(research, "n3"));
  // Pending and not held in its partition: the controller must not hold it.
  const auto waiting = fake.Submit("physics", 1, "a100", 600, /*held=*/false);
  jobs[waiting].partition = "research";
  // A managed job that needs a whole H100 node: n1 has 2 GPUs taken by the "shared" job.
  const auto gold = fake.Submit("gold", 4, "h100", 86'400);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(jobs[gold].state, "RUNNING");
  EXPECT_EQ(jobs[gold].node, "n2");  // not n1, whose free GPUs the other partition's job holds
  At(3600);
  ASSERT_TRUE(c->Cycle().has_value());
  At(7200);
  r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  for (const auto& n : r->notes) EXPECT_EQ(n.find("not updated"), std::string::npos) << n;
  // Read-only: the only command naming these jobs is `scontrol show job -d J`, once per incarnation.
  for (const auto id : {shared, research, waiting}) {
    const std::string sid = std::to_string(id);
    for (const auto& cmd : fake.Mutations()) {
      const bool names = std::any_of(cmd.begin(), cmd.end(), [&](const std::string& a) { return a == sid || a == "jobid=" + sid; });
      if (!names) continue;
      EXPECT_EQ(cmd, (std::vector<std::string>{"scontrol", "show", "job", "-d", sid})) << JoinArgv(cmd);
    }
  }
  EXPECT_EQ(DetailReads(fake, shared), 1);
  EXPECT_EQ(DetailReads(fake, research), 1);
  EXPECT_EQ(DetailReads(fake, waiting), 0);
  EXPECT_EQ(jobs[waiting].state, "PENDING");
  EXPECT_EQ(jobs[waiting].reason, "None");
  EXPECT_TRUE(fake.signals.empty());
  // Charged with the devices Slurm gave them, namespace = their account.
  (*ledger)->set_source("slurm");
  for (const auto& [id, node] : {std::pair{shared, std::string("n1")}, std::pair{research, std::string("n3")}}) {
    auto allocs = (*ledger)->FindJobAllocations("fake", id, jobs[id].start_s);
    ASSERT_TRUE(allocs.has_value()) << allocs.error().message();
    ASSERT_EQ(allocs->size(), 1u) << id;
    EXPECT_EQ((*allocs)[0].node, node);
    EXPECT_EQ((*allocs)[0].gpus, 2);
    EXPECT_EQ((*allocs)[0].gpu_indices, jobs[id].idx[0]) << id;
    EXPECT_EQ((*allocs)[0].workload.namespace_name, jobs[id].account);
  }
  std::map<std::string, std::int64_t> gpu_ms;
  ASSERT_TRUE((*ledger)->ForEachChargeLine(0, INT64_MAX, [&](const ledger::Ledger::ChargeLine& l) {
    if (l.kind == ledger::ChargeKind::kWorkload) gpu_ms[l.workload.job] += l.gpu_ms;
  }).ok());
  const std::string s1 = "slurm-" + std::to_string(shared), r1 = "slurm-" + std::to_string(research);
  EXPECT_EQ(gpu_ms[s1], 2 * 7'200'000);
  EXPECT_EQ(gpu_ms[r1], 2 * 7'200'000);
  EXPECT_EQ(gpu_ms["slurm-" + std::to_string(gold)], 4 * 7'200'000);
  // Their dcgm samples join them by node and GPU index, never another GPU's.
  const std::int64_t t0 = kEpoch * 1000;
  Ingest(**ledger, testing::DcgmScrapes(Gpus(fake, {{shared, 0.3}, {research, 0.1}, {gold, 0.8}}, 0.5), t0,
                                        t0 + 3'600'000, 60'000));
  ASSERT_FALSE(HasFatalFailure());
  auto config = ledger::LedgerConfig::Parse(R"({})", "cfg.json");
  ASSERT_TRUE(config.has_value()) << config.error().message();
  auto t = ledger::AttributeTelemetry(**ledger, *config, &prices_, t0, t0 + 3'600'000);
  ASSERT_TRUE(t.has_value()) << t.error().message();
  std::map<std::string, double> hours, util_x_hours;
  for (const auto& [key, ev] : t->evidence) {
    hours[ev.job] += ev.gpu_hours;
    util_x_hours[ev.job] += ev.gpu_hours * ev.mean_utilization;
  }
  EXPECT_NEAR(hours[s1], 2.0, 1e-9);
  EXPECT_NEAR(hours[r1], 2.0, 1e-9);
  EXPECT_NEAR(util_x_hours[s1] / hours[s1], 0.3, 1e-6);
  EXPECT_NEAR(util_x_hours[r1] / hours[r1], 0.1, 1e-6);
  EXPECT_EQ(t->unmatched_events, 0);
}

TEST_F(SlurmGpuTelemetryTest, AJobIdleByItsGpuTelemetryIsReclaimed) {
  // Silver may not preempt a Bronze job that runs within its own quota, unless the Bronze job is
  // idle past its tier's trigger (S4.1): with Slurm, idle by the dcgm samples of its GPUs.
  config_.slurm.mode = "seedance";
  config_.tenancy.tenants = {Tenant("silver", tenancy::Tier::kSilver, 2), Tenant("bronze", tenancy::Tier::kBronze, 2)};
  FakeSlurm fake(clock_);
  fake.AddNode("n1", "h100", 2);
  auto ledger = ledger::Ledger::Open((dir_ / "ledger.db").string());
  ASSERT_TRUE(ledger.has_value()) << ledger.error().message();
  auto c = Make(fake, ledger->get());
  ASSERT_NE(c, nullptr);
  const auto bronze = fake.Submit("bronze", 2, "h100", 5000);
  ASSERT_TRUE(c->Cycle().has_value());
  auto& jobs = fake.jobs();
  ASSERT_EQ(jobs[bronze].state, "RUNNING");
  // Busy for 10 minutes: the Silver job waits (no node), nothing is preempted.
  const std::int64_t t0 = kEpoch * 1000;
  Ingest(**ledger, testing::DcgmScrapes(Gpus(fake, {{bronze, 0.7}}, 0.0), t0, t0 + 600'000, 30'000));
  ASSERT_FALSE(HasFatalFailure());
  At(600);
  const auto silver = fake.Submit("silver", 2, "h100", 100);
  auto r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(Count(*r, ActionKind::kRequeue), 0);
  EXPECT_EQ(jobs[bronze].state, "RUNNING");
  // Then idle (0%) for 5 minutes, past Bronze's 60 s trigger: reclaimed for the Silver job.
  Ingest(**ledger, testing::DcgmScrapes(Gpus(fake, {{bronze, 0.0}}, 0.0), t0 + 600'000, t0 + 900'000, 30'000));
  ASSERT_FALSE(HasFatalFailure());
  At(900);
  r = c->Cycle();
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_EQ(Count(*r, ActionKind::kRequeue), 1);
  for (const auto& a : r->actions) {
    if (a.kind != ActionKind::kRequeue) continue;
    EXPECT_EQ(a.job, bronze);
    EXPECT_EQ(a.reason.rfind("idle reclaim for job " + std::to_string(silver), 0), 0u) << a.reason;
  }
  At(905);
  ASSERT_TRUE(c->Cycle().has_value());
  EXPECT_EQ(jobs[silver].state, "RUNNING");
}

}  // namespace
}  // namespace seedance::slurm
