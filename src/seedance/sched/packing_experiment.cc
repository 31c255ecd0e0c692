#include "seedance/sched/packing_experiment.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "seedance/core/clock.h"
#include "seedance/core/rng.h"
#include "seedance/sched/placement_policy.h"

namespace seedance::sched {

using cluster::ClusterState;
using cluster::NodeId;
using cluster::NodeSpec;
using cluster::PodSpec;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// numpy-style round half to even at `digits` decimals.
double RoundEven(double x, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::nearbyint(x * scale) / scale;
}

std::vector<std::size_t> OrderByName(const std::vector<PodSpec>& pods) {
  std::vector<std::size_t> idx(pods.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::size_t a, std::size_t b) { return pods[a].name < pods[b].name; });
  return idx;
}

// Discrete curve: per integer arrival percentage, the mean of the per-event values.
class DiscreteCurve {
 public:
  void Add(int k, double value) {
    if (k < 0) return;
    auto uk = static_cast<std::size_t>(k);
    if (uk >= sum_.size()) {
      sum_.resize(uk + 1, 0.0);
      count_.resize(uk + 1, 0);
    }
    sum_[uk] += value;
    count_[uk] += 1;
  }
  std::vector<double> Finish() const {
    std::vector<double> out(sum_.size(), kNaN);
    for (std::size_t k = 0; k < sum_.size(); ++k) {
      double s = sum_[k];
      std::int64_t c = count_[k];
      if (c == 0) {
        s = 0;
        for (std::size_t j = (k == 0 ? 0 : k - 1); j <= k + 1 && j < sum_.size(); ++j) {
          s += sum_[j];
          c += count_[j];
        }
      }
      if (c > 0) out[k] = RoundEven(s / static_cast<double>(c), 2);
    }
    return out;
  }

 private:
  std::vector<double> sum_;
  std::vector<std::int64_t> count_;
};

double At(const std::vector<double>& v, std::size_t k) { return k < v.size() ? v[k] : kNaN; }

}  // namespace

PackingWorkload PrepareFgdWorkload(const std::vector<NodeSpec>& nodes,
                                   const std::vector<PodSpec>& pods, std::uint64_t seed,
                                   double tune) {
  PackingWorkload w;
  w.typical = ComputeTypicalPods(pods);
  Rng rng(seed);
  const std::vector<std::size_t> by_name = OrderByName(pods);
  // 1. Shuffle the name-sorted trace.
  std::vector<std::size_t> order = by_name;
  rng.Shuffle(order);
  w.pods.reserve(static_cast<std::size_t>(static_cast<double>(pods.size()) * (tune + 0.1)));
  std::int64_t total = 0;
  for (std::size_t i : order) {
    w.pods.push_back(pods[i]);
    total += pods[i].total_gpu_milli();
  }
  // 2. Inflate: sample from the name-sorted pool until the next sample's per-GPU request would
  // pass the target (the artifact's check; a multi-GPU clone may overshoot slightly).
  std::int64_t capacity = 0;
  for (const auto& n : nodes) capacity += n.gpu_count * cluster::kMilliPerGpu;
  const double target = tune * static_cast<double>(capacity);
  for (std::int64_t k = 0; static_cast<double>(total) < target; ++k) {
    const PodSpec& p = pods[by_name[rng.Uniform(by_name.size())]];
    const std::int64_t per_gpu = p.is_gpu() ? p.gpu_milli : 0;
    if (static_cast<double>(total + per_gpu) > target) break;
    total += p.total_gpu_milli();
    PodSpec clone = p;
    clone.name += "-tuned-" + std::to_string(k);
    w.pods.push_back(std::move(clone));
    if (k > 100'000'000) break;  // a trace with no GPU request never reaches the target
  }
  // 3. Tie ranks: a permutation over the name-sorted nodes.
  std::vector<std::size_t> node_order(nodes.size());
  std::iota(node_order.begin(), node_order.end(), std::size_t{0});
  std::stable_sort(node_order.begin(), node_order.end(),
                   [&](std::size_t a, std::size_t b) { return nodes[a].name < nodes[b].name; });
  std::vector<std::uint32_t> perm = rng.Permutation(static_cast<std::uint32_t>(nodes.size()));
  w.tie_rank.assign(nodes.size(), 0);
  for (std::size_t i = 0; i < node_order.size(); ++i) w.tie_rank[node_order[i]] = perm[i];
  return w;
}

namespace {

PlacementPolicyFactory NamedPolicy(std::string name) {
  return [name = std::move(name)](const PolicyContext& c) { return MakePlacementPolicy(name, c); };
}

}  // namespace

Result<PackingRunResult> RunPacking(const std::vector<NodeSpec>& nodes,
                                    const PackingWorkload& workload, std::string_view policy_name,
                                    std::uint64_t seed, const PackingRunOptions& options) {
  return RunPacking(nodes, workload, NamedPolicy(std::string(policy_name)), seed, options);
}

Result<PackingRunResult> RunPacking(const std::vector<NodeSpec>& nodes,
                                    const PackingWorkload& workload,
                                    const PlacementPolicyFactory& make, std::uint64_t seed,
                                    const PackingRunOptions& options) {
  PolicyContext context{workload.tie_rank, workload.typical};
  SEEDANCE_ASSIGN_OR_RETURN(std::unique_ptr<PlacementPolicy> policy, make(context));
  SteadyClock wall;
  const Duration start = wall.Now();
  ClusterState cluster(nodes);
  Rng rng = Rng(seed).Fork(1);
  PackingRunResult r;
  r.policy = std::string(policy->Name());
  r.seed = seed;

  std::vector<double> node_frag(nodes.size());
  double frag_sum = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    node_frag[i] = NodeFrag(cluster.nodes()[i], workload.typical);
    frag_sum += node_frag[i];
  }
  const double capacity_pct_div = static_cast<double>(cluster.total_gpus()) * 10.0;
  DiscreteCurve alloc, frag;
  std::int64_t arrived = 0;
  bool reached_100 = false;
  if (options.record_decision_times) r.decision_seconds.reserve(workload.pods.size());
  for (const PodSpec& pod : workload.pods) {
    arrived += pod.total_gpu_milli();
    ++r.pods_arrived;
    const Duration t0 = options.record_decision_times ? wall.Now() : Duration{0};
    const PlacementDecision d = policy->Decide(cluster, pod, rng);
    if (options.record_decision_times) r.decision_seconds.push_back(ToSeconds(wall.Now() - t0));
    const int k = static_cast<int>(std::nearbyint(static_cast<double>(arrived) / capacity_pct_div));
    if (d.placed()) {
      cluster.Bind(pod, d.node, d.gpus);
      ++r.pods_placed;
      const std::size_t ni = d.node.value();
      const double f = NodeFrag(cluster.nodes()[ni], workload.typical);
      frag_sum += f - node_frag[ni];
      node_frag[ni] = f;
    } else {
      ++r.pods_failed;
      if (pod.is_gpu() && k <= 100) ++r.gpu_pods_failed_by_100;
    }
    alloc.Add(k, RoundEven(static_cast<double>(cluster.used_gpu_milli()) / capacity_pct_div, 2));
    frag.Add(k, frag_sum / capacity_pct_div);
    if (!reached_100 && k >= 100) {
      reached_100 = true;
      r.entropy_at_100 = GpuFreeEntropy(cluster);
    }
  }
  r.alloc_pct = alloc.Finish();
  r.frag_pct = frag.Finish();
  r.unallocated_pct_at_100 = 100.0 - At(r.alloc_pct, 100);
  r.frag_pct_at_100 = At(r.frag_pct, 100);
  if (!reached_100) r.entropy_at_100 = GpuFreeEntropy(cluster);
  r.wall_seconds = ToSeconds(wall.Now() - start);
  return r;
}

Result<std::vector<PackingRunResult>> RunPackingBenchmark(
    const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods,
    const std::vector<std::string>& policies, const std::vector<std::uint64_t>& seeds,
    double tune, int threads) {
  std::vector<PlacementPolicyFactory> factories;
  factories.reserve(policies.size());
  for (const std::string& p : policies) factories.push_back(NamedPolicy(p));
  return RunPackingBenchmark(nodes, pods, factories, seeds, tune, threads);
}

Result<std::vector<PackingRunResult>> RunPackingBenchmark(
    const std::vector<NodeSpec>& nodes, const std::vector<PodSpec>& pods,
    const std::vector<PlacementPolicyFactory>& policies, const std::vector<std::uint64_t>& seeds,
    double tune, int threads) {
  // Workloads depend only on the seed: build each once.
  std::vector<PackingWorkload> workloads;
  workloads.reserve(seeds.size());
  for (std::uint64_t s : seeds) workloads.push_back(PrepareFgdWorkload(nodes, pods, s, tune));
  const std::size_t jobs = policies.size() * seeds.size();
  std::vector<std::optional<Result<PackingRunResult>>> out(jobs);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t j = next++; j < jobs; j = next++) {
      const std::size_t pi = j / seeds.size(), si = j % seeds.size();
      PackingRunOptions o;
      o.tune = tune;
      out[j] = RunPacking(nodes, workloads[si], policies[pi], seeds[si], o);
    }
  };
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(jobs)));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  std::vector<PackingRunResult> results;
  results.reserve(jobs);
  for (auto& r : out) {
    if (!r->has_value()) return r->error();
    results.push_back(std::move(*r).value());
  }
  return results;
}

std::vector<PackingSummary> SummarizePacking(const std::vector<PackingRunResult>& runs) {
  std::vector<PackingSummary> out;
  for (const auto& r : runs) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const PackingSummary& s) { return s.policy == r.policy; });
    if (it == out.end()) {
      out.push_back(PackingSummary{});
      out.back().policy = r.policy;
      it = out.end() - 1;
    }
    it->runs++;
  }
  for (auto& s : out) {
    std::vector<double> un, fr, en;
    std::vector<const PackingRunResult*> mine;
    for (const auto& r : runs) {
      if (r.policy != s.policy) continue;
      mine.push_back(&r);
      un.push_back(r.unallocated_pct_at_100);
      fr.push_back(r.frag_pct_at_100);
      en.push_back(r.entropy_at_100);
      s.wall_seconds += r.wall_seconds;
    }
    auto mean = [](const std::vector<double>& v) {
      return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      const std::size_t n = v.size();
      return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
    };
    s.mean_unallocated_pct_at_100 = mean(un);
    s.median_unallocated_pct_at_100 = median(un);
    double ss = 0;
    for (double x : un) ss += (x - s.mean_unallocated_pct_at_100) * (x - s.mean_unallocated_pct_at_100);
    s.sd_unallocated_pct_at_100 = un.size() > 1 ? std::sqrt(ss / static_cast<double>(un.size() - 1)) : 0.0;
    s.mean_frag_pct_at_100 = mean(fr);
    s.mean_entropy_at_100 = mean(en);
    std::size_t cols = 0;
    for (const auto* r : mine) cols = std::max(cols, r->alloc_pct.size());
    s.median_alloc_pct.assign(cols, kNaN);
    for (std::size_t k = 0; k < cols; ++k) {
      std::vector<double> v;
      for (const auto* r : mine) {
        if (k < r->alloc_pct.size() && !std::isnan(r->alloc_pct[k])) v.push_back(r->alloc_pct[k]);
      }
      if (!v.empty()) s.median_alloc_pct[k] = median(v);
    }
  }
  return out;
}

}  // namespace seedance::sched
