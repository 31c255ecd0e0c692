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
  rs.idle_s = DevIdleS(d);
  if (d.state == DevState::kActive || d.state == DevState::kTail) rs.executed_s = now_ - d.start;
  // A notebook in use loses its session state when preempted: everything since it started.
  if (d.state == DevState::kActive) rs.lost_if_preempted = now_ - d.start;
  return rs;
}

bool Engine::CanPlace(const tenancy::WorkloadRequest& w) {
  if (IsJob(w.id)) {
    const JobRun& r = jobs_[job_index_.at(w.id)];
    return JobCouldPlace(r, TrainingCandidates(r));
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
      if (IsJob(v.id)) {
        AddJobCandidates(jobs_[job_index_.at(v.id)], pi, v.cost, &pc);  // every pod of a gang
        continue;
      }
      const DevRun& d = devs_[dev_index_.at(v.id)];
      if (d.where.pool == pi) pc.push_back({v.id, d.where.node, d.pod, d.where.gpus, v.cost});
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

void Engine::PreemptJob(JobRun& r, PreemptedBy by) {
  if (r.state == JobState::kRunning) {
    const double speed = r.job->steps_per_s[static_cast<std::size_t>(pools_[static_cast<std::size_t>(r.where.pool)].spec->type)];
    const double since = std::max(0.0, now_ - r.seg_start);
    r.done = std::max(0.0, r.done - speed * std::fmod(since, r.job->checkpoint_s));
  }
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
  Release(d.where, d.pod);
  admitter_->Finished(d.dev->id);
  d.active_done = resume;
  d.back_at = now_ + (resume - used);
  d.state = DevState::kAway;
  ++out_.dev_cut_in_use;
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

}  // namespace seedance::fleet::detail
