// seedance catalog: the hardware catalog's efficiency table (S1.1-S1.2) and the total cost of
// ownership per TFLOPS-year of owned GPUs (S1.3).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "common.h"
#include "seedance/cluster/gpu_model.h"
#include "seedance/cost/price_table.h"
#include "seedance/cost/tco.h"
#include "seedance/gpu/catalog.h"

namespace seedance::cli {
namespace {

// Instance types of the seed's AWS table (S1.2): FP16 TFLOPS as the seed states them, on-demand
// and spot $/h.
struct Instance {
  const char* name;
  const char* gpus;
  double tflops, od, spot;
};
constexpr Instance kInstances[] = {
    {"p4d.24xlarge", "8x A100 40GB", 235, 32.77, 11.92},
    {"g5.48xlarge", "8x A10G", 140, 10.24, 3.86},
    {"g6.24xlarge", "4x L4", 112, 7.12, 2.63},
};

int Run(const std::string& gpu_name, const cost::TcoInputs& in, const std::string& prices_path) {
  // The owned GPU's TFLOPS and W per TFLOPS come from the catalog (its TDP over its FP16 peak: an
  // A100 draws 400 W for 312 TFLOPS, 1.28 W/TFLOPS); an override may not put it above its TDP.
  auto owned = gpu::ParseGpuName(gpu_name, gpu::NameMatch::kProduct);
  if (!owned.has_value()) return ReportError(InvalidArgumentError("--gpu: " + owned.error().message()));
  const gpu::GpuFacts& og = gpu::GpuAt(*owned);
  auto tco = cost::OwnedGpuTco(og, in);
  if (!tco.has_value()) {  // "watts_per_tflops 300 x ..." -> "--watts-per-tflops 300 x ..."
    std::string message = tco.error().message();
    const std::size_t field_end = std::min(message.find_first_of(" :"), message.size());
    std::replace(message.begin(), message.begin() + static_cast<std::ptrdiff_t>(field_end), '_', '-');
    return ReportError(InvalidArgumentError("--" + message));
  }
  auto prices = cost::PriceTable::LoadFile(prices_path.empty() ? cost::BundledPriceTablePath() : prices_path);
  if (!prices.has_value()) return ReportError(prices.error());
  std::cout << "Seed AWS instances: FP16 TFLOPS per dollar-hour\n";
  std::cout << fmt::format("{:<14} {:<14} {:>7} {:>9} {:>9} {:>10} {:>10}\n", "instance", "GPUs", "TFLOPS", "OD $/h",
                           "spot $/h", "TFLOPS/$", "spot T/$");
  for (const auto& i : kInstances) {
    std::cout << fmt::format("{:<14} {:<14} {:>7.0f} {:>9.2f} {:>9.2f} {:>10.2f} {:>10.2f}\n", i.name, i.gpus, i.tflops,
                             i.od, i.spot, i.tflops / i.od, i.tflops / i.spot);
  }
  std::cout << "(the seed prints spot TFLOPS/$ 19.71, 36.27, 42.59: reproduced; its TFLOPS are its own figures, below\n"
               " the datasheet sums, e.g. 8 x A100 = 2,496 dense FP16 TFLOPS)\n\n";
  // GPUs: facts from the GPU catalog (src/seedance/gpu/catalog.cc, each row cited there), prices
  // from the price table (spot = its quoted spot price, else cost::kDefaultSpotRatio x on-demand).
  std::cout << "GPU catalog: datasheet dense FP16 TFLOPS per GPU (src/seedance/gpu/catalog.cc), "
               "prices per GPU from " << prices->name() << "\n";
  std::cout << fmt::format("{:<9} {:>7} {:>7} {:>5} {:>6} {:>5} {:>5} {:<7} {:>7} {:>7} {:>9} {:>9}\n", "GPU", "FP16 T",
                           "INT8 T", "GiB", "GB/s", "W", "W/T", "link", "OD $/h", "spot $", "TFLOPS/$", "spot T/$");
  std::vector<cluster::GpuModelIndex> rows;  // priced models with known facts, fastest FP16 first
  for (std::size_t i = 0; i < gpu::Catalog().size(); ++i) {
    const auto m = static_cast<cluster::GpuModelIndex>(i);
    if (gpu::GpuAt(m).disclosed && prices->Find(m) != nullptr) rows.push_back(m);
  }
  std::stable_sort(rows.begin(), rows.end(), [](cluster::GpuModelIndex a, cluster::GpuModelIndex b) {
    return gpu::GpuAt(a).fp16_tflops > gpu::GpuAt(b).fp16_tflops;
  });
  for (cluster::GpuModelIndex m : rows) {
    const gpu::GpuFacts& g = gpu::GpuAt(m);
    const cost::GpuPrice* p = prices->Find(m);
    const double od = ToUsd(p->usd_per_gpu_hour);
    const double spot = p->spot_usd_per_gpu_hour.raw() > 0 ? ToUsd(p->spot_usd_per_gpu_hour) : od * cost::kDefaultSpotRatio;
    const std::string_view link = g.interconnect.starts_with("NVLink") ? "NVLink" : "PCIe";
    std::cout << fmt::format("{:<9} {:>7.1f} {:>7} {:>5.0f} {:>6.0f} {:>5.0f} {:>5.2f} {:<7} {:>7.2f} {:>7.2f} {:>9.1f} {:>9.1f}\n",
                             g.name, g.fp16_tflops, g.int8_tops > 0 ? fmt::format("{:.0f}", g.int8_tops) : "-", g.memory_gib,
                             g.memory_gb_s, g.tdp_w, g.tdp_w / g.fp16_tflops, link, od, spot, g.fp16_tflops / od,
                             g.fp16_tflops / spot);
  }
  std::cout << "(one GPU as clouds bill it: the K80 row is one of the board's two GPUs; FP16 on tensor cores where\n"
               " present, else CUDA cores; spot is a quoted price where the price table has one, else "
            << cost::kDefaultSpotRatio << " x on-demand)\n";
  // TCO per TFLOPS-year (S1.3), cost::OwnedGpuTco.
  const cost::TcoInputs& r = tco->inputs;
  const double depreciation = tco->depreciation, power = tco->power, cooling = tco->cooling, total = tco->total;
  std::cout << fmt::format("\nTCO per TFLOPS-year of an owned {}: ${:.0f} GPU, {:.0f} years, {:.0f} TFLOPS, {:.2f} W/TFLOPS "
                           "({:.0f} W per GPU, TDP {:.0f} W) at {:.0f}% utilization, ${:.2f}/kWh, PUE {:.2f}, ops ${:.2f}\n",
                           og.name, r.gpu_price_usd, r.life_years, r.tflops, r.watts_per_tflops, tco->gpu_watts, og.tdp_w,
                           100 * r.utilization, r.usd_per_kwh, r.pue, r.ops_usd_per_tflops_year);
  std::cout << "purchase price: " << tco->price_source << "\npower defaults: " << cost::kPowerSource << "\n";
  std::cout << fmt::format("{:<14} {:>12} {:>8}  formula\n", "component", "ours $", "seed $");
  std::cout << fmt::format("{:<14} {:>12.2f} {:>8}  price / life / TFLOPS\n", "depreciation", depreciation, "0.31");
  std::cout << fmt::format("{:<14} {:>12.2f} {:>8}  W/TFLOPS x utilization x 8,760 h x $/kWh\n", "power", power, "0.28");
  std::cout << fmt::format("{:<14} {:>12.2f} {:>8}  power x (PUE - 1)\n", "cooling", cooling, "0.19");
  std::cout << fmt::format("{:<14} {:>12.2f} {:>8}  as given\n", "operations", r.ops_usd_per_tflops_year, "0.09");
  std::cout << fmt::format("{:<14} {:>12.2f} {:>8}\n", "total", total, "0.87");
  {
    // What one owned GPU-hour costs (the price a fleet file's owned pool bills at these inputs), and
    // its marginal part: power and cooling.
    const auto listed = prices->Find(static_cast<cluster::GpuModelIndex>(*owned));
    std::cout << fmt::format(
        "owned {}: ${:.3f} per GPU-hour (total x {:.0f} TFLOPS / 8,760 h), of which power and cooling ${:.3f} (the "
        "marginal cost of running it){}\n",
        og.name, tco->usd_per_gpu_hour, r.tflops, tco->power_usd_per_gpu_hour,
        listed != nullptr ? fmt::format("; on-demand list price ${:.2f} in {}", ToUsd(listed->usd_per_gpu_hour),
                                        prices->name())
                          : std::string());
  }
  // Every type's owned GPU-hour at the defaults (its cited purchase price, 3 years, the power defaults),
  // with where the purchase price comes from.
  std::cout << "\nOwned GPU-hour at the TCO defaults (purchase price of the type, 3 years, power defaults above):\n";
  std::cout << fmt::format("{:<9} {:>10} {:>9} {:>9}  {}\n", "GPU", "purchase $", "owned $/h", "power $/h", "purchase price source");
  for (std::size_t i = 0; i < gpu::Catalog().size(); ++i) {
    const gpu::GpuFacts& g = gpu::GpuAt(static_cast<gpu::GpuIndex>(i));
    auto at = cost::OwnedGpuTco(g, cost::TcoInputs{});
    if (!at.has_value()) continue;  // undisclosed types
    std::cout << fmt::format("{:<9} {:>10.0f} {:>9.3f} {:>9.3f}  {}\n", g.name, at->inputs.gpu_price_usd,
                             at->usd_per_gpu_hour, at->power_usd_per_gpu_hour, at->price_source);
  }
  std::cout << "Where the seed differs: its four parts do add up (0.31 + 0.28 + 0.19 + 0.09 = 0.87), but none follows\n"
               "from its inputs in one unit: 300 W/TFLOPS at 50% for a year at $0.07/kWh is $91.98 of power, not $0.28;\n"
               "its own cooling script (300 W x 8,760 h x PUE 1.45 x $0.07 x 0.45) gives $120.03, which it prints as\n"
               "$0.192; and $12,000 (its price) over 3 years is $0.31 per TFLOPS-year only for a 12,903-TFLOPS device. We keep\n"
               "the formulas and print both. Its 300 W/TFLOPS would put one A100 (312 TFLOPS) at 94 kW; ours is the\n"
               "catalog's TDP over FP16 peak (column W/T). Pass --gpu, --gpu-price etc. to price your own hardware.\n";
  return kExitOk;
}

}  // namespace

Action RegisterCatalog(CLI::App& app) {
  auto in = std::make_shared<cost::TcoInputs>();
  auto gpu_name = std::make_shared<std::string>("A100-80G");
  auto prices = std::make_shared<std::string>();
  CLI::App* cmd = AddCommand(app, "catalog", "Show GPU TFLOPS per dollar and the TCO of owned GPUs",
                             "From the one GPU catalog (datasheet facts) and the price table: TFLOPS "
                             "per dollar on-demand and spot, and the total cost of ownership per "
                             "TFLOPS-year of an owned GPU (power: the catalog's TDP over its FP16 "
                             "peak, e.g. 1.28 W per TFLOPS for an A100).",
                             "seedance catalog --prices data/prices/gpu_prices.csv");
  cmd->add_option("--gpu-price", in->gpu_price_usd,
                  "owned GPU price, USD (default: the type's cited purchase price, data/gpus/SOURCE.md)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--life", in->life_years, "depreciation life, years")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--gpu", *gpu_name, "the owned GPU (any spelling the GPU-name parser knows)")->capture_default_str();
  cmd->add_option("--tflops", in->tflops, "the GPU's FP16 TFLOPS (default: the catalog's)")->check(CLI::PositiveNumber);
  cmd->add_option("--watts-per-tflops", in->watts_per_tflops,
                  "W per TFLOPS (default: the catalog's TDP / FP16 peak; at most the TDP per GPU)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--utilization", in->utilization, "0..1")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--usd-per-kwh", in->usd_per_kwh, "electricity price")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--pue", in->pue, "power usage effectiveness (>= 1)")->capture_default_str()->check(CLI::Range(1.0, 5.0));
  cmd->add_option("--ops", in->ops_usd_per_tflops_year, "operations $ per TFLOPS-year")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--prices", *prices, "GPU price CSV (default: data/prices/gpu_prices.csv)");
  return [cmd, in, gpu_name, prices]() { return cmd->parsed() ? Run(*gpu_name, *in, *prices) : -1; };
}

}  // namespace seedance::cli
