#pragma once

// A Reflector as client-go's (k8s.io/client-go/tools/cache): keeps a local copy of one
// resource's objects in step with the API server and tells a handler what changed.
//   1. LIST `path` (pages of `page_size`, following metadata.continue); the list's
//      metadata.resourceVersion is the watch's start; the handler's OnReplace gets every item.
//   2. WATCH `path`?watch=true&resourceVersion=RV&allowWatchBookmarks=true&timeoutSeconds=T
//      (T uniform in [min_watch_timeout, 2 x min_watch_timeout), as client-go): each line is a
//      watch event {"type","object"}; ADDED / MODIFIED / DELETED update the store and go to the
//      handler; every event advances RV; BOOKMARK only advances RV.
//   3. An ERROR event with a v1.Status of code 410 (Expired / Gone: "too old resource version"),
//      or an HTTP 410 answer, relists (counted in relists()). Another ERROR reconnects.
//   4. A stream that ends at its timeout reconnects at once from RV; one that breaks (cut
//      mid-event, refused, 5xx) reconnects from RV after a backoff: `initial_backoff` x `factor`
//      per failure in a row, capped at `max_backoff`, plus jitter (d + d x jitter x U[0,1)), and
//      back to the start after a stream delivered events or a list succeeded (counted in
//      reconnects()). A failed list backs off the same way. After `relist_after_errors` error
//      answers in a row (5xx, ERROR events) it relists instead, after the backoff (counted in
//      relists()): a watch that keeps answering 5xx is not retried from the same RV forever.
//   5. Every `resync_period` (0 = never) the whole store goes to OnReplace again, as informers'
//      resync (repairs a handler whose state drifted); checked between events and streams.
//   Memory: the store holds each object once, packed after `transform` (packed_json.h: object keys
//   in a table the store shares, values in binary: 256 bytes for 613 of a slim pod's JSON); a list
//   drops the old store first and fills the new one page by page (one page of full objects at a
//   time), so a relist never holds two copies of the store; the handler gets the objects one at
//   a time (OnReplaceEach), unpacked from the store.
// Time and randomness are injected (Clock, Rng, and the wait between tries) so tests need no
// sleeps; Stop() interrupts a wait and closes the stream.
//
// Thread-safety: Run() on one thread; Stop() and the accessors from any.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory_resource>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "seedance/core/clock.h"
#include "seedance/core/rng.h"
#include "seedance/core/status.h"
#include "seedance/kube/client.h"
#include "seedance/kube/packed_json.h"

namespace seedance::kube {

class ReflectorHandler {
 public:
  virtual ~ReflectorHandler() = default;
  // After a list (or a resync): the complete set of objects.
  virtual void OnReplace(const std::vector<nlohmann::json>& objects) = 0;
  // The same, one object at a time: `each(visit)` calls `visit` on every object in turn (parsed
  // from the store, so only one is materialised at once). A handler that converts objects as they
  // come overrides this; by default they are collected for OnReplace.
  using Visit = std::function<void(const nlohmann::json& object)>;
  virtual void OnReplaceEach(const std::function<void(const Visit& visit)>& each) {
    std::vector<nlohmann::json> all;
    each([&](const nlohmann::json& o) { all.push_back(o); });
    OnReplace(all);
  }
  virtual void OnAdd(const nlohmann::json& object) = 0;
  virtual void OnUpdate(const nlohmann::json& object) = 0;
  virtual void OnDelete(const nlohmann::json& object) = 0;
};

struct ReflectorOptions {
  std::string path;      // "/api/v1/pods": the collection (all namespaces)
  std::string resource;  // "pods": for logs and metrics
  int page_size = 500;
  Duration initial_backoff = std::chrono::milliseconds(800);
  double factor = 2.0;
  Duration max_backoff = std::chrono::seconds(30);
  double jitter = 1.0;
  Duration min_watch_timeout = std::chrono::minutes(5);
  Duration resync_period{0};
  // A watch answered with an error this many times in a row (an HTTP status other than 2xx, 410
  // and 429, or an ERROR event other than 410; no event delivered in between) relists instead of
  // retrying from the same resourceVersion, which may be the cause, as client-go relists after a
  // watch error. Refused connections, 429s and cut streams retry from the resourceVersion (the API
  // server is down or busy, the version is fine). 0: never (only on 410).
  int relist_after_errors = 3;
  // client-go's transform (SharedIndexInformer.SetTransform): applied in place to every listed
  // object and every ADDED / MODIFIED / DELETED event's object before the store and the handler
  // see it; the store keeps what it leaves (the cluster watch keeps only the fields its decisions
  // read). nullptr: objects are kept whole.
  std::function<void(nlohmann::json& object)> transform;
};

struct ReflectorHooks {
  const Clock* clock = nullptr;  // required
  Rng* rng = nullptr;            // required; only Run()'s thread draws from it
  // Waits `d` (the backoff); returns false when Stop() was called meanwhile. nullptr: a real
  // wait on the Reflector's own condition variable.
  std::function<bool(Duration d)> wait;
  // "relist" / "reconnect" / "list" (a list applied) / "event": metrics and tests.
  std::function<void(std::string_view what)> count;
  // Structured log: event name and fields.
  std::function<void(std::string_view event, const nlohmann::json& fields)> log;
};

class Reflector {
 public:
  Reflector(ApiClient& client, ReflectorHandler& handler, ReflectorOptions options, ReflectorHooks hooks);

  // Lists and watches until Stop().
  void Run();
  void Stop();

  bool synced() const { return synced_.load(); }  // a list has been applied
  std::int64_t relists() const { return relists_.load(); }
  std::int64_t reconnects() const { return reconnects_.load(); }
  std::string resource_version() const;
  // Backoff delays drawn so far (for tests and logs), in order.
  std::vector<Duration> backoffs() const;

 private:
  // kBroken: no answer or a cut stream; kError: an error answer (HTTP status or ERROR event).
  enum class WatchEnd { kTimeout, kBroken, kError, kExpired, kStopped };

  Status ListAndReplace();
  WatchEnd WatchOnce();
  // Applies one event line; false ends the stream (expired / error).
  bool ApplyEvent(std::string_view line, WatchEnd* end);
  bool Backoff();
  void ResetBackoff() {
    failures_ = 0;
    error_answers_ = 0;
  }
  void MaybeResync();
  // The store to the handler, one object at a time (OnReplaceEach).
  void ReplaceFromStore();
  void Log(std::string_view event, nlohmann::json fields) const;
  void CountWhat(std::string_view what) const {
    if (hooks_.count) hooks_.count(what);
  }
  static std::string KeyOf(const nlohmann::json& object);

  ApiClient& client_;
  ReflectorHandler& handler_;
  ReflectorOptions options_;
  ReflectorHooks hooks_;

  // By namespace/name: the object packed with keys_. Run()'s thread only. The entries live in
  // pool_'s chunks, dense and apart from the garbage of parsing (malloc would scatter them among
  // the list's parsed pages and pin those once freed); a relist reuses the blocks (the pool keeps
  // the largest store's capacity).
  using Text = std::pmr::string;
  std::pmr::unsynchronized_pool_resource pool_;
  std::pmr::map<Text, Text> store_{&pool_};
  KeyTable keys_;
  Duration last_resync_{0};
  int failures_ = 0;
  int error_answers_ = 0;  // error answers in a row (WatchEnd::kError), reset by an event or a list

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string rv_;
  std::vector<Duration> backoffs_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<std::int64_t> relists_{0}, reconnects_{0};
};

// The v1.Status object of a watch ERROR event or an HTTP error body: its code (0 if none).
int StatusCodeOf(const nlohmann::json& status);

}  // namespace seedance::kube
