#include "seedance/report/packing_bench.h"

#include <cmath>
#include <filesystem>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "seedance/cluster/trace_loader.h"
#include "seedance/core/file_util.h"
#include "seedance/sched/placement_policy.h"
#include "seedance/sched/seedance_packing.h"

namespace seedance::report {

using nlohmann::ordered_json;

namespace {

// Returns "tuning" or "held-out" when every seed of `policy` in `r` falls in that part of
// SeedancePackingSplit(), "mixed" otherwise.
std::string SplitLabel(const PackingBenchResult& r, const std::string& policy) {
  const sched::PackingSplit& split = sched::SeedancePackingSplit();
  int tuning = 0, held_out = 0;
  for (const auto& run : r.runs) {
    if (run.policy != policy) continue;
    (split.PartOf(r.workload, run.seed) == sched::PackingSplitPart::kTuning ? tuning : held_out)++;
  }
  if (tuning > 0 && held_out > 0) return "mixed";
  return std::string(sched::PackingSplitPartName(tuning > 0 ? sched::PackingSplitPart::kTuning
                                                            : sched::PackingSplitPart::kHeldOut));
}

}  // namespace

Result<std::vector<std::string>> ParsePolicyList(const std::string& text) {
  const auto& all = sched::PlacementPolicyNames();
  if (text == "all") return all;
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string name = text.substr(start, comma - start);
    start = comma + 1;
    if (name.empty()) continue;
    sched::PolicyContext probe;
    auto p = sched::MakePlacementPolicy(name, probe);
    if (!p.has_value()) return InvalidArgumentError("--policies: " + p.error().message());
    out.push_back(name);
  }
  if (out.empty()) return InvalidArgumentError("--policies: no policy given");
  return out;
}

Result<PackingBenchResult> RunPackingBench(const PackingBenchInput& input, bool progress) {
  SEEDANCE_ASSIGN_OR_RETURN(PackingBenchData data, LoadPackingBenchData(input));
  return RunPackingBench(input, std::move(data), progress);
}

Result<PackingBenchData> LoadPackingBenchData(const PackingBenchInput& input) {
  PackingBenchData data;
  SEEDANCE_ASSIGN_OR_RETURN(data.nodes, cluster::LoadNodes(input.nodes_path));
  SEEDANCE_ASSIGN_OR_RETURN(data.pods, cluster::LoadPods(input.pods_path));
  std::int64_t gpus = 0;
  for (const auto& n : data.nodes) gpus += n.gpu_count;
  if (gpus == 0) return InvalidArgumentError(input.nodes_path + ": the node list has no GPUs");
  return data;
}

Result<PackingBenchResult> RunPackingBench(const PackingBenchInput& input, PackingBenchData data,
                                           bool progress) {
  PackingBenchResult r;
  r.input = input;
  r.nodes = std::move(data.nodes);
  const std::vector<cluster::PodSpec>& pods = data.pods;
  r.trace_pods = pods.size();
  for (const auto& n : r.nodes) r.total_gpus += n.gpu_count;
  r.workload = std::filesystem::path(input.pods_path).stem().string();
  int threads = input.threads > 0 ? input.threads
                                  : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (const std::string& policy : input.policies) {
    SEEDANCE_ASSIGN_OR_RETURN(
        std::vector<sched::PackingRunResult> runs,
        sched::RunPackingBenchmark(r.nodes, pods, {policy}, input.seeds, input.tune, threads));
    if (progress) {
      double wall = 0, sum = 0;
      for (const auto& run : runs) {
        wall += run.wall_seconds;
        sum += run.unallocated_pct_at_100;
      }
      std::cerr << fmt::format("  {:<10} {} seeds  mean unallocated {:.2f}%  ({:.2f} s)\n",
                               policy, runs.size(), sum / static_cast<double>(runs.size()), wall);
    }
    for (auto& run : runs) r.runs.push_back(std::move(run));
  }
  r.summary = sched::SummarizePacking(r.runs);
  auto published = sched::LoadPublishedPacking(DataDir() + "/fgd_expected/analysis_allo_discrete.csv");
  for (const auto& s : r.summary) {
    std::optional<sched::PublishedPacking> p;
    if (published.has_value() && input.tune == 1.3) {
      auto it = published->find({r.workload, s.policy});
      if (it != published->end()) p = it->second;
    }
    r.published.push_back(p);
  }
  return r;
}

std::string FormatPackingTable(const PackingBenchResult& r) {
  std::string out = fmt::format(
      "FGD packing experiment: {} ({} pods) on {} nodes / {} GPUs, tune {}, {} seed(s)\n",
      r.workload, r.trace_pods, r.nodes.size(), r.total_gpus, r.input.tune, r.input.seeds.size());
  out += fmt::format("{:<11} {:>9} {:>6} {:>9} {:>16} {:>8} {:>7} {:>8} {:>8} {:>9}\n", "policy",
                     "unalloc%", "sd", "median", "published", "faithful", "frag%", "entropy",
                     "wall s", "split");
  for (std::size_t i = 0; i < r.summary.size(); ++i) {
    const auto& s = r.summary[i];
    std::string pub = "-", ok = "-";
    if (r.published[i]) {
      const auto& p = *r.published[i];
      pub = fmt::format("{:.2f} ± {:.2f}", p.mean, p.sd);
      ok = std::abs(s.mean_unallocated_pct_at_100 - p.mean) <= sched::FaithfulTolerance(p)
               ? "yes"
               : "NO";
    }
    out += fmt::format(
        "{:<11} {:>9.2f} {:>6.2f} {:>9.2f} {:>16} {:>8} {:>7.2f} {:>8.3f} {:>8.2f} {:>9}\n",
        s.policy, s.mean_unallocated_pct_at_100, s.sd_unallocated_pct_at_100,
        s.median_unallocated_pct_at_100, pub, ok, s.mean_frag_pct_at_100, s.mean_entropy_at_100,
        s.wall_seconds, SplitLabel(r, s.policy));
  }
  // Rows that mix tuning and held-out seeds are repeated per part.
  const sched::PackingSplit& split = sched::SeedancePackingSplit();
  std::string by_part;
  for (const auto& s : r.summary) {
    if (SplitLabel(r, s.policy) != "mixed") continue;
    for (auto part : {sched::PackingSplitPart::kTuning, sched::PackingSplitPart::kHeldOut}) {
      std::vector<sched::PackingRunResult> mine;
      std::vector<std::uint64_t> seeds;
      for (const auto& run : r.runs) {
        if (run.policy == s.policy && split.PartOf(r.workload, run.seed) == part) {
          mine.push_back(run);
          seeds.push_back(run.seed);
        }
      }
      const sched::PackingSummary p = sched::SummarizePacking(mine).front();
      by_part += fmt::format("{:<11} {:>9} {:>9.2f} {:>6.2f}  {}\n", s.policy,
                             sched::PackingSplitPartName(part), p.mean_unallocated_pct_at_100,
                             p.sd_unallocated_pct_at_100, fmt::join(seeds, ","));
    }
  }
  if (!by_part.empty()) {
    out += fmt::format("by split (tuning = seeds {} of {}; everything else held out):\n",
                       fmt::join(split.tuning_seeds, ","), fmt::join(split.tuning_variants, ", "));
    out += fmt::format("{:<11} {:>9} {:>9} {:>6}  {}\n", "policy", "split", "unalloc%", "sd",
                       "seeds");
    out += by_part;
  }
  return out;
}

namespace {

ordered_json NumberOrNull(double v) { return std::isnan(v) ? ordered_json(nullptr) : ordered_json(v); }

double Round4(double v) { return std::round(v * 1e4) / 1e4; }

}  // namespace

std::string PackingSummaryJson(const PackingBenchResult& r) {
  ordered_json j;
  j["config"] = {{"nodes", std::filesystem::path(r.input.nodes_path).filename().string()},
                 {"pods", std::filesystem::path(r.input.pods_path).filename().string()},
                 {"workload", r.workload},
                 {"tune", r.input.tune},
                 {"seeds", r.input.seeds},
                 {"total_gpus", r.total_gpus},
                 {"trace_pods", r.trace_pods}};
  ordered_json summary = ordered_json::array();
  for (std::size_t i = 0; i < r.summary.size(); ++i) {
    const auto& s = r.summary[i];
    ordered_json e;
    e["policy"] = s.policy;
    e["mean_unallocated_gpu_pct_at_100"] = Round4(s.mean_unallocated_pct_at_100);
    e["sd_unallocated_gpu_pct_at_100"] = Round4(s.sd_unallocated_pct_at_100);
    e["median_unallocated_gpu_pct_at_100"] = Round4(s.median_unallocated_pct_at_100);
    e["mean_frag_gpu_pct_at_100"] = Round4(s.mean_frag_pct_at_100);
    e["mean_allocation_entropy_bits_at_100"] = Round4(s.mean_entropy_at_100);
    e["unallocated_gpus_at_100"] =
        Round4(s.mean_unallocated_pct_at_100 / 100.0 * static_cast<double>(r.total_gpus));
    if (r.published[i]) {
      const auto& p = *r.published[i];
      e["published_mean_unallocated_gpu_pct_at_100"] = Round4(p.mean);
      e["published_sd_unallocated_gpu_pct_at_100"] = Round4(p.sd);
      e["within_published_tolerance"] =
          std::abs(s.mean_unallocated_pct_at_100 - p.mean) <= sched::FaithfulTolerance(p);
    }
    e["split"] = SplitLabel(r, s.policy);
    e["runs"] = s.runs;
    e["wall_seconds"] = s.wall_seconds;
    summary.push_back(e);
  }
  j["summary"] = summary;
  ordered_json runs = ordered_json::array();
  for (const auto& run : r.runs) {
    runs.push_back({{"policy", run.policy},
                    {"seed", run.seed},
                    {"split", sched::PackingSplitPartName(
                                  sched::SeedancePackingSplit().PartOf(r.workload, run.seed))},
                    {"unallocated_gpu_pct_at_100", NumberOrNull(Round4(run.unallocated_pct_at_100))},
                    {"frag_gpu_pct_at_100", NumberOrNull(Round4(run.frag_pct_at_100))},
                    {"allocation_entropy_bits_at_100", Round4(run.entropy_at_100)},
                    {"pods_arrived", run.pods_arrived},
                    {"pods_placed", run.pods_placed},
                    {"pods_failed", run.pods_failed},
                    {"wall_seconds", run.wall_seconds}});
  }
  j["runs"] = runs;
  return j.dump(2) + "\n";
}

std::string PackingCurveCsv(const sched::PackingRunResult& run) {
  std::string out = "arrived_pct,allocated_pct,unallocated_pct,frag_pct\n";
  for (std::size_t k = 0; k < run.alloc_pct.size(); ++k) {
    if (std::isnan(run.alloc_pct[k])) continue;
    double f = k < run.frag_pct.size() ? run.frag_pct[k] : std::nan("");
    out += fmt::format("{},{:.2f},{:.2f},{}\n", k, run.alloc_pct[k], 100.0 - run.alloc_pct[k],
                       std::isnan(f) ? "" : fmt::format("{:.2f}", f));
  }
  return out;
}

Status WritePackingOutputs(const PackingBenchResult& r, const std::string& dir) {
  SEEDANCE_RETURN_IF_ERROR(EnsureDirectory(dir + "/curves"));
  for (const auto& run : r.runs) {
    SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(
        fmt::format("{}/curves/{}-seed{}.csv", dir, run.policy, run.seed), PackingCurveCsv(run)));
  }
  return WriteFileAtomically(dir + "/summary.json", PackingSummaryJson(r));
}

}  // namespace seedance::report
