#pragma once

// `seedance bench spot --adrs`: the sampled windows of the "Can't Be Late" authors' simulator (the
// ADRS copy; data/adrs_spot/SOURCE.md): the 2-week 10/26/2022 series, eight (zone, type) pairs,
// windows numbered per pair as the authors' files (0.json, 1.json, ...), a 48 h job, deadlines 52 /
// 60 / 70 / 92 h, changeovers 0.02 / 0.2 / 0.4 h, under the authors' simulator rules (whole-tick
// billing, their prices: $3.06 on-demand and $0.9731 spot for every pair).
// Even-numbered windows are the tuning half (Seedance's policy was tuned on them only, and the
// fixture of the authors' own costs covers them); odd-numbered windows are the evaluation half.
// Also the ADRS leaderboard's own setting (its evaluator's 1,080 runs) for the evolved programs.

#include <cstdint>
#include <string>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/sim/deadline/sky_spot_policies.h"
#include "seedance/sim/deadline/spot_job.h"

namespace seedance::sim {

struct AdrsWindow {
  std::string pair;  // e.g. "us-west-2a_v100_1"
  int window = 0;    // the authors' file number
  std::int64_t start_tick = 0;
};

// data_dir/adrs_spot/windows.csv (pair,window,start_tick). Errors name the file, line and field.
Result<std::vector<AdrsWindow>> LoadAdrsWindows(const std::string& data_dir);

// The authors' prices (sky_spot utils.py): on-demand $3.06 for every 2-week trace, spot
// $3.06 / k with k = 3.06 / 0.9731.
inline constexpr double kAdrsOdUsd = deadline::kSkySpotOdUsd;
inline constexpr double kAdrsSpotUsd = 0.9731;

// The job of one setting, under the authors' rules (whole-tick billing, k = 3.06 / 0.9731).
deadline::DeadlineJob AdrsJob(double job_hours, double deadline_hours, double changeover_hours);

struct AdrsRun {
  std::string pair;
  int window = 0;
  double deadline_hours = 0, changeover_hours = 0;
  std::string policy;
  double cost_usd = 0;
  bool met_deadline = false;
};

struct AdrsBenchOptions {
  std::vector<double> deadlines = {52, 60, 70, 92};
  std::vector<double> changeovers = {0.02, 0.2, 0.4};
  double job_hours = 48;
  int parity = 1;           // 1: odd windows (evaluation half), 0: even (tuning half), -1: all
  int max_window = -1;      // only windows numbered <= this (-1: all)
  std::vector<std::string> policies;  // empty: AdrsPolicyNames()
  int threads = 2;
};

// on-demand, greedy, uniform-progress, the evolved programs, seedance, omniscient.
const std::vector<std::string>& AdrsPolicyNames();

// One run per (window, setting, policy) of `o`, in that order.
Result<std::vector<AdrsRun>> RunAdrsWindows(const std::string& data_dir, const AdrsBenchOptions& o);

// One policy on the ADRS leaderboard's own setting (problems/cant_be_late/resources/evaluator/
// evaluator_real30.py): six pairs, 30 windows each picked evenly from the file names in their
// lexicographic order, deadlines 52 and 70 h, changeovers 0.02 / 0.05 / 0.1 h (1,080 runs). The
// score is (OD - mean) / (OD - all-spot) x 100 with OD = 48 h at $3.06 and all-spot 48 h at $0.9731.
struct AdrsLeaderboardScore {
  std::string policy;
  int runs = 0;
  double avg_cost_usd = 0;
  double score = 0;
  int deadline_misses = 0;
};
Result<AdrsLeaderboardScore> RunAdrsLeaderboard(const std::string& data_dir, const std::string& policy, int threads);

// The ADRS leaderboard's multi-region problem (problems/cant_be_late_multi/evaluator.py): six
// scenarios of 2-9 zones of the 2023 p3.2xlarge series, 8 / 8 / 6 / 6 / 4 / 2 aligned windows each
// (data/adrs_spot/multi_region_windows.csv), a 48 h job, deadline 52 h, d 0.2 h, under its
// simulator's rules (deadline/sky_spot_multi.h). The score is (OD - mean) / (OD - all spot) x 100
// with the mean over scenarios of each scenario's mean cost, OD = 48 h x $3.06 and all spot = 48 h
// x $0.9731.
struct AdrsMultiScenario {
  std::string name;
  std::vector<std::string> zones;  // in the evaluator's order (the job starts pointed at the first)
  int windows = 0;                 // windows 0 .. windows-1
};
const std::vector<AdrsMultiScenario>& AdrsMultiScenarios();

struct AdrsMultiScore {
  std::string policy;
  std::vector<double> scenario_avg_usd;  // in AdrsMultiScenarios() order
  int runs = 0;
  int deadline_misses = 0;
  double avg_cost_usd = 0;
  double score = 0;
};
// `policy`: one of deadline::SkySpotMultiPolicyNames(). Errors name the windows file and field.
Result<AdrsMultiScore> RunAdrsMultiRegion(const std::string& data_dir, const std::string& policy);

// The published multi-region figures (results/cant_be_late_multi/<framework>/results.json): score,
// mean cost; the baseline's and GEPA's (the best) programs are reimplemented.
struct AdrsMultiPublished {
  std::string framework;
  std::string policy;  // our reimplementation, empty when not reimplemented
  double score = 0;
  double avg_cost_usd = 0;
};
const std::vector<AdrsMultiPublished>& AdrsMultiPublishedFigures();

}  // namespace seedance::sim
