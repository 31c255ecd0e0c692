#include "seedance/sim/deadline/omniscient.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <tuple>

#include "seedance/core/check.h"
#include "seedance/sim/deadline/policies.h"

namespace seedance::sim::deadline {
namespace {

struct Label {
  Instance held = Instance::kIdle;
  std::int64_t changeover_left = 0;
  std::int64_t progress = 0;
  double cost = 0;
  std::int32_t parent = -1;   // index in the previous tick's labels
  Instance choice = Instance::kIdle;  // decision taken at the previous tick
};

// Keeps, per (held, changeover_left), the labels on the progress/cost Pareto front.
void KeepFront(std::vector<Label>& v) {
  std::sort(v.begin(), v.end(), [](const Label& a, const Label& b) {
    return std::tie(a.held, a.changeover_left, b.progress, a.cost, a.parent, a.choice) <
           std::tie(b.held, b.changeover_left, a.progress, b.cost, b.parent, b.choice);
  });
  std::size_t out = 0;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i == 0 || v[i].held != v[i - 1].held || v[i].changeover_left != v[i - 1].changeover_left) {
      best = std::numeric_limits<double>::infinity();
    }
    if (v[i].cost < best) {
      best = v[i].cost;
      v[out++] = v[i];
    }
  }
  v.resize(out);
  // An idle label is also beaten by any label with as much progress at no more cost: that job can
  // go idle for free at the next boundary.
  std::vector<std::pair<std::int64_t, double>> busy;  // (progress, cost), progress descending
  for (const Label& l : v) {
    if (l.held != Instance::kIdle) busy.emplace_back(l.progress, l.cost);
  }
  if (busy.empty()) return;
  std::sort(busy.begin(), busy.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 1; i < busy.size(); ++i) busy[i].second = std::min(busy[i].second, busy[i - 1].second);
  std::erase_if(v, [&](const Label& l) {
    if (l.held != Instance::kIdle) return false;
    // Last busy label with progress >= l.progress: the cheapest among them is its prefix minimum.
    auto it = std::partition_point(busy.begin(), busy.end(), [&](const auto& b) { return b.first >= l.progress; });
    return it != busy.begin() && std::prev(it)->second <= l.cost;
  });
}

}  // namespace

OmniscientPlan PlanOmniscient(const SpotTrace& trace, std::int64_t start_tick, const DeadlineJob& job,
                              double upper_bound) {
  SEEDANCE_CHECK(trace.gap_s > 0 && job.od_price >= 1);
  OmniscientPlan plan;
  const std::int64_t g = trace.gap_s;
  const std::int64_t c0 = job.compute_s;
  const std::int64_t d = job.changeover_s;
  const std::int64_t ticks = (job.deadline_s + g - 1) / g;
  // Branch and bound. What is left to pay is at least: the rest of the work at the spot price as
  // far as the spot runs still to come can carry it (each run less one changeover, or less what is
  // left of the changeover for a job already on that run), on-demand beyond that, plus one more
  // changeover for an idle job. A label whose cost plus that bound exceeds the cost of a known
  // schedule cannot lead to the optimum.
  const auto n = static_cast<std::size_t>(ticks + 2);
  std::vector<std::int64_t> run_left(n, 0), usable_from(n, 0);
  for (std::int64_t i = ticks - 1; i >= 0; --i) {
    const auto u = static_cast<std::size_t>(i);
    if (!trace.At(start_tick + i)) {
      usable_from[u] = usable_from[u + 1];
      continue;
    }
    run_left[u] = run_left[u + 1] + 1;
    usable_from[u] = std::max<std::int64_t>(0, run_left[u] * g - d) + usable_from[u + static_cast<std::size_t>(run_left[u])];
  }
  const double bound = upper_bound * (1 + 1e-12) + 1e-6;
  auto lower = [&](const Label& l, std::int64_t next_tick) {
    const auto j = static_cast<std::size_t>(next_tick);
    const std::int64_t left = c0 - l.progress;
    const std::int64_t launch = l.held == Instance::kIdle ? d : l.changeover_left;
    const std::int64_t here = l.held == Instance::kSpot ? l.changeover_left : d;
    const std::int64_t cap = run_left[j] > 0
        ? std::max<std::int64_t>(0, run_left[j] * g - here) + usable_from[j + static_cast<std::size_t>(run_left[j])]
        : usable_from[j];
    const std::int64_t spot = std::min(left, cap);
    return static_cast<double>(spot + launch) + job.od_price * static_cast<double>(left - spot);
  };
  std::vector<std::vector<Label>> layers;
  layers.push_back({Label{}});
  double best = std::numeric_limits<double>::infinity();
  std::int64_t best_tick = -1;
  std::int32_t best_parent = -1;
  Instance best_choice = Instance::kIdle;
  const Instance kChoices[] = {Instance::kIdle, Instance::kSpot, Instance::kOnDemand};
  for (std::int64_t i = 0; i < ticks && !layers.back().empty(); ++i) {
    const std::vector<Label>& cur = layers.back();
    plan.max_labels = std::max(plan.max_labels, cur.size());
    const bool avail = trace.At(start_tick + i);
    const bool avail_next = trace.At(start_tick + i + 1);
    std::vector<Label> next;
    for (std::size_t li = 0; li < cur.size(); ++li) {
      Label from = cur[li];
      if (from.held == Instance::kSpot && !avail) {  // preempted at this boundary
        from.held = Instance::kIdle;
        from.changeover_left = 0;
      }
      for (Instance c : kChoices) {
        if (c == Instance::kSpot && !avail) continue;
        // Dominated moves, skipped: leaving an instance before its changeover is served (idling
        // instead costs nothing and gives the same progress), and launching spot into a run too
        // short to make progress.
        if (c != from.held && from.held != Instance::kIdle && from.changeover_left > 0) continue;
        if (c == Instance::kSpot && from.held != Instance::kSpot && run_left[static_cast<std::size_t>(i)] * g <= d) continue;
        const std::int64_t co = c == from.held ? from.changeover_left : (c == Instance::kIdle ? 0 : d);
        const TickStep s = StepTick(c, co, c0 - from.progress, g);
        Label to;
        to.held = c;
        to.changeover_left = s.changeover_left_s;
        to.progress = from.progress + s.progress_s;
        to.cost = from.cost + static_cast<double>(s.billed_s) * (c == Instance::kOnDemand ? job.od_price : 1.0);
        to.parent = static_cast<std::int32_t>(li);
        to.choice = c;
        if (to.progress == c0) {
          if (i * g + s.billed_s <= job.deadline_s && to.cost < best) {
            best = to.cost;
            best_tick = i;
            best_parent = to.parent;
            best_choice = c;
          }
          continue;
        }
        // Drop labels that can no longer meet the deadline whatever comes next.
        const std::int64_t time_left = job.deadline_s - (i + 1) * g;
        const bool needs_launch = c == Instance::kIdle || (c == Instance::kSpot && !avail_next);
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
  plan.decisions.assign(static_cast<std::size_t>(best_tick + 1), Instance::kIdle);
  plan.decisions[static_cast<std::size_t>(best_tick)] = best_choice;
  std::int32_t idx = best_parent;
  for (std::int64_t i = best_tick; i > 0; --i) {
    const Label& l = layers[static_cast<std::size_t>(i)][static_cast<std::size_t>(idx)];
    plan.decisions[static_cast<std::size_t>(i - 1)] = l.choice;
    idx = l.parent;
  }
  return plan;
}

void OmniscientPolicy::Start(const DeadlineJob& job, std::int64_t /*gap_s*/, std::int64_t start_tick) {
  // The bound for branch and bound: the cheapest of the online policies' schedules that meet the
  // deadline (they are feasible schedules; the plan is never worse than them).
  double best = std::numeric_limits<double>::infinity();
  for (const char* name : {"uniform-progress", "seedance", "greedy", "on-demand"}) {
    auto p = MakeOnlinePolicy(name);
    SEEDANCE_CHECK(p.has_value());
    const JobOutcome r = SimulateJob(*trace_, start_tick, job, **p);
    if (r.met_deadline) best = std::min(best, r.cost);
  }
  plan_ = PlanOmniscient(*trace_, start_tick, job, best);
}

Instance OmniscientPolicy::Decide(const Observation& obs) {
  if (!plan_.feasible) return Instance::kOnDemand;
  const auto i = static_cast<std::size_t>(obs.elapsed_s / obs.gap_s);
  return i < plan_.decisions.size() ? plan_.decisions[i] : Instance::kIdle;
}

}  // namespace seedance::sim::deadline
