// The serving figures of docs/FLEET_WEEK.md "Serving": the two deployments of the fleet week
// profiled (cold and warm), the standard stack's HPA target swept on week 0, Seedance's
// predictive controller tuned on week 0, both replayed on held-out week 1.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "seedance/fleet/serving.h"

namespace seedance::fleet {
namespace {

const std::string kData = SEEDANCE_TEST_DATA_DIR;
constexpr double kColdStartS = 180;  // planner's default cold start of a serving replica
constexpr std::uint64_t kSeed = 1;
constexpr int kThreads = 2;          // types profiled at once (the machine has 2 cores)

std::string Row(const std::string& what, const ServingEval& e) {
  std::string types;
  for (double h : e.gpu_hours) types += fmt::format(" {:8.1f}", h);
  return fmt::format("  {:<58} ${:9.2f}  served {:7.3f} %  ${:6.3f}/Mtok  GPU-h{}", what, e.usd, 100 * e.served_share,
                     e.usd_per_mtok, types);
}

void RunDeployment(const DeploymentSpec& d) {
  auto shape = LoadWeeklyShape(kData + "/fleet_week/weekly_shape.csv");
  ASSERT_TRUE(shape.has_value()) << shape.error().message();
  const std::string cache = (std::filesystem::temp_directory_path() / ("seedance_serving_scenario_" + d.name)).string();
  if (std::getenv("SEEDANCE_SERVING_KEEP_CACHE") == nullptr) std::filesystem::remove_all(cache);
  std::cout << fmt::format("\n== {}: {} on the {} trace, mean {:g} req/s, SLO TTFT {:g} s / TPOT {:g} s, cold start {:g} s\n",
                           d.name, d.model, d.trace, d.mean_rate_rps, d.slo_ttft_s, d.slo_tpot_s, kColdStartS);
  std::vector<ServingProfile> profiles;
  for (const char* policy : {"vllm", "seedance"}) {
    auto cold = ProfileServing(d, policy, kData, cache, nullptr, planner::ProbeOptions(), kThreads);
    ASSERT_TRUE(cold.has_value()) << cold.error().message();
    auto warm = ProfileServing(d, policy, kData, cache, nullptr);
    ASSERT_TRUE(warm.has_value()) << warm.error().message();
    ASSERT_EQ(warm->replica_rps, cold->replica_rps);
    std::cout << fmt::format("profile {:<8} cold {:6.1f} s, warm {:5.2f} s; req/s per replica:", policy,
                             cold->profile_seconds, warm->profile_seconds);
    for (std::size_t g = 0; g < cold->gpus.size(); ++g) {
      std::cout << fmt::format(" {} (TP {}) {:.3f};", cold->gpus[g], cold->tp[g], cold->replica_rps[g]);
    }
    std::cout << "\n";
    for (const std::string& n : cold->notes) std::cout << "  note: " << n << "\n";
    profiles.push_back(std::move(*cold));
  }
  const ServingProfile& vllm = profiles[0];
  const ServingProfile& seed = profiles[1];
  auto prices = OnDemandPrices(vllm);
  ASSERT_TRUE(prices.has_value()) << prices.error().message();
  auto w0 = BuildDemand(d, *shape, kData, 0, kSeed);
  auto w1 = BuildDemand(d, *shape, kData, 1, kSeed);
  auto h0 = BuildHistory(d, *shape, kData, 0, kSeed);  // the warm-up week before the tuning week
  ASSERT_TRUE(w0.has_value() && w1.has_value() && h0.has_value());
  std::cout << fmt::format("demand: week 0 mean {:.2f} peak {:.2f} req/s; week 1 mean {:.2f} peak {:.2f} req/s\n",
                           w0->Mean(), w0->Peak(), w1->Mean(), w1->Peak());
  std::string header = "GPU types:";
  for (std::size_t g = 0; g < vllm.gpus.size(); ++g) header += fmt::format(" {} ${:.3f}/GPU-h;", vllm.gpus[g], (*prices)[g]);
  std::cout << header << "\n";

  const auto started = std::chrono::steady_clock::now();
  // Every combination, each tuned on week 0 (with the warm-up week before it as history):
  // batching {vLLM, Seedance} x replicas {one type, GPU mix} x autoscaler {reactive, predictive}.
  struct Entry {
    std::string name;
    const ServingProfile* p;
    TuneResult tune;
  };
  std::vector<Entry> entries;
  for (const ServingProfile* prof : {&vllm, &seed}) {
    for (bool mix : {false, true}) {
      ServingPolicy base;
      base.mix = mix;
      auto reactive = TuneReactive(*prof, base, *w0, h0->rps, *prices, kColdStartS);
      ASSERT_TRUE(reactive.has_value()) << reactive.error().message();
      auto predictive = TunePredictive(*prof, base, *w0, h0->rps, *prices, kColdStartS);
      ASSERT_TRUE(predictive.has_value()) << predictive.error().message();
      const std::string what = fmt::format("{}, {}", prof == &vllm ? "vLLM" : "Seedance batching", mix ? "GPU mix" : "one type");
      entries.push_back({what + ", reactive", prof, std::move(*reactive)});
      entries.push_back({what + ", predictive", prof, std::move(*predictive)});
    }
  }
  const TuneResult& sweep = entries[0].tune;  // the standard stack
  {
    ServingController c(vllm, sweep.policy, *prices, w0->Peak(), 60, kColdStartS);
    std::cout << "standard stack, HPA target utilization swept on week 0 (" << c.Describe() << "):\n";
  }
  for (std::size_t i = 0; i < sweep.rows.size(); ++i) {
    std::cout << Row(fmt::format("target {:.1f} minReplicas {:3d} ({:3.0f} % of peak){}", sweep.rows[i].target_utilization,
                                 sweep.rows[i].min_replicas, 100 * sweep.rows[i].floor,
                                 static_cast<int>(i) == sweep.chosen ? "  <- chosen" : ""),
                     sweep.rows[i].eval)
              << "\n";
  }
  std::cout << fmt::format("  chosen target {:.1f}, minReplicas {}: {}{}{}\n", sweep.policy.target_utilization,
                           sweep.policy.min_replicas,
                           sweep.reached ? "the cheapest with >= 99 % served" : "NO target reaches 99 % served; the highest share",
                           sweep.extended ? " (the grid 0.5-0.9 extended down to 0.2: none of 0.5-0.9 reached 99 %)" : "",
                           sweep.inside_grid ? ", inside the grid" : ", AT THE GRID'S EDGE");
  for (const Entry& e : entries) {
    if (e.tune.policy.autoscaler != "predictive") continue;
    const TuneRow& r = e.tune.rows[static_cast<std::size_t>(e.tune.chosen)];
    std::cout << fmt::format("  {}: chosen floor target {:.2f}, headroom {:.2f} ({}{})\n", e.name, r.target_utilization,
                             r.headroom, e.tune.reached ? "cheapest with >= 99 % served" : "none reaches 99 %: highest share",
                             e.tune.inside_grid ? ", inside the grid" : ", at the grid's edge");
  }
  std::vector<ServingEval> held;
  for (int week = 0; week < 2; ++week) {
    const Demand& dem = week == 0 ? *w0 : *w1;
    const std::vector<double>& hist = week == 0 ? h0->rps : w0->rps;
    std::cout << (week == 0 ? "week 0 (tuning):\n" : "week 1 (held out):\n");
    for (const Entry& e : entries) {
      ServingController c(*e.p, e.tune.policy, *prices, w0->Peak(), 60, kColdStartS);
      auto ev = EvaluateController(*e.p, c, dem, *prices, kColdStartS, hist);
      ASSERT_TRUE(ev.has_value()) << ev.error().message();
      std::cout << Row(fmt::format("{} (u {:.2f}, min {}{})", e.name, e.tune.policy.target_utilization, e.tune.policy.min_replicas,
                                   e.tune.policy.autoscaler == "predictive" ? fmt::format(", h {:.2f}", e.tune.policy.headroom) : ""),
                       *ev)
                << "\n";
      if (week == 1) held.push_back(*ev);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << fmt::format("tuning (8 settings) + evaluation: {:.1f} s\n", seconds);
  // Predictive on only where it beats reactive on the held-out week.
  std::vector<std::size_t> on;
  for (std::size_t i = 1; i < entries.size(); i += 2) {
    const bool beats = PredictiveBeats(held[i - 1], held[i]);
    on.push_back(beats ? i : i - 1);
    std::cout << fmt::format("{}: predictive {} reactive on week 1 (${:.3f} vs ${:.3f} per Mtok within SLO, {:.3f} % vs "
                             "{:.3f} % served){}\n",
                             entries[i].name, beats ? "beats" : "does NOT beat", held[i].usd_per_mtok,
                             held[i - 1].usd_per_mtok, 100 * held[i].served_share, 100 * held[i - 1].served_share,
                             beats ? ": on" : ": it stays off");
  }
  const ServingEval& standard = held[0];
  for (std::size_t i : on) {
    std::cout << fmt::format("held out: {:<45} ${:8.2f} {:.3f} $/Mtok {:.3f} % served: {:+.1f} % $/Mtok vs the standard stack\n",
                             entries[i].name, held[i].usd, held[i].usd_per_mtok, 100 * held[i].served_share,
                             100 * (held[i].usd_per_mtok / standard.usd_per_mtok - 1));
  }
  EXPECT_GT(standard.served_share, 0.9);
}

DeploymentSpec Spec(std::string name, std::string model, std::string trace, double mean_rps) {
  DeploymentSpec d;
  d.name = std::move(name);
  d.model = std::move(model);
  d.trace = std::move(trace);
  d.mean_rate_rps = mean_rps;
  d.gpus = {"L4", "A10G", "A100-80G", "H100"};
  return d;
}

TEST(ServingScenario, Chat) { RunDeployment(Spec("chat", "llama-2-7b", "conv", 12)); }

TEST(ServingScenario, Code) { RunDeployment(Spec("code", "codellama-34b", "code", 3)); }

// Seeds 2-5 (other minute-burst offsets), each tuned on its own week 0 and replayed on week 1: the
// standard stack against Seedance's serving (its batching, the GPU mix, predictive). Runs after
// Chat and Code, whose profile caches it reads.
TEST(ServingScenario, OtherSeeds) {
  auto shape = LoadWeeklyShape(kData + "/fleet_week/weekly_shape.csv");
  ASSERT_TRUE(shape.has_value());
  for (const DeploymentSpec& d : {Spec("chat", "llama-2-7b", "conv", 12), Spec("code", "codellama-34b", "code", 3)}) {
    const std::string cache = (std::filesystem::temp_directory_path() / ("seedance_serving_scenario_" + d.name)).string();
    auto vllm = ProfileServing(d, "vllm", kData, cache, nullptr, planner::ProbeOptions(), kThreads);
    auto seed = ProfileServing(d, "seedance", kData, cache, nullptr, planner::ProbeOptions(), kThreads);
    ASSERT_TRUE(vllm.has_value() && seed.has_value());
    auto prices = OnDemandPrices(*vllm);
    ASSERT_TRUE(prices.has_value());
    for (std::uint64_t s : {2u, 3u, 4u, 5u}) {
      auto w0 = BuildDemand(d, *shape, kData, 0, s), w1 = BuildDemand(d, *shape, kData, 1, s);
      auto h0 = BuildHistory(d, *shape, kData, 0, s);
      ASSERT_TRUE(w0.has_value() && w1.has_value() && h0.has_value());
      ServingPolicy single, mix;
      mix.mix = true;
      auto standard = TuneReactive(*vllm, single, *w0, h0->rps, *prices, kColdStartS);
      auto reactive = TuneReactive(*seed, mix, *w0, h0->rps, *prices, kColdStartS);
      auto predictive = TunePredictive(*seed, mix, *w0, h0->rps, *prices, kColdStartS);
      ASSERT_TRUE(standard.has_value() && reactive.has_value() && predictive.has_value());
      auto held = [&](const ServingProfile& p, const ServingPolicy& pol) {
        ServingController c(p, pol, *prices, w0->Peak(), 60, kColdStartS);
        return EvaluateController(p, c, *w1, *prices, kColdStartS, w0->rps);
      };
      auto a = held(*vllm, standard->policy), b = held(*seed, reactive->policy), c = held(*seed, predictive->policy);
      ASSERT_TRUE(a.has_value() && b.has_value() && c.has_value());
      const bool on = PredictiveBeats(*b, *c);
      const ServingEval& ours = on ? *c : *b;
      std::cout << fmt::format("{} seed {}: standard {:.3f} $/Mtok {:.2f} % served; Seedance mix reactive {:.3f} {:.2f} %, "
                               "predictive {:.3f} {:.2f} % ({}); Seedance vs standard {:+.1f} % $/Mtok\n",
                               d.name, s, a->usd_per_mtok, 100 * a->served_share, b->usd_per_mtok, 100 * b->served_share,
                               c->usd_per_mtok, 100 * c->served_share, on ? "on" : "stays off",
                               100 * (ours.usd_per_mtok / a->usd_per_mtok - 1));
    }
  }
}

}  // namespace
}  // namespace seedance::fleet
