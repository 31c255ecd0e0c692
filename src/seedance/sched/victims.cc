#include "seedance/sched/victims.h"

#include <algorithm>
#include <array>
#include <cstddef>

#include "seedance/core/check.h"

namespace seedance::sched {
namespace {

using cluster::NodeId;
using cluster::NodeState;
using cluster::PodSpec;

// What unbinding one or more pods gives back to a node.
struct Release {
  std::int64_t cpu = 0;
  std::int64_t mem = 0;
  std::array<std::int32_t, cluster::kMaxGpusPerNode> gpu{};

  void Add(const Release& r) {
    cpu += r.cpu;
    mem += r.mem;
    for (std::size_t i = 0; i < gpu.size(); ++i) gpu[i] += r.gpu[i];
  }
};

Release ReleaseOf(const PreemptionCandidate& c) {
  Release r;
  r.cpu = c.pod.cpu.raw();
  r.mem = c.pod.memory.raw();
  for (int k = 0; k < c.gpus.count; ++k)
    r.gpu[c.gpus.gpus[static_cast<std::size_t>(k)]] += c.pod.gpu_milli;
  return r;
}

// Adds `sign` * `r` to the node's free capacity.
void Apply(NodeState& n, const Release& r, int sign) {
  n.cpu_left += sign * r.cpu;
  n.mem_left += sign * r.mem;
  for (int i = 0; i < n.gpu_count; ++i) {
    const auto u = static_cast<std::size_t>(i);
    n.gpu_idle[u] += sign * r.gpu[u];
  }
}

bool FitsWith(NodeState n, const Release& extra, const PodSpec& pod) {
  Apply(n, extra, 1);
  return cluster::Fits(n, pod);
}

// The best set found so far, under the total order of the header.
struct Best {
  bool found = false;
  VictimSet set;
};

// True if (cost, ids, node) comes before `best` (ids ascending).
bool Improves(double cost, const std::vector<std::int64_t>& ids, NodeId node, const Best& best) {
  if (!best.found) return true;
  if (cost != best.set.cost) return cost < best.set.cost;
  if (ids.size() != best.set.victims.size()) return ids.size() < best.set.victims.size();
  if (node != best.set.node) return node < best.set.node;
  return ids < best.set.victims;
}

// The search on one node. `cands` are that node's candidates sorted by (cost, id); `releases`
// and `suffix` are parallel to it (suffix[i] = release of cands[i..]).
class NodeSearch {
 public:
  NodeSearch(NodeId node, const NodeState& base, const PodSpec& pod,
             std::span<const PreemptionCandidate* const> cands, std::span<const Release> releases,
             std::span<const Release> suffix, Best& best)
      : node_(node),
        pod_(pod),
        cands_(cands),
        releases_(releases),
        suffix_(suffix),
        best_(best),
        work_(base) {}

  // Branch and bound over all subsets. REQUIRES: the pod does not fit `base`.
  void Exact() { Branch(0, 0.0); }

  // Cheapest-first until the pod fits, then drop victims from the most expensive down while it
  // still fits. REQUIRES: releasing all candidates lets the pod fit.
  void Greedy() {
    std::size_t i = 0;
    while (!cluster::Fits(work_, pod_)) {
      SEEDANCE_DCHECK(i < cands_.size());
      Apply(work_, releases_[i], 1);
      chosen_.push_back(i++);
    }
    for (std::size_t j = chosen_.size(); j-- > 0;) {
      Apply(work_, releases_[chosen_[j]], -1);
      if (cluster::Fits(work_, pod_)) {
        chosen_.erase(chosen_.begin() + static_cast<std::ptrdiff_t>(j));
      } else {
        Apply(work_, releases_[chosen_[j]], 1);
      }
    }
    double cost = 0;
    for (std::size_t c : chosen_) cost += cands_[c]->cost;
    Offer(cost);
  }

 private:
  // Invariant: the pod does not fit work_ (the chosen set so far), whose cost is `cost`.
  void Branch(std::size_t i, double cost) {
    for (; i < cands_.size(); ++i) {
      // Releasing everything left must let the pod fit (releasing more never hurts a fit).
      if (!FitsWith(work_, suffix_[i], pod_)) return;
      // Every extension adds a candidate at i or later, so it costs at least `with` (candidates
      // are sorted by cost) and has more victims: stop when that cannot beat the best.
      const double with = cost + cands_[i]->cost;
      if (best_.found &&
          (with > best_.set.cost ||
           (with == best_.set.cost && chosen_.size() + 1 > best_.set.victims.size()))) {
        return;
      }
      Apply(work_, releases_[i], 1);
      chosen_.push_back(i);
      if (cluster::Fits(work_, pod_)) {
        Offer(with);  // no superset of a fitting set can be better
      } else {
        Branch(i + 1, with);
      }
      chosen_.pop_back();
      Apply(work_, releases_[i], -1);
      // Next iteration: the branch without candidate i.
    }
  }

  void Offer(double cost) {
    std::vector<std::int64_t> ids;
    ids.reserve(chosen_.size());
    for (std::size_t c : chosen_) ids.push_back(cands_[c]->id);
    std::sort(ids.begin(), ids.end());
    if (Improves(cost, ids, node_, best_)) {
      best_.found = true;
      best_.set = VictimSet{node_, std::move(ids), cost};
    }
  }

  NodeId node_;
  const PodSpec& pod_;
  std::span<const PreemptionCandidate* const> cands_;
  std::span<const Release> releases_;
  std::span<const Release> suffix_;
  Best& best_;
  NodeState work_;
  std::vector<std::size_t> chosen_;  // indices into cands_, ascending
};

}  // namespace

std::optional<VictimSet> FindVictimsForFit(const cluster::ClusterState& state, const PodSpec& pod,
                                           std::span<const PreemptionCandidate> candidates) {
  for (std::size_t n = 0; n < state.size(); ++n) {
    const NodeId id(static_cast<std::uint32_t>(n));
    if (state.CanPlace(id, pod)) return VictimSet{id, {}, 0.0};
  }

  std::vector<const PreemptionCandidate*> sorted;
  sorted.reserve(candidates.size());
  for (const PreemptionCandidate& c : candidates) {
    SEEDANCE_CHECK(c.node.value() < state.size()) << "candidate " << c.id;
    SEEDANCE_DCHECK(c.cost >= 0) << "candidate " << c.id;
    sorted.push_back(&c);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const PreemptionCandidate* a, const PreemptionCandidate* b) {
              if (a->node != b->node) return a->node < b->node;
              if (a->cost != b->cost) return a->cost < b->cost;
              return a->id < b->id;
            });

  Best best;
  std::vector<Release> releases;
  std::vector<Release> suffix;
  for (std::size_t lo = 0; lo < sorted.size();) {
    const NodeId node = sorted[lo]->node;
    std::size_t hi = lo;
    while (hi < sorted.size() && sorted[hi]->node == node) ++hi;
    const std::span<const PreemptionCandidate* const> group(sorted.data() + lo, hi - lo);
    lo = hi;
    if (!cluster::Admits(state.eligibility(node), pod)) continue;

    const std::size_t k = group.size();
    releases.resize(k);
    suffix.assign(k + 1, Release{});
    for (std::size_t i = 0; i < k; ++i) releases[i] = ReleaseOf(*group[i]);
    for (std::size_t i = k; i-- > 0;) {
      suffix[i] = suffix[i + 1];
      suffix[i].Add(releases[i]);
    }
    const NodeState& base = state.node(node);
    if (!FitsWith(base, suffix[0], pod)) continue;  // GPU model, or not enough even with all

    NodeSearch search(node, base, pod, group, releases, suffix, best);
    if (k <= static_cast<std::size_t>(kExactVictimSearchMaxCandidates)) {
      search.Exact();
    } else {
      search.Greedy();
    }
  }
  if (!best.found) return std::nullopt;
  return std::move(best.set);
}

std::vector<std::int64_t> QuotaOnlyVictims(const PodSpec& pod,
                                           std::span<const PreemptionCandidate> candidates) {
  const std::int64_t need = pod.total_gpu_milli();
  std::vector<std::int64_t> taken;
  if (need <= 0) return taken;
  std::int64_t freed = 0;
  for (const PreemptionCandidate& c : candidates) {
    if (freed >= need) break;
    const std::int64_t gives = c.pod.total_gpu_milli();
    if (gives <= 0) continue;
    taken.push_back(c.id);
    freed += gives;
  }
  if (freed < need) taken.clear();
  return taken;
}

}  // namespace seedance::sched
