// Enforcement scenario (issue 6, "must show" 3): a simulated fleet with a node whose power
// drifts and one with XID errors; both reach observation, then removal, within the configured
// audits, and the scheduler places nothing new on removed nodes (and only Bronze work on nodes
// under observation).
#include <gtest/gtest.h>

#include "seedance/audit/enforcement.h"

namespace seedance::audit {
namespace {

TEST(AuditEnforcementTest, FaultyNodesAreObservedThenRemovedAndGetNoNewWork) {
  const EnforcementSpec spec = DefaultEnforcementSpec();
  auto r = RunEnforcementScenario(spec);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  ASSERT_EQ(r->epochs.size(), 7u);
  const std::size_t drift = 2, xid = 5;
  using S = AdmissionState;
  // Epochs 0-1: everyone pending (48 h of telemetry first), nothing is placed.
  for (int e = 0; e < 2; ++e) {
    for (std::size_t i = 0; i < r->hosts.size(); ++i) {
      EXPECT_EQ(r->epochs[static_cast<std::size_t>(e)].state[i], S::kPending);
      EXPECT_EQ(r->epochs[static_cast<std::size_t>(e)].placed_guaranteed[i] +
                    r->epochs[static_cast<std::size_t>(e)].placed_best_effort[i],
                0);
    }
  }
  // The faulty nodes go admitted -> observation -> removed on consecutive audits.
  for (std::size_t node : {drift, xid}) {
    std::vector<S> path;
    for (const auto& e : r->epochs) path.push_back(e.state[node]);
    auto first = [&](S s) { return std::find(path.begin(), path.end(), s) - path.begin(); };
    ASSERT_LT(first(S::kObservation), 7) << r->hosts[node];
    ASSERT_LT(first(S::kRemoved), 7) << r->hosts[node];
    EXPECT_EQ(first(S::kRemoved), first(S::kObservation) + 1) << r->hosts[node];
    EXPECT_EQ(first(S::kObservation), first(S::kAdmitted) + (node == xid ? 2 : 3))
        << r->hosts[node];
    EXPECT_EQ(r->ledger.nodes.at(r->hosts[node]).state, S::kRemoved);
  }
  // Healthy nodes stay admitted from epoch 2 on.
  for (std::size_t i = 0; i < r->hosts.size(); ++i) {
    if (i == drift || i == xid) continue;
    for (std::size_t e = 2; e < r->epochs.size(); ++e) {
      EXPECT_EQ(r->epochs[e].state[i], S::kAdmitted) << r->hosts[i] << " epoch " << e;
    }
  }
  // Enforcement: no new work on removed (or pending) nodes, only Bronze on observation nodes.
  int observed_bronze = 0;
  for (const auto& e : r->epochs) {
    for (std::size_t i = 0; i < r->hosts.size(); ++i) {
      if (e.state[i] == S::kRemoved || e.state[i] == S::kPending) {
        EXPECT_EQ(e.placed_guaranteed[i] + e.placed_best_effort[i], 0) << r->hosts[i];
      }
      if (e.state[i] == S::kObservation) {
        EXPECT_EQ(e.placed_guaranteed[i], 0) << r->hosts[i];
        observed_bronze += e.placed_best_effort[i];
      }
    }
  }
  EXPECT_GT(observed_bronze, 0);
  // Every transition is logged with evidence naming the fault.
  bool drift_logged = false, xid_logged = false;
  for (const Transition& t : r->ledger.log) {
    if (t.to != S::kObservation) continue;
    ASSERT_FALSE(t.evidence.empty()) << t.node;
    drift_logged |= t.node == "node-2" && t.evidence[0].find("power FAIL") != std::string::npos;
    xid_logged |= t.node == "node-5" && t.evidence[0].find("XID 79") != std::string::npos;
  }
  EXPECT_TRUE(drift_logged);
  EXPECT_TRUE(xid_logged);
  // Deterministic.
  auto again = RunEnforcementScenario(spec);
  EXPECT_EQ(again->ledger.ToJson(), r->ledger.ToJson());
}

// The placement weight is the grade's after the partial-evidence cap: two healthy, identical
// nodes, node-0 without schedule records (capped at "good", 1.00 rather than 1.25 on energy
// alone) and node-1 with them (1 % deviation: "excellent", 1.25). Ties go to node-0, so node-1
// draws the work only through its weight.
TEST(AuditEnforcementTest, PlacementUsesTheCappedGradeWeight) {
  EnforcementSpec spec;
  for (int i = 0; i < 2; ++i) {
    SyntheticNode n;
    n.host = "node-" + std::to_string(i);
    n.activity = 0.5;
    n.schedule_deviation = i == 1 ? 0.01 : 0;
    spec.nodes.push_back(n);
  }
  spec.epochs = 3;
  spec.pods_per_epoch = 8;
  auto r = RunEnforcementScenario(spec);
  ASSERT_TRUE(r.has_value()) << r.error().ToString();
  EXPECT_EQ(r->last_audit.nodes[0].grade, "good");
  EXPECT_TRUE(r->last_audit.nodes[0].grade_capped);
  EXPECT_EQ(r->last_audit.nodes[1].grade, "excellent");
  const EnforcementEpoch& e = r->epochs.back();
  ASSERT_EQ(e.state, (std::vector<AdmissionState>{AdmissionState::kAdmitted,
                                                  AdmissionState::kAdmitted}));
  EXPECT_EQ(e.weight, (std::vector<double>{1.00, 1.25}));
  EXPECT_GT(e.placed_guaranteed[1] + e.placed_best_effort[1],
            e.placed_guaranteed[0] + e.placed_best_effort[0]);
}

}  // namespace
}  // namespace seedance::audit
