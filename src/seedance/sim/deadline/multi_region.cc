#include "seedance/sim/deadline/multi_region.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <tuple>

#include "seedance/core/check.h"

namespace seedance::sim::deadline {

Observation MultiObservation::InRegion(int r) const {
  const auto u = static_cast<std::size_t>(r);
  Observation o;
  static_cast<JobView&>(o) = *this;
  o.spot_available = spot_available[u];
  o.past = past[u];
  return o;
}

MultiJobOutcome SimulateMultiRegionJob(const std::vector<SpotTrace>& regions, std::int64_t start_tick,
                                       const DeadlineJob& job, int home, MultiRegionPolicy& policy) {
  SEEDANCE_CHECK(!regions.empty());
  const std::int64_t g = regions.front().gap_s;
  for (const SpotTrace& t : regions) SEEDANCE_CHECK(t.gap_s == g) << t.name << ": another tick length";
  const int n = static_cast<int>(regions.size());
  MultiJobOutcome out;
  JobRun run(job, g);
  policy.Start(job, g, start_tick, n, home);
  int region = -1;       // of the running spot instance
  int last_spot = -1;    // region of the last spot launch
  MultiObservation obs;
  obs.spot_available.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; run.Running(i); ++i) {
    const std::int64_t tick = start_tick + i;
    obs.past.clear();
    for (int k = 0; k < n; ++k) {
      obs.spot_available[static_cast<std::size_t>(k)] = regions[static_cast<std::size_t>(k)].At(tick);
      obs.past.emplace_back(&regions[static_cast<std::size_t>(k)], tick);
    }
    if (run.held() == Instance::kSpot && !obs.spot_available[static_cast<std::size_t>(region)]) {
      run.Preempt();
      region = -1;
    }
    run.Observe(obs, start_tick, i);
    obs.spot_region = region;
    MultiDecision want = policy.Decide(obs);
    out.decisions.push_back(want);
    run.outcome().decisions.push_back(want.instance);
    if (want.instance == Instance::kSpot &&
        (want.region < 0 || want.region >= n || !obs.spot_available[static_cast<std::size_t>(want.region)])) {
      ++run.outcome().invalid_requests;
      want.instance = Instance::kIdle;
    }
    const bool moves = want.instance == Instance::kSpot && run.held() == Instance::kSpot && want.region != region;
    if (want.instance != run.held() || moves) {
      region = -1;
      if (want.instance == Instance::kSpot) {
        if (last_spot >= 0 && want.region != last_spot) ++out.region_moves;
        last_spot = region = want.region;
      }
    }
    run.Hold(want.instance, moves, i);
  }
  out.job = run.Finish();
  return out;
}

void PinnedRegionPolicy::Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick, int /*regions*/,
                               int home) {
  home_ = home;
  inner_->Start(job, gap_s, start_tick);
}

MultiDecision PinnedRegionPolicy::Decide(const MultiObservation& obs) {
  return {inner_->Decide(obs.InRegion(home_)), home_};
}

void MultiRegionUniformProgress::Start(const DeadlineJob& job, std::int64_t gap_s, std::int64_t start_tick,
                                       int regions, int home) {
  regions_ = regions;
  pointer_ = home;
  up_.Start(job, gap_s, start_tick);
}

MultiDecision MultiRegionUniformProgress::Decide(const MultiObservation& obs) {
  if (obs.current == Instance::kSpot) pointer_ = obs.spot_region;
  if (mode_ == Mode::kRoundRobin) {
    const Observation o = obs.InRegion(pointer_);
    const Instance i = up_.Decide(o);
    const int here = pointer_;
    // Not on spot and no spot where it looks (a preemption included): look at the next region.
    if (i != Instance::kSpot && !o.spot_available) pointer_ = (pointer_ + 1) % regions_;
    return {i, here};
  }
  int first = -1;
  if (obs.current == Instance::kSpot) {
    first = obs.spot_region;
  } else {
    for (int k = 0; k < regions_ && first < 0; ++k) {
      if (obs.spot_available[static_cast<std::size_t>(k)]) first = k;
    }
  }
  const int at = first >= 0 ? first : pointer_;
  return {up_.Decide(obs.InRegion(at)), at};
}

void SeedanceMultiRegionPolicy::Start(const DeadlineJob& /*job*/, std::int64_t gap_s, std::int64_t /*start_tick*/,
                                      int regions, int /*home*/) {
  history_.assign(static_cast<std::size_t>(regions),
                  SpotRunHistory(std::max<std::int64_t>(1, config_.window_s / gap_s)));
  committed_ = false;
}

double SeedanceMultiRegionPolicy::RegionBenefit(const MultiObservation& obs, int r, bool from_on_demand) const {
  // The region's benefit at its own spot price, in units of the job's spot price.
  const double price = obs.spot_price.empty() ? 1.0 : obs.spot_price[static_cast<std::size_t>(r)];
  DeadlineJob at_price = *obs.job;
  at_price.od_price = obs.job->od_price / price;
  Observation o = obs.InRegion(r);
  o.job = &at_price;
  double b = 0;
  if (!ExpectedSpotBenefit(history_[static_cast<std::size_t>(r)], o, from_on_demand, config_.min_runs, &b)) {
    return std::numeric_limits<double>::infinity();  // too little history: worth taking (spot-first)
  }
  return b * price;
}

MultiDecision SeedanceMultiRegionPolicy::Decide(const MultiObservation& obs) {
  for (std::size_t k = 0; k < history_.size(); ++k) history_[k].AdvanceTo(obs.past[k]);
  SEEDANCE_CHECK(obs.spot_price.empty() || obs.spot_price.size() == history_.size()) << "one spot price per region";
  if (committed_) return {Instance::kOnDemand, 0};
  if (obs.current == Instance::kSpot) return {Instance::kSpot, obs.spot_region};  // Exploitation
  int best = -1;
  double best_benefit = 0, best_price = 0;
  for (std::size_t k = 0; k < history_.size(); ++k) {
    if (!obs.spot_available[k]) continue;
    const double price = obs.spot_price.empty() ? 1.0 : obs.spot_price[k];
    const double b = RegionBenefit(obs, static_cast<int>(k), obs.current == Instance::kOnDemand);
    if (b > best_benefit || (best >= 0 && b == best_benefit && price < best_price)) {
      best_benefit = b;
      best_price = price;
      best = static_cast<int>(k);
    }
  }
  const Observation o = obs.InRegion(best >= 0 ? best : 0);
  const Instance choice =
      best >= 0 ? Instance::kSpot
                : UniformProgressWithoutSpot(
                      o, std::llround(config_.on_demand_hold_changeovers * static_cast<double>(obs.job->changeover_s)));
  if (SafetyNetCommits(o, choice)) {
    committed_ = true;
    return {Instance::kOnDemand, 0};
  }
  return {choice, best >= 0 ? best : 0};
}

// ---- The omniscient reference ----------------------------------------------------------------

namespace {

struct Label {
  Instance held = Instance::kIdle;
  std::int32_t region = 0;  // spot only; 0 otherwise (one group for idle and for on-demand)
  std::int64_t changeover_left = 0;
  std::int64_t progress = 0;
  double cost = 0;
  std::int32_t parent = -1;
  MultiDecision choice;
};

// Keeps, per (held, region, changeover_left), the labels on the progress/cost Pareto front (more
// progress at no more cost can follow the same schedule and finish no later, and billing is per
// second, so it is never dearer), and drops idle labels that a busy label matches in progress at
// no more cost (that job can go idle for free at the next boundary).
void KeepFront(std::vector<Label>& v) {
  std::sort(v.begin(), v.end(), [](const Label& a, const Label& b) {
    return std::tie(a.held, a.region, a.changeover_left, b.progress, a.cost, a.parent) <
           std::tie(b.held, b.region, b.changeover_left, a.progress, b.cost, b.parent);
  });
  std::size_t out = 0;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i == 0 || v[i].held != v[i - 1].held || v[i].region != v[i - 1].region ||
        v[i].changeover_left != v[i - 1].changeover_left) {
      best = std::numeric_limits<double>::infinity();
    }
    if (v[i].cost < best) {
      best = v[i].cost;
      v[out++] = v[i];
    }
  }
  v.resize(out);
  std::vector<std::pair<std::int64_t, double>> busy;
  for (const Label& l : v) {
    if (l.held != Instance::kIdle) busy.emplace_back(l.progress, l.cost);
  }
  if (busy.empty()) return;
  std::sort(busy.begin(), busy.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 1; i < busy.size(); ++i) busy[i].second = std::min(busy[i].second, busy[i - 1].second);
  std::erase_if(v, [&](const Label& l) {
    if (l.held != Instance::kIdle) return false;
    auto it = std::partition_point(busy.begin(), busy.end(), [&](const auto& b) { return b.first >= l.progress; });
    return it != busy.begin() && std::prev(it)->second <= l.cost;
  });
}

}  // namespace

MultiOmniscientPlan PlanMultiRegionOmniscient(const std::vector<SpotTrace>& regions, std::int64_t start_tick,
                                              const DeadlineJob& job, double upper_bound) {
  return PlanOmniscientAcross(regions, start_tick, job, upper_bound, MoveOrder::kOnDemandFirst);
}

MultiOmniscientPlan PlanOmniscientAcross(std::span<const SpotTrace> regions, std::int64_t start_tick,
                                         const DeadlineJob& job, double upper_bound, MoveOrder order) {
  SEEDANCE_CHECK(!regions.empty() && regions.front().gap_s > 0 && job.od_price >= 1);
  MultiOmniscientPlan plan;
  const std::int64_t g = regions.front().gap_s;
  const std::int64_t c0 = job.compute_s;
  const std::int64_t d = job.changeover_s;
  const std::int64_t ticks = (job.deadline_s + g - 1) / g;
  const auto n = static_cast<std::size_t>(ticks + 2);
  const std::size_t nr = regions.size();
  // run_left[r][i]: ticks of spot left in region r's run from tick i; any_left: the same for "some
  // region has spot"; usable_from: spot progress the union runs from i on can carry (each less d).
  std::vector<std::vector<std::int64_t>> run_left(nr, std::vector<std::int64_t>(n, 0));
  std::vector<std::int64_t> any_left(n, 0), usable_from(n, 0);
  for (std::int64_t i = ticks - 1; i >= 0; --i) {
    const auto u = static_cast<std::size_t>(i);
    bool any = false;
    for (std::size_t r = 0; r < nr; ++r) {
      if (regions[r].At(start_tick + i)) {
        run_left[r][u] = run_left[r][u + 1] + 1;
        any = true;
      }
    }
    if (!any) {
      usable_from[u] = usable_from[u + 1];
      continue;
    }
    any_left[u] = any_left[u + 1] + 1;
    usable_from[u] = std::max<std::int64_t>(0, any_left[u] * g - d) + usable_from[u + static_cast<std::size_t>(any_left[u])];
  }
  // Branch and bound. What is left to pay is at least: the rest of the work at the spot price as
  // far as the spot runs still to come (of some region) can carry it (each run less one
  // changeover, or less what is left of the changeover for a job already on that run), on-demand
  // beyond that, plus one more changeover for an idle job. A label whose cost plus that bound
  // exceeds the cost of a known schedule cannot lead to the optimum.
  const double bound = upper_bound * (1 + 1e-12) + 1e-6;
  auto lower = [&](const Label& l, std::int64_t next_tick) {
    const auto j = static_cast<std::size_t>(next_tick);
    const std::int64_t left = c0 - l.progress;
    const std::int64_t launch = l.held == Instance::kIdle ? d : l.changeover_left;
    const std::int64_t here = l.held == Instance::kSpot ? l.changeover_left : d;
    const std::int64_t cap = any_left[j] > 0
        ? std::max<std::int64_t>(0, any_left[j] * g - here) + usable_from[j + static_cast<std::size_t>(any_left[j])]
        : usable_from[j];
    const std::int64_t spot = std::min(left, cap);
    return static_cast<double>(spot + launch) + job.od_price * static_cast<double>(left - spot);
  };
  std::vector<std::vector<Label>> layers;
  layers.push_back({Label{}});
  double best = std::numeric_limits<double>::infinity();
  std::int64_t best_tick = -1;
  std::int32_t best_parent = -1;
  MultiDecision best_choice;
  std::vector<MultiDecision> choices;
  for (std::int64_t i = 0; i < ticks && !layers.back().empty(); ++i) {
    const std::vector<Label>& cur = layers.back();
    plan.max_labels = std::max(plan.max_labels, cur.size());
    const auto u = static_cast<std::size_t>(i);
    choices.assign({{Instance::kIdle, 0}});
    if (order == MoveOrder::kOnDemandFirst) choices.push_back({Instance::kOnDemand, 0});
    for (std::size_t r = 0; r < nr; ++r) {
      if (run_left[r][u] > 0) choices.push_back({Instance::kSpot, static_cast<int>(r)});
    }
    if (order == MoveOrder::kSpotFirst) choices.push_back({Instance::kOnDemand, 0});
    std::vector<Label> next;
    for (std::size_t li = 0; li < cur.size(); ++li) {
      Label from = cur[li];
      if (from.held == Instance::kSpot && run_left[static_cast<std::size_t>(from.region)][u] == 0) {
        from.held = Instance::kIdle;  // preempted at this boundary
        from.region = 0;
        from.changeover_left = 0;
      }
      for (const MultiDecision& c : choices) {
        const bool same = c.instance == from.held && (c.instance != Instance::kSpot || c.region == from.region);
        // Dominated moves, skipped: leaving an instance before its changeover is served (idling
        // costs nothing and gives the same progress), and launching spot into a run too short to
        // make progress.
        if (!same && from.held != Instance::kIdle && from.changeover_left > 0) continue;
        if (c.instance == Instance::kSpot && !same &&
            run_left[static_cast<std::size_t>(c.region)][u] * g <= d) {
          continue;
        }
        const std::int64_t co = same ? from.changeover_left : (c.instance == Instance::kIdle ? 0 : d);
        const TickStep s = StepTick(c.instance, co, c0 - from.progress, g, job.whole_tick_billing);
        Label to;
        to.held = c.instance;
        to.region = c.instance == Instance::kSpot ? c.region : 0;
        to.changeover_left = s.changeover_left_s;
        to.progress = from.progress + s.progress_s;
        to.cost = from.cost + static_cast<double>(s.billed_s) * (c.instance == Instance::kOnDemand ? job.od_price : 1.0);
        to.parent = static_cast<std::int32_t>(li);
        to.choice = c;
        if (to.progress == c0) {
          if (i * g + s.used_s <= job.deadline_s && to.cost < best) {
            best = to.cost;
            best_tick = i;
            best_parent = to.parent;
            best_choice = c;
          }
          continue;
        }
        const std::int64_t time_left = job.deadline_s - (i + 1) * g;
        const bool needs_launch =
            c.instance == Instance::kIdle ||
            (c.instance == Instance::kSpot && run_left[static_cast<std::size_t>(c.region)][u + 1] == 0);
        const std::int64_t need = (c0 - to.progress) + (needs_launch ? d : to.changeover_left);
        if (time_left < need) continue;
        if (to.cost + lower(to, i + 1) > bound) continue;
        next.push_back(to);
      }
    }
    KeepFront(next);
    layers.push_back(std::move(next));
  }
  if (best_tick < 0) return plan;
  plan.feasible = true;
  plan.cost = best;
  plan.decisions.assign(static_cast<std::size_t>(best_tick + 1), MultiDecision{});
  plan.decisions[static_cast<std::size_t>(best_tick)] = best_choice;
  std::int32_t idx = best_parent;
  for (std::int64_t i = best_tick; i > 0; --i) {
    const Label& l = layers[static_cast<std::size_t>(i)][static_cast<std::size_t>(idx)];
    plan.decisions[static_cast<std::size_t>(i - 1)] = l.choice;
    idx = l.parent;
  }
  return plan;
}

void MultiRegionOmniscientPolicy::Start(const DeadlineJob& job, std::int64_t /*gap_s*/, std::int64_t start_tick,
                                        int /*regions*/, int home) {
  // Bound for branch and bound: the cheapest online schedule that meets the deadline.
  double best = std::numeric_limits<double>::infinity();
  for (const std::string& name : MultiRegionPolicyNames()) {
    if (name == Name()) continue;
    auto p = MakeMultiRegionPolicy(name, regions_);
    SEEDANCE_CHECK(p.has_value());
    const MultiJobOutcome r = SimulateMultiRegionJob(*regions_, start_tick, job, home, **p);
    if (r.job.met_deadline) best = std::min(best, r.job.cost);
  }
  plan_ = PlanMultiRegionOmniscient(*regions_, start_tick, job, best);
}

MultiDecision MultiRegionOmniscientPolicy::Decide(const MultiObservation& obs) {
  if (!plan_.feasible) return {Instance::kOnDemand, 0};
  const auto i = static_cast<std::size_t>(obs.elapsed_s / obs.gap_s);
  return i < plan_.decisions.size() ? plan_.decisions[i] : MultiDecision{};
}

const std::vector<std::string>& MultiRegionPolicyNames() {
  // Uniform progress pinned to the home region is the paper's spot-first reading, the one that round
  // robin and any-region extend (issue 29; the authors' single-region rules are issue 41's).
  static const std::vector<std::string> kNames = {"on-demand",
                                                  "uniform-progress-spot-first",
                                                  "seedance",
                                                  "uniform-progress-round-robin",
                                                  "uniform-progress-any-region",
                                                  "seedance-multi-region",
                                                  "omniscient-multi-region"};
  return kNames;
}

Result<std::unique_ptr<MultiRegionPolicy>> MakeMultiRegionPolicy(const std::string& name,
                                                                 const std::vector<SpotTrace>* regions) {
  using P = std::unique_ptr<MultiRegionPolicy>;
  if (name == "uniform-progress-round-robin") {
    return P(new MultiRegionUniformProgress(MultiRegionUniformProgress::Mode::kRoundRobin));
  }
  if (name == "uniform-progress-any-region") {
    return P(new MultiRegionUniformProgress(MultiRegionUniformProgress::Mode::kFirstAvailable));
  }
  if (name == "seedance-multi-region") return P(new SeedanceMultiRegionPolicy());
  if (name == "omniscient-multi-region") return P(new MultiRegionOmniscientPolicy(regions));
  auto single = MakeOnlinePolicy(name);
  if (!single.has_value()) return InvalidArgumentError("unknown multi-region deadline policy '" + name + "'");
  return P(new PinnedRegionPolicy(std::move(*single)));
}

}  // namespace seedance::sim::deadline
