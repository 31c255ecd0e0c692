#include "seedance/report/audit_report.h"

#include <gtest/gtest.h>

#include "seedance/report/testing/xml_check.h"

namespace seedance::report {
namespace {

TEST(AuditReportTest, EnforcementSectionShowsStatesGradesAndTransitions) {
  auto r = audit::RunEnforcementScenario(audit::DefaultEnforcementSpec());
  ASSERT_TRUE(r.has_value());
  const std::string html = RenderEnforcementSection(*r, audit::AuditConfig{});
  EXPECT_EQ(testing::CheckXml(html, /*html=*/true), "");
  for (const char* s : {"<section id=\"audit-enforcement\">", "<section id=\"health-audit\">",
                        "class=\"audit-grades\"", ">removed<br>0 / 0<", "observation<br>0 / ",
                        "XID 79", "power FAIL", "R&#178;", "node-2", "excellent"}) {
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(RenderEnforcementSection(*r, audit::AuditConfig{}), html);  // deterministic
}

}  // namespace
}  // namespace seedance::report
