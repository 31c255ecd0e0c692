#include "seedance/fleet/comparison.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "seedance/fleet/bound.h"
#include "seedance/fleet/decomposition.h"
#include "seedance/report/cost_jct_chart.h"

namespace seedance::fleet {
namespace {

// Adds the seeds' outcomes: money, work and GPU-hours summed; SLO shares from the summed
// counts; JCT, waits and the hourly profile as means over the seeds.
FleetWeekOutcome Sum(const std::vector<FleetWeekOutcome>& v) {
  FleetWeekOutcome s;
  if (v.empty()) return s;
  s.stack = v.front().stack;
  s.serving_description = v.front().serving_description;
  const double n = static_cast<double>(v.size());
  std::vector<double> att_in(v.front().serving_attainment_by_deployment.size(), 0.0);
  double jct_w = 0;
  for (const auto& o : v) {
    s.total_usd += o.total_usd;
    s.committed_usd += o.committed_usd;
    s.on_demand_usd += o.on_demand_usd;
    s.spot_usd += o.spot_usd;
    s.training_usd += o.training_usd;
    s.serving_usd += o.serving_usd;
    s.dev_usd += o.dev_usd;
    s.overhead_usd += o.overhead_usd;
    s.training_pflop += o.training_pflop;
    s.serving_mtok_in_slo += o.serving_mtok_in_slo;
    s.serving_mtok_demanded += o.serving_mtok_demanded;
    if (s.serving_mtok_in_slo_by_deployment.size() < o.serving_mtok_in_slo_by_deployment.size()) {
      s.serving_mtok_in_slo_by_deployment.resize(o.serving_mtok_in_slo_by_deployment.size());
    }
    for (std::size_t d = 0; d < o.serving_mtok_in_slo_by_deployment.size(); ++d) {
      s.serving_mtok_in_slo_by_deployment[d] += o.serving_mtok_in_slo_by_deployment[d];
    }
    s.dev_active_gpu_hours += o.dev_active_gpu_hours;
    s.jobs += o.jobs;
    s.jobs_finished += o.jobs_finished;
    s.gangs += o.gangs;
    s.gangs_run += o.gangs_run;
    s.gangs_finished += o.gangs_finished;
    s.jobs_never_fit += o.jobs_never_fit;
    s.jct_mean_h += o.jct_mean_h * o.jobs_finished;
    jct_w += o.jobs_finished;
    s.jct_p50_h += o.jct_p50_h / n;
    s.jct_p90_h += o.jct_p90_h / n;
    s.deadlines += o.deadlines;
    s.deadlines_met += o.deadlines_met;
    s.gold_checks += o.gold_checks;
    s.gold_violations += o.gold_violations;
    s.dev_sessions += o.dev_sessions;
    s.dev_cut_in_use += o.dev_cut_in_use;
    s.idle_gpu_hours += o.idle_gpu_hours;
    s.owned_idle_gpu_hours += o.owned_idle_gpu_hours;
    s.serving_preemptions += o.serving_preemptions;
    s.dev_wait_p90_min += o.dev_wait_p90_min / n;
    for (std::size_t u = 0; u < s.gpu_hours.size(); ++u) s.gpu_hours[u] += o.gpu_hours[u];
    s.spot_preemptions += o.spot_preemptions;
    s.admission_preemptions += o.admission_preemptions;
    s.idle_reclaims += o.idle_reclaims;
    s.nodes_booted += o.nodes_booted;
    s.migrations += o.migrations;
    s.defrag_moves += o.defrag_moves;
    s.consolidations += o.consolidations;
    s.consolidation_moves += o.consolidation_moves;

    s.match_requeues += o.match_requeues;
    AddDecomposition(o, &s);

    s.mig_partitions += o.mig_partitions;
    s.dev_on_slices += o.dev_on_slices;
    s.cpu_seconds = std::max(s.cpu_seconds, o.cpu_seconds);
    for (std::size_t d = 0; d < att_in.size() && d < o.serving_attainment_by_deployment.size(); ++d) {
      att_in[d] += o.serving_attainment_by_deployment[d] / n;
    }
    if (s.hourly.size() < o.hourly.size()) s.hourly.resize(o.hourly.size());
    for (std::size_t h = 0; h < o.hourly.size(); ++h) {
      for (std::size_t u = 0; u < o.hourly[h].size(); ++u) s.hourly[h][u] += o.hourly[h][u] / n;
    }
  }
  s.jct_mean_h = jct_w > 0 ? s.jct_mean_h / jct_w : 0.0;
  s.serving_attainment = s.serving_mtok_demanded > 0 ? s.serving_mtok_in_slo / s.serving_mtok_demanded : 1.0;
  s.serving_attainment_by_deployment = att_in;
  return s;
}

double Ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

// A set whose base or Seedance falls this short of the week's work is flagged (SetResult::warnings).
constexpr double kWarnServedBelow = 0.95;
constexpr double kWarnFinishedBelow = 0.8;

std::vector<std::string> ShortfallWarnings(const SetResult& r) {
  std::vector<std::string> w;
  for (const StackResult* sr : {&r.standard[static_cast<std::size_t>(r.base)], &r.seedance}) {
    const FleetWeekOutcome& o = sr->sum;
    const std::string who = sr == &r.seedance ? "Seedance" : "the base (" + sr->config.name + ")";
    if (o.serving_mtok_demanded > 0 && o.serving_attainment < kWarnServedBelow) {
      w.push_back(fmt::format("{} served {:.1f} % of the serving demand within SLO (target 99 %)", who,
                              100.0 * o.serving_attainment));
    }
    if (o.jobs > 0 && o.jobs_finished < kWarnFinishedBelow * o.jobs) {
      w.push_back(fmt::format("{} finished {} of {} training jobs within the week", who, o.jobs_finished, o.jobs));
    }
    if (o.gold_violations > 0) {
      w.push_back(fmt::format("{} broke {} of {} Gold guarantees", who, o.gold_violations, o.gold_checks));
    }
  }
  // The same jobs never fit in any stack (the fleet decides it, not a policy).
  if (const int never = r.seedance.sum.jobs_never_fit; never > 0) {
    w.push_back(fmt::format("{} of {} training jobs can never run on this fleet (a gang wider than every pool of its "
                            "GPU types, or a pod wider than a node): counted as unfinished in every stack",
                            never, r.seedance.sum.jobs));
  }
  if (!w.empty()) {
    w.push_back("the fleet looks too small for the week's work: its unit costs compare stacks that fall short; "
                "add GPUs or on-demand quota to the fleet file for a comparison at the SLOs");
  }
  // Not a sign of a small fleet: a labelled base with more deadlines met than Seedance (the owned
  // set's priority-class row).
  for (const StackResult& sr : r.standard) {
    if (!sr.config.deadline_priority_class || r.seedance.sum.deadlines_met >= sr.sum.deadlines_met) continue;
    w.push_back(fmt::format("Seedance met {} of {} deadlines, fewer than the {} ({}): the must-hold on deadlines is not "
                            "met against that labelled base",
                            r.seedance.sum.deadlines_met, r.seedance.sum.deadlines, sr.config.name, sr.sum.deadlines_met));
  }
  return w;
}

}  // namespace

Result<IdleTimeoutTuning> TuneIdleTimeout(const std::vector<const FleetWeekScenario*>& weeks, const StackConfig& stack,
                                          bool grace) {
  IdleTimeoutTuning t;
  for (double v : kIdleTimeoutGrid) {
    StackConfig c = stack;
    (grace ? c.idle_grace_s : c.idle_cull_s) = v;
    IdleTimeoutRow row;
    row.timeout_s = v;
    for (const FleetWeekScenario* w : weeks) {
      SEEDANCE_ASSIGN_OR_RETURN(const FleetWeekOutcome o, RunFleetWeek(*w, c));
      row.total_usd += o.total_usd;
      row.cut_in_use += o.dev_cut_in_use;
      row.sessions += o.dev_sessions;
    }
    t.rows.push_back(row);
  }
  const IdleTimeoutRow* best = nullptr;
  for (const auto& row : t.rows) {
    if (row.cut_in_use > kMaxCutInUseShare * row.sessions) continue;
    if (best == nullptr || row.total_usd < best->total_usd) best = &row;
  }
  t.chosen_s = best ? best->timeout_s : 0.0;
  return t;
}

double UnitCostIndex(const FleetWeekOutcome& x, const FleetWeekOutcome& base) {
  // $ per unit of each kind of useful work, weighted by the base's units (its basket).
  const double cost = Ratio(x.training_usd, x.training_pflop) * base.training_pflop +
                      Ratio(x.serving_usd, x.serving_mtok_in_slo) * base.serving_mtok_in_slo +
                      Ratio(x.dev_usd, x.dev_active_gpu_hours) * base.dev_active_gpu_hours;
  const double base_cost = base.training_usd + base.serving_usd + base.dev_usd;
  return base_cost > 0 ? cost / base_cost : 1.0;
}

UsefulWorkRatios UsefulWorkPerUsd(const FleetWeekOutcome& x, const FleetWeekOutcome& base) {
  UsefulWorkRatios u;
  u.pflop = Ratio(Ratio(x.training_pflop, x.total_usd), Ratio(base.training_pflop, base.total_usd));
  u.mtok = Ratio(Ratio(x.serving_mtok_in_slo, x.total_usd), Ratio(base.serving_mtok_in_slo, base.total_usd));
  u.training_weight = Ratio(base.training_usd, base.training_usd + base.serving_usd);
  u.combined = u.training_weight * u.pflop + (1 - u.training_weight) * u.mtok;
  return u;
}

const std::vector<Lever>& WaterfallLevers() {
  static const std::vector<Lever> kLevers = {
      {"tenancy (admission, reclaim, idle reclaim)",
       [](StackConfig* c) {
         c->tenancy = tenancy::TenancyMode::kSeedance;
         c->idle_cull_s = 0;  // Seedance's idle reclaim replaces the culler
         c->idle_grace_s = SeedanceStack().idle_grace_s;
       }},
      {"packing (capacity-aware placement, owned nodes emptied for waiting gangs)", [](StackConfig* c) {
         c->placement = "seedance";
         c->defragment = SeedanceStack().defragment;
         c->defrag_max_busy_share = SeedanceStack().defrag_max_busy_share;
       }},
      {"cost-aware GPU type and spot", [](StackConfig* c) {
         c->cost_aware = true;
         c->migrate_min_speed = SeedanceStack().migrate_min_speed;
         c->match_types = SeedanceStack().match_types;  // issue 39: fine-tunes to the H100s, Philly to the A100s
         c->backlog_waits_for_committed = SeedanceStack().backlog_waits_for_committed;  // issue 39: no cloud for backlog work dearer per PFLOP
         c->deadline_takes_backlog_room = SeedanceStack().deadline_takes_backlog_room;  // round 7: deadline work takes backlog room
       }},
      {"batching (Seedance engine)", [](StackConfig* c) { c->batching = "seedance"; }},
      {"serving fleet (planner mix + forecast)", [](StackConfig* c) {
         c->serving_planner = true;
         c->predictive = SeedanceStack().predictive;
         c->serving_whole_nodes = SeedanceStack().serving_whole_nodes;
       }},
      {"Gold serving preempts training (Bronze first, checkpoint-aware, owned nodes first)",
       [](StackConfig* c) { c->serving_preemption = StackConfig::ServingPreemption::kCheckpointAware; }},
      {"cloud nodes consolidated by checkpoint and restart (replacing Karpenter's eviction)", [](StackConfig* c) {
         c->consolidation = StackConfig::Consolidation::kCheckpointAware;
         c->consolidate_after_s = SeedanceStack().consolidate_after_s;
         c->consolidate_max_used_share = SeedanceStack().consolidate_max_used_share;
       }},

      {"fractional GPUs (notebooks on MIG slices of another type, owned first)",
       [](StackConfig* c) {
         c->fractional_gpus = SeedanceStack().fractional_gpus;
         c->fractional_min_free_share = SeedanceStack().fractional_min_free_share;
       }},
  };
  return kLevers;
}

std::vector<WeekSet> DefaultWeekSets(bool with_tuning, const std::string& fleet_file, const std::string& history_dir,
                                     bool with_owned) {
  std::vector<WeekSet> sets;
  const std::vector<std::uint64_t> held = {5, 6, 7, 8, 9}, tuning = {0, 1, 2, 3, 4};
  if (!history_dir.empty()) {
    sets.push_back({"held out: fleet a, week 2, seeds 5-9", true, "a", 1, held, true, "", ""});
    sets.push_back({"your week: " + history_dir + " on " + fleet_file, true, "a", 1, {0}, true, fleet_file, history_dir});
  } else if (!fleet_file.empty()) {  // beside the bundled fleet a, as the docs say (issue 38)
    sets.push_back({"held out: fleet a, week 2, seeds 5-9", true, "a", 1, held, true, "", ""});
    sets.push_back({"your fleet: week 2, seeds 5-9", true, "a", 1, held, true, fleet_file, ""});
  } else {
    sets.push_back({"held out: fleet a, week 2, seeds 5-9", true, "a", 1, held, true, "", ""});
    sets.push_back({"held out: second fleet shape b, week 2, seeds 5-9", true, "b", 1, held, false, "", ""});
    sets.push_back({"held out: fleet a, week 1, other seeds 5-9", true, "a", 0, held, false, "", ""});
  }
  if (with_owned) {
    sets.push_back({"held out: owned fleet c with a training backlog, week 2, seeds 5-9", true, "c", 1, held, false, "", ""});
    sets.back().owned_backlog = true;  // issue 39: "plus the GPUs needed to meet the week's SLOs and deadlines"
  }
  if (with_tuning) sets.push_back({"tuning: fleet a, week 1, seeds 0-4", false, "a", 0, tuning, true, "", ""});
  return sets;
}

namespace {

// One week run with one stack.
struct WeekTask {
  const FleetWeekScenario* week = nullptr;
  StackConfig config;
};

// Runs the tasks on up to `threads` threads (0: the machine's cores). Each week is independent and
// deterministic, and the outcomes come back in the tasks' order, so the comparison is byte-identical
// whatever the thread count (FleetWeekComparisonTest.ThreadsChangeNothing). The first error in the
// tasks' order is returned.
// `done` (optional) hears (weeks finished, weeks in all) as each week ends, from the thread that ran it,
// one call at a time.
using WeekDone = std::function<void(std::size_t, std::size_t)>;
Result<std::vector<FleetWeekOutcome>> RunWeeks(const std::vector<WeekTask>& tasks, unsigned threads,
                                               const WeekDone& done = {}) {
  std::vector<std::optional<Result<FleetWeekOutcome>>> got(tasks.size());
  std::atomic<std::size_t> next{0};
  std::mutex done_mu;
  std::size_t finished = 0;
  auto work = [&] {
    for (std::size_t i = next.fetch_add(1); i < tasks.size(); i = next.fetch_add(1)) {
      got[i].emplace(RunFleetWeek(*tasks[i].week, tasks[i].config));
      if (done) {
        const std::lock_guard<std::mutex> lock(done_mu);
        done(++finished, tasks.size());
      }
    }
  };
  std::size_t n = threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  n = std::min(n, tasks.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  std::vector<FleetWeekOutcome> out;
  out.reserve(tasks.size());
  for (auto& g : got) {
    if (!g->has_value()) return g->error();
    out.push_back(std::move(**g));
  }
  return out;
}

// "12 of 25 weeks run, ETA 1m05s" for one batch of weeks, at the batch's pace so far; a line at most
// every kEtaEveryS seconds and one when the batch ends (progress only: the results never see time).
constexpr double kEtaEveryS = 10;
WeekDone EtaLines(const std::string& what, const std::function<void(const std::string&)>& say) {
  const auto t0 = std::chrono::steady_clock::now();
  auto last = std::make_shared<double>(0.0);
  return [=](std::size_t done, std::size_t total) {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (done < total && elapsed - *last < kEtaEveryS) return;
    *last = elapsed;
    const auto left = static_cast<long long>(std::llround(elapsed * static_cast<double>(total - done) / static_cast<double>(done)));
    say(fmt::format("{}: {} of {} weeks run{}", what, done, total,
                    done == total ? fmt::format(" in {:.0f} s", elapsed)
                    : left >= 60  ? fmt::format(", ETA {}m{:02}s", left / 60, left % 60)
                                  : fmt::format(", ETA {}s", left)));
  };
}

}  // namespace

Result<FleetWeekComparison> RunFleetWeekComparison(const FleetWeekRunOptions& options,
                                                   const std::function<void(const std::string&)>& progress) {
  FleetWeekComparison c;
  // A user's fleet file is checked before any week runs, so a mistake in it costs no minutes.
  for (const WeekSet& set : options.sets) {
    if (!set.fleet_file.empty()) {
      SEEDANCE_RETURN_IF_ERROR(CheckFleetWeekFleet(options.data_dir, set.fleet_file, set.history_dir));
    }
  }
  // Serving profiles are measured once per fleet (they depend on neither the week nor the seed).
  std::map<std::string, std::unique_ptr<FleetWeekScenario>> keep;
  std::mutex progress_mu;  // the side thread and the worker threads report too
  auto say = [&](const std::string& line) {
    const std::lock_guard<std::mutex> lock(progress_mu);
    if (progress) progress(line);
  };
  for (const WeekSet& set : options.sets) {
    SetResult r;
    r.set = set;
    std::vector<StackConfig> stacks = {StandardStack("least-allocated"), StandardStack("most-allocated"), CompetentStack(),
                                       SeedanceStack(), CompetentStackWithoutKarpenter()};
    // On an owned fleet with a standing backlog, the base with Kueue's priority class for work with
    // a deadline: a labelled row, the must-hold on deadlines also checked against it.
    if (set.owned_backlog) stacks.push_back(CompetentStackWithDeadlinePriority());
    const std::size_t kStandardRows = 3;
    std::vector<std::vector<FleetWeekOutcome>> outs(stacks.size());
    std::vector<FleetWeekScenario> built;
    built.reserve(set.seeds.size());
    for (std::uint64_t seed : set.seeds) {
      FleetWeekOptions o;
      o.data_dir = options.data_dir;
      o.cache_dir = options.cache_dir;
      o.shape = set.shape;
      o.week = set.week;
      o.seed = seed;
      o.fleet_file = set.fleet_file;
      o.history_dir = set.history_dir;
      o.progress = options.profile_progress;
      const std::string fleet_key = set.shape + "|" + set.fleet_file + "|" + set.history_dir;
      auto kept = keep.find(fleet_key);
      o.profiles_from = kept == keep.end() ? nullptr : kept->second.get();
      SEEDANCE_ASSIGN_OR_RETURN(FleetWeekScenario s, BuildFleetWeek(o));
      if (kept == keep.end()) keep[fleet_key] = std::make_unique<FleetWeekScenario>(s);
      if (r.assumptions.empty()) r.assumptions = s.assumptions;
      built.push_back(std::move(s));
    }
    // Every stack on every week, side by side (RunWeeks), then the rows in seed order.
    std::vector<WeekTask> tasks;
    for (const auto& week : built) {
      for (const StackConfig& stack : stacks) tasks.push_back({&week, stack});
    }
    SEEDANCE_ASSIGN_OR_RETURN(std::vector<FleetWeekOutcome> ran, RunWeeks(tasks, options.threads, EtaLines(set.name + ": every stack", say)));
    for (std::size_t i = 0, t = 0; i < built.size(); ++i) {
      for (std::size_t k = 0; k < stacks.size(); ++k, ++t) {
        say(fmt::format("{}: seed {}: {}: ${:.0f}", set.name, set.seeds[i], stacks[k].name, ran[t].total_usd));
        r.max_cpu_seconds = std::max(r.max_cpu_seconds, ran[t].cpu_seconds);
        outs[k].push_back(std::move(ran[t]));
      }
    }
    for (std::size_t k = 0; k < kStandardRows; ++k) {
      StackResult sr;
      sr.config = stacks[k];
      sr.seeds = outs[k];
      sr.sum = Sum(outs[k]);
      r.standard.push_back(std::move(sr));
    }
    // Issue 39: the competent base before Karpenter (and, on an owned backlog, with the deadline
    // priority class), labelled rows after the three.
    for (std::size_t k = kStandardRows + 1; k < stacks.size(); ++k) {
      StackResult sr;
      sr.config = stacks[k];
      sr.seeds = outs[k];
      sr.sum = Sum(outs[k]);
      r.standard.push_back(std::move(sr));
    }
    // Issue 30's base was the cheaper kube-scheduler scoring; the headline base is the competent stack.
    r.shipped_base = r.standard[1].sum.total_usd < r.standard[0].sum.total_usd ? 1 : 0;
    r.base = 2;
    const FleetWeekOutcome& base = r.standard[static_cast<std::size_t>(r.base)].sum;
    for (auto& sr : r.standard) sr.unit_cost_index = UnitCostIndex(sr.sum, base);
    r.seedance.config = stacks[kStandardRows];
    r.seedance.seeds = outs[kStandardRows];
    r.seedance.sum = Sum(outs[kStandardRows]);
    r.seedance.unit_cost_index = UnitCostIndex(r.seedance.sum, base);
    r.committed_share = Ratio(base.committed_usd, base.total_usd);
    r.warnings = ShortfallWarnings(r);
    // The waterfall's levers and the frontier's patience values on every week run on the worker
    // threads while this one solves the lower bound's LPs (GLPK stays on one thread).
    std::vector<WeekTask> more;
    std::vector<StackConfig> lever_configs;
    if (set.levers) {
      for (const Lever& lever : WaterfallLevers()) {
        StackConfig cfg = r.standard[static_cast<std::size_t>(r.base)].config;
        lever.apply(&cfg);
        cfg.name = "base + " + lever.name;
        lever_configs.push_back(cfg);
        for (const auto& week : built) more.push_back({&week, cfg});
      }
      for (double knob : kFrontierMigrateMinSpeed) {
        if (knob == r.seedance.config.migrate_min_speed) continue;
        StackConfig cfg = r.seedance.config;
        cfg.migrate_min_speed = knob;
        for (const auto& week : built) more.push_back({&week, cfg});
      }
    }
    // The GPUs each headline stack needs for the base's SLO and deadlines (gpus_needed.h): its
    // probes run on the worker threads too, each round's weeks side by side.
    const std::size_t base_row = static_cast<std::size_t>(r.base);
    auto gpus_runner = [&](const std::vector<std::pair<StackConfig, int>>& runs) -> Result<std::vector<FleetWeekOutcome>> {
      std::vector<FleetWeekScenario> scaled;
      scaled.reserve(runs.size() * built.size());
      std::vector<WeekTask> probe_tasks;
      for (const auto& [cfg, num] : runs) {
        for (const auto& week : built) {
          scaled.push_back(WithCommittedScaled(week, num, kGpusNeededDen));
          probe_tasks.push_back({&scaled.back(), cfg});
        }
      }
      SEEDANCE_ASSIGN_OR_RETURN(std::vector<FleetWeekOutcome> got, RunWeeks(probe_tasks, options.threads, EtaLines(set.name + ": GPUs needed, this round", say)));
      std::vector<FleetWeekOutcome> sums;
      for (std::size_t i = 0; i < runs.size(); ++i) {
        std::vector<FleetWeekOutcome> weeks;
        for (std::size_t w = 0; w < built.size(); ++w) {
          r.max_cpu_seconds = std::max(r.max_cpu_seconds, got[i * built.size() + w].cpu_seconds);
          weeks.push_back(std::move(got[i * built.size() + w]));
        }
        sums.push_back(Sum(weeks));
        say(fmt::format("{}: GPUs needed: {} at {}/{} of the committed GPUs: {:.2f} % SLO, {} deadlines met, {} Gold broken",
                        set.name, runs[i].first.name, runs[i].second, kGpusNeededDen,
                        100.0 * sums.back().serving_attainment, sums.back().deadlines_met, sums.back().gold_violations));
      }
      return sums;
    };
    std::optional<Result<std::vector<GpusNeeded>>> gpus_ran;
    if (set.owned_backlog && !built.empty()) {
      r.gpus_needed_target = GpusNeededTargetOf(r.standard[base_row].sum);
      r.committed_gpus = CommittedGpus(built.front());
    }
    std::optional<Result<std::vector<FleetWeekOutcome>>> more_ran;
    std::thread side;
    if (!more.empty() || set.owned_backlog) {
      side = std::thread([&] {
        if (!more.empty()) more_ran.emplace(RunWeeks(more, options.threads, EtaLines(set.name + ": the layers alone and the frontier", say)));
        if (set.owned_backlog && !built.empty()) {
          gpus_ran.emplace(FindGpusNeeded({r.standard[base_row].config, r.seedance.config},
                                          {r.standard[base_row].sum, r.seedance.sum}, static_cast<double>(built.size()),
                                          built.front(), r.gpus_needed_target, gpus_runner));
        }
      });
    }
    // The lower bound for the base's work, seed by seed. A failed LP leaves the set without a
    // bound, said beside it, and the stacks' figures stand.
    double bound = 0;
    for (std::size_t i = 0; i < built.size() && r.bound_error.empty(); ++i) {
      BoundDecomposition by;
      auto b = FleetWeekLowerBoundUsd(built[i], r.standard[static_cast<std::size_t>(r.base)].seeds[i], &by);
      if (b.has_value()) {
        bound += *b;
        r.bound_decomposition.Add(by);
      } else {
        r.bound_error = fmt::format("seed {}: {}", set.seeds[i], b.error().message());
        say(fmt::format("{}: no lower bound: {}", set.name, r.bound_error));
      }
    }
    r.bound_usd = r.bound_error.empty() ? bound : 0.0;
    r.bound_index = r.bound_error.empty() ? Ratio(bound, base.total_usd) : 1.0;
    // On an owned fleet with a backlog the bill is fixed: the bound that says something there is on
    // the useful work per $ (bound.h), for the base's serving and deadlines, all the set's weeks at once.
    if (set.owned_backlog && !built.empty()) {
      std::vector<const FleetWeekScenario*> weeks;
      std::vector<const FleetWeekOutcome*> bases;
      for (std::size_t i = 0; i < built.size(); ++i) {
        weeks.push_back(&built[i]);
        bases.push_back(&r.standard[base_row].seeds[i]);
      }
      auto ub = FleetWeekUsefulWorkUpperBound(weeks, bases);
      if (ub.has_value()) {
        r.work_bound = *ub;
      } else {
        r.work_bound_error = ub.error().message();
        say(fmt::format("{}: no useful-work bound: {}", set.name, r.work_bound_error));
      }
    }
    if (side.joinable()) side.join();
    if (gpus_ran.has_value()) {
      if (!gpus_ran->has_value()) return gpus_ran->error();
      r.gpus_needed = std::move(**gpus_ran);
    }
    if (set.levers) {
      if (!more_ran->has_value()) return more_ran->error();
      std::vector<FleetWeekOutcome>& ran_more = **more_ran;
      std::size_t t = 0;
      for (std::size_t l = 0; l < lever_configs.size(); ++l) {
        StackResult sr;
        sr.config = lever_configs[l];
        sr.lever = WaterfallLevers()[l].name;
        for (std::size_t i = 0; i < built.size(); ++i, ++t) {
          say(fmt::format("{}: seed {}: {}: ${:.0f}", set.name, set.seeds[i], sr.config.name, ran_more[t].total_usd));
          r.max_cpu_seconds = std::max(r.max_cpu_seconds, ran_more[t].cpu_seconds);
          sr.seeds.push_back(std::move(ran_more[t]));
        }
        sr.sum = Sum(sr.seeds);
        sr.unit_cost_index = UnitCostIndex(sr.sum, base);
        r.levers.push_back(std::move(sr));
      }
      // The frontier: Seedance at each patience (the shipped value is the Seedance row).
      for (double knob : kFrontierMigrateMinSpeed) {
        FleetWeekOutcome sum = r.seedance.sum;
        if (knob != r.seedance.config.migrate_min_speed) {
          std::vector<FleetWeekOutcome> weeks;
          for (std::size_t i = 0; i < built.size(); ++i, ++t) {
            r.max_cpu_seconds = std::max(r.max_cpu_seconds, ran_more[t].cpu_seconds);
            weeks.push_back(std::move(ran_more[t]));
          }
          sum = Sum(weeks);
          say(fmt::format("{}: seedance at migrate_min_speed {}: ${:.0f} per week", set.name, knob,
                                             sum.total_usd / static_cast<double>(weeks.size())));
        }
        r.frontier.push_back({knob, sum.total_usd / static_cast<double>(built.size()), sum.jct_mean_h, UnitCostIndex(sum, base)});
      }
    }
    c.sets.push_back(std::move(r));
  }
  c.predictive_note = SeedanceStack().predictive
                          ? "Seedance's serving fleet follows the forecaster (it beat the reactive rule on held-out days)"
                          : "the forecaster is off: it did not beat the reactive rule on held-out days; Seedance's "
                            "serving fleet is resized by the same reactive rule as the standard stack's";
  return c;
}

FleetWeekOutcome SumOutcomes(const std::vector<FleetWeekOutcome>& weeks) { return Sum(weeks); }

std::vector<FrontierBaseline> FrontierBaselines(const SetResult& r) {
  std::vector<FrontierBaseline> out;
  if (r.frontier.empty()) return out;
  std::vector<std::pair<double, double>> curve;
  for (const auto& p : r.frontier) curve.emplace_back(p.jct_mean_h, p.usd_per_week);
  for (const auto& s : r.standard) {
    FrontierBaseline b;
    b.stack = s.config.name;
    b.usd_per_week = s.sum.total_usd / std::max<double>(1.0, static_cast<double>(s.seeds.size()));
    b.jct_mean_h = s.sum.jct_mean_h;
    b.curve_usd = report::CurveUsdAt(curve, b.jct_mean_h);
    // Within a cent of the curve is on it.
    b.left_of_curve = !std::isfinite(b.curve_usd);
    b.below = !b.left_of_curve && b.usd_per_week < b.curve_usd - 0.01;
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace seedance::fleet
