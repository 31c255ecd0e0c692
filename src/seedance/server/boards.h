#pragma once

// Shared, thread-safe state that one part of the server writes and another reads:
//   HealthBoard  - the audit's verdict per node (written by the audit loop, read by filter and
//                  prioritize);
//   BreakerBoard - cost-breaker trips per namespace or job (written by the breaker loop and
//                  POST /v1/breaker/reset, read by filter).
// Both are small maps behind one lock (the health board's a reader-writer lock); readers copy
// what they need.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "seedance/audit/admission.h"

namespace seedance::server {

struct NodeHealth {
  audit::AdmissionState state = audit::AdmissionState::kAdmitted;
  std::string reason;         // the audit's reason, quoted in FailedNodes
  double grade_weight = 1.0;  // 0..1: multiplies the node's prioritize score
  std::int64_t updated_ms = 0;
};

class HealthBoard {
 public:
  void Set(const std::string& node, NodeHealth health) {
    std::unique_lock lock(mu_);
    nodes_[node] = std::move(health);
  }
  // Nodes the audit has not seen are treated as admitted with weight 1 (nullopt here).
  std::optional<NodeHealth> Get(const std::string& node) const {
    std::shared_lock lock(mu_);
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return std::nullopt;
    return it->second;
  }
  std::map<std::string, NodeHealth> Snapshot() const {
    std::shared_lock lock(mu_);
    return nodes_;
  }
  // Reads under one lock for a whole decision (filter and prioritize look up every candidate;
  // a lock and a copy per candidate cost more than the decision at 5,000 names). A shared lock:
  // decisions read side by side; the audit loop's Set waits meanwhile.
  class Reader {
   public:
    explicit Reader(const HealthBoard& b) : lock_(b.mu_), nodes_(b.nodes_) {}
    const NodeHealth* Find(const std::string& node) const {
      if (nodes_.empty()) return nullptr;
      auto it = nodes_.find(node);
      return it == nodes_.end() ? nullptr : &it->second;
    }

   private:
    std::shared_lock<std::shared_mutex> lock_;
    const std::map<std::string, NodeHealth>& nodes_;
  };

 private:
  mutable std::shared_mutex mu_;
  std::map<std::string, NodeHealth> nodes_;
};

// One trip of the cost circuit breaker (S6.7).
struct BreakerTrip {
  enum class Scope : std::uint8_t { kNamespace, kJob };
  Scope scope = Scope::kNamespace;
  std::string key;         // namespace or job name
  std::string reason;      // "hourly cost $41.20 > threshold $30.00: <diagnosis>; suggest <...>"
  std::int64_t tripped_ms = 0;
  std::int64_t until_ms = 0;  // end of the cool-down; 0 = until reset
};

class BreakerBoard {
 public:
  void Trip(BreakerTrip trip) {
    std::lock_guard lock(mu_);
    trips_[Key(trip.scope, trip.key)] = std::move(trip);
  }
  // Returns true when a trip was active and is now cleared.
  bool Reset(BreakerTrip::Scope scope, const std::string& key) {
    std::lock_guard lock(mu_);
    return trips_.erase(Key(scope, key)) > 0;
  }
  // The active trip that blocks a pod of `namespace_name` / `job` at `now_ms` (namespace first).
  std::optional<BreakerTrip> Active(const std::string& namespace_name, const std::string& job,
                                    std::int64_t now_ms) const {
    std::lock_guard lock(mu_);
    for (auto key : {Key(BreakerTrip::Scope::kNamespace, namespace_name),
                     Key(BreakerTrip::Scope::kJob, job)}) {
      auto it = trips_.find(key);
      if (it == trips_.end()) continue;
      if (it->second.until_ms != 0 && now_ms >= it->second.until_ms) continue;
      return it->second;
    }
    return std::nullopt;
  }
  std::vector<BreakerTrip> Snapshot() const {
    std::lock_guard lock(mu_);
    std::vector<BreakerTrip> out;
    for (const auto& [k, v] : trips_) out.push_back(v);
    return out;
  }

 private:
  static std::string Key(BreakerTrip::Scope scope, const std::string& key) {
    return (scope == BreakerTrip::Scope::kNamespace ? "ns/" : "job/") + key;
  }
  mutable std::mutex mu_;
  std::map<std::string, BreakerTrip> trips_;
};

}  // namespace seedance::server
