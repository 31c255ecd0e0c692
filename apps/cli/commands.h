#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace seedance::cli {

// Each command registers its subcommand and returns the action to run when it was chosen.
using Action = std::function<int()>;

Action RegisterBenchPacking(CLI::App& bench);
Action RegisterCostBenchmark(CLI::App& app);
Action RegisterBenchGavel(CLI::App& bench);
Action RegisterBenchSpot(CLI::App& bench);
Action RegisterCatalog(CLI::App& app);
Action RegisterBatching(CLI::App& app);
Action RegisterIngest(CLI::App& app);
Action RegisterAttribute(CLI::App& app);
Action RegisterExport(CLI::App& app);
Action RegisterBreaker(CLI::App& app);
Action RegisterAudit(CLI::App& app);
Action RegisterLint(CLI::App& app);

}  // namespace seedance::cli
