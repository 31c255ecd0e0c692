// seedance lint FILE.yaml...: Kubernetes manifest lint for GPU nodes (S7.6).
#include <iostream>
#include <memory>

#include "commands.h"
#include "common.h"
#include "seedance/audit/lint.h"

namespace seedance::cli {

Action RegisterLint(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = AddCommand(
      app, "lint", "Lint Kubernetes manifests for GPU workloads",
      "Finds containers and init containers without requests, GPU requests without limits and "
      "missing GPU tolerations. Exit 0: clean; 1: findings; 2: error.",
      "seedance lint deploy/*.yaml");
  cmd->add_option("FILE", *files, "manifest YAML files")->required();
  return [cmd, files]() {
    if (!cmd->parsed()) return -1;
    std::size_t findings = 0;
    for (const std::string& f : *files) {
      auto r = audit::LintManifestFile(f);
      if (!r.has_value()) return ReportError(r.error());
      for (const auto& x : *r) std::cout << audit::FormatFinding(x) << "\n";
      findings += r->size();
    }
    std::cerr << findings << " finding(s)\n";
    return findings == 0 ? kExitOk : kExitFailure;
  };
}

}  // namespace seedance::cli
