// seedance bench spot: deadline jobs on the real spot availability traces (S3.3), on-demand
// only vs Seedance.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "common.h"
#include "seedance/core/file_util.h"
#include "seedance/sim/spot_bench.h"

namespace seedance::cli {
namespace {

int Run(const sim::SpotBenchOptions& o, const std::string& out) {
  auto rows = sim::RunSpotDeadlineBench(DataDir(), o);
  if (!rows.has_value()) return ReportError(rows.error());
  std::cout << fmt::format("{} h V100 jobs, deadline = {:.0f}% slack, {} start times per trace; on-demand ${:.2f}/h, spot x{:.2f}\n",
                           o.job_hours, 100 * o.slack_ratio, o.jobs_per_trace, o.od_usd_per_hour, o.spot_ratio);
  std::cout << fmt::format("{:<11} {:>8} {:>12} {:>12} {:>8} {:>7} {:>8}\n", "trace", "avail", "on-demand $",
                           "seedance $", "saving", "misses", "interr.");
  nlohmann::json res = nlohmann::json::array();
  for (const auto& r : *rows) {
    std::cout << fmt::format("{:<11} {:>8.2f} {:>12.2f} {:>12.2f} {:>7.1f}% {:>7} {:>8}\n", r.trace, r.availability,
                             r.on_demand_usd, r.seedance_usd, r.savings_pct, r.deadline_misses, r.interruptions);
    res.push_back({{"trace", r.trace}, {"availability", r.availability}, {"jobs", r.jobs},
                   {"on_demand_usd", r.on_demand_usd}, {"seedance_usd", r.seedance_usd},
                   {"savings_pct", r.savings_pct}, {"deadline_misses", r.deadline_misses},
                   {"spot_interruptions", r.interruptions}});
  }
  Status s = EnsureDirectory(out);
  if (s.ok()) s = WriteFileAtomically(out + "/spot.json", nlohmann::json{{"results", res}}.dump(2) + "\n");
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << out << "/spot.json\n";
  return kExitOk;
}

}  // namespace

Action RegisterBenchSpot(CLI::App& bench) {
  auto o = std::make_shared<sim::SpotBenchOptions>();
  auto out = std::make_shared<std::string>("seedance-spot");
  CLI::App* cmd = bench.add_subcommand("spot", "Deadline jobs on the AWS p3 spot traces: on-demand only vs Seedance (S3.3)");
  cmd->add_option("--job-hours", o->job_hours, "compute per job on a V100")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--slack", o->slack_ratio, "deadline slack as a share of the job")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--jobs", o->jobs_per_trace, "start times per trace")->capture_default_str()->check(CLI::Range(1, 1000));
  cmd->add_option("--spot-ratio", o->spot_ratio, "spot / on-demand price")->capture_default_str()->check(CLI::Range(0.01, 1.0));
  cmd->add_option("--out", *out, "output directory")->capture_default_str();
  return [cmd, o, out]() { return cmd->parsed() ? Run(*o, *out) : -1; };
}

}  // namespace seedance::cli
