// The fleet week engine as tenancy's AdmissionEnv, and the lifecycle of jobs and notebooks
// (start, preemption, eviction, end).
#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <vector>

#include "seedance/fleet/engine_internal.h"
#include "seedance/sched/victims.h"

namespace seedance::fleet::detail {

tenancy::RunningState Engine::Running(std::int64_t id) const {
  if (IsJob(id)) {
    const std::size_t i = job_index_.at(id);
    const JobRun& r = jobs_[i];
    RunningMemo& m = job_running_[i];
    const int state = static_cast<int>(r.state);
    if (m.now == now_ && m.state == state && m.key[0] == r.admitted_at && m.key[1] == r.seg_start) return m.rs;
    tenancy::RunningState rs;
    rs.admitted_at_s = r.admitted_at;
    if (r.state == JobState::kRunning) {
      rs.executed_s = now_ - r.seg_start;
      rs.lost_if_preempted = r.job->gpus * std::fmod(std::max(0.0, now_ - r.seg_start), r.job->checkpoint_s);
    }
    m = {now_, state, {r.admitted_at, r.seg_start, 0}, rs};
    return rs;
  }
  const std::size_t i = dev_index_.at(id);
  const DevRun& d = devs_[i];
  RunningMemo& m = dev_running_[i];
  const int state = static_cast<int>(d.state);
  if (m.now == now_ && m.state == state && m.key[0] == d.start && m.key[1] == d.tail_start && m.key[2] == d.active_done) {
    return m.rs;
  }
  tenancy::RunningState rs;
  rs.admitted_at_s = d.start;
  rs.idle_s = DevIdleS(d);
  if (d.state == DevState::kActive || d.state == DevState::kTail) rs.executed_s = now_ - d.start;
  // A notebook in use loses its session state when preempted: everything since it started.
  if (d.state == DevState::kActive) rs.lost_if_preempted = now_ - d.start;
  m = {now_, state, {d.start, d.tail_start, d.active_done}, rs};
  return rs;
}

bool Engine::CanPlace(const tenancy::WorkloadRequest& w) {
  if (IsJob(w.id)) {
    const JobRun& r = jobs_[job_index_.at(w.id)];
    return JobCouldPlace(r, TrainingCandidates(r));
  }
  return DevCouldPlace(devs_[dev_index_.at(w.id)]);
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
      if (IsJob(v.id)) {
        AddJobCandidates(jobs_[job_index_.at(v.id)], pi, v.cost, &pc);  // every pod of a gang
        continue;
      }
      const DevRun& d = devs_[dev_index_.at(v.id)];
      // A notebook on a MIG slice frees no whole GPU: not a victim for a fit.
      if (d.where.pool == pi && d.partition < 0) pc.push_back({v.id, d.where.node, d.pod, d.where.gpus, v.cost});
    }
    auto vs = GangVictims(pi, pod, job ? jobs_[job_index_.at(w.id)].job->pods : 1, pc);
    if (vs) return vs->victims;
  }
  return std::nullopt;
}

void Engine::OnAdmit(const tenancy::WorkloadRequest& w) {
  if (IsJob(w.id)) {
    JobRun& r = jobs_[job_index_.at(w.id)];
    r.admitted_at = now_;
    r.state = JobState::kPending;
    if (PlaceJob(r, TrainingCandidates(r))) {
      StartJob(r);
    } else {
      pending_jobs_.push_back(job_index_.at(w.id));
    }
    return;
  }
  DevRun& d = devs_[dev_index_.at(w.id)];
  d.state = DevState::kPending;
  if (PlaceDev(d)) {
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

void Engine::RollBack(JobRun& r, double seconds) {
  const auto type = static_cast<std::size_t>(pools_[static_cast<std::size_t>(r.where.pool)].spec->type);
  const double steps = std::min(r.done, r.job->steps_per_s[type] * seconds);
  if (steps <= 0) return;
  out_.training_lost_pflop += steps * r.job->pflop_per_step;
  out_.training_lost_gpu_hours += r.job->gpus * steps / r.job->steps_per_s[type] / 3600.0;
  r.done -= steps;
}

void Engine::MoveJob(JobRun& r, const std::vector<Where>& to) {
  // Checkpoint now, restart there: the checkpoint's cost and the restore are the work lost.
  RollBack(r, s_.fleet.checkpoint_cost_s);
  ReleaseJob(r);
  Hold(r, to);
  ++r.restarts;
  StartJob(r);
}

void Engine::PreemptJob(JobRun& r, PreemptedBy by) {
  if (r.state == JobState::kRunning) RollBack(r, std::fmod(std::max(0.0, now_ - r.seg_start), r.job->checkpoint_s));
  ReleaseJob(r);
  ++r.restarts;
  if (by == PreemptedBy::kAdmission) {
    ++out_.admission_preemptions;
    r.state = JobState::kQueued;
    admitter_->Evicted(r.job->id, /*requeue=*/true);
    pending_jobs_.erase(std::remove(pending_jobs_.begin(), pending_jobs_.end(), job_index_.at(r.job->id)), pending_jobs_.end());
  } else {
    // A spot preemption, or one by a Gold serving replica: the pod is recreated and placed again
    // (SkyPilot's recovery, or the Kubernetes job controller); it stays admitted.
    ++(by == PreemptedBy::kSpot ? out_.spot_preemptions : out_.serving_preemptions);
    r.state = JobState::kPending;
    pending_jobs_.push_back(job_index_.at(r.job->id));
  }
}

double Engine::DevIdleS(const DevRun& d) const {
  if (d.state == DevState::kTail) return now_ - d.tail_start;
  if (d.state != DevState::kActive) return 0;
  const double used = d.active_done + (now_ - d.start);
  for (const auto& [at, len] : d.dev->think_gaps) {
    if (used >= at && used < at + len) return used - at;
  }
  return 0;
}

void Engine::StopIdleDev(DevRun& d) {
  if (d.state == DevState::kTail) {
    EndDev(d, /*reclaimed=*/true);
    return;
  }
  if (d.state != DevState::kActive) return;
  // Cut in use: the session's state is gone; its user is back at the end of the think time and
  // starts the notebook again (a new admission and placement), resuming the work after the gap.
  const double used = d.active_done + (now_ - d.start);
  double resume = used;
  for (const auto& [at, len] : d.dev->think_gaps) {
    if (used >= at && used < at + len) resume = at + len;
  }
  ReleaseDev(d);
  admitter_->Finished(d.dev->id);
  d.active_done = resume;
  d.back_at = now_ + (resume - used);
  d.state = DevState::kAway;
  ++out_.dev_cut_in_use;
}

void Engine::EndDev(DevRun& d, bool reclaimed) {
  ReleaseDev(d);
  if (reclaimed) ++out_.idle_reclaims;
  d.state = DevState::kDone;
  admitter_->Finished(d.dev->id);
}

void Engine::EvictDev(DevRun& d) {
  // Evicted by admission: an idle notebook is closed (its user had left it); one in use goes back
  // to its queue with the rest of its session.
  if (d.state == DevState::kActive) {
    d.active_done += now_ - d.start;
    ReleaseDev(d);
    d.state = DevState::kQueued;
    ++out_.admission_preemptions;
    admitter_->Evicted(d.dev->id, /*requeue=*/true);
  } else {
    ReleaseDev(d);
    if (d.state == DevState::kTail) ++out_.idle_reclaims;
    d.state = DevState::kDone;
    admitter_->Evicted(d.dev->id, /*requeue=*/false);
  }
  pending_devs_.erase(std::remove(pending_devs_.begin(), pending_devs_.end(), dev_index_.at(d.dev->id)), pending_devs_.end());
}


std::vector<int> Engine::DefragDestinations(const JobRun& r, int pool, bool to_reference) const {
  const double speed = r.job->steps_per_s[static_cast<std::size_t>(pools_[static_cast<std::size_t>(pool)].spec->type)];
  std::vector<std::pair<double, int>> to;
  for (const auto& q : pools_) {
    const double s = r.job->steps_per_s[static_cast<std::size_t>(q.spec->type)];
    const bool ok = s >= c_.defrag_min_speed * speed || (to_reference && q.spec->type == match_numeraire_);
    if (q.committed() && s > 0 && ok) to.emplace_back(q.index == pool ? -kInf : -s, q.index);
  }
  std::sort(to.begin(), to.end());
  std::vector<int> cands;
  for (const auto& t : to) cands.push_back(t.second);
  return cands;
}

bool Engine::CommitMoves(bool all, const std::vector<std::pair<std::size_t, Where>>& moves,
                         std::vector<std::vector<std::vector<std::size_t>>>& on) {
  if (!all) {
    for (const auto& [i, dest] : moves) pools_[static_cast<std::size_t>(dest.pool)].state->Unbind(jobs_[i].pod, dest.node, dest.gpus);
    return false;
  }
  for (const auto& [i, dest] : moves) {
    MoveJob(jobs_[i], {dest});
    ++out_.defrag_moves;
    if (pools_[static_cast<std::size_t>(dest.pool)].committed()) on[static_cast<std::size_t>(dest.pool)][dest.node.value()].push_back(i);
  }
  return true;
}

void Engine::Defragment() {
  // Owned GPUs left in holes too small for the gangs that wait (issue 39, fleet c): nodes are
  // emptied for them by moving the few training pods on them into the holes of other committed
  // nodes. What it reads is what a scheduler sees now: the queue (jobs arrived and not running),
  // the nodes' occupants and each job's submitted speeds.
  if (!c_.defragment) return;
  std::vector<const JobRun*> blocked;
  for (const JobRun& r : jobs_) {
    if ((r.state == JobState::kQueued && r.job->arrival_s <= now_) || r.state == JobState::kPending) blocked.push_back(&r);
  }
  if (blocked.empty()) return;
  // Higher tiers first (a Gold gang's guarantee is a start within one cycle), then arrival order.
  std::stable_sort(blocked.begin(), blocked.end(), [&](const JobRun* a, const JobRun* b) { return TierRank(*a) < TierRank(*b); });
  // Occupants of every committed node: training jobs (movable) or anything else (the node stays).
  NodeOccupants occupants = Occupants(/*committed=*/true, /*training_stays=*/false);
  auto& on = occupants.movable;
  auto& pinned = occupants.held;
  // The most GPUs free on one node of each committed pool (recomputed after a node is emptied).
  std::vector<std::int64_t> most_free(pools_.size(), 0);
  auto refresh = [&] {
    for (const auto& p : pools_) {
      if (!p.committed()) continue;
      std::int64_t best = 0;
      for (std::size_t n = 0; n < p.slots.size(); ++n) {
        best = std::max(best, p.state->node(cluster::NodeId(static_cast<std::uint32_t>(n))).TotalGpuIdle());
      }
      most_free[static_cast<std::size_t>(p.index)] = best / cluster::kMilliPerGpu;
    }
  };
  refresh();
  int freed = 0;
  for (const JobRun* w : blocked) {
    if (freed >= kDefragNodesPerStep) break;
    if (YieldRoomFor(*w, on)) {  // type matching (engine_match.cc)
      ++freed;
      refresh();
      continue;
    }
    const int g = w->pod.num_gpu;  // a gang's pod (the gang waits for a node per pod it cannot fit)
    // Its committed pools, fastest first; none may already hold it.
    std::vector<std::pair<double, int>> pools;
    bool fits = false;
    for (const auto& p : pools_) {
      const double speed = w->job->steps_per_s[static_cast<std::size_t>(p.spec->type)];
      if (!p.committed() || speed <= 0) continue;
      if (most_free[static_cast<std::size_t>(p.index)] >= g) fits = true;
      pools.emplace_back(-speed, p.index);
    }
    if (fits || pools.empty()) continue;
    std::sort(pools.begin(), pools.end());
    bool done = false;
    for (const auto& [neg_speed, pi] : pools) {
      PoolRun& p = pools_[static_cast<std::size_t>(pi)];
      const auto pu = static_cast<std::size_t>(pi);
      // Nodes by GPUs in use, fewest first: the least work moved.
      std::vector<std::pair<std::int64_t, std::size_t>> nodes;
      for (std::size_t n = 0; n < p.slots.size(); ++n) {
        if (p.slots[n].phase != Phase::kUp || p.slots[n].gpus < g || pinned[pu][n] || on[pu][n].empty()) continue;
        const std::int64_t busy = p.slots[n].gpus * cluster::kMilliPerGpu -
                                  p.state->node(cluster::NodeId(static_cast<std::uint32_t>(n))).TotalGpuIdle();
        nodes.emplace_back(busy, n);
      }
      std::sort(nodes.begin(), nodes.end());
      for (const auto& [busy, n] : nodes) {
        if (static_cast<double>(busy) > c_.defrag_max_busy_share * p.slots[n].gpus * cluster::kMilliPerGpu + 1e-9) break;
        const cluster::NodeId node(static_cast<std::uint32_t>(n));
        p.state->SetEligibility(node, cluster::NodeEligibility::kNone);
        std::vector<std::pair<std::size_t, Where>> moves;
        bool all = true;
        for (std::size_t i : on[pu][n]) {
          const JobRun& r = jobs_[i];
          // Type matching: a job the gang outmatches on this type may go to the reference type too.
          const bool yields = MatchYields(r, p.spec->type) && MatchClaims(MatchClassOf(*w), r, p.spec->type);
          const std::vector<int> cands = DefragDestinations(r, pi, yields);
          Where dest;
          if (!TryPlace(r.pod, cands, &dest)) {
            all = false;
            break;
          }
          moves.emplace_back(i, dest);
        }
        p.state->SetEligibility(node, cluster::NodeEligibility::kAll);
        if (!CommitMoves(all, moves, on)) continue;
        on[pu][n].clear();
        ++freed;
        refresh();
        done = true;
        break;
      }
      if (done) break;
    }
    if (!done && YieldNodeFor(*w, pinned, on)) {  // type matching (engine_match.cc)
      ++freed;
      refresh();
    }
  }
  if (freed > 0) admitter_->CapacityChanged();
}

}  // namespace seedance::fleet::detail
