#include "seedance/sim/kueue_scenario.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>

namespace seedance::sim {
namespace {

const KueueResult& Baseline() {
  static const KueueResult r = *RunKueueScenario(KueueScenarioSpec{}, KueueRunOptions{});
  return r;
}

TEST(KueueScenarioTest, GeneratesTheBaselineExactly) {
  const KueueScenarioSpec spec;
  const auto wls = GenerateKueueWorkloads(spec);
  ASSERT_EQ(wls.size(), 15000u);
  std::map<int, int> per_class;
  std::map<int, int> per_cq;
  for (const auto& w : wls) {
    ++per_class[w.klass];
    ++per_cq[w.cq];
  }
  EXPECT_EQ(per_class[0], 10500);
  EXPECT_EQ(per_class[1], 3000);
  EXPECT_EQ(per_class[2], 1500);
  ASSERT_EQ(per_cq.size(), 30u);
  for (const auto& [cq, n] : per_cq) EXPECT_EQ(n, 500) << cq;
  EXPECT_EQ(KueueCqName(spec, 0), "cq-0-0-cohort-0");
  EXPECT_EQ(KueueCqName(spec, 29), "cq-0-5-cohort-4");
  // The interval is waited before each create: the first small at 100 ms, the last at 35 s.
  EXPECT_EQ(wls[0].name, "small-0-0-0");
  EXPECT_EQ(wls[0].created_us, 100000);
  EXPECT_EQ(wls[349].created_us, 35000000);
  EXPECT_EQ(wls[350].name, "medium-1-0-0");
  EXPECT_EQ(wls[449].created_us, 50000000);
  EXPECT_EQ(wls[450].name, "large-2-0-0");
  EXPECT_EQ(wls[499].created_us, 60000000);
  EXPECT_EQ(wls[499].runtime_us, 1000000);
}

TEST(KueueScenarioTest, UsageAndClassOrderAsKueueReports) {
  const KueueResult& r = Baseline();
  ASSERT_EQ(r.classes.size(), 3u);
  EXPECT_EQ(r.classes[0].count, 10500);
  EXPECT_EQ(r.classes[1].count, 3000);
  EXPECT_EQ(r.classes[2].count, 1500);
  EXPECT_GE(r.usage_pct, 55.9);  // Kueue's measured average with hashing
  EXPECT_LE(r.usage_pct, 100.0);
  // large < medium < small (priority order).
  EXPECT_LT(r.classes[2].mean_admission_s, r.classes[1].mean_admission_s);
  EXPECT_LT(r.classes[1].mean_admission_s, r.classes[0].mean_admission_s);
  EXPECT_GE(r.admissions, 15000);
  EXPECT_EQ(r.admissions, 15000 + r.preemptions);  // every eviction is followed by one re-admission
}

TEST(KueueScenarioTest, EvictedWorkloadsRerunTheirFullRuntimeInBaseline) {
  const KueueResult& r = Baseline();
  const auto wls = GenerateKueueWorkloads(KueueScenarioSpec{});
  std::int64_t evicted = 0;
  for (std::size_t i = 0; i < wls.size(); ++i) {
    const auto& o = r.workloads[i];
    EXPECT_EQ(o.finished_us, o.last_admitted_us + wls[i].runtime_us) << wls[i].name;
    EXPECT_EQ(o.admissions, o.evictions + 1) << wls[i].name;
    evicted += o.evictions;
  }
  EXPECT_EQ(evicted, r.preemptions);
}

// Two CQs of one cohort; each fills its nominal 20 with long smalls, then one large (priority 200,
// 20 cpu) per CQ preempts its own queue's smalls (withinClusterQueue LowerPriority). The victims
// rerun their full 10 s after re-admission.
TEST(KueueScenarioTest, PreemptedWorkloadRerunsItsFullRuntime) {
  KueueScenarioSpec spec;
  spec.cohorts = 1;
  spec.queues_per_cohort = 2;
  spec.classes = {{"small", 20, 1, 1, 10000, 50}, {"large", 1, 100, 20, 1000, 200}};
  auto r = RunKueueScenario(spec, {});
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->preemptions, 40);
  const auto wls = GenerateKueueWorkloads(spec);
  int rerun = 0;
  for (std::size_t i = 0; i < wls.size(); ++i) {
    const auto& o = r->workloads[i];
    if (wls[i].klass == 1) {
      EXPECT_EQ(o.last_admitted_us, 100000);  // admitted once its victims are released, at once
      EXPECT_EQ(o.finished_us, 1100000);
      continue;
    }
    ASSERT_EQ(o.evictions, 1) << wls[i].name;
    EXPECT_EQ(o.last_admitted_us, 1100000) << wls[i].name;  // when the large finished
    EXPECT_EQ(o.finished_us, o.last_admitted_us + 10000000) << wls[i].name;
    ++rerun;
  }
  EXPECT_EQ(rerun, 40);
  EXPECT_EQ(r->classes[0].evictions, 40);
}

TEST(KueueScenarioTest, DeterministicJson) {
  auto a = RunKueueScenario(KueueScenarioSpec{}, {});
  ASSERT_TRUE(a.has_value());
  const std::string ja = KueueResultJson(KueueScenarioSpec{}, {}, *a).dump(2);
  const std::string jb = KueueResultJson(KueueScenarioSpec{}, {}, Baseline()).dump(2);
  EXPECT_EQ(ja, jb);
  EXPECT_EQ(ja.find("timing"), std::string::npos);
}

TEST(KueueScenarioTest, ApiRateLimitStretchesAdmissions) {
  // The model of the API bound: 50 writes/s, burst 100. At most 100 + 50 t writes by time t.
  KueueRunOptions o;
  o.api_qps = 50;
  auto r = RunKueueScenario(KueueScenarioSpec{}, o);
  ASSERT_TRUE(r.has_value());
  EXPECT_GE(r->end_s, static_cast<double>(r->admissions + r->preemptions - 100) / 50.0);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_GT(r->classes[k].mean_admission_s, Baseline().classes[k].mean_admission_s);
  EXPECT_LT(r->classes[2].mean_admission_s, r->classes[0].mean_admission_s);
}

TEST(KueueScenarioTest, RejectsBadSpecs) {
  KueueScenarioSpec spec;
  spec.classes[0].request_cpu = 121;  // above min(20 + 100, 6 x 20)
  EXPECT_EQ(RunKueueScenario(spec, {}).error().code(), StatusCode::kInvalidArgument);
  spec = {};
  spec.cohorts = 0;
  EXPECT_EQ(RunKueueScenario(spec, {}).error().code(), StatusCode::kInvalidArgument);
  KueueRunOptions o;
  o.api_qps = -1;
  EXPECT_EQ(RunKueueScenario(KueueScenarioSpec{}, o).error().code(), StatusCode::kInvalidArgument);
}

TEST(KueueScenarioTest, TimingOnlyWhenAClockIsInjected) {
  KueueScenarioSpec spec;
  spec.cohorts = 1;
  spec.queues_per_cohort = 2;
  spec.classes = {{"small", 5, 10, 1, 100, 50}};
  double t = 0;
  KueueRunOptions o;
  o.cpu_clock = [&t] { return t += 0.25; };
  auto r = RunKueueScenario(spec, o);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->timed);
  EXPECT_DOUBLE_EQ(r->cpu_seconds, 0.25);
  EXPECT_TRUE(KueueResultJson(spec, o, *r).contains("timing"));
}

// Issue 29: the same scenario under Kueue's Fair Sharing (each strategy list) runs every workload
// to completion, keeps every eviction matched by a re-admission, and differs from the classic run
// (fair sharing reorders admissions by dominant resource share).
TEST(KueueScenarioTest, FairSharingModesRunTheBaseline) {
  const KueueScenarioSpec spec;
  const KueueResult& classic = Baseline();
  for (auto mode : {tenancy::TenancyMode::kFairSharing, tenancy::TenancyMode::kFairSharingFinal,
                    tenancy::TenancyMode::kFairSharingInitial}) {
    KueueRunOptions o;
    o.mode = mode;
    auto r = RunKueueScenario(spec, o);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_EQ(r->admissions, 15000 + r->preemptions) << tenancy::TenancyModeName(mode);
    EXPECT_LE(r->usage_pct, 100.0);
    std::printf("%-20s usage %.1f%% preemptions %lld admission mean s: small %.1f medium %.1f large %.1f\n",
                std::string(tenancy::TenancyModeName(mode)).c_str(), r->usage_pct,
                static_cast<long long>(r->preemptions), r->classes[0].mean_admission_s,
                r->classes[1].mean_admission_s, r->classes[2].mean_admission_s);
    EXPECT_NE(KueueResultJson(spec, o, *r).dump(), KueueResultJson(spec, {}, classic).dump());
  }
  std::printf("%-20s usage %.1f%% preemptions %lld admission mean s: small %.1f medium %.1f large %.1f\n", "kueue",
              classic.usage_pct, static_cast<long long>(classic.preemptions), classic.classes[0].mean_admission_s,
              classic.classes[1].mean_admission_s, classic.classes[2].mean_admission_s);
  KueueRunOptions bad;
  bad.mode = tenancy::TenancyMode::kSeedance;
  EXPECT_FALSE(RunKueueScenario(spec, bad).has_value());
}

}  // namespace
}  // namespace seedance::sim
