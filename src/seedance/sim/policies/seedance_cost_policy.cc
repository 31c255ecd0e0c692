#include "seedance/sim/policies/seedance_cost_policy.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace seedance::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double BestThroughput(const JobInfo& s) {
  return *std::max_element(s.steps_per_s.begin(), s.steps_per_s.end());
}

// On-demand pool of the same GPU type (what spot falls back to and is priced against), else
// another non-spot pool of that type (an owned-only fleet), or -1.
int OnDemandTwin(const SimView& view, int type) {
  int other = -1;
  for (std::size_t p = 0; p < view.pools.size(); ++p) {
    const PoolInfo& s = view.pools[p].info;
    if (s.type != type || s.tier == Tier::kSpot) continue;
    if (s.tier == Tier::kOnDemand) return static_cast<int>(p);
    if (other < 0) other = static_cast<int>(p);
  }
  return other;
}

// Spot price inflated by the expected overhead (S3.2 "expected cost including interruption
// risk"): checkpoints (C / tau) and, per interruption, the work lost (tau / 2 + restart) plus the
// replacement GPU: its host's cold-start idle cost (S3.4) and the billed time before it runs a
// job (cold start, then half a round on average), at the on-demand price it falls back to.
double EffectiveSpotPrice(const PoolInfo& ps, const FleetInfo& fleet, double mtbf, double fallback_usd_per_gpu_hour,
                          double round_s, double expected_s, double short_job_s) {
  double price = ps.usd_per_gpu_hour;
  if (std::isfinite(mtbf) && expected_s >= short_job_s) {
    double tau = std::sqrt(2.0 * std::max(1.0, fleet.checkpoint_cost_s) * mtbf);
    double per_interruption_usd = (tau / 2 + fleet.restart_s) * price / 3600.0 +
                                  fleet.ColdStartIdleUsd(fleet.cold_start_s) +
                                  (fleet.cold_start_s + round_s / 2) * fallback_usd_per_gpu_hour / 3600.0;
    price = price * (1.0 + fleet.checkpoint_cost_s / tau) + per_interruption_usd * 3600.0 / mtbf;
  }
  return price;
}

double OnDemandPrice(const SimView& view, int type) {
  int twin = OnDemandTwin(view, type);
  return twin >= 0 ? view.pools[static_cast<std::size_t>(twin)].info.usd_per_gpu_hour : kInf;
}

// S3.1 max_price_ratio: spot is used only while its price <= ratio x on-demand of the same type.
bool SpotPriceAllowed(const SimView& view, const PoolInfo& spot, double max_price_ratio) {
  return spot.usd_per_gpu_hour <= max_price_ratio * OnDemandPrice(view, spot.type);
}

}  // namespace

double SeedanceCostPolicy::SpotMtbf(const SimView& view, std::size_t p) const {
  if (oracle_) return oracle_view_.spot_mtbf_s[p];
  const SpotHistory& h = view.pools[p].spot;
  if (!h.tracked) return kInf;
  return (h.observed_s + config_.spot_mtbf_prior_s) / (h.drops + 1.0);
}

double SeedanceCostPolicy::Remaining(const SimView& view, std::size_t index) const {
  if (oracle_) return oracle_view_.remaining_steps[index];
  const JobView& jv = view.jobs[index];
  return estimator_.EstimateRemaining(jv.info, jv.attained_steps).remaining_steps;
}

double SeedanceCostPolicy::EffectivePrice(const SimView& view, std::size_t p, double expected_s) const {
  const PoolInfo& ps = view.pools[p].info;
  double od = OnDemandPrice(view, ps.type);
  if (!std::isfinite(od)) od = ps.usd_per_gpu_hour;
  return EffectiveSpotPrice(ps, view.fleet, SpotMtbf(view, p), od, view.round_s, expected_s, config_.short_job_s);
}

double SeedanceCostPolicy::CheckpointInterval(const JobView& /*job*/, const SimView& view) const {
  // Young/Daly: tau = sqrt(2 C M). M from the worst spot pool of the fleet.
  double mtbf = kInf;
  for (std::size_t p = 0; p < view.pools.size(); ++p) {
    if (view.pools[p].info.tier == Tier::kSpot) mtbf = std::min(mtbf, SpotMtbf(view, p));
  }
  if (!std::isfinite(mtbf)) return kInf;
  return std::sqrt(2.0 * std::max(1.0, view.fleet.checkpoint_cost_s) * mtbf);
}

void SeedanceCostPolicy::OnCompletion(const JobInfo& job, double total_steps, double /*now*/) {
  estimator_.Observe(job, total_steps);
  pinned_on_demand_.erase(job.id);
  placed_at_.erase(job.id);
}

// Dollars per step of job `s` on pool `p`, spot at its expected price, plus the job's time value.
double SeedanceCostPolicy::Score(const SimView& view, std::size_t p, const JobInfo& s, double remaining) const {
  const PoolInfo& ps = view.pools[p].info;
  double thr = s.steps_per_s[static_cast<std::size_t>(ps.type)];
  if (thr <= 0) return kInf;
  double price = ps.usd_per_gpu_hour;
  if (ps.tier == Tier::kSpot) price = EffectivePrice(view, p, remaining / thr);
  return (price * s.gpus + config_.time_value_per_hour) / thr;
}

// A better pool for running job `jv` (on `cur_p`) with room in `left`, or -1: on-demand -> spot, or
// a type that fits the job better, when the rest of the job saves at least twice what the move
// costs (a restart and a cold start on the new pool, at its price plus the job's time value).
int SeedanceCostPolicy::BestMove(const SimView& view, const JobView& jv, std::size_t cur_p, double remaining,
                                 const std::vector<int>& left) const {
  const FleetInfo& fleet = view.fleet;
  const JobInfo& s = jv.info;
  const double now = view.now;
  const double best = BestThroughput(s);
  auto placed = placed_at_.find(s.id);
  if (!config_.enabled || s.priority == JobPriority::kCritical || pinned_on_demand_.count(s.id) ||
      (placed != placed_at_.end() && now - placed->second < config_.warmup_window_s) ||
      remaining / best <= config_.migrate_min_restarts * std::max(fleet.restart_s, 60.0)) {
    return -1;
  }
  // Hysteresis: no move back to spot for a while after an interruption.
  const bool cooling = jv.interrupted_at_s >= 0 && now - jv.interrupted_at_s < config_.spot_return_cooldown_s;
  const double cur_score = Score(view, cur_p, s, remaining);
  int move_to = -1;
  double best_score = cur_score;
  for (std::size_t p = 0; p < view.pools.size(); ++p) {
    if (p == cur_p || left[p] < s.gpus) continue;
    const PoolInfo& ps = view.pools[p].info;
    double thr = s.steps_per_s[static_cast<std::size_t>(ps.type)];
    if (thr <= 0 || (thr < config_.min_speed_ratio * best && !std::isfinite(s.deadline_s))) continue;
    if (ps.tier == Tier::kSpot && (cooling || !SpotPriceAllowed(view, ps, config_.max_price_ratio))) continue;
    if (std::isfinite(s.deadline_s) && now + remaining / thr + fleet.restart_s > s.deadline_s) continue;
    double score = Score(view, p, s, remaining);
    double move_s = fleet.cold_start_s + fleet.restart_s;
    double move_usd = s.gpus * fleet.ColdStartIdleUsd(fleet.cold_start_s) +
                      move_s / 3600.0 * (ps.usd_per_gpu_hour * s.gpus + config_.time_value_per_hour);
    if ((cur_score - score) * remaining > 2 * move_usd && score < best_score) {
      best_score = score;
      move_to = static_cast<int>(p);
    }
  }
  return move_to;
}

std::vector<Assignment> SeedanceCostPolicy::Schedule(const SimView& view, Rng& /*rng*/) {
  const FleetInfo& fleet = view.fleet;
  const double now = view.now;
  struct Cand {
    const JobView* job;
    double key;
    bool urgent;
    double remaining;  // expected remaining steps
  };
  std::vector<Cand> order;
  for (std::size_t i = 0; i < view.jobs.size(); ++i) {
    const JobView& jv = view.jobs[i];
    const JobInfo& s = jv.info;
    const double remaining = Remaining(view, i);
    double best = BestThroughput(s);
    double remaining_s = remaining / best;
    bool urgent = false;
    if (std::isfinite(s.deadline_s)) {
      double slack = s.deadline_s - now - remaining_s - fleet.restart_s - view.round_s;
      if (slack < config_.deadline_margin_s) {
        urgent = true;
        if (config_.enabled) pinned_on_demand_[s.id] = true;
      }
    }
    // Shortest remaining first, aged by waiting time so long jobs are not starved.
    double wait = std::max(0.0, now - s.arrival_s);
    double key = remaining_s / (1.0 + wait / std::max(remaining_s, 3600.0));
    if (jv.pool >= 0) key *= 0.5;  // running jobs keep their place
    order.push_back(Cand{&jv, key, urgent || s.priority == JobPriority::kCritical, remaining});
  }
  std::sort(order.begin(), order.end(), [](const Cand& a, const Cand& b) {
    if (a.urgent != b.urgent) return a.urgent;
    if (a.key != b.key) return a.key < b.key;
    return a.job->info.id < b.job->info.id;
  });

  std::vector<int> left(view.pools.size());
  for (std::size_t p = 0; p < view.pools.size(); ++p) left[p] = view.pools[p].capacity;
  std::vector<Assignment> out;
  struct Movable {
    const Cand* cand;
    std::size_t out;  // its assignment in `out`
  };
  std::vector<Movable> movable;  // migrate_after_queue: running jobs that may move once the queue is placed
  for (const auto& c : order) {
    const JobView& jv = *c.job;
    const JobInfo& s = jv.info;
    const double remaining = c.remaining;
    const double best = BestThroughput(s);
    // Keep a job where it is during warm-up, and in general unless it must move.
    int keep = -1;
    if (jv.pool >= 0) {
      auto p = static_cast<std::size_t>(jv.pool);
      bool spot_ok = view.pools[p].info.tier != Tier::kSpot ||
                     (!pinned_on_demand_.count(s.id) && view.pools[p].capacity >= s.gpus);
      if (spot_ok && left[p] >= s.gpus) keep = jv.pool;
    }
    if (keep >= 0 && !config_.migrate_after_queue) {
      const int move_to = BestMove(view, jv, static_cast<std::size_t>(keep), remaining, left);
      if (move_to >= 0) keep = move_to;
    }
    if (keep >= 0 && config_.migrate_after_queue) movable.push_back({&c, out.size()});
    int choice = keep;
    // max_step_price_ratio: the dearest step accepted, relative to the cheapest on-demand step of
    // an acceptable type whether or not it has room now (dearer: queue for it instead). Only
    // on-demand pools that can ever hold the job set it: owned and reserved GPUs (marginal price
    // 0) would make every on-demand step "too dear", and a job wider than them would queue forever.
    double max_score = kInf;
    if (config_.enabled && config_.max_step_price_ratio > 0 && !std::isfinite(s.deadline_s)) {
      for (std::size_t p = 0; p < view.pools.size(); ++p) {
        const PoolInfo& ps = view.pools[p].info;
        const double thr = s.steps_per_s[static_cast<std::size_t>(ps.type)];
        if (ps.tier != Tier::kOnDemand || ps.max_gpus < s.gpus || thr <= 0 || thr < config_.min_speed_ratio * best) {
          continue;
        }
        max_score = std::min(max_score, config_.max_step_price_ratio * Score(view, p, s, remaining));
      }
    }
    const int passes = jv.ever_ran ? 1 : 2;  // a paused job waits for a fit type
    for (int pass = 0; pass < passes && choice < 0; ++pass) {
      // Second pass: rather than queue, accept a slower type (still the cheapest per step).
      const bool relax = pass == 1;
      double best_score = kInf;
      for (std::size_t p = 0; p < view.pools.size(); ++p) {
        const PoolInfo& ps = view.pools[p].info;
        double thr = s.steps_per_s[static_cast<std::size_t>(ps.type)];
        if (thr <= 0 || left[p] < s.gpus) continue;
        if (config_.enabled && !std::isfinite(s.deadline_s) &&
            thr < (relax ? config_.overflow_speed_ratio : config_.min_speed_ratio) * best) {
          continue;
        }
        double expected_s = remaining / thr;
        if (ps.tier == Tier::kSpot) {
          if (!config_.enabled || s.priority == JobPriority::kCritical || pinned_on_demand_.count(s.id)) {
            continue;
          }
          if (!SpotPriceAllowed(view, ps, config_.max_price_ratio)) continue;
        }
        // Cost-agnostic (enabled: false): the fastest type wins.
        double score = config_.enabled ? Score(view, p, s, remaining) : 1.0 / thr;
        if (config_.enabled && score > max_score) continue;
        // A job with a deadline must still make it on this type.
        if (std::isfinite(s.deadline_s) && now + expected_s + fleet.restart_s > s.deadline_s) continue;
        if (score < best_score - 1e-12) {
          best_score = score;
          choice = static_cast<int>(p);
        }
      }
      if (choice < 0 && std::isfinite(s.deadline_s)) {
        // Nothing can make the deadline any more: run as fast as possible.
        double best_thr = 0;
        for (std::size_t p = 0; p < view.pools.size(); ++p) {
          const PoolInfo& ps = view.pools[p].info;
          double thr = s.steps_per_s[static_cast<std::size_t>(ps.type)];
          if (ps.tier == Tier::kSpot || left[p] < s.gpus || thr <= best_thr) continue;
          best_thr = thr;
          choice = static_cast<int>(p);
        }
      }
      if (choice >= 0 && !config_.spot_fallback && jv.preemptions > 0 &&
          view.pools[static_cast<std::size_t>(choice)].info.tier != Tier::kSpot &&
          !pinned_on_demand_.count(s.id)) {
        choice = -1;  // without fallback, interrupted work waits for spot
      }
    }
    if (choice >= 0 && keep < 0 && config_.enabled && s.priority != JobPriority::kCritical &&
        view.pools[static_cast<std::size_t>(choice)].info.tier != Tier::kSpot) {
      // On-demand was chosen. Wait for spot instead, if a spot pool of an acceptable type exists:
      // a deadline job while it has slack (the greedy rule of "Can't Be Late"; the deadline check
      // above moves it to on-demand once the slack is spent), any other job within its patience.
      bool spot_exists = false;
      double spot_usd_per_step = kInf;  // the cheapest acceptable spot pool at its expected price ($/h per step/s)
      for (std::size_t p = 0; p < view.pools.size(); ++p) {
        const PoolInfo& ps = view.pools[p].info;
        double thr = s.steps_per_s[static_cast<std::size_t>(ps.type)];
        if (ps.tier == Tier::kSpot && thr >= config_.min_speed_ratio * best &&
            SpotPriceAllowed(view, ps, config_.max_price_ratio)) {
          spot_exists = true;
          spot_usd_per_step = std::min(spot_usd_per_step, EffectivePrice(view, p, remaining / thr) * s.gpus / thr);
        }
      }
      bool wait = false;
      if (std::isfinite(s.deadline_s)) {
        wait = !c.urgent;
      } else if (config_.spot_wait_priced) {
        // Wait while the hours waited, at the job's time value, cost less than spot saves it.
        const PoolInfo& od = view.pools[static_cast<std::size_t>(choice)].info;
        const double od_thr = s.steps_per_s[static_cast<std::size_t>(od.type)];
        // Dollars: steps x (dollars an hour per step a second) / 3600.
        const double saving = remaining * (od.usd_per_gpu_hour * s.gpus / od_thr - spot_usd_per_step) / 3600.0;
        wait = saving > 0 && (now - s.arrival_s) / 3600.0 * config_.time_value_per_hour < saving;
      } else if (config_.spot_patience > 0) {
        double budget = std::min(config_.max_spot_wait_s, config_.spot_patience * remaining / best);
        wait = now - s.arrival_s < budget;
      }
      if (spot_exists && wait) choice = -1;
    }
    if (choice < 0) continue;
    if (choice != jv.pool) placed_at_[s.id] = now;  // warm-up starts on every (re)placement
    left[static_cast<std::size_t>(choice)] -= s.gpus;
    out.push_back(Assignment{s.id, choice});
  }
  // Moves use only the room the queue left: under saturated spot capacity a move only swaps which
  // job runs on spot, and pays a cold start and a restart for it.
  for (const Movable& m : movable) {
    Assignment& a = out[m.out];
    const JobInfo& s = m.cand->job->info;
    const int move_to = BestMove(view, *m.cand->job, static_cast<std::size_t>(a.pool), m.cand->remaining, left);
    if (move_to < 0) continue;
    left[static_cast<std::size_t>(a.pool)] += s.gpus;
    left[static_cast<std::size_t>(move_to)] -= s.gpus;
    a.pool = move_to;
    placed_at_[s.id] = now;
  }
  return out;
}

std::vector<Assignment> FifoOnDemandPolicy::Schedule(const SimView& view, Rng& rng) {
  std::vector<int> left(view.pools.size());
  for (std::size_t p = 0; p < view.pools.size(); ++p) {
    left[p] = view.pools[p].info.tier == Tier::kSpot ? 0 : view.pools[p].capacity;
  }
  std::vector<Assignment> out;
  // Running jobs keep their GPUs; then arrivals in order, each on a random type with room.
  for (const auto& jv : view.jobs) {
    auto it = pool_of_.find(jv.info.id);
    if (it == pool_of_.end()) continue;
    left[static_cast<std::size_t>(it->second)] -= jv.info.gpus;
    out.push_back(Assignment{jv.info.id, it->second});
  }
  for (const auto& jv : view.jobs) {
    if (pool_of_.count(jv.info.id)) continue;
    std::vector<int> cands;
    for (std::size_t p = 0; p < view.pools.size(); ++p) {
      double thr = jv.info.steps_per_s[static_cast<std::size_t>(view.pools[p].info.type)];
      if (thr > 0 && left[p] >= jv.info.gpus) cands.push_back(static_cast<int>(p));
    }
    if (cands.empty()) break;  // FIFO: nobody jumps the queue
    int p = cands[static_cast<std::size_t>(rng.Uniform(cands.size()))];
    left[static_cast<std::size_t>(p)] -= jv.info.gpus;
    pool_of_[jv.info.id] = p;
    out.push_back(Assignment{jv.info.id, p});
  }
  return out;
}

void FifoOnDemandPolicy::OnCompletion(const JobInfo& job, double /*total_steps*/, double /*now*/) { pool_of_.erase(job.id); }

}  // namespace seedance::sim
