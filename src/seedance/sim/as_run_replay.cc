#include "seedance/sim/as_run_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

namespace seedance::sim {

std::string_view ReplaySchedulerName(ReplayScheduler s) {
  switch (s) {
    case ReplayScheduler::kKube: return "kube";
    case ReplayScheduler::kKueue: return "kueue";
    case ReplayScheduler::kSlurm: return "slurm";
  }
  return "kube";
}

Result<ReplayScheduler> ParseReplayScheduler(std::string_view text) {
  for (ReplayScheduler s : {ReplayScheduler::kKube, ReplayScheduler::kKueue, ReplayScheduler::kSlurm}) {
    if (text == ReplaySchedulerName(s)) return s;
  }
  return InvalidArgumentError(fmt::format("unknown scheduler '{}' (accepted: kube, kueue, slurm)", text));
}

namespace {

struct Node {
  std::string type;
  Tier tier = Tier::kOwned;
  int capacity = 0;
  int used = 0;
  bool autoscaled = false;  // a rented node: exists while needed (kube, kueue)
  bool exists = true;
  double empty_since = 0;
  double up_since = 0;      // an autoscaled node: when the autoscaler added it
  int Free() const { return capacity - used; }
};

// Slurm node weight: lower is used first.
int Weight(Tier t) {
  switch (t) {
    case Tier::kOwned: return 0;
    case Tier::kReserved: return 1;
    case Tier::kOnDemand: return 2;
    case Tier::kSpot: return 3;
  }
  return 3;
}

void AddNodes(std::vector<Node>& nodes, const std::string& type, Tier tier, int gpus, int per_node, bool autoscaled) {
  for (int left = gpus; left > 0; left -= per_node) {
    Node n;
    n.type = type;
    n.tier = tier;
    n.capacity = std::min(per_node, left);
    n.autoscaled = autoscaled;
    n.exists = !autoscaled;
    nodes.push_back(n);
  }
}

struct Running {
  double end = 0;
  std::size_t job = 0;
  std::vector<std::pair<std::size_t, int>> pods;  // node, GPUs
};

class Replayer {
 public:
  Replayer(const std::vector<ReplayJob>& jobs, const ReplayOptions& o, std::vector<Node> nodes)
      : jobs_(jobs), o_(o), nodes_(std::move(nodes)) {}

  Result<ReplayOutcome> Run() {
    const std::size_t n = jobs_.size();
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
      return std::make_pair(Release(a), a) < std::make_pair(Release(b), b);
    });
    for (std::size_t i : order) SEEDANCE_RETURN_IF_ERROR(CheckFits(i));
    std::size_t next = 0, done = 0;
    double t = 0;
    ReplayOutcome out;
    std::vector<double> started(n, -1);
    while (done < n) {
      double tn = std::numeric_limits<double>::infinity();
      if (next < n) tn = Release(order[next]);
      for (const Running& r : running_) tn = std::min(tn, r.end);
      for (double x : timers_) {
        if (x > t) {
          tn = std::min(tn, x);
          break;
        }
      }
      if (tn == std::numeric_limits<double>::infinity()) {
        return InvalidArgumentError(fmt::format("replay: job {} never starts (it does not fit the fleet)",
                                                pending_.empty() ? std::string("?") : jobs_[pending_.front()].job));
      }
      t = std::max(t, tn);
      for (std::size_t k = 0; k < running_.size();) {
        if (running_[k].end <= t) {
          for (auto [node, g] : running_[k].pods) {
            nodes_[node].used -= g;
            if (nodes_[node].used == 0) {
              nodes_[node].empty_since = t;
              if (nodes_[node].autoscaled) timers_.insert(t + o_.scale_down_s);
            }
          }
          usage_[jobs_[running_[k].job].tenant] -= jobs_[running_[k].job].gpus;
          ++done;
          running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(k));
        } else {
          ++k;
        }
      }
      while (next < n && Release(order[next]) <= t) pending_.push_back(order[next++]);
      if (o_.scheduler != ReplayScheduler::kSlurm) {
        for (Node& nd : nodes_) {
          if (nd.autoscaled && nd.exists && nd.used == 0 && t - nd.empty_since >= o_.scale_down_s) {
            nd.exists = false;
            NodeDown(nd, nd.empty_since + o_.scale_down_s);
          }
        }
      }
      Schedule(t, started);
    }
    double wait = 0, hist = 0;
    int batch = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const ReplayJob& j = jobs_[i];
      out.start_s[j.job] = started[i];
      if (j.kind == HistoryKind::kBatch) {
        wait += started[i] - j.submit_s;
        hist += j.start_s - j.submit_s;
        ++batch;
      } else if (started[i] > j.start_s + 1e-9) {
        ++out.delayed_fixed;
      }
    }
    if (batch > 0) {
      out.mean_wait_s = wait / batch;
      out.history_mean_wait_s = hist / batch;
    }
    // Rented nodes still up: an autoscaled one goes scale_down_s after it emptied; a static one
    // is up throughout.
    for (Node& nd : nodes_) {
      if (!nd.exists || nd.tier == Tier::kOwned || nd.tier == Tier::kReserved) continue;
      if (nd.autoscaled) {
        NodeDown(nd, nd.empty_since + o_.scale_down_s);
      } else {
        nd.up_since = 0;
        NodeDown(nd, std::numeric_limits<double>::infinity());
      }
    }
    out.run = std::move(run_);
    out.rented_up = std::move(up_);
    return out;
  }

 private:
  void NodeDown(const Node& nd, double end) {
    up_.push_back(AsRunInterval{fmt::format("node {}", up_.size()), nd.type, nd.tier, nd.up_since, end, nd.capacity});
  }
  // When a job enters the queue: batch jobs at submit, services and notebooks at their start.
  double Release(std::size_t i) const {
    const ReplayJob& j = jobs_[i];
    return j.kind == HistoryKind::kBatch ? j.submit_s : j.start_s;
  }
  bool Eligible(const ReplayJob& j, const Node& nd) const {
    return nd.type == j.gpu_type && (j.spot ? nd.tier == Tier::kSpot : nd.tier != Tier::kSpot);
  }
  // The job's pods' GPUs: its pods, more when one would not fit the largest node.
  std::vector<int> Pods(const ReplayJob& j) const {
    int largest = 0;
    for (const Node& nd : nodes_) {
      if (Eligible(j, nd)) largest = std::max(largest, nd.capacity);
    }
    int pods = std::max(1, j.pods);
    if (largest > 0) pods = std::max(pods, (j.gpus + largest - 1) / largest);
    pods = std::min(pods, j.gpus);
    std::vector<int> g(static_cast<std::size_t>(pods), j.gpus / pods);
    for (int k = 0; k < j.gpus % pods; ++k) ++g[static_cast<std::size_t>(k)];
    return g;
  }
  Status CheckFits(std::size_t i) const {
    const ReplayJob& j = jobs_[i];
    int total = 0;
    for (const Node& nd : nodes_) {
      if (Eligible(j, nd)) total += nd.capacity;
    }
    if (total < j.gpus) {
      return InvalidArgumentError(fmt::format("replay: job {} needs {} {} GPUs{} at once; the fleet has {}", j.job,
                                              j.gpus, j.gpu_type, j.spot ? " (spot)" : "", total));
    }
    if (o_.scheduler == ReplayScheduler::kKueue && o_.quotas.count(j.tenant) && o_.quotas.at(j.tenant) < j.gpus) {
      return InvalidArgumentError(fmt::format("replay: job {} needs {} GPUs, above namespace {}'s Kueue quota of {}",
                                              j.job, j.gpus, j.tenant, o_.quotas.at(j.tenant)));
    }
    return Status::Ok();
  }

  // kube-scheduler: the existing node with the most GPUs free after the pod (LeastAllocated), else a
  // node the autoscaler adds. -1: none.
  int PickKube(const ReplayJob& j, int g, double t, std::vector<std::size_t>& created) {
    int best = -1;
    double best_score = -1;
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
      const Node& nd = nodes_[k];
      if (!nd.exists || !Eligible(j, nd) || nd.Free() < g) continue;
      const double score = static_cast<double>(nd.Free() - g) / nd.capacity;
      if (score > best_score) {
        best_score = score;
        best = static_cast<int>(k);
      }
    }
    if (best >= 0) return best;
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
      Node& nd = nodes_[k];
      if (nd.exists || !nd.autoscaled || !Eligible(j, nd) || nd.capacity < g) continue;
      nd.exists = true;
      nd.up_since = t;
      created.push_back(k);
      return static_cast<int>(k);
    }
    return -1;
  }
  // Slurm: the job's GPUs on the lowest-weight nodes: one node when one fits (best fit: the fewest
  // GPUs free), else filled node by node (lowest weight, most free first). Empty when it does not fit.
  std::vector<std::pair<std::size_t, int>> PlaceSlurm(const ReplayJob& j, const std::vector<int>& free) const {
    std::vector<std::size_t> cand;
    int total = 0;
    for (std::size_t k = 0; k < nodes_.size(); ++k) {
      if (Eligible(j, nodes_[k]) && free[k] > 0) {
        cand.push_back(k);
        total += free[k];
      }
    }
    if (total < j.gpus) return {};
    int single = -1;
    for (std::size_t k : cand) {
      if (free[k] < j.gpus) continue;
      const auto b = static_cast<std::size_t>(single);
      if (single < 0 || std::make_pair(Weight(nodes_[k].tier), free[k]) < std::make_pair(Weight(nodes_[b].tier), free[b])) {
        single = static_cast<int>(k);
      }
    }
    if (single >= 0 && j.pods <= 1) return {{static_cast<std::size_t>(single), j.gpus}};
    std::stable_sort(cand.begin(), cand.end(), [&](std::size_t a, std::size_t b) {
      return std::make_pair(Weight(nodes_[a].tier), -free[a]) < std::make_pair(Weight(nodes_[b].tier), -free[b]);
    });
    std::vector<std::pair<std::size_t, int>> pods;
    int left = j.gpus;
    for (std::size_t k : cand) {
      if (left == 0) break;
      const int g = std::min(left, free[k]);
      pods.emplace_back(k, g);
      left -= g;
    }
    return pods;
  }

  void Start(std::size_t i, double t, std::vector<std::pair<std::size_t, int>> pods, std::vector<double>& started) {
    const ReplayJob& j = jobs_[i];
    const double end = t + (j.end_s - j.start_s);
    std::map<Tier, int> by_tier;
    for (auto [node, g] : pods) {
      nodes_[node].used += g;
      by_tier[nodes_[node].tier] += g;
    }
    for (auto [tier, g] : by_tier) run_.push_back(AsRunInterval{j.job, j.gpu_type, tier, t, end, g});
    usage_[j.tenant] += j.gpus;
    started[i] = t;
    running_.push_back(Running{end, i, std::move(pods)});
  }

  void Schedule(double t, std::vector<double>& started) {
    // Services and notebooks first (a higher priority class), then by creation time.
    std::stable_sort(pending_.begin(), pending_.end(), [this](std::size_t a, std::size_t b) {
      const auto key = [this](std::size_t i) {
        return std::make_tuple(jobs_[i].kind == HistoryKind::kBatch ? 1 : 0, Release(i), i);
      };
      return key(a) < key(b);
    });
    std::vector<std::size_t> still;
    if (o_.scheduler == ReplayScheduler::kSlurm) {
      ScheduleSlurm(t, started, still);
    } else {
      for (std::size_t i : pending_) {
        const ReplayJob& j = jobs_[i];
        if (o_.scheduler == ReplayScheduler::kKueue && o_.quotas.count(j.tenant) &&
            usage_[j.tenant] + j.gpus > o_.quotas.at(j.tenant)) {
          still.push_back(i);
          continue;
        }
        std::vector<std::size_t> created;
        std::vector<std::pair<std::size_t, int>> pods;
        bool ok = true;
        for (int g : Pods(j)) {
          const int k = PickKube(j, g, t, created);
          if (k < 0) {
            ok = false;
            break;
          }
          nodes_[static_cast<std::size_t>(k)].used += g;  // the gang's next pod sees it
          pods.emplace_back(static_cast<std::size_t>(k), g);
        }
        for (auto [node, g] : pods) nodes_[node].used -= g;
        if (!ok) {  // all pods or none; nodes added for a gang that does not fit are not kept
          for (std::size_t k : created) nodes_[k].exists = false;
          still.push_back(i);
          continue;
        }
        Start(i, t, std::move(pods), started);
      }
    }
    pending_ = std::move(still);
  }

  void ScheduleSlurm(double t, std::vector<double>& started, std::vector<std::size_t>& still) {
    struct Reservation {
      double at = 0;
      std::set<std::size_t> nodes;
    };
    std::vector<Reservation> reservations;
    for (std::size_t i : pending_) {
      const ReplayJob& j = jobs_[i];
      std::vector<int> free(nodes_.size());
      for (std::size_t k = 0; k < nodes_.size(); ++k) free[k] = nodes_[k].Free();
      auto pods = PlaceSlurm(j, free);
      const double end = t + (j.end_s - j.start_s);
      bool conflicts = false;
      for (const Reservation& r : reservations) {
        if (end <= r.at) continue;
        for (auto [node, g] : pods) conflicts = conflicts || r.nodes.count(node) > 0;
      }
      if (!pods.empty() && !conflicts) {
        Start(i, t, std::move(pods), started);
        continue;
      }
      still.push_back(i);
      if (!pods.empty()) continue;  // fits but would delay a higher-priority job: waits
      // The earliest time it fits as running jobs end: its reservation (backfill's shadow time).
      std::vector<const Running*> by_end;
      for (const Running& r : running_) by_end.push_back(&r);
      std::sort(by_end.begin(), by_end.end(), [](const Running* a, const Running* b) { return a->end < b->end; });
      for (const Running* r : by_end) {
        for (auto [node, g] : r->pods) free[node] += g;
        auto later = PlaceSlurm(j, free);
        if (later.empty()) continue;
        Reservation res;
        res.at = r->end;
        for (auto [node, g] : later) res.nodes.insert(node);
        reservations.push_back(std::move(res));
        break;
      }
    }
  }

  const std::vector<ReplayJob>& jobs_;
  const ReplayOptions& o_;
  std::vector<Node> nodes_;
  std::vector<std::size_t> pending_;
  std::vector<Running> running_;
  std::set<double> timers_;
  std::map<std::string, int> usage_;
  std::vector<AsRunInterval> run_;
  std::vector<AsRunInterval> up_;
};

std::string Assumption(const ReplayOptions& o) {
  const std::string fixed = "services and notebooks held as they ran (they start at their real start, ahead of batch "
                            "jobs); each job runs as long as it ran";
  switch (o.scheduler) {
    case ReplayScheduler::kSlurm:
      return "replayed under Slurm's priority (age) and backfill at the history's submit times, nodes by weight (owned, "
             "reserved, then cloud nodes), best fit; " + fixed;
    case ReplayScheduler::kKueue:
      return fmt::format("replayed under Kueue ({}) then kube-scheduler's default profile at the history's submit "
                         "times: {}; ",
                         o.quotas.empty() ? "no namespace quotas given: admission never waits"
                                          : fmt::format("{} namespace GPU quotas, no borrowing", o.quotas.size()),
                         "pods in (priority, creation) order, LeastAllocated over the fleet's nodes, rented nodes added "
                         "by the cluster autoscaler when no node fits and removed when empty for 10 min") + fixed;
    case ReplayScheduler::kKube:
      break;
  }
  return fmt::format("replayed under kube-scheduler's default profile at the history's submit times: pods in (priority, "
                     "creation) order, gangs all pods or none, NodeResourcesFit LeastAllocated over the fleet's nodes "
                     "({} GPUs a node), rented nodes added by the cluster autoscaler when no node fits and removed when "
                     "empty for {:.0f} min; ",
                     o.gpus_per_node, o.scale_down_s / 60) + fixed;
}

}  // namespace

Result<ReplayOutcome> ReplayHistory(const FleetFile& fleet, const std::vector<ReplayJob>& jobs,
                                    const ReplayOptions& options) {
  if (options.gpus_per_node < 1) return InvalidArgumentError("replay: gpus_per_node must be >= 1");
  std::vector<Node> nodes;
  const bool slurm = options.scheduler == ReplayScheduler::kSlurm;
  const bool history_nodes = options.whole_nodes && (options.static_rented || slurm);
  // The history's node size of a rented pool (whole nodes), else the default.
  const auto node_size = [&options](const std::string& type, Tier tier, int fallback) {
    for (const ReplayOptions::HistoryNode& h : options.rented_nodes) {
      if (options.whole_nodes && h.gpu_type == type && h.tier == tier) return std::max(1, h.gpus);
    }
    return fallback;
  };
  for (const FleetFileGpu& g : fleet.gpus) {
    AddNodes(nodes, g.type, Tier::kOwned, g.owned, options.gpus_per_node, false);
    AddNodes(nodes, g.type, Tier::kReserved, g.reserved, options.gpus_per_node, false);
    if (history_nodes) continue;  // the history's rented nodes, below
    AddNodes(nodes, g.type, Tier::kOnDemand, g.on_demand_quota, node_size(g.type, Tier::kOnDemand, options.gpus_per_node),
             !slurm);
    int spot = 0, per = options.gpus_per_node;
    for (const FleetFileSpot& s : g.spot) {
      spot += s.max_gpus;
      per = std::max(1, s.gpus_per_instance);
    }
    AddNodes(nodes, g.type, Tier::kSpot, spot, node_size(g.type, Tier::kSpot, per), !slurm);
  }
  for (const ReplayOptions::HistoryNode& h : history_nodes ? options.rented_nodes : std::vector<ReplayOptions::HistoryNode>{}) {
    AddNodes(nodes, h.gpu_type, h.tier, h.gpus, h.gpus, false);
  }
  for (const ReplayJob& j : jobs) {
    if (j.gpus < 1 || j.end_s < j.start_s || j.submit_s > j.start_s) {
      return InvalidArgumentError(fmt::format("replay: job {}: {} GPUs, submit {} s, start {} s, end {} s (want GPUs >= "
                                              "1, submit <= start <= end)", j.job, j.gpus, j.submit_s, j.start_s, j.end_s));
    }
  }
  Replayer r(jobs, options, std::move(nodes));
  SEEDANCE_ASSIGN_OR_RETURN(ReplayOutcome out, r.Run());
  out.assumption = Assumption(options);
  if (options.whole_nodes) {
    out.assumption += options.static_rented || slurm
                          ? "; rented nodes: the history's, up all the window as they were, each billed whole"
                          : "; rented nodes of the history's size, each billed whole from its adding to its removal";
  }
  return out;
}

}  // namespace seedance::sim
