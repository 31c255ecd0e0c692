#include "seedance/sim/deadline/policies.h"

#include <algorithm>
#include <cmath>

#include "seedance/sim/deadline/adrs_evolved.h"
#include "seedance/sim/deadline/sky_spot_policies.h"

namespace seedance::sim::deadline {

std::int64_t SafetyNetSlack(const DeadlineJob& job, std::int64_t gap_s) {
  return std::max(2 * job.changeover_s, job.changeover_s + gap_s);
}

bool SafetyNetCommits(const Observation& obs, Instance choice) {
  const bool keeps_spot = obs.current == Instance::kSpot && choice == Instance::kSpot;
  return !keeps_spot && obs.remaining_time_s - obs.remaining_compute_s < SafetyNetSlack(*obs.job, obs.gap_s);
}

void OnlinePolicy::Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick) {
  committed_ = false;
  OnStart(job, gap_s, start_tick);
}

Instance GuardEachTick(const Observation& obs, Instance choice) {
  const std::int64_t slack = obs.remaining_time_s - obs.remaining_compute_s;
  const std::int64_t d = obs.job->changeover_s;
  bool ok = true;
  if (choice == Instance::kSpot) {
    ok = obs.current == Instance::kSpot ? slack >= d + obs.changeover_left_s : slack >= 2 * d;
  } else if (choice == Instance::kIdle) {
    ok = slack >= obs.gap_s + d;
  }
  return ok ? choice : Instance::kOnDemand;
}

Instance OnlinePolicy::Decide(const Observation& obs) {
  if (guard_each_tick_) return GuardEachTick(obs, Choose(obs));
  if (committed_) return Instance::kOnDemand;
  const Instance choice = Choose(obs);
  if (SafetyNetCommits(obs, choice)) {
    committed_ = true;
    return Instance::kOnDemand;
  }
  return choice;
}

Instance OnDemandPolicy::Choose(const Observation& /*obs*/) { return Instance::kOnDemand; }

Instance GreedyPolicy::Choose(const Observation& obs) {
  return obs.spot_available ? Instance::kSpot : Instance::kIdle;
}

bool BehindSchedule(const Observation& obs, std::int64_t at_s) {
  const DeadlineJob& j = *obs.job;
  const std::int64_t cp = j.compute_s - obs.remaining_compute_s;
  // cp < C(0) * at / R(0), in integers (seconds; products stay far below 2^63).
  return cp * j.deadline_s < j.compute_s * at_s;
}

Instance UniformProgressWithoutSpot(const Observation& obs, std::int64_t hold_s) {
  if (obs.current == Instance::kOnDemand) {
    return BehindSchedule(obs, obs.elapsed_s + hold_s) ? Instance::kOnDemand : Instance::kIdle;
  }
  return BehindSchedule(obs, obs.elapsed_s) ? Instance::kOnDemand : Instance::kIdle;
}

namespace {

// Rule 2 (Taking Risks) except that the hysteresis also keeps an on-demand job that is not yet
// ahead of ep(t + 2d) off spot; Exploitation keeps a running spot instance.
Instance UniformProgressRule(const Observation& obs) {
  if (obs.current == Instance::kSpot) return Instance::kSpot;
  if (obs.spot_available) {
    if (obs.current == Instance::kOnDemand &&
        BehindSchedule(obs, obs.elapsed_s + 2 * obs.job->changeover_s)) {
      return Instance::kOnDemand;
    }
    return Instance::kSpot;
  }
  return UniformProgressWithoutSpot(obs, 2 * obs.job->changeover_s);
}

}  // namespace

Instance UniformProgressPolicy::Choose(const Observation& obs) {
  if (spot_first_ && obs.spot_available) return Instance::kSpot;
  return UniformProgressRule(obs);
}

void SpotRunHistory::Reset() {
  next_ = 0;
  run_start_ = -1;
  run_start_seen_ = false;
  seen_down_ = false;
  down_start_ = -1;
  down_start_seen_ = false;
  seen_up_ = false;
  runs_.clear();
  outages_.clear();
}

void SpotRunHistory::AdvanceTo(const PastView& past) {
  const std::int64_t now = past.now();
  const std::int64_t first = std::max<std::int64_t>(0, now - window_ticks_);
  if (next_ < first) {  // a fresh start (or a jump): forget what cannot be joined up
    next_ = first;
    run_start_ = -1;
    seen_down_ = false;
    down_start_ = -1;
    seen_up_ = false;
  }
  for (; next_ <= now; ++next_) {
    if (past.At(next_)) {
      if (run_start_ < 0) {
        run_start_ = next_;
        run_start_seen_ = seen_down_;
      }
      if (down_start_ >= 0 && down_start_seen_) outages_.emplace_back(down_start_, next_ - down_start_);
      down_start_ = -1;
      seen_up_ = true;
    } else {
      if (run_start_ >= 0 && run_start_seen_) runs_.emplace_back(run_start_, next_ - run_start_);
      run_start_ = -1;
      seen_down_ = true;
      if (down_start_ < 0) {
        down_start_ = next_;
        down_start_seen_ = seen_up_;
      }
    }
  }
  while (!runs_.empty() && runs_.front().first < first) runs_.pop_front();
  while (!outages_.empty() && outages_.front().first < first) outages_.pop_front();
}

std::int64_t SpotRunHistory::current_age() const {
  return run_start_ < 0 ? 0 : next_ - 1 - run_start_;
}

std::int64_t SpotRunHistory::outage_age() const { return down_start_ < 0 ? 0 : next_ - down_start_; }

bool ExpectedOutageLeft(const SpotRunHistory& history, std::int64_t gap_s, double* seconds) {
  const std::int64_t age = history.outage_age();
  if (age == 0) return false;
  double sum = 0;
  int n = 0;
  for (const auto& [start, len] : history.outages()) {
    if (len <= age) continue;
    sum += static_cast<double>(len - age);
    ++n;
  }
  if (n == 0) return false;
  *seconds = sum / n * static_cast<double>(gap_s);
  return true;
}

SeedanceDeadlineConfig SingleRegionSeedanceConfig() {
  SeedanceDeadlineConfig c;
  c.window_s = 24 * 3600;
  c.wait_slack_fraction = 0.08;
  c.wait_slack_fraction_per_hour_of_d = 0.45;
  c.wait_slack_changeovers = 4;
  c.wait_outage_changeovers = 2;
  c.guard_each_tick = true;
  c.recent_window_s = 12600;
  return c;
}

SeedanceDeadlinePolicy::SeedanceDeadlinePolicy(SeedanceDeadlineConfig config)
    : OnlinePolicy(config.guard_each_tick), config_(config), history_(0), recent_(0) {}

void SeedanceDeadlinePolicy::OnStart(const DeadlineJob& /*job*/, std::int64_t gap_s, std::int64_t /*start_tick*/) {
  history_ = SpotRunHistory(std::max<std::int64_t>(1, config_.window_s / gap_s));
  recent_ = SpotRunHistory(std::max<std::int64_t>(1, config_.recent_window_s / gap_s));
}

bool ExpectedSpotBenefit(const SpotRunHistory& history, const Observation& obs, bool extra_od_changeover,
                         int min_runs, double* benefit) {
  if (static_cast<int>(history.runs().size()) < min_runs) return false;
  const double k = obs.job->od_price;
  const double d = static_cast<double>(obs.job->changeover_s);
  const double g = static_cast<double>(obs.gap_s);
  const std::int64_t age = history.current_age();
  auto gain = [&](double life_s) {
    return k * std::max(0.0, life_s - d) - life_s - (extra_od_changeover ? k * d : 0.0);
  };
  double sum = 0;
  int n = 0;
  for (const auto& [start, len] : history.runs()) {
    if (len <= age) continue;
    sum += gain(static_cast<double>(len - age) * g);
    ++n;
  }
  // Older than every run in the window: expect it to live about as long again.
  *benefit = n > 0 ? sum / n : gain(static_cast<double>(std::max<std::int64_t>(age, 1)) * g);
  return true;
}

Instance SeedanceDeadlinePolicy::Choose(const Observation& obs) {
  history_.AdvanceTo(obs.past);
  if (config_.recent_window_s > 0) recent_.AdvanceTo(obs.past);
  if (obs.current == Instance::kSpot) return Instance::kSpot;  // Exploitation
  if (obs.spot_available) {
    const bool from_od = obs.current == Instance::kOnDemand;
    double benefit = 0;
    // Too little history to judge the run: take it (spot-first).
    bool take = !ExpectedSpotBenefit(history_, obs, from_od, config_.min_runs, &benefit) || benefit > 0;
    if (take && config_.recent_window_s > 0 && from_od &&
        ExpectedSpotBenefit(recent_, obs, from_od, config_.min_runs, &benefit) && benefit <= 0) {
      take = false;  // the runs of the regime now do not pay for the changeovers
    }
    if (take) return Instance::kSpot;
  }
  if (config_.wait_slack_fraction >= 0) {
    if (obs.current == Instance::kOnDemand) return Instance::kOnDemand;
    double outage_left = 0;
    if (config_.wait_outage_changeovers >= 0 && ExpectedOutageLeft(history_, obs.gap_s, &outage_left) &&
        outage_left <= config_.wait_outage_changeovers * static_cast<double>(obs.job->changeover_s)) {
      return Instance::kIdle;  // a short outage: wait it out (the guard still applies)
    }
    const double slack =
        static_cast<double>(obs.remaining_time_s - obs.remaining_compute_s - obs.job->changeover_s);
    const double d_hours = static_cast<double>(obs.job->changeover_s) / 3600.0;
    const double fraction = config_.wait_slack_fraction + config_.wait_slack_fraction_per_hour_of_d * d_hours;
    const double wait_line = fraction * static_cast<double>(obs.remaining_compute_s) +
                             config_.wait_slack_changeovers * static_cast<double>(obs.job->changeover_s);
    return slack < wait_line ? Instance::kOnDemand : Instance::kIdle;
  }
  return UniformProgressWithoutSpot(
      obs, std::llround(config_.on_demand_hold_changeovers * static_cast<double>(obs.job->changeover_s)));
}

const std::vector<std::string>& PolicyNames() {
  static const std::vector<std::string> kNames = {"on-demand", "greedy", "uniform-progress", "omniscient",
                                                  "seedance"};
  return kNames;
}

Result<std::unique_ptr<DeadlinePolicy>> MakeOnlinePolicy(const std::string& name) {
  if (name == "on-demand") return std::unique_ptr<DeadlinePolicy>(new OnDemandPolicy());
  if (name == "greedy") return std::unique_ptr<DeadlinePolicy>(new AuthorsGreedyPolicy());
  if (name == "uniform-progress") return std::unique_ptr<DeadlinePolicy>(new AuthorsUniformProgressPolicy());
  if (name == "greedy-paper") return std::unique_ptr<DeadlinePolicy>(new GreedyPolicy());
  if (name == "uniform-progress-spot-first") return std::unique_ptr<DeadlinePolicy>(new UniformProgressPolicy(true));
  if (name == "adrs-gepa") return std::unique_ptr<DeadlinePolicy>(new AdrsGepaPolicy());
  if (name == "adrs-levi") return std::unique_ptr<DeadlinePolicy>(new AdrsLeviPolicy());
  if (name == "adrs-openevolve") return std::unique_ptr<DeadlinePolicy>(new AdrsOpenEvolvePolicy());
  if (name == "adrs-shinkaevolve") return std::unique_ptr<DeadlinePolicy>(new AdrsShinkaEvolvePolicy());
  if (name == "uniform-progress-hysteresis") return std::unique_ptr<DeadlinePolicy>(new UniformProgressPolicy(false));
  if (name == "seedance") return std::unique_ptr<DeadlinePolicy>(new SeedanceDeadlinePolicy());
  return InvalidArgumentError("unknown online deadline policy '" + name + "'");
}

}  // namespace seedance::sim::deadline
