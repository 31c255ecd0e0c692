// seedance: the command-line entry point. Maps Status to exit codes; catches third-party
// exceptions at the edge.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "common.h"
#include "seedance/config/gpu_catalog_file.h"
#include "version.h"

namespace seedance::cli {
namespace {

std::string VersionLine() {
  return std::string("seedance ") + kVersion + " (" + kGitCommit + ", " + kBuildType + ")";
}

// Edit distance (insert, delete, substitute, swap of neighbours) between two short names.
std::size_t Distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The nearest of `names` to `typed`, or "" when none is close (at most a third of the name
// differs, or `typed` is a prefix of exactly one name).
std::string Nearest(std::string_view typed, const std::vector<std::string>& names) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, typed.size() / 3) + 1;
  std::vector<std::string> prefixed;
  for (const auto& n : names) {
    if (n.size() > typed.size() && n.compare(0, typed.size(), typed) == 0) prefixed.push_back(n);
    const std::size_t d = Distance(typed, n);
    if (d < best_d) {
      best_d = d;
      best = n;
    }
  }
  if (best.empty() && prefixed.size() == 1) best = prefixed.front();
  return best;
}

// The deepest subcommand the parser entered ("seedance bench spot" for `bench spot --x`).
CLI::App* DeepestParsed(CLI::App* app) {
  while (true) {
    auto subs = app->get_subcommands();
    if (subs.empty()) return app;
    app = subs.front();
  }
}

std::string CommandPath(const CLI::App* app) {
  std::string path;
  for (const CLI::App* a = app; a != nullptr; a = a->get_parent()) {
    path = path.empty() ? a->get_name() : a->get_name() + " " + path;
  }
  return path;
}

// After a parse error: names an unknown subcommand or option the user typed, with the nearest
// valid name. Returns false when the error is of another kind (CLI11's message is then printed).
bool ExplainUnknown(CLI::App& app, int argc, char** argv) {
  CLI::App* cur = DeepestParsed(&app);
  std::vector<std::string> commands;
  for (const CLI::App* s : cur->get_subcommands([](CLI::App*) { return true; })) commands.push_back(s->get_name());
  std::vector<std::string> options;
  for (const CLI::Option* o : cur->get_options()) {
    for (const auto& l : o->get_lnames()) options.push_back("--" + l);
  }
  const auto unknown_command = [&](const std::string& arg) {
    std::cerr << "seedance: error: unknown command '" << arg << "' for '" << CommandPath(cur) << "'";
    const std::string near = Nearest(arg, commands);
    if (!near.empty()) std::cerr << "; did you mean '" << near << "'?";
    std::cerr << "\nRun '" << CommandPath(cur) << " --help' for the list of commands.\n";
  };
  // A mistyped command word right after its parent (`seedance atribute --db x`): name it, not the
  // options meant for the command it was meant to be.
  if (!commands.empty()) {
    int at = 1;
    if (cur != &app) {
      while (at < argc && argv[at] != cur->get_name()) ++at;
      ++at;
    }
    if (at < argc && argv[at][0] != '-' && std::find(commands.begin(), commands.end(), argv[at]) == commands.end()) {
      unknown_command(argv[at]);
      return true;
    }
  }
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0 && arg.size() > 2) {
      arg = arg.substr(0, arg.find('='));
      if (std::find(options.begin(), options.end(), arg) != options.end()) continue;
      bool known_elsewhere = false;  // an option of a parent command
      for (const CLI::App* a = cur->get_parent(); a != nullptr; a = a->get_parent()) {
        for (const CLI::Option* o : a->get_options()) known_elsewhere = known_elsewhere || o->check_lname(arg.substr(2));
      }
      if (known_elsewhere) continue;
      std::cerr << "seedance: error: unknown option '" << arg << "' for '" << CommandPath(cur) << "'";
      const std::string near = Nearest(arg, options);
      if (!near.empty()) std::cerr << "; did you mean '" << near << "'?";
      std::cerr << "\nRun '" << CommandPath(cur) << " --help' for its options.\n";
      return true;
    }
  }
  if (commands.empty()) return false;
  // The first bare word after the deepest command's own name is the mistyped subcommand.
  const std::string& own = cur->get_name();
  bool seen_own = cur == &app;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (!seen_own) {
      seen_own = arg == own;
      continue;
    }
    if (arg.empty() || arg[0] == '-') continue;
    if (std::find(commands.begin(), commands.end(), arg) != commands.end()) return false;
    unknown_command(arg);
    return true;
  }
  return false;
}

}  // namespace
}  // namespace seedance::cli

int main(int argc, char** argv) {
  using namespace seedance::cli;  // NOLINT(google-build-using-namespace)
  CLI::App app{
      "Seedance: cuts what GPU fleets cost. Placement, batching, cost attribution and health "
      "audit, compared side by side in a deterministic simulator."};
  app.name("seedance");
  app.set_version_flag("--version", VersionLine(), "Print the version, the git commit and the build type");
  app.require_subcommand(1);
  std::vector<std::string> gpu_catalogs;
  app.add_option("--gpu-catalog", gpu_catalogs,
                 "GPU catalog file(s) adding GPU types (B200, MI300X, ...) with their facts and prices, after the "
                 "bundled data/gpus/catalog.yaml (before the command: seedance --gpu-catalog F plan ...)");
  CLI::App* bench = app.add_subcommand("bench", "Reproduce published experiments");
  bench->require_subcommand(1);
  std::vector<Action> actions;
  actions.push_back(RegisterBenchPacking(*bench));
  actions.push_back(RegisterCostBenchmark(app));
  actions.push_back(RegisterBenchGavel(*bench));
  actions.push_back(RegisterBenchSpot(*bench));
  actions.push_back(RegisterBenchKueue(*bench));
  actions.push_back(RegisterCatalog(app));
  actions.push_back(RegisterBatching(app));
  actions.push_back(RegisterPlan(app));
  actions.push_back(RegisterIngest(app));
  actions.push_back(RegisterGenerate(app));
  actions.push_back(RegisterAttribute(app));
  actions.push_back(RegisterExport(app));
  actions.push_back(RegisterBreaker(app));
  actions.push_back(RegisterAdvise(app));
  actions.push_back(RegisterAudit(app));
  actions.push_back(RegisterLint(app));
  actions.push_back(RegisterServer(app));
  actions.push_back(RegisterSweep(app));
  actions.push_back(RegisterSlurm(app));
  // Footers after the subcommands: CLI11 copies a parent's footer into subcommands created later.
  app.footer("Run 'seedance COMMAND --help' for a command's options.\n\n"
             "Example:\n  seedance cost-benchmark --workload llm-finetune");
  bench->footer("Example:\n  seedance bench gavel --rates 2.0");
  if (argc == 1) {  // bare `seedance`: what it can do and how to learn more, like kubectl
    std::cout << app.help();
    return kExitOk;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() != 0 && ExplainUnknown(app, argc, argv)) return kExitUsage;
    int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  // GPU types beyond the built-in catalog: the bundled file, then the user's (docs/FLEET_FILE.md).
  gpu_catalogs.insert(gpu_catalogs.begin(), seedance::config::BundledGpuCatalogPath());
  for (const std::string& file : gpu_catalogs) {
    if (auto loaded = seedance::config::LoadGpuCatalogFile(file); !loaded.ok()) return ReportError(loaded);
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
