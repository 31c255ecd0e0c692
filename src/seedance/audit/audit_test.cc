#include "seedance/audit/audit.h"

#include <gtest/gtest.h>

#include <cmath>

#include "seedance/audit/gpu_catalog.h"
#include "seedance/audit/synthetic.h"

namespace seedance::audit {
namespace {

constexpr std::int64_t kNow = 1'790'000'000;

std::vector<NodeTelemetry> Fleet(int nodes, std::int64_t hours, std::uint64_t seed = 1) {
  Rng rng(seed);
  std::vector<NodeTelemetry> fleet;
  for (int i = 0; i < nodes; ++i) {
    SyntheticNode n;
    n.host = "node-" + std::to_string(i);
    n.gpus = 2;
    n.with_cpu = true;
    fleet.push_back(GenerateNodeTelemetry(n, kNow - hours * 3600, kNow, 60, rng));
  }
  return fleet;
}

bool HasIssue(const NodeAudit& n, const std::string& needle) {
  for (const auto& i : n.issues) {
    if (i.find(needle) != std::string::npos) return true;
  }
  return false;
}

// The audit's peak and power limit come from the GPU catalog (names are parsed there too:
// gpu/catalog_test.cc).
TEST(GpuAuditSpecTest, ReadsTheGpuCatalog) {
  auto spec = [](const char* name) { return FindGpuAuditSpec(*cluster::ParseGpuModel(name)); };
  ASSERT_TRUE(spec("T4").has_value());
  EXPECT_EQ(spec("T4")->precision, "int8");
  EXPECT_EQ(spec("T4")->dense_tops, 130);
  EXPECT_EQ(spec("T4")->tdp_w, 70);
  EXPECT_EQ(spec("V100M32")->precision, "fp16");  // no INT8 tensor cores
  EXPECT_EQ(spec("V100M32")->dense_tops, 125);
  EXPECT_EQ(spec("H100")->dense_tops, 1979);
  EXPECT_EQ(spec("K80")->tdp_w, 150);  // one GPU of the 300 W board
  EXPECT_FALSE(spec("G2").has_value());
}

TEST(AuditTest, HealthyFleetPassesWithAllTwelveMetrics) {
  auto a = AuditFleet(Fleet(3, 72), AuditConfig{}, kNow);
  ASSERT_TRUE(a.has_value()) << a.error().ToString();
  ASSERT_EQ(a->nodes.size(), 3u);
  for (const NodeAudit& n : a->nodes) {
    EXPECT_EQ(n.outcome, AuditOutcome::kPass) << n.host << " " << (n.issues.empty() ? "" : n.issues[0]);
    EXPECT_NEAR(n.evidence_hours, 72, 0.1);
    // A100 at ~40 % tensor activity is far below 0.18 kW/TOPS, but with no schedule records the
    // deviation is unmeasured, so the grade is capped at "good" (GradeTable).
    EXPECT_EQ(n.grade, "good");
    EXPECT_EQ(n.weight, 1.00);
    EXPECT_EQ(n.grade_missing, std::vector<std::string>{"scheduling_deviation_pct"});
    EXPECT_TRUE(n.grade_capped);
    int measured = 0;
    for (const auto& [name, v] : n.metrics.List()) measured += v.has_value();
    EXPECT_EQ(measured, 11) << "all but the scheduling deviation (no schedule records)";
    // Energy ratio = kW / (624 TOPS x tensor activity).
    const double expected = *n.metrics.mean_power_w / 1000 / (624 * *n.metrics.mean_tensor_active);
    EXPECT_NEAR(*n.metrics.energy_ratio_kw_per_tops, expected, expected * 0.05);
    EXPECT_NEAR(*n.metrics.idle_decay_index, 1 - *n.metrics.mean_gpu_util_pct / 100, 1e-9);
    ASSERT_TRUE(n.diagnostics.cpu_gpu_correlation.has_value());
    EXPECT_GT(*n.diagnostics.cpu_gpu_correlation, 0.5);  // CPU follows GPU in the generator
  }
}

// Bad input (6): every evidence problem names its field and leaves the node incomplete, and
// incomplete evidence never admits a node.
TEST(AuditTest, MissingMetricNamesTheField) {
  auto fleet = Fleet(2, 72);
  fleet[0].gpus[1].col(Field::kPowerW).clear();
  auto a = AuditFleet(fleet, AuditConfig{}, kNow);
  ASSERT_TRUE(a.has_value());
  const NodeAudit& n = a->nodes[0];
  EXPECT_EQ(n.outcome, AuditOutcome::kIncomplete);
  EXPECT_TRUE(HasIssue(n, "GPU GPU-node-0-1: field 'DCGM_FI_DEV_POWER_USAGE' is missing"))
      << n.issues[0];
  EXPECT_EQ(n.grade, "ungraded");
  EXPECT_EQ(n.weight, 0);
  // No energy ratio without every GPU's power: listed as missing, and the node stays ungraded.
  EXPECT_EQ(n.grade_missing,
            (std::vector<std::string>{"energy_ratio_kw_per_tops", "scheduling_deviation_pct"}));
  EXPECT_FALSE(n.grade_capped);
  EXPECT_EQ(a->nodes[1].outcome, AuditOutcome::kPass);
  NodeAdmission rec;
  EXPECT_FALSE(ApplyAudit(AdmissionConfig{}, n.host, n.Verdict(), kNow, rec).has_value());
  EXPECT_EQ(rec.state, AdmissionState::kPending);
}

TEST(AuditTest, AllNaNWindowIsMissingEvidence) {
  auto fleet = Fleet(1, 72);
  for (auto& v : fleet[0].gpus[0].col(Field::kXid)) v = std::nanf("");
  auto a = AuditFleet(fleet, AuditConfig{}, kNow);
  EXPECT_TRUE(HasIssue(a->nodes[0], "field 'DCGM_FI_DEV_XID_ERRORS': no samples in the audit window"));
}

TEST(AuditTest, UnknownGpuModelNamesTheField) {
  auto fleet = Fleet(1, 72);
  fleet[0].gpus[0].model_name = "NVIDIA TITAN V";
  auto a = AuditFleet(fleet, AuditConfig{}, kNow);
  EXPECT_EQ(a->nodes[0].outcome, AuditOutcome::kIncomplete);
  EXPECT_TRUE(HasIssue(a->nodes[0], "field 'modelName': unknown GPU model 'NVIDIA TITAN V'"));
  fleet[0].gpus[0].model_name = "G2";  // recognized, but undisclosed: no TOPS in the catalog
  a = AuditFleet(fleet, AuditConfig{}, kNow);
  EXPECT_TRUE(HasIssue(a->nodes[0], "field 'modelName': GPU model 'G2' has no entry"));
}

TEST(AuditTest, ClockSkewIsIncompleteEvidence) {
  auto fleet = Fleet(1, 72);
  auto& t = fleet[0].gpus[0].t_s;
  std::swap(t[100], t[101]);  // out of order
  auto a = AuditFleet(fleet, AuditConfig{}, kNow);
  EXPECT_TRUE(HasIssue(a->nodes[0], "field 'timestamp': clock skew: sample at"));
  // One GPU's clock runs 10 minutes ahead of the audit time.
  fleet = Fleet(1, 72);
  for (auto& ts : fleet[0].gpus[1].t_s) ts += 600;
  a = AuditFleet(fleet, AuditConfig{}, kNow);
  EXPECT_EQ(a->nodes[0].outcome, AuditOutcome::kIncomplete);
  EXPECT_TRUE(HasIssue(a->nodes[0], "s after the audit time"));
  // The GPUs of a node disagree (one stopped 10 minutes early).
  fleet = Fleet(1, 72);
  for (auto& ts : fleet[0].gpus[1].t_s) ts -= 600;
  a = AuditFleet(fleet, AuditConfig{}, kNow);
  EXPECT_TRUE(HasIssue(a->nodes[0], "latest samples differ by 600 s"));
}

TEST(AuditTest, ShortEvidenceKeepsANodePending) {
  auto a = AuditFleet(Fleet(1, 24), AuditConfig{}, kNow);
  EXPECT_EQ(a->nodes[0].outcome, AuditOutcome::kPass);  // clean, but only 24 h
  NodeAdmission rec;
  (void)ApplyAudit(AdmissionConfig{}, "node-0", a->nodes[0].Verdict(), kNow, rec);
  EXPECT_EQ(rec.state, AdmissionState::kPending);
  a = AuditFleet(Fleet(1, 72), AuditConfig{}, kNow);
  (void)ApplyAudit(AdmissionConfig{}, "node-0", a->nodes[0].Verdict(), kNow, rec);
  EXPECT_EQ(rec.state, AdmissionState::kAdmitted);
}

TEST(AuditTest, FaultsFailTheirCategory) {
  Rng rng(9);
  std::vector<NodeTelemetry> fleet;
  const std::pair<SyntheticFault, double> faults[] = {{SyntheticFault::kXid, 0},
                                                      {SyntheticFault::kHot, 30},
                                                      {SyntheticFault::kEcc, 0}};
  for (int i = 0; i < 3; ++i) {
    SyntheticNode n;
    n.host = "f" + std::to_string(i);
    n.gpus = 1;
    n.fault = faults[i].first;
    n.fault_magnitude = faults[i].second;
    n.fault_start_s = kNow - 3600 * 5;
    fleet.push_back(GenerateNodeTelemetry(n, kNow - 72 * 3600, kNow, 60, rng));
  }
  SyntheticNode app;
  app.host = "f3";
  app.gpus = 1;
  app.fault = SyntheticFault::kXid;
  app.xid_code = 13;  // application error: a warning only
  app.fault_start_s = kNow - 3600;
  fleet.push_back(GenerateNodeTelemetry(app, kNow - 72 * 3600, kNow, 60, rng));
  auto a = AuditFleet(fleet, AuditConfig{}, kNow);
  auto cat = [&](int node, HealthCategory c) {
    return a->nodes[static_cast<std::size_t>(node)].health[static_cast<std::size_t>(c)].result;
  };
  EXPECT_EQ(cat(0, HealthCategory::kXid), HealthResult::kFail);
  EXPECT_EQ(*a->nodes[0].metrics.xid_events, 5);
  EXPECT_EQ(cat(1, HealthCategory::kThermal), HealthResult::kFail);
  EXPECT_EQ(cat(2, HealthCategory::kEcc), HealthResult::kFail);
  EXPECT_EQ(cat(3, HealthCategory::kXid), HealthResult::kWarn);
  EXPECT_EQ(a->nodes[3].outcome, AuditOutcome::kPass);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(a->nodes[static_cast<std::size_t>(i)].outcome, AuditOutcome::kFail);
  EXPECT_NE(a->nodes[0].failures.at(0).find("xid FAIL: GPU-f0-0: XID 79"), std::string::npos);
}

TEST(AuditTest, SchedulingDeviationGradesAndFails) {
  Rng rng(2);
  SyntheticNode n;
  n.host = "d";
  n.gpus = 1;
  n.schedule_deviation = 0.03;  // |start| 1.5 % + |runtime| 1.5 % of planned = 3 %
  std::vector<NodeTelemetry> fleet = {GenerateNodeTelemetry(n, kNow - 72 * 3600, kNow, 60, rng)};
  auto a = AuditFleet(fleet, AuditConfig{}, kNow);
  EXPECT_NEAR(*a->nodes[0].metrics.scheduling_deviation_pct, 3.0, 1e-9);
  EXPECT_EQ(a->nodes[0].grade, "good");
  EXPECT_EQ(a->nodes[0].outcome, AuditOutcome::kPass);
  fleet[0].schedule.clear();
  n.schedule_deviation = 0.06;
  Rng rng2(2);
  fleet = {GenerateNodeTelemetry(n, kNow - 72 * 3600, kNow, 60, rng2)};
  a = AuditFleet(fleet, AuditConfig{}, kNow);
  EXPECT_EQ(a->nodes[0].outcome, AuditOutcome::kFail);  // > 5 % healthy
  AuditConfig strict;
  strict.require_scheduling_deviation = true;
  a = AuditFleet(Fleet(1, 72), strict, kNow);
  EXPECT_TRUE(HasIssue(a->nodes[0], "field 'schedule'"));
}

// No grade without its evidence: the same healthy node is "excellent" (1.25) only when its
// scheduling deviation was measured (1 %); without schedule records it is capped at "good".
TEST(AuditTest, ExcellentNeedsMeasuredSchedulingDeviation) {
  SyntheticNode n;
  n.host = "e";
  n.gpus = 2;
  n.schedule_deviation = 0.01;  // |start| 0.5 % + |runtime| 0.5 % of planned = 1 %
  Rng rng(3);
  std::vector<NodeTelemetry> fleet = {GenerateNodeTelemetry(n, kNow - 72 * 3600, kNow, 60, rng)};
  auto a = AuditFleet(fleet, AuditConfig{}, kNow);
  ASSERT_TRUE(a.has_value());
  const NodeAudit& with = a->nodes[0];
  EXPECT_NEAR(*with.metrics.scheduling_deviation_pct, 1.0, 1e-9);
  EXPECT_LT(*with.metrics.energy_ratio_kw_per_tops, 0.18);
  EXPECT_EQ(with.grade, "excellent");
  EXPECT_EQ(with.weight, 1.25);
  EXPECT_TRUE(with.grade_missing.empty());
  EXPECT_FALSE(with.grade_capped);
  fleet[0].schedule.clear();
  a = AuditFleet(fleet, AuditConfig{}, kNow);
  const NodeAudit& without = a->nodes[0];
  EXPECT_EQ(without.grade, "good");
  EXPECT_EQ(without.weight, 1.00);
  EXPECT_EQ(without.grade_missing, std::vector<std::string>{"scheduling_deviation_pct"});
  EXPECT_TRUE(without.grade_capped);
  EXPECT_EQ(without.outcome, AuditOutcome::kPass);  // capped, not failed
}

TEST(AuditTest, DuplicateHostIsAnError) {
  auto fleet = Fleet(2, 2);
  fleet[1].host = fleet[0].host;
  EXPECT_EQ(AuditFleet(fleet, AuditConfig{}, kNow).error().code(), StatusCode::kInvalidArgument);
}

TEST(AuditTest, PulseWorkloadAndOverReservedMemoryAreFound) {
  Rng rng(4);
  SyntheticNode n;
  n.host = "p";
  n.gpus = 2;
  auto t = GenerateNodeTelemetry(n, kNow - 72 * 3600, kNow, 60, rng);
  // GPU pulses on and off every 10 minutes while the CPU stays flat.
  for (auto& g : t.gpus) {
    auto& u = g.col(Field::kGpuUtilPct);
    for (std::size_t i = 0; i < u.size(); ++i) u[i] = (g.t_s[i] / 600) % 2 == 0 ? 95.0f : 2.0f;
    g.memory_reserved_mib = 400000;
  }
  t.cpu_t_s = t.gpus[0].t_s;
  t.cpu_util_pct.assign(t.cpu_t_s.size(), 0);
  for (std::size_t i = 0; i < t.cpu_util_pct.size(); ++i) {
    t.cpu_util_pct[i] = static_cast<float>(30 + 5 * rng.Normal());
  }
  auto a = AuditFleet({t}, AuditConfig{}, kNow);
  const Diagnostics& d = a->nodes[0].diagnostics;
  ASSERT_TRUE(d.cpu_gpu_correlation.has_value());
  EXPECT_LT(std::abs(*d.cpu_gpu_correlation), 0.3);
  ASSERT_EQ(d.findings.size(), 2u);
  EXPECT_NE(d.findings[0].find("pulse workload"), std::string::npos);
  EXPECT_NE(d.findings[1].find("over-reserved"), std::string::npos);
}

}  // namespace
}  // namespace seedance::audit
