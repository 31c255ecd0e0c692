#include "seedance/server/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace seedance::server {
namespace {

TEST(ServerConfigTest, DefaultsAreOneGoldTenantWithoutLimits) {
  ServerConfig c = ServerConfig::Defaults();
  EXPECT_EQ(c.source, "<defaults>");
  ASSERT_EQ(c.tenancy.tenants.size(), 1u);
  EXPECT_EQ(c.tenancy.tenants[0].name, "default");
  EXPECT_EQ(c.tenancy.tenants[0].tier, tenancy::Tier::kGold);
  EXPECT_TRUE(c.tenancy.tenants[0].quota.empty());
  EXPECT_EQ(c.placement_policy, "bestfit");
  EXPECT_EQ(c.seed, 0u);
}

TEST(ServerConfigTest, ParsesEveryServerKeyAndTheTenancySection) {
  auto c = ServerConfig::Parse("s.yaml", R"(
scheduler:            # cost-benchmark's section: tolerated
  cost_aware: {enabled: true}
server:
  admission_mode: kueue
  admission_max_workloads: 5000
  placement_policy: fgd
  seed: 42
  breaker_default_hourly: 100
  breaker_namespaces: {ml-research: 30.5, prod: 200}
  breaker_jobs: {big-0: 5}
  breaker_cooldown: 30m
  breaker_interval: 30s
  audit_interval: 2m
  unit_cost_period: 15m
  cooling_usd_per_hour: 12.5
  opex_usd_per_hour: 3
  scrape:
    - {name: dcgm-1, url: "http://10.0.0.1:9400/metrics"}
    - {name: prom, url: "http://prom:9090", kind: prometheus, query: "DCGM_FI_DEV_GPU_UTIL", interval: 500ms}
tenancy:
  tenants:
    - {name: team-a, tier: silver, quota: {gpu: {nominal: 8}}}
)");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->source, "s.yaml");
  EXPECT_EQ(c->admission_mode, "kueue");
  EXPECT_EQ(c->admission_max_workloads, 5000);
  EXPECT_EQ(c->placement_policy, "fgd");
  EXPECT_EQ(c->seed, 42u);
  EXPECT_EQ(c->breaker_default_hourly, Usd(100));
  EXPECT_EQ(c->breaker_namespaces.at("ml-research"), MicroUsd(30'500'000));
  EXPECT_EQ(c->breaker_jobs.at("big-0"), Usd(5));
  EXPECT_EQ(c->breaker_cooldown_ms, 1'800'000);
  EXPECT_EQ(c->breaker_interval_ms, 30'000);
  EXPECT_EQ(c->audit_interval_ms, 120'000);
  EXPECT_EQ(c->unit_cost_period_ms, 900'000);
  EXPECT_EQ(c->cooling_usd_per_hour, 12.5);
  EXPECT_EQ(c->opex_usd_per_hour, 3);
  ASSERT_EQ(c->scrape.size(), 2u);
  EXPECT_EQ(c->scrape[0].kind, "exposition");
  EXPECT_EQ(c->scrape[0].interval_ms, 15'000);
  EXPECT_EQ(c->scrape[1].kind, "prometheus");
  EXPECT_EQ(c->scrape[1].query, "DCGM_FI_DEV_GPU_UTIL");
  EXPECT_EQ(c->scrape[1].interval_ms, 500);
  ASSERT_EQ(c->tenancy.tenants.size(), 1u);
  EXPECT_EQ(c->tenancy.tenants[0].name, "team-a");
}

TEST(ServerConfigTest, EmptyFileAndEmptyTenancyGiveTheDefaults) {
  auto empty = ServerConfig::Parse("e.yaml", "");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->tenancy.tenants.size(), 1u);
  auto no_tenants = ServerConfig::Parse("t.yaml", "tenancy:\n  cycle: 5s\n");
  ASSERT_TRUE(no_tenants.has_value()) << no_tenants.error().message();
  EXPECT_EQ(no_tenants->tenancy.cycle_s, 5);
  ASSERT_EQ(no_tenants->tenancy.tenants.size(), 1u);
  EXPECT_EQ(no_tenants->tenancy.tenants[0].name, "default");
}

struct BadCase {
  const char* yaml;
  const char* where;   // the message starts with this
  const char* reason;  // and contains this
};

TEST(ServerConfigTest, ErrorsNameFileLineAndKey) {
  const BadCase cases[] = {
      {"server:\n  placement: fgd\n", "c.yaml:2: key 'server.placement'", "unknown key (allowed: admission_mode"},
      {"server:\n  admission_mode: fifo\n", "c.yaml:2: key 'server.admission_mode'", "unknown mode 'fifo' (allowed:"},
      {"server:\n  admission_mode: fair-sharing\n", "c.yaml:2: key 'server.admission_mode'",
       "unknown mode 'fair-sharing' (allowed: strict, borrowing, seedance, kueue)"},
      {"server:\n  placement_policy: best\n", "c.yaml:2: key 'server.placement_policy'", "unknown policy 'best' (allowed:"},
      {"server:\n  seed: -1\n", "c.yaml:2: key 'server.seed'", "out of range"},
      {"server:\n  admission_max_workloads: 0\n", "c.yaml:2: key 'server.admission_max_workloads'", "out of range"},
      {"server:\n  admission_max_workloads: 2.5\n", "c.yaml:2: key 'server.admission_max_workloads'", "whole number"},
      {"server:\n  seed: 1.5\n", "c.yaml:2: key 'server.seed'", "whole number"},
      {"server:\n  breaker_default_hourly: cheap\n", "c.yaml:2: key 'server.breaker_default_hourly'", "expected a number"},
      {"server:\n  breaker_namespaces:\n    ml: -3\n", "c.yaml:3: key 'server.breaker_namespaces.ml'", "out of range"},
      {"server:\n  breaker_cooldown: 15x\n", "c.yaml:2: key 'server.breaker_cooldown'", "unknown unit 'x'"},
      {"server:\n  unit_cost_period: [1]\n", "c.yaml:2: key 'server.unit_cost_period'", "expected a duration"},
      {"server:\n  audit_interval: 0\n", "c.yaml:2: key 'server.audit_interval'", "out of range"},
      {"server:\n  breaker_interval: 60\n", "c.yaml:2: key 'server.breaker_interval'", "'60': a number needs a unit (write e.g. 120ms"},
      {"server:\n  scrape:\n    - {name: a}\n", "c.yaml:3: key 'server.scrape[0].url'", "required"},
      {"server:\n  scrape:\n    - {name: a, url: ftp://x}\n", "c.yaml:3: key 'server.scrape[0].url'", "http://"},
      {"server:\n  scrape:\n    - {name: a, url: 'http://x', kind: prometheus}\n", "c.yaml:3: key 'server.scrape[0].query'",
       "required for kind prometheus"},
      {"server:\n  scrape:\n    - {name: a, url: 'http://x', kind: dcgm}\n", "c.yaml:3: key 'server.scrape[0].kind'",
       "allowed: exposition, prometheus"},
      {"server:\n  scrape:\n    - {name: a, url: 'http://x'}\n    - {name: a, url: 'http://y'}\n",
       "c.yaml:4: key 'server.scrape[1].name'", "duplicate target 'a'"},
      {"sever:\n  seed: 1\n", "c.yaml:1: key 'sever'", "unknown section (allowed: server, tenancy"},
      {"server: 3\n", "c.yaml:1: key 'server'", "expected a mapping"},
      {"tenancy:\n  tenants:\n    - {name: a, tier: platinum}\n", "c.yaml:3: key 'tenancy.tenants[0].tier'", "platinum"},
      {"server: {seed: [\n", "c.yaml:2:", ""},
      {"server:\n  limits:\n    headers: 5\n", "c.yaml:3: key 'server.limits.headers'", "unknown key (allowed: header_bytes"},
      {"server:\n  limits:\n    header_count: 2\n", "c.yaml:3: key 'server.limits.header_count'", "out of range"},
      {"server:\n  limits:\n    max_series: 1.5\n", "c.yaml:3: key 'server.limits.max_series'", "whole number"},
      {"server:\n  limits:\n    header_timeout: 0\n", "c.yaml:3: key 'server.limits.header_timeout'", "out of range"},
      {"server:\n  limits:\n    request_timeout: 30\n", "c.yaml:3: key 'server.limits.request_timeout'", "needs a unit"},
      {"server:\n  limits:\n    candidates_floor: 0\n", "c.yaml:3: key 'server.limits.candidates_floor'", "out of range"},
      {"server:\n  extender_full_nodes: 1\n", "c.yaml:2: key 'server.extender_full_nodes'", "expected true or false"},
      {"server:\n  extender_decide_at_filter: yes\n", "c.yaml:2: key 'server.extender_decide_at_filter'",
       "expected true or false"},
  };
  for (const BadCase& bad : cases) {
    auto c = ServerConfig::Parse("c.yaml", bad.yaml);
    ASSERT_FALSE(c.has_value()) << bad.yaml;
    EXPECT_EQ(c.error().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(c.error().message().rfind(bad.where, 0), 0u) << c.error().message();
    EXPECT_NE(c.error().message().find(bad.reason), std::string::npos) << c.error().message();
  }
}

TEST(ServerConfigTest, ParsesTheLimits) {
  auto c = ServerConfig::Parse("l.yaml", R"(
server:
  limits:
    header_bytes: 16384
    header_count: 40
    header_timeout: 2s
    connections_per_client: 4
    decision_log_bytes: 1048576
    seen_pod_bytes: 2097152
    max_series: 1000
    request_timeout: 5s
    candidates_floor: 100
  extender_full_nodes: true
  extender_decide_at_filter: true
)");
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->limits.header_bytes, 16384u);
  EXPECT_EQ(c->limits.header_count, 40u);
  EXPECT_EQ(c->limits.header_timeout_ms, 2000);
  EXPECT_EQ(c->limits.connections_per_client, 4u);
  EXPECT_EQ(c->limits.decision_log_bytes, 1u << 20);
  EXPECT_EQ(c->limits.seen_pod_bytes, 2u << 20);
  EXPECT_EQ(c->limits.max_series, 1000u);
  EXPECT_EQ(c->limits.request_timeout_ms, 5000);
  EXPECT_EQ(c->limits.candidates_floor, 100u);
  EXPECT_TRUE(c->extender_full_nodes);
  EXPECT_TRUE(c->extender_decide_at_filter);
  const ServerLimits d = ServerConfig::Defaults().limits;
  EXPECT_EQ(d.header_count, 100u);
  EXPECT_EQ(d.max_series, 500'000u);
  EXPECT_EQ(d.request_timeout_ms, 30'000);
  EXPECT_EQ(d.candidates_floor, 5'000u);
  EXPECT_FALSE(ServerConfig::Defaults().extender_full_nodes);
  EXPECT_FALSE(ServerConfig::Defaults().extender_decide_at_filter);
}

TEST(ServerConfigTest, LoadFileReadsAFileAndNamesAMissingOne) {
  const std::string path = ::testing::TempDir() + "/server_config_test.yaml";
  std::ofstream(path) << "server:\n  placement_policy: packing\n";
  auto c = ServerConfig::LoadFile(path);
  ASSERT_TRUE(c.has_value()) << c.error().message();
  EXPECT_EQ(c->source, path);
  EXPECT_EQ(c->placement_policy, "packing");
  std::remove(path.c_str());
  auto missing = ServerConfig::LoadFile(path);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.error().message().find(path), std::string::npos);
}

}  // namespace
}  // namespace seedance::server
