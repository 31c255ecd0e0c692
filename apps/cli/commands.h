#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace seedance::cli {

// Adds the command `name` under `parent` in the house voice of the help texts: `summary` is one
// sentence-case line of at most 80 characters (shown in the parent's list); `details` (may be empty)
// and one example invocation close the command's own --help. docs/CLI.md is generated from these
// texts (scripts/gen-cli-doc.sh) and a test keeps it current and checks the rules.
inline CLI::App* AddCommand(CLI::App& parent, const std::string& name, const std::string& summary,
                            const std::string& details, const std::string& example) {
  CLI::App* cmd = parent.add_subcommand(name, summary);
  std::string footer = details;
  if (!footer.empty()) footer += "\n\n";
  footer += "Example:\n  " + example;
  cmd->footer(footer);
  return cmd;
}

// Each command registers its subcommand and returns the action to run when it was chosen.
using Action = std::function<int()>;

Action RegisterBenchPacking(CLI::App& bench);
Action RegisterCostBenchmark(CLI::App& app);
Action RegisterBenchGavel(CLI::App& bench);
Action RegisterBenchSpot(CLI::App& bench);
Action RegisterBenchKueue(CLI::App& bench);
Action RegisterCatalog(CLI::App& app);
Action RegisterBatching(CLI::App& app);
Action RegisterPlan(CLI::App& app);
Action RegisterIngest(CLI::App& app);
Action RegisterGenerate(CLI::App& app);
Action RegisterAttribute(CLI::App& app);
Action RegisterExport(CLI::App& app);
// `export workload` (export_workload.cc), registered by RegisterExport under `export`.
Action RegisterExportWorkload(CLI::App& exp);
Action RegisterBreaker(CLI::App& app);
Action RegisterAdvise(CLI::App& app);
Action RegisterAudit(CLI::App& app);
Action RegisterLint(CLI::App& app);
Action RegisterServer(CLI::App& app);
Action RegisterSweep(CLI::App& app);
Action RegisterSlurm(CLI::App& app);

}  // namespace seedance::cli
