#include "seedance/advise/fleet.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "seedance/cluster/gpu_model.h"
#include "seedance/core/duration.h"
#include "seedance/core/rng.h"
#include "seedance/gpu/catalog.h"
#include "seedance/ledger/apportion.h"
#include "seedance/sim/deadline/spot_job.h"
#include "seedance/telemetry/parse.h"
#include "seedance/telemetry/sample.h"

namespace seedance::advise {
namespace {

constexpr double kHourMs = 3'600'000.0;


struct Candidate {
  Finding f;
  ledger::TenantInput entity;  // for the Monte Carlo
  double range_saving_usd = 0;
};

std::string Pct(double v) { return fmt::format("{:.0f}%", 100.0 * v); }

// A duration annotation of a stored kube_pod_annotations series; -1 when the label is absent.
Result<double> AnnotationSeconds(const telemetry::Sample& s, std::string_view label, const std::string& key) {
  std::string_view v = s.LabelValue(label);
  if (v.empty()) return -1.0;
  auto secs = ParseDurationSeconds(v);
  if (!secs.has_value() || *secs <= 0) {
    return InvalidArgumentError(fmt::format("ledger series {}: label {} (pod annotation seedance.io/{}): '{}' "
                                            "is not a positive duration (e.g. 30m, 12h)",
                                            key, label, label.substr(std::string_view("annotation_seedance_io_").size()),
                                            v));
  }
  return *secs;
}

}  // namespace

Result<SpotInterruptionRate> SpotInterruptionRateOf(const std::string& trace_path) {
  std::string name = trace_path.substr(trace_path.find_last_of('/') + 1);
  SEEDANCE_ASSIGN_OR_RETURN(sim::deadline::SpotTrace t, sim::deadline::LoadSpotTrace(trace_path, name));
  SpotInterruptionRate r;
  r.trace = name;
  std::int64_t available = 0;
  for (std::size_t i = 0; i < t.available.size(); ++i) {
    if (t.available[i] != 0) ++available;
    if (i > 0 && t.available[i - 1] != 0 && t.available[i] == 0) ++r.interruptions;
  }
  r.available_hours = static_cast<double>(available * t.gap_s) / 3600.0;
  if (r.available_hours <= 0) {
    return InvalidArgumentError(trace_path + ": the spot series is never available (no interruption rate)");
  }
  r.per_hour = static_cast<double>(r.interruptions) / r.available_hours;
  return r;
}

Result<FleetInputs> FleetInputsFromLedger(ledger::Ledger& ledger,
                                          const ledger::TelemetryAttribution& telemetry,
                                          const ledger::LedgerConfig& config, std::int64_t from_ms,
                                          std::int64_t to_ms) {
  FleetInputs in;
  in.from_ms = from_ms;
  in.to_ms = to_ms;
  in.step_ms = config.step_ms;
  // The last sample's step is charged whole: the range ends where the charges do (at most one
  // step past the last sample).
  SEEDANCE_ASSIGN_OR_RETURN(auto charged, ledger.ChargeRange());
  if (charged.second > to_ms) in.to_ms = std::min(charged.second, to_ms + config.step_ms);
  std::map<std::string, JobUsage> jobs;
  std::map<std::string, NodeIdle> nodes;
  SEEDANCE_RETURN_IF_ERROR(ledger.ForEachChargeLine(from_ms, to_ms, [&](const ledger::Ledger::ChargeLine& c) {
    NodeIdle& n = nodes[c.node];
    n.node = c.node;
    n.bill_usd += ToUsd(c.cost);
    if (c.kind == ledger::ChargeKind::kIdle && c.workload.name.empty()) {
      n.idle_usd += ToUsd(c.cost);
      n.idle_gpu_hours += static_cast<double>(c.gpu_ms) / kHourMs;
      in.unshared_idle_usd += ToUsd(c.cost);
    }
    if (c.kind != ledger::ChargeKind::kWorkload) return;
    JobUsage& j = jobs[c.workload.job];
    j.job = c.workload.job;
    j.namespace_name = c.workload.namespace_name;
    j.tenant = c.workload.tenant;
    j.cost_usd += ToUsd(c.cost);
  }));
  for (const auto& [key, ev] : telemetry.evidence) {
    auto it = jobs.find(ev.job);
    if (it == jobs.end()) continue;
    JobUsage& j = it->second;
    if (j.model.empty()) j.model = ev.model;
    if (j.node.empty()) j.node = ev.node;
    double prev = j.gpu_hours;
    j.gpu_hours += ev.gpu_hours;
    if (ev.mean_utilization >= 0) {
      j.activity = j.activity < 0 ? ev.mean_utilization
                                  : (j.activity * prev + ev.mean_utilization * ev.gpu_hours) / j.gpu_hours;
    }
    j.peak_memory_mib = std::max(j.peak_memory_mib, ev.peak_memory_mib);
    std::int64_t end = ev.hour_ms + static_cast<std::int64_t>(kHourMs);
    j.first_ms = j.first_ms == 0 ? ev.hour_ms : std::min(j.first_ms, ev.hour_ms);
    j.last_ms = std::max(j.last_ms, end);
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto rates, ledger.CounterRates(kInputWaitMetric, from_ms, to_ms));
  std::map<std::string, std::pair<double, int>> wait;  // job -> (sum of rates, series)
  for (const auto& r : rates) {
    if (r.samples < 2) continue;
    ledger::WorkloadDims d = config.Classify(r.pod, r.namespace_name, r.job);
    auto& w = wait[d.job];
    w.first += std::clamp(r.rate_per_s, 0.0, 1.0);
    ++w.second;
    if (auto it = jobs.find(d.job); it != jobs.end()) it->second.wait_samples += r.samples;
  }
  // Pod annotations: a job's interval and slack are its pods' smallest (the strictest).
  SEEDANCE_ASSIGN_OR_RETURN(auto annotated, ledger.SeriesOf(kPodAnnotationsMetric, from_ms, to_ms));
  for (const auto& series : annotated) {
    telemetry::CollectingSink sink;
    telemetry::ParseStats stats;
    telemetry::ParseText(telemetry::InputFormat::kPrometheus, series.key + " 1\n", {}, sink, stats);
    if (sink.samples.size() != 1) continue;
    SEEDANCE_ASSIGN_OR_RETURN(double interval, AnnotationSeconds(sink.samples[0], kCheckpointIntervalLabel, series.key));
    SEEDANCE_ASSIGN_OR_RETURN(double slack, AnnotationSeconds(sink.samples[0], kDeadlineSlackLabel, series.key));
    if (interval < 0 && slack < 0) continue;
    ledger::WorkloadDims d = config.Classify(series.pod, series.namespace_name, series.job);
    auto it = jobs.find(d.job);
    if (it == jobs.end()) continue;
    JobUsage& j = it->second;
    auto strictest = [](double& have, double v) {
      if (v >= 0) have = have < 0 ? v : std::min(have, v);
    };
    strictest(j.checkpoint_interval_s, interval);
    strictest(j.deadline_slack_s, slack);
    ++j.annotation_series;
  }
  for (auto& [name, j] : jobs) {
    if (auto it = wait.find(name); it != wait.end()) j.input_wait = it->second.first / it->second.second;
    in.jobs.push_back(j);
  }
  for (auto& [name, n] : nodes) in.nodes.push_back(n);
  return in;
}

Result<std::vector<Finding>> FleetFindings(const FleetInputs& in, const cost::PriceTable& prices,
                                           const ledger::LedgerConfig& config,
                                           const FleetRules& rules) {
  const double range_h = static_cast<double>(in.to_ms - in.from_ms) / kHourMs;
  if (range_h <= 0) return InvalidArgumentError("advise: empty time range");
  const double month = kHoursPerMonth / range_h;
  const std::string from = telemetry::FormatTimestamp(in.from_ms);
  const std::string to = telemetry::FormatTimestamp(in.to_ms);
  ledger::GpuPricer pricer(config, &prices);
  std::vector<Candidate> cands;
  auto steps = [&](double gpu_hours) {
    return static_cast<std::int64_t>(std::llround(gpu_hours * kHourMs / static_cast<double>(in.step_ms)));
  };
  auto make = [&](std::string kind, std::string target, double range_saving, double gpu_hours,
                  std::int64_t first, std::int64_t last, std::string detail, std::string action,
                  ledger::TenantInput entity) {
    Candidate c;
    c.f.kind = kind;
    c.f.target = target;
    c.f.id = kind + ":" + target;
    c.f.usd_per_month = range_saving * month;
    c.f.evidence.samples = steps(gpu_hours);
    c.f.evidence.samples_unit = fmt::format("GPU steps of {} s", in.step_ms / 1000);
    c.f.evidence.from = first > 0 ? telemetry::FormatTimestamp(first) : from;
    c.f.evidence.to = last > 0 ? telemetry::FormatTimestamp(last) : to;
    c.f.evidence.detail = std::move(detail);
    c.f.action = std::move(action);
    c.f.reproduce = rules.reproduce_prefix + " --explain " + c.f.id;
    c.range_saving_usd = range_saving;
    entity.tenant = c.f.id;
    c.entity = entity;
    cands.push_back(std::move(c));
  };
  // Namespaces: activity and cost from their jobs.
  const ledger::FleetPools* fleet = rules.fleet;
  // With a fleet: the pool of a job's node, and whether it is paid for the window (no cash to save).
  const auto pool_of = [fleet](const std::string& node) -> const cost::NodePool* {
    return fleet != nullptr ? fleet->PoolOf(node) : nullptr;
  };
  const auto committed = [&](const std::string& node) {
    const cost::NodePool* p = pool_of(node);
    return p != nullptr && cost::IsCommitted(p->kind);
  };
  struct Ns {
    double gpu_hours = 0, active = 0, cost = 0, committed_cost = 0;
    std::int64_t first = 0, last = 0;
    int jobs = 0;
    bool measured = false;
  };
  std::map<std::string, Ns> ns;
  for (const JobUsage& j : in.jobs) {
    // Only jobs with telemetry: a namespace's activity and cost rest on the same GPU-hours.
    if (config.IsOverheadNamespace(j.namespace_name) || j.activity < 0) continue;
    Ns& n = ns[j.namespace_name];
    n.gpu_hours += j.gpu_hours;
    n.cost += j.cost_usd;
    if (committed(j.node)) n.committed_cost += j.cost_usd;
    ++n.jobs;
    n.active += j.activity * j.gpu_hours;
    n.measured = true;
    if (j.first_ms > 0) n.first = n.first == 0 ? j.first_ms : std::min(n.first, j.first_ms);
    n.last = std::max(n.last, j.last_ms);
  }
  std::map<std::string, bool> idle_ns;
  for (const auto& [name, n] : ns) {
    if (!n.measured || n.gpu_hours < rules.min_gpu_hours) continue;
    double act = n.active / n.gpu_hours;
    if (act >= rules.idle_activity) continue;
    idle_ns[name] = true;
    const double cash = n.cost - n.committed_cost;  // owned / reserved GPUs cost the same released or not
    if (cash <= 0) continue;
    make("idle", "namespace/" + (name.empty() ? std::string("(none)") : name), cash, n.gpu_hours,
         n.first, n.last,
         fmt::format("{} job(s) held {:.1f} GPU-hours at {} mean activity, ${:.2f} in the range{}",
                     n.jobs, n.gpu_hours, Pct(act), n.cost,
                     n.committed_cost > 0 ? fmt::format(" (${:.2f} of it on owned / reserved capacity, paid "
                                                        "whatever runs: not counted)", n.committed_cost)
                                          : std::string()),
         fmt::format("release the namespace's GPUs (scale its pods to zero or set an idle timeout): "
                     "activity {} is below the {} idle threshold",
                     Pct(act), Pct(rules.idle_activity)),
         {"", n.cost, n.active, n.gpu_hours, 0});
  }
  for (const NodeIdle& n : in.nodes) {
    if (n.idle_gpu_hours < rules.min_gpu_hours || n.bill_usd <= 0 ||
        n.idle_usd < rules.node_idle_share * n.bill_usd) {
      continue;
    }
    if (const cost::NodePool* pool = pool_of(n.node); pool != nullptr && cost::IsCommitted(pool->kind)) {
      // Paid for the window: switching it off saves power at most, and only as the user states it.
      if (pool->power_down_usd_per_gpu_hour <= 0) continue;  // opportunity, not cash (OwnedOpportunity)
      const double power = n.idle_gpu_hours * pool->power_down_usd_per_gpu_hour;
      make("idle", "node/" + n.node, power, n.idle_gpu_hours, 0, 0,
           fmt::format("{:.1f} GPU-hours held by nobody on {} pool '{}' (${:.2f} of the node's ${:.2f}, paid whatever "
                       "runs)",
                       n.idle_gpu_hours, cost::PoolKindName(pool->kind), pool->name, n.idle_usd, n.bill_usd),
           fmt::format("power the idle GPUs down: saves their power only, ${:.4f} per GPU-hour as the pool states "
                       "(power_down_usd_per_gpu_hour), not their price; or run more work here",
                       pool->power_down_usd_per_gpu_hour),
           {"", power, 0, n.idle_gpu_hours, 0});
      continue;
    }
    make("idle", "node/" + n.node, n.idle_usd, n.idle_gpu_hours, 0, 0,
         fmt::format("{:.1f} GPU-hours held by nobody, ${:.2f} of the node's ${:.2f}", n.idle_gpu_hours,
                     n.idle_usd, n.bill_usd),
         "scale the node pool down (or pack more work here): its idle GPUs cost money and run nothing",
         {"", n.idle_usd, 0, n.idle_gpu_hours, 0});
  }
  // Unit cost ($ per useful GPU-hour) per GPU model: the median over the measured jobs.
  auto eligible = [&](const JobUsage& j) {
    return !idle_ns.count(j.namespace_name) && !config.IsOverheadNamespace(j.namespace_name) &&
           j.gpu_hours >= rules.min_gpu_hours && j.activity > 0 && j.cost_usd > 0;
  };
  auto unit_cost = [](const JobUsage& j) { return j.cost_usd / (j.gpu_hours * j.activity); };
  std::map<std::string, std::vector<double>> units;
  for (const JobUsage& j : in.jobs) {
    if (eligible(j)) units[j.model].push_back(unit_cost(j));
  }
  std::map<std::string, double> median_unit;
  for (auto& [model, v] : units) {
    if (static_cast<int>(v.size()) < rules.unit_cost_min_jobs) continue;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    median_unit[model] = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
  }
  // Jobs: one finding each, the largest saving.
  for (const JobUsage& j : in.jobs) {
    if (idle_ns.count(j.namespace_name) || config.IsOverheadNamespace(j.namespace_name)) continue;
    if (j.gpu_hours < rules.min_gpu_hours || j.activity < 0 || j.cost_usd <= 0) continue;
    if (committed(j.node)) continue;  // owned / reserved: what it frees is capacity, not cash
    const cost::NodePool* job_pool = pool_of(j.node);
    std::optional<Candidate> best;
    auto consider = [&](std::string kind, double saving, std::string detail, std::string action) {
      if (saving <= 0) return;
      if (best.has_value() && best->range_saving_usd >= saving) return;
      std::size_t before = cands.size();
      make(std::move(kind), "job/" + j.job, saving, j.gpu_hours, j.first_ms, j.last_ms,
           std::move(detail), std::move(action), {"", j.cost_usd, j.activity * j.gpu_hours, j.gpu_hours, 0});
      best = std::move(cands.back());
      cands.resize(before);
    };
    const std::string where = fmt::format("{:.1f} GPU-hours on {} at {} activity, ${:.2f}", j.gpu_hours,
                                          j.model.empty() ? "GPU" : j.model, Pct(j.activity), j.cost_usd);
    if (j.input_wait >= rules.stall_wait && j.activity < rules.stall_max_activity) {
      consider("input-stall", j.cost_usd * j.input_wait,
               fmt::format("{}; its containers waited on I/O {} of the time ({} PSI samples)", where,
                           Pct(j.input_wait), j.wait_samples),
               fmt::format("fix the input pipeline (more data-loader workers, prefetching, a local "
                           "dataset cache): the GPUs wait on input {} of the time",
                           Pct(j.input_wait)));
    }
    const gpu::GpuFacts* cur = ledger::GpuFactsOf(j.model);
    std::int64_t cur_price = pricer.MicroUsdPerHour(j.model);
    if (job_pool != nullptr) cur_price = UsdFromDouble(job_pool->usd_per_gpu_hour).raw();
    {
      // The rule breaker's suggestion uses too (ledger/rightsize.h); with a fleet, among its rented types.
      const auto found = ledger::CheaperGpuThatFits(fleet != nullptr ? fleet->rented : prices, j.model, cur_price,
                                                    j.peak_memory_mib, j.activity, {rules.memory_margin, rules.headroom});
      if (found.has_value()) {
        const cost::GpuPrice* pick = found->price;
        const gpu::GpuFacts& g = *found->facts;
        const double need_gib = found->need_gib;
        const double need_tflops = found->need_tflops;
        double per_h = ToUsd(MicroUsd(cur_price)) - ToUsd(pick->usd_per_gpu_hour);
        consider("smaller-gpu", j.gpu_hours * per_h,
                 fmt::format("{}; peak memory {:.1f} GiB; needs {:.0f} FP16 TFLOPS per GPU", where,
                             j.peak_memory_mib / 1024.0, need_tflops),
                 fmt::format("move to {} ({:.0f} GiB holds {:.1f} GiB; {:.0f} TFLOPS x {:.0f}% covers "
                             "the {:.0f} used): ${:.2f} - ${:.2f} per GPU-hour",
                             g.name, g.memory_gib, need_gib, g.fp16_tflops, 100 * rules.headroom,
                             need_tflops, ToUsd(MicroUsd(cur_price)), ToUsd(pick->usd_per_gpu_hour)));
      }
    }
    if (j.activity < rules.low_activity) {
      double range_h_job = j.last_ms > j.first_ms ? static_cast<double>(j.last_ms - j.first_ms) / kHourMs : range_h;
      double gpus = std::max(1.0, std::round(j.gpu_hours / range_h_job));
      double need = std::max(1.0, std::ceil(gpus * j.activity / rules.headroom - 1e-9));
      if (need < gpus) {
        consider("low-utilization", j.cost_usd * (1.0 - need / gpus),
                 fmt::format("{} on {:.0f} GPU(s)", where, gpus),
                 fmt::format("consolidate onto {:.0f} of {:.0f} GPUs (raise the batch size or pack "
                             "replicas): at {} activity the work fits at {:.0f}%",
                             need, gpus, Pct(j.activity), 100 * rules.headroom));
      }
    }
    // With a fleet: spot only where it has a spot pool of the type, at that pool's price.
    const cost::NodePool* spot_pool =
        fleet != nullptr && job_pool != nullptr ? fleet->SpotPool(job_pool->gpu_type) : nullptr;
    if (rules.spot_rate.per_hour >= 0 && j.checkpoint_interval_s > 0 && j.deadline_slack_s > 0 && cur_price > 0 &&
        (fleet == nullptr || spot_pool != nullptr)) {
      const cost::GpuPrice* listed = nullptr;
      if (auto idx = gpu::ParseGpuName(cur != nullptr ? std::string_view(cur->name) : std::string_view(j.model),
                                       gpu::NameMatch::kCanonical);
          idx.has_value()) {
        listed = prices.Find(*idx);
      }
      const bool quoted = listed != nullptr && listed->spot_usd_per_gpu_hour.raw() > 0 &&
                          listed->usd_per_gpu_hour.raw() > 0;
      const double ratio = spot_pool != nullptr ? spot_pool->usd_per_gpu_hour / ToUsd(MicroUsd(cur_price))
                           : quoted         ? ToUsd(listed->spot_usd_per_gpu_hour) / ToUsd(listed->usd_per_gpu_hour)
                                            : cost::kDefaultSpotRatio;
      const double lost_s = j.checkpoint_interval_s / 2.0 + rules.spot_restart_s;
      const double f = rules.spot_rate.per_hour * lost_s / 3600.0;
      const double wall_h = j.last_ms > j.first_ms ? static_cast<double>(j.last_ms - j.first_ms) / kHourMs : range_h;
      if (f < 1.0 && ratio < 1.0) {
        const double later_h = wall_h * f / (1.0 - f);
        const double saving = j.cost_usd * (1.0 - ratio / (1.0 - f));
        if (later_h * 3600.0 <= j.deadline_slack_s) {
          consider("spot", saving,
                   fmt::format("{}; annotated checkpoint interval {:.0f} s and deadline slack {:.1f} h ({} "
                               "kube_pod_annotations series); spot interrupts {:.3f} times per hour ({}: {} "
                               "interruptions in {:.0f} available hours)",
                               where, j.checkpoint_interval_s, j.deadline_slack_s / 3600.0, j.annotation_series,
                               rules.spot_rate.per_hour, rules.spot_rate.trace, rules.spot_rate.interruptions,
                               rules.spot_rate.available_hours),
                   fmt::format("run it on spot at {:.0f}% of on-demand ({}): each interruption loses half a "
                               "checkpoint interval plus {:.0f} s of restart, {:.1f}% of its GPU time, so it "
                               "costs {:.1f}% of today and ends {:.2f} h later, within its {:.1f} h slack; "
                               "this finding replaces the job's others (one per job, the largest)",
                               100 * ratio,
                               spot_pool != nullptr ? "the fleet's spot pool '" + spot_pool->name + "'"
                               : quoted             ? std::string("the price table's spot quote")
                                                    : std::string("the default spot ratio"),
                               rules.spot_restart_s, 100 * f, 100 * ratio / (1.0 - f), later_h,
                               j.deadline_slack_s / 3600.0));
        }
      }
    }
    if (auto m = median_unit.find(j.model); !best.has_value() && m != median_unit.end() && j.activity > 0) {
      const double unit = unit_cost(j);
      if (unit >= rules.unit_cost_factor * m->second) {
        consider("unit-cost", j.cost_usd * (1.0 - m->second / unit),
                 fmt::format("{}; ${:.2f} per useful GPU-hour (cost / GPU-hours x activity) against the "
                             "median ${:.2f} of {} measured jobs on {}",
                             where, unit, m->second, units[j.model].size(), j.model),
                 fmt::format("find why it does {:.1f}x the fleet's cost per unit of GPU work on this model "
                             "(profile batch size, kernels, data loading) and bring it to the median: "
                             "reported because no other rule names a change for it (a job appears once, "
                             "its waste is not counted twice)",
                             unit / m->second));
      }
    }
    if (best.has_value()) cands.push_back(std::move(*best));
  }
  // Intervals: the ledger's Monte Carlo over the targets and the rest of the fleet as one entity.
  std::vector<ledger::TenantInput> entities;
  double covered_cost = 0, covered_usage = 0, covered_alloc = 0;
  double total_cost = 0, total_usage = 0, total_alloc = 0;
  for (const JobUsage& j : in.jobs) {
    total_cost += j.cost_usd;
    total_usage += std::max(0.0, j.activity) * j.gpu_hours;
    total_alloc += j.gpu_hours;
  }
  for (const Candidate& c : cands) {
    entities.push_back(c.entity);
    if (c.f.target.starts_with("node/")) continue;  // idle capacity is not part of the job costs
    covered_cost += c.entity.workload_usd;
    covered_usage += c.entity.usage;
    covered_alloc += c.entity.alloc;
  }
  entities.push_back({"rest of the fleet", std::max(0.0, total_cost - covered_cost),
                      std::max(0.0, total_usage - covered_usage),
                      std::max(0.0, total_alloc - covered_alloc), 0});
  Rng rng(rules.seed);
  std::vector<ledger::TenantInterval> mc =
      ledger::MonteCarloIntervals(entities, in.unshared_idle_usd, rules.mc_samples, rng);
  std::vector<Finding> out;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    Finding f = std::move(cands[i].f);
    auto [lo, hi] = mc[i].RelativeInterval();
    f.ci_low = f.usd_per_month * lo;
    f.ci_high = f.usd_per_month * hi;
    f.ci_basis = fmt::format(
        "the ledger's Monte Carlo of the target's {} ({} samples, seed {}): ${:.2f} .. ${:.2f} "
        "around ${:.2f} in the range, applied to the saving",
        ledger::kMonteCarloQuantity, rules.mc_samples, rules.seed, mc[i].p025_usd, mc[i].p975_usd,
        mc[i].point_usd);
    out.push_back(std::move(f));
  }
  SortFindings(out);
  return out;
}

Result<OwnedOpportunityReport> OwnedOpportunity(const FleetInputs& in, const ledger::FleetPools& fleet) {
  OwnedOpportunityReport r;
  r.range_hours = static_cast<double>(in.to_ms - in.from_ms) / kHourMs;
  if (r.range_hours <= 0) return InvalidArgumentError("advise: empty time range");
  std::map<std::string, PoolOpportunity> by_pool;
  std::map<std::string, std::pair<double, double>> rented_by_type;  // type -> (GPU-hours, USD)
  for (const NodeIdle& n : in.nodes) {
    const cost::NodePool* pool = fleet.PoolOf(n.node);
    if (pool == nullptr) continue;
    if (!cost::IsCommitted(pool->kind)) {
      r.cloud_usd += n.bill_usd;
      continue;
    }
    PoolOpportunity& o = by_pool[pool->name];
    o.pool = pool->name;
    o.kind = std::string(cost::PoolKindName(pool->kind));
    o.gpu_type = pool->gpu_type;
    o.idle_gpu_hours += n.idle_gpu_hours;
    o.idle_usd += n.idle_usd;
    const double per_h = pool->power_down_usd_per_gpu_hour > 0 ? pool->power_down_usd_per_gpu_hour
                                                               : pool->power_usd_per_gpu_hour;
    o.power_usd += n.idle_gpu_hours * per_h;
  }
  for (const JobUsage& j : in.jobs) {
    const cost::NodePool* pool = fleet.PoolOf(j.node);
    if (pool == nullptr || cost::IsCommitted(pool->kind)) continue;
    auto& [h, usd] = rented_by_type[pool->gpu_type];
    h += j.gpu_hours;
    usd += j.cost_usd;
  }
  for (auto& [name, o] : by_pool) {
    if (auto it = rented_by_type.find(o.gpu_type); it != rented_by_type.end() && it->second.first > 0) {
      o.rented_gpu_hours = it->second.first;
      o.rented_usd = it->second.second;
      o.absorbable_usd = std::min(o.idle_gpu_hours, o.rented_gpu_hours) * o.rented_usd / o.rented_gpu_hours;
    }
    r.idle_power_usd += o.power_usd;
    r.pools.push_back(o);
  }
  r.ceiling_usd_per_month = (r.cloud_usd + r.idle_power_usd) * kHoursPerMonth / r.range_hours;
  return r;
}

}  // namespace seedance::advise
