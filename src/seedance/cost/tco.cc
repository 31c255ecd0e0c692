#include "seedance/cost/tco.h"

#include <fmt/format.h>

#include <cmath>

namespace seedance::cost {
namespace {

constexpr double kHoursPerYear = 8760;

Status Check(bool ok, std::string_view field, double value, std::string_view range) {
  if (ok) return Status::Ok();
  return InvalidArgumentError(fmt::format("{} {:g}: must be {}", field, value, range));
}

}  // namespace

Result<Tco> OwnedGpuTco(const gpu::GpuFacts& g, TcoInputs in) {
  if (!g.disclosed || !(g.fp16_tflops > 0) || !(g.tdp_w > 0)) {
    return InvalidArgumentError(fmt::format("gpu: the catalog has no FP16 peak and TDP for '{}'", g.name));
  }
  SEEDANCE_RETURN_IF_ERROR(Check(in.gpu_price_usd >= 0 && std::isfinite(in.gpu_price_usd), "gpu_price",
                                 in.gpu_price_usd, "> 0 USD"));
  SEEDANCE_RETURN_IF_ERROR(Check(in.life_years > 0 && std::isfinite(in.life_years), "life", in.life_years,
                                 "> 0 years"));
  SEEDANCE_RETURN_IF_ERROR(Check(in.tflops >= 0 && std::isfinite(in.tflops), "tflops", in.tflops, ">= 0"));
  SEEDANCE_RETURN_IF_ERROR(Check(in.watts_per_tflops >= 0 && std::isfinite(in.watts_per_tflops), "watts_per_tflops",
                                 in.watts_per_tflops, ">= 0"));
  SEEDANCE_RETURN_IF_ERROR(Check(in.utilization >= 0 && in.utilization <= 1, "utilization", in.utilization,
                                 "in [0, 1]"));
  SEEDANCE_RETURN_IF_ERROR(Check(in.usd_per_kwh >= 0 && std::isfinite(in.usd_per_kwh), "usd_per_kwh",
                                 in.usd_per_kwh, ">= 0"));
  SEEDANCE_RETURN_IF_ERROR(Check(in.pue >= 1 && in.pue <= 5, "pue", in.pue, "in [1, 5]"));
  SEEDANCE_RETURN_IF_ERROR(Check(in.ops_usd_per_tflops_year >= 0 && std::isfinite(in.ops_usd_per_tflops_year), "ops",
                                 in.ops_usd_per_tflops_year, ">= 0 USD per TFLOPS-year"));
  Tco t;
  if (in.gpu_price_usd > 0) {
    t.price_source = "given";
  } else if (g.purchase_usd > 0) {
    in.gpu_price_usd = g.purchase_usd;
    t.price_source = std::string(g.purchase_source);
  } else {
    in.gpu_price_usd = kFallbackGpuPriceUsd;
    t.price_source = std::string(kFallbackGpuPriceSource);
  }
  if (in.tflops == 0) in.tflops = g.fp16_tflops;
  if (in.watts_per_tflops == 0) in.watts_per_tflops = g.tdp_w / in.tflops;
  t.gpu_watts = in.watts_per_tflops * in.tflops;
  if (t.gpu_watts > g.tdp_w * 1.000001) {
    return InvalidArgumentError(fmt::format(
        "watts_per_tflops {:g} x {:g} TFLOPS = {:.0f} W per GPU, above the {}'s {:.0f} W TDP (the catalog's "
        "W per TFLOPS is {:.2f})",
        in.watts_per_tflops, in.tflops, t.gpu_watts, g.name, g.tdp_w, g.tdp_w / g.fp16_tflops));
  }
  t.inputs = in;
  t.depreciation = in.gpu_price_usd / in.life_years / in.tflops;
  t.power = in.watts_per_tflops / 1000.0 * in.utilization * kHoursPerYear * in.usd_per_kwh;
  t.cooling = t.power * (in.pue - 1.0);
  t.operations = in.ops_usd_per_tflops_year;
  t.total = t.depreciation + t.power + t.cooling + t.operations;
  t.usd_per_gpu_hour = t.total * in.tflops / kHoursPerYear;
  t.power_usd_per_gpu_hour = (t.power + t.cooling) * in.tflops / kHoursPerYear;
  return t;
}

}  // namespace seedance::cost
