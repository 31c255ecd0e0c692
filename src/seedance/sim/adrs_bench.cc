#include "seedance/sim/adrs_bench.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "seedance/core/check.h"
#include "seedance/core/csv.h"
#include "seedance/sim/deadline/policies.h"
#include "seedance/sim/deadline/sky_spot_multi.h"
#include "seedance/sim/parallel_for.h"
#include "seedance/sim/spot_bench.h"

namespace seedance::sim {
namespace {

std::int64_t Seconds(double hours) { return std::llround(hours * 3600.0); }

using TraceMap = std::map<std::string, deadline::SpotTrace>;

Result<TraceMap> LoadPairs(const std::string& data_dir, const std::vector<AdrsWindow>& windows) {
  TraceMap traces;
  for (const auto& w : windows) {
    if (traces.count(w.pair) > 0) continue;
    SEEDANCE_ASSIGN_OR_RETURN(
        deadline::SpotTrace t,
        deadline::LoadSpotTrace(data_dir + "/spot_traces/aws-10-26-2022_" + w.pair + ".json", w.pair));
    traces.emplace(w.pair, std::move(t));
  }
  return traces;
}

// One run of `policy` from `start` (the windows are checked to fit the series when loaded).
SampleOutcome RunOne(const deadline::SpotTrace& trace, std::int64_t start, const deadline::DeadlineJob& job,
                     const std::string& policy) {
  return RunPolicyOnStarts(trace, {start}, job, policy, kAdrsSpotUsd, kAdrsOdUsd, 1).front();
}

}  // namespace

deadline::DeadlineJob AdrsJob(double job_hours, double deadline_hours, double changeover_hours) {
  deadline::DeadlineJob j{Seconds(job_hours), Seconds(deadline_hours), Seconds(changeover_hours),
                          kAdrsOdUsd / kAdrsSpotUsd};
  j.whole_tick_billing = true;
  return j;
}

Result<std::vector<AdrsWindow>> LoadAdrsWindows(const std::string& data_dir) {
  const std::string path = data_dir + "/adrs_spot/windows.csv";
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_pair, t.ColumnIndex("pair"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_window, t.ColumnIndex("window"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_start, t.ColumnIndex("start_tick"));
  std::vector<AdrsWindow> out;
  for (const auto& row : t.rows()) {
    AdrsWindow w;
    w.pair = std::string(t.Str(row, c_pair));
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t n, t.Int(row, c_window));
    if (n < 0 || n > 100000) return t.FieldError(row, c_window, "must be in [0, 100000]");
    w.window = static_cast<int>(n);
    SEEDANCE_ASSIGN_OR_RETURN(w.start_tick, t.Int(row, c_start));
    // 554 ticks of 600 s (92.3 h) per window, in the 3895-tick series.
    if (w.start_tick < 0 || w.start_tick > 3895 - 554) return t.FieldError(row, c_start, "must be in [0, 3341]");
    out.push_back(std::move(w));
  }
  if (out.empty()) return InvalidArgumentError(path + ": no windows");
  return out;
}

const std::vector<std::string>& AdrsPolicyNames() {
  static const std::vector<std::string> kNames = {
      "on-demand", "greedy", "uniform-progress", "adrs-openevolve", "adrs-shinkaevolve", "adrs-gepa",
      "adrs-levi", "seedance", "omniscient"};
  return kNames;
}

Result<std::vector<AdrsRun>> RunAdrsWindows(const std::string& data_dir, const AdrsBenchOptions& o) {
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<AdrsWindow> all, LoadAdrsWindows(data_dir));
  std::vector<AdrsWindow> windows;
  for (auto& w : all) {
    if (o.parity >= 0 && w.window % 2 != o.parity) continue;
    if (o.max_window >= 0 && w.window > o.max_window) continue;
    windows.push_back(std::move(w));
  }
  SEEDANCE_ASSIGN_OR_RETURN(TraceMap traces, LoadPairs(data_dir, windows));
  const auto& names = o.policies.empty() ? AdrsPolicyNames() : o.policies;
  for (const auto& n : names) {
    if (n != "omniscient" && !deadline::MakeOnlinePolicy(n).has_value()) {
      return InvalidArgumentError("bench spot --adrs: unknown policy '" + n + "'");
    }
  }
  std::vector<AdrsRun> runs;
  for (const auto& w : windows) {
    for (double dl : o.deadlines) {
      for (double d : o.changeovers) {
        for (const auto& n : names) {
          runs.push_back({w.pair, w.window, dl, d, n, 0, false});
        }
      }
    }
  }
  std::vector<std::int64_t> start(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    // Windows are looked up by pair and number (runs are grouped by window).
    start[i] = windows[i / (o.deadlines.size() * o.changeovers.size() * names.size())].start_tick;
  }
  ParallelFor(runs.size(), o.threads, [&](std::size_t i) {
    AdrsRun& r = runs[i];
    const auto job = AdrsJob(o.job_hours, r.deadline_hours, r.changeover_hours);
    const SampleOutcome out = RunOne(traces.at(r.pair), start[i], job, r.policy);
    r.cost_usd = out.cost_usd;
    r.met_deadline = out.met_deadline;
  });
  return runs;
}

Result<AdrsLeaderboardScore> RunAdrsLeaderboard(const std::string& data_dir, const std::string& policy, int threads) {
  SEEDANCE_ASSIGN_OR_RETURN(std::vector<AdrsWindow> all, LoadAdrsWindows(data_dir));
  // The evaluator's pick: 30 of the pair's windows, evenly spaced over the file names sorted as
  // strings ("0.json" < "1.json" < "10.json" < "100.json" ...), index round(j * (n - 1) / 29).
  static const char* kPairs[] = {"us-west-2a_k80_8", "us-west-2b_k80_1", "us-west-2b_k80_8",
                                 "us-west-2a_v100_1", "us-west-2a_v100_8", "us-west-2b_v100_1"};
  std::vector<AdrsWindow> picked;
  for (const char* pair : kPairs) {
    std::vector<const AdrsWindow*> of;
    for (const auto& w : all) {
      if (w.pair == pair) of.push_back(&w);
    }
    if (of.size() < 30) return InvalidArgumentError(data_dir + "/adrs_spot/windows.csv: fewer than 30 windows of " + pair);
    std::sort(of.begin(), of.end(), [](const AdrsWindow* a, const AdrsWindow* b) {
      return std::to_string(a->window) + ".json" < std::to_string(b->window) + ".json";
    });
    const auto max_idx = static_cast<std::int64_t>(of.size()) - 1;
    std::int64_t prev = -1;
    for (std::int64_t j = 0; j < 30; ++j) {
      std::int64_t idx = std::llround(static_cast<double>(j * max_idx) / 29.0);
      idx = std::min(std::max(idx, prev + 1), max_idx);
      picked.push_back(*of[static_cast<std::size_t>(idx)]);
      prev = idx;
    }
  }
  SEEDANCE_ASSIGN_OR_RETURN(TraceMap traces, LoadPairs(data_dir, picked));
  if (policy != "omniscient" && !deadline::MakeOnlinePolicy(policy).has_value()) {
    return InvalidArgumentError("bench spot --adrs: unknown policy '" + policy + "'");
  }
  struct Cell {
    const AdrsWindow* w;
    double deadline, changeover;
    double cost = 0;
    bool met = false;
  };
  std::vector<Cell> cells;
  for (double dl : {52.0, 70.0}) {
    for (double d : {0.02, 0.05, 0.1}) {
      for (const auto& w : picked) cells.push_back({&w, dl, d});
    }
  }
  ParallelFor(cells.size(), threads, [&](std::size_t i) {
    Cell& c = cells[i];
    const SampleOutcome out = RunOne(traces.at(c.w->pair), c.w->start_tick, AdrsJob(48, c.deadline, c.changeover), policy);
    c.cost = out.cost_usd;
    c.met = out.met_deadline;
  });
  AdrsLeaderboardScore s;
  s.policy = policy;
  for (const auto& c : cells) {
    s.avg_cost_usd += c.cost;
    s.deadline_misses += c.met ? 0 : 1;
  }
  s.runs = static_cast<int>(cells.size());
  s.avg_cost_usd /= s.runs;
  const double od = 48 * kAdrsOdUsd, spot = 48 * kAdrsSpotUsd;
  s.score = 100.0 * std::clamp((od - s.avg_cost_usd) / (od - spot), 0.0, 1.0);
  return s;
}

const std::vector<AdrsMultiScenario>& AdrsMultiScenarios() {
  static const std::vector<AdrsMultiScenario> kScenarios = {
      {"2_zones_same_region", {"us-east-1a", "us-east-1c"}, 8},
      {"2_regions_east_west", {"us-east-2a", "us-west-2a"}, 8},
      {"3_regions_diverse", {"us-east-1a", "us-east-2b", "us-west-2c"}, 6},
      {"3_zones_same_region", {"us-east-1a", "us-east-1c", "us-east-1d"}, 6},
      {"5_regions_high_diversity", {"us-east-1a", "us-east-1f", "us-west-2a", "us-west-2b", "us-east-2b"}, 4},
      {"all_9_regions",
       {"us-east-2a", "us-west-2c", "us-east-1d", "us-east-2b", "us-west-2a", "us-east-1f", "us-east-1a", "us-west-2b",
        "us-east-1c"},
       2},
  };
  return kScenarios;
}

const std::vector<AdrsMultiPublished>& AdrsMultiPublishedFigures() {
  static const std::vector<AdrsMultiPublished> kFigures = {
      {"baseline", "adrs-multi-baseline", 64.58, 82.18692369213043},
      {"GEPA", "adrs-multi-gepa", 68.74, 78.0266698611119},
      {"ShinkaEvolve", "", 67.74, 79.02020934317206},
      {"OpenEvolve", "", 66.7, 80.06192477141276},
  };
  return kFigures;
}

namespace {

struct MultiWindow {
  std::int64_t start_tick = 0;
  double spot_usd = 0;
};

// (zone, window) -> start tick and the price the simulator bills spot at in that zone.
Result<std::map<std::pair<std::string, int>, MultiWindow>> LoadMultiWindows(const std::string& data_dir) {
  const std::string path = data_dir + "/adrs_spot/multi_region_windows.csv";
  SEEDANCE_ASSIGN_OR_RETURN(CsvTable t, CsvTable::ReadFile(path));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_zone, t.ColumnIndex("zone"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_trace, t.ColumnIndex("trace"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_start, t.ColumnIndex("start_tick"));
  SEEDANCE_ASSIGN_OR_RETURN(std::size_t c_price, t.ColumnIndex("spot_usd"));
  std::map<std::pair<std::string, int>, MultiWindow> out;
  for (const auto& row : t.rows()) {
    SEEDANCE_ASSIGN_OR_RETURN(std::int64_t n, t.Int(row, c_trace));
    if (n < 0 || n > 1000) return t.FieldError(row, c_trace, "must be in [0, 1000]");
    MultiWindow w;
    SEEDANCE_ASSIGN_OR_RETURN(w.start_tick, t.Int(row, c_start));
    // 1,107 ticks of 195 s (60 h) per window, in the 20,158-tick series.
    if (w.start_tick < 0 || w.start_tick > 20158 - 1107) return t.FieldError(row, c_start, "must be in [0, 19051]");
    SEEDANCE_ASSIGN_OR_RETURN(w.spot_usd, t.Double(row, c_price));
    if (!(w.spot_usd > 0 && w.spot_usd < kAdrsOdUsd)) return t.FieldError(row, c_price, "must be in (0, 3.06)");
    out[{std::string(t.Str(row, c_zone)), static_cast<int>(n)}] = w;
  }
  return out;
}

}  // namespace

Result<AdrsMultiScore> RunAdrsMultiRegion(const std::string& data_dir, const std::string& policy) {
  if (deadline::MakeSkySpotMultiPolicy(policy) == nullptr) {
    return InvalidArgumentError("bench spot --adrs: unknown multi-region policy '" + policy + "'");
  }
  SEEDANCE_ASSIGN_OR_RETURN(auto windows, LoadMultiWindows(data_dir));
  std::map<std::string, deadline::SpotTrace> traces;
  const deadline::DeadlineJob job = AdrsJob(48, 52, 0.2);
  AdrsMultiScore s;
  s.policy = policy;
  for (const auto& sc : AdrsMultiScenarios()) {
    std::vector<deadline::SpotTrace> regions;
    for (const auto& z : sc.zones) {
      if (traces.count(z) == 0) {
        SEEDANCE_ASSIGN_OR_RETURN(
            deadline::SpotTrace t,
            deadline::LoadSpotTrace(data_dir + "/spot_traces/aws-02-15-2023_" + z + "_v100_1.json", z));
        traces.emplace(z, std::move(t));
      }
      regions.push_back(traces.at(z));
    }
    double total = 0;
    for (int w = 0; w < sc.windows; ++w) {
      std::vector<double> prices;
      std::int64_t start = -1;
      for (const auto& z : sc.zones) {
        const auto it = windows.find({z, w});
        if (it == windows.end()) {
          return InvalidArgumentError(data_dir + "/adrs_spot/multi_region_windows.csv: no window " +
                                      std::to_string(w) + " of " + z);
        }
        if (start >= 0 && it->second.start_tick != start) {
          return InvalidArgumentError(data_dir + "/adrs_spot/multi_region_windows.csv: window " + std::to_string(w) +
                                      " of " + z + " does not start with the scenario's other zones");
        }
        start = it->second.start_tick;
        prices.push_back(it->second.spot_usd);
      }
      auto p = deadline::MakeSkySpotMultiPolicy(policy);
      const auto out = deadline::SimulateSkySpotMultiJob(regions, prices, start, job, *p);
      total += out.cost_usd;
      s.deadline_misses += out.met_deadline ? 0 : 1;
      ++s.runs;
    }
    s.scenario_avg_usd.push_back(total / sc.windows);
  }
  for (double c : s.scenario_avg_usd) s.avg_cost_usd += c;
  s.avg_cost_usd /= static_cast<double>(s.scenario_avg_usd.size());
  const double od = 48 * kAdrsOdUsd, spot = 48 * kAdrsSpotUsd;
  s.score = 100.0 * std::clamp((od - s.avg_cost_usd) / (od - spot), 0.0, 1.0);
  return s;
}

}  // namespace seedance::sim
