#include "seedance/sim/remaining_work.h"

#include <algorithm>

namespace seedance::sim {
namespace {

double FastestSpeed(const JobInfo& job) {
  double best = 0;
  for (double v : job.steps_per_s) best = std::max(best, v);
  return best;
}

}  // namespace

std::string_view EstimateSourceName(RemainingWorkEstimator::Source source) {
  switch (source) {
    case RemainingWorkEstimator::Source::kClass: return "class";
    case RemainingWorkEstimator::Source::kTenant: return "tenant";
    case RemainingWorkEstimator::Source::kUserEstimate: return "user-estimate";
    case RemainingWorkEstimator::Source::kAll: return "all";
    case RemainingWorkEstimator::Source::kPrior: return "prior";
  }
  return "?";
}

void RemainingWorkEstimator::Group::Merge() const {
  if (pending_.empty()) return;
  std::sort(pending_.begin(), pending_.end());
  const auto mid = static_cast<std::ptrdiff_t>(sorted_.size());
  sorted_.insert(sorted_.end(), pending_.begin(), pending_.end());
  std::inplace_merge(sorted_.begin(), sorted_.begin() + mid, sorted_.end());
  pending_.clear();
  suffix_.assign(sorted_.size() + 1, 0.0);
  for (std::size_t i = sorted_.size(); i-- > 0;) suffix_[i] = suffix_[i + 1] + sorted_[i];
}

double RemainingWorkEstimator::Group::MeanResidual(double attained_s, int min) const {
  Merge();
  auto it = std::upper_bound(sorted_.begin(), sorted_.end(), attained_s);
  const auto i = static_cast<std::size_t>(it - sorted_.begin());
  const std::size_t larger = sorted_.size() - i;
  if (larger == 0 || larger < static_cast<std::size_t>(std::max(1, min))) return -1;
  return suffix_[i] / static_cast<double>(larger) - attained_s;
}

void RemainingWorkEstimator::Observe(const JobInfo& job, double total_steps) {
  const double speed = FastestSpeed(job);
  if (!(speed > 0) || !(total_steps > 0)) return;
  const double size_s = total_steps / speed;
  by_class_[job.job_type].Add(size_s);
  if (!job.tenant.empty()) by_tenant_[job.tenant].Add(size_s);
  all_.Add(size_s);
}

RemainingWorkEstimator::Estimate RemainingWorkEstimator::EstimateRemaining(const JobInfo& job,
                                                                           double attained_steps) const {
  const double speed = FastestSpeed(job);
  if (!(speed > 0)) return Estimate{options_.default_remaining_s, Source::kPrior};
  const double attained_s = std::max(0.0, attained_steps) / speed;
  auto from = [&](const Group& g, Source source, Estimate* out) {
    double r = g.MeanResidual(attained_s, options_.min_samples);
    if (r <= 0) return false;
    *out = Estimate{r * speed, source};
    return true;
  };
  Estimate e;
  if (auto it = by_class_.find(job.job_type); it != by_class_.end() && from(it->second, Source::kClass, &e)) {
    return e;
  }
  if (!job.tenant.empty()) {
    if (auto it = by_tenant_.find(job.tenant); it != by_tenant_.end() && from(it->second, Source::kTenant, &e)) {
      return e;
    }
  }
  if (job.user_estimate_steps > attained_steps) {
    return Estimate{job.user_estimate_steps - attained_steps, Source::kUserEstimate};
  }
  if (from(all_, Source::kAll, &e)) return e;
  return Estimate{std::max(options_.default_remaining_s, attained_s) * speed, Source::kPrior};
}

}  // namespace seedance::sim
