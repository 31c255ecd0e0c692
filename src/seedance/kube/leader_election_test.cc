// Two candidates on the fake API server's Lease, stepped with an injected clock: one leads, the
// other takes over only after the lease expired by its own observation, a stale update loses
// with 409, a leader that cannot renew steps down at the renew deadline, and a stopped leader
// releases the lease.

#include "seedance/kube/leader_election.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "seedance/kube/testing/fake_apiserver.h"

namespace seedance::kube {
namespace {

using namespace std::chrono_literals;
using testing::FakeApiServer;

class TestClock final : public Clock {
 public:
  Duration Now() const override { return Duration(ns_.load()); }
  void Advance(Duration d) { ns_ += d.count(); }

 private:
  std::atomic<std::int64_t> ns_{std::chrono::nanoseconds(std::chrono::seconds(1'795'950'000)).count()};
};

LeaderElectionOptions Options(const std::string& id) {
  LeaderElectionOptions o;
  o.identity = id;
  return o;
}

class LeaderElectionTest : public ::testing::Test {
 protected:
  std::string Holder() {
    auto l = fake_.Get("leases", "kube-system", "seedance");
    return l ? (*l)["spec"].value("holderIdentity", "") : "";
  }
  FakeApiServer fake_;
  ApiClient client_{fake_.credentials()};
  TestClock clock_;
};

TEST_F(LeaderElectionTest, OneLeadsTheOtherTakesOverAfterExpiry) {
  LeaderElector a(client_, Options("a"), clock_, Rng(1));
  LeaderElector b(client_, Options("b"), clock_, Rng(2));
  EXPECT_EQ(a.Step(), LeaderElector::Outcome::kHeld);
  EXPECT_EQ(b.Step(), LeaderElector::Outcome::kHeldByOther);
  EXPECT_TRUE(a.leader());
  EXPECT_FALSE(b.leader());
  EXPECT_EQ(Holder(), "a");
  auto lease = *fake_.Get("leases", "kube-system", "seedance");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 15);
  EXPECT_EQ(lease["spec"]["renewTime"], FormatMicroTime(clock_.Now()));
  // a renews every 2 s: b never sees the record stand still for 15 s.
  for (int i = 0; i < 20; ++i) {
    clock_.Advance(2s);
    ASSERT_EQ(a.Step(), LeaderElector::Outcome::kHeld);
    ASSERT_EQ(b.Step(), LeaderElector::Outcome::kHeldByOther);
  }
  // a stops renewing (killed): b takes over once 15 s have passed since it saw the last change.
  clock_.Advance(14s);
  EXPECT_EQ(b.Step(), LeaderElector::Outcome::kHeldByOther);
  clock_.Advance(1s);
  EXPECT_EQ(b.Step(), LeaderElector::Outcome::kHeld);
  EXPECT_TRUE(b.leader());
  EXPECT_EQ(Holder(), "b");
  EXPECT_EQ((*fake_.Get("leases", "kube-system", "seedance"))["spec"]["leaseTransitions"], 1);
  // a comes back: it sees b's fresh record and follows.
  EXPECT_EQ(a.Step(), LeaderElector::Outcome::kHeldByOther);
  EXPECT_FALSE(a.leader());
}

TEST_F(LeaderElectionTest, ARenewalResetsTheFollowersExpiry) {
  LeaderElector a(client_, Options("a"), clock_, Rng(1));
  ASSERT_EQ(a.Step(), LeaderElector::Outcome::kHeld);
  LeaderElector b(client_, Options("b"), clock_, Rng(2));
  clock_.Advance(20s);
  ASSERT_EQ(b.Step(), LeaderElector::Outcome::kHeldByOther);  // first observation of the record
  clock_.Advance(16s);
  auto lease = *fake_.Get("leases", "kube-system", "seedance");
  lease["spec"]["renewTime"] = FormatMicroTime(clock_.Now());
  fake_.Put("leases", lease);  // a renewed (its clock may be skewed: only the change counts)
  // b's observation is old enough, but the record changed: it must wait a full lease again.
  EXPECT_EQ(b.Step(), LeaderElector::Outcome::kHeldByOther);
  clock_.Advance(15s);
  EXPECT_EQ(b.Step(), LeaderElector::Outcome::kHeld);
  // a's renew now carries a stale view: the holder is b, so a follows.
  EXPECT_EQ(a.Step(), LeaderElector::Outcome::kHeldByOther);
  EXPECT_FALSE(a.leader());
}

TEST_F(LeaderElectionTest, LeaderStepsDownAtTheRenewDeadline) {
  LeaderElector a(client_, Options("a"), clock_, Rng(1));
  std::vector<bool> changes;
  a.on_change = [&](bool l) { changes.push_back(l); };
  ASSERT_EQ(a.Step(), LeaderElector::Outcome::kHeld);
  fake_.GoDown();
  clock_.Advance(4s);
  EXPECT_EQ(a.Step(), LeaderElector::Outcome::kError);
  EXPECT_TRUE(a.leader()) << "within the renew deadline";
  clock_.Advance(6s);
  EXPECT_EQ(a.Step(), LeaderElector::Outcome::kError);
  EXPECT_FALSE(a.leader()) << "10 s without a renew";
  ASSERT_TRUE(fake_.ComeBack().ok());
  clock_.Advance(2s);
  EXPECT_EQ(a.Step(), LeaderElector::Outcome::kHeld);
  EXPECT_EQ(changes, (std::vector<bool>{true, false, true}));
}

TEST_F(LeaderElectionTest, StoppedLeaderReleasesTheLease) {
  LeaderElector a(client_, Options("a"), clock_, Rng(1), [&](Duration d) {
    clock_.Advance(d);
    return true;
  });
  std::atomic<int> steps{0};
  a.on_change = [&](bool) { ++steps; };
  std::thread t([&] { a.Run(); });
  while (!a.leader()) std::this_thread::yield();
  a.Stop();
  t.join();
  EXPECT_FALSE(a.leader());
  EXPECT_EQ(Holder(), "");
  LeaderElector b(client_, Options("b"), clock_, Rng(2));
  EXPECT_EQ(b.Step(), LeaderElector::Outcome::kHeld) << "no wait for expiry after a release";
}

}  // namespace
}  // namespace seedance::kube
