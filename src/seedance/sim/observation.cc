#include "seedance/sim/observation.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace seedance::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

double SpotHistory::MeanTimeBetweenDrops() const {
  return drops > 0 ? observed_s / static_cast<double>(drops) : kInf;
}

double SpotHistory::Availability() const { return observed_s > 0 ? available_s / observed_s : 1.0; }

SpotWatch::SpotWatch(const SpotSeries* series, int max_gpus, double window_s)
    : series_(series), max_gpus_(max_gpus),
      window_ticks_(std::max<std::int64_t>(1, static_cast<std::int64_t>(std::floor(window_s / series->gap_s())))) {}

int SpotWatch::GpusAt(std::int64_t k) const {
  return std::min(max_gpus_, series_->AvailableAt(static_cast<double>(k) * series_->gap_s()));
}

void SpotWatch::AdvanceTo(double now) {
  if (series_ == nullptr || now < 0) return;
  const auto last = static_cast<std::int64_t>(std::floor(now / series_->gap_s()));
  if (last < next_) return;
  // Ticks that would leave the window at once are skipped.
  std::int64_t k = std::max(next_, last - window_ticks_ + 1);
  if (k > next_) {
    ticks_.clear();
    drops_ = 0;
    available_ = 0;
    gpu_sum_ = 0;
  }
  int prev = ticks_.empty() ? (k > 0 ? GpusAt(k - 1) : -1) : ticks_.back().gpus;
  for (; k <= last; ++k) {
    const int g = GpusAt(k);
    const bool drop = prev >= 0 && g < prev;
    ticks_.push_back(Tick{k, g, drop});
    drops_ += drop;
    available_ += g > 0;
    gpu_sum_ += g;
    prev = g;
  }
  next_ = last + 1;
  while (!ticks_.empty() && ticks_.front().k <= last - window_ticks_) {
    drops_ -= ticks_.front().drop;
    available_ -= ticks_.front().gpus > 0;
    gpu_sum_ -= ticks_.front().gpus;
    ticks_.pop_front();
  }
}

SpotHistory SpotWatch::history() const {
  SpotHistory h;
  if (series_ == nullptr) return h;
  h.tracked = true;
  const double gap = series_->gap_s();
  const auto n = static_cast<double>(ticks_.size());
  h.observed_s = n * gap;
  h.drops = drops_;
  h.available_s = static_cast<double>(available_) * gap;
  h.mean_gpus = n > 0 ? static_cast<double>(gpu_sum_) / n : 0;
  return h;
}

Observer::Observer(const FleetSpec& fleet, const SimOptions& options)
    : fleet_(fleet), round_s_(options.round_s), watch_(fleet.pools.size()) {
  for (std::size_t p = 0; p < fleet.pools.size(); ++p) {
    const PoolSpec& spec = fleet.pools[p];
    if (spec.tier == Tier::kSpot && !spec.spot.empty()) {
      watch_[p] = SpotWatch(&spec.spot, spec.max_gpus, options.spot_history_window_s);
    }
  }
}

void Observer::Build(double t, const std::vector<ActiveJob>& active, Capacity& capacity, SimView* view) {
  view->now = t;
  view->round_s = round_s_;
  // Value copies only (the slicing assignments copy the public base): a view holds no pointer back
  // to a JobSpec, a PoolSpec or the FleetSpec. Assigning into the previous round's elements reuses
  // their storage.
  view->fleet = static_cast<const FleetInfo&>(fleet_);
  view->jobs.resize(active.size());
  for (std::size_t i = 0; i < active.size(); ++i) {
    const ActiveJob& st = active[i];
    JobView& jv = view->jobs[i];
    jv.info = static_cast<const JobInfo&>(*st.spec);
    jv.attained_steps = st.attained;
    jv.service_s_by_pool.assign(st.service_s_by_pool.begin(), st.service_s_by_pool.end());
    jv.pool = st.pool;
    jv.running = st.running;
    jv.ever_ran = st.ever_ran;
    jv.preemptions = st.preemptions;
    jv.interrupted_at_s = st.interrupted_at_s;
    jv.ran_s = st.ran_s;
  }
  view->pools.resize(fleet_.pools.size());
  for (std::size_t p = 0; p < fleet_.pools.size(); ++p) {
    watch_[p].AdvanceTo(t);
    PoolView& pv = view->pools[p];
    pv.info = static_cast<const PoolInfo&>(fleet_.pools[p]);
    // Committed pools (owned at TCO, reserved) are paid whether used or not: a scheduler sees
    // their marginal price, 0, so it uses them before anything it would pay for by the second.
    // A spot pool with a price series: the price in force now, never a later one.
    pv.info.usd_per_gpu_hour = fleet_.pools[p].MarginalPriceAt(t);
    pv.held = capacity.held(p);
    pv.ready = capacity.Ready(p, t);
    pv.capacity = capacity.CapacityAt(p, t);
    pv.spot = watch_[p].history();
  }
}

OracleView Observer::BuildOracle(const std::vector<ActiveJob>& active) const {
  OracleView o;
  for (const auto& st : active) o.remaining_steps.push_back(st.remaining);
  for (const auto& spec : fleet_.pools) {
    o.spot_mtbf_s.push_back(spec.tier == Tier::kSpot && !spec.spot.empty() ? spec.spot.MeanTimeBetweenDrops() : kInf);
  }
  return o;
}

}  // namespace seedance::sim
