#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace seedance::sim {

// Which data Seedance's defaults were tuned on, and which were held out (docs/BENCHMARKS.md,
// "Tuning the cost-aware policy"; issue 29). The knobs were chosen on llm-finetune workload seeds
// 0-4 and on philly; llm-finetune seeds 5-9 and the gavel workload were never run while tuning.
// Headline figures (README, `seedance cost-benchmark`) come from the held-out set; the tuning set
// stands beside them, labelled.
enum class SeedSet {
  kHeldOut,  // never run while the defaults were tuned
  kTuning,   // the defaults were chosen on it (in-sample)
  kOutside,  // in neither named set (e.g. llm-finetune seed 42, openb, a jobs CSV)
};

// The set `seed` of `workload` belongs to: llm-finetune 0-4 tuning, 5-9 held out, others outside;
// gavel: every seed held out; philly: every seed tuning (the seed only seeds the simulation of
// the same trace); every other workload: outside.
SeedSet ClassifySeed(std::string_view workload, std::uint64_t seed);

// The named sets `seedance cost-benchmark` runs by default: llm-finetune held out {5..9}, tuning
// {0..4}; gavel held out {42}; philly tuning {42}; empty otherwise.
std::vector<std::uint64_t> HeldOutSeeds(std::string_view workload);
std::vector<std::uint64_t> TuningSeeds(std::string_view workload);

// "held out", "tuning", "outside the tuning / held-out split".
std::string SeedSetName(SeedSet set);
// The results.json key of a set: "held_out", "tuning", "outside_split".
std::string SeedSetKey(SeedSet set);

// A policy that the default held-out run leaves out, and why (said in the table, the report and
// results.json, never silently).
struct LeftOutPolicy {
  std::string policy;
  std::string reason;
};
// llm-finetune: gavel-las-spot (its per-round LP takes more than 5 minutes on held-out seed 7;
// it costs 1.6-2.2x SkyPilot on the tuning seeds, so it is never the best baseline there). Empty
// for every other workload.
std::vector<LeftOutPolicy> HeldOutLeftOut(std::string_view workload);

// Seeds in as few words as possible: "5-9", "0,2,7", "42".
std::string SeedRangeText(const std::vector<std::uint64_t>& seeds);

}  // namespace seedance::sim
