// seedance lint FILE.yaml...: Kubernetes manifest lint for GPU nodes (S7.6).
#include <iostream>
#include <memory>

#include "commands.h"
#include "common.h"
#include "seedance/audit/lint.h"

namespace seedance::cli {

Action RegisterLint(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand(
      "lint",
      "lint Kubernetes manifests for GPU nodes: containers/init containers without requests, GPU "
      "requests without limits, missing GPU tolerations (exit 0 clean, 1 findings, 2 error)");
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
