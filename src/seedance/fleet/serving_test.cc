#include "seedance/fleet/serving.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace seedance::fleet {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;

std::string TempDir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("seedance_serving_test_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string WriteFile(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// A hand-made profile: two types, two buckets. Type 0 ("L4") serves bucket 0 at 2 req/s and
// bucket 1 at 0.5 req/s; type 1 ("H100") 8 and 8. Shares 0.5 / 0.5.
ServingProfile TwoTypes() {
  ServingProfile p;
  p.policy = "vllm";
  p.gpus = {"L4", "H100"};
  p.tp = {1, 1};
  p.bucket_share = {0.5, 0.5};
  p.bucket_names = {"short", "long"};
  p.bucket_rps = {{2.0, 0.5}, {8.0, 8.0}};
  p.replica_rps = {1 / (0.5 / 2.0 + 0.5 / 0.5), 8.0};  // 0.8, 8
  p.tokens_per_request = 1000;
  return p;
}
const std::vector<double> kPrices = {0.8, 10.0};  // L4 cheaper per req/s: 1 $/req/s vs 1.25

ServingProfile OneType(double replica_rps) {
  ServingProfile p;
  p.policy = "vllm";
  p.gpus = {"A100-80G"};
  p.tp = {1};
  p.bucket_share = {1.0};
  p.bucket_names = {"all"};
  p.bucket_rps = {{replica_rps}};
  p.replica_rps = {replica_rps};
  p.tokens_per_request = 500;
  return p;
}

// Issue 39 item 2: Seedance's batching takes, per type, the engine that serves more of the mix
// within SLO; ties, and a type where Seedance's engine misses a bucket vLLM serves, stay on vLLM.
TEST(ServingEnginesTest, EachTypeRunsTheEngineThatServesMoreOfTheMix) {
  ServingProfile vllm = TwoTypes();
  vllm.gpus = {"L4", "H100", "A100-80G"};
  vllm.tp = {1, 1, 1};
  vllm.bucket_rps = {{2.0, 0.5}, {8.0, 8.0}, {4.0, 4.0}};
  vllm.replica_rps = {0.8, 8.0, 4.0};
  ServingProfile seedance = vllm;
  seedance.policy = "seedance";
  seedance.bucket_rps = {{3.0, 0.0}, {12.0, 6.0}, {4.0, 4.0}};  // L4 misses "long"; H100 8 req/s; a tie on A100
  seedance.replica_rps = {0.0, 1 / (0.5 / 12.0 + 0.5 / 6.0), 4.0};
  const ServingProfile chosen = BetterEnginePerType(vllm, seedance);
  EXPECT_EQ(chosen.policy, "seedance");
  EXPECT_EQ(chosen.bucket_rps[0], vllm.bucket_rps[0]);  // serves half the mix only: vLLM
  EXPECT_DOUBLE_EQ(chosen.replica_rps[0], 0.8);
  EXPECT_EQ(chosen.bucket_rps[2], vllm.bucket_rps[2]);  // a tie: vLLM
  EXPECT_EQ(chosen.bucket_rps[1], vllm.bucket_rps[1]);  // 8 = 8: a tie too
  seedance.bucket_rps[1] = {12.0, 7.0};                 // 8.84 req/s of the mix: Seedance's engine
  seedance.replica_rps[1] = 1 / (0.5 / 12.0 + 0.5 / 7.0);
  const ServingProfile faster = BetterEnginePerType(vllm, seedance);
  EXPECT_EQ(faster.bucket_rps[1], seedance.bucket_rps[1]);
  EXPECT_DOUBLE_EQ(faster.replica_rps[1], seedance.replica_rps[1]);
  for (std::size_t k = 0; k < faster.gpus.size(); ++k) EXPECT_GE(faster.replica_rps[k], vllm.replica_rps[k]) << k;
  ServingProfile other = seedance;  // profiles of different types are not compared
  other.gpus = {"L4", "H100", "A10G"};
  const ServingProfile kept = BetterEnginePerType(vllm, other);
  EXPECT_EQ(kept.bucket_rps, other.bucket_rps);
  EXPECT_NE(kept.notes.back().find("not compared"), std::string::npos);
}

TEST(ServingWeeklyShapeTest, BundledShapeLoads) {
  auto s = LoadWeeklyShape(kData + "/fleet_week/weekly_shape.csv");
  ASSERT_TRUE(s.has_value()) << s.error().message();
  ASSERT_EQ(s->hourly.size(), 168u);
  double sum = 0;
  for (double f : s->hourly) sum += f;
  EXPECT_NEAR(sum / 168, 1.0, 1e-4);
  // A research cluster's week: weekday hours above the weekend's (Sat 00:00 = hour 120).
  double weekday = 0, weekend = 0;
  for (int h = 0; h < 120; ++h) weekday += s->hourly[static_cast<std::size_t>(h)] / 120;
  for (int h = 120; h < 168; ++h) weekend += s->hourly[static_cast<std::size_t>(h)] / 48;
  EXPECT_GT(weekday, weekend);
}

TEST(ServingWeeklyShapeTest, ErrorsNameFileLineAndField) {
  const std::string dir = TempDir("shape");
  std::string rows = "hour_of_week,factor\n";
  for (int h = 0; h < 168; ++h) rows += std::to_string(h) + ",1\n";
  ASSERT_TRUE(LoadWeeklyShape(WriteFile(dir, "ok.csv", rows)).has_value());

  std::string bad = rows;
  bad.replace(bad.find("\n5,1\n"), 5, "\n5,x\n");
  auto e = LoadWeeklyShape(WriteFile(dir, "bad.csv", bad));
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message().find("bad.csv:7"), std::string::npos) << e.error().message();
  EXPECT_NE(e.error().message().find("factor"), std::string::npos) << e.error().message();

  std::string order = rows;
  order.replace(order.find("\n5,1\n"), 5, "\n9,1\n");
  e = LoadWeeklyShape(WriteFile(dir, "order.csv", order));
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message().find("hour_of_week"), std::string::npos) << e.error().message();

  e = LoadWeeklyShape(WriteFile(dir, "short.csv", "hour_of_week,factor\n0,1\n"));
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message().find("168"), std::string::npos) << e.error().message();

  std::string mean = rows;
  mean.replace(mean.find("\n5,1\n"), 5, "\n5,3\n");
  e = LoadWeeklyShape(WriteFile(dir, "mean.csv", mean));
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message().find("mean 1"), std::string::npos) << e.error().message();

  e = LoadWeeklyShape(WriteFile(dir, "col.csv", "hour,factor\n"));
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message().find("hour_of_week"), std::string::npos) << e.error().message();
}

TEST(ServingDemandTest, DeterministicMeanNearTheRateAndWeeksDiffer) {
  auto shape = LoadWeeklyShape(kData + "/fleet_week/weekly_shape.csv");
  ASSERT_TRUE(shape.has_value());
  DeploymentSpec d;
  d.name = "chat";
  d.mean_rate_rps = 4;
  auto a = BuildDemand(d, *shape, kData, 0, 1);
  auto b = BuildDemand(d, *shape, kData, 0, 1);
  auto c = BuildDemand(d, *shape, kData, 1, 1);
  ASSERT_TRUE(a.has_value()) << a.error().message();
  ASSERT_TRUE(c.has_value());
  ASSERT_EQ(a->rps.size(), 7u * 1440);
  EXPECT_EQ(a->rps, b->rps);
  EXPECT_NE(a->rps, c->rps);
  EXPECT_NEAR(a->Mean(), 4.0, 0.2);
  EXPECT_NEAR(c->Mean(), 4.0, 0.2);
  EXPECT_GT(a->Peak(), 2 * a->Mean());  // the hour-of-week shape and the minute bursts
  EXPECT_GT(a->tokens_per_request, 100);
  // The hour-of-week shape: hour means follow the factors.
  double hour0 = 0;
  for (std::size_t k = 0; k < 60; ++k) hour0 += a->rps[k] / 60;
  EXPECT_NEAR(hour0 / (4 * shape->hourly[0]), 1.0, 0.35);
  auto two = BuildDemand(d, *shape, kData, 0, 1, 2);
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->rps.size(), 2u * 1440);
  d.mean_rate_rps = 0;
  EXPECT_FALSE(BuildDemand(d, *shape, kData, 0, 1).has_value());
  d.mean_rate_rps = 1;
  d.trace = "arena";
  EXPECT_FALSE(BuildDemand(d, *shape, kData, 0, 1).has_value());
}

TEST(ServingMixTest, CheapestMixNeverDearerThanTheBestSingleType) {
  const ServingProfile p = TwoTypes();
  for (double rps : {0.3, 1.0, 2.5, 7.0, 19.0, 40.0}) {
    auto m = CheapestMix(p, rps, kPrices);
    ASSERT_TRUE(m.has_value()) << m.error().message();
    const double mix_usd = m->replicas[0] * kPrices[0] + m->replicas[1] * kPrices[1];
    double best = 1e18;
    for (std::size_t g = 0; g < 2; ++g) best = std::min(best, std::ceil(rps / p.replica_rps[g] - 1e-9) * kPrices[g]);
    EXPECT_LE(mix_usd, best + 1e-9) << rps;
    EXPECT_GE(MaxServedRps(p, *m), rps - 1e-6) << rps;  // and it serves the rate
    EXPECT_DOUBLE_EQ(ServedShare(p, *m, rps), 1.0);
  }
  // L4 for the short bucket, H100 for the long one beats both single types at 19 req/s.
  auto m = CheapestMix(p, 19.0, kPrices);
  ASSERT_TRUE(m.has_value());
  EXPECT_GT(m->replicas[0], 0);
  EXPECT_GT(m->replicas[1], 0);
  EXPECT_EQ(CheapestMix(p, 0, kPrices)->replicas, (std::vector<int>{0, 0}));
  EXPECT_FALSE(CheapestMix(p, 1, {1.0}).has_value());
}

// Issue 39 round 6 (one cost model): a type whose cloud pool sells only 8-GPU nodes pays whole
// nodes. The A100-80G serves 1 req/s a replica at $1, the H100 2 req/s at $3: GPU by GPU the
// A100-80G is cheaper per req/s, but three replicas of it hold a whole 8-GPU node ($8), where two
// H100 replicas cost $6. Eight of them fill the node and stay the cheapest.
TEST(ServingMixTest, ATypeSoldInWholeNodesPaysTheNode) {
  ServingProfile p;
  p.policy = "vllm";
  p.gpus = {"A100-80G", "H100"};
  p.tp = {1, 1};
  p.bucket_share = {1.0};
  p.bucket_names = {"all"};
  p.bucket_rps = {{1.0}, {2.0}};
  p.replica_rps = {1.0, 2.0};
  p.tokens_per_request = 1000;
  const std::vector<double> prices = {1.0, 3.0};
  EXPECT_EQ(CheapestMix(p, 2.5, prices)->replicas, (std::vector<int>{3, 0}));
  EXPECT_EQ(CheapestMix(p, 2.5, prices, {8, 1})->replicas, (std::vector<int>{0, 2}));
  EXPECT_EQ(CheapestMix(p, 7.5, prices, {8, 1})->replicas, (std::vector<int>{8, 0}));
  EXPECT_EQ(CheapestMix(p, 2.5, prices, {1, 1})->replicas, CheapestMix(p, 2.5, prices)->replicas);
  // The controller prices its mixes the same way once told the node sizes.
  ServingPolicy pol;
  pol.mix = true;
  pol.target_utilization = 1.0;
  ServingController c(p, pol, prices, 2.5, 60, 300);
  const std::vector<double> past(10, 2.5);
  EXPECT_EQ(c.Desired(10, past).replicas, (std::vector<int>{3, 0}));
  c.SetNodeGpus({8, 1});
  EXPECT_EQ(c.Desired(10, past).replicas, (std::vector<int>{0, 2}));
}

TEST(ServingMixTest, ServedShareOneWhenCapacitySufficesLessWhenNot) {
  const ServingProfile p = TwoTypes();
  EXPECT_DOUBLE_EQ(ServedShare(p, ServingMix{{5, 0}}, 4.0), 1.0);  // 5 x 0.8
  EXPECT_NEAR(ServedShare(p, ServingMix{{5, 0}}, 8.0), 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(ServedShare(p, ServingMix{{0, 0}}, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(ServedShare(p, ServingMix{{0, 0}}, 0.0), 1.0);
  // Mixed: 1 L4 + 1 H100. The L4 is best on short requests (2 req/s), the H100 serves 8 req/s of
  // either: a = 2 + 8 = 10 req/s (5 short: 2 on the L4, 3 on the H100; 5 long on the H100).
  const double lp = MaxServedRps(p, ServingMix{{1, 1}});
  EXPECT_NEAR(lp, 10.0, 1e-6);
  EXPECT_DOUBLE_EQ(ServedShare(p, ServingMix{{1, 1}}, 10.0 - 1e-6), 1.0);
  EXPECT_NEAR(ServedShare(p, ServingMix{{1, 1}}, 20.0), 0.5, 1e-6);
}

// A hand-made step demand: 1 req/s for 20 minutes, 10 req/s for 20, then 1 again.
Demand StepDemand() {
  Demand d;
  d.step_s = 60;
  for (int k = 0; k < 60; ++k) d.rps.push_back(k >= 20 && k < 40 ? 10.0 : 1.0);
  return d;
}

TEST(ServingControllerTest, ReactiveFollowsHpaSemantics) {
  const ServingProfile p = OneType(1.0);
  ServingPolicy pol;  // reactive, one type, target 0.5, window 300 s
  pol.target_utilization = 0.5;
  ServingController c(p, pol, {1.0}, 10.0, 60, 120);
  const Demand d = StepDemand();
  // desired = ceil(rate_now / (1 x 0.5)), rate_now = the last observed step.
  EXPECT_EQ(c.Desired(5, d.rps).replicas[0], 2);
  EXPECT_EQ(c.Desired(20, d.rps).replicas[0], 2);   // step 20 not observed yet
  EXPECT_EQ(c.Desired(21, d.rps).replicas[0], 20);  // scale up at once
  EXPECT_EQ(c.Desired(40, d.rps).replicas[0], 20);
  // Scale down only after the 300 s window: the max recommendation of steps 35..40 holds.
  for (std::size_t k = 41; k <= 45; ++k) EXPECT_EQ(c.Desired(k, d.rps).replicas[0], 20) << k;
  EXPECT_EQ(c.Desired(46, d.rps).replicas[0], 2);
  // min replicas and maxReplicas = ceil(2 x peak / (rps x u)) = 40.
  pol.min_replicas = 3;
  ServingController c3(p, pol, {1.0}, 10.0, 60, 120);
  EXPECT_EQ(c3.Desired(5, d.rps).replicas[0], 3);
  std::vector<double> huge(10, 1000.0);
  EXPECT_EQ(c3.Desired(10, huge).replicas[0], 40);

  // Evaluation: a 120 s cold start (2 steps): replicas asked at step 21 serve from 23; steps 20..22
  // see 2 replicas for 10 req/s (20 %), booting replicas are billed.
  pol.min_replicas = 1;
  ServingController ce(p, pol, {1.0}, 10.0, 60, 120);
  auto ev = EvaluateController(p, ce, d, {1.0}, 120, {}, true);
  ASSERT_TRUE(ev.has_value()) << ev.error().message();
  EXPECT_EQ(ev->ready[0][0], 20);   // no past: sized for the peak, warm
  EXPECT_EQ(ev->ready[10][0], 2);
  EXPECT_EQ(ev->ready[21][0], 2);
  EXPECT_EQ(ev->ready[23][0], 20);
  const double offered = 40 * 1 + 20 * 10;
  const double lost = 3 * (10 - 2);  // steps 20, 21, 22
  EXPECT_NEAR(ev->served_share, (offered - lost) / offered, 1e-9);
  EXPECT_GT(ev->usd, 0);
  EXPECT_NEAR(ev->gpu_hours[0], ev->usd, 1e-9);  // 1 $/GPU-hour
}

TEST(ServingControllerTest, NoLookAhead) {
  auto shape = LoadWeeklyShape(kData + "/fleet_week/weekly_shape.csv");
  ASSERT_TRUE(shape.has_value());
  DeploymentSpec spec;
  spec.name = "chat";
  spec.mean_rate_rps = 3;
  auto h = BuildHistory(spec, *shape, kData, 1, 3);
  auto d = BuildDemand(spec, *shape, kData, 1, 3, 2);
  ASSERT_TRUE(h.has_value() && d.has_value());
  std::vector<double> past = h->rps;  // a week of history, then two days
  past.insert(past.end(), d->rps.begin(), d->rps.end());
  const ServingProfile p = TwoTypes();
  for (const char* scaler : {"reactive", "predictive"}) {
    for (bool mix : {false, true}) {
      ServingPolicy pol;
      pol.autoscaler = scaler;
      pol.mix = mix;
      ServingController a(p, pol, kPrices, d->Peak(), 60, 180), b(p, pol, kPrices, d->Peak(), 60, 180);
      for (std::size_t k : {std::size_t{10}, std::size_t{3000}, std::size_t{10080 + 57}, std::size_t{10080 + 2000}}) {
        std::vector<double> future = past;
        for (std::size_t j = k; j < future.size(); ++j) future[j] = 100 * future[j] + 50;  // rewrite the future
        EXPECT_EQ(a.Desired(k, past).replicas, b.Desired(k, future).replicas) << scaler << " mix " << mix << " k " << k;
        EXPECT_DOUBLE_EQ(a.TargetRate(k, past), b.TargetRate(k, future)) << scaler << " mix " << mix << " k " << k;
        EXPECT_EQ(a.DesiredAhead(k, past, 7200).replicas, b.DesiredAhead(k, future, 7200).replicas)
            << scaler << " mix " << mix << " k " << k;
      }
    }
  }
}

TEST(ServingControllerTest, PredictiveProvisionsLastWeeksRampAhead) {
  // A week of history and a day: 1 req/s, 10 req/s from 08:00 to 20:00 every day. The day's ramp
  // is forecast from the same hour a week earlier.
  std::vector<double> history;
  for (int k = 0; k < 10080; ++k) history.push_back((k % 1440) >= 480 && (k % 1440) < 1200 ? 10.0 : 1.0);
  Demand d;
  d.rps.assign(history.begin(), history.begin() + 1440);
  std::vector<double> past = history;
  past.insert(past.end(), d.rps.begin(), d.rps.end());
  const ServingProfile p = OneType(1.0);
  ServingPolicy pol;
  pol.target_utilization = 0.9;
  ServingPolicy pred = pol;
  pred.autoscaler = "predictive";
  pred.headroom = 1.0;
  ServingController r(p, pol, {1.0}, 10, 60, 300), f(p, pred, {1.0}, 10, 60, 300);
  // 07:56: the reactive one still sees 1 req/s; the predictive one provisions for 08:01 (the cold
  // start is 5 steps).
  const std::size_t k = 10080 + 476;
  EXPECT_EQ(r.Desired(k, past).replicas[0], 2);
  EXPECT_EQ(f.Desired(k, past).replicas[0], 10);
  EXPECT_EQ(f.Desired(k - 2, past).replicas[0], 2);  // 07:54: 07:59 is still quiet
  // Without a week of past, predictive is reactive.
  EXPECT_EQ(f.Desired(476, past).replicas[0], r.Desired(476, past).replicas[0]);
  auto er = EvaluateController(p, r, d, {1.0}, 300, history);
  auto ef = EvaluateController(p, f, d, {1.0}, 300, history);
  ASSERT_TRUE(er.has_value() && ef.has_value());
  // The same with the history set on the controller and past = the day only.
  ServingController g(p, pred, {1.0}, 10, 60, 300);
  g.SetHistory(history);
  EXPECT_EQ(g.Desired(476, d.rps).replicas, f.Desired(k, past).replicas);
  EXPECT_DOUBLE_EQ(g.TargetRate(900, d.rps), f.TargetRate(10080 + 900, past));
  auto eg = EvaluateController(p, g, d, {1.0}, 300);
  ASSERT_TRUE(eg.has_value());
  EXPECT_DOUBLE_EQ(eg->usd, ef->usd);
  EXPECT_DOUBLE_EQ(eg->served_share, ef->served_share);
  EXPECT_FALSE(EvaluateController(p, g, d, {1.0}, 300, history).has_value());  // history twice
  // Looking ahead (the room training leaves for serving, issue 39): at 07:00 the predictive
  // controller asks for 2 replicas now and, within the next hour, for the 10 it will hold from
  // 08:00 (read from the same hour a week back); within 30 minutes it still asks for 2. The
  // reactive one asks for what it asks for now.
  EXPECT_EQ(f.Desired(10080 + 420, past).replicas[0], 2);
  EXPECT_EQ(f.DesiredAhead(10080 + 420, past, 3600).replicas[0], 10);
  EXPECT_EQ(f.DesiredAhead(10080 + 420, past, 1800).replicas[0], 2);
  EXPECT_EQ(r.DesiredAhead(10080 + 420, past, 3600).replicas, r.Desired(10080 + 420, past).replicas);
  EXPECT_EQ(f.DesiredAhead(420, past, 3600).replicas, r.Desired(420, past).replicas);  // no week of past yet
  EXPECT_LT(er->served_share, 0.995);  // 6 steps at 2 of 10 req/s: 48 of 7,920 requests lost
  EXPECT_NEAR(ef->served_share, 1.0, 1e-12);
  EXPECT_TRUE(PredictiveBeats(*er, *ef) || ef->usd_per_mtok <= er->usd_per_mtok * 1.05);
}

TEST(ServingControllerTest, MixChangesAreMadeBeforeTheyAreBroken) {
  // At 19 req/s the cheapest mix holds L4s and an H100; at 6 req/s H100s only (hand-made profile).
  const ServingProfile p = TwoTypes();
  auto lo = CheapestMix(p, 1.0, kPrices), hi = CheapestMix(p, 19.0, kPrices);
  ASSERT_TRUE(lo.has_value() && hi.has_value());
  ASSERT_NE(lo->replicas, hi->replicas);
  Demand d;
  for (int k = 0; k < 30; ++k) d.rps.push_back(k < 10 ? 0.7 : 13.3);
  ServingPolicy pol;
  pol.mix = true;
  ServingController c(p, pol, kPrices, 13.3, 60, 180);
  auto ev = EvaluateController(p, c, d, kPrices, 180, {}, true);
  ASSERT_TRUE(ev.has_value()) << ev.error().message();
  // While new replicas boot, the serving ones of any type stay: capacity never drops below what
  // served the previous step.
  for (std::size_t k = 1; k < ev->ready.size(); ++k) {
    if (k == 1) continue;  // step 0's warm fleet is sized for the peak; step 1 scales it down
    EXPECT_GE(MaxServedRps(p, ServingMix{ev->ready[k]}) + 1e-9, MaxServedRps(p, ServingMix{ev->ready[k - 1]})) << k;
  }
  EXPECT_GT(ev->served_share, 0.8);
}

TEST(ServingTuneTest, ReactiveSweepPicksTheCheapestSettingThatServes99) {
  // Minute-scale bursts (every 7th minute at 3x) on a flat level: low targets or a floor are needed.
  Demand d;
  for (int k = 0; k < 2000; ++k) d.rps.push_back(k % 7 == 3 ? 6.0 : 2.0);
  const ServingProfile p = OneType(1.0);
  auto t = TuneReactive(p, ServingPolicy(), d, {}, {1.0}, 120);
  ASSERT_TRUE(t.has_value()) << t.error().message();
  ASSERT_EQ(t->rows.size(), 25u);  // 5 targets x 5 floors
  ASSERT_GE(t->chosen, 0);
  EXPECT_TRUE(t->reached);
  const TuneRow& c = t->rows[static_cast<std::size_t>(t->chosen)];
  EXPECT_GE(c.eval.served_share, kMinServedShare);
  for (const TuneRow& r : t->rows) {
    if (r.eval.served_share >= kMinServedShare) {
      EXPECT_GE(r.eval.usd, c.eval.usd - 1e-9);
    }
  }
  EXPECT_EQ(t->policy.target_utilization, c.target_utilization);
  EXPECT_EQ(t->policy.min_replicas, c.min_replicas);
  // The 300 s window holds the burst's replicas: at 2 req/s steady, 6 req/s each 7th minute, the
  // window always sees a burst minute or is 2 steps from one, so a target of 0.9 serves it all.
  EXPECT_DOUBLE_EQ(c.target_utilization, 0.9);
}

TEST(ServingTuneTest, PredictiveBeatsRule) {
  ServingEval reactive, predictive;
  reactive.usd_per_mtok = 2.0;
  reactive.served_share = 0.999;
  predictive.usd_per_mtok = 1.0;
  predictive.served_share = 0.995;
  EXPECT_TRUE(PredictiveBeats(reactive, predictive));   // both meet the 99 % target: cheaper wins
  predictive.served_share = 0.98;
  EXPECT_FALSE(PredictiveBeats(reactive, predictive));  // under the target and under reactive
  reactive.served_share = 0.95;
  EXPECT_TRUE(PredictiveBeats(reactive, predictive));   // under the target but above reactive
  predictive.usd_per_mtok = 2.5;
  EXPECT_FALSE(PredictiveBeats(reactive, predictive));  // dearer
}

// Issue 39 (serving SLO >= the base's on every set): in the fleet a replica either boots a node
// (the cold start) or lands on a node already up and only loads its model. The warm path makes the
// tuning also require a share on that path; the rule on the cold path is unchanged.
TEST(ServingTuneTest, PredictiveTuningCanRequireAShareOnTheWarmPath) {
  // A quiet history week, then a day whose every 7th minute bursts at 3x: the forecast misses the
  // bursts and the reactive floor (its target) has to catch them, a cold start or a model load late.
  Demand history, week;
  history.rps.assign(static_cast<std::size_t>(kHoursPerWeek) * 60, 2.0);
  for (std::size_t k = 0; k < 24 * 60; ++k) week.rps.push_back(k % 7 == 3 ? 6.0 : 2.0);
  const ServingProfile p = OneType(1.0);
  const double cold = 240, load = 60;
  auto plain = TunePredictive(p, ServingPolicy(), week, history.rps, {1.0}, cold, 0.9);
  ASSERT_TRUE(plain.has_value()) << plain.error().message();
  ASSERT_TRUE(plain->reached);
  // A warm floor every setting meets changes nothing and evaluates every row on the warm path.
  auto trivial = TunePredictive(p, ServingPolicy(), week, history.rps, {1.0}, cold, 0.9, TuneWarmPath{load, 0.0});
  ASSERT_TRUE(trivial.has_value());
  EXPECT_EQ(trivial->chosen, plain->chosen);
  double best_warm = 0;
  for (const TuneRow& r : trivial->rows) {
    ASSERT_GT(r.warm_eval.served_share, 0);
    if (r.eval.served_share >= 0.9) best_warm = std::max(best_warm, r.warm_eval.served_share);
  }
  const TuneRow& c0 = trivial->rows[static_cast<std::size_t>(trivial->chosen)];
  std::cout << "cold-path choice: target " << c0.target_utilization << " headroom " << c0.headroom << ", cold "
            << c0.eval.served_share << ", warm " << c0.warm_eval.served_share << ", $" << c0.eval.usd
            << "; best warm " << best_warm << "\n";
  ASSERT_GT(best_warm, c0.warm_eval.served_share + 1e-3);  // the cold-path choice is not the warm path's best
  // Require more on the warm path than the cold-path choice serves there.
  const double floor = (c0.warm_eval.served_share + best_warm) / 2;
  auto warm = TunePredictive(p, ServingPolicy(), week, history.rps, {1.0}, cold, 0.9, TuneWarmPath{load, floor});
  ASSERT_TRUE(warm.has_value());
  EXPECT_TRUE(warm->reached);
  const TuneRow& c = warm->rows[static_cast<std::size_t>(warm->chosen)];
  EXPECT_GE(c.eval.served_share, 0.9);
  EXPECT_GE(c.warm_eval.served_share, floor);
  EXPECT_GT(c.eval.usd, c0.eval.usd);
  for (const TuneRow& r : warm->rows) {  // the cheapest that meets both
    if (r.eval.served_share >= 0.9 && r.warm_eval.served_share >= floor) {
      EXPECT_GE(r.eval.usd, c.eval.usd - 1e-9);
    }
  }
  // Kept to settings that provision at least the cold-path choice (its headroom or more, its target
  // or less): the choice then holds at least as many replicas at every step.
  TuneWarmPath dominating{load, floor, c0.headroom, c0.target_utilization};
  auto kept = TunePredictive(p, ServingPolicy(), week, history.rps, {1.0}, cold, 0.9, dominating);
  ASSERT_TRUE(kept.has_value());
  const TuneRow& k = kept->rows[static_cast<std::size_t>(kept->chosen)];
  EXPECT_GE(k.headroom, c0.headroom);
  EXPECT_LE(k.target_utilization, c0.target_utilization);
  EXPECT_GE(k.eval.usd, c.eval.usd - 1e-9);  // a narrower search is never cheaper
  if (kept->reached) {
    EXPECT_GE(k.warm_eval.served_share, floor);
  }
  // Out of reach on the warm path: the most there among the settings that meet the cold path's.
  auto unreachable = TunePredictive(p, ServingPolicy(), week, history.rps, {1.0}, cold, 0.9, TuneWarmPath{load, 1.01});
  ASSERT_TRUE(unreachable.has_value());
  EXPECT_FALSE(unreachable->reached);
  const TuneRow& u = unreachable->rows[static_cast<std::size_t>(unreachable->chosen)];
  EXPECT_GE(u.eval.served_share, 0.9);
  EXPECT_DOUBLE_EQ(u.warm_eval.served_share, best_warm);
}

TEST(ServingProfileTest, MeasuresCapacitiesAndCaches) {
  const std::string cache = TempDir("profile");
  DeploymentSpec d;
  d.name = "chat";
  d.gpus = {"A100-80G", "H100"};
  planner::ProbeOptions probe;  // the smallest setting that still measures
  probe.requests = 60;
  probe.min_probe_s = 20;
  probe.max_requests = 1500;
  probe.bisect_steps = 3;
  auto cold = ProfileServing(d, "vllm", kData, cache, nullptr, probe);
  ASSERT_TRUE(cold.has_value()) << cold.error().message();
  ASSERT_EQ(cold->gpus.size(), 2u);
  EXPECT_EQ(cold->tp, (std::vector<int>{1, 1}));
  EXPECT_GT(cold->replica_rps[0], 0);
  EXPECT_GT(cold->replica_rps[1], cold->replica_rps[0]);  // the H100 serves more than the A100
  double share = 0;
  for (double s : cold->bucket_share) share += s;
  EXPECT_NEAR(share, 1.0, 1e-9);
  auto warm = ProfileServing(d, "vllm", kData, cache, nullptr, probe);
  ASSERT_TRUE(warm.has_value());
  EXPECT_EQ(warm->replica_rps, cold->replica_rps);
  // Two threads, no cache: the same tables.
  auto threaded = ProfileServing(d, "vllm", kData, "", nullptr, probe, 2);
  ASSERT_TRUE(threaded.has_value()) << threaded.error().message();
  EXPECT_EQ(threaded->bucket_rps, cold->bucket_rps);
  EXPECT_LT(warm->profile_seconds, cold->profile_seconds);
  std::cout << "profile A100-80G / H100 (llama-2-7b conv, vllm, small probes): " << cold->replica_rps[0] << " / "
            << cold->replica_rps[1] << " req/s per replica; cold " << cold->profile_seconds << " s, warm "
            << warm->profile_seconds << " s\n";

  DeploymentSpec bad = d;
  bad.gpus = {"V100X"};
  auto e = ProfileServing(bad, "vllm", kData, "", nullptr, probe);
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message().find("V100X"), std::string::npos);
  EXPECT_FALSE(ProfileServing(d, "triton", kData, "", nullptr, probe).has_value());
}

}  // namespace
}  // namespace seedance::fleet
