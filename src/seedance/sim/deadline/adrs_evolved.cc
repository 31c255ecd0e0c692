#include "seedance/sim/deadline/adrs_evolved.h"

#include <algorithm>
#include <cmath>

namespace seedance::sim::deadline {
namespace {

// The longest run of available ticks in `h`.
std::int64_t LongestRun(const std::deque<bool>& h) {
  std::int64_t best = 0, run = 0;
  for (bool x : h) {
    run = x ? run + 1 : 0;
    best = std::max(best, run);
  }
  return best;
}

std::int64_t CeilTicks(std::int64_t s, std::int64_t gap) { return (s + gap - 1) / gap; }

}  // namespace

Instance AdrsGepaPolicy::Choose(const Observation& obs) {
  const double c = static_cast<double>(obs.remaining_compute_s);
  const double r = static_cast<double>(obs.job->deadline_s - obs.elapsed_s);
  const double slack = r - (c + static_cast<double>(obs.job->changeover_s));
  if (slack <= 0.05) return Instance::kOnDemand;
  if (obs.spot_available) return Instance::kSpot;
  if (obs.previous == Instance::kOnDemand) return Instance::kOnDemand;
  return slack / c < 0.2 ? Instance::kOnDemand : Instance::kIdle;
}

Instance AdrsLeviPolicy::Choose(const Observation& obs) {
  const std::int64_t c = obs.remaining_compute_s;
  const std::int64_t r = obs.job->deadline_s - obs.elapsed_s;
  const std::int64_t d = obs.job->changeover_s;
  const std::int64_t g = obs.gap_s;
  if (r <= c + d + g) {
    return obs.spot_available && obs.previous == Instance::kSpot ? Instance::kSpot : Instance::kOnDemand;
  }
  if (obs.spot_available) return Instance::kSpot;
  if (obs.previous == Instance::kOnDemand) return Instance::kOnDemand;
  const double margin = 2.0 * static_cast<double>(g) + 0.1 * static_cast<double>(c);
  return static_cast<double>(r) > static_cast<double>(c + d) + margin ? Instance::kIdle : Instance::kOnDemand;
}

void AdrsOpenEvolvePolicy::OnStart(const DeadlineJob& /*job*/, std::int64_t gap_s) {
  window_ = static_cast<std::size_t>(std::max<std::int64_t>(10, 3600 / gap_s));
  history_.clear();
  od_entry_tick_.reset();
  sealed_ = false;
  spot_streak_ = 0;
}

Instance AdrsOpenEvolvePolicy::Choose(const Observation& obs) {
  const bool avail = obs.spot_available;
  history_.push_back(avail);
  if (history_.size() > window_) history_.pop_front();
  spot_streak_ = avail ? spot_streak_ + 1 : 0;
  const double share =
      static_cast<double>(std::count(history_.begin(), history_.end(), true)) / static_cast<double>(history_.size());
  const std::int64_t longest = LongestRun(history_);

  const std::int64_t g = obs.gap_s;
  const std::int64_t d = obs.job->changeover_s;
  const std::int64_t tick = obs.elapsed_s / g;
  const std::int64_t left = std::max<std::int64_t>(0, SkySpotTicksLeft(obs));
  const std::int64_t od_ticks = CeilTicks(d, g);
  const std::int64_t need1 = SkySpotTicksNeeded(obs, d);
  const std::int64_t need2 = SkySpotTicksNeeded(obs, 2 * d);

  const bool scarce = share < 0.4 || static_cast<double>(longest) < 2.0 * static_cast<double>(od_ticks);
  const std::int64_t m_seal = (scarce ? 3 : 1) * od_ticks;
  const std::int64_t m_exit = (scarce ? 5 : 2) * od_ticks;
  const std::int64_t m_wait = (scarce ? 100 : 4) * od_ticks;
  const std::int64_t min_dwell = 2 * od_ticks;

  if (obs.previous == Instance::kOnDemand) {
    if (!od_entry_tick_) od_entry_tick_ = tick;
  } else {
    od_entry_tick_.reset();
  }
  if (need1 >= left) return Instance::kOnDemand;
  if (!sealed_ && left <= need1 + m_seal) sealed_ = true;
  if (sealed_) {
    if (!scarce && avail && left > need2 + m_exit) {
      sealed_ = false;
    } else {
      return Instance::kOnDemand;
    }
  }
  if (need2 >= left) {
    return obs.previous == Instance::kSpot && avail ? Instance::kSpot : Instance::kOnDemand;
  }
  if (obs.previous == Instance::kOnDemand) {
    if (od_entry_tick_ && tick - *od_entry_tick_ < min_dwell) return Instance::kOnDemand;
    if (left <= need2 + m_exit) return Instance::kOnDemand;
    if (spot_streak_ < od_ticks) return Instance::kOnDemand;
    const bool excess_slack = left > need2 + 8 * od_ticks;
    if (!excess_slack && static_cast<double>(longest) < 1.5 * static_cast<double>(od_ticks)) {
      return Instance::kOnDemand;
    }
    return Instance::kSpot;
  }
  if (avail) return Instance::kSpot;
  return left > need2 + m_wait ? Instance::kIdle : Instance::kOnDemand;
}

void AdrsShinkaEvolvePolicy::OnStart(const DeadlineJob& /*job*/, std::int64_t /*gap_s*/) {
  history_.clear();
  started_ = false;
  ema_short_ = ema_long_ = prev_trend_ = 0;
  od_dwell_ticks_ = 0;
}

Instance AdrsShinkaEvolvePolicy::Choose(const Observation& obs) {
  constexpr std::size_t kWindow = 60;
  const bool avail = obs.spot_available;
  const double v = avail ? 1.0 : 0.0;
  history_.push_back(avail);
  if (history_.size() > kWindow) history_.pop_front();
  if (!started_) {
    started_ = true;
    ema_short_ = ema_long_ = v;
    prev_trend_ = 0;
  } else {
    ema_short_ = 0.154 * v + (1.0 - 0.154) * ema_short_;
    ema_long_ = 0.033 * v + (1.0 - 0.033) * ema_long_;
  }
  double flips = 0;
  if (history_.size() > 1) {
    int t = 0;
    for (std::size_t i = 1; i < history_.size(); ++i) t += history_[i] != history_[i - 1] ? 1 : 0;
    flips = static_cast<double>(t) / static_cast<double>(history_.size() - 1);
  }
  const double longest = static_cast<double>(LongestRun(history_));
  od_dwell_ticks_ = obs.current == Instance::kOnDemand ? od_dwell_ticks_ + 1 : 0;

  const std::int64_t g = obs.gap_s;
  const std::int64_t oh = CeilTicks(obs.job->changeover_s, g);
  const double ohd = static_cast<double>(oh);
  double risk = 1.0 - ema_long_;
  const double trend = ema_short_ - ema_long_;
  const double accel = trend - prev_trend_;
  prev_trend_ = trend;
  if (trend < 0) {
    risk += std::abs(trend) * 2.0;
  } else {
    const double quality = std::min(1.0, longest / std::max(1.0, 2.0 * ohd));
    risk -= trend * 0.5 * quality;
  }
  if (accel < 0) risk += std::abs(accel) * 2.0;
  risk += flips * 0.5;
  if (longest < 2.0 * ohd) risk += 0.2;
  if (history_.size() >= 3 && !history_[history_.size() - 1] && !history_[history_.size() - 2] &&
      !history_[history_.size() - 3]) {
    risk = std::max(risk, 2.0);
  }
  risk = std::max(0.0, std::min(2.0, risk));

  const std::int64_t left = std::max<std::int64_t>(0, SkySpotTicksLeft(obs));
  const std::int64_t need2 = CeilTicks(obs.remaining_compute_s, g) + 2 * oh;
  const double sigma = std::sqrt(std::max(0.0, ema_long_ * (1.0 - ema_long_)));
  const double max_seal = std::ceil(4.0 * ohd + 8.0 * ohd * sigma);
  const std::int64_t cushion = static_cast<std::int64_t>(std::ceil(risk * max_seal));
  const std::int64_t seal_line = need2 + cushion;

  if (left <= need2) return Instance::kOnDemand;
  if (left <= seal_line) {
    if (!avail) return Instance::kOnDemand;
    if (obs.current == Instance::kSpot) return Instance::kSpot;
    if (cushion > 0) {
      const double pos = static_cast<double>(left - need2) / static_cast<double>(cushion);
      return risk < pos * pos ? Instance::kSpot : Instance::kOnDemand;
    }
    return Instance::kSpot;
  }
  if (obs.current == Instance::kOnDemand) {
    const double dwell_req = std::ceil(ohd * (0.5 + risk));
    if (static_cast<double>(od_dwell_ticks_) < dwell_req) return Instance::kOnDemand;
    if (left <= seal_line + oh) return Instance::kOnDemand;
    if (longest < ohd) return Instance::kOnDemand;
  }
  return avail ? Instance::kSpot : Instance::kIdle;
}

const std::vector<AdrsPublished>& AdrsEvolvedPrograms() {
  static const std::vector<AdrsPublished> kPrograms = {
      {"adrs-openevolve", "OpenEvolve", 43, 104.29893280864212},
      {"adrs-shinkaevolve", "ShinkaEvolve", 46, 101.18425495370386},
      {"adrs-gepa", "GEPA", 51, 95.35345216049389},
      {"adrs-levi", "LEVI", -1, -1},
  };
  return kPrograms;
}

}  // namespace seedance::sim::deadline
