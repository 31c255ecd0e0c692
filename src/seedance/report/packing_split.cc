#include "seedance/report/packing_split.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "seedance/cluster/trace_loader.h"
#include "seedance/core/file_util.h"

namespace seedance::report {

using nlohmann::ordered_json;
using sched::PackingSplitPart;

namespace {

const sched::PackingSummary* FindSummary(const PackingBenchResult& b, const std::string& policy) {
  for (const auto& s : b.summary) {
    if (s.policy == policy) return &s;
  }
  return nullptr;
}

std::string SeedRange(const std::vector<std::uint64_t>& seeds) {
  if (seeds.empty()) return "-";
  bool contiguous = true;
  for (std::size_t i = 1; i < seeds.size(); ++i) contiguous &= seeds[i] == seeds[i - 1] + 1;
  if (contiguous) return fmt::format("{}-{}", seeds.front(), seeds.back());
  return fmt::format("{}", fmt::join(seeds, ","));
}

double Mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

int Threads(int asked) {
  return asked > 0 ? asked : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

PackingSeedWins CountSeedWins(const PackingBenchResult& bench, const std::string& a,
                              const std::string& b) {
  PackingSeedWins w;
  for (const auto& ra : bench.runs) {
    if (ra.policy != a) continue;
    for (const auto& rb : bench.runs) {
      if (rb.policy != b || rb.seed != ra.seed) continue;
      ++w.seeds;
      if (ra.unallocated_pct_at_100 < rb.unallocated_pct_at_100) ++w.wins;
    }
  }
  return w;
}

Result<std::vector<PackingSplitRow>> RunPackingSplitBench(const PackingSplitBenchInput& input,
                                                          bool progress) {
  const sched::PackingSplit& split = sched::SeedancePackingSplit();
  PackingBenchInput base;
  base.nodes_path = input.openb_dir + "/openb_node_list_gpu_node.csv";
  base.policies = input.policies;
  base.threads = Threads(input.threads);
  std::vector<PackingSplitRow> rows;
  for (const std::string& variant : split.variants) {
    PackingBenchInput in = base;
    in.pods_path = input.openb_dir + "/" + sched::PackingVariantFile(variant);
    SEEDANCE_ASSIGN_OR_RETURN(PackingBenchData data, LoadPackingBenchData(in));
    for (PackingSplitPart part : {PackingSplitPart::kTuning, PackingSplitPart::kHeldOut}) {
      if (std::find(input.parts.begin(), input.parts.end(), part) == input.parts.end()) continue;
      in.seeds = split.SeedsOf(variant, part);
      if (in.seeds.empty()) continue;
      if (progress) {
        std::cerr << fmt::format("{} ({}, seeds {})\n", variant,
                                 sched::PackingSplitPartName(part), SeedRange(in.seeds));
      }
      PackingSplitRow row;
      row.variant = variant;
      row.part = part;
      SEEDANCE_ASSIGN_OR_RETURN(row.bench, RunPackingBench(in, data, progress));
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::string FormatPackingSplitTable(const std::vector<PackingSplitRow>& rows) {
  if (rows.empty()) return "no (variant, split) cells\n";
  const std::vector<std::string>& policies = rows.front().bench.input.policies;
  const bool compare = std::find(policies.begin(), policies.end(), "fgd") != policies.end() &&
                       std::find(policies.begin(), policies.end(), "seedance") != policies.end();
  std::string out =
      "Unallocated GPU % at 100% arrived, mean over the row's seeds. split: tuning = the cells "
      "Seedance's constants were chosen on (in-sample); held-out = never used to choose them.\n";
  out += fmt::format("{:<11} {:<9} {:<6}", "variant", "split", "seeds");
  for (const auto& p : policies) out += fmt::format(" {:>10}", p);
  if (compare) out += fmt::format(" {:>14} {:>9}", "seedance-fgd", "wins");
  out += "\n";
  for (const auto& row : rows) {
    out += fmt::format("{:<11} {:<9} {:<6}", row.variant, sched::PackingSplitPartName(row.part),
                       SeedRange(row.bench.input.seeds));
    for (const auto& p : policies) {
      const sched::PackingSummary* s = FindSummary(row.bench, p);
      out += s == nullptr ? fmt::format(" {:>10}", "-")
                          : fmt::format(" {:>10.2f}", s->mean_unallocated_pct_at_100);
    }
    if (compare) {
      const double d = FindSummary(row.bench, "seedance")->mean_unallocated_pct_at_100 -
                       FindSummary(row.bench, "fgd")->mean_unallocated_pct_at_100;
      const PackingSeedWins w = CountSeedWins(row.bench, "seedance", "fgd");
      out += fmt::format(" {:>+14.2f} {:>9}", d, fmt::format("{}/{}", w.wins, w.seeds));
    }
    out += "\n";
  }
  return out;
}

std::string PackingSplitJson(const std::vector<PackingSplitRow>& rows) {
  const sched::PackingSplit& split = sched::SeedancePackingSplit();
  ordered_json j;
  j["split"] = {{"tuning_variants", split.tuning_variants},
                {"tuning_seeds", split.tuning_seeds},
                {"variants", split.variants},
                {"seeds", split.seeds}};
  ordered_json out = ordered_json::array();
  for (const auto& row : rows) {
    ordered_json policies = ordered_json::array();
    for (const auto& s : row.bench.summary) {
      policies.push_back({{"policy", s.policy},
                          {"mean_unallocated_gpu_pct_at_100",
                           std::round(s.mean_unallocated_pct_at_100 * 1e4) / 1e4},
                          {"runs", s.runs}});
    }
    ordered_json e = {{"variant", row.variant},
                      {"split", sched::PackingSplitPartName(row.part)},
                      {"seeds", row.bench.input.seeds},
                      {"policies", policies}};
    if (FindSummary(row.bench, "seedance") != nullptr && FindSummary(row.bench, "fgd") != nullptr) {
      const PackingSeedWins w = CountSeedWins(row.bench, "seedance", "fgd");
      e["seedance_below_fgd_seeds"] = w.wins;
    }
    out.push_back(e);
  }
  j["rows"] = out;
  return j.dump(2) + "\n";
}

Status WritePackingSplitOutputs(const std::vector<PackingSplitRow>& rows, const std::string& dir) {
  for (const auto& row : rows) {
    SEEDANCE_RETURN_IF_ERROR(WritePackingOutputs(
        row.bench, fmt::format("{}/{}-{}", dir, row.variant, sched::PackingSplitPartName(row.part))));
  }
  return WriteFileAtomically(dir + "/summary.json", PackingSplitJson(rows));
}

Result<PackingGridResult> RunPackingTuningGrid(const PackingGridInput& input, bool progress) {
  if (input.reserve_factors.empty() || input.temperatures_gpu.empty()) {
    return InvalidArgumentError("the tuning grid needs at least one reserve factor and temperature");
  }
  const sched::PackingSplit& split = sched::SeedancePackingSplit();
  PackingGridResult r;
  r.variants = split.tuning_variants;
  r.seeds = split.tuning_seeds;
  std::vector<sched::PlacementPolicyFactory> factories;
  for (double rf : input.reserve_factors) {
    for (double t : input.temperatures_gpu) {
      PackingGridPoint p;
      p.options.reserve_factor = rf;
      p.options.temperature_milli = t * 1000.0;
      SEEDANCE_RETURN_IF_ERROR(p.options.Validate());
      factories.push_back([o = p.options](const sched::PolicyContext& c)
                              -> Result<std::unique_ptr<sched::PlacementPolicy>> {
        return sched::MakeSeedancePlacementPolicy(c, o);
      });
      r.points.push_back(p);
    }
  }
  factories.push_back([](const sched::PolicyContext& c) {
    return sched::MakePlacementPolicy("fgd", c);
  });
  PackingBenchInput in;
  in.nodes_path = input.openb_dir + "/openb_node_list_gpu_node.csv";
  std::vector<double> fgd_all;
  std::vector<std::vector<double>> point_all(r.points.size());
  for (const std::string& variant : r.variants) {
    in.pods_path = input.openb_dir + "/" + sched::PackingVariantFile(variant);
    SEEDANCE_ASSIGN_OR_RETURN(PackingBenchData data, LoadPackingBenchData(in));
    // The tuning cells of this variant: every seed must be a tuning one.
    const std::vector<std::uint64_t> seeds = split.SeedsOf(variant, PackingSplitPart::kTuning);
    SEEDANCE_ASSIGN_OR_RETURN(std::vector<sched::PackingRunResult> runs,
                              sched::RunPackingBenchmark(data.nodes, data.pods, factories, seeds,
                                                         /*tune=*/1.3, Threads(input.threads)));
    // Results are policy-major: factory i's seeds are runs[i*n .. i*n+n).
    const std::size_t n = seeds.size();
    auto mean_of = [&](std::size_t i, std::vector<double>& all) {
      std::vector<double> v;
      for (std::size_t k = 0; k < n; ++k) v.push_back(runs[i * n + k].unallocated_pct_at_100);
      all.insert(all.end(), v.begin(), v.end());
      return Mean(v);
    };
    for (std::size_t i = 0; i < r.points.size(); ++i) {
      r.points[i].per_variant.push_back(mean_of(i, point_all[i]));
    }
    r.fgd_per_variant.push_back(mean_of(r.points.size(), fgd_all));
    if (progress) std::cerr << fmt::format("grid: {} done ({} runs)\n", variant, runs.size());
  }
  r.fgd_mean = Mean(fgd_all);
  for (std::size_t i = 0; i < r.points.size(); ++i) {
    r.points[i].mean = Mean(point_all[i]);
    if (r.points[i].mean < r.points[r.best].mean) r.best = i;
  }
  return r;
}

std::string FormatPackingGrid(const PackingGridResult& r) {
  std::string out = fmt::format(
      "Seedance packer tuning grid: mean unallocated GPU % at 100% arrived over the tuning cells "
      "only ({} x seeds {})\n",
      fmt::join(r.variants, ", "), SeedRange(r.seeds));
  std::vector<double> temps;
  for (const auto& p : r.points) {
    if (std::find(temps.begin(), temps.end(), p.options.temperature_milli) == temps.end()) {
      temps.push_back(p.options.temperature_milli);
    }
  }
  out += fmt::format("{:<15}", "reserve \\ T");
  for (double t : temps) out += fmt::format(" {:>7.1f}", t / 1000.0);
  out += "\n";
  for (std::size_t i = 0; i < r.points.size(); i += temps.size()) {
    out += fmt::format("{:<15.2f}", r.points[i].options.reserve_factor);
    for (std::size_t k = 0; k < temps.size() && i + k < r.points.size(); ++k) {
      out += fmt::format(" {:>6.3f}{}", r.points[i + k].mean, i + k == r.best ? "*" : " ");
    }
    out += "\n";
  }
  const PackingGridPoint& b = r.points[r.best];
  const sched::SeedancePackingOptions shipped;
  out += fmt::format(
      "best (*): reserve_factor {:.2f}, temperature {:.1f} GPU: {:.3f} (fgd {:.3f} on the same "
      "cells); shipped: reserve_factor {:.2f}, temperature {:.1f} GPU\n",
      b.options.reserve_factor, b.options.temperature_milli / 1000.0, b.mean, r.fgd_mean,
      shipped.reserve_factor, shipped.temperature_milli / 1000.0);
  out += fmt::format("{:<11} {:>8} {:>8}\n", "variant", "best", "fgd");
  for (std::size_t v = 0; v < r.variants.size(); ++v) {
    out += fmt::format("{:<11} {:>8.3f} {:>8.3f}\n", r.variants[v], b.per_variant[v],
                       r.fgd_per_variant[v]);
  }
  return out;
}

}  // namespace seedance::report
