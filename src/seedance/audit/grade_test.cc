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
      {below18, std::nullopt, "good"},  // deviation not measured: excellent cannot be checked
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

// No grade without its evidence: the review's case. Energy 0.10 kW/TOPS and no scheduling
// records is "good" (weight 1.00), not "excellent" (1.25); the same node with a 1 % deviation
// measured is "excellent".
TEST(GradeTableTest, MissingDeviationCapsTheSeedTableAtGood) {
  const GradeTable t = GradeTable::SeedDefault();
  GradeDecision d = t.Decide(0.10, std::nullopt);
  EXPECT_EQ(d.row->name, "good");
  EXPECT_EQ(d.row->weight, 1.00);
  EXPECT_TRUE(d.capped);
  EXPECT_EQ(d.missing, std::vector<std::string_view>{"scheduling_deviation_pct"});
  d = t.Decide(0.10, 1.0);
  EXPECT_EQ(d.row->name, "excellent");
  EXPECT_EQ(d.row->weight, 1.25);
  EXPECT_FALSE(d.capped);
  EXPECT_TRUE(d.missing.empty());
  // Graded on what is measured: a node that would be good or worse anyway is not "capped".
  d = t.Decide(0.20, std::nullopt);
  EXPECT_EQ(d.row->name, "good");
  EXPECT_FALSE(d.capped);
  d = t.Decide(0.30, std::nullopt);
  EXPECT_EQ(d.row->name, "needs_optimization");
  EXPECT_FALSE(d.capped);
  // The energy ratio missing (no power samples) is symmetric: graded on the deviation, capped.
  d = t.Decide(std::nullopt, 1.0);
  EXPECT_EQ(d.row->name, "good");
  EXPECT_TRUE(d.capped);
  EXPECT_EQ(d.missing, std::vector<std::string_view>{"energy_ratio_kw_per_tops"});
  EXPECT_EQ(t.Grade(std::nullopt, 3.0).name, "good");
  EXPECT_FALSE(t.Decide(std::nullopt, 3.0).capped);
  EXPECT_EQ(t.Grade(std::nullopt, 5.0).name, "needs_optimization");
  // Nothing measured: the cap row, with both criteria listed.
  d = t.Decide(std::nullopt, std::nullopt);
  EXPECT_EQ(d.row->name, "good");
  EXPECT_TRUE(d.capped);
  EXPECT_EQ(d.missing.size(), 2u);
}

// Custom tables keep the rule: rows above the cap that bound a missing criterion are withheld;
// rows bounding only measured criteria are judged as usual; the cap is configurable.
TEST(GradeTableTest, PartialEvidenceCapOnCustomTables) {
  GradeTable two;  // best row bounds both criteria: a missing one leaves the catch-all
  two.rows = {GradeRow{"best", Bound::Below(0.5), Bound::Below(3), 2.0},
              GradeRow{"rest", Bound{}, Bound{}, 1.0}};
  ASSERT_TRUE(two.Validate().ok());
  EXPECT_EQ(two.Grade(0.1, std::nullopt).name, "rest");
  EXPECT_TRUE(two.Decide(0.1, std::nullopt).capped);
  EXPECT_EQ(two.Grade(0.1, 1.0).name, "best");
  GradeTable energy_only;  // best row bounds only the energy ratio: no deviation needed
  energy_only.rows = {GradeRow{"gold", Bound::AtMost(0.5), Bound{}, 2.0},
                      GradeRow{"rest", Bound{}, Bound{}, 1.0}};
  ASSERT_TRUE(energy_only.Validate().ok());
  EXPECT_EQ(energy_only.Grade(0.1, std::nullopt).name, "gold");
  EXPECT_FALSE(energy_only.Decide(0.1, std::nullopt).capped);
  EXPECT_EQ(energy_only.Grade(std::nullopt, 0.0).name, "rest");  // gold's bound is unchecked

  GradeTable four;
  four.rows = {GradeRow{"platinum", Bound::Below(0.12), Bound::Below(1), 1.5},
               GradeRow{"gold", Bound::Below(0.18), Bound::Below(2.1), 1.25},
               GradeRow{"silver", Bound::AtMost(0.25), Bound{}, 1.0},
               GradeRow{"bronze", Bound{}, Bound{}, 0.75}};
  ASSERT_TRUE(four.Validate().ok());
  EXPECT_EQ(four.PartialEvidenceCapIndex(), 1u);
  EXPECT_EQ(four.Grade(0.05, 0.5).name, "platinum");
  EXPECT_EQ(four.Grade(0.05, std::nullopt).name, "gold");  // default cap: the second row
  EXPECT_TRUE(four.Decide(0.05, std::nullopt).capped);
  EXPECT_EQ(four.Grade(0.15, std::nullopt).name, "gold");
  EXPECT_FALSE(four.Decide(0.15, std::nullopt).capped);
  EXPECT_EQ(four.Grade(0.20, std::nullopt).name, "silver");
  four.partial_evidence_cap = "silver";
  ASSERT_TRUE(four.Validate().ok());
  EXPECT_EQ(four.Grade(0.05, std::nullopt).name, "silver");
  EXPECT_EQ(four.Grade(0.15, std::nullopt).name, "silver");
  EXPECT_TRUE(four.Decide(0.15, std::nullopt).capped);
  EXPECT_EQ(four.Grade(0.05, 0.5).name, "platinum");  // full evidence: no cap
  EXPECT_EQ(four.Grade(0.30, std::nullopt).name, "bronze");
  // A row above the cap that bounds only measured criteria is still awarded.
  four.rows[0].deviation_pct = Bound{};
  ASSERT_TRUE(four.Validate().ok());
  EXPECT_EQ(four.Grade(0.05, std::nullopt).name, "platinum");
  EXPECT_FALSE(four.Decide(0.05, std::nullopt).capped);

  GradeTable one;  // the catch-all alone: nothing to cap
  one.rows = {GradeRow{"all", Bound{}, Bound{}, 1.0}};
  ASSERT_TRUE(one.Validate().ok());
  EXPECT_EQ(one.Grade(std::nullopt, std::nullopt).name, "all");
  EXPECT_FALSE(one.Decide(std::nullopt, std::nullopt).capped);
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
  t = GradeTable::SeedDefault();
  t.partial_evidence_cap = "great";
  EXPECT_EQ(t.Validate().message(), "partial_evidence_cap: no grade named 'great'");
  t.partial_evidence_cap = "excellent";
  EXPECT_NE(t.Validate().message().find("is the best grade"), std::string::npos);
  t.partial_evidence_cap = "needs_optimization";
  EXPECT_TRUE(t.Validate().ok());
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

  auto capped = ParseAuditConfig("partial_evidence_cap: needs_optimization\n", "cfg.yaml");
  ASSERT_TRUE(capped.has_value()) << capped.error().ToString();
  EXPECT_EQ(capped->grades.Grade(0.1, std::nullopt).name, "needs_optimization");
  EXPECT_EQ(capped->grades.Grade(0.1, 1.0).name, "excellent");
  auto bad_cap = ParseAuditConfig("grades:\n  - {name: gold, energy_ratio_below: 1, weight: 2}\n"
                                  "  - {name: rest, weight: 1}\npartial_evidence_cap: good\n",
                                  "cfg.yaml");
  ASSERT_FALSE(bad_cap.has_value());
  EXPECT_EQ(bad_cap.error().message(),
            "cfg.yaml:4:23: key 'partial_evidence_cap': partial_evidence_cap: no grade named "
            "'good'");

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
