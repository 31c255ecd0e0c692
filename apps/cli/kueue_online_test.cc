// `seedance bench kueue --online`'s driver against an in-process seedance server configured, as the
// command configures it, by the generated seedance-config.yaml (moved from the server's admission
// test with the driver, issue 30).
#include "kueue_online.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "seedance/server/testing/test_server.h"

namespace seedance::cli {
namespace {

using nlohmann::json;

TEST(KueueOnlineTest, KueueScenarioOnlineAdmitsAndFinishesEveryWorkload) {
  sim::KueueScenarioSpec spec;
  spec.cohorts = 1;
  spec.queues_per_cohort = 3;
  spec.classes = {{"small", 30, 100, 1, 200, 50}, {"large", 6, 1200, 20, 1000, 200}};
  const std::string yaml = KueueServerConfigYaml(spec);
  // One tenant per ClusterQueue: 1 cohort x 3 queues.
  EXPECT_NE(yaml.find("admission_mode: kueue"), std::string::npos) << yaml;
  std::size_t tenants = 0;
  for (auto at = yaml.find("    - name: "); at != std::string::npos; at = yaml.find("    - name: ", at + 1)) ++tenants;
  EXPECT_EQ(tenants, 3u) << yaml;
  server::ServerOptions options;
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  options.config_path = ::testing::TempDir() + "/kueue_online_test_" + info->name() + ".yaml";
  std::ofstream(options.config_path) << yaml;
  auto s = server::testing::StartTestServer(options);
  ASSERT_NE(s, nullptr);
  KueueOnlineOptions client;
  client.port = s->port();
  client.speedup = 20;
  auto r = RunKueueOnline(spec, client);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->classes.size(), 2u);
  EXPECT_EQ(r->classes[0].count, 90);
  EXPECT_EQ(r->classes[1].count, 18);
  EXPECT_GE(r->admissions, 108);
  EXPECT_EQ(r->admissions, 108 + r->preemptions);
  EXPECT_GT(r->usage_pct, 0);
  EXPECT_LE(r->usage_pct, 500);
  // The last creation is at 7.2 scenario seconds (0.36 s of wall at 20x).
  EXPECT_GT(r->wall_s, 0.36);
  json j = KueueOnlineJson(client, *r);
  EXPECT_EQ(j["mode"], "online");
  EXPECT_EQ(j["published"]["admissions"], 15000);
}

}  // namespace
}  // namespace seedance::cli
