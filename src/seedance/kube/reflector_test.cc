// The Reflector against the fake API server: list then watch, a stream cut mid-event, 410 Gone
// (ERROR event and HTTP), the API server down for 30 s of injected time, bookmarks, pages and
// resync. No test sleeps for a backoff: waits are injected and only advance a clock.

#include "seedance/kube/reflector.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "seedance/kube/testing/fake_apiserver.h"

namespace seedance::kube {
namespace {

// prefix + number, appended (GCC 12 at -O3 reports a false -Wrestrict on "literal" + std::string).
std::string Numbered(std::string_view prefix, int i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

using nlohmann::json;
using testing::FakeApiServer;

// A clock tests and the reflector's thread may both touch.
class TestClock final : public Clock {
 public:
  Duration Now() const override { return Duration(ns_.load()); }
  void Advance(Duration d) { ns_ += d.count(); }

 private:
  std::atomic<std::int64_t> ns_{0};
};

json Node(const std::string& name, int gpus) {
  return json{{"metadata", {{"name", name}, {"labels", {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"}}}}},
              {"status", {{"allocatable", {{"cpu", "64"}, {"memory", "512Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

json Pod(const std::string& ns, const std::string& name) {
  return json{{"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", {{"containers", json::array({{{"name", "main"}, {"image", "x"}}})}}},
              {"status", {{"phase", "Pending"}}}};
}

// The handler's view: what a consumer of the reflector would hold.
class Mirror final : public ReflectorHandler {
 public:
  void OnReplace(const std::vector<json>& objects) override {
    std::lock_guard lock(mu_);
    objects_.clear();
    for (const auto& o : objects) objects_[Key(o)] = o;
    ++replaces_;
    cv_.notify_all();
  }
  void OnAdd(const json& o) override { Set(o, &adds_); }
  void OnUpdate(const json& o) override { Set(o, &updates_); }
  void OnDelete(const json& o) override {
    std::lock_guard lock(mu_);
    objects_.erase(Key(o));
    ++deletes_;
    cv_.notify_all();
  }
  // Waits (on a condition, 10 s at most) until the mirror holds exactly `want`'s names and
  // resourceVersions.
  bool WaitEquals(const std::vector<json>& want) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] {
      if (objects_.size() != want.size()) return false;
      for (const auto& o : want) {
        auto it = objects_.find(Key(o));
        if (it == objects_.end() || it->second != o) return false;
      }
      return true;
    });
  }
  int replaces() {
    std::lock_guard lock(mu_);
    return replaces_;
  }
  int updates() {
    std::lock_guard lock(mu_);
    return updates_;
  }
  int deletes() {
    std::lock_guard lock(mu_);
    return deletes_;
  }
  void Notify() { cv_.notify_all(); }
  template <class Pred>
  bool WaitFor(Pred pred) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), pred);
  }

 private:
  static std::string Key(const json& o) {
    return o["metadata"].value("namespace", "") + "/" + o["metadata"].value("name", "");
  }
  void Set(const json& o, int* counter) {
    std::lock_guard lock(mu_);
    objects_[Key(o)] = o;
    ++*counter;
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, json> objects_;
  int replaces_ = 0, adds_ = 0, updates_ = 0, deletes_ = 0;
};

// The fake's objects as the list returns them (no kind/apiVersion) vs. as events carry them
// (with): compare without those two fields.
std::vector<json> Stripped(std::vector<json> objects) {
  for (auto& o : objects) {
    o.erase("kind");
    o.erase("apiVersion");
  }
  return objects;
}

class StrippingMirror final : public ReflectorHandler {
 public:
  explicit StrippingMirror(Mirror& m) : m_(m) {}
  void OnReplace(const std::vector<json>& objects) override { m_.OnReplace(Stripped(objects)); }
  void OnAdd(const json& o) override { m_.OnAdd(Stripped({o})[0]); }
  void OnUpdate(const json& o) override { m_.OnUpdate(Stripped({o})[0]); }
  void OnDelete(const json& o) override { m_.OnDelete(Stripped({o})[0]); }

 private:
  Mirror& m_;
};

// Polls `pred` (every 2 ms, 10 s at most) for conditions on the fake's side, which notifies nobody.
template <class Pred>
bool Eventually(Pred pred) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

class ReflectorTest : public ::testing::Test {
 protected:
  void Start(const std::string& resource, ReflectorOptions options = {}) {
    options.path = "/api/v1/" + resource;
    options.resource = resource;
    ReflectorHooks hooks;
    hooks.clock = &clock_;
    hooks.rng = &rng_;
    hooks.wait = [this](Duration d) {
      clock_.Advance(d);
      waited_ += d.count();
      if (on_wait_) on_wait_();
      mirror_.Notify();
      return !stopping_.load();
    };
    hooks.count = [this](std::string_view what) {
      if (what == "reconnect") ++reconnects_seen_;
      mirror_.Notify();
    };
    reflector_ = std::make_unique<Reflector>(client_, stripping_, options, hooks);
    thread_ = std::thread([this] { reflector_->Run(); });
  }
  void TearDown() override {
    stopping_ = true;
    if (reflector_) reflector_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  std::vector<json> Expected(const std::string& resource) { return Stripped(fake_.List(resource)); }
  bool WaitRv() {
    return Eventually([&] { return reflector_->resource_version() == std::to_string(fake_.resource_version()); });
  }

  FakeApiServer fake_;
  ApiClient client_{fake_.credentials()};
  TestClock clock_;
  Rng rng_{7};
  Mirror mirror_;
  StrippingMirror stripping_{mirror_};
  std::atomic<bool> stopping_{false};
  std::atomic<std::int64_t> waited_{0};
  std::atomic<int> reconnects_seen_{0};
  std::function<void()> on_wait_;
  std::unique_ptr<Reflector> reflector_;
  std::thread thread_;
};

TEST_F(ReflectorTest, ListsThenWatchesAddsUpdatesDeletes) {
  fake_.Put("nodes", Node("n1", 8));
  fake_.Put("nodes", Node("n2", 4));
  Start("nodes");
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
  EXPECT_TRUE(Eventually([&] { return reflector_->synced(); }));
  EXPECT_EQ(mirror_.replaces(), 1);
  fake_.Put("nodes", Node("n3", 2));
  fake_.Put("nodes", Node("n1", 6));
  ASSERT_TRUE(fake_.Delete("nodes", "", "n2"));
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
  EXPECT_EQ(mirror_.updates(), 1);
  EXPECT_EQ(mirror_.deletes(), 1);
  EXPECT_TRUE(WaitRv());
  EXPECT_EQ(fake_.list_requests("nodes"), 1);
  EXPECT_EQ(reflector_->relists(), 0);
  EXPECT_EQ(reflector_->reconnects(), 0);
}

TEST_F(ReflectorTest, StreamCutMidEventReconnectsFromTheLastResourceVersion) {
  fake_.Put("pods", Pod("a", "p1"));
  Start("pods");
  ASSERT_TRUE(mirror_.WaitEquals(Expected("pods")));
  ASSERT_TRUE(Eventually([&] { return fake_.open_watches() == 1; }));
  fake_.CutWatches();
  fake_.Put("pods", Pod("a", "p2"));  // sent half, then the connection drops
  fake_.Put("pods", Pod("b", "p3"));
  ASSERT_TRUE(mirror_.WaitEquals(Expected("pods")));
  EXPECT_TRUE(WaitRv());
  EXPECT_GE(reflector_->reconnects(), 1);
  EXPECT_EQ(reflector_->relists(), 0);
  EXPECT_EQ(fake_.list_requests("pods"), 1) << "a cut stream resumes from its resourceVersion, no relist";
  ASSERT_FALSE(reflector_->backoffs().empty());
  const double first = std::chrono::duration<double>(reflector_->backoffs()[0]).count();
  EXPECT_GE(first, 0.8);
  EXPECT_LT(first, 1.6);
}

TEST_F(ReflectorTest, ErrorEvent410Relists) {
  fake_.Put("pods", Pod("a", "p1"));
  fake_.Put("pods", Pod("a", "p2"));
  Start("pods");
  ASSERT_TRUE(mirror_.WaitEquals(Expected("pods")));
  ASSERT_TRUE(Eventually([&] { return fake_.open_watches() == 1; }));
  fake_.ExpireWatches();
  ASSERT_TRUE(Eventually([&] { return reflector_->relists() == 1 && fake_.list_requests("pods") == 2; }));
  fake_.Put("pods", Pod("a", "p3"));
  ASSERT_TRUE(mirror_.WaitEquals(Expected("pods")));
  EXPECT_EQ(mirror_.replaces(), 2);
}

class GoneTest : public ReflectorTest, public ::testing::WithParamInterface<bool> {};

// Down while objects change, the history compacted meanwhile: the watch from the old
// resourceVersion is answered 410 (an ERROR event, or HTTP 410), the reflector relists, and the
// replace drops what was deleted while it was away.
TEST_P(GoneTest, CompactedWhileAwayRelistsAndReplaces) {
  fake_.SetGoneAsHttp(GetParam());
  fake_.Put("pods", Pod("a", "p1"));
  fake_.Put("pods", Pod("a", "p2"));
  Start("pods");
  ASSERT_TRUE(mirror_.WaitEquals(Expected("pods")));
  std::atomic<bool> back{false};
  on_wait_ = [&] {
    if (!back.exchange(true)) {
      ASSERT_TRUE(fake_.Delete("pods", "a", "p1"));
      fake_.Put("pods", Pod("c", "p9"));
      fake_.Compact();
      ASSERT_TRUE(fake_.ComeBack().ok());
    }
  };
  fake_.GoDown();
  ASSERT_TRUE(Eventually([&] { return reflector_->relists() == 1; }));
  ASSERT_TRUE(mirror_.WaitEquals(Expected("pods")));
  EXPECT_EQ(fake_.list_requests("pods"), 2);
}
INSTANTIATE_TEST_SUITE_P(ErrorEventOrHttp, GoneTest, ::testing::Bool());

TEST_F(ReflectorTest, ApiServerDownThirtySecondsBacksOffExponentiallyWithJitter) {
  fake_.Put("nodes", Node("n1", 8));
  Start("nodes");
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
  std::atomic<bool> up{false};
  on_wait_ = [&] {
    if (!up && waited_.load() >= std::chrono::nanoseconds(std::chrono::seconds(30)).count()) {
      up = true;
      fake_.Put("nodes", Node("n2", 8));  // changed while down
      ASSERT_TRUE(fake_.ComeBack().ok());
    }
  };
  fake_.GoDown();
  ASSERT_TRUE(Eventually([&] { return up.load(); }));
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
  const std::vector<Duration> b = reflector_->backoffs();
  ASSERT_GE(b.size(), 5u);
  double base = 0.8;
  for (const Duration d : b) {
    const double s = std::chrono::duration<double>(d).count();
    EXPECT_GE(s, base) << "backoff " << s;
    EXPECT_LT(s, 2 * base) << "backoff " << s;
    base = std::min(base * 2, 30.0);
  }
  EXPECT_EQ(fake_.list_requests("nodes"), 1) << "the watch resumes from its resourceVersion";
  EXPECT_EQ(reflector_->relists(), 0);
  EXPECT_EQ(static_cast<std::size_t>(reflector_->reconnects()), b.size());
}

// A watch that keeps answering 5xx is not retried from the same resourceVersion forever: after
// relist_after_errors answers in a row it relists (as client-go), with the jittered backoff before
// each try; the list brings what changed meanwhile.
TEST_F(ReflectorTest, RepeatedWatchErrorsRelist) {
  fake_.Put("nodes", Node("n1", 8));
  Start("nodes");
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
  ASSERT_TRUE(Eventually([&] { return fake_.open_watches() == 1; }));
  fake_.FailWatches(503);
  fake_.CutWatches();
  fake_.Put("nodes", Node("n2", 8));  // cut mid-event: the watch reconnects, and gets 503s
  ASSERT_TRUE(Eventually([&] { return reflector_->relists() >= 1; }));
  fake_.FailWatches(0);
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
  EXPECT_GE(fake_.list_requests("nodes"), 2);
  const std::vector<Duration> b = reflector_->backoffs();
  ASSERT_GE(b.size(), 3u);
  double base = 0.8;
  for (std::size_t i = 0; i < 3; ++i) {
    const double s = std::chrono::duration<double>(b[i]).count();
    EXPECT_GE(s, base) << "backoff " << i;
    EXPECT_LT(s, 2 * base) << "backoff " << i;
    base *= 2;
  }
}

// relist_after_errors 0: only 410 relists (the behaviour before issue 40), however many errors.
TEST_F(ReflectorTest, RelistAfterErrorsZeroRetriesFromTheResourceVersion) {
  fake_.Put("nodes", Node("n1", 8));
  ReflectorOptions o;
  o.relist_after_errors = 0;
  Start("nodes", o);
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
  ASSERT_TRUE(Eventually([&] { return fake_.open_watches() == 1; }));
  fake_.FailWatches(503);
  fake_.CutWatches();
  fake_.Put("nodes", Node("n2", 8));
  ASSERT_TRUE(Eventually([&] { return reflector_->reconnects() >= 6; }));
  EXPECT_EQ(reflector_->relists(), 0);
  EXPECT_EQ(fake_.list_requests("nodes"), 1);
  fake_.FailWatches(0);
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
}

TEST_F(ReflectorTest, BackoffIsCappedAt30Seconds) {
  Start("nodes");
  ASSERT_TRUE(Eventually([&] { return reflector_->synced(); }));
  std::atomic<bool> up{false};
  on_wait_ = [&] {
    if (!up && reflector_->backoffs().size() >= 9) {
      up = true;
      ASSERT_TRUE(fake_.ComeBack().ok());
    }
  };
  fake_.GoDown();
  ASSERT_TRUE(Eventually([&] { return up.load() && fake_.open_watches() == 1; }));
  const std::vector<Duration> b = reflector_->backoffs();
  for (std::size_t i = 6; i < b.size(); ++i) {
    const double s = std::chrono::duration<double>(b[i]).count();
    EXPECT_GE(s, 30.0);
    EXPECT_LT(s, 60.0);
  }
}

TEST_F(ReflectorTest, BookmarksAdvanceTheResourceVersion) {
  fake_.Put("nodes", Node("n1", 8));
  Start("nodes");
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
  ASSERT_TRUE(Eventually([&] { return fake_.open_watches() == 1; }));
  for (int i = 0; i < 5; ++i) fake_.Put("pods", Pod("a", Numbered("p", i)));  // not seen by a node watch
  EXPECT_NE(reflector_->resource_version(), std::to_string(fake_.resource_version()));
  fake_.Bookmark();
  EXPECT_TRUE(WaitRv());
  EXPECT_EQ(mirror_.updates(), 0);
  EXPECT_EQ(mirror_.replaces(), 1);
}

TEST_F(ReflectorTest, ListsInPages) {
  for (int i = 0; i < 7; ++i) fake_.Put("pods", Pod(Numbered("ns", i % 3), Numbered("p", i)));
  ReflectorOptions o;
  o.page_size = 3;
  Start("pods", o);
  ASSERT_TRUE(mirror_.WaitEquals(Expected("pods")));
  EXPECT_EQ(fake_.list_requests("pods"), 3);
  EXPECT_EQ(mirror_.replaces(), 1);
}

TEST_F(ReflectorTest, PeriodicResyncReplaysTheStore) {
  fake_.Put("nodes", Node("n1", 8));
  ReflectorOptions o;
  o.resync_period = std::chrono::seconds(60);
  Start("nodes", o);
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
  ASSERT_TRUE(Eventually([&] { return fake_.open_watches() == 1; }));
  fake_.Put("nodes", Node("n2", 8));
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
  EXPECT_EQ(mirror_.replaces(), 1);
  clock_.Advance(std::chrono::seconds(61));
  fake_.Put("nodes", Node("n3", 8));
  ASSERT_TRUE(Eventually([&] { return mirror_.replaces() == 2; }));
  ASSERT_TRUE(mirror_.WaitEquals(Expected("nodes")));
  EXPECT_EQ(fake_.list_requests("nodes"), 1) << "a resync replays the local store; it does not list";
}

}  // namespace
}  // namespace seedance::kube
