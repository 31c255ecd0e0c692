#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

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
std::vector<Finding> AdviseOnStream(const testing::WasteStreamSpec& spec, const std::string& name) {
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
  FleetRules rules;
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
