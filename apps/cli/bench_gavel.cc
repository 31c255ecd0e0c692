// seedance bench gavel: reproduces Gavel's (OSDI'20) average-JCT table on 36 V100 + 36 P100 +
// 36 K80 and puts Seedance beside it.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "common.h"
#include "seedance/core/file_util.h"
#include "seedance/sim/gavel_protocol.h"

namespace seedance::cli {
namespace {

struct BenchGavelOptions {
  std::string trace = "continuous-single";
  std::string rates = "0.4,2.0,3.6";
  std::string policies = "fifo,gavel-las,seedance";
  std::string seeds = "0";
  std::string out = "seedance-gavel";
};

// Published seed-0 averages (ANCHORS.md, Gavel tables), hours.
double Published(const std::string& trace, const std::string& policy, double rate) {
  static const std::map<std::tuple<std::string, std::string, double>, double> table = {
      {{"continuous-single", "fifo", 0.4}, 17.58},      {{"continuous-single", "fifo", 2.0}, 18.32},
      {{"continuous-single", "fifo", 3.6}, 24.25},      {{"continuous-single", "gavel-las", 0.4}, 17.58},
      {{"continuous-single", "gavel-las", 2.0}, 16.95}, {{"continuous-single", "gavel-las", 3.6}, 16.38},
      {{"continuous-single", "las", 0.4}, 23.26},       {{"continuous-single", "las", 2.0}, 23.47},
      {{"continuous-single", "las", 3.6}, 23.57},       {{"continuous-single", "gavel-fifo", 0.4}, 15.31},
      {{"continuous-single", "gavel-fifo", 2.0}, 15.45}, {{"continuous-single", "gavel-fifo", 3.6}, 16.39},
      {{"continuous-multiple", "fifo", 2.0}, 37.56},    {{"continuous-multiple", "gavel-las", 2.0}, 21.90},
      {{"continuous-multiple", "las", 2.0}, 28.91},     {{"continuous-multiple", "gavel-fifo", 2.0}, 27.68},
  };
  auto it = table.find({trace, policy, rate});
  return it == table.end() ? -1 : it->second;
}

int Run(const BenchGavelOptions& o) {
  auto trace = sim::ParseGavelTrace(o.trace);
  if (!trace.has_value()) return ReportError(trace.error());
  auto rates = ParseNumberList(o.rates, "--rates", /*allow_zero=*/false, "jobs/hour");
  if (!rates.has_value()) return ReportError(rates.error());
  auto seeds = ParseSeedList(o.seeds, "--seeds");
  if (!seeds.has_value()) return ReportError(seeds.error());
  auto policies = SplitCommaList(o.policies);
  for (const auto& p : policies) {
    bool known = false;
    for (const auto& n : sim::GavelPolicyNames()) known = known || n == p;
    if (!known) return ReportError(InvalidArgumentError("--policies: unknown policy '" + p + "' (accepted: fifo, gavel-fifo, las, gavel-las, seedance)"));
  }
  auto thr = sim::GavelThroughputs::LoadFile(BundledData("gavel/gavel_isolated_throughputs.csv"));
  if (!thr.has_value()) return ReportError(thr.error());
  nlohmann::json results = nlohmann::json::array();
  std::cout << fmt::format("Gavel protocol: {} , 36 V100 + 36 P100 + 36 K80, jobs 4000-4999, 360 s rounds\n", o.trace);
  std::cout << fmt::format("{:<12} {:>6} {:>5} {:>12} {:>11} {:>10} {:>12} {:>8}\n", "policy", "rate", "seed", "avg JCT h",
                           "published", "diff", "cost $", "wall s");
  for (const auto& p : policies) {
    for (double rate : *rates) {
      for (auto seed : *seeds) {
        std::cerr << fmt::format("seedance: gavel {} rate {} seed {}\n", p, rate, seed);
        auto run = sim::RunGavelCell(p, *trace, rate, seed, *thr, BundledData("gavel_peer/jobs_seed0_rate2.csv"));
        if (!run.has_value()) return ReportError(run.error());
        double pub = seed == 0 ? Published(o.trace, p, rate) : -1;
        nlohmann::json row = {{"policy", p},
                              {"rate", rate},
                              {"seed", seed},
                              {"avg_jct_hours", run->avg_jct_hours},
                              {"total_cost_usd", run->total_cost_usd},
                              {"gpu_utilization", run->utilization},
                              {"wall_seconds", run->wall_seconds}};
        if (pub > 0) row["published_avg_jct_hours"] = pub;
        results.push_back(row);
        std::cout << fmt::format("{:<12} {:>6.2f} {:>5} {:>12.2f} {:>11} {:>10} {:>12.0f} {:>8.2f}\n", p, rate, seed,
                                 run->avg_jct_hours, pub > 0 ? fmt::format("{:.2f}", pub) : "-",
                                 pub > 0 ? fmt::format("{:+.1f}%", 100 * (run->avg_jct_hours / pub - 1)) : "-",
                                 run->total_cost_usd, run->wall_seconds);
      }
    }
  }
  nlohmann::json prices = nlohmann::json::object();  // the prices the simulated cluster bills at
  const sim::FleetSpec fleet = sim::GavelFleet(36, 36, 36);
  for (const sim::PoolSpec& pool : fleet.pools) {
    prices[fleet.gpu_types[static_cast<std::size_t>(pool.type)]] = pool.usd_per_gpu_hour;
  }
  nlohmann::json doc = {{"generated_by", "seedance bench gavel"},
                        {"trace", o.trace},
                        {"cluster", "36 V100 + 36 P100 + 36 K80"},
                        {"measured_jobs", "4000-4999"},
                        {"prices_usd_per_gpu_hour", prices},
                        {"results", results}};
  Status s = EnsureDirectory(o.out);
  if (s.ok()) s = WriteFileAtomically(o.out + "/gavel.json", doc.dump(2) + "\n");
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << o.out << "/gavel.json\n";
  return kExitOk;
}

}  // namespace

Action RegisterBenchGavel(CLI::App& bench) {
  auto o = std::make_shared<BenchGavelOptions>();
  CLI::App* cmd = AddCommand(bench, "gavel", "Reproduce Gavel's (OSDI'20) average JCT: FIFO, Gavel-LAS, Seedance",
                             "Seed 0 of continuous-single replays Gavel's own job stream (data/gavel_peer), rescaled to "
                             "each rate; other seeds and continuous-multiple use our port of Gavel's generator. "
                             "Published seed-0 values are printed beside ours.",
                             "seedance bench gavel --rates 0.4,2.0 --policies fifo,gavel-las");
  cmd->add_option("--trace", o->trace, "continuous-single | continuous-multiple")->capture_default_str();
  cmd->add_option("--rates", o->rates, "input job rates, jobs/hour")->capture_default_str();
  cmd->add_option("--policies", o->policies, "fifo, gavel-fifo, las, gavel-las, seedance")->capture_default_str();
  cmd->add_option("--seeds", o->seeds, "seeds: 0-2, 0,1 or 0")->capture_default_str();
  cmd->add_option("--out", o->out, "output directory")->capture_default_str();
  return [cmd, o]() { return cmd->parsed() ? Run(*o) : -1; };
}

}  // namespace seedance::cli
