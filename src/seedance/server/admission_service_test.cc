// /v1/workloads over HTTP (in-process server on an ephemeral port). The online Kueue runner
// (`seedance bench kueue --online`) lives above the server and is tested in apps/cli/kueue_online_test.cc.
// The contract tests (TEST_P) run on the SQLite ledger here and, compiled as
// server_admission_pg_test (SEEDANCE_PG_CONTRACT), on a shared PostgreSQL admission log against
// the real server pg_test.sh starts, with the replicas' fencing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "seedance/core/testing/require_peer.h"
#include "seedance/server/app.h"
#ifdef SEEDANCE_HAVE_POSTGRESQL
#include "seedance/ledger/testing/pg_database.h"
#endif

namespace seedance::server {
namespace {

using nlohmann::json;

// One admission part on an ephemeral loopback port, over the ledger file `db`; a "restart" is
// a new TestServer on the same file.
struct TestServer {
  App app;
  std::unique_ptr<Service> service;
  httplib::Server http;
  std::thread thread;
  int port = 0;

  Status Start(const ServerConfig& config, const std::string& db, std::function<std::int64_t()> now,
               bool leader_elect = false, const std::string& identity = "") {
    app.now_ms = std::move(now);
    app.options.db = db;
    app.options.leader_elect = leader_elect;
    app.options.leader_identity = identity;
    app.config.Set(std::make_shared<ServerConfig>(config));
    service = MakeAdmissionService(app);
    service->Register(http);
    SEEDANCE_RETURN_IF_ERROR(service->Start());
    port = http.bind_to_any_port("127.0.0.1");
    if (port <= 0) return UnavailableError("bind");
    thread = std::thread([this] { http.listen_after_bind(); });
    for (int i = 0; i < 500 && !http.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return http.is_running() ? Status::Ok() : UnavailableError("not running");
  }
  void Stop() {
    http.stop();
    if (thread.joinable()) thread.join();
    if (service) service->Stop();
  }
  ~TestServer() { Stop(); }
};

class AdmissionServiceTest : public ::testing::Test {
 protected:
  // The admission log's backend: "sqlite" (a ledger file) or "postgresql" (a fresh database).
  virtual std::string Backend() const { return "sqlite"; }
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = info->name();
    for (char& c : name)
      if (c == '/') c = '_';
    dir_ = ::testing::TempDir() + "/admission_service_test_" + std::to_string(::getpid()) + "_" + name;
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    if (Backend() == "postgresql") {
#ifdef SEEDANCE_HAVE_POSTGRESQL
      have_backend_ = !ledger::testing::PgPeerUrl().empty();
#endif
      SEEDANCE_SKIP_WITHOUT_PEER(!have_backend_) << "no PostgreSQL peer (SEEDANCE_PG_URL unset: run through pg_test.sh)";
    }
    db_ = NewDb("ledger");
  }
  // A fresh, empty admission log of the backend, named `name` within the test.
  std::string NewDb(const std::string& name) {
    if (Backend() != "postgresql") return dir_ + "/" + name + ".db";
#ifdef SEEDANCE_HAVE_POSTGRESQL
    auto url = ledger::testing::FreshPgDatabase(std::string(::testing::UnitTest::GetInstance()->current_test_info()->name())
                                                    .substr(0, 40) + "_" + name);
    EXPECT_TRUE(url.has_value()) << url.error().ToString();
    return url.has_value() ? *url : "";
#else
    return "";
#endif
  }
  void StartWith(const ServerConfig& config) { server_ = StartServer(config, db_); }
  std::unique_ptr<TestServer> StartServer(const ServerConfig& config, const std::string& db, bool leader_elect = false,
                                          const std::string& identity = "") {
    auto s = std::make_unique<TestServer>();
    Status st = s->Start(config, db, [this] { return now_ms_.load(); }, leader_elect, identity);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return s;
  }
  // Stops the server and starts another on the same ledger (the restart of `seedance server`).
  void Restart(const ServerConfig& config) {
    server_.reset();
    server_ = StartServer(config, db_);
  }
  void TearDown() override { server_.reset(); }
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
  httplib::Result Post(const std::string& path, const json& body, TestServer* s = nullptr) {
    httplib::Client cli("127.0.0.1", (s != nullptr ? s : server_.get())->port);
    return cli.Post(path.c_str(), body.dump(), "application/json");
  }
  httplib::Result Get(const std::string& path, TestServer* s = nullptr) {
    httplib::Client cli("127.0.0.1", (s != nullptr ? s : server_.get())->port);
    return cli.Get(path.c_str());
  }
  httplib::Result Delete(const std::string& path) {
    httplib::Client cli("127.0.0.1", server_->port);
    return cli.Delete(path.c_str());
  }
  // The body of a 200 answer (fails the test otherwise).
  static json Ok(const httplib::Result& res) {
    EXPECT_TRUE(res);
    if (!res) return json();
    EXPECT_EQ(res->status, 200) << res->body;
    return json::parse(res->body, nullptr, false);
  }
  static json Workload(const std::string& name, const std::string& tenant, double cpu, int priority = 0) {
    return {{"name", name}, {"tenant", tenant}, {"priority", priority}, {"request", {{"cpu", cpu}}}};
  }
  App& app() { return server_->app; }
  int port() const { return server_->port; }

  std::string dir_, db_;
  bool have_backend_ = true;
  std::atomic<std::int64_t> now_ms_{1'000'000};
  std::unique_ptr<TestServer> server_;
};

// The tests every backend of the admission log must pass: same decisions, restart, history,
// withdraw, idempotent resubmission.
class AdmissionContractTest : public AdmissionServiceTest, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string Backend() const override { return GetParam(); }
};

TEST_P(AdmissionContractTest, AdmitsBorrowsAndReclaimsInKueueMode) {
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
  EXPECT_EQ(j["decisions"][0]["for"], "default/b1");

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
  EXPECT_EQ(app().metrics.Value("seedance_admission_decisions_total", {{"kind", "evict"}}), 1.0);
  EXPECT_EQ(app().metrics.Value("seedance_admission_decisions_total", {{"kind", "admit"}}), 4.0);
}

TEST_P(AdmissionContractTest, StrictModeNeverBorrows) {
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
  httplib::Client cli("127.0.0.1", port());
  auto stats = cli.Get("/v1/workloads/stats");
  ASSERT_TRUE(stats);
  EXPECT_EQ(json::parse(stats->body)["known"], 0) << stats->body;
  auto not_json = cli.Post("/v1/workloads", "{", "application/json");
  EXPECT_EQ(not_json->status, 400);
}

// Issue 26: every decision is in the ledger before the answer; a restarted server has the same
// state and makes the same next decisions as one that never stopped; no quota is allocated twice.
TEST_P(AdmissionContractTest, RestartRebuildsTheSameStateAndDecidesAsANeverRestartedServer) {
  const ServerConfig config = TwoTenants("kueue");
  StartWith(config);
  // A control server on its own ledger gets the same requests and never restarts.
  auto control = StartServer(config, NewDb("control"));
  auto both = [&](const std::string& path, const json& body) {
    json a = Ok(Post(path, body));
    json b = Ok(Post(path, body, control.get()));
    EXPECT_EQ(a["decisions"].size(), b["decisions"].size()) << a.dump() << " vs " << b.dump();
    for (std::size_t i = 0; i < std::min(a["decisions"].size(), b["decisions"].size()); ++i) {
      EXPECT_EQ(a["decisions"][i]["kind"], b["decisions"][i]["kind"]);
      EXPECT_EQ(a["decisions"][i]["name"], b["decisions"][i]["name"]);
    }
    return a;
  };
  json j = both("/v1/workloads", {{"workloads", {Workload("a1", "team-a", 2, 1), Workload("a2", "team-a", 2, 0)}}});
  ASSERT_EQ(j["decisions"].size(), 2u);  // a2 borrows team-b's 2 cpu
  now_ms_ += 1000;
  j = both("/v1/workloads", {{"workloads", {Workload("b1", "team-b", 2, 5), Workload("b2", "team-b", 1, 0)}}});
  ASSERT_EQ(j["decisions"].size(), 1u) << j.dump();  // b1 reclaims: one of a's is evicting
  ASSERT_EQ(j["decisions"][0]["kind"], "evict");
  const std::string victim = j["decisions"][0]["name"];
  const json before = Ok(Get("/v1/workloads/default/" + victim));
  ASSERT_EQ(before["workload"]["state"], "evicting");
  EXPECT_EQ(before["workload"]["evicted_for"], "default/b1");
  const json stats_before = Ok(Get("/v1/workloads/stats"));

  now_ms_ += 1000;
  Restart(config);
  // The same state: the victim still evicting, b1 and b2 pending, the other a admitted.
  const json after = Ok(Get("/v1/workloads/default/" + victim));
  EXPECT_EQ(after["workload"], before["workload"]);
  EXPECT_EQ(after["decisions"], before["decisions"]);
  const json stats_after = Ok(Get("/v1/workloads/stats"));
  EXPECT_EQ(stats_after["pending"], stats_before["pending"]);
  EXPECT_EQ(stats_after["admitted"], stats_before["admitted"]);
  EXPECT_EQ(stats_after["known"], 4);
  EXPECT_EQ(stats_after["last_seq"], stats_before["last_seq"]);
  // No quota allocated twice: a new team-a workload does not fit (a's 2 cpu and the evicting
  // victim's 2 are held, b1's 2 reserved), and neither server admits it.
  j = both("/v1/workloads", {{"workloads", {Workload("a3", "team-a", 1, 0)}}});
  EXPECT_TRUE(j["decisions"].empty()) << j.dump();
  // The victim leaves: b1 is admitted in both; then the next events decide alike.
  j = both("/v1/workloads/evicted", {{"workloads", {victim}}});
  ASSERT_EQ(j["decisions"].size(), 1u) << j.dump();
  EXPECT_EQ(j["decisions"][0]["name"], "b1");
  now_ms_ += 1000;
  const std::string other = victim == "a1" ? "a2" : "a1";
  j = both("/v1/workloads/finished", {{"workloads", {"default/" + other}}});
  EXPECT_FALSE(j["decisions"].empty()) << j.dump();
  j = both("/v1/workloads/finished", {{"workloads", {"default/b1"}}});
  const json s1 = Ok(Get("/v1/workloads/stats"));
  const json s2 = Ok(Get("/v1/workloads/stats", control.get()));
  EXPECT_EQ(s1["pending"], s2["pending"]);
  EXPECT_EQ(s1["admitted"], s2["admitted"]);
  EXPECT_EQ(s1["known"], s2["known"]);
  // Persisted: submit 4, admit 2, evict 1 before the restart, and every change since.
  EXPECT_GT(app().metrics.Value("seedance_admission_decisions_persisted_total", {{"kind", "admit"}}), 0);
}

// A client that lost a response reads the decisions back with a cursor; reads never write.
TEST_P(AdmissionContractTest, LostResponsesAreRecoveredFromTheDecisionCursor) {
  StartWith(TwoTenants("kueue"));
  json j = Ok(Post("/v1/workloads", {{"workloads", {Workload("a1", "team-a", 1)}}}));
  const std::int64_t cursor = j["last_seq"];
  // This answer is "lost": the client reads everything after its last cursor.
  Ok(Post("/v1/workloads", {{"workloads", {Workload("b1", "team-b", 2), Workload("b2", "team-b", 1)}}}));
  json since = Ok(Get("/v1/workloads?since=" + std::to_string(cursor)));
  std::vector<std::string> seen;
  for (const auto& d : since["decisions"]) seen.push_back(d["kind"].get<std::string>() + " " + d["name"].get<std::string>());
  EXPECT_THAT(seen, ::testing::ElementsAre("submit b1", "submit b2", "admit b1", "admit b2"));
  EXPECT_EQ(since["decisions"][2]["namespace"], "default");
  EXPECT_FALSE(since["decisions"][2]["borrowing"].get<bool>());
  EXPECT_TRUE(since["decisions"][3]["borrowing"].get<bool>());  // b2 borrows team-a's idle cpu
  EXPECT_FALSE(since["more"].get<bool>());
  // Paging.
  json page = Ok(Get("/v1/workloads?since=" + std::to_string(cursor) + "&limit=3"));
  EXPECT_EQ(page["decisions"].size(), 3u);
  EXPECT_TRUE(page["more"].get<bool>());
  json rest = Ok(Get("/v1/workloads?since=" + page["next"].dump()));
  EXPECT_EQ(rest["decisions"].size(), 1u);
  // Reads write nothing.
  const json stats = Ok(Get("/v1/workloads/stats"));
  Ok(Get("/v1/workloads/default/a1"));
  Ok(Get("/v1/workloads?since=0"));
  EXPECT_EQ(Ok(Get("/v1/workloads/stats"))["last_seq"], stats["last_seq"]);
  // Bad cursors name the parameter.
  for (const char* q : {"?since=-1", "?since=x", "?limit=0", "?limit=10001", "?after=3"}) {
    auto res = Get(std::string("/v1/workloads") + q);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 400) << q << " " << res->body;
    EXPECT_FALSE(json::parse(res->body).value("field", "").empty()) << res->body;
  }
  auto missing = Get("/v1/workloads/default/nobody");
  EXPECT_EQ(missing->status, 404);
}

TEST_P(AdmissionContractTest, SubmittingTheSameWorkloadTwiceIsIdempotent) {
  StartWith(TwoTenants("strict"));
  json w = Workload("a1", "team-a", 2);
  w["namespace"] = "ml";
  w["uid"] = "u-1";
  json first = Ok(Post("/v1/workloads", {{"workloads", {w}}}));
  ASSERT_EQ(first["decisions"].size(), 1u);
  EXPECT_EQ(first["workloads"][0]["state"], "admitted");
  // The retry: the same state back, no decision, no second entry.
  json again = Ok(Post("/v1/workloads", {{"workloads", {w}}}));
  EXPECT_TRUE(again["decisions"].empty());
  EXPECT_EQ(again["workloads"][0], first["workloads"][0]);
  EXPECT_EQ(Ok(Get("/v1/workloads/stats"))["known"], 1);
  // Without a uid, the live workload of that name is the one meant.
  json no_uid = Workload("a1", "team-a", 2);
  no_uid["namespace"] = "ml";
  EXPECT_EQ(Ok(Post("/v1/workloads", {{"workloads", {no_uid}}}))["workloads"][0]["uid"], "u-1");
  // Another uid under a live name: 409 naming the field.
  w["uid"] = "u-2";
  auto clash = Post("/v1/workloads", {{"workloads", {w}}});
  ASSERT_TRUE(clash);
  EXPECT_EQ(clash->status, 409);
  EXPECT_EQ(json::parse(clash->body)["field"], "workloads[0].uid");
  // Once it finished, a replay of u-1 answers its end state; u-2 is a new workload.
  Ok(Post("/v1/workloads/finished", {{"workloads", {"ml/a1"}}}));
  w["uid"] = "u-1";
  json replay = Ok(Post("/v1/workloads", {{"workloads", {w}}}));
  EXPECT_EQ(replay["workloads"][0]["state"], "finished");
  EXPECT_TRUE(replay["decisions"].empty());
  w["uid"] = "u-2";
  json second = Ok(Post("/v1/workloads", {{"workloads", {w}}}));
  EXPECT_EQ(second["workloads"][0]["uid"], "u-2");
  EXPECT_EQ(second["workloads"][0]["state"], "admitted");
  // GET finds the newest of the name, or a given uid's.
  EXPECT_EQ(Ok(Get("/v1/workloads/ml/a1"))["workload"]["uid"], "u-2");
  json old = Ok(Get("/v1/workloads/ml/a1?uid=u-1"));
  EXPECT_EQ(old["workload"]["state"], "finished");
  ASSERT_EQ(old["decisions"].size(), 3u);
  EXPECT_EQ(old["decisions"][0]["kind"], "submit");
  EXPECT_EQ(old["decisions"][1]["kind"], "admit");
  EXPECT_EQ(old["decisions"][2]["kind"], "finish");
}

TEST_P(AdmissionContractTest, DeleteWithdrawsPendingAndReleasesAdmitted) {
  StartWith(TwoTenants("strict"));
  json j = Ok(Post("/v1/workloads", {{"workloads", {Workload("a1", "team-a", 2), Workload("a2", "team-a", 2),
                                                    Workload("a3", "team-a", 1)}}}));
  ASSERT_EQ(j["decisions"].size(), 1u);
  // a2 waits: withdrawing it frees nothing and decides nothing.
  j = Ok(Delete("/v1/workloads/default/a2"));
  EXPECT_EQ(j["workload"]["state"], "withdrawn");
  EXPECT_TRUE(j["decisions"].empty());
  EXPECT_EQ(j["pending"], 1);
  // a1 is admitted: its quota returns and a3 is admitted in the same answer.
  j = Ok(Delete("/v1/workloads/default/a1"));
  EXPECT_EQ(j["workload"]["state"], "withdrawn");
  ASSERT_EQ(j["decisions"].size(), 1u);
  EXPECT_EQ(j["decisions"][0]["name"], "a3");
  // A retried DELETE answers the end state; an unknown one 404; a wrong uid 409.
  EXPECT_EQ(Ok(Delete("/v1/workloads/default/a1"))["workload"]["state"], "withdrawn");
  EXPECT_EQ(Delete("/v1/workloads/default/never")->status, 404);
  EXPECT_EQ(Delete("/v1/workloads/default/a3?uid=other")->status, 409);
  json history = Ok(Get("/v1/workloads/default/a2"));
  ASSERT_EQ(history["decisions"].size(), 2u);
  EXPECT_EQ(history["decisions"][1]["kind"], "withdraw");
  EXPECT_EQ(Ok(Get("/v1/workloads/stats"))["known"], 1);  // only a3 stays in memory
  EXPECT_EQ(app().metrics.Value("seedance_admission_decisions_persisted_total", {{"kind", "withdraw"}}), 2.0);
}

TEST_P(AdmissionContractTest, TrackedWorkloadsAreCappedWith429) {
  ServerConfig config = TwoTenants("strict");
  config.admission_max_workloads = 2;
  StartWith(config);
  Ok(Post("/v1/workloads", {{"workloads", {Workload("a1", "team-a", 2), Workload("a2", "team-a", 2)}}}));
  auto res = Post("/v1/workloads", {{"workloads", {Workload("a3", "team-a", 2)}}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429) << res->body;
  json err = json::parse(res->body);
  EXPECT_EQ(err["field"], "workloads");
  EXPECT_NE(err["error"].get<std::string>().find("admission_max_workloads"), std::string::npos);
  // A retry of a live one is not new; a finished one leaves memory and makes room.
  Ok(Post("/v1/workloads", {{"workloads", {Workload("a1", "team-a", 2)}}}));
  Ok(Post("/v1/workloads/finished", {{"workloads", {"a1"}}}));
  Ok(Post("/v1/workloads", {{"workloads", {Workload("a3", "team-a", 2)}}}));
  EXPECT_EQ(app().metrics.Value("seedance_admission_refused_total", {}), 1.0);
}

// A decision the ledger refuses is never answered: 503, and the state is the ledger's.
TEST_F(AdmissionServiceTest, ALedgerWriteFailureAnswers503AndDecidesNothing) {
  StartWith(TwoTenants("strict"));
  Ok(Post("/v1/workloads", {{"workloads", {Workload("a1", "team-a", 1)}}}));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TRIGGER refuse BEFORE INSERT ON admission_decisions WHEN NEW.kind='admit' "
                         "BEGIN SELECT RAISE(ABORT, 'disk says no'); END",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  auto res = Post("/v1/workloads", {{"workloads", {Workload("a2", "team-a", 1)}}});
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503) << res->body;
  EXPECT_EQ(Get("/v1/workloads/default/a2")->status, 404);
  EXPECT_EQ(Ok(Get("/v1/workloads/stats"))["known"], 1);
  EXPECT_EQ(app().metrics.Value("seedance_admission_persist_errors_total", {}), 1.0);
  ASSERT_EQ(sqlite3_exec(db, "DROP TRIGGER refuse", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  json j = Ok(Post("/v1/workloads", {{"workloads", {Workload("a2", "team-a", 1)}}}));
  ASSERT_EQ(j["decisions"].size(), 1u);
  EXPECT_EQ(j["decisions"][0]["name"], "a2");
}

// A live row whose tenant left the config is withdrawn at restart, with the reason.
TEST_P(AdmissionContractTest, RestartWithdrawsWorkloadsOfARemovedTenant) {
  StartWith(TwoTenants("strict"));
  Ok(Post("/v1/workloads", {{"workloads", {Workload("b1", "team-b", 1), Workload("a1", "team-a", 1)}}}));
  ServerConfig fewer = TwoTenants("strict");
  fewer.tenancy.tenants.pop_back();  // team-b
  Restart(fewer);
  json b1 = Ok(Get("/v1/workloads/default/b1"));
  EXPECT_EQ(b1["workload"]["state"], "withdrawn");
  EXPECT_NE(b1["decisions"].back()["reason"].get<std::string>().find("team-b"), std::string::npos);
  EXPECT_EQ(Ok(Get("/v1/workloads/default/a1"))["workload"]["state"], "admitted");
}

#ifdef SEEDANCE_PG_CONTRACT
constexpr const char* kBackend = "postgresql";
#else
constexpr const char* kBackend = "sqlite";
#endif
INSTANTIATE_TEST_SUITE_P(Backends, AdmissionContractTest, ::testing::Values(std::string(kBackend)),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

#ifdef SEEDANCE_PG_CONTRACT
// Two replicas on one PostgreSQL admission log.
class AdmissionReplicasTest : public AdmissionServiceTest {
 protected:
  std::string Backend() const override { return "postgresql"; }
  // Waits (bounded) until `s` has rebuilt its state: /readyz would no longer name "admission".
  static bool WaitTakenOver(TestServer& s) {
    for (int i = 0; i < 1000; ++i) {
      if (s.app.readiness.Waiting().count("admission") == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  static std::string ErrorOf(const httplib::Result& res) {
    if (!res) return "(no answer)";
    return json::parse(res->body, nullptr, false).value("error", "");
  }
};

// Without leader election each replica takes the log over when it starts: the one that started
// last decides, sees every decision of the other, and the other's next write is refused (503,
// nothing written, its state dropped).
TEST_F(AdmissionReplicasTest, TheReplicaThatTookOverLastDecidesAndTheOtherIsFenced) {
  const ServerConfig config = TwoTenants("strict");
  auto a = StartServer(config, db_, false, "replica-a");
  json j = Ok(Post("/v1/workloads", {{"workloads", {Workload("a1", "team-a", 2)}}}, a.get()));
  ASSERT_EQ(j["decisions"].size(), 1u);
  auto b = StartServer(config, db_, false, "replica-b");
  EXPECT_EQ(Ok(Get("/v1/workloads/default/a1", b.get()))["workload"]["state"], "admitted");

  auto refused = Post("/v1/workloads", {{"workloads", {Workload("a2", "team-a", 2)}}}, a.get());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503) << refused->body;
  EXPECT_NE(ErrorOf(refused).find("fenced"), std::string::npos) << refused->body;
  EXPECT_NE(ErrorOf(refused).find("replica-b"), std::string::npos) << refused->body;
  EXPECT_EQ(a->app.metrics.Value("seedance_admission_fenced_total", {}), 1.0);
  EXPECT_EQ(a->app.readiness.Waiting().count("admission"), 1u);
  // The deposed replica dropped its state and decides nothing any more; the log has no a2.
  EXPECT_EQ(Get("/v1/workloads/default/a1", a.get())->status, 503);
  EXPECT_EQ(Ok(Get("/v1/workloads/stats", a.get()))["known"], 0);
  EXPECT_EQ(Get("/v1/workloads/default/a2", b.get())->status, 404);
  // The leader decides on the full state: team-a's quota is held by a1, so a2 waits.
  j = Ok(Post("/v1/workloads", {{"workloads", {Workload("a2", "team-a", 2)}}}, b.get()));
  EXPECT_TRUE(j["decisions"].empty()) << j.dump();
  EXPECT_EQ(j["pending"], 1);
  EXPECT_EQ(j["admitted"], 1);
}

// With leader election the take-over follows the Lease: a follower answers 503; a replica that
// gains the Lease rebuilds before it is ready; a deposed leader that has not noticed yet is
// fenced, and leads again only after it lost and regained the Lease.
TEST_F(AdmissionReplicasTest, TakeOverFollowsLeadershipAndADeposedLeaderIsFenced) {
  const ServerConfig config = TwoTenants("strict");
  auto a = StartServer(config, db_, true, "replica-a");
  auto b = StartServer(config, db_, true, "replica-b");
  auto follower = Post("/v1/workloads", {{"workloads", {Workload("a1", "team-a", 2)}}}, a.get());
  ASSERT_TRUE(follower);
  EXPECT_EQ(follower->status, 503);
  EXPECT_NE(ErrorOf(follower).find("follower"), std::string::npos) << follower->body;
  EXPECT_EQ(a->app.readiness.Waiting().count("admission"), 1u);

  a->app.leadership.Notify(true);
  ASSERT_TRUE(WaitTakenOver(*a));
  Ok(Post("/v1/workloads", {{"workloads", {Workload("a1", "team-a", 2), Workload("b1", "team-b", 1)}}}, a.get()));
  EXPECT_EQ(Post("/v1/workloads", {{"workloads", {Workload("b2", "team-b", 1)}}}, b.get())->status, 503);

  // b gains the Lease while a still believes it leads (a partition): b rebuilds a's decisions.
  b->app.leadership.Notify(true);
  ASSERT_TRUE(WaitTakenOver(*b));
  json stats = Ok(Get("/v1/workloads/stats", b.get()));
  EXPECT_EQ(stats["admitted"], 2);
  auto refused = Post("/v1/workloads", {{"workloads", {Workload("a2", "team-a", 1)}}}, a.get());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_NE(ErrorOf(refused).find("fenced"), std::string::npos) << refused->body;
  // Still fenced while its elector has not noticed: it does not take the log back by itself.
  EXPECT_EQ(Post("/v1/workloads", {{"workloads", {Workload("a2", "team-a", 1)}}}, a.get())->status, 503);
  Ok(Post("/v1/workloads", {{"workloads", {Workload("b2", "team-b", 1)}}}, b.get()));

  // a loses and regains the Lease (b lost it): a rebuilds with b's decisions and b is fenced.
  a->app.leadership.Notify(false);
  b->app.leadership.Notify(false);
  EXPECT_EQ(Post("/v1/workloads", {{"workloads", {Workload("b3", "team-b", 1)}}}, b.get())->status, 503);
  a->app.leadership.Notify(true);
  ASSERT_TRUE(WaitTakenOver(*a));
  stats = Ok(Get("/v1/workloads/stats", a.get()));
  EXPECT_EQ(stats["admitted"], 3);
  EXPECT_EQ(stats["known"], 3);
  EXPECT_EQ(Ok(Get("/v1/workloads/default/b2", a.get()))["workload"]["state"], "admitted");
}
#endif

}  // namespace
}  // namespace seedance::server
