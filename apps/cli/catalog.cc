// seedance catalog: the hardware catalog's efficiency table (S1.1-S1.2) and the total cost of
// ownership per TFLOPS-year of owned GPUs (S1.3).
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "common.h"
#include "seedance/cluster/gpu_model.h"
#include "seedance/cost/price_table.h"

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

// GPUs: dense FP16/BF16 tensor TFLOPS, INT8 TOPS (0 = none), memory GiB, bandwidth GB/s, TDP W
// (NVIDIA datasheets; K80/P100 have no tensor cores: FP16 from their CUDA cores), interconnect.
// Prices are not here: on-demand $/GPU-h comes from the price table (data/prices/gpu_prices.csv),
// spot = cost::kDefaultSpotRatio x on-demand unless a spot quote exists (RunPod A100-80G 1.19).
struct Gpu {
  const char* name;
  double fp16, int8, mem, bw, tdp;
  const char* link;
  double spot_quote;  // 0: none
};
constexpr Gpu kGpus[] = {
    {"H100", 989, 1979, 80, 3350, 700, "NVLink", 0},  {"A100-80G", 312, 624, 80, 2039, 400, "NVLink", 1.19},
    {"A100", 312, 624, 40, 1555, 400, "NVLink", 0},   {"L4", 121, 242, 24, 300, 72, "PCIe", 0},
    {"A10G", 70, 140, 24, 600, 300, "PCIe", 0},       {"A10", 125, 250, 24, 600, 150, "PCIe", 0},
    {"T4", 65, 130, 16, 320, 70, "PCIe", 0},          {"V100", 125, 0, 16, 900, 300, "NVLink", 0},
    {"P100", 21.2, 0, 16, 732, 300, "NVLink", 0},     {"K80", 8.7, 0, 24, 480, 300, "PCIe", 0},
};

struct TcoInputs {
  double gpu_price = 12000, life_years = 3, tflops = 312, watts_per_tflops = 300, utilization = 0.5,
         usd_per_kwh = 0.07, pue = 1.45, ops = 0.09;
};

int Run(const TcoInputs& in, const std::string& prices_path) {
  auto prices = cost::PriceTable::LoadFile(prices_path.empty() ? cost::BundledPriceTablePath() : prices_path);
  if (!prices.has_value()) return ReportError(prices.error());
  std::cout << "Seed AWS instances (S1.2): FP16 TFLOPS per dollar-hour\n";
  std::cout << fmt::format("{:<14} {:<14} {:>7} {:>9} {:>9} {:>10} {:>10}\n", "instance", "GPUs", "TFLOPS", "OD $/h",
                           "spot $/h", "TFLOPS/$", "spot T/$");
  for (const auto& i : kInstances) {
    std::cout << fmt::format("{:<14} {:<14} {:>7.0f} {:>9.2f} {:>9.2f} {:>10.2f} {:>10.2f}\n", i.name, i.gpus, i.tflops,
                             i.od, i.spot, i.tflops / i.od, i.tflops / i.spot);
  }
  std::cout << "(the seed prints spot TFLOPS/$ 19.71, 36.27, 42.59: reproduced; its TFLOPS are its own figures, below\n"
               " the datasheet sums, e.g. 8 x A100 = 2,496 dense FP16 TFLOPS)\n\n";
  std::cout << "GPU catalog (S1.1): datasheet dense FP16 TFLOPS, per-GPU prices\n";
  std::cout << fmt::format("{:<9} {:>7} {:>7} {:>5} {:>6} {:>5} {:<7} {:>7} {:>7} {:>9} {:>9}\n", "GPU", "FP16 T", "INT8 T",
                           "GiB", "GB/s", "W", "link", "OD $/h", "spot $", "TFLOPS/$", "spot T/$");
  for (const auto& g : kGpus) {
    auto model = cluster::ParseGpuModel(g.name);
    const cost::GpuPrice* p = model.has_value() ? prices->Find(*model) : nullptr;
    if (p == nullptr) continue;  // not priced in this table
    const double od = ToUsd(p->usd_per_gpu_hour);
    const double spot = g.spot_quote > 0 ? g.spot_quote : od * cost::kDefaultSpotRatio;
    std::cout << fmt::format("{:<9} {:>7.1f} {:>7} {:>5.0f} {:>6.0f} {:>5.0f} {:<7} {:>7.2f} {:>7.2f} {:>9.1f} {:>9.1f}\n",
                             g.name, g.fp16, g.int8 > 0 ? fmt::format("{:.0f}", g.int8) : "-", g.mem, g.bw, g.tdp,
                             g.link, od, spot, g.fp16 / od, g.fp16 / spot);
  }
  // TCO per TFLOPS-year (S1.3).
  const double hours = 8760;
  double depreciation = in.gpu_price / in.life_years / in.tflops;
  double power = in.watts_per_tflops / 1000.0 * in.utilization * hours * in.usd_per_kwh;
  double cooling = power * (in.pue - 1.0);
  double total = depreciation + power + cooling + in.ops;
  std::cout << fmt::format("\nTCO per TFLOPS-year of an owned GPU (S1.3): ${:.0f} GPU, {:.0f} years, {:.0f} TFLOPS, {:.0f} W/TFLOPS "
                           "at {:.0f}% utilization, ${:.2f}/kWh, PUE {:.2f}, ops ${:.2f}\n",
                           in.gpu_price, in.life_years, in.tflops, in.watts_per_tflops, 100 * in.utilization,
                           in.usd_per_kwh, in.pue, in.ops);
  std::cout << fmt::format("{:<14} {:>12} {:>8}  formula\n", "component", "ours $", "seed $");
  std::cout << fmt::format("{:<14} {:>12.2f} {:>8}  price / life / TFLOPS\n", "depreciation", depreciation, "0.31");
  std::cout << fmt::format("{:<14} {:>12.2f} {:>8}  W/TFLOPS x utilization x 8,760 h x $/kWh\n", "power", power, "0.28");
  std::cout << fmt::format("{:<14} {:>12.2f} {:>8}  power x (PUE - 1)\n", "cooling", cooling, "0.19");
  std::cout << fmt::format("{:<14} {:>12.2f} {:>8}  as given\n", "operations", in.ops, "0.09");
  std::cout << fmt::format("{:<14} {:>12.2f} {:>8}\n", "total", total, "0.87");
  std::cout << "Where the seed differs: its four parts do add up (0.31 + 0.28 + 0.19 + 0.09 = 0.87), but none follows\n"
               "from its inputs in one unit: 300 W/TFLOPS at 50% for a year at $0.07/kWh is $91.98 of power, not $0.28;\n"
               "its own cooling script (300 W x 8,760 h x PUE 1.45 x $0.07 x 0.45) gives $120.03, which it prints as\n"
               "$0.192; and $12,000 over 3 years is $0.31 per TFLOPS-year only for a 12,903-TFLOPS device. We keep\n"
               "the formulas and print both; pass --tflops etc. to price your own hardware.\n";
  return kExitOk;
}

}  // namespace

Action RegisterCatalog(CLI::App& app) {
  auto in = std::make_shared<TcoInputs>();
  auto prices = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("catalog", "GPU catalog: TFLOPS per dollar (on-demand, spot) and TCO per TFLOPS-year");
  cmd->add_option("--gpu-price", in->gpu_price, "owned GPU price, USD")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--life", in->life_years, "depreciation life, years")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--tflops", in->tflops, "the GPU's FP16 TFLOPS")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--watts-per-tflops", in->watts_per_tflops, "W per TFLOPS")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--utilization", in->utilization, "0..1")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--usd-per-kwh", in->usd_per_kwh, "electricity price")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--pue", in->pue, "power usage effectiveness (>= 1)")->capture_default_str()->check(CLI::Range(1.0, 5.0));
  cmd->add_option("--ops", in->ops, "operations $ per TFLOPS-year")->capture_default_str()->check(CLI::NonNegativeNumber);
  cmd->add_option("--prices", *prices, "GPU price CSV (default: data/prices/gpu_prices.csv)");
  return [cmd, in, prices]() { return cmd->parsed() ? Run(*in, *prices) : -1; };
}

}  // namespace seedance::cli
