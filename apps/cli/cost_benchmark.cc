// seedance cost-benchmark: the product's main command. Replays a workload on a cloud fleet under
// the baseline and the Seedance policies (the time simulator, with the LP lower bound), adds the
// packing comparison on the openb trace as a section, prints the tables and writes results.json
// and cost_optimization_report.html.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "common.h"
#include "seedance/core/file_util.h"
#include "seedance/report/batching_report.h"
#include "seedance/report/cost_benchmark.h"
#include "seedance/report/scenario_report.h"
#include "seedance/sim/config.h"
#include "seedance/sim/scenarios.h"

namespace seedance::cli {
namespace {

struct CostBenchmarkOptions {
  std::string workload = "llm-finetune";
  std::string duration;
  std::string config;
  std::uint64_t seed = 42;
  bool packing = true;
  std::string nodes;
  std::string pods;
  std::string prices;
  std::string seeds = "42-51";
  std::string out = "seedance-report";
  int threads = 0;
};

// "600", "90s", "30m", "6h", "7d" -> seconds.
Result<double> ParseDuration(const std::string& text) {
  if (text.empty()) return 0.0;
  std::size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  std::string unit = text.substr(pos);
  double mult = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : -1;
  if (pos == 0 || mult < 0 || !(v > 0) || !std::isfinite(v)) {
    return InvalidArgumentError("--duration: '" + text + "' is not a positive duration (SECONDS, or with s/m/h/d: 6h, 7d)");
  }
  return v * mult;
}

std::string Between(const std::string& s, const std::string& a, const std::string& b) {
  auto i = s.find(a);
  auto j = s.rfind(b);
  if (i == std::string::npos || j == std::string::npos || j < i) return "";
  return s.substr(i + a.size(), j - i - a.size());
}

// `--workload llm-inference`: the batching engine on the bundled Azure conversation trace.
int RunInference(const CostBenchmarkOptions& o) {
  auto r = report::RunBundledBatching(&std::cerr);
  if (!r.has_value()) return ReportError(r.error());
  std::cout << report::FormatBatchingTable(r->results);
  nlohmann::json results = nlohmann::json::parse(report::BatchingJson(r->results));
  results["generated_by"] = "seedance cost-benchmark --workload llm-inference";
  std::string page = report::BatchingReportHtml(r->results);
  Status s = EnsureDirectory(o.out);
  if (s.ok()) s = WriteFileAtomically(o.out + "/results.json", results.dump(2) + "\n");
  if (s.ok()) s = WriteFileAtomically(o.out + "/cost_optimization_report.html", page);
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << o.out << "/cost_optimization_report.html and " << o.out << "/results.json\n";
  return kExitOk;
}

int RunCostBenchmarkCommand(const CostBenchmarkOptions& o) {
  if (o.workload == "llm-inference") return RunInference(o);
  sim::ScenarioSpec spec;
  spec.workload = o.workload;
  spec.seed = o.seed;
  spec.data_dir = DataDir();
  auto duration = ParseDuration(o.duration);
  if (!duration.has_value()) return ReportError(duration.error());
  spec.duration_s = *duration;
  if (!o.config.empty()) {
    auto cfg = sim::LoadSimConfig(o.config);
    if (!cfg.has_value()) return ReportError(cfg.error());
    spec.config = *cfg;
  }
  bool named = false;
  for (const auto& w : sim::ScenarioWorkloadNames()) named = named || w == o.workload;
  if (!named && o.workload.find('/') == std::string::npos && o.workload.find(".csv") == std::string::npos) {
    std::string list;
    for (const auto& w : sim::ScenarioWorkloadNames()) list += (list.empty() ? "" : ", ") + w;
    return ReportError(InvalidArgumentError("--workload: unknown workload '" + o.workload + "' (accepted: " + list +
                                            ", llm-inference, or a jobs CSV file)"));
  }
  // Validate the packing inputs before the long run.
  report::CostBenchmarkInput packing_in;
  packing_in.nodes_path = o.nodes;
  packing_in.pods_path = o.pods;
  packing_in.prices_path = o.prices;
  packing_in.threads = o.threads;
  auto seeds = ParseSeedList(o.seeds, "--seeds");
  if (!seeds.has_value()) return ReportError(seeds.error());
  packing_in.seeds = *seeds;

  auto scenario = sim::RunCostScenario(spec, [](const std::string& line) { std::cerr << "seedance: " << line << "\n"; });
  if (!scenario.has_value()) return ReportError(scenario.error());
  nlohmann::json results = report::ScenarioJson(*scenario);
  results["generated_by"] = "seedance cost-benchmark";
  results["seed"] = o.seed;
  std::string packing_html;
  std::string packing_css;
  std::string packing_table;
  if (o.packing) {
    auto packing = report::RunCostBenchmark(packing_in, /*progress=*/true);
    if (!packing.has_value()) return ReportError(packing.error());
    packing_table = report::FormatCostTable(*packing);
    results["packing_comparison"] = nlohmann::json::parse(report::CostResultsJson(*packing));
    std::string page = report::CostReportHtml(*packing);
    packing_css = Between(page, "<style>", "</style>");
    packing_html = Between(page, "<main>", "</main>");
  }
  std::cout << report::ScenarioTable(*scenario);
  if (!packing_table.empty()) std::cout << "\nPacking comparison (openb, FGD protocol):\n" << packing_table;

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<title>Seedance cost optimization report</title>\n<style>" + packing_css +
                     "</style>\n</head>\n<body>\n<main>\n<h1>Seedance cost optimization report</h1>\n" +
                     report::ScenarioHtmlSection(*scenario) + packing_html + "</main>\n</body>\n</html>\n";
  Status s = EnsureDirectory(o.out);
  if (s.ok()) s = WriteFileAtomically(o.out + "/results.json", results.dump(2) + "\n");
  if (s.ok()) s = WriteFileAtomically(o.out + "/cost_optimization_report.html", html);
  if (!s.ok()) return ReportError(s);
  std::cout << "wrote " << o.out << "/cost_optimization_report.html and " << o.out << "/results.json\n";
  return kExitOk;
}

}  // namespace

Action RegisterCostBenchmark(CLI::App& app) {
  auto opts = std::make_shared<CostBenchmarkOptions>();
  CLI::App* cmd = app.add_subcommand(
      "cost-benchmark",
      "Replay a workload on a cloud fleet (on-demand quota + spot with real availability series) "
      "under FIFO, Gavel-LAS and Seedance, with the LP cost lower bound; plus the packing "
      "comparison on openb. Prints tables; writes cost_optimization_report.html + results.json.");
  cmd->footer(
      "Workloads: llm-finetune (bundled, docs/WORKLOADS.md), gavel (Gavel's generator, 2 jobs/h), "
      "philly (Gavel's Philly-derived jobs), openb (the openb trace with its creation/deletion "
      "times), or a jobs CSV (docs/WORKLOADS.md). --duration bounds the arrival window (default "
      "7d). --config reads seedance-config.yaml (scheduler.cost_aware, autoscaling, checkpoint). "
      "Bad input exits 2 naming file:line and field; nothing is written then.");
  cmd->add_option("--workload", opts->workload, "llm-finetune | gavel | philly | openb | llm-inference | FILE.csv")
      ->capture_default_str();
  cmd->add_option("--duration", opts->duration, "arrival window: SECONDS, or 6h, 7d (default: 7d)");
  cmd->add_option("--config", opts->config, "seedance-config.yaml");
  cmd->add_option("--seed", opts->seed, "seed of the simulation")->capture_default_str();
  cmd->add_option("--out", opts->out, "output directory (created if missing)")->capture_default_str();
  cmd->add_flag("--packing,!--no-packing", opts->packing, "add the packing comparison section (default: on)");
  cmd->add_option("--nodes", opts->nodes, "packing section: node list CSV (default: openb's)");
  cmd->add_option("--pods", opts->pods, "packing section: pod list CSV (default: openb default trace)");
  cmd->add_option("--prices", opts->prices, "packing section: GPU price CSV (default: data/prices/gpu_prices.csv)");
  cmd->add_option("--seeds", opts->seeds, "packing section seeds: 42-51, 42,45 or 42")->capture_default_str();
  cmd->add_option("--threads", opts->threads, "packing section worker threads (default: all cores)");
  return [cmd, opts]() { return cmd->parsed() ? RunCostBenchmarkCommand(*opts) : -1; };
}

}  // namespace seedance::cli
