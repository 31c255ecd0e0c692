#include "seedance/audit/grade.h"

#include <gtest/gtest.h>

#include <cmath>

#include "seedance/audit/audit.h"

namespace seedance::audit {
namespace {

struct GradeCase {
  double energy;
  std::optional<double> deviation;
  const char* expected;
};

// Every boundary of the seed table (S7.2): 0.18 and 2.1 are exclusive upper bounds of
// "excellent", 0.25 and 4.5 inclusive upper bounds of "good"; either metric alone demotes.
TEST(GradeTableTest, SeedTableBoundaries) {
  const GradeTable t = GradeTable::SeedDefault();
  ASSERT_TRUE(t.Validate().ok());
  const double below18 = std::nextafter(0.18, 0.0), above25 = std::nextafter(0.25, 1.0);
  const double below21 = std::nextafter(2.1, 0.0), above45 = std::nextafter(4.5, 10.0);
  const GradeCase cases[] = {
      {0.0, 0.0, "excellent"},
      {below18, below21, "excellent"},
      {0.18, below21, "good"},            // energy at the excellent bound
      {below18, 2.1, "good"},             // deviation at the excellent bound
      {0.18, 2.1, "good"},
      {0.25, 4.5, "good"},                // both at the inclusive good bound
      {above25, 0.0, "needs_optimization"},
      {0.0, above45, "needs_optimization"},
      {above25, above45, "needs_optimization"},
      {0.25, above45, "needs_optimization"},
      {1e6, 0.0, "needs_optimization"},
      {below18, std::nullopt, "excellent"},  // deviation not measured: graded on energy alone
      {0.18, std::nullopt, "good"},
      {0.25, std::nullopt, "good"},
      {above25, std::nullopt, "needs_optimization"},
  };
  for (const GradeCase& c : cases) {
    EXPECT_EQ(t.Grade(c.energy, c.deviation).name, c.expected)
        << "energy " << c.energy << " deviation " << c.deviation.value_or(-1);
  }
  EXPECT_EQ(t.Grade(0.1, 1.0).weight, 1.25);
  EXPECT_EQ(t.Grade(0.2, 3.0).weight, 1.00);
  EXPECT_EQ(t.Grade(0.3, 3.0).weight, 0.75);
}

TEST(GradeTableTest, ValidateRejectsBadTables) {
  GradeTable t = GradeTable::SeedDefault();
  t.rows.back().energy_ratio = Bound::Below(1);
  EXPECT_NE(t.Validate().message().find("catch-all"), std::string::npos);
  t = GradeTable::SeedDefault();
  t.rows[0].energy_ratio = Bound{};
  t.rows[0].deviation_pct = Bound{};
  EXPECT_NE(t.Validate().message().find("unreachable"), std::string::npos);
  t = GradeTable::SeedDefault();
  t.rows[1].name = "excellent";
  EXPECT_NE(t.Validate().message().find("duplicate"), std::string::npos);
  t = GradeTable::SeedDefault();
  t.rows[1].weight = 0;
  EXPECT_NE(t.Validate().message().find("grades[1].weight"), std::string::npos);
  EXPECT_FALSE(GradeTable{}.Validate().ok());
}

TEST(AuditConfigTest, YamlOverridesTheGradeTableAndNamesBadKeysWithLines) {
  auto c = ParseAuditConfig(R"(grades:
  - {name: gold, energy_ratio_at_most: 0.5, weight: 2}
  - {name: rest, weight: 0.5}
admission: {pending_evidence_hours: 24, recovery_clean_audits: 1}
)",
                            "cfg.yaml");
  ASSERT_TRUE(c.has_value()) << c.error().ToString();
  EXPECT_EQ(c->grades.Grade(0.5, 99.0).name, "gold");  // inclusive, no deviation bound
  EXPECT_EQ(c->grades.Grade(std::nextafter(0.5, 1.0), 0.0).name, "rest");
  EXPECT_EQ(c->admission.pending_evidence_hours, 24);
  EXPECT_EQ(c->admission.recovery_clean_audits, 1);
  EXPECT_EQ(c->admission.removal_failures, 2);  // default kept

  auto bad = ParseAuditConfig("health:\n  thermal_fail_c: hot\n", "cfg.yaml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(),
            "cfg.yaml:2:19: key 'health.thermal_fail_c': expected a number, got 'hot'");
  auto unknown = ParseAuditConfig("admission:\n  removal_failure: 3\n", "cfg.yaml");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message().find("cfg.yaml:2:3: key 'admission.removal_failure': "
                                           "unknown key"),
            std::string::npos)
      << unknown.error().message();
  auto both = ParseAuditConfig(
      "grades:\n  - {name: a, energy_ratio_below: 1, energy_ratio_at_most: 1, weight: 1}\n"
      "  - {name: b, weight: 1}\n",
      "cfg.yaml");
  ASSERT_FALSE(both.has_value());
  EXPECT_NE(both.error().message().find("not both"), std::string::npos);
}

}  // namespace
}  // namespace seedance::audit
