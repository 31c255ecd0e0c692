#include "seedance/report/tenancy_report.h"

#include <gtest/gtest.h>

namespace seedance::report {
namespace {

sim::TenancyComparison Tiny() {
  sim::TenancyComparison c;
  c.scenario.name = "tiny<&>";
  c.scenario.gpu_type = "V100";
  c.scenario.total_gpus = 8;
  c.scenario.window_s = 86400;
  c.scenario.assumptions = {"one assumption"};
  tenancy::TenantConfig t;
  t.name = "vc-a";
  c.scenario.config.tenants.push_back(t);
  sim::TenancyOutcome o;
  o.mode = "seedance";
  o.gpu_allocation_pct = 75;
  o.jain_index = 0.9;
  o.gold_guarantee_checks = 3;
  o.bucket_s = 3600;
  o.share_gpus = {{4.0}, {6.0}};
  sim::TenantOutcome to;
  to.tenant = "vc-a";
  to.tier = tenancy::Tier::kGold;
  to.cost_usd = 12.5;
  o.per_tenant.push_back(to);
  c.outcomes.push_back(o);
  return c;
}

// results.json's `tenancy` key carries issue 13's schema, one object per mode.
TEST(TenancyReportTest, JsonHasTheIssueSchema) {
  const auto j = TenancyJson(Tiny());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u);
  for (const char* k : {"mode", "gpu_allocation_pct", "jain_index", "gold_guarantee_violations", "preemptions",
                        "work_lost_gpu_hours", "per_tenant"}) {
    EXPECT_TRUE(j[0].contains(k)) << k;
  }
  const auto& t = j[0]["per_tenant"][0];
  for (const char* k : {"tenant", "tier", "wait_p50_h", "wait_p99_h", "guaranteed_share_honoured_pct",
                        "borrowed_gpu_hours", "preemptions", "cost_usd"}) {
    EXPECT_TRUE(t.contains(k)) << k;
  }
  EXPECT_EQ(t["tier"], "gold");
  EXPECT_EQ(TenancyScenarioJson(Tiny())["assumptions"][0], "one assumption");
}

TEST(TenancyReportTest, HtmlEscapesAndCharts) {
  const std::string h = TenancyHtmlSection(Tiny());
  EXPECT_NE(h.find("tiny&lt;&amp;&gt;"), std::string::npos);
  EXPECT_EQ(h.find("tiny<&>"), std::string::npos);
  EXPECT_NE(h.find("<svg"), std::string::npos);
  EXPECT_NE(h.find("Assumes: one assumption"), std::string::npos);
  EXPECT_NE(TenancyTable(Tiny()).find("seedance"), std::string::npos);
}

}  // namespace
}  // namespace seedance::report
