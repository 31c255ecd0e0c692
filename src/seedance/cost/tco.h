#pragma once

#include <string>
#include <string_view>

#include "seedance/core/status.h"
#include "seedance/gpu/catalog.h"

namespace seedance::cost {

// The total cost of ownership of an owned GPU (the seed's S1.3 model, per TFLOPS-year):
//   depreciation = price / life / TFLOPS
//   power        = W per TFLOPS / 1000 x utilization x 8,760 h x $/kWh
//   cooling      = power x (PUE - 1)
//   operations   = as given, $ per TFLOPS-year
// One GPU-hour of it is total x TFLOPS / 8,760. `seedance catalog` prints it and a fleet file's
// owned GPUs are billed at it (sim/fleet_file.h).
// Where a default comes from (data/gpus/SOURCE.md).
inline constexpr double kFallbackGpuPriceUsd = 12000;  // a type with no cited purchase price
inline constexpr std::string_view kFallbackGpuPriceSource =
    "fallback, not a market price: the seed's S1.3 example (no cited purchase price for this type; "
    "give yours: --gpu-price, owned.tco.gpu_price or a catalog file's purchase)";
inline constexpr std::string_view kPowerSource =
    "$0.08/kWh: US EIA Electric Power Monthly, 2023 average retail price to the industrial sector; "
    "PUE 1.58: Uptime Institute Global Data Center Survey 2023 average";

struct TcoInputs {
  // Purchase price of one GPU (its share of the server included); 0 = the catalog's purchase price
  // of the type (gpu::GpuFacts::purchase_usd, cited), else kFallbackGpuPriceUsd.
  double gpu_price_usd = 0;
  double life_years = 3;         // straight-line depreciation life
  double tflops = 0;             // FP16 TFLOPS; 0 = the catalog's FP16 peak
  double watts_per_tflops = 0;   // 0 = the catalog's TDP / FP16 peak; never above the TDP per GPU
  double utilization = 0.5;      // share of the TDP drawn on average, 0..1
  double usd_per_kwh = 0.08;     // kPowerSource
  double pue = 1.58;             // power usage effectiveness, >= 1; kPowerSource
  double ops_usd_per_tflops_year = 0.09;
};

struct Tco {
  TcoInputs inputs;   // with gpu_price_usd, tflops and watts_per_tflops resolved from the catalog
  std::string price_source;  // where gpu_price_usd comes from ("given" when the caller set it)
  double gpu_watts = 0;
  // Per TFLOPS-year.
  double depreciation = 0, power = 0, cooling = 0, operations = 0, total = 0;
  // One GPU for one hour: total x TFLOPS / 8,760; of it, power and cooling (the marginal cost).
  double usd_per_gpu_hour = 0;
  double power_usd_per_gpu_hour = 0;
};

// The TCO of one owned GPU of catalog row `gpu`. Errors (kInvalidArgument, naming the input:
// "gpu", "gpu_price", "life", "tflops", "watts_per_tflops", "utilization", "usd_per_kwh", "pue",
// "ops"): an undisclosed row or one without FP16 peak and TDP, a value out of range, or power
// above the GPU's TDP ("watts_per_tflops 300 x 312 TFLOPS = 93600 W per GPU, above the A100-80G's
// 400 W TDP (the catalog's W per TFLOPS is 1.28)").
Result<Tco> OwnedGpuTco(const gpu::GpuFacts& gpu, TcoInputs inputs);

}  // namespace seedance::cost
