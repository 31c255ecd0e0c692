#include "commands.h"
namespace seedance::cli {
Action RegisterCostBenchmark(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("cost-benchmark", "compare policies and their cost");
  return [cmd]() { return cmd->parsed() ? 0 : -1; };
}
}  // namespace seedance::cli
