#include "seedance/report/cost_benchmark.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "seedance/cluster/gpu_model.h"
#include "seedance/core/file_util.h"
#include "seedance/cost/money.h"
#include "seedance/report/internal/cost_format.h"
#include "seedance/report/policy_style.h"
#include "seedance/sched/placement_policy.h"

namespace seedance::report {

using nlohmann::ordered_json;

namespace internal {

std::vector<const PolicyCost*> SavingBaselines(const CostBenchmarkResult& r) {
  std::vector<const PolicyCost*> out;
  for (const char* name : {"bestfit", "fgd"}) {
    if (const PolicyCost* c = FindPolicyCost(r, name)) out.push_back(c);
  }
  return out;
}

std::string FormatSeedList(const std::vector<std::uint64_t>& seeds) {
  std::string out;
  for (std::size_t i = 0; i < seeds.size();) {
    std::size_t j = i;
    while (j + 1 < seeds.size() && seeds[j + 1] == seeds[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j > i ? fmt::format("{}-{}", seeds[i], seeds[j]) : fmt::format("{}", seeds[i]);
    i = j + 1;
  }
  return out;
}

std::string FormatPublished(const CostBenchmarkResult& r, std::size_t i) {
  const auto& p = r.packing.published[i];
  return p ? fmt::format("{:.2f} ± {:.2f}", p->mean, p->sd) : "-";
}

std::string ProxyModelList(const cost::FleetCost& fleet) {
  std::string out;
  for (const cost::FleetModelCost& m : fleet.models) {
    if (m.price.basis != cost::PriceBasis::kProxy) continue;
    out += (out.empty() ? "" : ", ") + std::string(cluster::GpuModelName(m.price.model));
  }
  return out;
}

std::vector<std::string> PriceAssumptions(const cost::FleetCost& fleet) {
  std::vector<std::string> out;
  for (const cost::FleetModelCost& m : fleet.models) {
    if (m.price.basis != cost::PriceBasis::kProxy) continue;
    out.push_back(fmt::format("{} at {}/GPU-hour: {}", cluster::GpuModelName(m.price.model),
                              cost::FormatUsd(m.price.usd_per_gpu_hour, 2),
                              m.price.note.empty() ? m.price.source : m.price.note));
  }
  return out;
}

std::string StrandedCostMethod() {
  return fmt::format(
      "Stranded $/month = unallocated GPUs at 100% arrived workload x fleet-average list price "
      "per GPU-hour (weighted by each model's GPU count) x {} hours; the packing run does not "
      "report which models the unallocated capacity sits on",
      cost::kHoursPerMonth);
}

}  // namespace internal

namespace {

constexpr double kMetricPointArrivedPct = 100;

// Returns `v` rounded half away from zero to `decimals` places (for readable JSON numbers).
double Round(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

// A workload's bundled inputs, relative to DataDir().
struct WorkloadFiles {
  std::string_view name;
  std::string_view nodes;
  std::string_view pods;
};

constexpr WorkloadFiles kWorkloads[] = {
    {"openb", "openb/openb_node_list_gpu_node.csv", "openb/openb_pod_list_default.csv"},
};

// Returns the files of workload `name`, or kInvalidArgument listing the accepted names.
Result<WorkloadFiles> FindWorkload(const std::string& name) {
  for (const WorkloadFiles& w : kWorkloads) {
    if (w.name == name) return w;
  }
  std::string list;
  for (const WorkloadFiles& w : kWorkloads)
    list += (list.empty() ? "" : ", ") + std::string(w.name);
  return InvalidArgumentError("--workload: unknown workload '" + name + "' (accepted: " + list +
                              ")");
}

// Fills in the defaults of `in` and validates what needs no file.
Result<CostBenchmarkInput> ResolveInput(CostBenchmarkInput in) {
  SEEDANCE_ASSIGN_OR_RETURN(const WorkloadFiles workload, FindWorkload(in.workload));
  if (in.nodes_path.empty()) in.nodes_path = DataDir() + "/" + std::string(workload.nodes);
  if (in.pods_path.empty()) in.pods_path = DataDir() + "/" + std::string(workload.pods);
  if (in.prices_path.empty()) in.prices_path = cost::BundledPriceTablePath();
  if (in.policies.empty()) in.policies = sched::PlacementPolicyNames();
  std::set<std::string> seen;
  for (const std::string& policy : in.policies) {
    const sched::PolicyContext probe;
    auto p = sched::MakePlacementPolicy(policy, probe);
    if (!p.has_value()) return InvalidArgumentError("policies: " + p.error().message());
    if (!seen.insert(policy).second) {
      return InvalidArgumentError("policies: '" + policy + "' is listed twice");
    }
  }
  if (in.seeds.empty()) return InvalidArgumentError("--seeds: no seeds");
  if (in.threads < 0) {
    return InvalidArgumentError(fmt::format("--threads must be >= 0, got {}", in.threads));
  }
  return in;
}

// Returns what policy `s` strands on `fleet`. REQUIRES: s.mean_unallocated_pct_at_100 is finite.
PolicyCost PricePolicy(const sched::PackingSummary& s, const cost::FleetCost& fleet) {
  PolicyCost c;
  c.policy = s.policy;
  c.mean_unallocated_pct = s.mean_unallocated_pct_at_100;
  const double fraction = std::clamp(c.mean_unallocated_pct / 100.0, 0.0, 1.0);
  c.unallocated_gpus = fraction * static_cast<double>(fleet.gpus);
  c.stranded_gpu_hours_per_month = c.unallocated_gpus * static_cast<double>(cost::kHoursPerMonth);
  c.stranded_usd_per_month = cost::StrandedUsdPerMonth(fleet, fraction);
  return c;
}

// Returns the index of the least stranded cost; ties go to the smaller policy name.
std::size_t BestPolicy(const std::vector<PolicyCost>& costs) {
  const auto it =
      std::min_element(costs.begin(), costs.end(), [](const PolicyCost& a, const PolicyCost& b) {
        return std::tie(a.stranded_usd_per_month, a.policy) <
               std::tie(b.stranded_usd_per_month, b.policy);
      });
  return static_cast<std::size_t>(it - costs.begin());
}

}  // namespace

const std::vector<std::string>& CostBenchmarkWorkloads() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const WorkloadFiles& w : kWorkloads) names.emplace_back(w.name);
    return names;
  }();
  return kNames;
}

const PolicyCost* FindPolicyCost(const CostBenchmarkResult& r, std::string_view policy) {
  for (const PolicyCost& c : r.costs) {
    if (c.policy == policy) return &c;
  }
  return nullptr;
}

std::optional<CostHeadline> MakeHeadline(const CostBenchmarkResult& r) {
  if (r.costs.size() < 2) return std::nullopt;
  const PolicyCost* subject = FindPolicyCost(r, "seedance");
  if (subject == nullptr) subject = &r.costs[r.best];
  const PolicyCost* reference = nullptr;
  for (const char* name : {"fgd", "bestfit"}) {
    const PolicyCost* c = FindPolicyCost(r, name);
    if (c != nullptr && c != subject) {
      reference = c;
      break;
    }
  }
  if (reference == nullptr) {  // the worst other policy
    for (const PolicyCost& c : r.costs) {
      if (&c != subject &&
          (reference == nullptr || c.stranded_usd_per_month > reference->stranded_usd_per_month)) {
        reference = &c;
      }
    }
  }
  CostHeadline h;
  h.subject = subject->policy;
  h.reference = reference->policy;
  h.fewer_gpus = reference->unallocated_gpus - subject->unallocated_gpus;
  h.saving_per_month = SavingPerMonth(*subject, *reference);
  const bool fewer = h.saving_per_month.raw() >= 0;
  const Money amount = fewer ? h.saving_per_month : MicroUsd(0) - h.saving_per_month;
  h.text =
      fmt::format("{} strands {:.1f} {} GPUs than {} = {}/month{}", PolicyDisplayName(h.subject),
                  std::abs(h.fewer_gpus), fewer ? "fewer" : "more", PolicyDisplayName(h.reference),
                  cost::FormatUsd(amount, 0), fewer ? "" : " more");
  return h;
}

Result<CostBenchmarkResult> RunCostBenchmark(const CostBenchmarkInput& input, bool progress) {
  CostBenchmarkResult r;
  SEEDANCE_ASSIGN_OR_RETURN(r.input, ResolveInput(input));
  SEEDANCE_ASSIGN_OR_RETURN(r.prices, cost::PriceTable::LoadFile(r.input.prices_path));
  const PackingBenchInput packing_input{.nodes_path = r.input.nodes_path,
                                        .pods_path = r.input.pods_path,
                                        .policies = r.input.policies,
                                        .seeds = r.input.seeds,
                                        .threads = r.input.threads};
  SEEDANCE_ASSIGN_OR_RETURN(PackingBenchData data, LoadPackingBenchData(packing_input));
  SEEDANCE_ASSIGN_OR_RETURN(r.fleet, cost::PriceFleet(data.nodes, r.prices));
  // Without a GPU request the FGD inflation step cannot reach its target (it would clone pods
  // until its safety cap), and there is nothing to measure anyway.
  if (std::none_of(data.pods.begin(), data.pods.end(),
                   [](const cluster::PodSpec& pod) { return pod.total_gpu_milli() > 0; })) {
    return InvalidArgumentError(r.input.pods_path + ": the trace has no GPU request");
  }
  if (progress) {
    std::cerr << fmt::format(
        "cost-benchmark: {} pods on {} nodes / {} GPUs ({}/hour at list price); {} policies x {} "
        "seeds\n",
        data.pods.size(), r.fleet.nodes, r.fleet.gpus, cost::FormatUsd(r.fleet.usd_per_hour, 2),
        r.input.policies.size(), r.input.seeds.size());
  }
  SEEDANCE_ASSIGN_OR_RETURN(r.packing, RunPackingBench(packing_input, std::move(data), progress));
  for (const sched::PackingSummary& s : r.packing.summary) {
    if (!std::isfinite(s.mean_unallocated_pct_at_100)) {
      return InvalidArgumentError(fmt::format(
          "{}: policy {} never reached {}% arrived workload, so it has no unallocated-GPU figure",
          r.input.pods_path, s.policy, kMetricPointArrivedPct));
    }
    r.costs.push_back(PricePolicy(s, r.fleet));
  }
  if (r.costs.empty()) return InternalError("cost-benchmark: no policy ran");
  r.best = BestPolicy(r.costs);
  return r;
}

std::string FormatCostTable(const CostBenchmarkResult& r) {
  const PackingBenchResult& p = r.packing;
  std::string out =
      fmt::format("Cost benchmark: {} ({}, {} pods) on {} nodes / {} GPUs, seeds {}\n",
                  r.input.workload, p.workload, p.trace_pods, r.fleet.nodes, r.fleet.gpus,
                  internal::FormatSeedList(r.input.seeds));
  out += fmt::format("Fleet at list price: {}/hour = {}/month, {} per GPU-hour on average",
                     cost::FormatUsd(r.fleet.usd_per_hour, 2),
                     cost::FormatUsd(r.fleet.usd_per_month(), 0),
                     cost::FormatUsd(r.fleet.average_usd_per_gpu_hour(), 3));
  if (const std::string proxies = internal::ProxyModelList(r.fleet); !proxies.empty()) {
    out += fmt::format("; {:.1f}% of it rests on assumed prices ({})", 100 * r.fleet.proxy_share(),
                       proxies);
  }
  out += "\nUnallocated GPUs at 100% arrived workload, as a month of idle capacity:\n";
  const std::vector<const PolicyCost*> baselines = internal::SavingBaselines(r);
  out += fmt::format("{:<11} {:>8} {:>13} {:>12} {:>17} {:>14}", "policy", "unalloc%", "published",
                     "unalloc GPUs", "stranded GPU-h/mo", "stranded $/mo");
  for (const PolicyCost* b : baselines) out += fmt::format(" {:>14}", "vs " + b->policy + "/mo");
  out += "\n";
  for (std::size_t i = 0; i < r.costs.size(); ++i) {
    const PolicyCost& c = r.costs[i];
    out +=
        fmt::format("{:<11} {:>8.2f} {:>13} {:>12.1f} {:>17.0f} {:>14}", c.policy,
                    c.mean_unallocated_pct, internal::FormatPublished(r, i), c.unallocated_gpus,
                    c.stranded_gpu_hours_per_month, cost::FormatUsd(c.stranded_usd_per_month, 0));
    for (const PolicyCost* b : baselines) {
      out += fmt::format(" {:>14}", b == &c ? "-" : cost::FormatUsd(SavingPerMonth(c, *b), 0));
    }
    out += "\n";
  }
  out +=
      "(published: the FGD artifact's mean ± sd over its 10 seeds; vs X: monthly saving over X)\n";
  if (auto h = MakeHeadline(r)) out += h->text + ".\n";
  return out;
}

std::string CostResultsJson(const CostBenchmarkResult& r) {
  const PackingBenchResult& p = r.packing;
  ordered_json j;
  j["generated_by"] = "seedance cost-benchmark";
  j["workload"] = {
      {"name", r.input.workload},
      {"trace", p.workload},
      {"nodes_file", std::filesystem::path(r.input.nodes_path).filename().string()},
      {"pods_file", std::filesystem::path(r.input.pods_path).filename().string()},
      {"trace_pods", p.trace_pods},
      {"protocol",
       "FGD (ATC'23) packing: trace shuffled per seed, inflated to tune x GPU capacity, placed "
       "pod by pod without departures; metric at 100% arrived workload"},
      {"tune", p.input.tune},
      {"seeds", r.input.seeds}};
  ordered_json by_model = ordered_json::object();
  ordered_json prices = ordered_json::array();
  for (const cost::FleetModelCost& m : r.fleet.models) {
    const std::string name(cluster::GpuModelName(m.price.model));
    by_model[name] = m.gpus;
    prices.push_back({{"gpu_model", name},
                      {"gpus", m.gpus},
                      {"nodes", m.nodes},
                      {"usd_per_gpu_hour", ToUsd(m.price.usd_per_gpu_hour)},
                      {"usd_per_month", ToUsd(m.usd_per_hour * cost::kHoursPerMonth)},
                      {"basis", cost::PriceBasisName(m.price.basis)},
                      {"source", m.price.source},
                      {"note", m.price.note}});
  }
  j["fleet"] = {{"nodes", r.fleet.nodes},
                {"gpus", r.fleet.gpus},
                {"gpus_by_model", by_model},
                {"price_table", std::filesystem::path(r.prices.name()).filename().string()},
                {"prices", prices},
                {"price_assumptions", internal::PriceAssumptions(r.fleet)},
                {"share_of_cost_on_assumed_prices", Round(r.fleet.proxy_share(), 4)},
                {"usd_per_hour", ToUsd(r.fleet.usd_per_hour)},
                {"usd_per_month", ToUsd(r.fleet.usd_per_month())},
                {"average_usd_per_gpu_hour", ToUsd(r.fleet.average_usd_per_gpu_hour())},
                {"hours_per_month", cost::kHoursPerMonth},
                {"stranded_cost_method", internal::StrandedCostMethod()}};
  ordered_json packing = ordered_json::array();
  for (std::size_t i = 0; i < r.costs.size(); ++i) {
    const PolicyCost& c = r.costs[i];
    const sched::PackingSummary& s = p.summary[i];
    ordered_json e;
    e["policy"] = c.policy;
    e["mean_unallocated_gpu_pct_at_100"] = Round(c.mean_unallocated_pct, 4);
    e["sd_unallocated_gpu_pct_at_100"] = Round(s.sd_unallocated_pct_at_100, 4);
    if (const auto& pub = p.published[i]) {
      e["published_mean_unallocated_gpu_pct_at_100"] = Round(pub->mean, 4);
      e["published_sd_unallocated_gpu_pct_at_100"] = Round(pub->sd, 4);
    }
    e["unallocated_gpus"] = Round(c.unallocated_gpus, 2);
    e["stranded_gpu_hours_per_month"] = Round(c.stranded_gpu_hours_per_month, 1);
    e["stranded_usd_per_month"] = ToUsd(c.stranded_usd_per_month);
    ordered_json savings = ordered_json::object();
    for (const PolicyCost& other : r.costs) {
      if (&other == &c) continue;
      savings[other.policy] = {{"gpus", Round(other.unallocated_gpus - c.unallocated_gpus, 2)},
                               {"usd_per_month", ToUsd(SavingPerMonth(c, other))}};
    }
    e["savings_per_month_vs"] = savings;
    e["runs"] = s.runs;
    e["wall_seconds"] = s.wall_seconds;
    packing.push_back(e);
  }
  j["packing"] = packing;
  j["best_policy"] = r.costs[r.best].policy;
  if (auto h = MakeHeadline(r)) j["headline"] = h->text;
  return j.dump(2) + "\n";
}

Status WriteCostBenchmarkOutputs(const CostBenchmarkResult& r, const std::string& dir) {
  const std::string json = CostResultsJson(r);
  const std::string html = CostReportHtml(r);
  SEEDANCE_RETURN_IF_ERROR(EnsureDirectory(dir));
  SEEDANCE_RETURN_IF_ERROR(WriteFileAtomically(dir + "/results.json", json));
  return WriteFileAtomically(dir + "/cost_optimization_report.html", html);
}

}  // namespace seedance::report
