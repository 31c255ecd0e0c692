#include "seedance/sim/deadline/spot_job.h"

#include <algorithm>

#include "seedance/core/check.h"
#include "seedance/sim/fleet.h"

namespace seedance::sim::deadline {

const char* InstanceName(Instance i) {
  switch (i) {
    case Instance::kIdle: return "idle";
    case Instance::kSpot: return "spot";
    case Instance::kOnDemand: return "on-demand";
  }
  return "?";
}

Result<SpotTrace> LoadSpotTrace(const std::string& path, const std::string& name, int min_instances) {
  SEEDANCE_ASSIGN_OR_RETURN(SpotSeries s, SpotSeries::LoadFile(path, 1));
  const double gap = s.gap_s();
  if (gap != static_cast<double>(static_cast<std::int64_t>(gap))) {
    return InvalidArgumentError(path + ": field 'metadata.gap_seconds': must be a whole number of seconds");
  }
  SpotTrace t;
  t.name = name;
  t.gap_s = static_cast<std::int64_t>(gap);
  t.available.reserve(s.ticks());
  for (std::size_t i = 0; i < s.ticks(); ++i) {
    // Sampled at the middle of tick i, so that floating point cannot pick the neighbour.
    const int n = s.AvailableAt((static_cast<double>(i) + 0.5) * gap);
    t.available.push_back(n >= min_instances ? 1 : 0);
  }
  return t;
}

bool PastView::At(std::int64_t tick) const {
  SEEDANCE_CHECK(tick <= now_) << "policy read spot tick " << tick << " in the future of tick " << now_;
  return trace_->At(tick);
}

TickStep StepTick(Instance inst, std::int64_t changeover_left, std::int64_t remaining, std::int64_t gap_s,
                  bool whole_tick_billing) {
  TickStep s;
  if (inst == Instance::kIdle) return s;
  s.used_s = std::min(gap_s, changeover_left + remaining);
  s.billed_s = whole_tick_billing ? gap_s : s.used_s;
  const std::int64_t served = std::min(changeover_left, s.used_s);
  s.progress_s = s.used_s - served;
  s.changeover_left_s = changeover_left - served;
  return s;
}

JobRun::JobRun(const DeadlineJob& job, std::int64_t gap_s)
    : job_(&job),
      gap_s_(gap_s),
      max_ticks_((job.deadline_s + job.compute_s + job.changeover_s) / gap_s + 2),
      left_(job.compute_s) {
  if (left_ <= 0) out_.finish_s = 0;
}

void JobRun::Observe(JobView& view, std::int64_t start_tick, std::int64_t i) const {
  view.job = job_;
  view.gap_s = gap_s_;
  view.start_tick = start_tick;
  view.now_tick = start_tick + i;
  view.elapsed_s = i * gap_s_;
  view.remaining_compute_s = left_;
  view.remaining_time_s = job_->deadline_s - i * gap_s_;
  view.current = held_;
  view.changeover_left_s = changeover_left_;
  view.previous = previous_;
  view.previous_changeover_left_s = previous_changeover_left_;
}

void JobRun::Preempt() {
  held_ = Instance::kIdle;
  changeover_left_ = 0;
  ++out_.preemptions;
}

void JobRun::Hold(Instance want, bool relaunch, std::int64_t i) {
  if (want != held_ || relaunch) {
    held_ = want;
    changeover_left_ = held_ == Instance::kIdle ? 0 : job_->changeover_s;
    if (held_ != Instance::kIdle) ++out_.changeovers;
  }
  const TickStep s = StepTick(held_, changeover_left_, left_, gap_s_, job_->whole_tick_billing);
  changeover_left_ = s.changeover_left_s;
  left_ -= s.progress_s;
  previous_ = held_;
  previous_changeover_left_ = changeover_left_;
  RecordTick(held_, s, left_, i * gap_s_, out_);
}

JobOutcome JobRun::Finish() {
  FinishOutcome(*job_, out_);
  return std::move(out_);
}

JobOutcome SimulateJob(const SpotTrace& trace, std::int64_t start_tick, const DeadlineJob& job,
                       DeadlinePolicy& policy) {
  JobRun run(job, trace.gap_s);
  policy.Start(job, trace.gap_s, start_tick);
  for (std::int64_t i = 0; run.Running(i); ++i) {
    const std::int64_t tick = start_tick + i;
    const bool avail = trace.At(tick);
    if (run.held() == Instance::kSpot && !avail) run.Preempt();
    Observation obs;
    run.Observe(obs, start_tick, i);
    obs.spot_available = avail;
    obs.past = PastView(&trace, tick);
    Instance want = policy.Decide(obs);
    run.outcome().decisions.push_back(want);
    if (want == Instance::kSpot && !avail) {
      ++run.outcome().invalid_requests;
      want = Instance::kIdle;
    }
    run.Hold(want, /*relaunch=*/false, i);
  }
  return run.Finish();
}

void RecordTick(Instance inst, const TickStep& step, std::int64_t remaining_after, std::int64_t tick_start_s,
                JobOutcome& out) {
  if (inst == Instance::kSpot) {
    out.spot_billed_s += step.billed_s;
    out.spot_compute_s += step.progress_s;
  } else if (inst == Instance::kOnDemand) {
    out.od_billed_s += step.billed_s;
    out.od_compute_s += step.progress_s;
  }
  if (remaining_after == 0) out.finish_s = tick_start_s + step.used_s;
}

void FinishOutcome(const DeadlineJob& job, JobOutcome& out) {
  out.cost = static_cast<double>(out.spot_billed_s) + job.od_price * static_cast<double>(out.od_billed_s);
  out.met_deadline = out.finish_s >= 0 && out.finish_s <= job.deadline_s;
}

}  // namespace seedance::sim::deadline
