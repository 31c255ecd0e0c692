#include "seedance/sim/kueue_scenario.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <sstream>
#include <tuple>

#include "seedance/tenancy/admission.h"
#include "seedance/tenancy/quota.h"

namespace seedance::sim {
namespace {

using tenancy::Quantity;

// Kueue's performance test has no nodes: every admitted workload can run.
class NoNodesEnv final : public tenancy::AdmissionEnv {
 public:
  tenancy::RunningState Running(std::int64_t) const override { return {}; }
  bool CanPlace(const tenancy::WorkloadRequest&) override { return true; }
  std::optional<std::vector<std::int64_t>> VictimsForFit(const tenancy::WorkloadRequest&,
                                                         std::span<const tenancy::VictimCandidate>) override {
    return std::nullopt;
  }
};

// Status writes through a client-side token bucket (client-go's: `qps` tokens/s, `burst` deep),
// served in request order (GCRA form, integer microseconds). qps <= 0: every write passes at once.
class WriteLimiter {
 public:
  WriteLimiter(double qps, double burst)
      : interval_us_(qps > 0 ? std::llround(1e6 / qps) : 0),
        tolerance_us_(qps > 0 ? std::llround((burst - 1) * 1e6 / qps) : 0) {}
  // Returns when a write requested at `now_us` passes (>= now_us).
  std::int64_t Pass(std::int64_t now_us) {
    if (interval_us_ == 0) return now_us;
    const std::int64_t at = std::max(now_us, tat_us_ - tolerance_us_);
    tat_us_ = std::max(tat_us_, at) + interval_us_;
    return at;
  }

 private:
  std::int64_t interval_us_, tolerance_us_;
  std::int64_t tat_us_ = 0;  // theoretical arrival time of the next conforming write
};

enum class EventKind : std::uint8_t {
  kArrival,  // the workload is created
  kStart,    // its admission write passed: it counts as admitted and starts running
  kFinish,   // its runtime since (last) admission is over
  kRelease,  // its eviction write passed: the runner clears its reservation
};

struct Event {
  std::int64_t t_us;
  std::uint64_t seq;
  EventKind kind;
  std::int64_t id;
  int epoch;  // the admission it belongs to (stale events are dropped)
};

struct Later {
  bool operator()(const Event& a, const Event& b) const { return std::tie(a.t_us, a.seq) > std::tie(b.t_us, b.seq); }
};

enum class WlState { kWaiting, kReserved, kRunning, kEvicting, kDone };

double Seconds(std::int64_t us) { return static_cast<double>(us) / 1e6; }

}  // namespace

Status KueueScenarioSpec::Validate() const {
  if (cohorts < 1) return InvalidArgumentError("kueue scenario: cohorts must be >= 1");
  if (queues_per_cohort < 1) return InvalidArgumentError("kueue scenario: queues_per_cohort must be >= 1");
  if (!(nominal_cpu > 0)) return InvalidArgumentError("kueue scenario: nominal_cpu must be > 0");
  if (!(borrowing_limit_cpu >= 0)) return InvalidArgumentError("kueue scenario: borrowing_limit_cpu must be >= 0");
  if (classes.empty()) return InvalidArgumentError("kueue scenario: no workload classes");
  const double cap = std::min(nominal_cpu + borrowing_limit_cpu, nominal_cpu * queues_per_cohort);
  for (const auto& c : classes) {
    if (c.name.empty()) return InvalidArgumentError("kueue scenario: a class without a name");
    if (c.count_per_cq < 0 || c.interval_ms < 0 || c.runtime_ms <= 0)
      return InvalidArgumentError("kueue scenario: class '" + c.name + "': count and interval >= 0, runtime > 0");
    if (!(c.request_cpu > 0) || c.request_cpu > cap) {
      std::ostringstream m;
      m << "kueue scenario: class '" << c.name << "': request " << c.request_cpu << " cpu outside (0, " << cap
        << "] (never admitted)";
      return InvalidArgumentError(m.str());
    }
  }
  return Status::Ok();
}

std::string KueueCqName(const KueueScenarioSpec& spec, int cq) {
  return "cq-0-" + std::to_string(cq % spec.queues_per_cohort) + "-cohort-" + std::to_string(cq / spec.queues_per_cohort);
}

std::vector<KueueWorkload> GenerateKueueWorkloads(const KueueScenarioSpec& spec) {
  std::vector<KueueWorkload> out;
  const int num_cqs = spec.cohorts * spec.queues_per_cohort;
  for (int cq = 0; cq < num_cqs; ++cq) {
    for (std::size_t k = 0; k < spec.classes.size(); ++k) {
      const KueueClassSpec& c = spec.classes[k];
      for (int i = 0; i < c.count_per_cq; ++i) {
        KueueWorkload w;
        w.id = static_cast<std::int64_t>(out.size());
        w.name = c.name + "-" + std::to_string(k) + "-" + std::to_string(i) + "-0";
        w.cq = cq;
        w.klass = static_cast<int>(k);
        w.created_us = static_cast<std::int64_t>(i + 1) * c.interval_ms * 1000;
        w.runtime_us = static_cast<std::int64_t>(c.runtime_ms) * 1000;
        out.push_back(std::move(w));
      }
    }
  }
  return out;
}

std::vector<tenancy::TenantConfig> KueueTenants(const KueueScenarioSpec& spec) {
  std::vector<tenancy::TenantConfig> out;
  for (int cq = 0; cq < spec.cohorts * spec.queues_per_cohort; ++cq) {
    tenancy::TenantConfig t;
    t.name = KueueCqName(spec, cq);
    t.cohort = "cohort-" + std::to_string(cq / spec.queues_per_cohort);
    t.quota.push_back({"cpu", spec.nominal_cpu, spec.borrowing_limit_cpu, std::nullopt});
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<KueueClassResult> SummarizeKueueClasses(const KueueScenarioSpec& spec,
                                                    const std::vector<KueueWorkload>& workloads,
                                                    const std::vector<KueueWorkloadOutcome>& outcomes) {
  std::vector<KueueClassResult> out;
  for (std::size_t k = 0; k < spec.classes.size(); ++k) {
    KueueClassResult c;
    c.name = spec.classes[k].name;
    std::vector<std::int64_t> waits;
    double finish_sum = 0;
    for (std::size_t i = 0; i < workloads.size(); ++i) {
      if (workloads[i].klass != static_cast<int>(k)) continue;
      const auto& o = outcomes[i];
      waits.push_back(o.last_admitted_us - workloads[i].created_us);
      finish_sum += Seconds(o.finished_us - workloads[i].created_us);
      c.evictions += o.evictions;
    }
    c.count = static_cast<int>(waits.size());
    if (!waits.empty()) {
      std::sort(waits.begin(), waits.end());
      std::int64_t sum = 0;
      for (auto w : waits) sum += w;
      c.mean_admission_s = Seconds(sum) / static_cast<double>(waits.size());
      const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(waits.size())));
      c.p99_admission_s = Seconds(waits[std::max<std::size_t>(rank, 1) - 1]);
      c.mean_finish_s = finish_sum / static_cast<double>(waits.size());
    }
    out.push_back(std::move(c));
  }
  return out;
}

nlohmann::json KueueClassesJson(const std::vector<KueueClassResult>& classes) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : classes) {
    out.push_back({{"name", c.name},
                   {"count", c.count},
                   {"mean_admission_s", c.mean_admission_s},
                   {"p99_admission_s", c.p99_admission_s},
                   {"mean_finish_s", c.mean_finish_s},
                   {"evictions", c.evictions}});
  }
  return out;
}

Result<KueueResult> RunKueueScenario(const KueueScenarioSpec& spec, const KueueRunOptions& options) {
  SEEDANCE_RETURN_IF_ERROR(spec.Validate());
  if (!(options.api_qps >= 0) || (options.api_qps > 0 && !(options.api_burst >= 1)))
    return InvalidArgumentError("kueue scenario: api_qps must be >= 0 and api_burst >= 1");
  if (options.mode != tenancy::TenancyMode::kKueue && !tenancy::IsFairSharing(options.mode))
    return InvalidArgumentError("kueue scenario: mode must be kueue or a fair-sharing mode");
  const std::vector<KueueWorkload> wls = GenerateKueueWorkloads(spec);
  const int num_cqs = spec.cohorts * spec.queues_per_cohort;
  tenancy::TenancyConfig config;
  config.tenants = KueueTenants(spec);
  auto book = tenancy::QuotaBook::Build(config.tenants, /*allow_borrowing=*/true);
  if (!book.has_value()) return book.error();
  tenancy::Admitter admitter(std::move(*book), options.mode, config);
  std::vector<Quantity> request(spec.classes.size());
  for (std::size_t k = 0; k < spec.classes.size(); ++k) request[k] = tenancy::ToQuantity(spec.classes[k].request_cpu);
  auto req_of = [&](std::int64_t id) { return request[static_cast<std::size_t>(wls[static_cast<std::size_t>(id)].klass)]; };

  KueueResult r;
  r.workloads.resize(wls.size());
  std::vector<WlState> state(wls.size(), WlState::kWaiting);
  std::vector<int> epoch(wls.size(), 0);
  std::priority_queue<Event, std::vector<Event>, Later> events;
  std::uint64_t seq = 0;
  auto push = [&](std::int64_t t_us, EventKind kind, std::int64_t id) {
    events.push({t_us, seq++, kind, id, epoch[static_cast<std::size_t>(id)]});
  };
  for (const auto& w : wls) push(w.created_us, EventKind::kArrival, w.id);

  // Usage integral (milli-cpu x us), piecewise constant between changes.
  std::int64_t usage = 0, last_t = 0, last_change = 0;
  long double integral = 0;
  auto change_usage = [&](std::int64_t now, Quantity delta) {
    integral += static_cast<long double>(usage) * static_cast<long double>(now - last_t);
    last_t = now;
    usage += delta;
    last_change = now;
  };
  NoNodesEnv env;
  WriteLimiter limiter(options.api_qps, options.api_burst);
  std::vector<tenancy::AdmissionDecision> out;

  auto start = [&](std::int64_t id, std::int64_t now) {
    const auto i = static_cast<std::size_t>(id);
    state[i] = WlState::kRunning;
    r.workloads[i].last_admitted_us = now;
    ++r.workloads[i].admissions;
    push(now + wls[i].runtime_us, EventKind::kFinish, id);
  };
  // The runner clears an evicted workload's reservation; it rejoins its queue.
  auto release = [&](std::int64_t id, std::int64_t now) {
    const auto i = static_cast<std::size_t>(id);
    admitter.Evicted(id, /*requeue=*/true);
    state[i] = WlState::kWaiting;
    change_usage(now, -req_of(id));
  };
  auto decide = [&](std::int64_t now) {
    while (true) {
      out.clear();
      admitter.Cycle(Seconds(now), env, &out);
      bool released = false;
      for (const auto& d : out) {
        const auto i = static_cast<std::size_t>(d.id);
        if (d.kind == tenancy::AdmissionDecision::Kind::kAdmit) {
          ++r.admissions;
          ++epoch[i];
          state[i] = WlState::kReserved;
          change_usage(now, req_of(d.id));
          const std::int64_t at = limiter.Pass(now);
          if (at == now) {
            start(d.id, now);
          } else {
            push(at, EventKind::kStart, d.id);
          }
        } else {
          ++r.preemptions;
          ++r.workloads[i].evictions;
          state[i] = WlState::kEvicting;
          const std::int64_t at = limiter.Pass(now);
          if (at == now) {
            release(d.id, now);
            released = true;
          } else {
            push(at, EventKind::kRelease, d.id);
          }
        }
      }
      if (!released) break;
    }
  };

  const double cpu0 = options.cpu_clock ? options.cpu_clock() : 0.0;
  std::int64_t now = 0;
  while (!events.empty()) {
    now = events.top().t_us;
    while (!events.empty() && events.top().t_us == now) {
      const Event e = events.top();
      events.pop();
      const auto i = static_cast<std::size_t>(e.id);
      const bool current = e.epoch == epoch[i];
      switch (e.kind) {
        case EventKind::kArrival: {
          const KueueWorkload& w = wls[i];
          const KueueClassSpec& c = spec.classes[static_cast<std::size_t>(w.klass)];
          admitter.Submit({w.id, w.cq, tenancy::Tier::kSilver, c.priority, Seconds(w.created_us), {req_of(w.id)}});
          break;
        }
        case EventKind::kStart:
          if (current && state[i] == WlState::kReserved) start(e.id, now);
          break;
        case EventKind::kFinish:
          if (current && (state[i] == WlState::kRunning || state[i] == WlState::kEvicting)) {
            admitter.Finished(e.id);
            state[i] = WlState::kDone;
            r.workloads[i].finished_us = now;
            change_usage(now, -req_of(e.id));
          }
          break;
        case EventKind::kRelease:
          if (current && state[i] == WlState::kEvicting) release(e.id, now);
          break;
      }
    }
    decide(now);
  }
  if (options.cpu_clock) {
    r.timed = true;
    r.cpu_seconds = std::max(0.0, options.cpu_clock() - cpu0);
  }
  for (std::size_t i = 0; i < wls.size(); ++i) {
    if (state[i] != WlState::kDone)
      return InternalError("kueue scenario: workload " + wls[i].name + " in " + KueueCqName(spec, wls[i].cq) +
                           " never finished");
  }
  r.end_s = Seconds(now);
  r.cycles = admitter.stats().cycles;
  const long double nominal_total =
      static_cast<long double>(tenancy::ToQuantity(spec.nominal_cpu)) * static_cast<long double>(num_cqs);
  r.usage_pct = last_change > 0
                    ? static_cast<double>(integral * 100 / (nominal_total * static_cast<long double>(last_change)))
                    : 0.0;
  r.classes = SummarizeKueueClasses(spec, wls, r.workloads);
  return r;
}

nlohmann::json KueueResultJson(const KueueScenarioSpec& spec, const KueueRunOptions& options, const KueueResult& r) {
  const nlohmann::json classes = KueueClassesJson(r.classes);
  nlohmann::json spec_classes = nlohmann::json::array();
  std::int64_t total = 0;
  for (const auto& c : spec.classes) {
    spec_classes.push_back({{"name", c.name},
                            {"count_per_cq", c.count_per_cq},
                            {"interval_ms", c.interval_ms},
                            {"request_cpu", c.request_cpu},
                            {"runtime_ms", c.runtime_ms},
                            {"priority", c.priority}});
    total += static_cast<std::int64_t>(c.count_per_cq) * spec.cohorts * spec.queues_per_cohort;
  }
  const KueuePublished pub;
  nlohmann::json pub_classes = nlohmann::json::array();
  for (const auto& c : pub.classes) {
    pub_classes.push_back(
        {{"name", c.name}, {"mean_admission_s", c.mean_admission_s}, {"max_mean_admission_s", c.max_mean_admission_s}});
  }
  nlohmann::json doc = {
      {"generated_by", "seedance bench kueue"},
      {"scenario",
       {{"source", "kubernetes-sigs/kueue test/performance/scheduler/configs/baseline/generator.yaml @ ff69552e"},
        {"cohorts", spec.cohorts},
        {"queues_per_cohort", spec.queues_per_cohort},
        {"nominal_cpu", spec.nominal_cpu},
        {"borrowing_limit_cpu", spec.borrowing_limit_cpu},
        {"workloads", total},
        {"classes", spec_classes},
        {"admission", options.mode == tenancy::TenancyMode::kKueue
                          ? "tenancy::Admitter, mode kueue: reclaimWithinCohort Any, withinClusterQueue LowerPriority, "
                            "BestEffortFIFO, classical ordering, scheduling-equivalence hashing"
                          : "tenancy::Admitter, mode " + std::string(tenancy::TenancyModeName(options.mode)) +
                                ": Kueue Fair Sharing (dominant resource share ordering and preemption), "
                                "reclaimWithinCohort LowerPriority, withinClusterQueue LowerPriority, BestEffortFIFO"}}},
      {"api_qps", options.api_qps},
      {"api_burst", options.api_qps > 0 ? options.api_burst : 0.0},
      {"classes", classes},
      {"usage_pct", r.usage_pct},
      {"preemptions", r.preemptions},
      {"admissions", r.admissions},
      {"cycles", r.cycles},
      {"simulated_end_s", r.end_s},
      {"published",
       {{"source", pub.source},
        {"wall_s", pub.wall_s},
        {"max_wall_s", pub.max_wall_s},
        {"usage_pct", pub.usage_pct},
        {"min_usage_pct", pub.min_usage_pct},
        {"admissions_per_wall_s", pub.admissions / pub.wall_s},
        {"classes", pub_classes},
        {"caveat", "Kueue's wall time is API-bound: minimalkueue's client is limited to 50 QPS (burst 100), so "
                   "15,000 admission writes alone take about 300 s; compare decisions per second, not wall time"}}},
  };
  if (r.timed) {
    const double decisions = static_cast<double>(r.admissions + r.preemptions);
    doc["timing"] = {{"cpu_seconds", r.cpu_seconds},
                     {"decisions_per_cpu_s", r.cpu_seconds > 0 ? decisions / r.cpu_seconds : 0.0},
                     {"note", "CPU time of the event loop; differs between runs, not a compared field"}};
  }
  return doc;
}

}  // namespace seedance::sim
