// Serving by comparative advantage (StackConfig::serving_yields_to_training; issue 39 round 5): a
// fine-tune runs 2.8x as fast on an H100 as on an A100-80G, a serving replica about 2x, so while
// training waits for owned H100s (or pays for cloud ones) the replicas on owned H100s move to owned
// A100-80G room free now, and the H100s go to the training. Decided by the one cost model: the
// cloud price of the GPUs freed against the marginal (power) cost of the committed GPUs taken.
#include <algorithm>
#include <cmath>
#include <vector>

#include "seedance/fleet/engine_internal.h"

namespace seedance::fleet::detail {

void Engine::TrainingByAdvantage(const std::vector<const JobRun*>& wanting, int ft, int fu, double ratio, int* gpus_t,
                                 int* gpus_u, int* min_pod) const {
  *gpus_t = *gpus_u = 0;
  *min_pod = 0;
  for (const JobRun* r : wanting) {
    const double st = r->job->steps_per_s[static_cast<std::size_t>(ft)];
    const double su = r->job->steps_per_s[static_cast<std::size_t>(fu)];
    if (st > ratio * su) {
      *gpus_t += r->job->gpus;
      *min_pod = *min_pod > 0 ? std::min(*min_pod, r->pod.num_gpu) : r->pod.num_gpu;
    } else if (su > 0) {
      *gpus_u += r->job->gpus;
    }
  }
}

cluster::PodSpec Engine::ReplicaPod(std::size_t d, std::size_t type) const {
  const int tp = profiles_[d]->tp[type];
  cluster::PodSpec pod;
  pod.name = "serve-" + s_.serving[d].spec.name;
  pod.cpu = Millicores(tp * kCpuPerGpu);
  pod.memory = MiB(tp * kMemPerGpu);
  pod.num_gpu = tp;
  pod.gpu_milli = cluster::kMilliPerGpu;
  return pod;
}

void Engine::YieldServing(std::size_t d, ServingMix* want) {
  if (yields_.size() != s_.serving.size()) yields_.resize(s_.serving.size());
  const ServingProfile& prof = *profiles_[d];
  const int types = static_cast<int>(prof.gpus.size());
  std::vector<int>& w = want->replicas;
  w.resize(prof.gpus.size(), 0);
  std::vector<ServingYield>& ys = yields_[d];
  // The training now waiting or paying a cloud pool, gathered at its first use for every pair of
  // types below.
  std::vector<const JobRun*> wanting_jobs;
  bool gathered = false;
  const auto wanting = [&]() -> const std::vector<const JobRun*>& {
    if (!gathered) {
      gathered = true;
      for (const JobRun& r : jobs_) {
        const bool waiting = r.state == JobState::kPending;
        const bool on_cloud = r.state == JobState::kRunning && !pools_[static_cast<std::size_t>(r.where.pool)].committed();
        if (waiting || on_cloud) wanting_jobs.push_back(&r);
      }
    }
    return wanting_jobs;
  };
  // Replicas of `to` that serve what n replicas of `from` serve (the measured req/s at the SLO).
  const auto sized = [&](int from, int to, int n) {
    if (n <= 0) return 0;
    return static_cast<int>(std::ceil(n * prof.replica_rps[static_cast<std::size_t>(from)] /
                                          prof.replica_rps[static_cast<std::size_t>(to)] - 1e-9));
  };
  const auto fleet_of = [&](int u) { return profile_fleet_type_[d][static_cast<std::size_t>(u)]; };
  // How many times one GPU of `t` serves what one GPU of `u` serves (the measured req/s at the SLO).
  const auto ratio = [&](int t, int u) {
    const auto per_gpu = [&](int x) { return prof.replica_rps[static_cast<std::size_t>(x)] / prof.tp[static_cast<std::size_t>(x)]; };
    return per_gpu(t) / per_gpu(u);
  };
  // Free room now for replicas of profile type `u` on the committed pools of its fleet type (less
  // the replicas already waiting for a node: they are placed first).
  const auto room_for = [&](int u) {
    const cluster::PodSpec pod = ReplicaPod(d, static_cast<std::size_t>(u));
    const int fu = profile_fleet_type_[d][static_cast<std::size_t>(u)];
    int room = 0;
    for (const PoolRun& p : pools_) {
      if (p.spec->type == fu && p.committed()) room += GangRoomNow(p.index, pod);
    }
    for (const Replica& r : replicas_) room -= !r.where.placed() && r.fleet_type == fu;
    return room;
  };
  // Moves made follow the controller down (the moved replicas go first). A move is undone, as far
  // as its type has room free now, when training wants the room it took (the same rule the other
  // way round: the replicas go back to the GPUs no training waits for).
  for (ServingYield& y : ys) {
    y.from_n = std::min(y.from_n, w[static_cast<std::size_t>(y.from)]);
    int gpus_t = 0, gpus_u = 0, pod = 0;
    if (y.from_n > 0) TrainingByAdvantage(wanting(), fleet_of(y.from), fleet_of(y.to), ratio(y.from, y.to), &gpus_t, &gpus_u, &pod);
    if (gpus_u > 0 && gpus_t == 0) y.from_n -= std::min(y.from_n, std::max(0, room_for(y.from)));
    y.to_n = sized(y.from, y.to, y.from_n);
  }
  for (int t = 0; t < types; ++t) {
    auto it = std::find_if(ys.begin(), ys.end(), [&](const ServingYield& y) { return y.from == t; });
    const int moved = it == ys.end() ? 0 : it->from_n;
    const int tp_t = prof.tp[static_cast<std::size_t>(t)];
    if (w[static_cast<std::size_t>(t)] - moved <= 0 || prof.replica_rps[static_cast<std::size_t>(t)] <= 0) continue;
    const int ft = fleet_of(t);
    // What the waiting training would pay for an hour of these GPUs: the type's cheapest cloud pool.
    double cloud_usd = 0;
    for (const PoolRun& p : pools_) {
      if (p.spec->type != ft || p.committed()) continue;
      cloud_usd = cloud_usd > 0 ? std::min(cloud_usd, PriceOf(p.index)) : PriceOf(p.index);
    }
    if (cloud_usd <= 0) continue;
    int best_to = -1, best_m = 0, best_pool = -1, drain_pool = -1;
    std::uint32_t best_node = 0, drain_node = 0;
    double best_cost = 0;
    for (int u = 0; u < types; ++u) {
      if (u == t || prof.replica_rps[static_cast<std::size_t>(u)] <= 0) continue;
      if (it != ys.end() && it->to != u) continue;  // one destination per moved type
      const int fu = fleet_of(u);
      if (fu == ft) continue;
      // By comparative advantage: the GPUs of training (waiting, or paying the cloud) relatively
      // faster on t than serving is, and of training that is not (the room on u is theirs).
      int gpus_t = 0, gpus_u = 0, pod = 0;
      TrainingByAdvantage(wanting(), ft, fu, ratio(t, u), &gpus_t, &gpus_u, &pod);
      if (gpus_t <= 0 || gpus_u > 0) continue;
      // The committed node of ft where draining the fewest of these replicas makes room for the
      // smallest such pod (the GPUs freed go to training only where a pod then fits).
      int more = 0;
      for (const PoolRun& p : pools_) {
        if (p.spec->type != ft || !p.committed()) continue;
        for (std::uint32_t n = 0; n < p.state->size(); ++n) {
          const int free = cluster::CountGpusWithIdle(p.state->node(cluster::NodeId(n)), cluster::kMilliPerGpu);
          int here = 0;
          for (const Replica& r : replicas_) {
            here += r.deployment == static_cast<int>(d) && r.type == t && !r.drain && r.where.pool == p.index &&
                    r.where.node == cluster::NodeId(n);
          }
          const int need = (pod - free + tp_t - 1) / tp_t;
          if (free >= pod || need > here || need > w[static_cast<std::size_t>(t)] - moved) continue;
          if (more == 0 || need < more) {
            more = need;
            drain_pool = p.index;
            drain_node = n;
          }
        }
      }
      if (more <= 0) continue;
      const int tp_u = prof.tp[static_cast<std::size_t>(u)];
      const int room = room_for(u);
      const double marginal = static_cast<std::size_t>(fu) < s_.owned_marginal_usd_per_gpu_hour.size()
                                  ? s_.owned_marginal_usd_per_gpu_hour[static_cast<std::size_t>(fu)] : 0.0;
      const int to_n = it == ys.end() ? 0 : it->to_n;
      const int m = more;  // all or none: fewer frees no room a pod fits
      const int extra = sized(t, u, moved + m) - to_n;
      if (extra > room || m * tp_t * cloud_usd <= extra * tp_u * marginal) continue;
      const double cost = marginal * tp_u / prof.replica_rps[static_cast<std::size_t>(u)];
      if (best_to < 0 || cost < best_cost) {
        best_to = u;
        best_m = m;
        best_cost = cost;
        best_pool = drain_pool;
        best_node = drain_node;
      }
    }
    if (best_to < 0) continue;
    if (it == ys.end()) {
      ys.push_back({t, best_to, 0, 0});
      it = ys.end() - 1;
    }
    it->from_n = moved + best_m;
    // The replicas on that node are the ones drained once their replacements are ready.
    int marked = 0;
    for (Replica& r : replicas_) {
      if (marked < best_m && r.deployment == static_cast<int>(d) && r.type == t && !r.drain && r.where.pool == best_pool &&
          r.where.node == cluster::NodeId(best_node)) {
        r.drain = true;
        ++marked;
      }
    }
    it->to_n = sized(t, best_to, it->from_n);
  }
  for (const ServingYield& y : ys) {
    w[static_cast<std::size_t>(y.from)] -= y.from_n;
    w[static_cast<std::size_t>(y.to)] += y.to_n;
  }
}

}  // namespace seedance::fleet::detail
