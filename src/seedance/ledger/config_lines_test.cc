// Issue 38, "YAML errors point at the right line": the attribution config (YAML, checked as the JSON
// it spells) names the line of the key at fault, a key with no value on its own line (yaml-cpp
// marks the missing value at the next token, lines below). It said "cfg.yaml: key
// 'namespaces.team-a.': expected an object", no line at all.
#include <gtest/gtest.h>

#include <string>

#include "seedance/ledger/config.h"

namespace seedance::ledger {
namespace {

std::string ErrorOf(const std::string& yaml) {
  auto c = LedgerConfig::Parse(yaml, "cfg.yaml");
  return c.has_value() ? "(parsed)" : c.error().message();
}

TEST(LedgerConfigLinesTest, YamlErrorsNameTheLineOfTheKey) {
  EXPECT_EQ(ErrorOf("namespaces:\n  team-a:\n\n\n\nstep_seconds: 300\n"),
            "cfg.yaml:2: key 'namespaces.team-a': expected an object");
  EXPECT_EQ(ErrorOf("step_seconds: 300\nidle_shr: none\n"), "cfg.yaml:2: key 'idle_shr': unknown key");
  EXPECT_EQ(ErrorOf("namespaces:\n  team-a: {tenant: a}\n  team-b:\n    tenant: b\n    tier: gold\n"),
            "cfg.yaml:5: key 'namespaces.team-b.tier': unknown key");
  // A model name with dots and spaces is one key.
  EXPECT_EQ(ErrorOf("prices_usd_per_gpu_hour:\n  H100: 2.5\n  NVIDIA H100 80GB HBM3.1: -1\n"),
            "cfg.yaml:3: key 'prices_usd_per_gpu_hour.NVIDIA H100 80GB HBM3.1': expected a non-negative number of USD");
  EXPECT_EQ(ErrorOf("breaker:\n  jobs:\n    llm-ft: lots\n"),
            "cfg.yaml:3: key 'breaker.jobs.llm-ft': expected a non-negative number of USD");
  // JSON keeps its messages (no line to name), and a good file parses.
  EXPECT_EQ(LedgerConfig::Parse(R"({"idle_shr": "none"})", "cfg.json").error().message(),
            "cfg.json: key 'idle_shr': unknown key");
  EXPECT_EQ(ErrorOf("namespaces:\n  team-a: {tenant: a}\nstep_seconds: 300\n"), "(parsed)");
}

}  // namespace
}  // namespace seedance::ledger
