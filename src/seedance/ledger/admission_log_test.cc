#include "seedance/ledger/admission_log.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "seedance/ledger/ledger.h"

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

TEST(AdmissionLogTest, CommitsWorkloadsAndDecisionsAndReadsThemBack) {
  const std::string path = TempAdmissionDb("log.db");
  {
    auto log = AdmissionLog::Open(path);
    ASSERT_TRUE(log.has_value()) << log.error().ToString();
    EXPECT_EQ(*(*log)->MaxWorkloadId(), 0);
    EXPECT_EQ(*(*log)->LastSeq(), 0);
    AdmissionWorkloadRow a = Row(1, "a", "pending"), b = Row(2, "b", "pending");
    std::vector<AdmissionDecisionRow> ds = {Decision(a, "submit"), Decision(b, "submit")};
    ASSERT_TRUE((*log)->Commit(std::vector{a, b}, ds).ok());
    EXPECT_EQ(ds[0].seq, 1);
    EXPECT_EQ(ds[1].seq, 2);
    a.state = "admitted";
    a.admitted_at_s = 4.25;
    b.state = "finished";
    std::vector<AdmissionDecisionRow> more = {Decision(a, "admit"), Decision(b, "finish")};
    more[0].detail_json = R"({"borrowing":true})";
    ASSERT_TRUE((*log)->Commit(std::vector{a, b}, more).ok());
  }
  // Another connection (a restarted server) sees the committed state.
  auto log = AdmissionLog::Open(path);
  ASSERT_TRUE(log.has_value());
  auto live = (*log)->Live();
  ASSERT_TRUE(live.has_value());
  ASSERT_EQ(live->size(), 1u);
  const AdmissionWorkloadRow& a = (*live)[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.state, "admitted");
  EXPECT_DOUBLE_EQ(a.admitted_at_s, 4.25);
  EXPECT_EQ(a.request_json, R"({"cpu":2000})");
  EXPECT_EQ(a.priority, 3);
  EXPECT_DOUBLE_EQ(a.creation_s, 1.5);
  auto b = (*log)->Latest("team-a", "b");
  ASSERT_TRUE(b.has_value() && b->has_value());
  EXPECT_EQ((*b)->state, "finished");
  EXPECT_FALSE((*b)->live());
  EXPECT_FALSE((*(*log)->Latest("team-b", "b")).has_value());
  EXPECT_TRUE((*(*log)->ByUid("team-a", "b", "uid-2")).has_value());
  EXPECT_FALSE((*(*log)->ByUid("team-a", "b", "uid-1")).has_value());
  auto history = (*log)->History(1);
  ASSERT_TRUE(history.has_value());
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[0].kind, "submit");
  EXPECT_EQ((*history)[0].detail_json, "{}");
  EXPECT_EQ((*history)[1].kind, "admit");
  EXPECT_EQ((*history)[1].detail_json, R"({"borrowing":true})");
  auto since = (*log)->DecisionsSince(2, 10);
  ASSERT_TRUE(since.has_value());
  ASSERT_EQ(since->size(), 2u);
  EXPECT_EQ((*since)[0].seq, 3);
  EXPECT_EQ((*since)[1].seq, 4);
  EXPECT_EQ((*since)[1].kind, "finish");
  EXPECT_EQ((*(*log)->DecisionsSince(0, 1)).size(), 1u);
  EXPECT_EQ(*(*log)->MaxWorkloadId(), 2);
  EXPECT_EQ(*(*log)->LastSeq(), 4);
}

// A failure part-way leaves nothing: not the workload rows, not the decisions before it.
TEST(AdmissionLogTest, AFailedCommitWritesNothing) {
  const std::string path = TempAdmissionDb("rollback.db");
  auto log = AdmissionLog::Open(path);
  ASSERT_TRUE(log.has_value());
  {
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
  Status st = (*log)->Commit(std::vector{a}, ds);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("refused by the test"), std::string::npos) << st.ToString();
  EXPECT_EQ(ds[0].seq, 0);
  EXPECT_EQ(*(*log)->MaxWorkloadId(), 0);
  EXPECT_EQ(*(*log)->LastSeq(), 0);
  // The connection is usable afterwards.
  std::vector<AdmissionDecisionRow> ok = {Decision(a, "admit")};
  ASSERT_TRUE((*log)->Commit(std::vector{a}, ok).ok());
  EXPECT_EQ(ok[0].seq, 1);  // no client saw the rolled-back seqs
}

}  // namespace
}  // namespace seedance::ledger
