#include "seedance/fleet/engine.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "seedance/core/rng.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/sched/victims.h"
#include "seedance/tenancy/fairness.h"
#include "seedance/tenancy/quota.h"
#include "seedance/tenancy/tiers.h"

namespace seedance::fleet {

StackConfig StandardStack(const std::string& placement) {
  StackConfig s;
  s.name = "standard (" + placement + ")";
  s.placement = placement;
  return s;
}

StackConfig SeedanceStack() {
  StackConfig s;
  s.name = "seedance";
  s.tenancy = tenancy::TenancyMode::kSeedance;
  s.placement = "seedance";
  s.cost_aware = true;
  s.batching = "seedance";
  s.serving_planner = true;
  s.predictive = true;
  return s;
}

const char* UseName(int use) {
  static const char* kNames[] = {"training", "serving", "dev active", "dev idle", "free on held nodes", "booting"};
  return use >= 0 && use < kNumUses ? kNames[use] : "?";
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kModelLoadS = 60;    // a serving replica loads its model on a node that is up
constexpr std::int64_t kCpuPerGpu = 10000;   // milli-cores a pod asks per GPU
constexpr std::int64_t kMemPerGpu = 100 * 1024;  // MiB a pod asks per GPU

enum class Phase { kDown, kBooting, kUp };
struct Slot {
  Phase phase = Phase::kDown;
  double ready_at = 0;
  double empty_since = 0;
  int gpus = kGpusPerNode;
};

struct PoolRun {
  const sim::PoolSpec* spec = nullptr;
  int index = 0;
  std::vector<Slot> slots;
  std::unique_ptr<cluster::ClusterState> state;
  sched::PolicyContext ctx;
  std::unique_ptr<sched::PlacementPolicy> policy;
  bool committed() const { return sim::AlwaysHeld(spec->tier); }
  // Spot: preemptions seen so far and GPU-seconds held (the trailing rate Seedance prices spot by).
  double held_gpu_s = 0;
  int drops = 0;
};

struct Where {
  int pool = -1;
  cluster::NodeId node;
  cluster::GpuAssignment gpus;
  bool placed() const { return pool >= 0; }
};

enum class JobState { kQueued, kPending, kRunning, kDone };
struct JobRun {
  const TrainingJob* job = nullptr;
  JobState state = JobState::kQueued;
  cluster::PodSpec pod;
  Where where;
  double done = 0;          // steps kept (lost work subtracted)
  double seg_start = 0;     // when the current placement started running (after restart)
  double admitted_at = -1;
  double finish = -1;
  bool gold_check = false;
  bool gold_ok = false;
  int restarts = 0;
};

enum class DevState { kQueued, kPending, kActive, kTail, kDone };
struct DevRun {
  const DevPod* dev = nullptr;
  DevState state = DevState::kQueued;
  cluster::PodSpec pod;
  Where where;
  double start = -1, tail_start = -1;  // start: of the current placement
  double active_done = 0;              // active seconds before the current placement (evictions)
  bool waited = false;                 // its first wait is recorded
};

struct Replica {
  int deployment = 0;
  int type = 0;        // index into the deployment profile's gpus
  int fleet_type = 0;  // index into fleet.gpu_types
  cluster::PodSpec pod;
  Where where;
  double ready_at = kInf;
  double requested_at = 0;
};

class Engine final : public tenancy::AdmissionEnv {
 public:
  Engine(const FleetWeekScenario& s, const StackConfig& c) : s_(s), c_(c) {}
  Result<FleetWeekOutcome> Run();

  // AdmissionEnv
  tenancy::RunningState Running(std::int64_t id) const override;
  bool CanPlace(const tenancy::WorkloadRequest& w) override;
  std::optional<std::vector<std::int64_t>> VictimsForFit(const tenancy::WorkloadRequest& w,
                                                         std::span<const tenancy::VictimCandidate> c) override;
  void OnAdmit(const tenancy::WorkloadRequest& w) override;

 private:
  Status Setup();
  // Pool order for a pod (the stack's rules); types = fleet type indices the pod may use.
  std::vector<int> TrainingCandidates(const JobRun& r) const;
  std::vector<int> TypeCandidates(int fleet_type) const;
  bool TryPlace(const cluster::PodSpec& pod, const std::vector<int>& cands, Where* out);
  bool CouldPlace(const cluster::PodSpec& pod, const std::vector<int>& cands);
  bool BootRoom(int pool, int gpus) const;
  bool ClaimBoot(const std::vector<int>& cands, int gpus);
  void Release(Where& w, const cluster::PodSpec& pod);
  void StartJob(JobRun& r);
  void PreemptJob(JobRun& r, bool by_admission);
  void EndDev(DevRun& d, bool reclaimed);
  void StartDev(DevRun& d);
  void EvictDev(DevRun& d);
  void SpotReconcile();
  void Serving(std::size_t k);
  void PlacePending();
  void ScaleDown();
  void MigrateToCommitted();
  void Account(double dt);
  void UpdateSignals(double dt);
  int SpotAvailable(const PoolRun& p) const;
  int NodesHeld(const PoolRun& p) const;
  double PriceOf(int pool) const { return pools_[static_cast<std::size_t>(pool)].spec->PriceAt(now_); }
  bool IsJob(std::int64_t id) const { return id < dev_base_; }

  const FleetWeekScenario& s_;
  const StackConfig& c_;
  std::vector<PoolRun> pools_;
  std::vector<JobRun> jobs_;
  std::vector<DevRun> devs_;
  std::map<std::int64_t, std::size_t> job_index_, dev_index_;
  std::int64_t dev_base_ = 0;
  std::vector<Replica> replicas_;
  std::vector<ServingController> controllers_;
  std::vector<const ServingProfile*> profiles_;
  std::vector<std::vector<int>> profile_fleet_type_;  // [deployment][profile type] -> fleet type
  std::unique_ptr<tenancy::Admitter> admitter_;
  std::unique_ptr<tenancy::FairShareTracker> fair_;
  std::vector<std::size_t> pending_jobs_;   // admitted, waiting for a node (admission order)
  std::vector<std::size_t> pending_devs_;
  std::vector<int> boot_claimed_;           // per pool, GPUs of booting nodes claimed this step
  Rng rng_{0x5eedf1ee7ULL};
  double now_ = 0;
  FleetWeekOutcome out_;
  std::vector<double> jct_h_;
  std::vector<double> dev_wait_min_;
  std::vector<double> mtok_in_slo_, mtok_demanded_;
  std::array<double, kNumUses> hour_acc_{};
  std::map<std::pair<std::size_t, std::vector<int>>, double> served_memo_;  // MaxServedRps by ready mix
};

Status Engine::Setup() {
  // Pools: nodes of 8 GPUs (a committed pool's last node holds the remainder).
  for (std::size_t i = 0; i < s_.fleet.pools.size(); ++i) {
    const sim::PoolSpec& ps = s_.fleet.pools[i];
    PoolRun p;
    p.spec = &ps;
    p.index = static_cast<int>(i);
    const int n = (ps.max_gpus + kGpusPerNode - 1) / kGpusPerNode;
    std::vector<cluster::NodeSpec> nodes;
    SEEDANCE_ASSIGN_OR_RETURN(const cluster::GpuModelIndex model,
                              cluster::ParseGpuModel(s_.fleet.gpu_types[static_cast<std::size_t>(ps.type)]));
    for (int k = 0; k < n; ++k) {
      Slot slot;
      slot.gpus = std::min(kGpusPerNode, ps.max_gpus - k * kGpusPerNode);
      if (p.committed()) slot.phase = Phase::kUp;
      p.slots.push_back(slot);
      nodes.push_back({"p" + std::to_string(i) + "-n" + std::to_string(k), Millicores(slot.gpus * kCpuPerGpu + 16000),
                       MiB(slot.gpus * kMemPerGpu + 64 * 1024), slot.gpus, model});
    }
    p.state = std::make_unique<cluster::ClusterState>(nodes);
    for (int k = 0; k < n; ++k) {
      if (p.slots[static_cast<std::size_t>(k)].phase != Phase::kUp) {
        p.state->SetEligibility(cluster::NodeId(static_cast<std::uint32_t>(k)), cluster::NodeEligibility::kNone);
      }
    }
    p.ctx = sched::NameOrderPolicyContext(nodes, {});
    pools_.push_back(std::move(p));
    // The policy keeps a reference to the context: create it once the pool has its final address.
  }
  for (auto& p : pools_) {
    SEEDANCE_ASSIGN_OR_RETURN(p.policy, sched::MakePlacementPolicy(c_.placement, p.ctx));
  }
  boot_claimed_.assign(pools_.size(), 0);

  // Workloads.
  for (const TrainingJob& j : s_.jobs) {
    JobRun r;
    r.job = &j;
    r.pod.name = "job-" + std::to_string(j.id);
    r.pod.cpu = Millicores(j.gpus * kCpuPerGpu);
    r.pod.memory = MiB(j.gpus * kMemPerGpu);
    r.pod.num_gpu = j.gpus;
    r.pod.gpu_milli = cluster::kMilliPerGpu;
    job_index_[j.id] = jobs_.size();
    jobs_.push_back(r);
    dev_base_ = std::max(dev_base_, j.id + 1);
  }
  for (const DevPod& d : s_.dev) {
    DevRun r;
    r.dev = &d;
    r.pod.name = "dev-" + std::to_string(d.id);
    r.pod.cpu = Millicores(kCpuPerGpu);
    r.pod.memory = MiB(kMemPerGpu);
    r.pod.num_gpu = 1;
    r.pod.gpu_milli = cluster::kMilliPerGpu;
    dev_index_[d.id] = devs_.size();
    devs_.push_back(r);
    if (d.id < dev_base_) return InternalError("dev pod ids must follow the training job ids");
  }

  // Admission.
  SEEDANCE_ASSIGN_OR_RETURN(auto book, tenancy::QuotaBook::Build(s_.tenancy.tenants, /*allow_borrowing=*/true));
  std::vector<double> nominal;
  for (const auto& t : s_.tenancy.tenants) nominal.push_back(t.quota.empty() ? 0.0 : t.quota[0].nominal);
  fair_ = std::make_unique<tenancy::FairShareTracker>(nominal, s_.tenancy.fairness_window_s);
  admitter_ = std::make_unique<tenancy::Admitter>(std::move(book), c_.tenancy, s_.tenancy);

  // Serving controllers.
  // The on-demand price of each of a profile's GPU types, and their fleet types.
  auto types_and_prices = [&](const ServingProfile& prof, std::vector<int>* ft, std::vector<double>* prices) -> Status {
    for (const std::string& g : prof.gpus) {
      int f = -1;
      for (std::size_t k = 0; k < s_.fleet.gpu_types.size(); ++k) {
        if (s_.fleet.gpu_types[k] == g) f = static_cast<int>(k);
      }
      if (f < 0) return InternalError("serving type " + g + " is not a fleet type");
      ft->push_back(f);
      const int od = s_.fleet.FindPool(f, sim::Tier::kOnDemand);
      prices->push_back(od >= 0 ? s_.fleet.pools[static_cast<std::size_t>(od)].usd_per_gpu_hour : 0.0);
    }
    return Status::Ok();
  };
  // A replica serves once its node is up and its model loaded.
  const double cold = s_.fleet.cold_start_s + kModelLoadS;
  // Every controller is tuned on the tuning week of the same deployment (the standard stack's HPA
  // target utilization and minReplicas, Seedance's target and headroom): the cheapest setting that
  // served >= 99 % there -- and, for every other setting than the standard one, at least the
  // share the standard stack's tuned HPA served there, so that no layer buys its saving with a
  // lower serving SLO than the standard stack's.
  auto tuned_for = [&](const ServingDeployment& sd, const std::string& batching, const std::string& autoscaler,
                       bool mix, double min_share) -> Result<std::pair<ServingPolicy, double>> {
    const std::string key = sd.spec.name + "|" + batching + "|" + autoscaler + "|" + (mix ? "mix" : "single");
    auto& cache = s_.tuned->by_key;
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    const ServingProfile& prof = batching == "seedance" ? sd.seedance : sd.vllm;
    ServingPolicy pol;
    pol.autoscaler = autoscaler;
    pol.mix = mix;
    if (sd.tuning_demand.rps.empty()) return std::make_pair(pol, kMinServedShare);
    std::vector<int> ft;
    std::vector<double> prices;
    SEEDANCE_RETURN_IF_ERROR(types_and_prices(prof, &ft, &prices));
    auto tuned = autoscaler == "predictive"
                     ? TunePredictive(prof, pol, sd.tuning_demand, sd.tuning_history.rps, prices, cold, min_share)
                     : TuneReactive(prof, pol, sd.tuning_demand, sd.tuning_history.rps, prices, cold, min_share);
    if (!tuned.has_value()) return tuned.error();
    const auto entry = std::make_pair(tuned->policy, tuned->rows[static_cast<std::size_t>(tuned->chosen)].eval.served_share);
    cache[key] = entry;
    return entry;
  };
  for (std::size_t d = 0; d < s_.serving.size(); ++d) {
    const ServingDeployment& sd = s_.serving[d];
    const ServingProfile& prof = c_.batching == "seedance" ? sd.seedance : sd.vllm;
    profiles_.push_back(&prof);
    std::vector<int> ft;
    std::vector<double> prices;
    SEEDANCE_RETURN_IF_ERROR(types_and_prices(prof, &ft, &prices));
    profile_fleet_type_.push_back(ft);
    SEEDANCE_ASSIGN_OR_RETURN(const auto standard, tuned_for(sd, "vllm", "reactive", false, kMinServedShare));
    const std::string autoscaler = c_.serving_planner && c_.predictive ? "predictive" : "reactive";
    SEEDANCE_ASSIGN_OR_RETURN(const auto tuned, tuned_for(sd, c_.batching, autoscaler, c_.serving_planner,
                                                          std::max(kMinServedShare, standard.second)));
    const ServingPolicy& pol = tuned.first;
    controllers_.emplace_back(prof, pol, prices, sd.tuning_peak_rps, kStepS, cold);
    controllers_.back().SetHistory(sd.history.rps);  // the week before: what the forecaster reads
    out_.serving_description += (d ? "; " : "") + sd.spec.name + ": " + controllers_.back().Describe();
  }
  mtok_in_slo_.assign(s_.serving.size(), 0.0);
  mtok_demanded_.assign(s_.serving.size(), 0.0);
  return Status::Ok();
}

int Engine::NodesHeld(const PoolRun& p) const {
  int n = 0;
  for (const Slot& s : p.slots) n += s.phase != Phase::kDown;
  return n;
}

int Engine::SpotAvailable(const PoolRun& p) const {
  if (p.spec->tier != sim::Tier::kSpot || p.spec->spot.empty()) return p.spec->max_gpus;
  return std::min(p.spec->max_gpus, p.spec->spot.AvailableAt(now_));
}

bool Engine::BootRoom(int pool, int gpus) const {
  const PoolRun& p = pools_[static_cast<std::size_t>(pool)];
  if (p.committed() || gpus > kGpusPerNode) return false;
  const int held = NodesHeld(p);
  if (held >= static_cast<int>(p.slots.size())) return false;
  return (held + 1) * kGpusPerNode <= SpotAvailable(p);
}

std::vector<int> Engine::TypeCandidates(int fleet_type) const {
  // A fixed GPU type (notebooks, serving replicas): committed pools first (Kueue's flavor order;
  // their marginal price is 0), then on-demand.
  std::vector<int> out;
  for (const auto& p : pools_) {
    if (p.spec->type == fleet_type && p.committed()) out.push_back(p.index);
  }
  const int od = s_.fleet.FindPool(fleet_type, sim::Tier::kOnDemand);
  if (od >= 0) out.push_back(od);
  return out;
}

std::vector<int> Engine::TrainingCandidates(const JobRun& r) const {
  const TrainingJob& j = *r.job;
  struct Cand {
    double key;
    int pool;
  };
  std::vector<Cand> committed, cloud;
  const double remaining_est = j.user_estimate_steps > 0 ? std::max(0.0, j.user_estimate_steps - r.done) : 0.0;
  for (const auto& p : pools_) {
    const double speed = j.steps_per_s[static_cast<std::size_t>(p.spec->type)];
    if (speed <= 0) continue;
    if (p.committed()) {
      // Both stacks: owned / reserved first (Kueue's first flavor; marginal price 0), fastest first.
      committed.push_back({-speed, p.index});
      continue;
    }
    const double usd_per_step = PriceOf(p.index) * j.gpus / speed;
    if (!c_.cost_aware) {
      // SkyPilot any_of: the optimizer's dollars per step, spot at its own price.
      cloud.push_back({usd_per_step, p.index});
      continue;
    }
    // Seedance: spot at its expected cost, the work lost per preemption (half a checkpoint
    // interval plus the restart and a new node's cold start) times the node preemption rate seen
    // so far on this pool; a job whose deadline the submitter's estimate says spot could miss
    // (less than 2x slack) avoids spot, and an on-demand type too slow for the deadline by that
    // estimate goes last. Without an estimate the deadline says nothing about the work left.
    double key = usd_per_step;
    if (p.spec->tier == sim::Tier::kSpot) {
      const double node_drops_per_s = p.held_gpu_s > 0 ? p.drops / p.held_gpu_s * kGpusPerNode : 1.0 / (6 * 3600.0);
      const double lost_s = j.checkpoint_s / 2 + s_.fleet.restart_s + s_.fleet.cold_start_s;
      key *= 1.0 + node_drops_per_s * lost_s;
      if (std::isfinite(j.deadline_s) && remaining_est > 0 && 2.0 * remaining_est / speed > j.deadline_s - now_) continue;
    } else if (std::isfinite(j.deadline_s) && remaining_est > 0 && remaining_est / speed > j.deadline_s - now_) {
      key += 1e6;
    }
    cloud.push_back({key, p.index});
  }
  auto by_key = [](const Cand& a, const Cand& b) { return std::tie(a.key, a.pool) < std::tie(b.key, b.pool); };
  std::sort(committed.begin(), committed.end(), by_key);
  std::sort(cloud.begin(), cloud.end(), by_key);
  std::vector<int> out;
  for (const auto& c : committed) out.push_back(c.pool);
  for (const auto& c : cloud) out.push_back(c.pool);
  return out;
}

bool Engine::TryPlace(const cluster::PodSpec& pod, const std::vector<int>& cands, Where* out) {
  for (int pi : cands) {
    PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    const sched::PlacementDecision d = p.policy->Decide(*p.state, pod, rng_);
    if (!d.placed()) continue;
    p.state->Bind(pod, d.node, d.gpus);
    out->pool = pi;
    out->node = d.node;
    out->gpus = d.gpus;
    return true;
  }
  return false;
}

bool Engine::CouldPlace(const cluster::PodSpec& pod, const std::vector<int>& cands) {
  for (int pi : cands) {
    PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    if (p.state->CanPlaceAnywhere(pod) || BootRoom(pi, pod.num_gpu)) return true;
  }
  return false;
}

bool Engine::ClaimBoot(const std::vector<int>& cands, int gpus) {
  // A pending pod first claims room on a node already booting in one of its pools; else the
  // cluster autoscaler boots a node in the first pool with room.
  for (int pi : cands) {
    PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    int booting = 0;
    for (const Slot& s : p.slots) booting += s.phase == Phase::kBooting ? s.gpus : 0;
    int& claimed = boot_claimed_[static_cast<std::size_t>(pi)];
    if (booting - claimed >= gpus) {
      claimed += gpus;
      return true;
    }
  }
  for (int pi : cands) {
    if (!BootRoom(pi, gpus)) continue;
    PoolRun& p = pools_[static_cast<std::size_t>(pi)];
    for (Slot& s : p.slots) {
      if (s.phase != Phase::kDown) continue;
      s.phase = Phase::kBooting;
      s.ready_at = now_ + s_.fleet.cold_start_s;
      ++out_.nodes_booted;
      boot_claimed_[static_cast<std::size_t>(pi)] += gpus;
      return true;
    }
  }
  return false;
}

void Engine::Release(Where& w, const cluster::PodSpec& pod) {
  if (!w.placed()) return;
  PoolRun& p = pools_[static_cast<std::size_t>(w.pool)];
  p.state->Unbind(pod, w.node, w.gpus);
  Slot& slot = p.slots[w.node.value()];
  if (p.state->node(w.node).TotalGpuIdle() == slot.gpus * cluster::kMilliPerGpu) slot.empty_since = now_;
  w = Where{};
}

tenancy::RunningState Engine::Running(std::int64_t id) const {
  tenancy::RunningState rs;
  if (IsJob(id)) {
    const JobRun& r = jobs_[job_index_.at(id)];
    rs.admitted_at_s = r.admitted_at;
    if (r.state == JobState::kRunning) {
      rs.executed_s = now_ - r.seg_start;
      const double speed = r.job->steps_per_s[static_cast<std::size_t>(pools_[static_cast<std::size_t>(r.where.pool)].spec->type)];
      (void)speed;
      rs.lost_if_preempted = r.job->gpus * std::fmod(std::max(0.0, now_ - r.seg_start), r.job->checkpoint_s);
    }
    return rs;
  }
  const DevRun& d = devs_[dev_index_.at(id)];
  rs.admitted_at_s = d.start;
  if (d.state == DevState::kTail) rs.idle_s = now_ - d.tail_start;
  if (d.state == DevState::kActive || d.state == DevState::kTail) rs.executed_s = now_ - d.start;
  // A notebook in use loses its session state when preempted: everything since it started.
  if (d.state == DevState::kActive) rs.lost_if_preempted = now_ - d.start;
  return rs;
}

bool Engine::CanPlace(const tenancy::WorkloadRequest& w) {
  if (IsJob(w.id)) {
    const JobRun& r = jobs_[job_index_.at(w.id)];
    return CouldPlace(r.pod, TrainingCandidates(r));
  }
  const DevRun& d = devs_[dev_index_.at(w.id)];
  return CouldPlace(d.pod, TypeCandidates(d.dev->type));
}

std::optional<std::vector<std::int64_t>> Engine::VictimsForFit(const tenancy::WorkloadRequest& w,
                                                                std::span<const tenancy::VictimCandidate> c) {
  if (CanPlace(w)) return std::vector<std::int64_t>{};
  const bool job = IsJob(w.id);
  const cluster::PodSpec& pod = job ? jobs_[job_index_.at(w.id)].pod : devs_[dev_index_.at(w.id)].pod;
  const std::vector<int> cands = job ? TrainingCandidates(jobs_[job_index_.at(w.id)]) : TypeCandidates(devs_[dev_index_.at(w.id)].dev->type);
  for (int pi : cands) {
    std::vector<sched::PreemptionCandidate> pc;
    for (const auto& v : c) {
      const Where* where = nullptr;
      const cluster::PodSpec* vp = nullptr;
      if (IsJob(v.id)) {
        const JobRun& r = jobs_[job_index_.at(v.id)];
        where = &r.where;
        vp = &r.pod;
      } else {
        const DevRun& d = devs_[dev_index_.at(v.id)];
        where = &d.where;
        vp = &d.pod;
      }
      if (where->pool != pi) continue;
      pc.push_back({v.id, where->node, *vp, where->gpus, v.cost});
    }
    auto vs = sched::FindVictimsForFit(*pools_[static_cast<std::size_t>(pi)].state, pod, pc);
    if (vs) return vs->victims;
  }
  return std::nullopt;
}

void Engine::OnAdmit(const tenancy::WorkloadRequest& w) {
  if (IsJob(w.id)) {
    JobRun& r = jobs_[job_index_.at(w.id)];
    r.admitted_at = now_;
    r.state = JobState::kPending;
    Where where;
    if (TryPlace(r.pod, TrainingCandidates(r), &where)) {
      r.where = where;
      StartJob(r);
    } else {
      pending_jobs_.push_back(job_index_.at(w.id));
    }
    return;
  }
  DevRun& d = devs_[dev_index_.at(w.id)];
  d.state = DevState::kPending;
  Where where;
  if (TryPlace(d.pod, TypeCandidates(d.dev->type), &where)) {
    d.where = where;
    StartDev(d);
  } else {
    pending_devs_.push_back(dev_index_.at(w.id));
  }
}

void Engine::StartDev(DevRun& d) {
  d.state = DevState::kActive;
  d.start = now_;
  if (!d.waited) dev_wait_min_.push_back((now_ - d.dev->arrival_s) / 60.0);
  d.waited = true;
}

void Engine::StartJob(JobRun& r) {
  // A Gold guarantee holds when the job runs within one cycle plus a new node's cold start of its
  // arrival (whatever admitted it: quota alone, or quota and a node).
  if (r.gold_check && r.restarts == 0 && now_ - r.job->arrival_s <= 2 * kStepS + s_.fleet.cold_start_s + 1e-9) r.gold_ok = true;
  r.state = JobState::kRunning;
  // A restart after a preemption or a move costs the restore time.
  r.seg_start = now_ + (r.restarts > 0 ? s_.fleet.restart_s : 0.0);
}

void Engine::PreemptJob(JobRun& r, bool by_admission) {
  if (r.state == JobState::kRunning) {
    const double speed = r.job->steps_per_s[static_cast<std::size_t>(pools_[static_cast<std::size_t>(r.where.pool)].spec->type)];
    const double since = std::max(0.0, now_ - r.seg_start);
    r.done = std::max(0.0, r.done - speed * std::fmod(since, r.job->checkpoint_s));
  }
  Release(r.where, r.pod);
  ++r.restarts;
  if (by_admission) {
    ++out_.admission_preemptions;
    r.state = JobState::kQueued;
    admitter_->Evicted(r.job->id, /*requeue=*/true);
    pending_jobs_.erase(std::remove(pending_jobs_.begin(), pending_jobs_.end(), job_index_.at(r.job->id)), pending_jobs_.end());
  } else {
    // A spot preemption: the pod is recreated and placed again (SkyPilot's recovery, or the
    // Kubernetes job controller); it stays admitted.
    ++out_.spot_preemptions;
    r.state = JobState::kPending;
    pending_jobs_.push_back(job_index_.at(r.job->id));
  }
}

void Engine::EndDev(DevRun& d, bool reclaimed) {
  Release(d.where, d.pod);
  if (reclaimed) ++out_.idle_reclaims;
  d.state = DevState::kDone;
  admitter_->Finished(d.dev->id);
}

void Engine::EvictDev(DevRun& d) {
  // Evicted by admission: an idle notebook is closed (its user had left it); one in use goes back
  // to its queue with the rest of its session.
  if (d.state == DevState::kActive) {
    d.active_done += now_ - d.start;
    Release(d.where, d.pod);
    d.state = DevState::kQueued;
    ++out_.admission_preemptions;
    admitter_->Evicted(d.dev->id, /*requeue=*/true);
  } else {
    Release(d.where, d.pod);
    if (d.state == DevState::kTail) ++out_.idle_reclaims;
    d.state = DevState::kDone;
    admitter_->Evicted(d.dev->id, /*requeue=*/false);
  }
  pending_devs_.erase(std::remove(pending_devs_.begin(), pending_devs_.end(), dev_index_.at(d.dev->id)), pending_devs_.end());
}

void Engine::SpotReconcile() {
  for (auto& p : pools_) {
    if (p.spec->tier != sim::Tier::kSpot) continue;
    const int avail = SpotAvailable(p);
    while (NodesHeld(p) * kGpusPerNode > avail) {
      // The provider takes back a booting node first, else the held node with the fewest GPUs in use.
      int victim = -1;
      std::int64_t best_idle = -1;
      for (std::size_t k = 0; k < p.slots.size(); ++k) {
        const Slot& s = p.slots[k];
        if (s.phase == Phase::kDown) continue;
        const std::int64_t idle = s.phase == Phase::kBooting ? std::numeric_limits<std::int64_t>::max()
                                                              : p.state->node(cluster::NodeId(static_cast<std::uint32_t>(k))).TotalGpuIdle();
        if (idle > best_idle) {
          best_idle = idle;
          victim = static_cast<int>(k);
        }
      }
      if (victim < 0) break;
      const cluster::NodeId node(static_cast<std::uint32_t>(victim));
      for (auto& r : jobs_) {
        if (r.where.pool == p.index && r.where.node == node) PreemptJob(r, /*by_admission=*/false);
      }
      ++p.drops;
      p.slots[static_cast<std::size_t>(victim)].phase = Phase::kDown;
      p.state->SetEligibility(node, cluster::NodeEligibility::kNone);
    }
  }
}

void Engine::Serving(std::size_t k) {
  for (std::size_t d = 0; d < s_.serving.size(); ++d) {
    const auto& rps = s_.serving[d].demand.rps;
    const std::span<const double> past(rps.data(), std::min(k, rps.size()));
    const ServingMix want = controllers_[d].Desired(k, past);
    for (std::size_t t = 0; t < profiles_[d]->gpus.size(); ++t) {
      int have = 0;
      for (const Replica& r : replicas_) have += r.deployment == static_cast<int>(d) && r.type == static_cast<int>(t);
      const int target = t < want.replicas.size() ? want.replicas[t] : 0;
      for (; have < target; ++have) {
        Replica r;
        r.deployment = static_cast<int>(d);
        r.type = static_cast<int>(t);
        r.fleet_type = profile_fleet_type_[d][t];
        const int tp = profiles_[d]->tp[t];
        r.pod.name = "serve-" + s_.serving[d].spec.name;
        r.pod.cpu = Millicores(tp * kCpuPerGpu);
        r.pod.memory = MiB(tp * kMemPerGpu);
        r.pod.num_gpu = tp;
        r.pod.gpu_milli = cluster::kMilliPerGpu;
        r.requested_at = now_;
        replicas_.push_back(r);
      }
      // Scale down: the newest replicas first (not yet placed ones before those serving); while a
      // replica of the deployment is still on its way, serving ones are kept (make before break).
      bool arriving = false;
      for (const Replica& r : replicas_) arriving = arriving || (r.deployment == static_cast<int>(d) && r.ready_at > now_);
      while (have > target) {
        std::size_t pick = replicas_.size();
        for (std::size_t i = replicas_.size(); i-- > 0;) {
          const Replica& r = replicas_[i];
          if (r.deployment != static_cast<int>(d) || r.type != static_cast<int>(t)) continue;
          if (pick == replicas_.size() || (!r.where.placed() && replicas_[pick].where.placed()) ||
              (r.where.placed() == replicas_[pick].where.placed() && r.ready_at > replicas_[pick].ready_at)) {
            pick = i;
          }
        }
        if (pick == replicas_.size() || (arriving && replicas_[pick].ready_at <= now_)) break;
        Release(replicas_[pick].where, replicas_[pick].pod);
        replicas_.erase(replicas_.begin() + static_cast<std::ptrdiff_t>(pick));
        --have;
      }
    }
  }
}

void Engine::PlacePending() {
  std::fill(boot_claimed_.begin(), boot_claimed_.end(), 0);
  // Serving replicas first (Gold, latency), then training in admission order, then notebooks.
  for (Replica& r : replicas_) {
    if (r.where.placed()) continue;
    const std::vector<int> cands = TypeCandidates(r.fleet_type);
    if (TryPlace(r.pod, cands, &r.where)) {
      r.ready_at = now_ + kModelLoadS;
    } else {
      ClaimBoot(cands, r.pod.num_gpu);
    }
  }
  std::vector<std::size_t> still;
  for (std::size_t i : pending_jobs_) {
    JobRun& r = jobs_[i];
    if (r.state != JobState::kPending) continue;
    const std::vector<int> cands = TrainingCandidates(r);
    if (TryPlace(r.pod, cands, &r.where)) {
      StartJob(r);
    } else {
      ClaimBoot(cands, r.pod.num_gpu);
      still.push_back(i);
    }
  }
  pending_jobs_.swap(still);
  still.clear();
  for (std::size_t i : pending_devs_) {
    DevRun& d = devs_[i];
    if (d.state != DevState::kPending) continue;
    const std::vector<int> cands = TypeCandidates(d.dev->type);
    if (TryPlace(d.pod, cands, &d.where)) {
      StartDev(d);
    } else {
      ClaimBoot(cands, 1);
      still.push_back(i);
    }
  }
  pending_devs_.swap(still);
}

void Engine::MigrateToCommitted() {
  // Seedance's cost-aware layer (S3): a training job running on a cloud pool moves to a committed
  // pool (owned, reserved: marginal price 0) that has room now, at a type no more than 20 % slower,
  // once it has run 30 min there (a job's run so far is the no-oracle guess of what is left, so a
  // job about to end is not moved for nothing): it checkpoints, releases its cloud GPUs and
  // restarts from the checkpoint. SkyPilot's managed jobs never move a healthy job.
  if (!c_.cost_aware) return;
  for (JobRun& r : jobs_) {
    if (r.state != JobState::kRunning) continue;
    const PoolRun& from = pools_[static_cast<std::size_t>(r.where.pool)];
    if (from.committed() || now_ - r.seg_start < 1800) continue;
    const double speed = r.job->steps_per_s[static_cast<std::size_t>(from.spec->type)];
    std::vector<int> cands;
    for (const auto& p : pools_) {
      if (p.committed() && r.job->steps_per_s[static_cast<std::size_t>(p.spec->type)] >= 0.8 * speed) cands.push_back(p.index);
    }
    if (cands.empty()) continue;
    Where to;
    if (!TryPlace(r.pod, cands, &to)) continue;
    // Checkpoint now: the checkpoint's cost is the only work lost.
    r.done = std::max(0.0, r.done - speed * s_.fleet.checkpoint_cost_s);
    Release(r.where, r.pod);
    r.where = to;
    ++r.restarts;
    ++out_.migrations;
    StartJob(r);
  }
}

void Engine::ScaleDown() {
  // The cluster autoscaler removes a node that has been empty for the scale-down delay
  // (cluster-autoscaler's scale-down-unneeded-time) and no pending pod claimed.
  for (auto& p : pools_) {
    if (p.committed()) continue;
    for (std::size_t k = 0; k < p.slots.size(); ++k) {
      Slot& s = p.slots[k];
      if (s.phase != Phase::kUp) continue;
      const cluster::NodeId node(static_cast<std::uint32_t>(k));
      if (p.state->node(node).TotalGpuIdle() != s.gpus * cluster::kMilliPerGpu) continue;
      if (now_ - s.empty_since < s_.fleet.scale_down_delay_s) continue;
      s.phase = Phase::kDown;
      p.state->SetEligibility(node, cluster::NodeEligibility::kNone);
    }
  }
}

void Engine::UpdateSignals(double dt) {
  if (c_.tenancy != tenancy::TenancyMode::kSeedance) return;
  const std::size_t nt = s_.tenancy.tenants.size();
  std::vector<double> held(nt, 0.0), demand(nt, 0.0), busy(nt, 0.0), min_idle(nt, -1.0);
  for (const JobRun& r : jobs_) {
    const auto t = static_cast<std::size_t>(r.job->tenant);
    if (r.state == JobState::kRunning || r.state == JobState::kPending) {
      held[t] += r.job->gpus;
      busy[t] += r.job->gpus;
      min_idle[t] = 0;
    }
    if (r.state != JobState::kDone && r.job->arrival_s <= now_) demand[t] += r.job->gpus;
  }
  for (const DevRun& d : devs_) {
    const auto t = static_cast<std::size_t>(d.dev->tenant);
    if (d.state == DevState::kActive || d.state == DevState::kTail) held[t] += 1;
    if (d.state == DevState::kActive) {
      busy[t] += 1;
      min_idle[t] = 0;
    } else if (d.state == DevState::kTail && min_idle[t] != 0) {
      const double idle = now_ - d.tail_start;
      min_idle[t] = min_idle[t] < 0 ? idle : std::min(min_idle[t], idle);
    }
    if (d.state != DevState::kDone && d.dev->arrival_s <= now_) demand[t] += 1;
  }
  double capacity = 0;
  for (const auto& t : s_.tenancy.tenants) capacity += t.quota.empty() ? 0.0 : t.quota[0].nominal;
  fair_->Advance(now_, now_ + dt, capacity, demand, held);
  for (std::size_t t = 0; t < nt; ++t) {
    const auto& p = s_.tenancy.tiers[static_cast<std::size_t>(s_.tenancy.tenants[t].tier)];
    const double util = held[t] > 0 ? busy[t] / held[t] : 0.0;
    admitter_->SetElasticScale(static_cast<int>(t), tenancy::ElasticScale(p, min_idle[t] > 0 ? min_idle[t] : 0.0, util));
    admitter_->SetCompensation(static_cast<int>(t),
                               s_.tenancy.fairness_compensation ? tenancy::CompensationWeight(fair_->Deviation(static_cast<int>(t))) : 0.0);
  }
}

void Engine::Account(double dt) {
  const double h = dt / 3600.0;
  std::array<double, kNumUses> gpus{};
  std::array<double, 3> pod_usd{};  // training, serving, dev
  double bill = 0;
  for (auto& p : pools_) {
    const double price = p.spec->PriceAt(now_);
    for (std::size_t k = 0; k < p.slots.size(); ++k) {
      const Slot& s = p.slots[k];
      if (s.phase == Phase::kDown) continue;
      const double usd = s.gpus * price * h;
      bill += usd;
      if (p.committed()) out_.committed_usd += usd;
      else if (p.spec->tier == sim::Tier::kSpot) out_.spot_usd += usd;
      else out_.on_demand_usd += usd;
      if (s.phase == Phase::kBooting) {
        gpus[kBooting] += s.gpus;
      } else {
        gpus[kFree] += static_cast<double>(p.state->node(cluster::NodeId(static_cast<std::uint32_t>(k))).TotalGpuIdle()) / cluster::kMilliPerGpu;
        if (p.spec->tier == sim::Tier::kSpot) p.held_gpu_s += s.gpus * dt;
      }
    }
  }
  for (JobRun& r : jobs_) {
    if (r.state != JobState::kRunning) continue;
    const auto& pool = pools_[static_cast<std::size_t>(r.where.pool)];
    gpus[kTraining] += r.job->gpus;
    pod_usd[0] += r.job->gpus * pool.spec->PriceAt(now_) * h;
    const double from = std::max(now_, r.seg_start);
    if (from < now_ + dt) r.done += r.job->steps_per_s[static_cast<std::size_t>(pool.spec->type)] * (now_ + dt - from);
  }
  for (const Replica& r : replicas_) {
    if (!r.where.placed()) continue;
    gpus[kServing] += r.pod.num_gpu;
    pod_usd[1] += r.pod.num_gpu * PriceOf(r.where.pool) * h;
  }
  for (const DevRun& d : devs_) {
    if (d.state != DevState::kActive && d.state != DevState::kTail) continue;
    gpus[d.state == DevState::kActive ? kDevActive : kDevIdle] += 1;
    pod_usd[2] += PriceOf(d.where.pool) * h;
    if (d.state == DevState::kActive) out_.dev_active_gpu_hours += h;
  }
  out_.total_usd += bill;
  const double used = pod_usd[0] + pod_usd[1] + pod_usd[2];
  const double overhead = std::max(0.0, bill - used);
  out_.overhead_usd += overhead;
  // Overhead shared pro rata to what each use paid directly (OpenCost's idle sharing).
  const double f = used > 0 ? bill / used : 0.0;
  out_.training_usd += pod_usd[0] * f;
  out_.serving_usd += pod_usd[1] * f;
  out_.dev_usd += pod_usd[2] * f;
  if (used <= 0) out_.training_usd += bill;  // nothing ran: charge the idle fleet to training
  for (int u = 0; u < kNumUses; ++u) {
    out_.gpu_hours[static_cast<std::size_t>(u)] += gpus[static_cast<std::size_t>(u)] * h;
    hour_acc_[static_cast<std::size_t>(u)] += gpus[static_cast<std::size_t>(u)] * dt / 3600.0;
  }
}

Result<FleetWeekOutcome> Engine::Run() {
  const std::clock_t cpu0 = std::clock();
  SEEDANCE_RETURN_IF_ERROR(Setup());
  out_.stack = c_.name;
  const auto steps = static_cast<std::size_t>(std::ceil(s_.horizon_s / kStepS));
  std::size_t next_job = 0, next_dev = 0;
  const int gold = static_cast<int>(tenancy::Tier::kGold);
  // An arrival's admission request.
  auto request = [&](std::int64_t id, int tenant, double arrival_s, int gpus) {
    tenancy::WorkloadRequest w;
    w.id = id;
    w.tenant = tenant;
    w.tier = s_.tenancy.tenants[static_cast<std::size_t>(tenant)].tier;
    w.priority = tenancy::TierPriority(w.tier);
    w.creation_s = arrival_s;
    w.request = {tenancy::ToQuantity(gpus)};
    return w;
  };
  for (std::size_t k = 0; k < steps; ++k) {
    now_ = static_cast<double>(k) * kStepS;
    // Nodes that finished booting.
    for (auto& p : pools_) {
      for (std::size_t n = 0; n < p.slots.size(); ++n) {
        Slot& s = p.slots[n];
        if (s.phase == Phase::kBooting && s.ready_at <= now_) {
          s.phase = Phase::kUp;
          s.empty_since = now_;
          p.state->SetEligibility(cluster::NodeId(static_cast<std::uint32_t>(n)), cluster::NodeEligibility::kAll);
        }
      }
    }
    SpotReconcile();
    // Completions.
    for (JobRun& r : jobs_) {
      if (r.state == JobState::kRunning && r.done >= r.job->total_steps) {
        r.done = r.job->total_steps;
        Release(r.where, r.pod);
        r.state = JobState::kDone;
        r.finish = now_;
        admitter_->Finished(r.job->id);
      }
    }
    for (DevRun& d : devs_) {
      if (d.state == DevState::kActive && d.active_done + (now_ - d.start) >= d.dev->active_s) {
        d.state = DevState::kTail;
        d.tail_start = d.start + (d.dev->active_s - d.active_done);
      }
      if (d.state == DevState::kTail && now_ >= d.tail_start + d.dev->idle_tail_s) EndDev(d, /*reclaimed=*/false);
    }
    // Arrivals.
    for (; next_job < jobs_.size() && jobs_[next_job].job->arrival_s <= now_; ++next_job) {
      JobRun& r = jobs_[next_job];
      const tenancy::WorkloadRequest w = request(r.job->id, r.job->tenant, r.job->arrival_s, r.job->gpus);
      if (static_cast<int>(w.tier) == gold) {
        const auto& book = admitter_->book();
        const double share = s_.tenancy.tiers[static_cast<std::size_t>(gold)].guaranteed_share;
        r.gold_check = tenancy::FromQuantity(book.usage(w.tenant, 0)) + r.job->gpus <=
                       share * tenancy::FromQuantity(book.nominal(w.tenant, 0)) + 1e-9;
      }
      admitter_->Submit(w);
    }
    for (; next_dev < devs_.size() && devs_[next_dev].dev->arrival_s <= now_; ++next_dev) {
      const DevRun& d = devs_[next_dev];
      admitter_->Submit(request(d.dev->id, d.dev->tenant, d.dev->arrival_s, 1));
    }
    // Seedance's idle reclaim (Kueue's modes return nothing): an idle notebook past its tier's
    // tolerance is released.
    for (std::int64_t id : admitter_->IdleSweep(*this)) {
      if (IsJob(id)) continue;
      EndDev(devs_[dev_index_.at(id)], /*reclaimed=*/true);
    }
    UpdateSignals(kStepS);
    std::vector<tenancy::AdmissionDecision> decisions;
    admitter_->Cycle(now_, *this, &decisions);
    for (const auto& d : decisions) {
      if (d.kind != tenancy::AdmissionDecision::Kind::kEvict) continue;
      if (IsJob(d.id)) {
        PreemptJob(jobs_[job_index_.at(d.id)], /*by_admission=*/true);
      } else {
        EvictDev(devs_[dev_index_.at(d.id)]);
      }
    }
    Serving(k);
    PlacePending();
    MigrateToCommitted();
    ScaleDown();
    // Serving within SLO this step: the replicas ready now.
    for (std::size_t d = 0; d < s_.serving.size(); ++d) {
      const double rps = k < s_.serving[d].demand.rps.size() ? s_.serving[d].demand.rps[k] : 0.0;
      ServingMix ready;
      ready.replicas.assign(profiles_[d]->gpus.size(), 0);
      for (const Replica& r : replicas_) {
        if (r.deployment == static_cast<int>(d) && r.where.placed() && r.ready_at <= now_) ++ready.replicas[static_cast<std::size_t>(r.type)];
      }
      // Replicas placed on a booting node become ready once it is up and the model is loaded.
      auto it = served_memo_.find({d, ready.replicas});
      if (it == served_memo_.end()) it = served_memo_.emplace(std::make_pair(d, ready.replicas), MaxServedRps(*profiles_[d], ready)).first;
      const double share = rps > 0 ? std::min(1.0, it->second / rps) : 1.0;
      const double tok = rps * kStepS * s_.serving[d].demand.tokens_per_request / 1e6;
      mtok_demanded_[d] += tok;
      mtok_in_slo_[d] += tok * share;
    }
    Account(kStepS);
    if ((k + 1) % 60 == 0) {
      out_.hourly.push_back(hour_acc_);
      hour_acc_ = {};
    }
  }
  // Outcome.
  for (const JobRun& r : jobs_) {
    ++out_.jobs;
    out_.training_pflop += std::min(r.done, r.job->total_steps) * r.job->pflop_per_step;
    if (r.state == JobState::kDone) {
      ++out_.jobs_finished;
      jct_h_.push_back((r.finish - r.job->arrival_s) / 3600.0);
    }
    if (std::isfinite(r.job->deadline_s) && r.job->deadline_s <= s_.horizon_s) {
      ++out_.deadlines;
      out_.deadlines_met += r.state == JobState::kDone && r.finish <= r.job->deadline_s;
    }
    if (r.gold_check) {
      ++out_.gold_checks;
      out_.gold_violations += !r.gold_ok;
    }
  }
  auto pct = [](std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(std::min<double>(static_cast<double>(v.size() - 1), std::floor(q * static_cast<double>(v.size()))))];
  };
  if (!jct_h_.empty()) {
    double sum = 0;
    for (double x : jct_h_) sum += x;
    out_.jct_mean_h = sum / static_cast<double>(jct_h_.size());
  }
  out_.jct_p50_h = pct(jct_h_, 0.5);
  out_.jct_p90_h = pct(jct_h_, 0.9);
  out_.dev_sessions = static_cast<int>(devs_.size());
  out_.dev_wait_p90_min = pct(dev_wait_min_, 0.9);
  double in = 0, all = 0;
  for (std::size_t d = 0; d < s_.serving.size(); ++d) {
    in += mtok_in_slo_[d];
    out_.serving_mtok_in_slo_by_deployment.push_back(mtok_in_slo_[d]);
    all += mtok_demanded_[d];
    out_.serving_attainment_by_deployment.push_back(mtok_demanded_[d] > 0 ? mtok_in_slo_[d] / mtok_demanded_[d] : 1.0);
  }
  out_.serving_mtok_in_slo = in;
  out_.serving_mtok_demanded = all;
  out_.serving_attainment = all > 0 ? in / all : 1.0;
  out_.cpu_seconds = static_cast<double>(std::clock() - cpu0) / CLOCKS_PER_SEC;
  return out_;
}

}  // namespace

Result<FleetWeekOutcome> RunFleetWeek(const FleetWeekScenario& scenario, const StackConfig& stack) {
  Engine e(scenario, stack);
  return e.Run();
}

}  // namespace seedance::fleet
