#include "seedance/audit/admission.h"

#include <gtest/gtest.h>

namespace seedance::audit {
namespace {

using S = AdmissionState;
using O = AuditOutcome;

struct EdgeCase {
  const char* name;
  NodeAdmission before;
  O outcome;
  double evidence_hours;
  S after;
  bool transition;
};

NodeAdmission Rec(S s, int failures = 0, int clean = 0) {
  NodeAdmission r;
  r.state = s;
  r.consecutive_failures = failures;
  r.clean_audits = clean;
  return r;
}

// Every edge of the S7.3 machine with removal_failures 2 and recovery_clean_audits 3.
TEST(AdmissionTest, EveryEdge) {
  const AdmissionConfig cfg;  // 48 h, 2 failures, 3 clean audits
  const EdgeCase cases[] = {
      {"pending pass 48h -> admitted", Rec(S::kPending), O::kPass, 48.0, S::kAdmitted, true},
      {"pending pass 47.9h stays", Rec(S::kPending), O::kPass, 47.9, S::kPending, false},
      {"pending incomplete stays", Rec(S::kPending), O::kIncomplete, 72, S::kPending, false},
      {"pending fail stays", Rec(S::kPending), O::kFail, 72, S::kPending, false},
      {"admitted pass stays", Rec(S::kAdmitted), O::kPass, 72, S::kAdmitted, false},
      {"admitted fail -> observation", Rec(S::kAdmitted), O::kFail, 72, S::kObservation, true},
      {"admitted incomplete -> observation", Rec(S::kAdmitted), O::kIncomplete, 1,
       S::kObservation, true},
      {"observation fail -> removed", Rec(S::kObservation, 1), O::kFail, 72, S::kRemoved, true},
      {"observation incomplete -> removed", Rec(S::kObservation, 1), O::kIncomplete, 72,
       S::kRemoved, true},
      {"observation pass 1 stays", Rec(S::kObservation, 1, 0), O::kPass, 72, S::kObservation,
       false},
      {"observation pass 3rd -> admitted", Rec(S::kObservation, 0, 2), O::kPass, 72, S::kAdmitted,
       true},
      {"observation fail after a pass stays", Rec(S::kObservation, 0, 1), O::kFail, 72,
       S::kObservation, false},
      {"removed fail stays", Rec(S::kRemoved, 2), O::kFail, 72, S::kRemoved, false},
      {"removed pass 2nd stays", Rec(S::kRemoved, 0, 1), O::kPass, 72, S::kRemoved, false},
      {"removed pass 3rd -> admitted", Rec(S::kRemoved, 0, 2), O::kPass, 72, S::kAdmitted, true},
      {"removed incomplete resets", Rec(S::kRemoved, 0, 2), O::kIncomplete, 72, S::kRemoved,
       false},
  };
  for (const EdgeCase& c : cases) {
    NodeAdmission r = c.before;
    AuditVerdict v{c.outcome, c.evidence_hours, {"evidence-1"}};
    auto t = ApplyAudit(cfg, "n1", v, 1000, r);
    EXPECT_EQ(r.state, c.after) << c.name;
    EXPECT_EQ(t.has_value(), c.transition) << c.name;
    if (t.has_value()) {
      EXPECT_EQ(t->from, c.before.state) << c.name;
      EXPECT_EQ(t->to, c.after) << c.name;
      EXPECT_EQ(t->evidence, std::vector<std::string>{"evidence-1"}) << c.name;
      EXPECT_FALSE(t->reason.empty()) << c.name;
      EXPECT_EQ(r.since_s, 1000) << c.name;
    }
  }
}

TEST(AdmissionTest, FullLifecycleWithRecoveryAndConfigurableCounts) {
  AdmissionConfig cfg;
  cfg.removal_failures = 3;
  cfg.recovery_clean_audits = 2;
  NodeAdmission r;
  std::vector<S> path;
  const O seq[] = {O::kPass, O::kFail, O::kFail, O::kFail, O::kPass, O::kFail,
                   O::kPass, O::kPass, O::kFail, O::kPass, O::kPass};
  std::int64_t now = 0;
  for (O o : seq) {
    (void)ApplyAudit(cfg, "n", AuditVerdict{o, 72, {}}, now += 3600, r);
    path.push_back(r.state);
  }
  const std::vector<S> expected = {S::kAdmitted,    S::kObservation, S::kObservation,
                                   S::kRemoved,     S::kRemoved,     S::kRemoved,
                                   S::kRemoved,     S::kAdmitted,    S::kObservation,
                                   S::kObservation, S::kAdmitted};
  EXPECT_EQ(path, expected);
  cfg.removal_failures = 1;
  NodeAdmission one = Rec(S::kAdmitted);
  (void)ApplyAudit(cfg, "n", AuditVerdict{O::kFail, 72, {}}, 1, one);
  EXPECT_EQ(one.state, S::kRemoved);
}

TEST(AdmissionTest, EligibilityPerState) {
  EXPECT_EQ(EligibilityOf(S::kAdmitted), cluster::NodeEligibility::kAll);
  EXPECT_EQ(EligibilityOf(S::kObservation), cluster::NodeEligibility::kBestEffortOnly);
  EXPECT_EQ(EligibilityOf(S::kRemoved), cluster::NodeEligibility::kNone);
  EXPECT_EQ(EligibilityOf(S::kPending), cluster::NodeEligibility::kNone);
}

TEST(AdmissionTest, LedgerRoundTripsAndNamesBadFields) {
  AdmissionLedger l;
  NodeAdmission r = Rec(S::kObservation, 1, 0);
  r.grade = "good";
  r.since_s = 42;
  l.nodes["b"] = r;
  l.nodes["a"] = Rec(S::kAdmitted);
  l.log.push_back(Transition{"b", 42, S::kAdmitted, S::kObservation, "failed audit", {"xid FAIL"}});
  const std::string text = l.ToJson();
  auto back = AdmissionLedger::FromJson(text, "state.json");
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(back->ToJson(), text);
  EXPECT_EQ(back->nodes.at("b").state, S::kObservation);
  auto bad = AdmissionLedger::FromJson(R"({"nodes":{"x":{"state":"gone"}}})", "state.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("field 'nodes.x.since'"), std::string::npos)
      << bad.error().message();
}

}  // namespace
}  // namespace seedance::audit
