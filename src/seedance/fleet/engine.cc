#include "seedance/fleet/engine.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "seedance/fleet/engine_internal.h"
#include "seedance/tenancy/quota.h"
#include "seedance/tenancy/tiers.h"

namespace seedance::fleet {
namespace {
// CPU seconds of the calling thread (a comparison runs weeks on several threads at once).
double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
}  // namespace

StackConfig StandardStack(const std::string& placement) {
  StackConfig s;
  s.name = "standard (" + placement + ")";
  s.placement = placement;
  return s;
}

StackConfig CompetentStack() {
  StackConfig s = StandardStack("most-allocated");
  s.name = "competent standard (most-allocated, idle culler, PriorityClass, KEDA cron + HPA)";
  s.idle_cull_s = kCullerTimeoutS;
  s.keda_cron = true;
  s.serving_preemption = StackConfig::ServingPreemption::kPriorityClass;
  // Karpenter for the cloud node pools (issue 39): right-sized nodes, consolidation.
  s.right_size = true;
  s.consolidation = StackConfig::Consolidation::kKarpenter;
  s.consolidate_after_s = kKarpenterConsolidateAfterS;
  s.training_do_not_disrupt = kKarpenterTrainingDoNotDisrupt;
  return s;
}

StackConfig CompetentStackWithoutKarpenter() {
  StackConfig s = CompetentStack();
  s.name = "competent standard without Karpenter (8-GPU nodes, empty ones removed)";
  s.right_size = false;
  s.consolidation = StackConfig::Consolidation::kNone;
  return s;
}

StackConfig CompetentStackWithDeadlinePriority() {
  StackConfig s = CompetentStack();
  s.name = "competent standard + Kueue WorkloadPriorityClass for work with a deadline";
  s.deadline_priority_class = true;
  return s;
}

StackConfig SeedanceStack() {
  StackConfig s;
  s.name = "seedance";
  s.idle_grace_s = kSeedanceIdleGraceS;
  s.serving_preemption = StackConfig::ServingPreemption::kCheckpointAware;
  s.tenancy = tenancy::TenancyMode::kSeedance;
  s.placement = "seedance";
  s.cost_aware = true;
  s.migrate_min_speed = kSeedanceMigrateMinSpeed;
  s.defragment = true;
  s.defrag_max_busy_share = kSeedanceDefragMaxBusyShare;
  s.match_types = true;
  s.fractional_gpus = true;
  s.fractional_min_free_share = kSeedanceFractionalMinFreeShare;
  s.batching = "seedance";
  s.serving_planner = true;
  s.predictive = true;
  s.right_size = true;  // Karpenter's provisioning, a base tool; Seedance's own consolidation
  s.consolidation = StackConfig::Consolidation::kCheckpointAware;
  s.consolidate_after_s = kSeedanceConsolidateAfterS;
  s.consolidate_max_used_share = kSeedanceConsolidateMaxUsedShare;
  s.backlog_waits_for_committed = true;
  s.deadline_takes_backlog_room = true;
  s.deadline_priority_under_backlog = true;
  s.hold_boots_for_claimants = true;
  s.gold_first = true;
  // Issue 39 round 5: on, with every tuned constant re-tuned to a fixed point, Seedance's five
  // tuning weeks cost $63,657 (unit 0.8919) against $64,353 (0.9018) off at its own fixed point.
  s.serving_yields_to_training = true;
  s.serving_room_ahead_s = kSeedanceServingRoomAheadS;
  s.serving_whole_nodes = true;  // round 6: fleet b's held-out week $19,901 -> $19,418, the tuning weeks unchanged
  return s;
}

const char* UseName(int use) {
  static const char* kNames[] = {"training", "serving", "dev active", "dev idle", "free on held nodes", "booting"};
  return use >= 0 && use < kNumUses ? kNames[use] : "?";
}

int TrainingKindIndex(const std::string& kind) {
  for (int k = 0; k < 2; ++k) {
    if (kind == kTrainingKinds[k]) return k;
  }
  return 2;
}

namespace detail {

Status Engine::Setup() {
  // Pools: nodes of 8 GPUs (a committed pool's last node holds the remainder).
  for (std::size_t i = 0; i < s_.fleet.pools.size(); ++i) {
    const sim::PoolSpec& ps = s_.fleet.pools[i];
    PoolRun p;
    p.spec = &ps;
    p.index = static_cast<int>(i);
    p.right_sized = RightSized(ps);
    const std::vector<int> sizes = SlotSizes(ps);
    const int n = static_cast<int>(sizes.size());
    std::vector<cluster::NodeSpec> nodes;
    SEEDANCE_ASSIGN_OR_RETURN(const cluster::GpuModelIndex model,
                              cluster::ParseGpuModel(s_.fleet.gpu_types[static_cast<std::size_t>(ps.type)]));
    for (int k = 0; k < n; ++k) {
      Slot slot;
      slot.gpus = sizes[static_cast<std::size_t>(k)];
      if (p.committed()) slot.phase = Phase::kUp;
      p.slots.push_back(slot);
      // (fmt, not "p" + std::to_string(i): GCC 12's -Wrestrict misfires on that at -O3.)
      nodes.push_back({fmt::format("p{}-n{}", i, k), Millicores(slot.gpus * kCpuPerGpu + 16000),
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
    r.kind = TrainingKindIndex(j.kind);
    if (j.pods < 1 || j.gpus % j.pods != 0) {
      return InternalError("job " + std::to_string(j.id) + ": " + std::to_string(j.gpus) + " GPUs in " +
                           std::to_string(j.pods) + " pods");
    }
    const int per_pod = j.gpus / j.pods;  // every pod of a gang alike
    r.pod.name = "job-" + std::to_string(j.id);
    r.pod.cpu = Millicores(per_pod * kCpuPerGpu);
    r.pod.memory = MiB(per_pod * kMemPerGpu);
    r.pod.num_gpu = per_pod;
    r.pod.gpu_milli = cluster::kMilliPerGpu;
    if (NeverFits(r)) r.state = JobState::kNeverFits;
    job_index_.Add(j.id, jobs_.size());
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
    dev_index_.Add(d.id, devs_.size());
    devs_.push_back(r);
    if (d.id < dev_base_) return InternalError("dev pod ids must follow the training job ids");
  }
  job_index_.Seal();
  dev_index_.Seal();
  job_running_.assign(jobs_.size(), {});
  dev_running_.assign(devs_.size(), {});

  // Admission.
  SEEDANCE_ASSIGN_OR_RETURN(auto book, tenancy::QuotaBook::Build(s_.tenancy.tenants, /*allow_borrowing=*/true));
  std::vector<double> nominal;
  for (const auto& t : s_.tenancy.tenants) nominal.push_back(t.quota.empty() ? 0.0 : t.quota[0].nominal);
  fair_ = std::make_unique<tenancy::FairShareTracker>(nominal, s_.tenancy.fairness_window_s);
  tenancy::TenancyConfig tiers = s_.tenancy;
  if (c_.idle_grace_s > 0) {
    for (auto& t : tiers.tiers) {
      t.max_idle_s = std::max(t.max_idle_s, c_.idle_grace_s);
      t.reclaim_after_s = std::max(t.reclaim_after_s, c_.idle_grace_s);
    }
  }
  admitter_ = std::make_unique<tenancy::Admitter>(std::move(book), c_.tenancy, tiers);

  // Serving controllers.
  // The price of each of a profile's GPU types (ServingTypePrice), and their fleet types.
  auto types_and_prices = [&](const ServingProfile& prof, std::vector<int>* ft, std::vector<double>* prices) -> Status {
    for (const std::string& g : prof.gpus) {
      int f = -1;
      for (std::size_t k = 0; k < s_.fleet.gpu_types.size(); ++k) {
        if (s_.fleet.gpu_types[k] == g) f = static_cast<int>(k);
      }
      if (f < 0) return InternalError("serving type " + g + " is not a fleet type");
      ft->push_back(f);
      prices->push_back(ServingTypePrice(s_, f));
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
                       bool mix, double min_share,
                       const TuneWarmPath& warm = TuneWarmPath()) -> Result<std::pair<ServingPolicy, double>> {
    const std::string key = sd.spec.name + "|" + batching + "|" + autoscaler + "|" + (mix ? "mix" : "single") +
                            (mix && autoscaler == "predictive" && !warm.on() ? "|cold-path-only" : "");
    // The cache is shared by every run of the scenario, and runs go side by side on threads: it is
    // read and filled under its lock; two runs that miss the same key both tune it (the same result).
    auto& cache = s_.tuned->by_key;
    {
      const std::lock_guard<std::mutex> lock(s_.tuned->mu);
      if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    const ServingProfile& prof = batching == "seedance" ? sd.seedance : sd.vllm;
    ServingPolicy pol;
    pol.autoscaler = autoscaler;
    pol.mix = mix;
    if (sd.tuning_demand.rps.empty()) return std::make_pair(pol, kMinServedShare);
    std::vector<int> ft;
    std::vector<double> prices;
    SEEDANCE_RETURN_IF_ERROR(types_and_prices(prof, &ft, &prices));
    auto tuned = autoscaler == "predictive"
                     ? TunePredictive(prof, pol, sd.tuning_demand, sd.tuning_history.rps, prices, cold, min_share, warm)
                     : TuneReactive(prof, pol, sd.tuning_demand, sd.tuning_history.rps, prices, cold, min_share);
    if (!tuned.has_value()) return tuned.error();
    const auto entry = std::make_pair(tuned->policy, tuned->rows[static_cast<std::size_t>(tuned->chosen)].eval.served_share);
    // What the chosen setting serves on the tuning week when its replicas land on nodes already up.
    ServingController chosen(prof, tuned->policy, prices, sd.tuning_peak_rps, kStepS, cold);
    SEEDANCE_ASSIGN_OR_RETURN(const ServingEval warm_eval,
                              EvaluateController(prof, chosen, sd.tuning_demand, prices, kModelLoadS, sd.tuning_history.rps));
    const std::lock_guard<std::mutex> lock(s_.tuned->mu);
    s_.tuned->warm_share.emplace(key, warm_eval.served_share);
    return cache.emplace(key, entry).first->second;
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
    const bool forecast = c_.serving_planner ? c_.predictive : c_.keda_cron;
    const std::string autoscaler = forecast ? "predictive" : "reactive";
    double floor = std::max(kMinServedShare, standard.second);
    TuneWarmPath warm;
    if (c_.serving_planner) {
      // The planner's fleet serves at least what the competent base's KEDA cron + HPA served on the
      // tuning week too (issue 39: serving SLO >= the headline base's) -- on both paths a replica
      // takes in the fleet: a node booted for it (the cold start) and a node already up (the model
      // load only), where KEDA's HPA catches up within a minute.
      SEEDANCE_ASSIGN_OR_RETURN(const auto keda, tuned_for(sd, "vllm", "predictive", false, floor));
      floor = std::max(floor, keda.second);
      std::optional<double> keda_warm;
      {
        const std::lock_guard<std::mutex> lock(s_.tuned->mu);
        const auto it = s_.tuned->warm_share.find(sd.spec.name + "|vllm|predictive|single");
        if (it != s_.tuned->warm_share.end()) keda_warm = it->second;
      }
      if (c_.serving_warm_path && forecast && keda_warm.has_value()) {  // absent: no tuning week
        // The setting tuned on the cold path alone, made more reactive where it must be: no less on
        // the cold path, and at every step at least its replicas (its headroom or more, its target
        // or less). On fleet b, where replicas wait for nodes, a cheaper setting with a lower
        // headroom lost more to the wait than the warm path gained (2026-12-07).
        SEEDANCE_ASSIGN_OR_RETURN(const auto cold_only, tuned_for(sd, c_.batching, autoscaler, true, floor));
        floor = std::max(floor, cold_only.second);
        warm.start_s = kModelLoadS;
        warm.min_share = *keda_warm;
        warm.min_headroom = cold_only.first.headroom;
        warm.max_target = cold_only.first.target_utilization;
      }
    }
    SEEDANCE_ASSIGN_OR_RETURN(const auto tuned, tuned_for(sd, c_.batching, autoscaler, c_.serving_planner, floor, warm));
    const ServingPolicy& pol = tuned.first;
    controllers_.emplace_back(prof, pol, prices, sd.tuning_peak_rps, kStepS, cold);
    controllers_.back().SetHistory(sd.history.rps);  // the week before: what the forecaster reads
    if (c_.serving_whole_nodes && c_.serving_planner) controllers_.back().SetNodeGpus(ReplicaNodeGpus(prof, ft));
    out_.serving_description += (d ? "; " : "") + sd.spec.name + ": " + controllers_.back().Describe();
    if (c_.fractional_gpus) {
      // Issue 39 item 2: a replica goes on MIG slices only where that is cheaper per request
      // within SLO; at the stated compute-fraction scaling it never is, so replicas stay whole
      // (a verdict that says "cheaper" would mean slices for replicas are needed: not built).
      int cheaper = 0;
      out_.serving_description += ", " + ReplicaSliceVerdict(prof, ReplicaMemoryGb(sd.spec.model), &cheaper);
    }
  }
  mtok_in_slo_.assign(s_.serving.size(), 0.0);
  mtok_demanded_.assign(s_.serving.size(), 0.0);
  return Status::Ok();
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
    if (r.state != JobState::kDone && r.state != JobState::kNeverFits && r.job->arrival_s <= now_) demand[t] += r.job->gpus;
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

std::size_t Engine::CloudTier(int pool) const {
  return pools_[static_cast<std::size_t>(pool)].spec->tier == sim::Tier::kSpot ? 1 : 0;
}

std::array<double, kNumUses>& Engine::CloudHours(int pool) {
  const PoolRun& p = pools_[static_cast<std::size_t>(pool)];
  return out_.cloud_gpu_hours_by_type[static_cast<std::size_t>(p.spec->type)][CloudTier(pool)];
}

void Engine::Account(double dt) {
  const double h = dt / 3600.0;
  std::array<double, kNumUses> gpus{};
  std::array<double, 3> pod_usd{};  // training, serving, dev
  double owned_idle = 0;            // GPUs of committed pools free or held by idle notebooks
  std::vector<double> owned_free(s_.fleet.gpu_types.size(), 0.0);  // free committed GPUs by type
  bool cloud_training = false;      // some training runs on a cloud node
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
      if (!p.committed()) out_.cloud_usd_by_type[static_cast<std::size_t>(p.spec->type)][CloudTier(p.index)] += usd;
      if (s.phase == Phase::kBooting) {
        gpus[kBooting] += s.gpus;
        if (!p.committed()) CloudHours(p.index)[kBooting] += s.gpus * h;
      } else {
        const double free = static_cast<double>(p.state->node(cluster::NodeId(static_cast<std::uint32_t>(k))).TotalGpuIdle()) / cluster::kMilliPerGpu;
        gpus[kFree] += free;
        if (p.committed()) {
          owned_idle += free;
          owned_free[static_cast<std::size_t>(p.spec->type)] += free;
        } else {
          CloudHours(p.index)[kFree] += free * h;
        }
        if (p.spec->tier == sim::Tier::kSpot) p.held_gpu_s += s.gpus * dt;
      }
    }
  }
  for (JobRun& r : jobs_) {
    if (r.state != JobState::kRunning) continue;
    const auto& pool = pools_[static_cast<std::size_t>(r.where.pool)];
    gpus[kTraining] += r.job->gpus;
    pod_usd[0] += r.job->gpus * pool.spec->PriceAt(now_) * h;
    const auto type = static_cast<std::size_t>(pool.spec->type);
    const auto kind = static_cast<std::size_t>(r.kind);
    out_.training_gpu_hours_by_type[type][kind] += r.job->gpus * h;
    if (pool.committed()) out_.committed_training_gpu_hours_by_type[type][kind] += r.job->gpus * h;
    if (!pool.committed()) {
      CloudHours(r.where.pool)[kTraining] += r.job->gpus * h;
      cloud_training = true;
    }
    const double from = std::max(now_, r.seg_start);
    out_.training_restore_gpu_hours += r.job->gpus * (std::min(from, now_ + dt) - now_) / 3600.0;
    if (from < now_ + dt) {
      const double steps = r.job->steps_per_s[type] * (now_ + dt - from);
      r.done += steps;
      out_.training_pflop_by_type[type][kind] += steps * r.job->pflop_per_step;
      if (pool.committed()) committed_pflop_ += steps * r.job->pflop_per_step;
    }
  }
  for (const Replica& r : replicas_) {
    if (!r.where.placed()) continue;
    gpus[kServing] += r.pod.num_gpu;
    out_.serving_gpu_hours_by_type[static_cast<std::size_t>(r.fleet_type)] += r.pod.num_gpu * h;
    if (!pools_[static_cast<std::size_t>(r.where.pool)].committed()) CloudHours(r.where.pool)[kServing] += r.pod.num_gpu * h;
    pod_usd[1] += r.pod.num_gpu * PriceOf(r.where.pool) * h;
  }
  for (const DevRun& d : devs_) {
    if (d.state != DevState::kActive && d.state != DevState::kTail) continue;
    // A notebook on a MIG slice holds, and pays for, its slice's compute fraction of the GPU, and
    // an hour in use counts as DevRun::work GPU-hours of useful work.
    gpus[d.state == DevState::kActive ? kDevActive : kDevIdle] += d.share;
    if (d.state == DevState::kTail && pools_[static_cast<std::size_t>(d.where.pool)].committed()) owned_idle += d.share;
    if (!pools_[static_cast<std::size_t>(d.where.pool)].committed()) {
      CloudHours(d.where.pool)[d.state == DevState::kActive ? kDevActive : kDevIdle] += d.share * h;
    }
    pod_usd[2] += PriceOf(d.where.pool) * d.share * h;
    if (d.state == DevState::kActive) out_.dev_active_gpu_hours += d.work * h;
  }
  // The slices of partitioned GPUs no notebook is on (and what a homogeneous layout leaves over).
  for (const Partition& p : partitions_) {
    if (p.used == 0) continue;
    const double free = 1.0 - p.used * p.profile->ComputeFraction();
    gpus[kFree] += free;
    const PoolRun& pool = pools_[static_cast<std::size_t>(p.gpu.pool)];
    if (pool.committed()) {
      owned_idle += free;
      owned_free[static_cast<std::size_t>(pool.spec->type)] += free;
    } else {
      CloudHours(p.gpu.pool)[kFree] += free * h;
    }
  }
  for (std::size_t t = 0; t < owned_free.size(); ++t) {
    out_.owned_free_gpu_hours_by_type[t] += owned_free[t] * h;
    if (cloud_training) out_.owned_free_while_cloud_training_gpu_hours_by_type[t] += owned_free[t] * h;
  }
  out_.total_usd += bill;
  out_.idle_gpu_hours += (gpus[kFree] + gpus[kDevIdle]) * h;
  out_.owned_idle_gpu_hours += owned_idle * h;
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
  const double cpu0 = ThreadCpuSeconds();
  SEEDANCE_RETURN_IF_ERROR(Setup());
  out_.stack = c_.name;
  out_.training_gpu_hours_by_type.assign(s_.fleet.gpu_types.size(), {});
  out_.training_pflop_by_type.assign(s_.fleet.gpu_types.size(), {});
  out_.committed_training_gpu_hours_by_type.assign(s_.fleet.gpu_types.size(), {});
  out_.serving_gpu_hours_by_type.assign(s_.fleet.gpu_types.size(), 0.0);
  out_.gpu_types = s_.fleet.gpu_types;
  out_.cloud_gpu_hours_by_type.assign(s_.fleet.gpu_types.size(), {});
  out_.cloud_usd_by_type.assign(s_.fleet.gpu_types.size(), {});
  out_.owned_free_gpu_hours_by_type.assign(s_.fleet.gpu_types.size(), 0.0);
  out_.owned_free_while_cloud_training_gpu_hours_by_type.assign(s_.fleet.gpu_types.size(), 0.0);
  for (const auto& p : pools_) {
    if (p.committed()) committed_gpus_ += p.spec->max_gpus;
  }
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
          HoldForClaimants(p, s);
        }
      }
    }
    FinishReplacements();
    SpotReconcile();
    // Completions.
    for (JobRun& r : jobs_) {
      if (r.state == JobState::kRunning && r.done >= r.job->total_steps) {
        r.done = r.job->total_steps;
        ReleaseJob(r);
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
      if (r.state == JobState::kNeverFits) continue;  // counted in the outcome, never submitted
      tenancy::WorkloadRequest w = request(r.job->id, r.job->tenant, r.job->arrival_s, r.job->gpus);
      if (std::isfinite(r.job->deadline_s)) {
        if (c_.deadline_priority_under_backlog && !backlog_seen_) backlog_seen_ = committed_gpus_ > 0 && StandingBacklog();
        if (c_.deadline_priority_class || backlog_seen_) w.priority += kDeadlinePriorityBoost;
      }
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
    // Users back from think time start their stopped notebooks again.
    for (DevRun& d : devs_) {
      if (d.state != DevState::kAway || d.back_at > now_) continue;
      d.state = DevState::kQueued;
      admitter_->Submit(request(d.dev->id, d.dev->tenant, now_, 1));
    }
    // Seedance's idle reclaim (Kueue's modes return nothing): an idle notebook past its tier's
    // tolerance is released.
    for (std::int64_t id : admitter_->IdleSweep(*this)) {
      if (IsJob(id)) continue;
      StopIdleDev(devs_[dev_index_.at(id)]);
    }
    // JupyterHub's idle culler (the competent standard stack): a notebook idle past the timeout
    // is stopped, in think time or in its idle tail alike.
    if (c_.idle_cull_s > 0) {
      for (DevRun& d : devs_) {
        if ((d.state == DevState::kActive || d.state == DevState::kTail) && DevIdleS(d) >= c_.idle_cull_s) StopIdleDev(d);
      }
    }
    Defragment();
    UpdateSignals(kStepS);
    // Victims leave at once (their pods are deleted within the step), and admission is event-driven
    // in Kueue and Seedance alike: a preemptor whose victims have gone is admitted in the same step,
    // and the next head of its queue may then preempt in turn (a bounded number of rounds).
    for (int round = 0; round < 16; ++round) {
      std::vector<tenancy::AdmissionDecision> decisions;
      admitter_->Cycle(now_, *this, &decisions);
      bool evicted = false;
      for (const auto& d : decisions) {
        if (d.kind != tenancy::AdmissionDecision::Kind::kEvict) continue;
        evicted = true;
        if (IsJob(d.id)) {
          PreemptJob(jobs_[job_index_.at(d.id)], PreemptedBy::kAdmission);
        } else {
          EvictDev(devs_[dev_index_.at(d.id)]);
        }
      }
      if (!evicted) break;
    }
    Serving(k);
    PlacePending();
    MigrateToCommitted(k);
    Consolidate();
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
    out_.jobs_never_fit += r.state == JobState::kNeverFits;
    if (r.job->pods > 1) {
      ++out_.gangs;
      out_.gangs_run += r.ran;
      out_.gangs_finished += r.state == JobState::kDone;
    }
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
  out_.cpu_seconds = ThreadCpuSeconds() - cpu0;  // this thread's: weeks run side by side
  return out_;
}

}  // namespace detail

Result<FleetWeekOutcome> RunFleetWeek(const FleetWeekScenario& scenario, const StackConfig& stack) {
  detail::Engine e(scenario, stack);
  return e.Run();
}

}  // namespace seedance::fleet
