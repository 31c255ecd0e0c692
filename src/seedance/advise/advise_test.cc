#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "seedance/advise/finding.h"
#include "seedance/advise/fleet.h"
#include "seedance/advise/levers.h"
#include "seedance/advise/testing/waste_stream.h"
#include "seedance/cluster/gpu_model.h"
#include "seedance/core/file_util.h"
#include "seedance/gpu/catalog.h"
#include "seedance/ledger/ledger.h"
#include "seedance/ledger/telemetry_attribution.h"
#include "seedance/sim/workloads.h"
#include "seedance/telemetry/parse.h"

namespace seedance::advise {
namespace {

// Generates the stream, ingests it into a fresh ledger, attributes it and runs the fleet rules.
std::vector<Finding> AdviseOnStream(const testing::WasteStreamSpec& spec, const std::string& name,
                                    FleetRules rules = {}) {
  const std::string db = ::testing::TempDir() + "/advise_" + name + ".db";
  std::filesystem::remove(db);
  std::filesystem::remove(db + "-wal");
  std::filesystem::remove(db + "-shm");
  std::string text;
  testing::GenerateWasteStream(spec, [&](std::string_view s) { text.append(s); });
  auto ledger = ledger::Ledger::Open(db);
  EXPECT_TRUE(ledger.has_value());
  {
    auto writer = (*ledger)->NewSampleWriter(name, 50'000);
    EXPECT_TRUE(writer.has_value());
    std::istringstream in(text);
    telemetry::ParseOptions popt;
    popt.source = name;
    telemetry::ParseStats stats;
    EXPECT_TRUE(telemetry::ParseStream(telemetry::InputFormat::kPrometheus, in, popt, **writer, stats).ok());
    EXPECT_TRUE((*writer)->Finish().ok());
    EXPECT_EQ(stats.rejected, 0u);
  }
  ledger::LedgerConfig config;
  auto prices = cost::PriceTable::LoadFile(cost::BundledPriceTablePath());
  EXPECT_TRUE(prices.has_value());
  auto range = ledger::SampleRange(**ledger);
  EXPECT_TRUE(range.has_value());
  auto t = ledger::AttributeStoredTelemetry(**ledger, config, &*prices, range->first, range->second);
  EXPECT_TRUE(t.has_value() && t->has_value());
  auto in = FleetInputsFromLedger(**ledger, **t, config, range->first, range->second);
  EXPECT_TRUE(in.has_value());
  rules.mc_samples = 2'000;
  auto f = FleetFindings(*in, *prices, config, rules);
  EXPECT_TRUE(f.has_value());
  return *f;
}

double Price(const cost::PriceTable& prices, std::string_view model) {
  auto idx = gpu::ParseGpuName(model, gpu::NameMatch::kCanonical);
  const cost::GpuPrice* p = idx.has_value() ? prices.Find(*idx) : nullptr;
  return p != nullptr ? ToUsd(p->usd_per_gpu_hour) : -1;
}

const Finding* FindById(const std::vector<Finding>& v, const std::string& id) {
  for (const Finding& f : v) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

TEST(AdviseFleetTest, CleanStreamInventsNothing) {
  testing::WasteStreamSpec spec;
  spec.duration_ms = 6 * 3600 * 1000LL;
  auto f = AdviseOnStream(spec, "clean");
  EXPECT_TRUE(f.empty()) << f.size() << " findings, first " << (f.empty() ? "" : f[0].id);
}

// The planted truth comes from the generator's parameters (waste_stream.h) and the price table,
// not from the advisor: 2 idle H100s; 4 H100s waiting on input 45% of the time; one H100 job at
// 8% activity and 12,000 MiB that the cheapest priced GPU with >= 12.9 GiB and >= 99 FP16 TFLOPS
// (8% of H100's 989 at 80% headroom) runs without slowing down.
TEST(AdviseFleetTest, PlantedWasteIsFoundWithTheRightDollars) {
  testing::WasteStreamSpec spec;
  spec.duration_ms = 6 * 3600 * 1000LL;
  spec.idle_namespace = spec.input_bound = spec.oversized = true;
  auto f = AdviseOnStream(spec, "planted");
  auto prices = cost::PriceTable::LoadFile(cost::BundledPriceTablePath());
  ASSERT_TRUE(prices.has_value());
  const double hours = 6, month = kHoursPerMonth / hours, h100 = Price(*prices, "H100");
  double cheapest = h100;
  const double h100_tflops = gpu::GpuAt(*gpu::ParseGpuName("H100", gpu::NameMatch::kCanonical)).fp16_tflops;
  for (const cost::GpuPrice& p : prices->prices()) {
    const gpu::GpuFacts& g = gpu::GpuAt(p.model);
    if (g.disclosed && g.memory_gib >= 12000.0 * 1.1 / 1024 && g.fp16_tflops * 0.8 >= 0.08 * h100_tflops) {
      cheapest = std::min(cheapest, ToUsd(p.usd_per_gpu_hour));
    }
  }
  ASSERT_LT(cheapest, h100);
  struct Truth {
    std::string id;
    double usd_per_month;
  } truth[] = {{"idle:namespace/sandbox", 2 * hours * h100 * month},
               {"input-stall:job/etl-train-0", 4 * hours * h100 * 0.45 * month},
               {"smaller-gpu:job/small-ft-0", 1 * hours * (h100 - cheapest) * month}};
  ASSERT_EQ(f.size(), 3u) << (f.empty() ? "" : f[0].id);
  for (const Truth& t : truth) {
    const Finding* x = FindById(f, t.id);
    ASSERT_NE(x, nullptr) << t.id;
    EXPECT_NEAR(x->usd_per_month, t.usd_per_month, 0.05 * t.usd_per_month) << t.id;
    EXPECT_LE(x->ci_low, x->usd_per_month) << t.id;
    EXPECT_GE(x->ci_high, x->usd_per_month) << t.id;
    EXPECT_GT(x->evidence.samples, 0) << t.id;
    EXPECT_FALSE(x->evidence.from.empty());
    EXPECT_FALSE(x->action.empty());
    EXPECT_NE(x->reproduce.find("--explain " + t.id), std::string::npos);
  }
  EXPECT_TRUE(std::is_sorted(f.begin(), f.end(), [](const Finding& a, const Finding& b) {
    return a.usd_per_month > b.usd_per_month;
  }));
}

// The spot rule's interruption rate, counted here from the trace's JSON (not through the
// advisor's loader): available -> unavailable transitions per available hour.
double InterruptionsPerAvailableHour(const std::string& path) {
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  const auto& a = j["data"];
  int lost = 0, up = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    up += a[i].get<int>() > 0;
    if (i > 0 && a[i - 1].get<int>() > 0 && a[i].get<int>() == 0) ++lost;
  }
  return lost / (up * j["metadata"]["gap_seconds"].get<double>() / 3600.0);
}

// The planted spot-eligible job (2 H100s, checkpoint every 30 min, 24 h slack): on spot it pays
// the spot ratio on its GPU time inflated by the work each interruption loses (15 min + 300 s of
// restart); the truth is computed from the generator's parameters, the price table and the trace.
TEST(AdviseFleetTest, SpotEligibleJobIsPricedNetOfLostWork) {
  const std::string trace = DataDir() + "/spot_traces/aws-04-22-2023-preemption_us-west-2b_v100_1.json";
  FleetRules rules;
  auto rate = SpotInterruptionRateOf(trace);
  ASSERT_TRUE(rate.has_value()) << rate.error().message();
  const double lambda = InterruptionsPerAvailableHour(trace);
  EXPECT_NEAR(rate->per_hour, lambda, 1e-9);
  rules.spot_rate = *rate;
  testing::WasteStreamSpec spec;
  spec.duration_ms = 6 * 3600 * 1000LL;
  // The clean stream (every pod has a kube_pod_annotations series, none annotated) gives nothing.
  auto clean = AdviseOnStream(spec, "spot_clean", rules);
  EXPECT_TRUE(clean.empty()) << clean[0].id;
  spec.spot_eligible = true;
  auto f = AdviseOnStream(spec, "spot", rules);
  auto prices = cost::PriceTable::LoadFile(cost::BundledPriceTablePath());
  ASSERT_TRUE(prices.has_value());
  const cost::GpuPrice* h100 = prices->Find(*gpu::ParseGpuName("H100", gpu::NameMatch::kCanonical));
  ASSERT_NE(h100, nullptr);
  const double od = ToUsd(h100->usd_per_gpu_hour);
  const double ratio = h100->spot_usd_per_gpu_hour.raw() > 0 ? ToUsd(h100->spot_usd_per_gpu_hour) / od : 0.37;
  const double lost = lambda * (30 * 60 / 2.0 + 300) / 3600.0;
  const double truth = 2 * 6 * od * (1 - ratio / (1 - lost)) * kHoursPerMonth / 6;
  ASSERT_EQ(f.size(), 1u) << (f.empty() ? "" : f[0].id);
  EXPECT_EQ(f[0].id, "spot:job/batch-train-0");
  EXPECT_NEAR(f[0].usd_per_month, truth, 0.05 * truth);
  EXPECT_LE(f[0].ci_low, f[0].usd_per_month);
  EXPECT_GE(f[0].ci_high, f[0].usd_per_month);
  EXPECT_NE(f[0].evidence.detail.find("kube_pod_annotations"), std::string::npos) << f[0].evidence.detail;
  EXPECT_NE(f[0].reproduce.find("--explain spot:job/batch-train-0"), std::string::npos);
  // Without the rule (no interruption rate) the same stream gives nothing: the rule decides.
  EXPECT_TRUE(AdviseOnStream(spec, "spot_off").empty());
  // Interruptions that lose more work than they leave make the job ineligible.
  rules.spot_restart_s = 3 * 3600;  // ~1 interruption per 3 h, each losing over 3 h: never finishes
  EXPECT_TRUE(AdviseOnStream(spec, "spot_slack", rules).empty());
}

// The planted unit-cost outlier (1 H100 at 34% activity, 60 GiB: no cheaper GPU, nothing to
// consolidate). The truth's median comes from the stream's own samples (each pod's mean
// GR_ENGINE_ACTIVE, parsed here from the text), not from the advisor's aggregation.
TEST(AdviseFleetTest, UnitCostOutlierIsReportedOnceAgainstItsModelsMedian) {
  testing::WasteStreamSpec spec;
  spec.duration_ms = 6 * 3600 * 1000LL;
  spec.unit_cost_outlier = true;
  std::string text;
  testing::GenerateWasteStream(spec, [&](std::string_view s) { text.append(s); });
  std::map<std::string, std::pair<double, int>> act;  // pod -> (sum, samples)
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("DCGM_FI_PROF_GR_ENGINE_ACTIVE{")) continue;
    std::size_t p = line.find("pod=\"") + 5;
    std::string pod = line.substr(p, line.find('"', p) - p);
    std::size_t v = line.find("} ") + 2;
    act[pod].first += std::stod(line.substr(v, line.find(' ', v) - v));
    ++act[pod].second;
  }
  std::vector<double> units;  // $ per useful GPU-hour at one price: price / activity
  for (const auto& [pod, a] : act) units.push_back(1.0 / (a.first / a.second));
  std::sort(units.begin(), units.end());
  const std::size_t n = units.size();
  const double median = n % 2 ? units[n / 2] : (units[n / 2 - 1] + units[n / 2]) / 2;
  const double outlier = 1.0 / (act["slow-eval-0"].first / act["slow-eval-0"].second);
  ASSERT_GT(outlier, 2 * median);
  auto prices = cost::PriceTable::LoadFile(cost::BundledPriceTablePath());
  ASSERT_TRUE(prices.has_value());
  const double truth = 1 * 6 * Price(*prices, "H100") * (1 - median / outlier) * kHoursPerMonth / 6;
  auto f = AdviseOnStream(spec, "unit_cost");
  ASSERT_EQ(f.size(), 1u) << (f.empty() ? "" : f[0].id);
  EXPECT_EQ(f[0].id, "unit-cost:job/slow-eval-0");
  EXPECT_NEAR(f[0].usd_per_month, truth, 0.05 * truth);
  EXPECT_LE(f[0].ci_low, f[0].usd_per_month);
  EXPECT_GE(f[0].ci_high, f[0].usd_per_month);
  EXPECT_NE(f[0].action.find("appears once"), std::string::npos);
  // With every planted case at once each target appears once: small-ft-0 (8% activity, far above
  // the median unit cost) stays a smaller-gpu finding, not also a unit-cost one.
  spec.idle_namespace = spec.input_bound = spec.oversized = true;
  auto all = AdviseOnStream(spec, "unit_cost_all");
  std::map<std::string, int> per_target;
  for (const Finding& x : all) ++per_target[x.target];
  for (const auto& [target, count] : per_target) EXPECT_EQ(count, 1) << target;
  ASSERT_NE(FindById(all, "smaller-gpu:job/small-ft-0"), nullptr);
  EXPECT_EQ(FindById(all, "unit-cost:job/small-ft-0"), nullptr);
  EXPECT_NE(FindById(all, "unit-cost:job/slow-eval-0"), nullptr);
  EXPECT_EQ(all.size(), 4u);
  // A stricter factor than the outlier's own ratio finds nothing: the rule decides.
  FleetRules strict;
  strict.unit_cost_factor = outlier / median + 0.5;
  spec.idle_namespace = spec.input_bound = spec.oversized = false;
  EXPECT_TRUE(AdviseOnStream(spec, "unit_cost_strict", strict).empty());
}

// An input stall below the threshold is not acted on: the rule changes the decision.
TEST(AdviseFleetTest, SmallInputWaitIsNotAStall) {
  testing::WasteStreamSpec spec;
  spec.duration_ms = 3 * 3600 * 1000LL;
  spec.input_bound = true;
  spec.stall = 0.10;  // activity 72%, wait 10%
  auto f = AdviseOnStream(spec, "small_stall");
  EXPECT_TRUE(f.empty()) << f[0].id;
}

TEST(AdviseLeverTest, SeedTableIsComputedFromItsInputs) {
  TrainingStep step;
  LeverParams p;
  auto rows = SeedLeverTable(step, p);
  ASSERT_GE(rows.size(), 8u);
  EXPECT_DOUBLE_EQ(rows[0].ours.memory_gb, 42.6);  // the FP32 row is the input
  EXPECT_DOUBLE_EQ(rows[0].ours.step_ms, 1890);
  // Mixed precision: activations (70% of 42.6) halve, state stays, compute halves, FP16 on the wire.
  EXPECT_NEAR(rows[1].ours.memory_gb, 42.6 * 0.3 + 42.6 * 0.7 * 0.5, 1e-9);
  EXPECT_NEAR(rows[1].ours.step_ms, 1890 * 0.8 * 0.5 + 1890 * 0.2 * 0.5, 1e-9);
  EXPECT_NEAR(rows[1].ours.comm_reduction, 0.5, 1e-12);
  // 8-bit alone is 75% less communication than FP32: the seed's 76% is one point above it.
  EXPECT_NEAR(rows[3].ours.comm_reduction, 0.75, 1e-12);
  // Checkpointing at 36 layers keeps a third of the activations and adds a forward pass.
  EXPECT_NEAR(rows[2].ours.memory_gb, 42.6 * 0.3 + 42.6 * 0.7 / 3.0, 1e-9);
  EXPECT_NEAR(rows[2].ours.step_ms, 1890 * 0.8 * 4.0 / 3.0 + 1890 * 0.2, 1e-9);
  const LeverTableRow& seed_row = rows.back();
  ASSERT_TRUE(seed_row.has_seed);
  EXPECT_EQ(seed_row.seed.memory_gb, 15.3);
  // The differences name what the seed's figures need under our multipliers.
  auto notes = SeedTableDifferences(step, p);
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_NE(notes[2].find("19.2%"), std::string::npos) << notes[2];
  // With the activation share the seed's memory implies, our model gives its 15.3 GB exactly.
  TrainingStep implied = step;
  implied.activation_share = (1.25 * 42.6 - 15.3) / (1.25 - 0.5 * 2.0 / 6.0) / 42.6;
  EXPECT_NEAR(SeedLeverTable(implied, p).back().ours.memory_gb, 15.3, 1e-9);
}

TEST(AdviseLeverTest, SeedImpliedInputsReproduceTheSeedsRow) {
  TrainingStep step;
  LeverParams p;
  SeedImpliedInputs implied = SolveSeedImpliedInputs(step, p);
  // The inputs, solved together and rounded: 82.2% activations, 1.33x, 19.2% density.
  EXPECT_NEAR(implied.step.activation_share, 0.822, 1e-12);
  EXPECT_NEAR(1.0 / implied.params.mp_compute_factor, 1.33, 1e-12);
  EXPECT_NEAR(implied.params.topk_density, 0.192, 1e-12);
  EXPECT_EQ(implied.step.comm_share, step.comm_share);  // the rest is ours unchanged
  EXPECT_EQ(implied.params.layers, p.layers);
  auto rows = SeedImpliedLeverTable(implied);
  ASSERT_EQ(rows.size(), SeedLeverTable(step, p).size());
  const LeverTableRow& combo = rows.back();
  ASSERT_TRUE(combo.has_seed);
  EXPECT_EQ(combo.config.rfind("seed-implied inputs: ", 0), 0u) << combo.config;
  // The model's arithmetic, by hand: state 42.6 x 0.178 x (1 + 4/16) + activations 42.6 x 0.822
  // x 0.5 x 2/6; compute 1,512 / 1.33 x 4/3 x 1.01 + all-reduce 378 x 0.192 x 5/4.
  const double mem = 42.6 * 0.178 * 1.25 + 42.6 * 0.822 * 0.5 / 3.0;
  const double ms = 1512.0 / 1.33 * 4.0 / 3.0 * 1.01 + 378.0 * 0.192 * 5.0 / 4.0;
  EXPECT_NEAR(combo.ours.memory_gb, mem, 1e-9);
  EXPECT_NEAR(combo.ours.step_ms, ms, 1e-9);
  EXPECT_NEAR(combo.ours.comm_reduction, 0.76, 1e-12);
  // ... which is the seed's row within its rounding: 15.3 GB at one decimal, 1,620 ms at 10 ms.
  EXPECT_NEAR(combo.ours.memory_gb, combo.seed.memory_gb, 0.05);
  EXPECT_NEAR(combo.ours.step_ms, combo.seed.step_ms, 5.0);
  EXPECT_GT(std::abs(combo.ours.step_ms - combo.seed.step_ms), 0.5);  // 1,621.7: the note says so
  auto notes = SeedImpliedNotes(step, p, implied);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[1].find("15.31 GB / 1621.7 ms / -76.0%"), std::string::npos) << notes[1];
}

TEST(AdviseLeverTest, SpeedModelIsTheGenerators) {
  sim::Workload w = sim::GenerateLlmFinetune(200, 86400, 3);
  for (const sim::JobSpec& j : w.jobs) {
    auto s = sim::LlmFinetuneStepsPerS(j.job_type, 1.0);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(*s, j.steps_per_s) << j.job_type;
  }
  EXPECT_FALSE(sim::LlmFinetuneStepsPerS("no-such", 1.0).has_value());
}

// Checkpointing shrinks LoRA-70B's state enough to fit eight A10Gs, where it did not fit before:
// the lever changes where the job may run.
TEST(AdviseLeverTest, CheckpointingOpensSmallerGpus) {
  LeverParams p;
  JobLeverEffect e = LlmJobEffect("lora-70b", 8, "A10G", {Lever::kCheckpointing}, p);
  EXPECT_LT(e.memory_factor, 1.0);
  EXPECT_NEAR(e.step_factor, 0.75 * 4.0 / 3.0 + 0.25, 1e-12);
  auto before = sim::LlmFinetuneStepsPerS("lora-70b", 1.0);
  auto after = sim::LlmFinetuneStepsPerS("lora-70b", e.memory_factor);
  ASSERT_TRUE(before.has_value() && after.has_value());
  EXPECT_EQ((*before)[3], 0.0);  // A10G
  EXPECT_GT((*after)[3], 0.0);
  // A single GPU has no all-reduce: compression changes nothing there.
  EXPECT_DOUBLE_EQ(LlmJobEffect("lora-7b", 1, "L4", {Lever::kCompress8Bit}, p).step_factor, 1.0 * 1.01);
}

TEST(AdviseLeverTest, ReplayRanksLeversByDollarsAgainstTheSameBaseline) {
  ReplaySpec spec;
  spec.data_dir = DataDir();
  spec.duration_s = 86400;
  auto r = ReplayLevers(spec, nullptr);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  ASSERT_GE(r->rows.size(), 5u);
  EXPECT_GT(r->baseline_cost_usd, 0);
  EXPECT_TRUE(std::is_sorted(r->rows.begin(), r->rows.end(), [](const auto& a, const auto& b) {
    return a.usd_per_month > b.usd_per_month;
  }));
  const double month = kHoursPerMonth / 24.0;
  bool some_saving = false, some_cost = false;
  for (const auto& row : r->rows) {
    if (row.name.starts_with("mixed-precision")) {
      EXPECT_GT(row.cost_usd, r->baseline_cost_usd);  // FP32 is dearer
      continue;
    }
    EXPECT_NEAR(row.usd_per_month, (r->baseline_cost_usd - row.cost_usd) * month, 1e-6) << row.name;
    some_saving |= row.usd_per_month > 0;
    some_cost |= row.usd_per_month < 0;
  }
  EXPECT_TRUE(some_saving);
  EXPECT_TRUE(some_cost);  // checkpointing costs compute: not every lever pays
  // Deterministic: the same spec gives the same figures.
  auto again = ReplayLevers(spec, nullptr);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->rows[0].cost_usd, r->rows[0].cost_usd);
  auto findings = LeverFindings(*r, "seedance advise --workload llm-finetune");
  for (const Finding& f : findings) {
    EXPECT_GT(f.usd_per_month, 0);
    EXPECT_EQ(f.kind, "lever");
    EXPECT_LE(f.ci_low, f.usd_per_month);
    EXPECT_GE(f.ci_high, f.usd_per_month);
  }
}

}  // namespace
}  // namespace seedance::advise
