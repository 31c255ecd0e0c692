#include "seedance/tenancy/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <iostream>
#include <string>
#include <vector>

#include "seedance/core/rng.h"

namespace seedance::tenancy {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Parses `text` as a whole seedance-config.yaml named t.yaml and reads its `tenancy:` section.
Result<TenancyConfig> Parse(const std::string& text) {
  YAML::Node root = YAML::Load(text);
  YAML::Node section;
  if (root.IsMap()) section = root["tenancy"];
  return ParseTenancyConfig("t.yaml", section);
}

// Expects the default of every setting but the tenants.
void ExpectDefaultSettings(const TenancyConfig& c) {
  TenancyConfig d;
  EXPECT_DOUBLE_EQ(c.cycle_s, d.cycle_s);
  EXPECT_DOUBLE_EQ(c.reclaim_sweep_s, d.reclaim_sweep_s);
  EXPECT_DOUBLE_EQ(c.grace_s, d.grace_s);
  EXPECT_EQ(c.fairness_compensation, d.fairness_compensation);
  EXPECT_DOUBLE_EQ(c.fairness_window_s, d.fairness_window_s);
  auto seed = DefaultTierParams();
  for (std::size_t i = 0; i < seed.size(); ++i) {
    EXPECT_DOUBLE_EQ(c.tiers[i].guaranteed_share, seed[i].guaranteed_share) << i;
    EXPECT_DOUBLE_EQ(c.tiers[i].reclaim_util_below, seed[i].reclaim_util_below) << i;
    EXPECT_DOUBLE_EQ(c.tiers[i].reclaim_after_s, seed[i].reclaim_after_s) << i;
    EXPECT_DOUBLE_EQ(c.tiers[i].max_idle_s, seed[i].max_idle_s) << i;
    EXPECT_DOUBLE_EQ(c.tiers[i].elastic_base, seed[i].elastic_base) << i;
  }
}

TEST(TenancyConfigTest, AbsentOrEmptySectionGivesTheDefaults) {
  for (const char* text : {"", "scheduler: {}\n", "tenancy:\n", "tenancy: {}\n",
                           "tenancy:\n  tiers:\n  fairness:\n  tenants:\n", "tenancy:\n  tenants: []\n"}) {
    auto c = Parse(text);
    ASSERT_TRUE(c.has_value()) << text << c.error().ToString();
    ExpectDefaultSettings(*c);
    EXPECT_TRUE(c->tenants.empty());
  }
}

// The documented example spells out the defaults and adds a tenant pair in one cohort.
TEST(TenancyConfigTest, ExampleFileIsValidAndSpellsOutTheDefaults) {
  const std::string path = std::string(SEEDANCE_TEST_DATA_DIR) + "/../examples/seedance-config.yaml";
  YAML::Node root = YAML::LoadFile(path);
  ASSERT_TRUE(root["tenancy"]) << path;
  auto c = ParseTenancyConfig(path, root["tenancy"]);
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  ExpectDefaultSettings(*c);
  ASSERT_EQ(c->tenants.size(), 2u);
  EXPECT_EQ(c->tenants[0].name, "team-a");
  EXPECT_EQ(c->tenants[0].tier, Tier::kGold);
  EXPECT_EQ(c->tenants[1].name, "team-b");
  EXPECT_EQ(c->tenants[1].tier, Tier::kBronze);
  EXPECT_EQ(c->tenants[0].cohort, "pool-1");
  EXPECT_EQ(c->tenants[1].cohort, "pool-1");
  ASSERT_EQ(c->tenants[0].quota.size(), 3u);
  EXPECT_EQ(c->tenants[0].quota[2].resource, "gpu/A100-80G");
  EXPECT_EQ(c->tenants[0].quota[2].lending_limit, 4.0);
}

// A valid section that sets every key (the round-trip example and the fuzz seed).
const char* const kFullExample = R"(tenancy:
  cycle: 5s
  reclaim_sweep: 20s
  grace_period: 0
  fairness: {compensation: false, window: 1d}
  tiers:
    gold: {guaranteed_share: 0.9, max_idle: 10m, reclaim_util_below: 0.02, reclaim_after: 300s, elastic_base: 1.2}
    bronze:
      elastic_base: 0.4
  tenants:
    - name: team-a
      cohort: pool-1
      tier: GOLD
      quota:
        gpu/a100-80g: {nominal: 16, borrowing_limit: 8, lending_limit: 4}
        cpu: {nominal: 192}
        memory: {nominal: 2048.5}
        gpu: {nominal: 8}
    - name: team-b
      quota:
        gpu/NVIDIA A100-SXM4-80GB: {nominal: 2}
    - name: team-c
      cohort: pool-1
      tier: bronze
)";

TEST(TenancyConfigTest, FullExampleRoundTrips) {
  auto c = Parse(kFullExample);
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_DOUBLE_EQ(c->cycle_s, 5);
  EXPECT_DOUBLE_EQ(c->reclaim_sweep_s, 20);
  EXPECT_DOUBLE_EQ(c->grace_s, 0);
  EXPECT_FALSE(c->fairness_compensation);
  EXPECT_DOUBLE_EQ(c->fairness_window_s, 86400);
  const TierParams& gold = c->tiers[static_cast<std::size_t>(Tier::kGold)];
  EXPECT_DOUBLE_EQ(gold.guaranteed_share, 0.9);
  EXPECT_DOUBLE_EQ(gold.max_idle_s, 600);
  EXPECT_DOUBLE_EQ(gold.reclaim_util_below, 0.02);
  EXPECT_DOUBLE_EQ(gold.reclaim_after_s, 300);
  EXPECT_DOUBLE_EQ(gold.elastic_base, 1.2);
  // Silver untouched; bronze keeps its seed values apart from the one key given.
  const auto seed = DefaultTierParams();
  const TierParams& silver = c->tiers[static_cast<std::size_t>(Tier::kSilver)];
  EXPECT_DOUBLE_EQ(silver.guaranteed_share, seed[1].guaranteed_share);
  EXPECT_DOUBLE_EQ(silver.elastic_base, seed[1].elastic_base);
  const TierParams& bronze = c->tiers[static_cast<std::size_t>(Tier::kBronze)];
  EXPECT_DOUBLE_EQ(bronze.elastic_base, 0.4);
  EXPECT_DOUBLE_EQ(bronze.guaranteed_share, seed[2].guaranteed_share);
  EXPECT_DOUBLE_EQ(bronze.max_idle_s, seed[2].max_idle_s);

  ASSERT_EQ(c->tenants.size(), 3u);
  const TenantConfig& a = c->tenants[0];
  EXPECT_EQ(a.name, "team-a");
  EXPECT_EQ(a.cohort, "pool-1");
  EXPECT_EQ(a.tier, Tier::kGold);
  EXPECT_EQ(a.line, 11);
  ASSERT_EQ(a.quota.size(), 4u);  // file order, canonical names
  EXPECT_EQ(a.quota[0].resource, GpuResourceName("A100-80G"));
  EXPECT_DOUBLE_EQ(a.quota[0].nominal, 16);
  EXPECT_EQ(a.quota[0].borrowing_limit, 8.0);
  EXPECT_EQ(a.quota[0].lending_limit, 4.0);
  EXPECT_EQ(a.quota[1].resource, "cpu");
  EXPECT_DOUBLE_EQ(a.quota[1].nominal, 192);
  EXPECT_FALSE(a.quota[1].borrowing_limit.has_value());
  EXPECT_FALSE(a.quota[1].lending_limit.has_value());
  EXPECT_EQ(a.quota[2].resource, "memory");
  EXPECT_DOUBLE_EQ(a.quota[2].nominal, 2048.5);
  EXPECT_EQ(a.quota[3].resource, "gpu");
  EXPECT_DOUBLE_EQ(a.quota[3].nominal, 8);
  const TenantConfig& b = c->tenants[1];
  EXPECT_EQ(b.name, "team-b");
  EXPECT_EQ(b.cohort, "");
  EXPECT_EQ(b.tier, Tier::kSilver);  // the default tier
  EXPECT_EQ(b.line, 19);
  ASSERT_EQ(b.quota.size(), 1u);
  EXPECT_EQ(b.quota[0].resource, "gpu/A100-80G");  // a product string, stored canonical
  const TenantConfig& t3 = c->tenants[2];
  EXPECT_EQ(t3.tier, Tier::kBronze);
  EXPECT_TRUE(t3.quota.empty());
  EXPECT_EQ(t3.line, 22);
}

// One bad input: the whole message must start with `where` (file, line, key path) and contain
// `reason`.
struct BadCase {
  const char* label;
  const char* text;
  const char* where;
  const char* reason;
};

// The bad inputs of item 7 ("bad input"): each with the line and key path its error must name.
const std::vector<BadCase>& BadCases() {
  static const std::vector<BadCase> cases = {
      {"borrowing without a cohort",
       "tenancy:\n  tenants:\n    - name: a\n      quota:\n        gpu: {nominal: 4, borrowing_limit: 2}\n",
       "t.yaml:5: key 'tenancy.tenants[0].quota.gpu.borrowing_limit'", "needs a cohort"},
      {"lending without a cohort",
       "tenancy:\n  tenants:\n    - name: a\n      quota:\n        cpu:\n          nominal: 4\n"
       "          lending_limit: 2\n",
       "t.yaml:7: key 'tenancy.tenants[0].quota.cpu.lending_limit'", "no one to lend to"},
      {"negative nominal",
       "tenancy:\n  tenants:\n    - {name: a, cohort: p}\n    - name: b\n      cohort: p\n      quota:\n"
       "        gpu/A100-80G: {nominal: -1}\n",
       "t.yaml:7: key 'tenancy.tenants[1].quota.gpu/A100-80G.nominal'", "-1 is out of range: must be >= 0"},
      {"negative borrowing_limit",
       "tenancy:\n  tenants:\n    - name: a\n      cohort: p\n      quota:\n        gpu: {nominal: 4, borrowing_limit: -2}\n",
       "t.yaml:6: key 'tenancy.tenants[0].quota.gpu.borrowing_limit'", "must be >= 0"},
      {"negative lending_limit",
       "tenancy:\n  tenants:\n    - name: a\n      cohort: p\n      quota:\n        memory:\n          nominal: 4\n"
       "          lending_limit: -0.5\n",
       "t.yaml:8: key 'tenancy.tenants[0].quota.memory.lending_limit'", "must be >= 0"},
      {"nominal not a number",
       "tenancy:\n  tenants:\n    - name: a\n      quota:\n        cpu: {nominal: lots}\n",
       "t.yaml:5: key 'tenancy.tenants[0].quota.cpu.nominal'", "expected a number, got 'lots'"},
      {"nominal a list", "tenancy:\n  tenants:\n    - name: a\n      quota:\n        cpu: {nominal: [1, 2]}\n",
       "t.yaml:5: key 'tenancy.tenants[0].quota.cpu.nominal'", "expected a number"},
      {"nominal infinite", "tenancy:\n  tenants:\n    - name: a\n      quota:\n        cpu: {nominal: .inf}\n",
       "t.yaml:5: key 'tenancy.tenants[0].quota.cpu.nominal'", "expected a finite number"},
      {"fractional GPUs", "tenancy:\n  tenants:\n    - name: a\n      quota:\n        gpu/V100: {nominal: 1.5}\n",
       "t.yaml:5: key 'tenancy.tenants[0].quota.gpu/V100.nominal'", "GPUs are counted whole"},
      {"unknown tier", "tenancy:\n  tenants:\n    - name: a\n      tier: platinum\n",
       "t.yaml:4: key 'tenancy.tenants[0].tier'", "unknown tier 'platinum' (allowed: gold, silver, bronze)"},
      {"unknown tier section", "tenancy:\n  tiers:\n    platinum: {elastic_base: 2}\n",
       "t.yaml:3: key 'tenancy.tiers.platinum'", "unknown key (allowed: gold, silver, bronze)"},
      {"unknown GPU model",
       "tenancy:\n  tenants:\n    - name: a\n      quota:\n        cpu: {nominal: 1}\n        gpu/A1000-80G: {nominal: 1}\n",
       "t.yaml:6: key 'tenancy.tenants[0].quota.gpu/A1000-80G'", "unknown GPU model 'A1000-80G'"},
      {"unknown resource", "tenancy:\n  tenants:\n    - name: a\n      quota:\n        nvidia.com/gpu: {nominal: 1}\n",
       "t.yaml:5: key 'tenancy.tenants[0].quota.nvidia.com/gpu'",
       "unknown resource (allowed: cpu, memory, gpu, gpu/<GPU model>)"},
      {"lending above nominal",
       "tenancy:\n  tenants:\n    - name: a\n      cohort: p\n      quota:\n        gpu/H100:\n          lending_limit: 6\n"
       "          nominal: 4\n",
       "t.yaml:7: key 'tenancy.tenants[0].quota.gpu/H100.lending_limit'", "6 exceeds nominal 4"},
      {"lending without nominal",
       "tenancy:\n  tenants:\n    - name: a\n      cohort: p\n      quota:\n        cpu: {lending_limit: 1}\n",
       "t.yaml:6: key 'tenancy.tenants[0].quota.cpu.lending_limit'", "1 exceeds nominal 0"},
      {"duplicate tenant names",
       "tenancy:\n  tenants:\n    - name: a\n    - name: b\n    - tier: gold\n      name: a\n",
       "t.yaml:6: key 'tenancy.tenants[2].name'", "duplicate tenant name 'a' (first at line 3)"},
      {"duplicate resource, same spelling",
       "tenancy:\n  tenants:\n    - name: a\n      quota:\n        gpu: {nominal: 1}\n        cpu: {nominal: 1}\n"
       "        gpu: {nominal: 2}\n",
       "t.yaml:7: key 'tenancy.tenants[0].quota.gpu'", "duplicate resource 'gpu' (first at line 5)"},
      {"duplicate resource, two spellings",
       "tenancy:\n  tenants:\n    - name: a\n      quota:\n        gpu/A100-80G: {nominal: 1}\n"
       "        gpu/a100-80g: {nominal: 2}\n",
       "t.yaml:6: key 'tenancy.tenants[0].quota.gpu/a100-80g'", "duplicate resource 'gpu/A100-80G' (first at line 5)"},
      {"guaranteed_share above 1", "tenancy:\n  tiers:\n    silver: {guaranteed_share: 1.2}\n",
       "t.yaml:3: key 'tenancy.tiers.silver.guaranteed_share'", "1.2 is out of range: must be in [0, 1]"},
      {"guaranteed_share below 0", "tenancy:\n  tiers:\n    gold:\n      guaranteed_share: -0.1\n",
       "t.yaml:4: key 'tenancy.tiers.gold.guaranteed_share'", "must be in [0, 1]"},
      {"elastic_base zero", "tenancy:\n  tiers:\n    bronze:\n      max_idle: 10s\n      elastic_base: 0\n",
       "t.yaml:5: key 'tenancy.tiers.bronze.elastic_base'", "0 is out of range: must be > 0"},
      {"reclaim_util_below above 1", "tenancy:\n  tiers:\n    gold: {reclaim_util_below: 5}\n",
       "t.yaml:3: key 'tenancy.tiers.gold.reclaim_util_below'", "must be in [0, 1]"},
      {"negative max_idle", "tenancy:\n  tiers:\n    gold: {max_idle: -900s}\n",
       "t.yaml:3: key 'tenancy.tiers.gold.max_idle'", "must be >= 0"},
      {"negative reclaim_after", "tenancy:\n  tiers:\n    silver: {reclaim_after: -1s}\n",
       "t.yaml:3: key 'tenancy.tiers.silver.reclaim_after'", "must be >= 0"},
      {"zero cycle", "tenancy:\n  cycle: 0\n", "t.yaml:2: key 'tenancy.cycle'", "must be > 0"},
      {"negative reclaim_sweep", "tenancy:\n  cycle: 1s\n  reclaim_sweep: -30s\n",
       "t.yaml:3: key 'tenancy.reclaim_sweep'", "must be > 0"},
      {"negative grace_period", "tenancy:\n  grace_period: -500ms\n", "t.yaml:2: key 'tenancy.grace_period'",
       "must be >= 0"},
      {"bare cycle", "tenancy:\n  cycle: 10\n", "t.yaml:2: key 'tenancy.cycle'",
       "'10': a number needs a unit (write e.g. 120ms, 2s, 3m; units: us, ms, s, m, h, d)"},
      {"bare max_idle", "tenancy:\n  tiers:\n    gold: {max_idle: 900}\n", "t.yaml:3: key 'tenancy.tiers.gold.max_idle'",
       "'900': a number needs a unit"},
      {"zero fairness window", "tenancy:\n  fairness:\n    window: 0\n", "t.yaml:3: key 'tenancy.fairness.window'",
       "must be > 0"},
      {"fairness compensation not a bool", "tenancy:\n  fairness: {compensation: sometimes}\n",
       "t.yaml:2: key 'tenancy.fairness.compensation'", "expected true or false"},
      {"tenant without a name", "tenancy:\n  tenants:\n    - name: a\n    - tier: gold\n      cohort: p\n",
       "t.yaml:4: key 'tenancy.tenants[1].name'", "missing: every tenant needs a name"},
      {"tenant with an empty name", "tenancy:\n  tenants:\n    - name: \"\"\n",
       "t.yaml:3: key 'tenancy.tenants[0].name'", "must not be empty"},
      {"tenant not a mapping", "tenancy:\n  tenants:\n    - team-a\n", "t.yaml:3: key 'tenancy.tenants[0]'",
       "expected a mapping"},
      {"tenants not a list", "tenancy:\n  tenants:\n    name: a\n", "t.yaml:3: key 'tenancy.tenants'",
       "expected a list of tenants"},
      {"unknown tenancy key", "tenancy:\n  cycles: 10\n", "t.yaml:2: key 'tenancy.cycles'",
       "unknown key (allowed: cycle, reclaim_sweep, grace_period, fairness, tiers, tenants)"},
      {"unknown tenant key", "tenancy:\n  tenants:\n    - name: a\n      cohortName: p\n",
       "t.yaml:4: key 'tenancy.tenants[0].cohortName'", "unknown key (allowed: name, cohort, tier, fair_sharing, quota)"},
      {"negative fair-sharing weight", "tenancy:\n  tenants:\n    - name: a\n      fair_sharing: {weight: -1}\n",
       "t.yaml:4: key 'tenancy.tenants[0].fair_sharing.weight'", "must be >= 0"},
      {"unknown fair-sharing key", "tenancy:\n  tenants:\n    - name: a\n      fair_sharing: {weigth: 2}\n",
       "t.yaml:4: key 'tenancy.tenants[0].fair_sharing.weigth'", "unknown key (allowed: weight)"},
      {"unknown quota key",
       "tenancy:\n  tenants:\n    - name: a\n      quota:\n        cpu: {nominalQuota: 4}\n",
       "t.yaml:5: key 'tenancy.tenants[0].quota.cpu.nominalQuota'",
       "unknown key (allowed: nominal, borrowing_limit, lending_limit)"},
      {"repeated key", "tenancy:\n  cycle: 10\n  cycle: 20\n", "t.yaml:3: key 'tenancy.cycle'",
       "duplicate key (first at line 2)"},
      {"section not a mapping", "tenancy: 10\n", "t.yaml:1: key 'tenancy'", "expected a mapping"},
  };
  return cases;
}

TEST(TenancyConfigTest, EveryBadInputNamesTheLineAndTheKey) {
  for (const BadCase& bad : BadCases()) {
    SCOPED_TRACE(bad.label);
    auto c = Parse(bad.text);
    ASSERT_FALSE(c.has_value());
    EXPECT_EQ(c.error().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(c.error().message(), StartsWith(std::string(bad.where) + ": "));
    EXPECT_THAT(c.error().message(), HasSubstr(bad.reason));
  }
}

// The same limits with a cohort are fine: the error is about the missing cohort, not the values.
TEST(TenancyConfigTest, LimitsAreAllowedInACohort) {
  auto c = Parse("tenancy:\n  tenants:\n    - name: a\n      cohort: p\n      quota:\n"
                 "        gpu: {nominal: 4, borrowing_limit: 2, lending_limit: 4}\n");
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  ASSERT_EQ(c->tenants.size(), 1u);
  EXPECT_EQ(c->tenants[0].quota[0].lending_limit, 4.0);
  EXPECT_EQ(c->tenants[0].fair_weight, 1.0);  // Kueue's default
  auto w = Parse("tenancy:\n  tenants:\n    - name: a\n      fair_sharing: {weight: 0}\n");
  ASSERT_TRUE(w.has_value()) << w.error().ToString();
  EXPECT_EQ(w->tenants[0].fair_weight, 0.0);
}

// Mutates a valid config with seeded byte flips, deletions and insertions: the parser never
// crashes or throws, and every rejection is kInvalidArgument naming the file.
TEST(TenancyConfigTest, FuzzedInputIsAcceptedOrRejectedCleanly) {
  const std::string valid = kFullExample;
  ASSERT_TRUE(Parse(valid).has_value());
  const std::string alphabet = " \n:-[]{},.&*!'\"#0123456789abcgpu/";
  int accepted = 0, rejected = 0, not_yaml = 0;
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    Rng rng(seed);
    std::string text = valid;
    const int edits = 1 + static_cast<int>(rng.Uniform(3));
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const std::size_t at = static_cast<std::size_t>(rng.Uniform(text.size()));
      const char c = alphabet[static_cast<std::size_t>(rng.Uniform(alphabet.size()))];
      switch (rng.Uniform(3)) {
        case 0: text[at] = c; break;
        case 1: text.erase(at, 1); break;
        default: text.insert(at, 1, c); break;
      }
    }
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception&) {
      ++not_yaml;  // the YAML layer's own error, before the tenancy parser
      continue;
    }
    // A root that is not a mapping is handed over as the section itself.
    const YAML::Node section = root.IsMap() ? root["tenancy"] : root;
    Result<TenancyConfig> c = Status(StatusCode::kInternal, "not run");
    ASSERT_NO_THROW(c = ParseTenancyConfig("fuzz.yaml", section)) << text;
    if (c.has_value()) {
      ++accepted;
    } else {
      ++rejected;
      EXPECT_EQ(c.error().code(), StatusCode::kInvalidArgument) << text;
      EXPECT_THAT(c.error().message(), StartsWith("fuzz.yaml:")) << text;
    }
  }
  std::cout << "fuzz: " << accepted << " accepted, " << rejected << " rejected, " << not_yaml << " not YAML\n";
  // The mutations reach the parser and exercise both outcomes (measured: 142 accepted, 846
  // rejected, 1012 not YAML with yaml-cpp 0.7).
  EXPECT_GT(accepted, 50);
  EXPECT_GT(rejected, 500);
  EXPECT_EQ(accepted + rejected + not_yaml, 2000);
}

}  // namespace
}  // namespace seedance::tenancy
