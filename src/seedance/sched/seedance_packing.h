#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"
#include "seedance/sched/placement_policy.h"

namespace seedance::sched {

// The two constants of Seedance's packing policy ("seedance"), and the split of the openb
// experiment they were chosen on. Both live here so that a change of one is seen next to the other.

// Constants of the Seedance packer (CapacityAwareNodeFrag scored in FGD's sigmoid form).
// The defaults are the shipped values. They were chosen on the tuning part of
// SeedancePackingSplit() only (grid and result: docs/BENCHMARKS.md §1); every other cell is held
// out and was not run while choosing them.
struct SeedancePackingOptions {
  // Divides a typical pod's CPU and memory request when counting how many copies of it the
  // node's free CPU and memory can feed (CapacityAwareNodeFrag). REQUIRES: 0 < x <= 1.
  double reserve_factor = 0.60;
  // Fragmentation growth, milli-GPU, that moves the score's sigmoid by one unit. Growths within
  // one integer score band tie, and ties go to the seeded node order. REQUIRES: > 0.
  double temperature_milli = 1400.0;

  // Returns kInvalidArgument naming the field that breaks its REQUIRES.
  Status Validate() const;
};

// Returns the Seedance packer with `options` (MakePlacementPolicy("seedance") uses the
// defaults). REQUIRES: options.Validate().ok().
std::unique_ptr<PlacementPolicy> MakeSeedancePlacementPolicy(const PolicyContext& context,
                                                             const SeedancePackingOptions& options);

// Which part of the packing experiment a (variant, seed) cell belongs to.
enum class PackingSplitPart { kTuning, kHeldOut };

// Returns "tuning" or "held-out".
std::string_view PackingSplitPartName(PackingSplitPart part);

// Which (trace variant, seed) cells of the openb packing experiment may be used to choose the
// packer's constants (the tuning part) and which are held out (everything else). A variant is
// named by its pod-list suffix ("default" for data/openb/openb_pod_list_default.csv).
struct PackingSplit {
  std::vector<std::string> variants;          // every bundled variant, report order
  std::vector<std::uint64_t> seeds;           // every seed the experiment runs
  std::vector<std::string> tuning_variants;   // a subset of variants
  std::vector<std::uint64_t> tuning_seeds;    // a subset of seeds

  // Returns kTuning iff `variant` is a tuning variant and `seed` a tuning seed. `variant` may be
  // the file stem ("openb_pod_list_default") or the suffix ("default"); an unknown variant (a
  // trace the packer never saw) is held out.
  PackingSplitPart PartOf(std::string_view variant, std::uint64_t seed) const;

  // Returns the seeds of `variant` that fall in `part`, ascending.
  std::vector<std::uint64_t> SeedsOf(std::string_view variant, PackingSplitPart part) const;
};

// The split the shipped SeedancePackingOptions were chosen on:
//   tuning:   seeds 42-46 of default, gpushare40, multigpu30, gpuspec10, gpuspec25 (25 cells);
//   held out: seeds 47-61 of those five variants, and seeds 42-61 of gpushare20, gpushare60,
//             gpushare80, multigpu20, multigpu40, gpuspec05, gpuspec20 (215 cells); gpushare20
//             and gpuspec05 are not in the FGD paper's figures.
const PackingSplit& SeedancePackingSplit();

// Returns the bundled pod-list file name of a variant: "openb_pod_list_<variant>.csv".
std::string PackingVariantFile(std::string_view variant);

}  // namespace seedance::sched
