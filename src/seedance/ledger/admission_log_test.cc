// The admission log's contract, run on both backends: SQLite (a file) and PostgreSQL (the real
// server that pg_test.sh starts; skipped without it, a failure under SEEDANCE_REQUIRE_PEERS=1).
// Plus the PostgreSQL backend's fencing between replicas.
#include "seedance/ledger/admission_log.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "seedance/core/testing/require_peer.h"
#include "seedance/ledger/ledger.h"
#ifdef SEEDANCE_HAVE_POSTGRESQL
#include "seedance/ledger/testing/pg_database.h"
#endif

namespace seedance::ledger {
namespace {

std::string TempAdmissionDb(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/admission_log_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::string path = dir + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return path;
}

AdmissionWorkloadRow Row(std::int64_t id, std::string name, std::string state) {
  AdmissionWorkloadRow w;
  w.id = id;
  w.namespace_name = "team-a";
  w.name = std::move(name);
  w.uid = "uid-" + std::to_string(id);
  w.tenant = "team-a";
  w.tier = "silver";
  w.priority = 3;
  w.request_json = R"({"cpu":2000})";
  w.creation_s = 1.5;
  w.state = std::move(state);
  w.created_ms = 1000;
  w.updated_ms = 2000;
  return w;
}

AdmissionDecisionRow Decision(const AdmissionWorkloadRow& w, std::string kind) {
  AdmissionDecisionRow d;
  d.workload_id = w.id;
  d.namespace_name = w.namespace_name;
  d.name = w.name;
  d.uid = w.uid;
  d.kind = std::move(kind);
  d.reason = "because";
  d.at_ms = 3000;
  return d;
}

class AdmissionLogContractTest : public ::testing::TestWithParam<std::string> {
 protected:
  bool pg() const { return GetParam() == "postgresql"; }
  // A fresh, empty log location of this backend ("" when its peer is missing).
  std::string Fresh(const std::string& name) {
    if (!pg()) return TempAdmissionDb(name + ".db");
#ifdef SEEDANCE_HAVE_POSTGRESQL
    if (testing::PgPeerUrl().empty()) return "";
    auto url = testing::FreshPgDatabase(name);
    EXPECT_TRUE(url.has_value()) << url.error().ToString();
    return url.has_value() ? *url : "";
#else
    return "";
#endif
  }
  // Opens `where` and takes it over (a replica that leads).
  std::unique_ptr<AdmissionLog> OpenLeading(const std::string& where, const std::string& holder = "replica-a") {
    auto log = AdmissionLog::Open(where);
    EXPECT_TRUE(log.has_value()) << log.error().ToString();
    if (!log.has_value()) return nullptr;
    auto epoch = (*log)->TakeOver(holder, 5);
    EXPECT_TRUE(epoch.has_value()) << epoch.error().ToString();
    return std::move(*log);
  }
};

#define SKIP_WITHOUT_BACKEND(where) \
  SEEDANCE_SKIP_WITHOUT_PEER((where).empty()) << "no PostgreSQL peer (SEEDANCE_PG_URL unset: run through pg_test.sh)"

TEST_P(AdmissionLogContractTest, CommitsWorkloadsAndDecisionsAndReadsThemBack) {
  const std::string path = Fresh("commits");
  SKIP_WITHOUT_BACKEND(path);
  {
    auto log = OpenLeading(path);
    ASSERT_NE(log, nullptr);
    EXPECT_EQ(*log->MaxWorkloadId(), 0);
    EXPECT_EQ(*log->LastSeq(), 0);
    AdmissionWorkloadRow a = Row(1, "a", "pending"), b = Row(2, "b", "pending");
    std::vector<AdmissionDecisionRow> ds = {Decision(a, "submit"), Decision(b, "submit")};
    ASSERT_TRUE(log->Commit(std::vector{a, b}, ds).ok());
    EXPECT_EQ(ds[0].seq, 1);
    EXPECT_EQ(ds[1].seq, 2);
    a.state = "admitted";
    a.admitted_at_s = 4.25;
    a.creation_s = 1.0 / 3.0;  // every bit survives the text round trip
    b.state = "finished";
    std::vector<AdmissionDecisionRow> more = {Decision(a, "admit"), Decision(b, "finish")};
    more[0].detail_json = R"({"borrowing":true})";
    ASSERT_TRUE(log->Commit(std::vector{a, b}, more).ok());
  }
  // Another connection (a restarted server, or the replica that takes over) sees the committed state.
  auto log = OpenLeading(path, "replica-b");
  ASSERT_NE(log, nullptr);
  auto live = log->Live();
  ASSERT_TRUE(live.has_value());
  ASSERT_EQ(live->size(), 1u);
  const AdmissionWorkloadRow& a = (*live)[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.uid, "uid-1");
  EXPECT_EQ(a.tenant, "team-a");
  EXPECT_EQ(a.tier, "silver");
  EXPECT_EQ(a.state, "admitted");
  EXPECT_DOUBLE_EQ(a.admitted_at_s, 4.25);
  EXPECT_EQ(a.creation_s, 1.0 / 3.0);
  EXPECT_EQ(a.request_json, R"({"cpu":2000})");
  EXPECT_EQ(a.priority, 3);
  EXPECT_EQ(a.evicted_for, -1);
  EXPECT_EQ(a.created_ms, 1000);
  EXPECT_EQ(a.updated_ms, 2000);
  auto b = log->Latest("team-a", "b");
  ASSERT_TRUE(b.has_value() && b->has_value());
  EXPECT_EQ((*b)->state, "finished");
  EXPECT_FALSE((*b)->live());
  EXPECT_FALSE((*log->Latest("team-b", "b")).has_value());
  EXPECT_TRUE((*log->ByUid("team-a", "b", "uid-2")).has_value());
  EXPECT_FALSE((*log->ByUid("team-a", "b", "uid-1")).has_value());
  auto history = log->History(1);
  ASSERT_TRUE(history.has_value());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].kind, "submit");
  EXPECT_EQ((*history)[0].detail_json, "{}");
  EXPECT_EQ((*history)[0].reason, "because");
  EXPECT_EQ((*history)[0].at_ms, 3000);
  EXPECT_EQ((*history)[1].kind, "admit");
  EXPECT_EQ((*history)[1].detail_json, R"({"borrowing":true})");
  auto since = log->DecisionsSince(2, 10);
  ASSERT_TRUE(since.has_value());
  ASSERT_EQ(since->size(), 2u);
  EXPECT_EQ((*since)[0].seq, 3);
  EXPECT_EQ((*since)[1].seq, 4);
  EXPECT_EQ((*since)[1].kind, "finish");
  EXPECT_EQ((*log->DecisionsSince(0, 1)).size(), 1u);
  EXPECT_EQ(*log->MaxWorkloadId(), 2);
  EXPECT_EQ(*log->LastSeq(), 4);
}

// A failure part-way leaves nothing: not the workload rows, not the decisions before it.
TEST_P(AdmissionLogContractTest, AFailedCommitWritesNothing) {
  const std::string path = Fresh("rollback");
  SKIP_WITHOUT_BACKEND(path);
  auto log = OpenLeading(path);
  ASSERT_NE(log, nullptr);
  if (pg()) {
#ifdef SEEDANCE_HAVE_POSTGRESQL
    auto admin = internal::PgConn::Open(path);
    ASSERT_TRUE(admin.has_value());
    ASSERT_TRUE((*admin)
                    ->Exec("CREATE FUNCTION refuse_evict() RETURNS trigger AS $$ BEGIN IF NEW.kind = 'evict' THEN "
                           "RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql")
                    .ok());
    ASSERT_TRUE((*admin)
                    ->Exec("CREATE TRIGGER boom BEFORE INSERT ON seedance_admission_decisions FOR EACH ROW "
                           "EXECUTE FUNCTION refuse_evict()")
                    .ok());
#endif
  } else {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TRIGGER boom BEFORE INSERT ON admission_decisions WHEN NEW.kind='evict' "
                           "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  AdmissionWorkloadRow a = Row(7, "a", "evicting");
  std::vector<AdmissionDecisionRow> ds = {Decision(a, "admit"), Decision(a, "evict")};
  Status st = log->Commit(std::vector{a}, ds);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("refused by the test"), std::string::npos) << st.ToString();
  EXPECT_FALSE(log->fenced());
  EXPECT_EQ(ds[0].seq, 0);
  EXPECT_EQ(*log->MaxWorkloadId(), 0);
  EXPECT_EQ(*log->LastSeq(), 0);
  // The connection is usable afterwards; the rolled-back seqs are never shown (PostgreSQL's
  // sequence may skip them: seq orders and never repeats, it need not be dense).
  std::vector<AdmissionDecisionRow> ok = {Decision(a, "admit")};
  ASSERT_TRUE(log->Commit(std::vector{a}, ok).ok());
  EXPECT_GT(ok[0].seq, 0);
  if (!pg()) {
    EXPECT_EQ(ok[0].seq, 1);
  }
  EXPECT_EQ(*log->LastSeq(), ok[0].seq);
  EXPECT_EQ((*log->DecisionsSince(0, 10)).size(), 1u);
}

// Fencing: a replica that took the log over before another cannot commit after it (a deposed
// leader that still runs), and the new one's rebuild sees everything the old one committed.
TEST_P(AdmissionLogContractTest, AReplicaThatWasTakenOverCannotCommit) {
  const std::string path = Fresh("fencing");
  SKIP_WITHOUT_BACKEND(path);
  auto a = AdmissionLog::Open(path);
  ASSERT_TRUE(a.has_value());
  AdmissionWorkloadRow w1 = Row(1, "w1", "admitted");
  std::vector<AdmissionDecisionRow> d1 = {Decision(w1, "admit")};
  if (!pg()) {
    // SQLite: one replica per file; nothing fences and no take-over is needed.
    EXPECT_EQ(*(*a)->TakeOver("replica-a", 1), 1);
    EXPECT_TRUE((*a)->Commit(std::vector{w1}, d1).ok());
    EXPECT_FALSE((*a)->fenced());
    return;
  }
  // PostgreSQL: a log that never took over does not write.
  Status early = (*a)->Commit(std::vector{w1}, d1);
  EXPECT_EQ(early.code(), StatusCode::kFailedPrecondition) << early.ToString();
  EXPECT_EQ(*(*a)->LastSeq(), 0);
  const std::int64_t ea = *(*a)->TakeOver("replica-a", 10);
  ASSERT_TRUE((*a)->Commit(std::vector{w1}, d1).ok());
  auto b = AdmissionLog::Open(path);
  ASSERT_TRUE(b.has_value());
  const std::int64_t eb = *(*b)->TakeOver("replica-b", 20);
  EXPECT_GT(eb, ea);
  // The deposed replica's next commit is refused whole, naming the new holder.
  AdmissionWorkloadRow w2 = Row(2, "w2", "admitted");
  std::vector<AdmissionDecisionRow> d2 = {Decision(w2, "submit"), Decision(w2, "admit")};
  Status refused = (*a)->Commit(std::vector{w2}, d2);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("replica-b"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("fenced"), std::string::npos) << refused.message();
  EXPECT_TRUE((*a)->fenced());
  EXPECT_EQ(d2[0].seq, 0);
  EXPECT_FALSE((*(*b)->Latest("team-a", "w2")).has_value());
  // The new holder sees what the old one committed, and writes.
  auto live = (*b)->Live();
  ASSERT_TRUE(live.has_value());
  ASSERT_EQ(live->size(), 1u);
  EXPECT_EQ((*live)[0].name, "w1");
  std::vector<AdmissionDecisionRow> d3 = {Decision(w2, "submit")};
  ASSERT_TRUE((*b)->Commit(std::vector{w2}, d3).ok());
  EXPECT_FALSE((*b)->fenced());
  // Leadership can come back: a new take-over fences the other one in turn.
  EXPECT_GT(*(*a)->TakeOver("replica-a", 30), eb);
  EXPECT_FALSE((*a)->fenced());
  std::vector<AdmissionDecisionRow> d4 = {Decision(w2, "admit")};
  EXPECT_TRUE((*a)->Commit(std::vector{w2}, d4).ok());
  std::vector<AdmissionDecisionRow> d5 = {Decision(w2, "finish")};
  EXPECT_FALSE((*b)->Commit(std::vector{w2}, d5).ok());
  EXPECT_TRUE((*b)->fenced());
}

TEST(AdmissionLogTest, AnUnreachablePostgresIsUnavailable) {
#ifdef SEEDANCE_HAVE_POSTGRESQL
  auto log = AdmissionLog::Open("postgresql://postgres@127.0.0.1:1/x?connect_timeout=2");
  ASSERT_FALSE(log.has_value());
  EXPECT_EQ(log.error().code(), StatusCode::kUnavailable) << log.error().ToString();
#else
  auto log = AdmissionLog::Open("postgresql://postgres@127.0.0.1:1/x");
  ASSERT_FALSE(log.has_value());
  EXPECT_EQ(log.error().code(), StatusCode::kFailedPrecondition);
#endif
}

// ledger_test runs the SQLite backend; ledger_pg_test (through pg_test.sh, which starts the peer)
// the PostgreSQL one, so that CI's SEEDANCE_REQUIRE_PEERS=1 fails only where a peer was expected.
#ifdef SEEDANCE_PG_CONTRACT
constexpr const char* kBackend = "postgresql";
#else
constexpr const char* kBackend = "sqlite";
#endif
INSTANTIATE_TEST_SUITE_P(Backends, AdmissionLogContractTest, ::testing::Values(std::string(kBackend)),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace seedance::ledger
