// seedance: the command-line entry point. Maps Status to exit codes; catches third-party
// exceptions at the edge.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "commands.h"
#include "common.h"

int main(int argc, char** argv) {
  using namespace seedance::cli;  // NOLINT(google-build-using-namespace)
  CLI::App app{
      "Seedance: cuts what GPU fleets cost. Placement, batching, cost attribution and health "
      "audit, compared side by side in a deterministic simulator."};
  app.require_subcommand(1);
  CLI::App* bench = app.add_subcommand("bench", "reproduce published experiments");
  bench->require_subcommand(1);
  std::vector<Action> actions;
  actions.push_back(RegisterBenchPacking(*bench));
  actions.push_back(RegisterCostBenchmark(app));
  actions.push_back(RegisterBenchGavel(*bench));
  actions.push_back(RegisterBenchSpot(*bench));
  actions.push_back(RegisterCatalog(app));
  actions.push_back(RegisterBatching(app));
  actions.push_back(RegisterIngest(app));
  actions.push_back(RegisterAttribute(app));
  actions.push_back(RegisterExport(app));
  actions.push_back(RegisterBreaker(app));
  actions.push_back(RegisterAudit(app));
  actions.push_back(RegisterLint(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  try {
    for (auto& a : actions) {
      int rc = a();
      if (rc >= 0) return rc;
    }
  } catch (const std::exception& e) {
    std::cerr << "seedance: error: " << e.what() << "\n";
    return kExitFailure;
  }
  return kExitUsage;
}
