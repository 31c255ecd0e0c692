#pragma once

// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection package:
// the holder renews spec.renewTime every `retry_period`; another candidate takes the lease only
// when the record it observed has not changed for `lease_duration` by its own clock (so clock
// skew between replicas does not matter); a leader that cannot renew for `renew_deadline` steps
// down. Updates carry metadata.resourceVersion, so of two candidates racing for an expired lease
// one gets 409 Conflict and stays a follower. Defaults are client-go's: 15 s lease, 10 s renew
// deadline, 2 s retry (followers retry with up to 20 % jitter).
//
// Time is injected (Clock, and the wait between tries) so tests step through expiry without
// sleeping. Thread-safety: Run()/Step() on one thread; Stop() and leader() from any.

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "seedance/core/clock.h"
#include "seedance/core/rng.h"
#include "seedance/kube/client.h"

namespace seedance::kube {

struct LeaderElectionOptions {
  std::string namespace_name = "kube-system";
  std::string name = "seedance";
  std::string identity;  // this replica (pod name); required
  Duration lease_duration = std::chrono::seconds(15);
  Duration renew_deadline = std::chrono::seconds(10);
  Duration retry_period = std::chrono::seconds(2);
};

class LeaderElector {
 public:
  enum class Outcome { kHeld, kHeldByOther, kError };

  // `clock`: Unix time (SystemClock in production; spec.renewTime is written from it).
  // `wait(d)`: false when stopped (nullptr: a real wait that Stop() interrupts).
  LeaderElector(ApiClient& client, LeaderElectionOptions options, const Clock& clock, Rng rng,
                std::function<bool(Duration)> wait = nullptr);

  // One try to acquire or renew; updates leader().
  Outcome Step();
  // Steps every retry period until Stop(); on leaving, a held lease is released (holderIdentity
  // emptied) so a follower need not wait for expiry.
  void Run();
  void Stop();
  bool leader() const { return leader_.load(); }
  // Called on the Step() thread when leadership is gained / lost.
  std::function<void(bool leader)> on_change;

 private:
  Outcome TryAcquireOrRenew();
  std::string Path() const;
  std::string Now() const;
  void SetLeader(bool leader);

  ApiClient& client_;
  LeaderElectionOptions options_;
  const Clock& clock_;
  Rng rng_;
  std::function<bool(Duration)> wait_;
  nlohmann::json observed_spec_;   // the record last seen
  Duration observed_at_{0};        // local time it was first seen
  Duration last_renew_{0};
  std::atomic<bool> leader_{false};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

// RFC 3339 with microseconds ("2026-01-01T00:00:00.000000Z"), as metav1.MicroTime.
std::string FormatMicroTime(Duration since_epoch);

}  // namespace seedance::kube
