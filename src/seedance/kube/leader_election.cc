#include "seedance/kube/leader_election.h"

#include <ctime>

#include <fmt/format.h>

namespace seedance::kube {

std::string FormatMicroTime(Duration since_epoch) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(since_epoch).count();
  const std::time_t secs = static_cast<std::time_t>(us / 1'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                     tm.tm_hour, tm.tm_min, tm.tm_sec, us % 1'000'000);
}

LeaderElector::LeaderElector(ApiClient& client, LeaderElectionOptions options, const Clock& clock, Rng rng,
                             std::function<bool(Duration)> wait)
    : client_(client), options_(std::move(options)), clock_(clock), rng_(rng), wait_(std::move(wait)) {
  SEEDANCE_CHECK(!options_.identity.empty()) << "leader election needs an identity";
}

std::string LeaderElector::Path() const {
  return fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases/{}", options_.namespace_name, options_.name);
}

std::string LeaderElector::Now() const { return FormatMicroTime(clock_.Now()); }

void LeaderElector::SetLeader(bool leader) {
  if (leader_.exchange(leader) != leader && on_change) on_change(leader);
}

LeaderElector::Outcome LeaderElector::TryAcquireOrRenew() {
  const auto lease_s = std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count();
  auto got = client_.Json("GET", Path());
  if (!got.has_value()) {
    if (got.error().code() != StatusCode::kNotFound) return Outcome::kError;
    const nlohmann::json lease = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", options_.name}, {"namespace", options_.namespace_name}}},
        {"spec",
         {{"holderIdentity", options_.identity},
          {"leaseDurationSeconds", lease_s},
          {"acquireTime", Now()},
          {"renewTime", Now()},
          {"leaseTransitions", 0}}}};
    auto created = client_.Json("POST", fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases",
                                                    options_.namespace_name),
                                lease);
    if (!created.has_value()) return Outcome::kError;
    observed_spec_ = (*created)["spec"];
    observed_at_ = clock_.Now();
    return Outcome::kHeld;
  }
  nlohmann::json lease = std::move(*got);
  nlohmann::json spec = lease.contains("spec") && lease["spec"].is_object() ? lease["spec"] : nlohmann::json::object();
  if (spec != observed_spec_) {
    observed_spec_ = spec;
    observed_at_ = clock_.Now();
  }
  const std::string holder = spec.value("holderIdentity", "");
  const bool mine = holder == options_.identity;
  if (!holder.empty() && !mine && clock_.Now() - observed_at_ < options_.lease_duration) return Outcome::kHeldByOther;
  nlohmann::json next = spec;
  next["holderIdentity"] = options_.identity;
  next["leaseDurationSeconds"] = lease_s;
  next["renewTime"] = Now();
  if (!mine) {
    next["acquireTime"] = Now();
    next["leaseTransitions"] = spec.value("leaseTransitions", 0) + 1;
  }
  lease["spec"] = next;
  auto updated = client_.Json("PUT", Path(), lease);  // carries metadata.resourceVersion
  if (!updated.has_value()) {
    return updated.error().code() == StatusCode::kFailedPrecondition ? Outcome::kHeldByOther : Outcome::kError;
  }
  observed_spec_ = (*updated)["spec"];
  observed_at_ = clock_.Now();
  return Outcome::kHeld;
}

LeaderElector::Outcome LeaderElector::Step() {
  const Outcome o = TryAcquireOrRenew();
  switch (o) {
    case Outcome::kHeld:
      last_renew_ = clock_.Now();
      SetLeader(true);
      break;
    case Outcome::kHeldByOther:
      SetLeader(false);
      break;
    case Outcome::kError:
      // A leader keeps leading until its renew deadline passes without a successful renew.
      if (leader_ && clock_.Now() - last_renew_ >= options_.renew_deadline) SetLeader(false);
      break;
  }
  return o;
}

void LeaderElector::Run() {
  while (!stop_) {
    Step();
    Duration d = options_.retry_period;
    if (!leader_) {
      d += std::chrono::duration_cast<Duration>(options_.retry_period * (0.2 * rng_.UniformDouble()));
    }
    if (wait_) {
      if (!wait_(d)) break;
    } else {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, d, [&] { return stop_.load(); })) break;
    }
  }
  if (leader_) {
    // Release: an empty holder lets a follower take over at its next try.
    auto got = client_.Json("GET", Path());
    if (got.has_value() && (*got)["spec"].value("holderIdentity", "") == options_.identity) {
      (*got)["spec"]["holderIdentity"] = "";
      (void)client_.Json("PUT", Path(), *got);
    }
    SetLeader(false);
  }
}

void LeaderElector::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
}

}  // namespace seedance::kube
