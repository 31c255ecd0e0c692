// The fleet week's comparison as the user reads it: the printed tables, results.json and the HTML
// report with its waterfall, useful-work charts and frontier (comparison.cc runs the sets).
#include "seedance/fleet/comparison.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fmt/format.h>

#include "seedance/fleet/bound.h"
#include "seedance/fleet/decomposition.h"
#include "seedance/report/cost_jct_chart.h"
#include "seedance/report/html.h"
#include "seedance/report/svg_chart.h"

namespace seedance::fleet {
namespace {

double Ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

}  // namespace
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

// The useful-work bound of an owned set (bound.h), in words: "" when the set has none.
std::string WorkBoundText(const SetResult& r) {
  if (!r.set.owned_backlog) return "";
  if (!r.work_bound_error.empty()) return "upper bound on useful work per $: not computed (" + r.work_bound_error + ")";
  const FleetWeekOutcome& b = r.standard[static_cast<std::size_t>(r.base)].sum;
  const double base = Ratio(b.training_pflop, b.total_usd), ub = r.work_bound.PflopPerUsd();
  const double ours = Ratio(r.seedance.sum.training_pflop, r.seedance.sum.total_usd);
  return fmt::format("upper bound on useful work per $ for the base's serving within SLO and deadlines (the time-aware "
                     "LP: fluid, foresight, training maximized, notebooks left out): {:.1f} PFLOP per $, {:.3f}x the "
                     "base's (cloud ${:.0f} a week); Seedance reaches {:.1f} % of it: no stack keeping the base's SLO "
                     "and deadlines does more than {:.3f}x",
                     ub, Ratio(ub, base), r.work_bound.cloud_usd / Weeks(r.seedance), 100.0 * Ratio(ours, ub), Ratio(ub, base));
}

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
    if (const std::string ub = WorkBoundText(r); !ub.empty()) os << "  " << ub << "\n";
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
    if (!r.gpus_needed.empty()) os << GpusNeededText(r.gpus_needed, r.gpus_needed_target, r.committed_gpus);
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
  j["decomposition"] = DecompositionJson(s);  // issue 39, round 5: the bill by type, tier and use
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
  if (r.set.owned_backlog) {
    auto& uw = j["useful_work"];
    uw["bound_what"] = "the most training PFLOP per $ of the whole bill any stack can reach on these weeks while serving "
                       "at least the base's requests within SLO and meeting at least its deadlines (the time-aware LP: "
                       "fluid, foresight, training maximized, notebooks left out; Dinkelbach over the set's weeks)";
    if (r.work_bound_error.empty()) {
      const double base = Ratio(b.training_pflop, b.total_usd), ub = r.work_bound.PflopPerUsd();
      uw["bound_pflop_per_usd"] = ub;
      uw["bound_ratio"] = Ratio(ub, base);
      uw["bound_cloud_usd"] = r.work_bound.cloud_usd;
      uw["bound_lp_solves_per_week"] = r.work_bound.iterations;
      uw["seedance_share_of_bound"] = Ratio(Ratio(r.seedance.sum.training_pflop, r.seedance.sum.total_usd), ub);
    } else {
      uw["bound_pflop_per_usd"] = nullptr;
      uw["bound_error"] = r.work_bound_error;
    }
  }
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
    j["lower_bound_time_aware"]["decomposition"] = BoundDecompositionJson(r.bound_decomposition);
  } else {
    j["lower_bound_usd"] = nullptr;
    j["lower_bound_change_pct"] = nullptr;
    j["lower_bound_error"] = r.bound_error;
  }
  if (!r.gpus_needed.empty()) j["gpus_needed"] = GpusNeededJson(r.gpus_needed, r.gpus_needed_target, r.committed_gpus);
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
                                  : r.standard[i].config.deadline_priority_class ? "competent base + deadline priority"
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
    if (const std::string ub = WorkBoundText(r); !ub.empty()) {
      std::string line = ub;
      line[0] = 'U';
      os << "<p>" << report::HtmlEscape(line) << ".</p>\n";
    }
    os << "<h4>Where the dollars go</h4>\n<p>The base's and Seedance's bill per week by GPU type, cloud tier and use, "
          "the committed GPU-hours their training took (by kind) and left free, and the lower bound's schedule for the "
          "base's work split the same way (fluid: no nodes, no gangs, no integral replicas).</p>\n"
       << DecompositionHtml(r.standard[static_cast<std::size_t>(r.base)].sum, Weeks(r.standard[static_cast<std::size_t>(r.base)]),
                            r.seedance.sum, Weeks(r.seedance), r.bound_error.empty() ? &r.bound_decomposition : nullptr,
                            Weeks(r.seedance));
    if (!r.gpus_needed.empty()) os << GpusNeededHtml(r.gpus_needed, r.gpus_needed_target, r.committed_gpus);
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
