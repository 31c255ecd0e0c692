#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/core/status.h"

// The one GPU catalog: what we know about each GPU model (datasheet facts, each row cited) and
// the one parser from a GPU name to a row. Every module reads GPU facts from here; prices are not
// here (they live in the price table, cost/price_table.h).
namespace seedance::gpu {

// Index of a row of Catalog(). Stable: rows are only ever appended, so an index names the same
// model in every build (cluster::GpuModelIndex is this type, and packing results depend on it).
using GpuIndex = std::uint8_t;

// One GPU model as a scheduler sees it: one device. A multi-GPU board is described per GPU (the
// Tesla K80 board carries two GK210 GPUs: 24 GB and 300 W per board, 12 GB and 150 W per GPU
// here). Figures are peak datasheet figures of the variant named in `product` (SXM where a model
// has several), dense (no structured sparsity). 0 means "none" (no INT8 / FP8 tensor rate) or, for
// an undisclosed model, "unknown".
struct GpuFacts {
  std::string_view name = {};        // canonical: trace, price table and CLI spelling ("A100-80G")
  std::string_view aliases = {};     // other exact spellings, '|'-separated, matched in any case
  std::string_view family = {};      // token that names the family in product strings ("A100");
                                // "" = recognized by name only
  int selector_gb = 0;          // a "<n>GB" token in a product string picks this row in its family
  bool family_default = false;  // the row a family token without a picking size maps to
  bool disclosed = true;        // false: the trace does not say what this model is (openb G2/G3)
  std::string_view product = {};     // the product variant the figures are for
  double memory_gib = 0;        // device memory (NVIDIA's binary "GB" of HBM/GDDR)
  double fp32_tflops = 0;       // FP32, CUDA cores
  double fp16_tflops = 0;       // FP16: tensor cores where present (FP32 accumulate unless noted),
                                // else CUDA cores (K80 has no FP16 units: its FP32 rate)
  bool tensor_cores = false;
  double int8_tops = 0;         // INT8 tensor, 0 = no INT8 tensor cores
  double fp8_tflops = 0;        // FP8 tensor, 0 = no FP8 tensor cores
  double memory_gb_s = 0;       // device memory bandwidth, GB/s
  double tdp_w = 0;             // board power limit per GPU, W
  std::string_view interconnect = {};  // GPU-to-GPU and host links
  double host_link_gb_s = 0;    // host link per direction (PCIe x16: Gen3 16, Gen4 32, Gen5 64)
  double speed_vs_v100 = 0;     // relative training speed (one V100 = 1) used by the openb replay;
                                // 0 = not defined for this model
  std::string_view speed_basis = {};   // in a word or two: "Gavel", "FP16 tensor ratio", "assumed"
  std::string_view speed_source = {};  // how speed_vs_v100 was obtained, in full
  std::string_view source = {};      // the datasheet (name and URL) the facts come from
  std::string_view note = {};        // where old tables disagreed, what was decided and why
  double bf16_tflops = 0;       // dense BF16 tensor; 0 = not stated (the FP16 rate on tensor cores
                                // since Ampere)
  // What one GPU costs to buy, its share of the server (host, NICs, chassis) included: the TCO
  // model's default purchase price (cost/tco.h). 0 = no cited price (the TCO model then uses its
  // stated fallback). `purchase_source` names the source and says where the figure is an estimate.
  double purchase_usd = 0;
  std::string_view purchase_source = {};
  // A catalog file's type only: its on-demand list price per GPU-hour and where it comes from
  // (price tables fall back to it for a type they do not price, cost/price_table.h). Built-in
  // types are priced by data/prices/gpu_prices.csv. 0 = none.
  double list_usd_per_gpu_hour = 0;
  std::string_view list_price_source = {};
  std::string_view defined_in = {};  // "" = built in; else "<catalog file>:<line>"
};

// The most rows the catalog holds: cluster::GpuModelSet is a 32-bit mask of row indices.
inline constexpr std::size_t kMaxGpuTypes = 32;

// Returns all rows; row i has GpuIndex i.
const std::vector<GpuFacts>& Catalog();
const GpuFacts& GpuAt(GpuIndex index);

// The canonical names in index order.
const std::vector<std::string>& KnownGpuNames();

// How strictly ParseGpuName matches. One set of rules, three widths; each includes the previous.
enum class NameMatch {
  kCanonical,  // the canonical name, exactly (case-sensitive): trace loaders, price tables
  kName,       // canonical names and aliases, in any case
  kProduct,    // also free-form product strings as nvidia-smi and dcgm-exporter print them
               // ("NVIDIA A100-SXM4-80GB", "Tesla V100-SXM2-32GB", "NVIDIA H100 80GB HBM3"):
               // split into tokens at non-alphanumerics, in any case; a token (or two adjacent
               // tokens joined: "RTX 6000", "2080 Ti") names the family; a "<n>GB" token picks
               // the family's row with that size, else the family's default row.
};

// Returns the row `text` names. Errors: kInvalidArgument "unknown GPU model '<text>' (known:
// <canonical names>)", or naming two families when a product string does.
Result<GpuIndex> ParseGpuName(std::string_view text, NameMatch match);

// Adds a GPU type from a catalog file (config/gpu_catalog_file.h reads the files) and returns its
// row; the catalog copies every string. `facts.name` must be new; its aliases and family may not
// name another row. Adding the same type again with the same datasheet facts returns its row and
// takes the purchase and list prices it gives (a fleet file may repeat the bundled catalog's entry
// at its own prices); other facts are an error naming where the type was defined. Errors: kInvalidArgument (an empty name, a name / alias / family another row has, no
// FP16 peak, memory or TDP, more than kMaxGpuTypes rows). Rows are appended, never removed, so
// indices stay stable. Not thread-safe: call while loading, before threads read the catalog.
Result<GpuIndex> AddGpuType(const GpuFacts& facts);

// Sets the purchase price (and its source) of an existing row: a catalog file's `purchase` for a
// built-in type. Same threading rule as AddGpuType.
void SetPurchasePrice(GpuIndex index, double usd, std::string_view source);
// Sets the list price (and its source) of a row the price table does not price.
void SetListPrice(GpuIndex index, double usd_per_gpu_hour, std::string_view source);
// Adds exact spellings (dcgm-exporter modelName strings, say) to an existing row. Errors when one
// names another row.
Status AddGpuAliases(GpuIndex index, const std::vector<std::string>& aliases);


// NVIDIA MIG profiles that share a GPU (more than one instance per GPU), per type, from NVIDIA's
// MIG user guide, "Supported MIG Profiles"
// (https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html): for
// A100-SXM4-40GB, A100-SXM4-80GB and H100 80 GB, the fraction of SMs (compute, in sevenths), the
// memory and the number of instances of one profile a GPU holds; the 4g and 7g profiles (one
// instance) are a whole GPU's worth of sharing and are left out. Used by the fleet week's
// fractional GPUs (issue 39).
struct MigProfile {
  std::string_view gpu_type;  // fleet / catalog name: "A100", "A100-80G", "H100"
  std::string_view name;      // "1g.10gb"
  int compute_sevenths = 1;   // fraction of SMs, in sevenths of the GPU
  int memory_eighths = 1;     // fraction of memory (and of its controllers: bandwidth), in eighths
  double memory_gb = 0;
  int instances = 1;          // of this profile on one GPU partitioned only into it
  double ComputeFraction() const { return compute_sevenths / 7.0; }
  double MemoryFraction() const { return memory_eighths / 8.0; }
};

// The profiles that share a GPU (more than one instance per GPU), per type; the 4g and 7g
// profiles (one instance) are a whole GPU's worth of sharing and are left out.
const std::vector<MigProfile>& MigProfiles();

}  // namespace seedance::gpu
