#include "seedance/sim/deadline/sky_spot_multi.h"

#include <algorithm>

#include "seedance/core/check.h"

namespace seedance::sim::deadline {
namespace {

std::int64_t CeilTicks(std::int64_t s, std::int64_t gap) { return (s + gap - 1) / gap; }

// The strong guarantee: once C + d, in whole ticks, reaches the whole ticks left, on-demand unless
// the job held a served spot instance during the last tick.
Instance StrongGuarantee(const SkySpotMultiState& s, Instance want) {
  if (s.remaining_compute_s <= 0) return want;
  const std::int64_t left = (s.job->deadline_s - s.elapsed_s) / s.gap_s;  // elapsed < deadline here
  if (CeilTicks(s.remaining_compute_s + s.job->changeover_s, s.gap_s) >= left) {
    return s.last == Instance::kSpot && s.changeover_left_s == 0 ? Instance::kSpot : Instance::kOnDemand;
  }
  return want;
}

class BaselinePolicy : public SkySpotMultiPolicy {
 public:
  std::string_view Name() const override { return "adrs-multi-baseline"; }
  void Start(const DeadlineJob&, std::int64_t, int) override {}
  Instance Step(const SkySpotMultiState& s, SkySpotMultiEnv& env) override {
    if (s.remaining_compute_s <= 0) return Instance::kIdle;
    const std::int64_t d = s.job->changeover_s;
    const std::int64_t left = (s.job->deadline_s - s.elapsed_s) / s.gap_s;
    if (CeilTicks(s.remaining_compute_s + d, s.gap_s) >= left) {
      return s.last == Instance::kSpot && s.changeover_left_s == 0 ? Instance::kSpot : Instance::kOnDemand;
    }
    if (CeilTicks(s.remaining_compute_s + 2 * d, s.gap_s) >= left) {
      return s.last == Instance::kSpot && s.has_spot ? Instance::kSpot : Instance::kOnDemand;
    }
    if (s.has_spot) return Instance::kSpot;
    if (env.regions() > 1) env.SwitchRegion((env.region() + 1) % env.regions());
    return Instance::kIdle;
  }
};

class GepaPolicy : public SkySpotMultiPolicy {
 public:
  std::string_view Name() const override { return "adrs-multi-gepa"; }
  void Start(const DeadlineJob&, std::int64_t, int regions) override {
    seen_.assign(static_cast<std::size_t>(regions), Seen{});
    stay_until_ = -1;
    idle_streak_ = 0;
  }
  Instance Step(const SkySpotMultiState& s, SkySpotMultiEnv& env) override {
    const int here = env.region();
    Record(here, s.has_spot, s.elapsed_s);
    if (s.remaining_compute_s <= 0) return Instance::kIdle;
    const double now = static_cast<double>(s.elapsed_s);
    const double slack = static_cast<double>(s.job->deadline_s - s.elapsed_s) -
                         static_cast<double>(s.remaining_compute_s + s.changeover_left_s);
    const double oh = std::max(static_cast<double>(s.job->changeover_s), 1e-6);
    if (slack <= 0) {
      stay_until_ = std::max(stay_until_, now + oh);
      idle_streak_ = 0;
      return Instance::kOnDemand;
    }
    const bool stay_on_od = s.last == Instance::kOnDemand && now < stay_until_ && slack < 0.5 * oh;
    bool found = s.has_spot;
    if (!found) {
      for (int r : ProbeOrder(here, now)) {
        env.SwitchRegion(r);
        const bool q = env.SpotAvailable();
        Record(r, q, s.elapsed_s);
        if (q) {
          found = true;
          break;
        }
      }
      if (!found) env.SwitchRegion(here);
    }
    if (found) {
      if (stay_on_od) {
        env.SwitchRegion(here);
        return Instance::kOnDemand;
      }
      idle_streak_ = 0;
      return Instance::kSpot;
    }
    if (s.last == Instance::kOnDemand) return Instance::kOnDemand;
    if (slack > 2.0 * oh) {
      const auto max_idle = std::min<std::int64_t>(5, static_cast<std::int64_t>(slack / oh));
      if (idle_streak_ < max_idle) {
        ++idle_streak_;
        return Instance::kIdle;
      }
    }
    stay_until_ = std::max(stay_until_, now + 0.5 * oh);
    idle_streak_ = 0;
    return Instance::kOnDemand;
  }

 private:
  struct Seen {
    int state = -1;  // -1 never probed, 0 no spot, 1 spot
    double last = -1;
    int up = 0, down = 0;
  };
  void Record(int r, bool spot, std::int64_t at) {
    Seen& e = seen_[static_cast<std::size_t>(r)];
    e.state = spot ? 1 : 0;
    e.last = static_cast<double>(at);
    (spot ? e.up : e.down) += 1;
  }
  // Regions last seen with spot (most recently probed first), then never probed, then the rest by
  // share of probes with spot and time since the last probe, both descending; ties keep region order.
  std::vector<int> ProbeOrder(int here, double now) const {
    std::vector<int> with, unseen, rest;
    for (int r = 0; r < static_cast<int>(seen_.size()); ++r) {
      if (r == here) continue;
      const Seen& e = seen_[static_cast<std::size_t>(r)];
      if (e.state == 1) {
        with.push_back(r);
      } else if (e.last < 0) {
        unseen.push_back(r);
      } else {
        rest.push_back(r);
      }
    }
    const auto at = [&](int r) { return seen_[static_cast<std::size_t>(r)]; };
    std::stable_sort(with.begin(), with.end(), [&](int a, int b) { return at(a).last > at(b).last; });
    const auto share = [&](int r) {
      const Seen& e = at(r);
      return e.up + e.down > 0 ? static_cast<double>(e.up) / static_cast<double>(e.up + e.down) : 0.0;
    };
    std::stable_sort(rest.begin(), rest.end(), [&](int a, int b) {
      const double sa = share(a), sb = share(b);
      if (sa != sb) return sa > sb;
      return now - at(a).last > now - at(b).last;
    });
    with.insert(with.end(), unseen.begin(), unseen.end());
    with.insert(with.end(), rest.begin(), rest.end());
    return with;
  }
  std::vector<Seen> seen_;
  double stay_until_ = -1;
  std::int64_t idle_streak_ = 0;
};

// Seedance's multi-region policy under these rules: it reads every region now and in the past and
// points the job at the region of the spot instance it chooses.
class SeedanceAdapter : public SkySpotMultiPolicy {
 public:
  std::string_view Name() const override { return "seedance-multi-region"; }
  void Start(const DeadlineJob& job, std::int64_t gap_s, int regions) override {
    started_ = false;
    job_ = &job;
    gap_s_ = gap_s;
    regions_ = regions;
  }
  Instance Step(const SkySpotMultiState& s, SkySpotMultiEnv& env) override {
    const std::int64_t now = env.tick();
    if (!started_) {
      inner_.Start(*job_, gap_s_, now, regions_, 0);
      start_tick_ = now;
      started_ = true;
    }
    MultiObservation obs;
    obs.job = s.job;
    obs.gap_s = s.gap_s;
    obs.start_tick = start_tick_;
    obs.now_tick = now;
    obs.elapsed_s = s.elapsed_s;
    obs.remaining_compute_s = s.remaining_compute_s;
    obs.remaining_time_s = s.job->deadline_s - s.elapsed_s;
    const bool preempted = s.last == Instance::kSpot && !s.has_spot;
    obs.current = preempted ? Instance::kIdle : s.last;
    obs.changeover_left_s = preempted ? 0 : s.changeover_left_s;
    obs.previous = s.last;
    obs.previous_changeover_left_s = s.changeover_left_s;
    obs.spot_region = obs.current == Instance::kSpot ? env.region() : -1;
    const int here = env.region();
    for (int r = 0; r < env.regions(); ++r) {
      env.SwitchRegion(r);
      obs.spot_available.push_back(env.SpotAvailable());
      obs.past.push_back(env.Past(r));
      // In units of the job's spot price: k = on-demand / that price.
      if (env.SpotUsd(r) > 0) obs.spot_price.push_back(env.SpotUsd(r) * s.job->od_price / kSkySpotOdUsd);
    }
    if (static_cast<int>(obs.spot_price.size()) != env.regions()) obs.spot_price.clear();
    env.SwitchRegion(here);
    const MultiDecision d = inner_.Decide(obs);
    // The deadline guard on this simulator's tick grid: on-demand one tick before the strong
    // guarantee's line, so that no spot instance is held at that line (preempted there, the strong
    // guarantee would keep the job idle for a tick and it could miss).
    if (CeilTicks(s.remaining_compute_s + s.job->changeover_s, s.gap_s) + 1 >=
        (s.job->deadline_s - s.elapsed_s) / s.gap_s) {
      return Instance::kOnDemand;
    }
    if (d.instance == Instance::kSpot) env.SwitchRegion(d.region);
    return d.instance;
  }

 private:
  SeedanceMultiRegionPolicy inner_;
  const DeadlineJob* job_ = nullptr;
  std::int64_t gap_s_ = 1, start_tick_ = 0;
  int regions_ = 1;
  bool started_ = false;
};

}  // namespace

void SkySpotMultiEnv::SwitchRegion(int r) {
  SEEDANCE_CHECK(r >= 0 && r < regions()) << "region " << r;
  region_ = r;
}

bool SkySpotMultiEnv::SpotAvailable() const { return (*regions_)[static_cast<std::size_t>(region_)].At(tick_); }

double SkySpotMultiEnv::SpotUsd(int r) const {
  return spot_usd_ == nullptr ? 0.0 : (*spot_usd_)[static_cast<std::size_t>(r)];
}

PastView SkySpotMultiEnv::Past(int r) const { return PastView(&(*regions_)[static_cast<std::size_t>(r)], tick_); }

SkySpotMultiOutcome SimulateSkySpotMultiJob(const std::vector<SpotTrace>& regions,
                                            const std::vector<double>& spot_usd, std::int64_t start_tick,
                                            const DeadlineJob& job, SkySpotMultiPolicy& policy) {
  SEEDANCE_CHECK(!regions.empty() && spot_usd.size() == regions.size());
  const std::int64_t g = regions.front().gap_s;
  for (const SpotTrace& t : regions) SEEDANCE_CHECK(t.gap_s == g) << t.name << ": another tick length";
  policy.Start(job, g, static_cast<int>(regions.size()));
  SkySpotMultiEnv env(&regions, start_tick, &spot_usd);
  SkySpotMultiOutcome out;
  Instance held = Instance::kIdle;
  std::int64_t changeover_left = 0, done = 0;
  // The job cannot run past its deadline plus C(0) + d (a bound; the strong guarantee ends it sooner).
  const std::int64_t max_ticks = CeilTicks(job.deadline_s + job.compute_s + job.changeover_s, g) + 1;
  for (std::int64_t i = 0; i < max_ticks; ++i) {
    env.SetTick(start_tick + i);
    SkySpotMultiState s{&job, g, start_tick, i * g, 0, 0, held, env.SpotAvailable()};
    if (i > 0 && held != Instance::kIdle) {  // the last tick: billed whole, progress after changeover
      (held == Instance::kSpot ? out.spot_ticks : out.od_ticks) += 1;
      const std::int64_t served = std::min(changeover_left, g);
      changeover_left -= served;
      const std::int64_t progress = std::min(g - served, job.compute_s - done);
      done += progress;
      if (done >= job.compute_s) out.finish_s = (i - 1) * g + served + progress;
    }
    if (done >= job.compute_s) break;
    s.remaining_compute_s = job.compute_s - done;
    s.changeover_left_s = changeover_left;
    const Instance current = held == Instance::kSpot && !s.has_spot ? Instance::kIdle : held;
    Instance want = StrongGuarantee(s, policy.Step(s, env));
    if (want == Instance::kSpot && !env.SpotAvailable()) want = Instance::kIdle;
    if (want != current && want != Instance::kIdle) changeover_left = job.changeover_s;
    held = want;
  }
  out.end_region = env.region();
  out.met_deadline = out.finish_s >= 0 && out.finish_s <= job.deadline_s;
  const double h = static_cast<double>(g) / 3600.0;
  out.cost_usd = (static_cast<double>(out.spot_ticks) * spot_usd[static_cast<std::size_t>(out.end_region)] +
                  static_cast<double>(out.od_ticks) * kSkySpotOdUsd) * h;
  return out;
}

std::unique_ptr<SkySpotMultiPolicy> MakeSkySpotMultiPolicy(const std::string& name) {
  if (name == "adrs-multi-baseline") return std::make_unique<BaselinePolicy>();
  if (name == "adrs-multi-gepa") return std::make_unique<GepaPolicy>();
  if (name == "seedance-multi-region") return std::make_unique<SeedanceAdapter>();
  return nullptr;
}

const std::vector<std::string>& SkySpotMultiPolicyNames() {
  static const std::vector<std::string> kNames = {"adrs-multi-baseline", "adrs-multi-gepa", "seedance-multi-region"};
  return kNames;
}

}  // namespace seedance::sim::deadline
