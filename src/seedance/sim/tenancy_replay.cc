#include "seedance/sim/tenancy_replay.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>
#include <memory>
#include <queue>
#include <set>
#include <tuple>

#include "seedance/cluster/trace_loader.h"
#include "seedance/core/check.h"
#include "seedance/core/rng.h"
#include "seedance/cost/money.h"
#include "seedance/cost/price_table.h"
#include "seedance/gpu/catalog.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/sched/victims.h"
#include "seedance/tenancy/fairness.h"
#include "seedance/tenancy/quota.h"

namespace seedance::sim {

using tenancy::TierPriority;

namespace {

constexpr int kGpusPerNode = 8;

// Whole GPUs per tenant from shares (largest remainder; every tenant with demand gets >= 1).
std::vector<int> Apportion(int total, const std::vector<double>& demand) {
  const std::size_t n = demand.size();
  double sum = 0;
  for (double d : demand) sum += d;
  std::vector<int> q(n, 0);
  if (n == 0) return q;
  std::vector<std::pair<double, std::size_t>> rem;
  int given = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double exact = sum > 0 ? total * demand[i] / sum : static_cast<double>(total) / static_cast<double>(n);
    q[i] = std::max(1, static_cast<int>(std::floor(exact)));
    given += q[i];
    rem.push_back({-(exact - std::floor(exact)), i});
  }
  std::sort(rem.begin(), rem.end());
  for (std::size_t k = 0; given < total && k < rem.size(); ++k, ++given) ++q[rem[k].second];
  // Too many after the minimum of 1: take back from the largest.
  while (given > total) {
    auto it = std::max_element(q.begin(), q.end());
    if (*it <= 1) break;
    --*it;
    --given;
  }
  return q;
}

void SeedJobTruth(TenancyJob& j, Rng& rng, const TenancyScenarioOptions& o) {
  j.checkpoint_s = 900 + rng.UniformDouble() * 2700;
  j.busy_util = 0.5 + 0.5 * rng.UniformDouble();
  const bool tail = rng.UniformDouble() < o.idle_tail_prob;
  const double len = rng.Exponential(1.0 / o.idle_tail_mean_s);
  j.idle_tail_s = tail ? len : 0.0;
}

std::vector<std::string> CommonAssumptions(const TenancyScenarioOptions& o) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Per job (seeded, seed %llu): checkpoint every U(15, 60) min; busy GPU utilization U(0.5, 1.0); "
                "with probability %.2f the job holds its GPUs idle after its work for Exp(mean %.1f h) "
                "(dev and notebook pods left running; the idle tail the reclaim sweep targets).",
                static_cast<unsigned long long>(o.seed), o.idle_tail_prob, o.idle_tail_mean_s / 3600);
  return {buf,
          "Admission sees requests, tiers, run time so far, time since the last checkpoint and GPU utilization "
          "(telemetry); never a job's length or its idle tail.",
          "Priorities: Gold 300, Silver 200, Bronze 100 in every mode; placement is sched's bestfit in every mode; "
          "preemption grace 0.5 s; a preempted job resumes from its last checkpoint."};
}

}  // namespace

Result<TenancyScenario> TenancyScenarioFromWorkload(const Workload& w, const tenancy::TenancyConfig& config,
                                                    double window_s, double usd_per_gpu_hour,
                                                    const TenancyScenarioOptions& o) {
  if (w.jobs.empty()) return InvalidArgumentError("tenancy replay: the workload has no jobs");
  // The GPU type most jobs can run on (ties: the first).
  std::size_t best = 0;
  int best_n = -1;
  for (std::size_t k = 0; k < w.gpu_types.size(); ++k) {
    int n = 0;
    for (const auto& j : w.jobs) n += j.steps_per_s[k] > 0 ? 1 : 0;
    if (n > best_n) {
      best_n = n;
      best = k;
    }
  }
  auto model = gpu::ParseGpuName(w.gpu_types[best], gpu::NameMatch::kName);
  if (!model.has_value()) return model.error();
  TenancyScenario s;
  s.name = w.name;
  s.gpu_type = w.gpu_types[best];
  s.usd_per_gpu_hour = usd_per_gpu_hour;
  s.window_s = window_s;
  s.config = config;
  s.config.tenants.clear();
  // Held out (o.window_start_s > 0): the replay is [start, start + window) shifted to 0, and the
  // quotas and the cluster come from the arrivals before `start` only.
  const double start = o.window_start_s;
  const bool held_out = start > 0;
  auto in_window = [&](const auto& j) { return j.arrival_s >= start && j.arrival_s < start + window_s; };
  std::map<std::string, int> tenant_index;
  std::set<std::string> names;
  for (const auto& j : w.jobs)
    if (in_window(j)) names.insert(j.tenant.empty() ? "default" : j.tenant);
  for (const auto& n : names) tenant_index.emplace(n, static_cast<int>(tenant_index.size()));
  std::vector<double> demand(names.size(), 0.0);  // GPU-seconds: whole workload, or (held out) history
  Rng rng(o.seed ^ 0x7e4a9c11ULL);
  int skipped = 0;
  double offered = 0;  // GPU-seconds of work inside the window (held out: inside the history)
  double trace_end = 0;
  for (const auto& j : w.jobs) {
    if (j.steps_per_s[best] <= 0) {
      ++skipped;
      continue;
    }
    auto ti = tenant_index.find(j.tenant.empty() ? "default" : j.tenant);
    if (ti == tenant_index.end()) continue;  // a tenant with no job in the window
    const int tenant = ti->second;
    const double work = j.total_steps / j.steps_per_s[best];
    const double g = std::min(j.gpus, kGpusPerNode);
    if (!held_out || j.arrival_s < start) demand[static_cast<std::size_t>(tenant)] += g * work;
    if (held_out && j.arrival_s < start) offered += g * std::max(0.0, std::min(work, start - j.arrival_s));
    trace_end = std::max(trace_end, j.arrival_s);
    if (!in_window(j)) continue;
    TenancyJob t;
    t.id = j.id;
    t.tenant = tenant;
    t.arrival_s = j.arrival_s - start;
    t.work_s = work;
    t.pod.name = std::to_string(j.id);
    t.pod.num_gpu = std::min(j.gpus, kGpusPerNode);
    t.pod.gpu_milli = cluster::kMilliPerGpu;
    t.pod.creation_s = static_cast<std::int64_t>(t.arrival_s);
    SeedJobTruth(t, rng, o);
    if (!held_out) offered += t.pod.num_gpu * std::max(0.0, std::min(t.work_s, window_s - t.arrival_s));
    s.jobs.push_back(std::move(t));
  }
  const double span = held_out ? start : window_s;
  const int gpus = std::max(kGpusPerNode, static_cast<int>(std::ceil(offered / span / o.target_load / kGpusPerNode)) * kGpusPerNode);
  for (int i = 0; i < gpus / kGpusPerNode; ++i) {
    cluster::NodeSpec n;
    n.name = "node-" + std::to_string(i);
    n.cpu = Millicores(96000);
    n.memory = MiB(768 * 1024);
    n.gpu_count = kGpusPerNode;
    n.model = cluster::GpuModelIndex(static_cast<std::int32_t>(*model));
    s.nodes.push_back(n);
  }
  s.total_gpus = gpus;
  const auto quota = Apportion(gpus, demand);
  std::map<std::string, const tenancy::TenantConfig*> configured;
  for (const auto& t : config.tenants) configured.emplace(t.name, &t);
  int k = 0;
  for (const auto& name : names) {
    tenancy::TenantConfig t;
    t.name = name;
    t.cohort = "all";
    auto it = configured.find(name);
    t.tier = it != configured.end() ? it->second->tier : static_cast<tenancy::Tier>(k % tenancy::kNumTiers);
    t.quota.push_back({"gpu", static_cast<double>(quota[static_cast<std::size_t>(k)]), std::nullopt, std::nullopt});
    if (it != configured.end()) {
      // A configured `gpu` quota (with its cohort and limits) replaces the derived one.
      for (const auto& q : it->second->quota) {
        if (q.resource != "gpu") continue;
        t.quota = {q};
        t.cohort = it->second->cohort;
      }
    }
    s.config.tenants.push_back(std::move(t));
    ++k;
  }
  for (auto& j : s.jobs) j.tier = s.config.tenants[static_cast<std::size_t>(j.tenant)].tier;
  char buf[640];
  if (held_out) {
    std::snprintf(buf, sizeof buf,
                  "Held-out window: days %.1f-%.1f of the trace, replayed from 0. Cluster: %d x 8 %s (mean offered GPU "
                  "demand over days 0-%.1f, the weeks before the window = %.0f%% of it); %zu tenants (those with jobs in "
                  "the window) in one cohort, nominal GPU quota = each tenant's share of GPU demand over days 0-%.1f only "
                  "(whole GPUs, at least 1; nothing from the window or later) unless the config gives a tenant a 'gpu' "
                  "quota; tiers %s.",
                  start / 86400, (start + window_s) / 86400, gpus / kGpusPerNode, s.gpu_type.c_str(), start / 86400,
                  o.target_load * 100, names.size(), start / 86400,
                  config.tenants.empty() ? "by tenant name in turn gold / silver / bronze" : "from the config");
  } else {
    std::snprintf(buf, sizeof buf,
                  "Cluster: %d x 8 %s (offered GPU demand over the %.1f-day window = %.0f%% of it); %zu tenants in one "
                  "cohort, nominal GPU quota = each tenant's share of GPU demand over the whole %.0f-day workload (whole "
                  "GPUs, at least 1; includes the replayed window and the weeks after it) unless the config gives a "
                  "tenant a 'gpu' quota; tiers %s.",
                  gpus / kGpusPerNode, s.gpu_type.c_str(), window_s / 86400, o.target_load * 100, names.size(),
                  std::max(window_s, trace_end) / 86400,
                  config.tenants.empty() ? "by tenant name in turn gold / silver / bronze" : "from the config");
  }
  s.assumptions.push_back(buf);
  if (skipped > 0) s.assumptions.push_back(std::to_string(skipped) + " jobs that cannot run on " + s.gpu_type + " skipped");
  for (auto& a : CommonAssumptions(o)) s.assumptions.push_back(a);
  return s;
}

Result<TenancyScenario> OpenbTenancyScenario(const std::string& nodes_csv, const std::string& pods_csv,
                                             const tenancy::TenancyConfig& config, double usd_per_gpu_hour,
                                             const TenancyScenarioOptions& o) {
  SEEDANCE_ASSIGN_OR_RETURN(auto nodes, cluster::LoadNodes(nodes_csv));
  SEEDANCE_ASSIGN_OR_RETURN(auto pods, cluster::LoadPods(pods_csv));
  TenancyScenario s;
  s.name = "openb";
  s.gpu_type = "openb GPUs (mixed models)";
  s.usd_per_gpu_hour = usd_per_gpu_hour;
  s.config = config;
  s.config.tenants.clear();
  // QoS -> tenant and tier.
  struct Class {
    const char* name;
    tenancy::Tier tier;
  };
  const Class classes[] = {{"ls", tenancy::Tier::kGold}, {"guaranteed", tenancy::Tier::kSilver}, {"burstable", tenancy::Tier::kSilver},
                           {"be", tenancy::Tier::kBronze}};
  auto class_of = [](cluster::Qos q) {
    switch (q) {
      case cluster::Qos::kLatencySensitive: return 0;
      case cluster::Qos::kGuaranteed: return 1;
      case cluster::Qos::kBurstable: return 2;
      case cluster::Qos::kBestEffort: return 3;
    }
    return 3;
  };
  Rng rng(o.seed ^ 0x0be7c0deULL);
  std::vector<double> demand(4, 0.0);
  double end = 0, offered = 0;
  std::int64_t id = 0;
  for (const auto& p : pods) {
    if (!p.is_gpu() || p.deletion_s <= p.creation_s) continue;
    TenancyJob j;
    j.id = id++;
    j.tenant = class_of(p.qos);
    j.tier = classes[j.tenant].tier;
    j.arrival_s = static_cast<double>(p.creation_s);
    j.work_s = static_cast<double>(p.deletion_s - p.creation_s);
    j.pod = p;
    SeedJobTruth(j, rng, o);
    const double gpus = static_cast<double>(p.total_gpu_milli()) / cluster::kMilliPerGpu;
    demand[static_cast<std::size_t>(j.tenant)] += gpus * j.work_s;
    offered += gpus * j.work_s;
    end = std::max(end, static_cast<double>(p.deletion_s));
    s.jobs.push_back(std::move(j));
  }
  std::sort(s.jobs.begin(), s.jobs.end(), [](const TenancyJob& a, const TenancyJob& b) {
    return std::tie(a.arrival_s, a.id) < std::tie(b.arrival_s, b.id);
  });
  s.window_s = end;
  // The trace's cluster is far larger than its load; keep every k-th GPU node (file order) so the
  // sample holds offered / target_load GPUs with the trace's mix of GPU models, and tenants contend.
  const double want = offered / end / o.target_load;
  double all_gpus = 0;
  for (const auto& n : nodes) all_gpus += n.gpu_count;
  const std::size_t stride = std::max<std::size_t>(1, static_cast<std::size_t>(std::floor(all_gpus / std::max(1.0, want))));
  double gpus = 0;
  for (std::size_t k = 0; k < nodes.size() && gpus < want; k += stride) {
    if (nodes[k].gpu_count == 0) continue;
    s.nodes.push_back(nodes[k]);
    gpus += nodes[k].gpu_count;
  }
  s.total_gpus = gpus;
  // Pods no node of the sample can ever hold (GPU model, size) are left out: they never run in
  // any mode.
  {
    const cluster::ClusterState empty(s.nodes);
    std::size_t dropped = 0;
    std::vector<TenancyJob> kept;
    for (auto& j : s.jobs) {
      if (empty.CanPlaceAnywhere(j.pod)) {
        kept.push_back(std::move(j));
      } else {
        ++dropped;
        demand[static_cast<std::size_t>(j.tenant)] -= static_cast<double>(j.pod.total_gpu_milli()) / cluster::kMilliPerGpu * j.work_s;
      }
    }
    s.jobs = std::move(kept);
    if (dropped > 0) s.assumptions.push_back(std::to_string(dropped) + " pods that no node of the sample can hold are left out");
  }
  std::vector<double> used;
  std::vector<int> used_class;
  for (int c = 0; c < 4; ++c) {
    if (demand[static_cast<std::size_t>(c)] > 0) {
      used.push_back(demand[static_cast<std::size_t>(c)]);
      used_class.push_back(c);
    }
  }
  const auto quota = Apportion(static_cast<int>(gpus), used);
  std::vector<int> remap(4, -1);
  for (std::size_t k = 0; k < used_class.size(); ++k) {
    const auto c = static_cast<std::size_t>(used_class[k]);
    remap[c] = static_cast<int>(k);
    tenancy::TenantConfig t;
    t.name = classes[c].name;
    t.cohort = "all";
    t.tier = classes[c].tier;
    t.quota.push_back({"gpu", static_cast<double>(quota[k]), std::nullopt, std::nullopt});
    s.config.tenants.push_back(std::move(t));
  }
  for (auto& j : s.jobs) j.tenant = remap[static_cast<std::size_t>(j.tenant)];
  // Fractional pods count as a whole GPU of quota (Kueue counts nvidia.com/gpu in whole units).
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "openb: %zu GPU pods over %.0f days, QoS -> tier (LS gold; Guaranteed, Burstable silver; BE bronze), "
                "one tenant per QoS class, nominal quota = its share of GPU demand; cluster = %zu nodes, every k-th of "
                "the node list (%.0f GPUs, offered demand = %.0f%% of it); run time = deletion - creation.",
                s.jobs.size(), end / 86400, s.nodes.size(), gpus, o.target_load * 100);
  s.assumptions.push_back(buf);
  for (auto& a : CommonAssumptions(o)) s.assumptions.push_back(a);
  return s;
}

namespace {

enum class JobState { kWaiting, kRunning, kTail, kEvicting, kDone };

struct JobRun {
  const TenancyJob* job = nullptr;
  JobState state = JobState::kWaiting;
  double remaining_s = 0;     // work left (truth)
  double run_start = -1;      // start of the current run
  double kept_at_start = 0;   // work done before this run (kept)
  double tail_start = -1;
  double first_start = -1;
  int gen = 0;                // invalidates scheduled events
  cluster::NodeId node;
  cluster::GpuAssignment gpus;
  bool gold_check = false;
  int kube_waiting = 0;       // kube-scheduler preemption: victims still terminating
  bool kube_evicted = false;  // evicted by kube-scheduler's preemption
  int preemptions = 0;
  std::int64_t evicted_by = -1;
};

enum class EventKind { kArrival = 0, kEvictDone = 1, kWorkDone = 2, kTailEnd = 3, kTick = 4 };

struct Event {
  double t;
  std::int64_t seq;
  EventKind kind;
  std::size_t job;
  int gen;
  bool operator>(const Event& o) const { return std::tie(t, seq) > std::tie(o.t, o.seq); }
};

class Replay final : public tenancy::AdmissionEnv {
 public:
  Replay(const TenancyScenario& s, tenancy::TenancyMode mode, bool compensation)
      : s_(s), mode_(mode), compensation_(compensation), state_(s.nodes) {}

  Result<TenancyOutcome> Run();

  // AdmissionEnv
  tenancy::RunningState Running(std::int64_t id) const override;
  bool CanPlace(const tenancy::WorkloadRequest& w) override;
  std::optional<std::vector<std::int64_t>> VictimsForFit(const tenancy::WorkloadRequest& w,
                                                         std::span<const tenancy::VictimCandidate> c) override;
  void OnAdmit(const tenancy::WorkloadRequest& w) override;

 private:
  std::size_t Index(std::int64_t id) const { return index_.at(id); }
  void Push(double t, EventKind k, std::size_t j, int gen) { events_.push({t, seq_++, k, j, gen}); }
  void Integrate(double t1);
  void Apply(const std::vector<tenancy::AdmissionDecision>& d);
  void Release(JobRun& r);
  void Start(std::size_t i, const sched::PlacementDecision& d);
  void KubeSchedule();
  sched::PlacementDecision Decide(std::size_t i);
  void DropNomination(std::size_t i);
  void EvictJob(std::size_t i, std::int64_t for_id, bool kube);
  void UpdateSeedanceSignals();

  const TenancyScenario& s_;
  tenancy::TenancyMode mode_;
  bool compensation_;
  cluster::ClusterState state_;
  sched::PolicyContext ctx_;
  std::unique_ptr<sched::PlacementPolicy> placer_;
  Rng placer_rng_{0};
  std::unique_ptr<tenancy::Admitter> admitter_;
  std::unique_ptr<tenancy::FairShareTracker> fair_;
  std::vector<JobRun> runs_;
  std::map<std::int64_t, std::size_t> index_;
  std::map<std::uint32_t, std::size_t> nominated_;  // node -> pod whose victims terminate there
  std::set<std::size_t> unscheduled_;  // admitted on quota, waiting for a node (Kueue modes)
  std::set<std::size_t> live_;  // jobs holding GPUs (running, idle tail, evicting)
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::int64_t seq_ = 0;
  double now_ = 0, last_t_ = 0;
  std::size_t unstarted_ = 0;  // jobs arrived in the window that have not started yet
  std::size_t nt_ = 0;
  std::vector<double> held_, demand_, work_held_;  // by tenant (GPUs)
  std::vector<std::multiset<int>> pending_gpus_;   // waiting jobs' GPU counts, by tenant
  std::vector<double> nominal_, guaranteed_;
  // Metrics over the window.
  double held_integral_ = 0, work_integral_ = 0;
  std::vector<double> borrowed_s_, honoured_s_, demand_s_;
  std::vector<std::vector<double>> buckets_;
  double bucket_s_ = 0;
  TenancyOutcome out_;
};

tenancy::RunningState Replay::Running(std::int64_t id) const {
  const JobRun& r = runs_[Index(id)];
  tenancy::RunningState rs;
  rs.admitted_at_s = r.run_start;
  rs.executed_s = r.run_start >= 0 ? now_ - r.run_start : 0;
  const double gpus = static_cast<double>(r.job->pod.total_gpu_milli()) / cluster::kMilliPerGpu;
  if (r.state == JobState::kTail) {
    rs.idle_s = now_ - r.tail_start;
  } else if (r.state == JobState::kRunning) {
    const double done = r.kept_at_start + (now_ - r.run_start);
    const double since_ckpt = std::fmod(done, r.job->checkpoint_s);
    rs.lost_if_preempted = gpus * since_ckpt;
    // Bronze's trigger is "0% utilization": a working job never reads as idle.
    rs.idle_s = 0;
  }
  return rs;
}

bool Replay::CanPlace(const tenancy::WorkloadRequest& w) {
  return state_.CanPlaceAnywhere(runs_[Index(w.id)].job->pod);
}

std::optional<std::vector<std::int64_t>> Replay::VictimsForFit(const tenancy::WorkloadRequest& w,
                                                               std::span<const tenancy::VictimCandidate> c) {
  std::vector<sched::PreemptionCandidate> cands;
  cands.reserve(c.size());
  for (const auto& v : c) {
    const JobRun& r = runs_[Index(v.id)];
    if (r.state != JobState::kRunning && r.state != JobState::kTail) continue;
    cands.push_back({v.id, r.node, r.job->pod, r.gpus, v.cost});
  }
  auto vs = sched::FindVictimsForFit(state_, runs_[Index(w.id)].job->pod, cands);
  if (!vs) return std::nullopt;
  return vs->victims;
}

sched::PlacementDecision Replay::Decide(std::size_t i) {
  // kube-scheduler's nominated nodes: a node where a preemptor's victims are terminating is kept
  // for it against pods of no higher priority.
  const int prio = TierPriority(runs_[i].job->tier);
  std::vector<cluster::NodeId> masked;
  for (const auto& [node, pod] : nominated_) {
    if (pod == i || TierPriority(runs_[pod].job->tier) < prio) continue;
    const cluster::NodeId n(node);
    if (state_.eligibility(n) == cluster::NodeEligibility::kAll) {
      state_.SetEligibility(n, cluster::NodeEligibility::kNone);
      masked.push_back(n);
    }
  }
  auto d = placer_->Decide(state_, runs_[i].job->pod, placer_rng_);
  for (auto n : masked) state_.SetEligibility(n, cluster::NodeEligibility::kAll);
  return d;
}

void Replay::DropNomination(std::size_t i) {
  for (auto it = nominated_.begin(); it != nominated_.end();) it = it->second == i ? nominated_.erase(it) : std::next(it);
}

void Replay::OnAdmit(const tenancy::WorkloadRequest& w) {
  const std::size_t i = Index(w.id);
  auto d = Decide(i);
  if (d.placed()) {
    Start(i, d);
  } else {
    // Admitted on quota (Kueue); the pod waits for kube-scheduler (KubeSchedule).
    SEEDANCE_CHECK(mode_ != tenancy::TenancyMode::kSeedance) << "admitted job " << w.id << " has no node";
    unscheduled_.insert(i);
  }
}

void Replay::Start(std::size_t i, const sched::PlacementDecision& d) {
  JobRun& r = runs_[i];
  DropNomination(i);
  state_.Bind(r.job->pod, d.node, d.gpus);
  out_.starts.push_back({r.job->id, now_, s_.nodes[d.node.value()].name});
  live_.insert(i);
  r.node = d.node;
  r.gpus = d.gpus;
  r.state = JobState::kRunning;
  r.run_start = now_;
  if (r.first_start < 0) {
    r.first_start = now_;
    if (r.job->arrival_s < s_.window_s) --unstarted_;
    if (r.gold_check && now_ - r.job->arrival_s > s_.config.cycle_s) ++out_.gold_guarantee_violations;
  }
  const auto t = static_cast<std::size_t>(r.job->tenant);
  const double gpus = static_cast<double>(r.job->pod.num_gpu);
  held_[t] += gpus;
  work_held_[t] += gpus;
  pending_gpus_[t].erase(pending_gpus_[t].find(r.job->pod.num_gpu));
  ++r.gen;
  Push(now_ + r.remaining_s, EventKind::kWorkDone, i, r.gen);
}

void Replay::KubeSchedule() {
  // kube-scheduler for pods Kueue admitted on quota: bind where one fits, else DefaultPreemption:
  // the node whose strictly-lower-priority pods, fewest and lowest first, free a fit. A pod whose
  // victims are terminating waits for them (its nominated node).
  std::vector<std::size_t> order(unscheduled_.begin(), unscheduled_.end());
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = *runs_[a].job;
    const auto& y = *runs_[b].job;
    return std::make_tuple(-TierPriority(x.tier), x.arrival_s, x.id) < std::make_tuple(-TierPriority(y.tier), y.arrival_s, y.id);
  });
  for (std::size_t i : order) {
    JobRun& r = runs_[i];
    if (r.kube_waiting > 0) continue;
    auto d = Decide(i);
    if (d.placed()) {
      unscheduled_.erase(i);
      Start(i, d);
      continue;
    }
    const int prio = TierPriority(r.job->tier);
    std::vector<sched::PreemptionCandidate> cands;
    for (std::size_t k : live_) {
      const JobRun& v = runs_[k];
      if (v.state == JobState::kEvicting || TierPriority(v.job->tier) >= prio) continue;
      cands.push_back({v.job->id, v.node, v.job->pod, v.gpus, 1.0 + TierPriority(v.job->tier) * 1e-3});
    }
    auto vs = sched::FindVictimsForFit(state_, r.job->pod, cands);
    if (!vs || vs->victims.empty()) continue;
    DropNomination(i);
    nominated_[vs->node.value()] = i;
    for (auto id : vs->victims) {
      EvictJob(Index(id), r.job->id, /*kube=*/true);
      ++r.kube_waiting;
    }
  }
}

void Replay::Release(JobRun& r) {
  state_.Unbind(r.job->pod, r.node, r.gpus);
  live_.erase(static_cast<std::size_t>(&r - runs_.data()));
  const auto t = static_cast<std::size_t>(r.job->tenant);
  held_[t] -= r.job->pod.num_gpu;
}

void Replay::Integrate(double t1) {
  const double t0 = last_t_;
  if (t1 <= t0) return;
  const double a = std::min(t0, s_.window_s), b = std::min(t1, s_.window_s);
  const double dt = b - a;
  if (dt > 0) {
    for (std::size_t t = 0; t < nt_; ++t) {
      held_integral_ += held_[t] * dt;
      work_integral_ += work_held_[t] * dt;
      borrowed_s_[t] += std::max(0.0, held_[t] - nominal_[t]) * dt;
      if (demand_[t] > 0) {
        demand_s_[t] += dt;
        // Honoured: no waiting job of the tenant would fit in what is left of its guarantee.
        const bool waiting_fits = !pending_gpus_[t].empty() &&
                                  *pending_gpus_[t].begin() <= guaranteed_[t] - held_[t] + 1e-9;
        if (!waiting_fits) honoured_s_[t] += dt;
      }
    }
    fair_->Advance(a, b, s_.total_gpus, demand_, held_);
  }
  // Share-over-time buckets (the window).
  double x = t0;
  while (x < std::min(t1, s_.window_s)) {
    const auto k = static_cast<std::size_t>(x / bucket_s_);
    const double edge = std::min({t1, s_.window_s, static_cast<double>(k + 1) * bucket_s_});
    if (buckets_.size() <= k) buckets_.resize(k + 1, std::vector<double>(nt_, 0.0));
    for (std::size_t t = 0; t < nt_; ++t) buckets_[k][t] += held_[t] * (edge - x) / bucket_s_;
    x = edge;
  }
  last_t_ = t1;
}

void Replay::UpdateSeedanceSignals() {
  // S4.2 elastic scale from each tenant's telemetry; S4.5 compensation from its deviation.
  std::vector<double> util_sum(nt_, 0.0), gpus(nt_, 0.0), min_idle(nt_, -1.0);
  for (std::size_t i : live_) {
    const JobRun& r = runs_[i];
    if (r.state != JobState::kRunning && r.state != JobState::kTail) continue;
    const auto t = static_cast<std::size_t>(r.job->tenant);
    const double g = r.job->pod.num_gpu;
    gpus[t] += g;
    if (r.state == JobState::kRunning) {
      util_sum[t] += g * r.job->busy_util;
      min_idle[t] = 0;
    } else if (min_idle[t] != 0) {
      const double idle = now_ - r.tail_start;
      min_idle[t] = min_idle[t] < 0 ? idle : std::min(min_idle[t], idle);
    }
  }
  for (std::size_t t = 0; t < nt_; ++t) {
    const auto& p = s_.config.tiers[static_cast<std::size_t>(s_.config.tenants[t].tier)];
    const double idle = min_idle[t] > 0 ? min_idle[t] : 0.0;
    const double util = gpus[t] > 0 ? util_sum[t] / gpus[t] : 0.0;
    admitter_->SetElasticScale(static_cast<int>(t), tenancy::ElasticScale(p, idle, util));
    admitter_->SetCompensation(static_cast<int>(t),
                               compensation_ ? tenancy::CompensationWeight(fair_->Deviation(static_cast<int>(t))) : 0.0);
  }
}

void Replay::Apply(const std::vector<tenancy::AdmissionDecision>& ds) {
  for (const auto& d : ds) {
    ++out_.admission_decisions;
    // Admissions were bound in OnAdmit; evictions start their grace period here.
    if (d.kind == tenancy::AdmissionDecision::Kind::kEvict) EvictJob(Index(d.id), d.for_id, /*kube=*/false);
  }
}

void Replay::EvictJob(std::size_t i, std::int64_t for_id, bool kube) {
  JobRun& r = runs_[i];
  if (r.state == JobState::kEvicting) return;  // already on its way out
  if (unscheduled_.erase(i) > 0) {
    DropNomination(i);
    // Admitted on quota but never bound (waiting for kube-scheduler): it just loses its quota.
    ++out_.preemptions;
    ++r.preemptions;
    admitter_->Evicted(r.job->id, /*requeue=*/true);
    return;
  }
  const JobRun& by = runs_[Index(for_id)];
  if (r.state == JobState::kTail) {
    ++out_.idle_reclaims;  // nothing lost: its work was done
  } else {
    ++out_.preemptions;
    ++r.preemptions;
    if (r.job->tier == tenancy::Tier::kGold && static_cast<int>(by.job->tier) > static_cast<int>(tenancy::Tier::kGold))
      ++out_.gold_preempted_by_lower;
    // Work since the last checkpoint is lost; the job stops making progress now.
    const double done = r.kept_at_start + (now_ - r.run_start);
    const double kept = std::floor(done / r.job->checkpoint_s) * r.job->checkpoint_s;
    out_.work_lost_gpu_hours += (done - kept) * r.job->pod.num_gpu / 3600.0;
    r.kept_at_start = kept;
    r.remaining_s = r.job->work_s - kept;
    work_held_[static_cast<std::size_t>(r.job->tenant)] -= r.job->pod.num_gpu;
  }
  r.evicted_by = for_id;
  r.kube_evicted = kube;
  r.state = JobState::kEvicting;
  ++r.gen;
  Push(now_ + s_.config.grace_s, EventKind::kEvictDone, i, r.gen);
}

Result<TenancyOutcome> Replay::Run() {
  // The policy keeps a reference to its context: it lives as long as the replay.
  ctx_.tie_rank.resize(s_.nodes.size());
  for (std::size_t i = 0; i < s_.nodes.size(); ++i) ctx_.tie_rank[i] = static_cast<std::uint32_t>(i);
  SEEDANCE_ASSIGN_OR_RETURN(placer_, sched::MakePlacementPolicy("bestfit", ctx_));
  SEEDANCE_ASSIGN_OR_RETURN(auto book, tenancy::QuotaBook::Build(s_.config.tenants, mode_ != tenancy::TenancyMode::kStrict));
  const int gpu_r = book.ResourceIndex("gpu");
  if (gpu_r < 0) return InvalidArgumentError("tenancy replay: tenants have no 'gpu' quota");
  nt_ = s_.config.tenants.size();
  held_.assign(nt_, 0);
  demand_.assign(nt_, 0);
  work_held_.assign(nt_, 0);
  pending_gpus_.assign(nt_, {});
  borrowed_s_.assign(nt_, 0);
  honoured_s_.assign(nt_, 0);
  demand_s_.assign(nt_, 0);
  for (std::size_t t = 0; t < nt_; ++t) {
    nominal_.push_back(tenancy::FromQuantity(book.nominal(static_cast<int>(t), gpu_r)));
    const auto& p = s_.config.tiers[static_cast<std::size_t>(s_.config.tenants[t].tier)];
    guaranteed_.push_back(std::floor(nominal_.back() * p.guaranteed_share + 1e-9));
  }
  fair_ = std::make_unique<tenancy::FairShareTracker>(nominal_, s_.config.fairness_window_s);
  admitter_ = std::make_unique<tenancy::Admitter>(std::move(book), mode_, s_.config);
  bucket_s_ = std::max(3600.0, s_.window_s / 100);
  runs_.resize(s_.jobs.size());
  for (std::size_t i = 0; i < s_.jobs.size(); ++i) {
    runs_[i].job = &s_.jobs[i];
    runs_[i].remaining_s = s_.jobs[i].work_s;
    index_.emplace(s_.jobs[i].id, i);
    Push(s_.jobs[i].arrival_s, EventKind::kArrival, i, 0);
  }
  const int nr = admitter_->book().num_resources();
  std::size_t active = 0;  // arrived, not done
  std::vector<tenancy::AdmissionDecision> decisions;
  double next_tick = -1;
  double next_sweep = 0;
  const double tick = mode_ == tenancy::TenancyMode::kSeedance ? std::min(s_.config.cycle_s, s_.config.reclaim_sweep_s)
                                                               : s_.config.cycle_s;
  // Runs until every job that arrived in the window has started (waits are then known) and the
  // window is over; jobs still running then are cut off (their work past it shapes no figure).
  unstarted_ = 0;
  for (const auto& j : s_.jobs) unstarted_ += j.arrival_s < s_.window_s ? 1 : 0;
  const double hard_stop = s_.window_s * 10;
  while (!events_.empty()) {
    const double t = events_.top().t;
    if (t >= s_.window_s && (unstarted_ == 0 || t > hard_stop)) break;
    Integrate(t);
    now_ = t;
    bool ticked = false;
    while (!events_.empty() && events_.top().t == t) {
      const Event e = events_.top();
      events_.pop();
      if (e.kind == EventKind::kTick) {
        ticked = true;
        continue;
      }
      JobRun& r = runs_[e.job];
      if (e.kind != EventKind::kArrival && e.gen != r.gen) continue;
      const auto ten = static_cast<std::size_t>(r.job->tenant);
      const double g = r.job->pod.num_gpu;
      switch (e.kind) {
        case EventKind::kArrival: {
          ++active;
          demand_[ten] += g;
          pending_gpus_[ten].insert(r.job->pod.num_gpu);
          tenancy::WorkloadRequest w;
          w.id = r.job->id;
          w.tenant = r.job->tenant;
          w.tier = r.job->tier;
          w.priority = TierPriority(r.job->tier);
          w.creation_s = r.job->arrival_s;
          w.request.assign(static_cast<std::size_t>(nr), 0);
          w.request[static_cast<std::size_t>(gpu_r)] = tenancy::ToQuantity(g);
          if (r.job->tier == tenancy::Tier::kGold) {
            // Guarantee 1: a Gold workload that fits within its tenant's unborrowed guaranteed quota.
            r.gold_check = admitter_->book().WithinShare(w.tenant, w.request, s_.config.tiers[0].guaranteed_share);
            if (r.gold_check && r.job->arrival_s < s_.window_s) ++out_.gold_guarantee_checks;
            if (r.job->arrival_s >= s_.window_s) r.gold_check = false;
          }
          admitter_->Submit(std::move(w));
          break;
        }
        case EventKind::kWorkDone:
          r.remaining_s = 0;
          work_held_[ten] -= g;
          if (r.job->idle_tail_s > 0) {
            r.state = JobState::kTail;
            r.tail_start = t;
            ++r.gen;
            Push(t + r.job->idle_tail_s, EventKind::kTailEnd, e.job, r.gen);
            break;
          }
          [[fallthrough]];
        case EventKind::kTailEnd:
          Release(r);
          r.state = JobState::kDone;
          ++r.gen;
          demand_[ten] -= g;
          --active;
          admitter_->Finished(r.job->id);
          break;
        case EventKind::kEvictDone: {
          Release(r);
          ++r.gen;
          if (r.kube_evicted) {
            JobRun& p = runs_[Index(r.evicted_by)];
            if (p.kube_waiting > 0) --p.kube_waiting;
            r.kube_evicted = false;
          }
          if (r.remaining_s <= 0) {  // reclaimed in its idle tail: the job is over
            r.state = JobState::kDone;
            demand_[ten] -= g;
            --active;
            admitter_->Evicted(r.job->id, /*requeue=*/false);
          } else {
            r.state = JobState::kWaiting;
            pending_gpus_[ten].insert(r.job->pod.num_gpu);
            admitter_->Evicted(r.job->id, /*requeue=*/true);
          }
          break;
        }
        case EventKind::kTick:
          break;
      }
    }
    if (mode_ == tenancy::TenancyMode::kSeedance) {
      UpdateSeedanceSignals();
      if (ticked && t >= next_sweep) {
        // S4.1 idle reclaim, every reclaim_sweep_s: allocations idle beyond their tier's
        // tolerance are released.
        next_sweep = t + s_.config.reclaim_sweep_s;
        for (auto id : admitter_->IdleSweep(*this)) {
          JobRun& r = runs_[Index(id)];
          if (r.state != JobState::kTail) continue;
          ++out_.idle_reclaims;
          const auto ten = static_cast<std::size_t>(r.job->tenant);
          Release(r);
          r.state = JobState::kDone;
          ++r.gen;
          demand_[ten] -= r.job->pod.num_gpu;
          --active;
          admitter_->Finished(id);
        }
      }
    }
    // Pods already admitted and waiting for a node go first (their nominated nodes are theirs).
    if (!unscheduled_.empty()) KubeSchedule();
    decisions.clear();
    admitter_->Cycle(t, *this, &decisions);
    Apply(decisions);
    if (!unscheduled_.empty()) KubeSchedule();
    // Periodic cycles while work waits or (Seedance) idle allocations may need reclaiming.
    if (active > 0 && (next_tick < 0 || next_tick <= t)) {
      next_tick = t + tick;
      Push(next_tick, EventKind::kTick, 0, 0);
    }
    if (active == 0) next_tick = -1;
  }
  // Outcome.
  out_.mode = std::string(tenancy::TenancyModeName(mode_));
  if (mode_ == tenancy::TenancyMode::kSeedance && !compensation_) out_.mode += "-no-compensation";
  const double cap = s_.total_gpus * s_.window_s;
  out_.gpu_allocation_pct = cap > 0 ? 100.0 * held_integral_ / cap : 0;
  out_.busy_allocation_pct = cap > 0 ? 100.0 * work_integral_ / cap : 0;
  std::vector<double> ratio;
  for (std::size_t t = 0; t < nt_; ++t) {
    TenantOutcome o;
    o.tenant = s_.config.tenants[t].name;
    o.tier = s_.config.tenants[t].tier;
    o.nominal_gpus = nominal_[t];
    std::vector<double> waits;
    for (const auto& r : runs_) {
      if (static_cast<std::size_t>(r.job->tenant) != t || r.job->arrival_s >= s_.window_s) continue;
      ++o.jobs;
      o.preemptions += r.preemptions;
      waits.push_back(((r.first_start >= 0 ? r.first_start : now_) - r.job->arrival_s) / 3600.0);
      if (r.first_start < 0) ++out_.unstarted;
    }
    std::sort(waits.begin(), waits.end());
    auto pct = [&](double q) {
      if (waits.empty()) return 0.0;
      const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(waits.size()))) - 1;
      return waits[std::min(k, waits.size() - 1)];
    };
    o.wait_p50_h = pct(0.5);
    o.wait_p99_h = pct(0.99);
    o.guaranteed_share_honoured_pct = demand_s_[t] > 0 ? 100.0 * honoured_s_[t] / demand_s_[t] : 100.0;
    o.borrowed_gpu_hours = borrowed_s_[t] / 3600.0;
    o.held_gpu_hours = fair_->total_held()[t] / 3600.0;
    o.fair_gpu_hours = fair_->total_fair()[t] / 3600.0;
    o.cost_usd = o.held_gpu_hours * s_.usd_per_gpu_hour;
    if (o.fair_gpu_hours > 1e-6) ratio.push_back(o.held_gpu_hours / o.fair_gpu_hours);
    out_.per_tenant.push_back(std::move(o));
  }
  out_.jain_index = tenancy::JainIndex(ratio);
  out_.bucket_s = bucket_s_;
  out_.share_gpus = std::move(buckets_);
  return out_;
}

}  // namespace

Result<TenancyOutcome> RunTenancyReplay(const TenancyScenario& scenario, tenancy::TenancyMode mode,
                                        bool fairness_compensation) {
  Replay r(scenario, mode, fairness_compensation);
  return r.Run();
}

Result<TenancyComparison> RunTenancyComparison(const ScenarioSpec& spec, const std::vector<tenancy::TenancyMode>& modes,
                                               const std::function<void(const std::string&)>& progress,
                                               double window_start_s) {
  SEEDANCE_ASSIGN_OR_RETURN(cost::PriceTable prices, cost::PriceTable::LoadFile(PricePath(spec)));
  TenancyScenarioOptions opts;
  opts.seed = spec.seed;
  opts.window_start_s = window_start_s;
  if (window_start_s < 0) return InvalidArgumentError("tenancy window start: must be >= 0");
  if (window_start_s > 0 && spec.workload == "openb") {
    return InvalidArgumentError("tenancy window start: openb's tenancy replay takes the whole trace (philly, gavel or a CSV only)");
  }
  TenancyComparison c;
  if (spec.workload == "openb") {
    // openb's GPU models are priced like a V100 (the price table's proxy rows say why).
    SEEDANCE_ASSIGN_OR_RETURN(double usd, OnDemandPrice(prices, "V100M16"));
    SEEDANCE_ASSIGN_OR_RETURN(c.scenario, OpenbTenancyScenario(spec.data_dir + "/openb/openb_node_list_gpu_node.csv",
                                                               spec.data_dir + "/openb/openb_pod_list_default.csv",
                                                               spec.config.tenancy, usd, opts));
  } else {
    Workload w;
    FleetSpec fleet;
    std::vector<std::string> notes;
    // Quotas come from the workload's whole history (Philly: its 125 days), the replay from the
    // arrival window; held out (window_start_s > 0), both from the arrivals before the window.
    ScenarioSpec whole = spec;
    if (spec.workload == "philly") whole.duration_s = 400 * 86400.0;
    if (window_start_s > 0 && spec.workload != "philly") whole.duration_s = window_start_s + (spec.duration_s > 0 ? spec.duration_s : 7 * 86400.0);
    SEEDANCE_RETURN_IF_ERROR(BuildScenario(whole, &w, &fleet, &notes));
    const double window = spec.duration_s > 0 ? spec.duration_s : 7 * 86400.0;
    SEEDANCE_ASSIGN_OR_RETURN(c.scenario, TenancyScenarioFromWorkload(w, spec.config.tenancy, window, 0.0, opts));
    SEEDANCE_ASSIGN_OR_RETURN(c.scenario.usd_per_gpu_hour, OnDemandPrice(prices, c.scenario.gpu_type));
  }
  std::vector<std::pair<tenancy::TenancyMode, bool>> runs;
  for (auto m : modes) runs.push_back({m, true});
  for (auto m : modes)
    if (m == tenancy::TenancyMode::kSeedance) runs.push_back({m, false});
  for (const auto& [mode, comp] : runs) {
    if (progress) progress(std::string("tenancy replay: ") + std::string(tenancy::TenancyModeName(mode)) + (comp ? "" : " (no compensation)"));
    SEEDANCE_ASSIGN_OR_RETURN(auto o, RunTenancyReplay(c.scenario, mode, comp));
    c.outcomes.push_back(std::move(o));
  }
  return c;
}

}  // namespace seedance::sim
