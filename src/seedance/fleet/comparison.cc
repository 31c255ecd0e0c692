#include "seedance/fleet/comparison.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fmt/format.h>

#include "seedance/fleet/bound.h"
#include "seedance/report/cost_jct_chart.h"
#include "seedance/report/html.h"
#include "seedance/report/svg_chart.h"

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
       }},
      {"batching (Seedance engine)", [](StackConfig* c) { c->batching = "seedance"; }},
      {"serving fleet (planner mix + forecast)", [](StackConfig* c) {
         c->serving_planner = true;
         c->predictive = SeedanceStack().predictive;
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
  }
  if (with_tuning) sets.push_back({"tuning: fleet a, week 1, seeds 0-4", false, "a", 0, tuning, true, "", ""});
  return sets;
}

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
  for (const WeekSet& set : options.sets) {
    SetResult r;
    r.set = set;
    std::vector<StackConfig> stacks = {StandardStack("least-allocated"), StandardStack("most-allocated"), CompetentStack(),
                                       SeedanceStack(), CompetentStackWithoutKarpenter()};
    const std::size_t kStandardRows = 3;
    std::vector<std::vector<FleetWeekOutcome>> outs(stacks.size());
    std::vector<FleetWeekScenario> built;
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
      for (std::size_t k = 0; k < stacks.size(); ++k) {
        SEEDANCE_ASSIGN_OR_RETURN(FleetWeekOutcome out, RunFleetWeek(s, stacks[k]));
        if (progress) progress(fmt::format("{}: seed {}: {}: ${:.0f}", set.name, seed, stacks[k].name, out.total_usd));
        r.max_cpu_seconds = std::max(r.max_cpu_seconds, out.cpu_seconds);
        outs[k].push_back(std::move(out));
      }
      built.push_back(std::move(s));
    }
    for (std::size_t k = 0; k < kStandardRows; ++k) {
      StackResult sr;
      sr.config = stacks[k];
      sr.seeds = outs[k];
      sr.sum = Sum(outs[k]);
      r.standard.push_back(std::move(sr));
    }
    {  // issue 39: the competent base before Karpenter, a labelled row after the three
      StackResult sr;
      sr.config = stacks[kStandardRows + 1];
      sr.seeds = outs[kStandardRows + 1];
      sr.sum = Sum(outs[kStandardRows + 1]);
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
    // The lower bound for the base's work, seed by seed. A failed LP leaves the set without a
    // bound, said beside it, and the stacks' figures stand.
    double bound = 0;
    for (std::size_t i = 0; i < built.size() && r.bound_error.empty(); ++i) {
      auto b = FleetWeekLowerBoundUsd(built[i], r.standard[static_cast<std::size_t>(r.base)].seeds[i]);
      if (b.has_value()) {
        bound += *b;
      } else {
        r.bound_error = fmt::format("seed {}: {}", set.seeds[i], b.error().message());
        if (progress) progress(fmt::format("{}: no lower bound: {}", set.name, r.bound_error));
      }
    }
    r.bound_usd = r.bound_error.empty() ? bound : 0.0;
    r.bound_index = r.bound_error.empty() ? Ratio(bound, base.total_usd) : 1.0;
    if (set.levers) {
      for (const Lever& lever : WaterfallLevers()) {
        StackConfig cfg = r.standard[static_cast<std::size_t>(r.base)].config;
        lever.apply(&cfg);
        cfg.name = "base + " + lever.name;
        StackResult sr;
        sr.config = cfg;
        sr.lever = lever.name;
        for (std::size_t i = 0; i < built.size(); ++i) {
          SEEDANCE_ASSIGN_OR_RETURN(FleetWeekOutcome out, RunFleetWeek(built[i], cfg));
          if (progress) progress(fmt::format("{}: seed {}: {}: ${:.0f}", set.name, set.seeds[i], cfg.name, out.total_usd));
          r.max_cpu_seconds = std::max(r.max_cpu_seconds, out.cpu_seconds);
          sr.seeds.push_back(std::move(out));
        }
        sr.sum = Sum(sr.seeds);
        sr.unit_cost_index = UnitCostIndex(sr.sum, base);
        r.levers.push_back(std::move(sr));
      }
      // The frontier: Seedance at each patience (the shipped value is the Seedance row).
      for (double knob : kFrontierMigrateMinSpeed) {
        FleetWeekOutcome sum = r.seedance.sum;
        if (knob != r.seedance.config.migrate_min_speed) {
          StackConfig cfg = r.seedance.config;
          cfg.migrate_min_speed = knob;
          std::vector<FleetWeekOutcome> weeks;
          for (const auto& week : built) {
            SEEDANCE_ASSIGN_OR_RETURN(FleetWeekOutcome out, RunFleetWeek(week, cfg));
            r.max_cpu_seconds = std::max(r.max_cpu_seconds, out.cpu_seconds);
            weeks.push_back(std::move(out));
          }
          sum = Sum(weeks);
          if (progress) progress(fmt::format("{}: seedance at migrate_min_speed {}: ${:.0f} per week", set.name, knob,
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

namespace {

// A change in percent; rounding noise below the printed digit is shown as +0.0, not -0.0.
std::string Pct(double x) { return fmt::format("{:+.1f} %", std::abs(x) < 5e-4 ? 0.0 : 100.0 * x); }

std::string StandardLabel(const SetResult& r, std::size_t i) {
  const int k = static_cast<int>(i);
  return r.standard[i].config.name + (k == r.base ? " [base]" : k == r.shipped_base ? " [issue 30's base]" : "");
}

// Money and GPU-hours of a set are shown as the mean per week of its weeks (seeds), as the charts
// are; counts (deadlines, Gold checks, sessions cut) over all its weeks (issue 38: one statistic).
double Weeks(const StackResult& r) { return std::max<double>(1.0, static_cast<double>(r.seeds.size())); }

void RowText(std::ostringstream& os, const StackResult& r, const std::string& label) {
  const auto& s = r.sum;
  const double n = Weeks(r);
  os << fmt::format("  {:<66} {:>10.0f} {:>9} {:>9.5f} {:>8.3f} {:>7.2f} {:>7.2f} % {:>6.1f} {:>5}/{:<5} {:>4}/{:<4} {:>8.0f} {:>8.0f} {:>8.0f} {:>8.0f} {:>5}\n",
                    label, s.total_usd / n, Pct(r.unit_cost_index - 1), s.UsdPerPflop(), s.UsdPerMtok(), s.UsdPerDevHour(),
                    100.0 * s.serving_attainment, s.jct_mean_h, s.deadlines_met, s.deadlines, s.gold_violations,
                    s.gold_checks, s.gpu_hours[kDevIdle] / n, s.gpu_hours[kFree] / n, s.idle_gpu_hours / n,
                    s.owned_idle_gpu_hours / n, s.dev_cut_in_use);
}

}  // namespace

std::string FleetWeekTable(const FleetWeekComparison& c) {
  std::ostringstream os;
  os << "The fleet week: every layer on one fleet and one clock (issue 30; docs/FLEET_WEEK.md)\n";
  for (const SetResult& r : c.sets) {
    os << "\n" << r.set.name << (r.set.held_out ? "" : " (tuning: not a headline)") << "\n";
    os << fmt::format("  $ and GPU-hours: mean per week of the set's {} week{}; deadlines, Gold checks and cut "
                      "sessions: counted over all of them\n",
                      r.seedance.seeds.size(), r.seedance.seeds.size() == 1 ? "" : "s");
    for (const std::string& w : r.warnings) os << "  warning: " << w << "\n";
    os << fmt::format("  {:<66} {:>10} {:>9} {:>9} {:>8} {:>7} {:>9} {:>6} {:>11} {:>9} {:>8} {:>8} {:>8} {:>8} {:>5}\n", "stack",
                      "$/week", "unit cost", "$/PFLOP", "$/Mtok", "$/devh", "SLO", "JCT h", "deadlines", "Gold viol",
                      "dev idle", "free", "idle", "own idle", "cut");
    for (std::size_t i = 0; i < r.standard.size(); ++i) RowText(os, r.standard[i], StandardLabel(r, i));
    RowText(os, r.seedance, "seedance (every layer)");
    if (!r.levers.empty()) {
      os << "  waterfall: each layer alone over the base, then all together\n";
      double alone = 0;
      for (const auto& l : r.levers) {
        RowText(os, l, "+ " + l.lever);
        alone += l.unit_cost_index - 1;
      }
      os << fmt::format("  sum of the layers alone {}, all together {}, interactions {}\n", Pct(alone),
                        Pct(r.seedance.unit_cost_index - 1), Pct(r.seedance.unit_cost_index - 1 - alone));
    }
    os << fmt::format("  committed (owned / reserved) GPUs are {:.1f} % of the base's bill: paid in every stack\n",
                      100.0 * r.committed_share);
    const FleetWeekOutcome& b = r.standard[static_cast<std::size_t>(r.base)].sum;
    const double weeks = Weeks(r.seedance);
    os << fmt::format("  idle compute (free GPUs on held nodes + idle notebooks): {:.0f} -> {:.0f} GPU-h ({}); on owned / "
                      "reserved GPUs {:.0f} -> {:.0f} GPU-h ({})\n",
                      b.idle_gpu_hours / weeks, r.seedance.sum.idle_gpu_hours / weeks,
                      Pct(Ratio(r.seedance.sum.idle_gpu_hours, b.idle_gpu_hours) - 1), b.owned_idle_gpu_hours / weeks,
                      r.seedance.sum.owned_idle_gpu_hours / weeks,
                      Pct(Ratio(r.seedance.sum.owned_idle_gpu_hours, b.owned_idle_gpu_hours) - 1));
    if (b.gangs > 0 || b.jobs_never_fit > 0) {
      os << fmt::format("  gangs (jobs of 2 or more pods, all or nothing in one pool): {}; run: base {}, Seedance {}; "
                        "finished: base {}, Seedance {}; jobs that never fit the fleet: {}\n",
                        b.gangs, b.gangs_run, r.seedance.sum.gangs_run, b.gangs_finished, r.seedance.sum.gangs_finished,
                        b.jobs_never_fit);
    }
    os << fmt::format("  useful work per $ (training PFLOP done, finished jobs and the progress of unfinished ones): base {:.1f}, "
                      "Seedance {:.1f} PFLOP per $ ({:.3f}x); owned / reserved GPU-hours idle {:.3f}x the base's\n",
                      Ratio(b.training_pflop, b.total_usd), Ratio(r.seedance.sum.training_pflop, r.seedance.sum.total_usd),
                      Ratio(Ratio(r.seedance.sum.training_pflop, r.seedance.sum.total_usd), Ratio(b.training_pflop, b.total_usd)),
                      Ratio(r.seedance.sum.owned_idle_gpu_hours, b.owned_idle_gpu_hours));
    const UsefulWorkRatios uw = UsefulWorkPerUsd(r.seedance.sum, b);
    os << fmt::format("  useful work per $ with serving: million tokens within SLO per $ base {:.3f}, Seedance {:.3f} ({:.3f}x); "
                      "combined {:.3f}x (PFLOP and tokens weighted by the base's bill for each: training {:.1f} %, "
                      "serving {:.1f} %)\n",
                      Ratio(b.serving_mtok_in_slo, b.total_usd), Ratio(r.seedance.sum.serving_mtok_in_slo, r.seedance.sum.total_usd),
                      uw.mtok, uw.combined, 100.0 * uw.training_weight, 100.0 * (1 - uw.training_weight));
    if (r.bound_error.empty()) {
      os << fmt::format("  lower bound for the base's work on this fleet (time-aware: jobs after they arrive on their own "
                        "GPUs, the base's deadlines met, hourly periods): ${:.0f} per week, {} against the base (no stack can save more); Seedance is {} above it\n",
                        r.bound_usd / weeks, Pct(r.bound_index - 1),
                        Pct(Ratio(r.seedance.sum.total_usd, r.bound_usd) - 1));
    } else {
      os << "  lower bound for the base's work on this fleet: not computed (" << r.bound_error << ")\n";
    }
    if (!r.frontier.empty()) {
      os << "  frontier, Seedance across migrate_min_speed ($/week, mean JCT):";
      for (const auto& p : r.frontier) os << fmt::format(" {}: ${:.0f}, {:.2f} h;", p.knob, p.usd_per_week, p.jct_mean_h);
      std::string below;
      for (const auto& fb : FrontierBaselines(r)) {
        if (fb.below || fb.left_of_curve) below += (below.empty() ? "" : ", ") + fb.stack + (fb.below ? " (below)" : " (faster than every point)");
      }
      os << " standard stacks below the curve: " << (below.empty() ? "none" : below) << "\n";
    }
    os << fmt::format("  slowest week: {:.1f} s CPU\n", r.max_cpu_seconds);
  }
  os << "\n" << c.predictive_note << "\n";
  if (!c.sets.empty()) {
    os << "assumptions:\n";
    for (const auto& a : c.sets.front().assumptions) os << "  - " << a << "\n";
    for (const SetResult& r : c.sets) {
      if (r.assumptions == c.sets.front().assumptions) continue;
      os << "assumptions of " << r.set.name << ":\n";
      for (const auto& a : r.assumptions) os << "  - " << a << "\n";
    }
  }
  return os.str();
}

namespace {

nlohmann::json RowJson(const StackResult& r) {
  const auto& s = r.sum;
  nlohmann::json j;
  j["stack"] = r.config.name;
  if (!r.lever.empty()) j["lever"] = r.lever;
  const char* preemption = r.config.serving_preemption == StackConfig::ServingPreemption::kNone            ? "none"
                           : r.config.serving_preemption == StackConfig::ServingPreemption::kPriorityClass ? "priority-class"
                                                                                                           : "checkpoint-aware-owned";
  j["config"] = {{"tenancy", r.config.tenancy == tenancy::TenancyMode::kSeedance ? "seedance" : "kueue-fair-sharing"},
                 {"idle_culler_timeout_s", r.config.idle_cull_s},
                 {"idle_grace_s", r.config.idle_grace_s},
                 {"serving_preemption", preemption},
                 {"placement", r.config.placement},
                 {"pool_choice", r.config.cost_aware ? "seedance-cost-aware" : "kueue-flavors+skypilot-any-of"},
                 {"batching", r.config.batching},
                 {"serving", r.config.serving_planner ? (r.config.predictive ? "planner-mix+forecast" : "planner-mix+reactive")
                             : r.config.keda_cron   ? "single-type+keda-cron+hpa"
                                                    : "single-type+reactive-hpa"}};
  j["weeks"] = r.seeds.size();
  j["total_usd"] = s.total_usd;  // the sum over the weeks; usd_per_week is what the table and charts show
  j["usd_per_week"] = s.total_usd / Weeks(r);
  j["committed_usd"] = s.committed_usd;
  j["on_demand_usd"] = s.on_demand_usd;
  j["spot_usd"] = s.spot_usd;
  j["training_usd"] = s.training_usd;
  j["serving_usd"] = s.serving_usd;
  j["dev_usd"] = s.dev_usd;
  j["unused_usd"] = s.overhead_usd;
  j["training_pflop"] = s.training_pflop;
  j["usd_per_pflop"] = s.UsdPerPflop();
  j["serving_mtok_in_slo"] = s.serving_mtok_in_slo;
  j["serving_mtok_demanded"] = s.serving_mtok_demanded;
  j["usd_per_mtok_in_slo"] = s.UsdPerMtok();
  j["dev_active_gpu_hours"] = s.dev_active_gpu_hours;
  j["usd_per_dev_active_hour"] = s.UsdPerDevHour();
  j["unit_cost_index"] = r.unit_cost_index;
  j["unit_cost_change_pct"] = 100.0 * (r.unit_cost_index - 1);
  j["serving_slo_attainment"] = s.serving_attainment;
  j["serving_slo_attainment_by_deployment"] = s.serving_attainment_by_deployment;
  j["jobs"] = s.jobs;
  j["jobs_finished"] = s.jobs_finished;
  j["gangs"] = s.gangs;  // jobs of more than one pod
  j["gangs_run"] = s.gangs_run;
  j["gangs_finished"] = s.gangs_finished;
  j["jobs_never_fit"] = s.jobs_never_fit;  // wider than every pool of their types: never run, unfinished
  j["jct_mean_h"] = s.jct_mean_h;
  j["jct_p50_h"] = s.jct_p50_h;
  j["jct_p90_h"] = s.jct_p90_h;
  j["deadlines"] = s.deadlines;
  j["deadlines_met"] = s.deadlines_met;
  j["gold_guarantee_checks"] = s.gold_checks;
  j["gold_guarantee_violations"] = s.gold_violations;
  j["dev_sessions"] = s.dev_sessions;
  j["dev_sessions_cut_in_use"] = s.dev_cut_in_use;
  j["idle_gpu_hours"] = s.idle_gpu_hours;
  j["owned_idle_gpu_hours"] = s.owned_idle_gpu_hours;
  j["dev_wait_p90_min"] = s.dev_wait_p90_min;
  // Fractional GPUs (issue 39): GPUs partitioned into MIG slices and notebook placements on one.
  j["config"]["fractional_gpus"] = r.config.fractional_gpus;
  j["mig_partitions"] = s.mig_partitions;
  j["dev_on_slices"] = s.dev_on_slices;
  nlohmann::json gh;
  for (int u = 0; u < kNumUses; ++u) gh[UseName(u)] = s.gpu_hours[static_cast<std::size_t>(u)];
  j["gpu_hours"] = gh;
  j["spot_preemptions"] = s.spot_preemptions;
  j["admission_preemptions"] = s.admission_preemptions;
  j["idle_reclaims"] = s.idle_reclaims;
  j["serving_preemptions"] = s.serving_preemptions;
  j["nodes_booted"] = s.nodes_booted;
  j["migrations_to_committed"] = s.migrations;
  j["defrag_moves"] = s.defrag_moves;
  j["cloud_nodes_consolidated"] = s.consolidations;       // issue 39: drained by consolidation
  j["consolidation_pod_moves"] = s.consolidation_moves;

  j["match_requeues"] = s.match_requeues;
  j["serving_controllers"] = s.serving_description;
  nlohmann::json per_seed = nlohmann::json::array();
  for (const auto& o : r.seeds) per_seed.push_back({{"total_usd", o.total_usd}, {"training_pflop", o.training_pflop},
                                                    {"serving_mtok_in_slo", o.serving_mtok_in_slo},
                                                    {"serving_slo_attainment", o.serving_attainment},
                                                    {"gold_guarantee_violations", o.gold_violations}});
  j["per_seed"] = per_seed;
  return j;
}

nlohmann::json SetJson(const SetResult& r) {
  nlohmann::json j;
  j["name"] = r.set.name;
  j["held_out"] = r.set.held_out;
  j["fleet"] = r.set.fleet_file.empty() ? "data/fleets/fleet-week-" + r.set.shape + ".yaml" : r.set.fleet_file;
  j["week"] = r.set.week + 1;
  j["seeds"] = r.set.seeds;
  j["statistic"] = "total_usd and GPU-hours: sums over the set's weeks; usd_per_week and the report: their mean per week";
  if (!r.set.history_dir.empty()) j["history"] = r.set.history_dir;
  j["standard"] = RowJson(r.standard[static_cast<std::size_t>(r.base)]);
  j["shipped_standard"] = RowJson(r.standard[static_cast<std::size_t>(r.shipped_base)]);
  const FleetWeekOutcome& b = r.standard[static_cast<std::size_t>(r.base)].sum;
  j["useful_work"] = {
      {"what", "training PFLOP done (finished jobs and the progress of unfinished ones) per $ of the whole bill"},
      {"base_pflop_per_usd", Ratio(b.training_pflop, b.total_usd)},
      {"seedance_pflop_per_usd", Ratio(r.seedance.sum.training_pflop, r.seedance.sum.total_usd)},
      {"ratio", Ratio(Ratio(r.seedance.sum.training_pflop, r.seedance.sum.total_usd), Ratio(b.training_pflop, b.total_usd))},
      {"owned_idle_ratio", Ratio(r.seedance.sum.owned_idle_gpu_hours, b.owned_idle_gpu_hours)},
      {"base_mtok_in_slo_per_usd", Ratio(b.serving_mtok_in_slo, b.total_usd)},
      {"seedance_mtok_in_slo_per_usd", Ratio(r.seedance.sum.serving_mtok_in_slo, r.seedance.sum.total_usd)},
      {"mtok_ratio", UsefulWorkPerUsd(r.seedance.sum, b).mtok},
      {"combined_ratio", UsefulWorkPerUsd(r.seedance.sum, b).combined},
      {"combined_training_weight", UsefulWorkPerUsd(r.seedance.sum, b).training_weight},
      {"combined_what", "training PFLOP per $ and million tokens within SLO per $, each over the base's, weighted by the "
                        "base's bill for training and for serving (notebook hours left out)"},
      {"jobs_finished_base", b.jobs_finished},
      {"jobs_finished_seedance", r.seedance.sum.jobs_finished},
      {"jobs", b.jobs}};
  j["idle_gpu_hours"] = {{"base", b.idle_gpu_hours},
                         {"seedance", r.seedance.sum.idle_gpu_hours},
                         {"owned_base", b.owned_idle_gpu_hours},
                         {"owned_seedance", r.seedance.sum.owned_idle_gpu_hours}};
  nlohmann::json all = nlohmann::json::array();
  for (const auto& s : r.standard) all.push_back(RowJson(s));
  j["standard_rows"] = all;
  j["seedance"] = RowJson(r.seedance);
  nlohmann::json levers = nlohmann::json::array();
  for (const auto& l : r.levers) levers.push_back(RowJson(l));
  j["levers"] = levers;
  if (!r.levers.empty()) {  // each layer alone, their sum, all together, and the bound, against the base
    double alone = 0;
    for (const auto& l : r.levers) alone += 100.0 * (l.unit_cost_index - 1);
    const double together = 100.0 * (r.seedance.unit_cost_index - 1);
    j["waterfall"] = {{"sum_of_layers_alone_pct", alone},
                      {"all_together_pct", together},
                      {"interactions_pct", together - alone},
                      {"lower_bound_pct", r.bound_error.empty() ? nlohmann::json(100.0 * (r.bound_index - 1)) : nlohmann::json()}};
  }
  j["committed_share_of_base_bill"] = r.committed_share;
  if (r.bound_error.empty()) {
    j["lower_bound_usd"] = r.bound_usd;
    j["lower_bound_change_pct"] = 100.0 * (r.bound_index - 1);
    j["lower_bound_time_aware"] = {{"period_s", kBoundPeriodS},
                                   {"jobs_after_arrival", true},
                                   {"constraints", FleetWeekBoundConstraints()},
                                   {"deadlines_met_at_least", r.standard[static_cast<std::size_t>(r.base)].sum.deadlines_met},
                                   {"seedance_gap_pct", 100.0 * (Ratio(r.seedance.sum.total_usd, r.bound_usd) - 1)},
                                   {"seedance_index", Ratio(r.seedance.sum.total_usd, r.standard[static_cast<std::size_t>(r.base)].sum.total_usd)},
                                   {"bound_index", r.bound_index}};
  } else {
    j["lower_bound_usd"] = nullptr;
    j["lower_bound_change_pct"] = nullptr;
    j["lower_bound_error"] = r.bound_error;
  }
  if (!r.frontier.empty()) {
    nlohmann::json pts = nlohmann::json::array(), bases = nlohmann::json::array();
    for (const auto& p : r.frontier) {
      pts.push_back({{"migrate_min_speed", p.knob}, {"usd_per_week", p.usd_per_week}, {"jct_mean_h", p.jct_mean_h},
                     {"unit_cost_change_pct", 100.0 * (p.unit_cost_index - 1)}});
    }
    bool none_below = true;
    for (const auto& fb : FrontierBaselines(r)) {
      none_below = none_below && !fb.below && !fb.left_of_curve;
      bases.push_back({{"stack", fb.stack}, {"usd_per_week", fb.usd_per_week}, {"jct_mean_h", fb.jct_mean_h},
                       {"curve_usd_per_week_at_its_jct", fb.left_of_curve ? nlohmann::json() : nlohmann::json(fb.curve_usd)},
                       {"below_curve", fb.below}, {"faster_than_the_curve", fb.left_of_curve}});
    }
    j["frontier"] = {{"knob", "migrate_min_speed: the least speed, relative to its cloud type, of an owned type a running "
                              "job may move to (lower = more patience for slower owned GPUs)"},
                     {"axes", "$ per week (mean of the set's weeks) against mean JCT of finished jobs (h)"},
                     {"seedance", pts},
                     {"baselines", bases},
                     {"no_baseline_below_curve", none_below}};
  }
  j["assumptions"] = r.assumptions;
  j["warnings"] = r.warnings;
  return j;
}

}  // namespace

std::string FleetWeekJson(const FleetWeekComparison& c) {
  nlohmann::json j;
  if (!c.sets.empty()) {
    const nlohmann::json head = SetJson(c.sets.front());
    j["headline_set"] = head["name"];
    j["standard"] = head["standard"];
    j["seedance"] = head["seedance"];
    j["levers"] = head["levers"];
    if (head.contains("waterfall")) j["waterfall"] = head["waterfall"];
    if (head.contains("frontier")) j["frontier"] = head["frontier"];
    j["lower_bound_usd"] = head["lower_bound_usd"];
    j["lower_bound_change_pct"] = head["lower_bound_change_pct"];
    j["target_unit_cost_change_pct"] = -37.0;
  }
  nlohmann::json sets = nlohmann::json::array();
  for (const auto& r : c.sets) sets.push_back(SetJson(r));
  j["sets"] = sets;
  j["predictive"] = c.predictive_note;
  return j.dump();
}

namespace {

// A horizontal bar chart of the waterfall: each layer alone, the sum, all together (percent change
// of unit cost against the base; bars to the left are savings).
std::string WaterfallSvg(const SetResult& r) {
  struct Bar {
    std::string label;
    double pct;
  };
  std::vector<Bar> bars;
  double alone = 0;
  for (const auto& l : r.levers) {
    bars.push_back({l.lever, 100.0 * (l.unit_cost_index - 1)});
    alone += 100.0 * (l.unit_cost_index - 1);
  }
  bars.push_back({"sum of the layers alone", alone});
  bars.push_back({"all together (seedance)", 100.0 * (r.seedance.unit_cost_index - 1)});
  if (r.bound_error.empty()) bars.push_back({"lower bound (time-aware)", 100.0 * (r.bound_index - 1)});
  bars.push_back({"target of the source documents", -37.0});
  double lo = -40, hi = 5;
  for (const auto& b : bars) {
    lo = std::min(lo, b.pct - 5);
    hi = std::max(hi, b.pct + 5);
  }
  const int w = 760, row = 28, left = 300, right = 40, top = 20;
  const int h = top + row * static_cast<int>(bars.size()) + 30;
  auto x = [&](double v) { return left + (v - lo) / (hi - lo) * (w - left - right); };
  std::ostringstream os;
  os << fmt::format("<svg width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"unit cost waterfall\">", w, h, w, h);
  os << fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#333\"/>", x(0), top - 5, x(0), h - 25);
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double y = top + row * static_cast<double>(i);
    const double x0 = x(std::min(0.0, bars[i].pct)), x1 = x(std::max(0.0, bars[i].pct));
    const std::size_t from_end = bars.size() - i;
    const char* color = from_end == 1 ? "#bab0ac" : from_end == 2 ? "#76b7b2" : from_end == 3 ? "#e15759" : from_end == 4 ? "#f28e2b" : "#4e79a7";
    os << fmt::format("<text x=\"{}\" y=\"{:.1f}\" font-size=\"12\" text-anchor=\"end\">{}</text>", left - 8, y + 15,
                      report::HtmlEscape(bars[i].label));
    os << fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>", x0, y + 3,
                      std::max(1.0, x1 - x0), row - 8, color);
    os << fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{:+.1f} %</text>", x1 + 4, y + 15, bars[i].pct);
  }
  os << fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">unit cost against the standard stack (%)</text>",
                    x(0), h - 8);
  os << "</svg>";
  return os.str();
}

std::string UseChart(const StackResult& r, const std::string& id) {
  static const char* kColors[] = {"#4e79a7", "#59a14f", "#f28e2b", "#e15759", "#bab0ac", "#9c755f"};
  std::vector<report::ChartSeries> series;
  for (int u = 0; u < kNumUses; ++u) {
    report::ChartSeries s;
    s.name = UseName(u);
    s.color = kColors[u];
    for (std::size_t h = 0; h < r.sum.hourly.size(); ++h) {
      s.points.push_back({static_cast<double>(h) / 24.0, r.sum.hourly[h][static_cast<std::size_t>(u)]});
    }
    series.push_back(std::move(s));
  }
  report::LineChartSpec spec;
  spec.id = id;
  spec.title = "GPUs by use, " + r.config.name + " (mean per week of the set's weeks)";
  spec.x.label = "day of the week";
  spec.y.label = "GPUs";
  spec.y.min = 0;
  return report::RenderLineChart(spec, series);
}

// Seedance's curve across its patience and every standard row's point, drawn by the chart
// `cost-benchmark --frontier` draws (report::RenderCostJctChart).
std::string FrontierHtml(const SetResult& r) {
  if (r.frontier.empty()) return "";
  report::CostJctChartSpec spec;
  const std::vector<FrontierBaseline> bases = FrontierBaselines(r);
  int below = 0;
  for (const auto& b : bases) below += b.below || b.left_of_curve;
  spec.intro_html = fmt::format(
      "<p>The frontier: $ per week against the mean JCT of finished jobs (lower and further left is better). Line: "
      "Seedance at each patience for slower owned GPUs (<code>migrate_min_speed</code>, the least speed relative to its "
      "cloud type of an owned type a running job may move to; shipped {}); points: every standard stack; dashed: the "
      "time-aware lower bound. {}</p>\n",
      r.seedance.config.migrate_min_speed,
      below == 0 ? "No standard stack lies below the curve." : fmt::format("{} standard stack(s) lie below or left of the curve.", below));
  for (std::size_t i = 0; i < r.standard.size(); ++i) {
    const int k = static_cast<int>(i);
    const std::string shortname = k == r.base                                    ? "competent base"
                                  : k == r.shipped_base                          ? "issue 30's base"
                                  : r.standard[i].config.name == CompetentStackWithoutKarpenter().name
                                      ? "competent base without Karpenter"
                                      : r.standard[i].config.placement;
    spec.points.push_back({StandardLabel(r, i), shortname, bases[i].jct_mean_h, bases[i].usd_per_week, false});
  }
  for (const auto& p : r.frontier) {
    const std::string name = fmt::format("seedance, migrate_min_speed {}", p.knob);
    spec.points.push_back({name, fmt::format("seedance {}", p.knob), p.jct_mean_h, p.usd_per_week, true});
  }
  spec.has_bound = r.bound_error.empty();
  spec.bound_usd = r.bound_usd / Weeks(r.seedance);
  return report::RenderCostJctChart(spec);
}

void RowHtml(std::ostringstream& os, const StackResult& r, const std::string& label, bool bold) {
  const auto& s = r.sum;
  const double n = Weeks(r);
  os << "<tr" << (bold ? " style=\"font-weight:bold\"" : "") << "><td>" << report::HtmlEscape(label) << "</td>"
     << fmt::format("<td>{:.0f}</td><td>{:+.1f} %</td><td>{:.5f}</td><td>{:.3f}</td><td>{:.2f}</td><td>{:.2f} %</td>"
                    "<td>{:.1f}</td><td>{}/{}</td><td>{}/{}</td><td>{:.0f}</td><td>{:.0f}</td><td>{:.0f}</td><td>{:.0f}</td><td>{:.0f}</td>"
                    "<td>{}</td></tr>\n",
                    s.total_usd / n, 100.0 * (r.unit_cost_index - 1), s.UsdPerPflop(), s.UsdPerMtok(), s.UsdPerDevHour(),
                    100.0 * s.serving_attainment, s.jct_mean_h, s.deadlines_met, s.deadlines, s.gold_violations,
                    s.gold_checks, s.gpu_hours[kDevIdle] / n, s.gpu_hours[kFree] / n, s.gpu_hours[kBooting] / n,
                    s.idle_gpu_hours / n, s.owned_idle_gpu_hours / n, s.dev_cut_in_use);
}

}  // namespace

std::string FleetWeekHtml(const FleetWeekComparison& c) {
  std::ostringstream os;
  os << "<section id=\"fleet-week\"><h2>The fleet week: every layer on one fleet</h2>\n";
  os << "<p>One week on one clock: training jobs of several tenants, two LLM serving deployments with a "
        "diurnal load and notebooks with think time and idle tails share owned, on-demand and spot pools. The "
        "base is the competent standard stack (Kueue with Fair Sharing, kube-scheduler's bin packing, SkyPilot "
        "managed jobs, one GPU type per deployment with vLLM at its tuned knobs and a reactive HPA, JupyterHub's "
        "idle culler and PriorityClass preemption for Gold serving); issue 30's standard rows (no culler, no "
        "preemption) are kept, labelled. Idle compute: GPU-hours free on held nodes plus held by idle notebooks. Unit cost: "
        "$ per PFLOP of training, per million tokens served within SLO and per notebook hour in use, weighted by "
        "the base stack's output. " << report::HtmlEscape(c.predictive_note) << ".</p>\n";
  int chart = 0;
  for (const SetResult& r : c.sets) {
    os << "<h3>" << report::HtmlEscape(r.set.name) << (r.set.held_out ? "" : " (tuning: not a headline)") << "</h3>\n";
    for (const std::string& w : r.warnings) os << "<p style=\"color:#a00\"><b>Warning:</b> " << report::HtmlEscape(w) << "</p>\n";
    os << fmt::format("<p>$ and GPU-hours: mean per week of the set's {} week(s), as in the charts; deadlines, Gold "
                      "checks and cut sessions: counted over all of them.</p>\n", r.seedance.seeds.size());
    os << "<table><tr><th>stack</th><th>$ per week</th><th>unit cost</th><th>$/PFLOP</th><th>$/M tokens in SLO</th>"
          "<th>$/notebook hour</th><th>serving SLO</th><th>JCT h</th><th>deadlines met</th><th>Gold violations</th>"
          "<th>idle notebook GPU-h</th><th>free GPU-h on held nodes</th><th>booting GPU-h</th>"
          "<th>idle compute GPU-h (free + idle notebooks)</th><th>of it on owned / reserved GPUs</th>"
          "<th>notebooks cut in use</th></tr>\n";
    for (std::size_t i = 0; i < r.standard.size(); ++i) {
      RowHtml(os, r.standard[i], StandardLabel(r, i), false);
    }
    RowHtml(os, r.seedance, "seedance (every layer)", true);
    for (const auto& l : r.levers) RowHtml(os, l, "base + " + l.lever, false);
    os << "</table>\n";
    if (!r.levers.empty()) os << "<h4>Unit cost waterfall</h4>\n" << WaterfallSvg(r) << "\n";
    os << FrontierHtml(r);
    os << fmt::format("<p>Committed GPUs (owned at TCO, reserved) are {:.1f} % of the base's bill and are paid in every "
                      "stack. ", 100.0 * r.committed_share);
    if (r.bound_error.empty()) {
      os << fmt::format("Lower bound for the base's work on this fleet (fluid, time-aware: jobs only after they arrive, "
                        "on their own GPUs, the base's deadlines met, hourly periods; no cold starts): ${:.0f} per week, {:+.1f} % against the base: no stack can "
                        "save more.</p>\n",
                        r.bound_usd / Weeks(r.seedance), 100.0 * (r.bound_index - 1));
    } else {
      os << "Lower bound for the base's work on this fleet: not computed (" << report::HtmlEscape(r.bound_error) << ").</p>\n";
    }
    if (&r == &c.sets.front()) {
      os << UseChart(r.standard[static_cast<std::size_t>(r.base)], "fleet-week-use-" + std::to_string(chart++)) << "\n";
      os << UseChart(r.seedance, "fleet-week-use-" + std::to_string(chart++)) << "\n";
    }
    os << "<ul>";
    for (const auto& a : r.assumptions) os << "<li>" << report::HtmlEscape(a) << "</li>";
    os << "</ul>\n";
  }
  os << "</section>\n";
  return os.str();
}

}  // namespace seedance::fleet
