// /v1/workloads over HTTP (in-process server on an ephemeral port) and the online Kueue runner.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "seedance/server/app.h"
#include "seedance/server/kueue_online.h"

namespace seedance::server {
namespace {

using nlohmann::json;

class AdmissionServiceTest : public ::testing::Test {
 protected:
  void StartWith(const ServerConfig& config) {
    app_.now_ms = [this] { return now_ms_.load(); };
    app_.config.Set(std::make_shared<ServerConfig>(config));
    service_ = MakeAdmissionService(app_);
    service_->Register(http_);
    port_ = http_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { http_.listen_after_bind(); });
    for (int i = 0; i < 500 && !http_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(http_.is_running());
  }
  void TearDown() override {
    http_.stop();
    if (thread_.joinable()) thread_.join();
  }
  static ServerConfig TwoTenants(const std::string& mode) {
    ServerConfig c = ServerConfig::Defaults();
    c.admission_mode = mode;
    c.tenancy.tenants.clear();
    for (const char* name : {"team-a", "team-b"}) {
      tenancy::TenantConfig t;
      t.name = name;
      t.cohort = "pool";
      t.tier = tenancy::Tier::kSilver;
      t.quota.push_back({"cpu", 2, std::nullopt, std::nullopt});
      c.tenancy.tenants.push_back(t);
    }
    return c;
  }
  httplib::Result Post(const std::string& path, const json& body) {
    httplib::Client cli("127.0.0.1", port_);
    return cli.Post(path.c_str(), body.dump(), "application/json");
  }
  static json Workload(const std::string& name, const std::string& tenant, double cpu, int priority = 0) {
    return {{"name", name}, {"tenant", tenant}, {"priority", priority}, {"request", {{"cpu", cpu}}}};
  }

  App app_;
  std::atomic<std::int64_t> now_ms_{1'000'000};
  std::unique_ptr<Service> service_;
  httplib::Server http_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(AdmissionServiceTest, AdmitsBorrowsAndReclaimsInKueueMode) {
  StartWith(TwoTenants("kueue"));
  // team-a takes its 2 cpu and borrows team-b's 2 while team-b is idle.
  auto res = Post("/v1/workloads", {{"workloads", {Workload("a1", "team-a", 2), Workload("a2", "team-a", 2)}}});
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  json j = json::parse(res->body);
  ASSERT_EQ(j["decisions"].size(), 2u);
  EXPECT_EQ(j["decisions"][0]["kind"], "admit");
  EXPECT_EQ(j["decisions"][0]["name"], "a1");
  EXPECT_FALSE(j["decisions"][0]["borrowing"].get<bool>());
  EXPECT_EQ(j["decisions"][1]["name"], "a2");
  EXPECT_TRUE(j["decisions"][1]["borrowing"].get<bool>());

  // team-b claims its nominal quota back: the borrower is evicted for it (reclaimWithinCohort).
  now_ms_ += 1000;
  res = Post("/v1/workloads", {{"workloads", {Workload("b1", "team-b", 2)}}});
  ASSERT_EQ(res->status, 200) << res->body;
  j = json::parse(res->body);
  ASSERT_EQ(j["decisions"].size(), 1u) << j.dump();
  EXPECT_EQ(j["decisions"][0]["kind"], "evict");
  // Either of team-a's workloads frees the quota (Kueue orders equal candidates by admission
  // time, then id).
  const std::string victim = j["decisions"][0]["name"];
  EXPECT_THAT(victim, ::testing::AnyOf("a1", "a2"));
  EXPECT_EQ(j["decisions"][0]["for"], "b1");

  // The victim leaves its node: b1 is admitted in the same answer, the victim waits again.
  res = Post("/v1/workloads/evicted", {{"workloads", {victim}}});
  ASSERT_EQ(res->status, 200) << res->body;
  j = json::parse(res->body);
  ASSERT_EQ(j["decisions"].size(), 1u) << j.dump();
  EXPECT_EQ(j["decisions"][0]["name"], "b1");
  EXPECT_EQ(j["pending"], 1);

  // b1 finishes: the victim borrows again.
  res = Post("/v1/workloads/finished", {{"workloads", {"b1"}}});
  ASSERT_EQ(res->status, 200) << res->body;
  j = json::parse(res->body);
  ASSERT_EQ(j["decisions"].size(), 1u) << j.dump();
  EXPECT_EQ(j["decisions"][0]["name"], victim);
  EXPECT_EQ(app_.metrics.Value("seedance_admission_decisions_total", {{"kind", "evict"}}), 1.0);
  EXPECT_EQ(app_.metrics.Value("seedance_admission_decisions_total", {{"kind", "admit"}}), 4.0);
}

TEST_F(AdmissionServiceTest, StrictModeNeverBorrows) {
  StartWith(TwoTenants("strict"));
  auto res = Post("/v1/workloads", {{"workloads", {Workload("a1", "team-a", 2), Workload("a2", "team-a", 1)}}});
  ASSERT_EQ(res->status, 200) << res->body;
  json j = json::parse(res->body);
  ASSERT_EQ(j["decisions"].size(), 1u);
  EXPECT_EQ(j["pending"], 1);
}

json WithExtra(json w) {
  w["gpu"] = 1;  // not a field of a workload
  return w;
}

TEST_F(AdmissionServiceTest, BadInputNamesTheFieldAndChangesNothing) {
  StartWith(TwoTenants("kueue"));
  struct Case {
    json body;
    int status;
    std::string field;
  };
  const std::vector<Case> cases = {
      {{{"workloads", {Workload("x", "team-a", 1)}}, {"extra", 1}}, 400, "extra"},
      {{{"workloads", "x"}}, 400, "workloads"},
      {{{"workloads", {Workload("x", "nobody", 1)}}}, 400, "workloads[0].tenant"},
      {{{"workloads", {Workload("x", "team-a", -1)}}}, 400, "workloads[0].request.cpu"},
      {{{"workloads", {Workload("ok", "team-a", 1), WithExtra(Workload("y", "team-a", 1))}}}, 400,
       "workloads[1].gpu"},
      {{{"workloads", {{{"name", "z"}, {"tenant", "team-a"}, {"request", {{"tpu", 1}}}}}}}, 400,
       "workloads[0].request.tpu"},
      {{{"workloads", {Workload("d", "team-a", 1), Workload("d", "team-a", 1)}}}, 409, "workloads[1].name"},
  };
  for (const auto& c : cases) {
    auto res = Post("/v1/workloads", c.body);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, c.status) << c.body.dump() << " -> " << res->body;
    json err = json::parse(res->body, nullptr, false);
    EXPECT_EQ(err.value("field", ""), c.field) << res->body;
  }
  auto bad = Post("/v1/workloads/finished", {{"workloads", {"never-submitted"}}});
  EXPECT_EQ(bad->status, 404);
  // Nothing was submitted by the rejected requests (taken whole or not at all).
  httplib::Client cli("127.0.0.1", port_);
  auto stats = cli.Get("/v1/workloads/stats");
  ASSERT_TRUE(stats);
  EXPECT_EQ(json::parse(stats->body)["known"], 0) << stats->body;
  auto not_json = cli.Post("/v1/workloads", "{", "application/json");
  EXPECT_EQ(not_json->status, 400);
}

TEST_F(AdmissionServiceTest, KueueScenarioOnlineAdmitsAndFinishesEveryWorkload) {
  sim::KueueScenarioSpec spec;
  spec.cohorts = 1;
  spec.queues_per_cohort = 3;
  spec.classes = {{"small", 30, 100, 1, 200, 50}, {"large", 6, 1200, 20, 1000, 200}};
  ServerConfig config = ServerConfig::Defaults();
  config.admission_mode = "kueue";
  config.tenancy.tenants = sim::KueueTenants(spec);
  StartWith(config);
  KueueOnlineOptions options;
  options.port = port_;
  options.speedup = 20;
  auto r = RunKueueOnline(spec, options);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->classes.size(), 2u);
  EXPECT_EQ(r->classes[0].count, 90);
  EXPECT_EQ(r->classes[1].count, 18);
  EXPECT_GE(r->admissions, 108);
  EXPECT_EQ(r->admissions, 108 + r->preemptions);
  EXPECT_GT(r->usage_pct, 0);
  EXPECT_LE(r->usage_pct, 500);
  // The last creation is at 7.2 scenario seconds (0.36 s of wall at 20x).
  EXPECT_GT(r->wall_s, 0.36);
  json j = KueueOnlineJson(options, *r);
  EXPECT_EQ(j["mode"], "online");
  EXPECT_EQ(j["published"]["admissions"], 15000);
}

}  // namespace
}  // namespace seedance::server
