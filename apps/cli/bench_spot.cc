// seedance bench spot: single deadline jobs on the real spot availability traces, the setting of
// "Can't Be Late" (NSDI'24): on-demand, greedy, uniform-progress, seedance, and omniscient as the
// reference with the future known.
#include <fmt/format.h>

#include <iostream>
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "bench_spot_adrs.h"
#include "commands.h"
#include "common.h"
#include "seedance/core/file_util.h"
#include "seedance/sim/spot_bench.h"

namespace seedance::cli {
namespace {

struct Flags {
  std::string job_hours = "12,24,48";
  std::string job_fraction;
  std::string slack;
  std::string changeover = "0.02,0.2";
  int samples = 8;
  std::uint64_t seed = 1;
  int threads = 2;
  bool no_reproduction = false;
  int reproduction_samples = 30;
  std::string out = "seedance-spot";
  std::string windows;        // --windows FILE
  bool multi_region = false;
  std::string region_sets;    // "a+b,c+d+e"
  bool adrs = false;
  int adrs_max_window = 299;
  std::set<std::string> given;  // of --job-hours/--slack/--job-fraction/--changeover-hours/--samples
};

Result<sim::SpotBenchOptions> ToOptions(const Flags& f) {
  sim::SpotBenchOptions o;
  SEEDANCE_ASSIGN_OR_RETURN(o.job_hours, ParseNumberList(f.job_hours, "--job-hours", false, "hours of compute"));
  SEEDANCE_ASSIGN_OR_RETURN(o.changeover_hours,
                            ParseNumberList(f.changeover, "--changeover-hours", false, "hours per switch"));
  if (!f.slack.empty() && !f.job_fraction.empty()) {
    return InvalidArgumentError("--slack and --job-fraction: give one of the two");
  }
  if (!f.slack.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(std::vector<double> s, ParseNumberList(f.slack, "--slack", false, "deadline slack"));
    o.job_fractions.clear();
    for (double x : s) o.job_fractions.push_back(1.0 / (1.0 + x));
  }
  if (!f.job_fraction.empty()) {
    SEEDANCE_ASSIGN_OR_RETURN(o.job_fractions,
                              ParseNumberList(f.job_fraction, "--job-fraction", false, "job / deadline"));
    for (double x : o.job_fractions) {
      if (x > 1) return InvalidArgumentError(fmt::format("--job-fraction: '{}' is above 1 (job / deadline)", x));
    }
  }
  o.samples = f.samples;
  o.seed = f.seed;
  o.threads = f.threads;
  o.reproduce = !f.no_reproduction;
  o.reproduction_samples = f.reproduction_samples;
  return o;
}

nlohmann::json RowJson(const sim::SpotBenchRow& r) {
  nlohmann::json j = {{"trace", r.trace}, {"job_hours", r.job_hours}, {"deadline_hours", r.deadline_hours},
          {"changeover_hours", r.changeover_hours}, {"policy", r.policy}, {"cost_usd", r.cost_usd},
          {"on_demand_usd", r.on_demand_usd}, {"savings_pct", r.savings_pct},
          {"deadline_misses", r.deadline_misses}, {"set", r.set}, {"samples", r.samples},
          {"od_compute_hours", r.od_compute_hours}, {"spot_compute_hours", r.spot_compute_hours}};
  if (r.window >= 0) j["window"] = r.window;
  return j;
}

nlohmann::json ReproJson(const sim::ReproductionRow& r) {
  nlohmann::json j = {{"table", r.table}, {"policy", r.policy}, {"samples", r.samples},
                      {"od_hours", r.od_hours}, {"od_hours_sd", r.od_hours_sd}, {"spot_hours", r.spot_hours},
                      {"spot_hours_sd", r.spot_hours_sd}, {"savings_pct", r.savings_pct},
                      {"deadline_misses", r.deadline_misses}};
  if (r.published_od_hours >= 0) j["published_od_hours"] = r.published_od_hours;
  if (r.published_spot_hours >= 0) j["published_spot_hours"] = r.published_spot_hours;
  if (r.published_savings_pct >= 0) j["published_savings_pct"] = r.published_savings_pct;
  return j;
}

// Per setting of the 2023 set, summed over the nine zones.
void PrintBenchTable(const sim::SpotBenchReport& rep) {
  using Key = std::tuple<double, double, double>;
  struct Agg {
    std::map<std::string, double> cost;
    double od = 0;
    int misses = 0;
    int zones_seedance_ahead = 0;
    int zones = 0;
  };
  std::map<Key, Agg> by;
  std::map<std::pair<Key, std::string>, double> zone_saving;
  for (const auto& r : rep.results) {
    if (r.set != "2023-v100") continue;
    Agg& a = by[{r.job_hours, r.deadline_hours, r.changeover_hours}];
    a.cost[r.policy] += r.cost_usd;
    if (r.policy == "on-demand") {
      a.od += r.on_demand_usd;
      ++a.zones;
    }
    if (r.policy != "omniscient") a.misses += r.deadline_misses;
    if (r.policy == "uniform-progress") zone_saving[{{r.job_hours, r.deadline_hours, r.changeover_hours}, r.trace}] = r.savings_pct;
    if (r.policy == "seedance" &&
        r.savings_pct > zone_saving[{{r.job_hours, r.deadline_hours, r.changeover_hours}, r.trace}]) {
      ++a.zones_seedance_ahead;
    }
  }
  std::cout << "Savings vs on-demand, 2023 p3.2xlarge series, 9 zones pooled (sum of costs):\n";
  std::cout << fmt::format("{:>5} {:>6} {:>5} | {:>7} {:>7} {:>8} {:>7} | {:>6} {:>9} {:>9} {:>6}\n", "job h", "ddl h",
                           "d h", "greedy", "UP", "seedance", "omnisc.", "misses", "sd-UP pp", "gap omn.", "zones+");
  for (const auto& entry : by) {
    const auto& k = entry.first;
    const auto& a = entry.second;
    auto sav = [&a](const char* p) { return 100.0 * (1.0 - a.cost.at(p) / a.od); };
    std::cout << fmt::format("{:>5.0f} {:>6.1f} {:>5.2f} | {:>6.1f}% {:>6.1f}% {:>7.1f}% {:>6.1f}% | {:>6} {:>9.2f} {:>9.2f} {:>3}/{}\n",
                             std::get<0>(k), std::get<1>(k), std::get<2>(k), sav("greedy"), sav("uniform-progress"),
                             sav("seedance"), sav("omniscient"), a.misses,
                             sav("seedance") - sav("uniform-progress"), sav("omniscient") - sav("seedance"),
                             a.zones_seedance_ahead, a.zones);
  }
  std::cout << "(UP: uniform-progress, the authors' rc_cr_threshold as their simulator runs it; misses: all online "
               "policies; sd-UP: seedance minus uniform-progress saving; gap omn.: omniscient minus seedance saving, "
               "points of on-demand cost; zones+: zones where seedance saves more than UP)\n";
}

void PrintReproduction(const sim::SpotBenchReport& rep) {
  if (rep.reproduction.empty()) return;
  std::cout << "\nReproduction of Can't Be Late (NSDI'24):\n";
  std::cout << fmt::format("{:<8} {:<27} {:>15} {:>15} {:>12} {:>8} {:>8}\n", "table", "policy", "OD h (paper)",
                           "spot h (paper)", "saving", "(paper)", "misses");
  for (const auto& r : rep.reproduction) {
    auto pub = [](double v) { return v >= 0 ? fmt::format("{:.1f}", v) : std::string("-"); };
    std::cout << fmt::format("{:<8} {:<27} {:>7.1f} ({:>5}) {:>7.1f} ({:>5}) {:>11.1f}% {:>8} {:>8}\n", r.table, r.policy,
                             r.od_hours, pub(r.published_od_hours), r.spot_hours, pub(r.published_spot_hours),
                             r.savings_pct, pub(r.published_savings_pct), r.deadline_misses);
  }
}

Status WriteDoc(const std::string& dir, const nlohmann::json& doc) {
  SEEDANCE_RETURN_IF_ERROR(EnsureDirectory(dir));
  return WriteFileAtomically(dir + "/spot.json", doc.dump(2) + "\n");
}

nlohmann::json CommonAssumptions(const sim::SpotBenchOptions& o, const char* prices_key) {
  return {{"model", "Can't Be Late (NSDI'24) §3: idle/spot/on-demand, changeover d on every launch billed at the new "
                    "instance's price, preemption seen at the next tick, per-second billing"},
          {"trace_encoding", "skypilot-org/spot-traces files, 1 = spot available (the authors' simulator data is the inverse)"},
          {prices_key, fmt::format("on-demand ${:.2f}/h, spot ${:.3f}/h", o.od_usd_per_hour, o.spot_usd_per_hour)},
          {"uniform_progress", "the authors' rc_cr_threshold and greedy (strawman) as their simulator runs them: "
                               "tick-grid safety nets and its strong guarantee (issue 41)"},
          {"omniscient", "offline optimum with the whole future known: a reference, not a competitor"}};
}

// `--windows FILE`: one run per CSV row under every policy.
int RunWindows(const Flags& f) {
  if (!f.given.empty()) {
    return ReportError(InvalidArgumentError(
        "--windows: the windows file sets the job, deadline and changeover of each run; drop --job-hours, --slack, "
        "--job-fraction, --changeover-hours and --samples"));
  }
  const sim::SpotBenchOptions o;
  auto rows = sim::RunSpotWindows(f.windows, DataDir(), o);
  if (!rows.has_value()) return ReportError(rows.error());
  std::map<int, std::map<std::string, const sim::SpotBenchRow*>> by;
  for (const auto& r : *rows) by[r.window][r.policy] = &r;
  std::cout << fmt::format("{} windows from {}; on-demand ${:.2f}/h, spot ${:.3f}/h; savings vs on-demand:\n",
                           by.size(), f.windows, o.od_usd_per_hour, o.spot_usd_per_hour);
  std::cout << fmt::format("{:>6} {:<44} {:>6} {:>6} {:>5} | {:>7} {:>7} {:>8} {:>7} | {:>6}\n", "window", "trace",
                           "job h", "ddl h", "d h", "greedy", "UP", "seedance", "omnisc.", "misses");
  for (const auto& [w, p] : by) {
    const sim::SpotBenchRow& any = *p.begin()->second;
    int misses = 0;
    for (const auto& [name, r] : p) misses += name == "omniscient" ? 0 : r->deadline_misses;
    std::cout << fmt::format("{:>6} {:<44} {:>6.1f} {:>6.1f} {:>5.2f} | {:>6.1f}% {:>6.1f}% {:>7.1f}% {:>6.1f}% | {:>6}\n", w,
                             any.trace, any.job_hours, any.deadline_hours, any.changeover_hours,
                             p.at("greedy")->savings_pct, p.at("uniform-progress")->savings_pct,
                             p.at("seedance")->savings_pct, p.at("omniscient")->savings_pct, misses);
  }
  nlohmann::json res = nlohmann::json::array();
  for (const auto& r : *rows) res.push_back(RowJson(r));
  nlohmann::json assumptions = CommonAssumptions(o, "prices");
  assumptions["windows"] = "each row of " + f.windows + " is one run (window = its 0-based data row); bare trace "
                           "names are read from the data dir's spot_traces/, other relative paths from the CSV's directory";
  const Status s = WriteDoc(f.out, {{"results", res}, {"reproduction", nlohmann::json::array()},
                                    {"assumptions", assumptions}});
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << f.out << "/spot.json\n";
  return kExitOk;
}

Result<sim::MultiRegionBenchOptions> ToMultiRegionOptions(const Flags& f) {
  sim::MultiRegionBenchOptions m;
  SEEDANCE_ASSIGN_OR_RETURN(sim::SpotBenchOptions o, ToOptions(f));
  auto one = [](const std::vector<double>& v, const char* flag) -> Result<double> {
    if (v.size() != 1) return InvalidArgumentError(std::string(flag) + ": one value with --multi-region");
    return v[0];
  };
  if (f.given.count("--job-hours") > 0) {
    SEEDANCE_ASSIGN_OR_RETURN(m.job_hours, one(o.job_hours, "--job-hours"));
  }
  m.deadline_hours = m.job_hours * 1.5;
  if (f.given.count("--slack") > 0 || f.given.count("--job-fraction") > 0) {
    SEEDANCE_ASSIGN_OR_RETURN(double fraction, one(o.job_fractions, f.given.count("--slack") > 0 ? "--slack" : "--job-fraction"));
    m.deadline_hours = m.job_hours / fraction;
  }
  if (f.given.count("--changeover-hours") > 0) {
    SEEDANCE_ASSIGN_OR_RETURN(m.changeover_hours, one(o.changeover_hours, "--changeover-hours"));
  }
  m.samples = f.samples;
  m.seed = f.seed;
  m.threads = f.threads;
  if (!f.region_sets.empty()) {
    std::string set;
    std::stringstream in(f.region_sets);
    while (std::getline(in, set, ',')) {
      std::vector<std::string> zones;
      std::stringstream z(set);
      for (std::string name; std::getline(z, name, '+');) {
        if (name.empty()) return InvalidArgumentError("--region-sets: an empty zone name in '" + set + "'");
        zones.push_back(name);
      }
      if (zones.empty()) return InvalidArgumentError("--region-sets: an empty set in '" + f.region_sets + "'");
      m.region_sets.push_back(std::move(zones));
    }
  }
  return m;
}

// `--multi-region`: one row per (region set, policy).
int RunMultiRegion(const Flags& f) {
  if (!f.windows.empty()) return ReportError(InvalidArgumentError("--windows and --multi-region: give one of the two"));
  auto m = ToMultiRegionOptions(f);
  if (!m.has_value()) return ReportError(m.error());
  auto rows = sim::RunMultiRegionBench(DataDir(), *m);
  if (!rows.has_value()) return ReportError(rows.error());
  std::cout << fmt::format("Multi-region: {} h job, deadline {} h, d {} h, {} start points per set (seed {}); on-demand "
                           "${:.2f}/h, spot ${:.3f}/h; savings vs on-demand (region moves per job):\n",
                           m->job_hours, m->deadline_hours, m->changeover_hours, m->samples, m->seed,
                           m->od_usd_per_hour, m->spot_usd_per_hour);
  std::map<std::string, std::map<std::string, const sim::MultiRegionRow*>> by;
  std::vector<std::string> order;
  for (const auto& r : *rows) {
    if (by.count(r.regions) == 0) order.push_back(r.regions);
    by[r.regions][r.policy] = &r;
  }
  const std::vector<std::pair<const char*, const char*>> cols = {
      {"uniform-progress-spot-first", "UP 1-reg"}, {"seedance", "sd 1-reg"}, {"uniform-progress-round-robin", "UP RR"},
      {"uniform-progress-any-region", "UP any"}, {"seedance-multi-region", "sd multi"},
      {"omniscient-multi-region", "omnisc."}};
  std::string head = fmt::format("{:>2} ", "R");
  for (const auto& [p, name] : cols) head += fmt::format("{:>14} ", name);
  std::cout << head << fmt::format("{:>6}  regions\n", "misses");
  for (const auto& set : order) {
    const auto& p = by.at(set);
    int misses = 0;
    for (const auto& [name, r] : p) misses += name == "omniscient-multi-region" ? 0 : r->deadline_misses;
    std::string line = fmt::format("{:>2} ", std::count(set.begin(), set.end(), '+') + 1);
    for (const auto& [name, label] : cols) {
      const sim::MultiRegionRow& r = *p.at(name);
      line += fmt::format("{:>7.1f}% ({:>4.1f}) ", r.savings_pct, r.region_moves);
    }
    std::cout << line << fmt::format("{:>6}  {}\n", misses, set);
  }
  nlohmann::json res = nlohmann::json::array();
  for (const auto& r : *rows) {
    res.push_back({{"regions", r.regions}, {"job_hours", r.job_hours}, {"deadline_hours", r.deadline_hours},
                   {"changeover_hours", r.changeover_hours}, {"policy", r.policy}, {"cost_usd", r.cost_usd},
                   {"on_demand_usd", r.on_demand_usd}, {"savings_pct", r.savings_pct},
                   {"deadline_misses", r.deadline_misses}, {"samples", r.samples},
                   {"od_compute_hours", r.od_compute_hours}, {"spot_compute_hours", r.spot_compute_hours},
                   {"region_moves", r.region_moves}});
  }
  sim::SpotBenchOptions prices;
  prices.od_usd_per_hour = m->od_usd_per_hour;
  prices.spot_usd_per_hour = m->spot_usd_per_hour;
  nlohmann::json assumptions = CommonAssumptions(prices, "prices");
  assumptions["multi_region"] =
      "one job, spot in any region of the set (the 2023 p3.2xlarge series, one per zone), on-demand anywhere; moving a "
      "spot instance to another region is a restart (changeover d); sample j starts in region j mod R (single-region "
      "rows run there, round robin starts there); seedance-multi-region sees every region's availability now and in "
      "the past, never the future; round robin looks at one region per tick";
  const Status s = WriteDoc(f.out, {{"results", nlohmann::json::array()}, {"multi_region", res},
                                    {"assumptions", assumptions}});
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << f.out << "/spot.json\n";
  return kExitOk;
}

int Run(const Flags& f) {
  if (f.adrs) {
    if (f.multi_region || !f.windows.empty() || !f.given.empty()) {
      return ReportError(InvalidArgumentError(
          "--adrs: runs the authors' windows and the leaderboard's setting; drop --windows, --multi-region, "
          "--job-hours, --slack, --job-fraction, --changeover-hours and --samples"));
    }
    return RunAdrsBench(f.out, f.threads, f.adrs_max_window);
  }
  if (f.multi_region) return RunMultiRegion(f);
  if (!f.region_sets.empty()) return ReportError(InvalidArgumentError("--region-sets: needs --multi-region"));
  if (!f.windows.empty()) return RunWindows(f);
  auto o = ToOptions(f);
  if (!o.has_value()) return ReportError(o.error());
  auto rep = sim::RunSpotDeadlineBench(DataDir(), *o);
  if (!rep.has_value()) return ReportError(rep.error());
  std::cout << fmt::format("{} start points per zone and setting (seed {}); on-demand ${:.2f}/h, spot ${:.3f}/h\n",
                           o->samples, o->seed, o->od_usd_per_hour, o->spot_usd_per_hour);
  PrintBenchTable(*rep);
  PrintReproduction(*rep);
  nlohmann::json res = nlohmann::json::array();
  for (const auto& r : rep->results) res.push_back(RowJson(r));
  nlohmann::json repro = nlohmann::json::array();
  for (const auto& r : rep->reproduction) repro.push_back(ReproJson(r));
  nlohmann::json assumptions = CommonAssumptions(*o, "prices_2023");
  assumptions["prices_table3"] = "k = 3.145, on-demand $3.06/h for all eight pairs (as the authors' simulator)";
  assumptions["sampling"] = fmt::format("{} seeded start points per zone and setting (seed {}); Table 3: {} per pair in "
                                        "the first 1781 ticks of the 10/26/2022 files", o->samples, o->seed,
                                        o->reproduction_samples);
  assumptions["uniform_progress"] = assumptions["uniform_progress"].get<std::string>() +
                                    "; the paper-prose reading uniform-progress-hysteresis appears in the reproduction only";
  const nlohmann::json doc = {{"results", res}, {"reproduction", repro}, {"assumptions", assumptions}};
  const Status s = WriteDoc(f.out, doc);
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << f.out << "/spot.json\n";
  return kExitOk;
}

}  // namespace

Action RegisterBenchSpot(CLI::App& bench) {
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = AddCommand(
      bench, "spot", "Run deadline jobs on spot traces, reproducing Can't Be Late (NSDI'24)",
      "On-demand, greedy, uniform-progress, seedance and the omniscient reference, on the 2023 "
      "p3.2xlarge series (9 zones), plus the paper's Table 3 / 5 settings. Writes DIR/spot.json: "
      "results[] {trace, job_hours, deadline_hours, changeover_hours, policy, cost_usd, on_demand_usd, "
      "savings_pct, deadline_misses} and reproduction[] (the paper's figures beside ours). --windows FILE runs the "
      "CSV's rows instead (results[] with `window`, the row index); --multi-region runs one job across several "
      "zones' spot pools instead (multi_region[] {regions, policy, cost_usd, savings_pct, deadline_misses, "
      "region_moves, ...}). Trace files: 1 = spot available.",
      "seedance bench spot --job-hours 24,48 --slack 0.25 --changeover-hours 0.2 --samples 50 --out /tmp/s");
  cmd->add_option("--job-hours", f->job_hours, "job lengths in hours of compute, comma-separated")->capture_default_str();
  cmd->add_option("--slack", f->slack,
                  "deadline slacks, comma-separated: deadline = job x (1 + slack) (default: job fractions 0.5,0.7,0.8,0.9)");
  cmd->add_option("--job-fraction", f->job_fraction, "instead of --slack: job / deadline, comma-separated, in (0, 1]");
  cmd->add_option("--changeover-hours", f->changeover, "changeover delays d in hours, comma-separated")->capture_default_str();
  cmd->add_option("--samples", f->samples, "random start points per zone and setting")->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("--seed", f->seed, "seed of the start points")->capture_default_str();
  cmd->add_option("--threads", f->threads, "worker threads (results do not depend on it)")->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_flag("--no-reproduction", f->no_reproduction, "skip the paper's Table 3 / Table 5 settings");
  cmd->add_option("--reproduction-samples", f->reproduction_samples, "start points per pair for Table 3 (paper: 300)")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_option("--windows", f->windows,
                  "CSV of sample runs instead of the random starts: trace,start_tick,job_hours,deadline_hours,"
                  "changeover_hours (bare trace names from DATA_DIR/spot_traces/, other relative paths from the "
                  "CSV's directory); every policy runs each row");
  cmd->add_flag("--multi-region", f->multi_region,
                "one job across the spot pools of several regions (moving = a changeover): single-region uniform "
                "progress and seedance, uniform progress round robin and any-region, seedance-multi-region and the "
                "omniscient reference; default job 24 h, deadline 36 h, d 0.2 h (the ADRS multi-region setting)");
  cmd->add_option("--region-sets", f->region_sets,
                  "with --multi-region: zone sets of the 2023 series, '+' within a set, ',' between sets "
                  "(default: six sets of 2-9 zones)");
  cmd->add_flag("--adrs", f->adrs,
                "the ADRS evolved programs on the ADRS leaderboard's setting beside their published scores, then every "
                "policy on the authors' sampled windows (data/adrs_spot), odd-numbered windows only (the evaluation "
                "half: seedance was tuned on the even-numbered ones), then the leaderboard's multi-region problem "
                "(baseline, GEPA, seedance-multi-region); writes adrs_leaderboard[], adrs_windows[] and "
                "adrs_multi_region[]");
  cmd->add_option("--adrs-max-window", f->adrs_max_window, "with --adrs: only the windows numbered up to this")
      ->capture_default_str()->check(CLI::Range(1, 299));
  cmd->add_option("--out", f->out, "output directory")->capture_default_str();
  return [cmd, f]() {
    if (!cmd->parsed()) return -1;
    for (const char* o : {"--job-hours", "--slack", "--job-fraction", "--changeover-hours", "--samples"}) {
      if (cmd->count(o) > 0) f->given.insert(o);
    }
    return Run(*f);
  };
}

}  // namespace seedance::cli
