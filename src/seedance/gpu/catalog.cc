#include "seedance/gpu/catalog.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <deque>

#include "seedance/core/check.h"

namespace seedance::gpu {
namespace {

// Where a speed comes from (docs/WORKLOADS.md, "openb speeds").
constexpr std::string_view kGavelSpeed =
    "Gavel (OSDI'20) measured throughputs, data/gavel/gavel_isolated_throughputs.csv: geometric "
    "mean over its 26 single-GPU job types of sim_<type>_steps_per_s / sim_v100_steps_per_s";
constexpr std::string_view kGavelV100 =
    "Gavel's reference type (its V100 throughputs define 1.0); memory size does not change speed";
constexpr std::string_view kFp16Speed =
    "dense FP16 tensor TFLOPS ratio to the V100 SXM2's 125 (datasheets; Gavel did not measure this "
    "type; mixed-precision training is tensor-core bound, and the FP32 ratio would overstate the "
    "A10, whose Ampere FP32 issue rate doubled without a matching gain in training)";
constexpr std::string_view kMedianSpeed =
    "assumption: the median of the openb trace's disclosed types (T4, P100, V100M16, V100M32, A10) "
    "= 1.0; G2/G3 nodes have the shape of the trace's 8-GPU V100 servers";
constexpr std::string_view kUndisclosed =
    "Alibaba openb trace (Weng et al., USENIX ATC'23, data/openb/SOURCE.md): the type is not "
    "disclosed; no facts known";

constexpr std::string_view kV100Source =
    "NVIDIA Tesla V100 datasheet (volta-v100-datasheet-update-us-1165301-r5), "
    "https://images.nvidia.com/content/technologies/volta/pdf/"
    "volta-v100-datasheet-update-us-1165301-r5.pdf";
constexpr std::string_view kA100Source =
    "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4), "
    "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
    "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf";
// Purchase prices (GpuFacts::purchase_usd): a GPU with its share of an 8-GPU server.
constexpr std::string_view kHgxH100Purchase =
    "estimate: a Thinkmate quote for an 8-GPU HGX H100 SXM5 server with InfiniBand, USD 317,000 "
    "(Aug 2024, https://web.archive.org/web/20240822233446/https://www.thinkmate.com/"
    "quotation-request?a=YToxOntzOjI6ImlkIjtpOjc0OTY2Mzt9), / 8 = 39,625, rounded to 39,600";
constexpr std::string_view kDgxA100Purchase =
    "estimate: NVIDIA's DGX A100 launch price, USD 199,000 for 8 GPUs (NVIDIA press release, "
    "2020-05-14, https://nvidianews.nvidia.com/news/nvidia-ships-worlds-most-advanced-ai-system-"
    "nvidia-dgx-a100-to-fight-covid-19-third-generation-dgx-packs-record-5-petaflops-of-ai-"
    "performance), / 8 = 24,875";

constexpr std::string_view kH100Source =
    "NVIDIA H100 Tensor Core GPU datasheet, "
    "https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet";

// The table. Append only: a row's position is its GpuIndex (cluster::GpuModelIndex), which
// the packing results depend on. Old tables that disagreed (ledger/breaker.cc, apps/cli/
// catalog.cc, audit/gpu_catalog.cc, sim/workloads.cc, batching/model.cc) are reconciled in the
// rows' notes.
std::vector<GpuFacts> BuiltInRows() {
  return {
      {.name = "G2",
       .disclosed = false,
       .product = "Alibaba openb type G2 (undisclosed)",
       .speed_vs_v100 = 1.0,
       .speed_basis = "assumed",
       .speed_source = kMedianSpeed,
       .source = kUndisclosed},
      {.name = "G3",
       .disclosed = false,
       .product = "Alibaba openb type G3 (undisclosed)",
       .speed_vs_v100 = 1.0,
       .speed_basis = "assumed",
       .speed_source = kMedianSpeed,
       .source = kUndisclosed},
      {.name = "T4",
       .family = "T4",
       .family_default = true,
       .product = "NVIDIA T4 (PCIe, 70 W)",
       .memory_gib = 16,
       .fp32_tflops = 8.1,
       .fp16_tflops = 65,
       .tensor_cores = true,
       .int8_tops = 130,
       .memory_gb_s = 320,
       .tdp_w = 70,
       .interconnect = "PCIe 3.0 x16",
       .host_link_gb_s = 16,
       .speed_vs_v100 = 0.52,
       .speed_basis = "FP16 tensor ratio",
       .speed_source = kFp16Speed,
       .source = "NVIDIA T4 Tensor Core GPU datasheet, https://www.nvidia.com/content/dam/en-zz/"
                 "Solutions/Data-Center/tesla-t4/t4-tensor-core-datasheet-951643.pdf"},
      {.name = "P100",
       .family = "P100",
       .family_default = true,
       .product = "Tesla P100 SXM2 16 GB",
       .memory_gib = 16,
       .fp32_tflops = 10.6,
       .fp16_tflops = 21.2,
       .memory_gb_s = 732,
       .tdp_w = 300,
       .interconnect = "NVLink 160 GB/s; PCIe 3.0 x16",
       .host_link_gb_s = 16,
       .speed_vs_v100 = 0.943,
       .speed_basis = "Gavel",
       .speed_source = kGavelSpeed,
       .source = "NVIDIA Tesla P100 datasheet, "
                 "https://images.nvidia.com/content/tesla/pdf/nvidia-tesla-p100-datasheet.pdf",
       .note = "No tensor cores: FP16 on CUDA cores (2x FP32). The PCIe card is 9.3 FP32 "
               "TFLOPS, 250 W."},
      {.name = "V100M16",
       .aliases = "V100-16GB",
       .family = "V100",
       .selector_gb = 16,
       .product = "Tesla V100 SXM2 16 GB",
       .memory_gib = 16,
       .fp32_tflops = 15.7,
       .fp16_tflops = 125,
       .tensor_cores = true,
       .memory_gb_s = 900,
       .tdp_w = 300,
       .interconnect = "NVLink 300 GB/s; PCIe 3.0 x16",
       .host_link_gb_s = 16,
       .speed_vs_v100 = 1.0,
       .speed_basis = "Gavel",
       .speed_source = kGavelV100,
       .source = kV100Source,
       .note = "The openb trace's 16 GB V100; same facts as V100. A product string with 16GB "
               "maps here (the old telemetry parser mapped it to V100)."},
      {.name = "V100M32",
       .aliases = "V100-32GB",
       .family = "V100",
       .selector_gb = 32,
       .product = "Tesla V100 SXM2 32 GB",
       .memory_gib = 32,
       .fp32_tflops = 15.7,
       .fp16_tflops = 125,
       .tensor_cores = true,
       .memory_gb_s = 900,
       .tdp_w = 300,
       .interconnect = "NVLink 300 GB/s; PCIe 3.0 x16",
       .host_link_gb_s = 16,
       .speed_vs_v100 = 1.0,
       .speed_basis = "Gavel",
       .speed_source = kGavelV100,
       .source = kV100Source},
      {.name = "A10",
       .family = "A10",
       .family_default = true,
       .product = "NVIDIA A10 (PCIe, 150 W)",
       .memory_gib = 24,
       .fp32_tflops = 31.2,
       .fp16_tflops = 125,
       .tensor_cores = true,
       .int8_tops = 250,
       .memory_gb_s = 600,
       .tdp_w = 150,
       .interconnect = "PCIe 4.0 x16",
       .host_link_gb_s = 32,
       .speed_vs_v100 = 1.0,
       .speed_basis = "FP16 tensor ratio",
       .speed_source = kFp16Speed,
       .source = "NVIDIA A10 Tensor Core GPU datasheet, https://www.nvidia.com/content/dam/en-zz/"
                 "Solutions/Data-Center/a10/pdf/a10-datasheet.pdf",
       .note = "Ampere doubled the FP32 issue rate, so the FP32 ratio (1.99) would overstate "
               "training speed; the openb speed uses the FP16 tensor ratio (1.0)."},
      {.name = "K80",
       .family = "K80",
       .family_default = true,
       .product = "Tesla K80, one of the board's two GK210 GPUs",
       .memory_gib = 12,
       .fp32_tflops = 4.37,
       .fp16_tflops = 4.37,
       .memory_gb_s = 240,
       .tdp_w = 150,
       .interconnect = "PCIe 3.0 x16 (one switch shared by the board's two GPUs)",
       .host_link_gb_s = 16,
       .speed_vs_v100 = 0.297,
       .speed_basis = "Gavel",
       .speed_source = kGavelSpeed,
       .source = "NVIDIA Tesla K80 board specification BD-07317-001_v05 (2015): per board 2 x "
                 "12 GB GDDR5, 480 GB/s, 8.74 TFLOPS FP32 at boost, 300 W",
       .note = "The unit is one GPU as schedulers and clouds see it (a GCP/AWS 'K80' is half a "
               "board): 12 GiB, 240 GB/s, 4.37 TFLOPS, 150 W. The old CLI catalog listed the "
               "board (24 GiB, 8.7 TFLOPS) against a per-GPU price, doubling its TFLOPS/$; the "
               "breaker's 12 GiB was right. No FP16 units: FP16 runs at the FP32 rate."},
      {.name = "V100",
       .family = "V100",
       .family_default = true,
       .product = "Tesla V100 SXM2 16 GB",
       .memory_gib = 16,
       .fp32_tflops = 15.7,
       .fp16_tflops = 125,
       .tensor_cores = true,
       .memory_gb_s = 900,
       .tdp_w = 300,
       .interconnect = "NVLink 300 GB/s; PCIe 3.0 x16",
       .host_link_gb_s = 16,
       .speed_vs_v100 = 1.0,
       .speed_basis = "Gavel",
       .speed_source = kGavelV100,
       .source = kV100Source,
       .note = "Gavel's V100 (16 GB). V100 has no INT8 tensor cores. The PCIe card is 14 FP32 / "
               "112 FP16 TFLOPS, 250 W."},
      {.name = "A100",
       .aliases = "A100-40GB|A100-40G",
       .family = "A100",
       .family_default = true,
       .product = "NVIDIA A100 SXM4 40 GB",
       .memory_gib = 40,
       .fp32_tflops = 19.5,
       .fp16_tflops = 312,
       .tensor_cores = true,
       .int8_tops = 624,
       .memory_gb_s = 1555,
       .tdp_w = 400,
       .interconnect = "NVLink 600 GB/s; PCIe 4.0 x16",
       .host_link_gb_s = 32,
       .source = kA100Source,
       .note = "PCIe variants have a lower power limit (250-300 W); the audit uses this SXM row "
               "for them (a known approximation).",
       .purchase_usd = 24875,
       .purchase_source = kDgxA100Purchase},
      {.name = "A100-80G",
       .aliases = "A100-80GB",
       .family = "A100",
       .selector_gb = 80,
       .product = "NVIDIA A100 SXM4 80 GB",
       .memory_gib = 80,
       .fp32_tflops = 19.5,
       .fp16_tflops = 312,
       .tensor_cores = true,
       .int8_tops = 624,
       .memory_gb_s = 2039,
       .tdp_w = 400,
       .interconnect = "NVLink 600 GB/s; PCIe 4.0 x16",
       .host_link_gb_s = 32,
       .source = kA100Source,
       .purchase_usd = 24875,
       .purchase_source = kDgxA100Purchase},
      {.name = "H100",
       .aliases = "H100-80GB|H100-SXM",
       .family = "H100",
       .family_default = true,
       .product = "NVIDIA H100 SXM5 80 GB",
       .memory_gib = 80,
       .fp32_tflops = 67,
       .fp16_tflops = 989,
       .tensor_cores = true,
       .int8_tops = 1979,
       .fp8_tflops = 1979,
       .memory_gb_s = 3350,
       .tdp_w = 700,
       .interconnect = "NVLink 900 GB/s; PCIe 5.0 x16",
       .host_link_gb_s = 64,
       .source = kH100Source,
       .note = "Dense = half the datasheet's sparse figures (1,979 FP16, 3,958 INT8/FP8), "
               "rounded to whole TFLOPS (989.4 exactly). The PCIe card is 756 FP16 TFLOPS, "
               "2,000 GB/s, 350 W.",
       .purchase_usd = 39600,
       .purchase_source = kHgxH100Purchase},
      {.name = "H800",
       .family = "H800",
       .family_default = true,
       .product = "NVIDIA H800 SXM5 80 GB",
       .memory_gib = 80,
       .fp32_tflops = 67,
       .fp16_tflops = 989,
       .tensor_cores = true,
       .int8_tops = 1979,
       .fp8_tflops = 1979,
       .memory_gb_s = 3350,
       .tdp_w = 700,
       .interconnect = "NVLink 400 GB/s; PCIe 5.0 x16",
       .host_link_gb_s = 64,
       .source = "NVIDIA H800 Tensor Core GPU product brief (export variant of the H100 SXM5: "
                 "same tensor rates, memory and power; NVLink cut to 400 GB/s)"},
      {.name = "A800",
       .family = "A800",
       .family_default = true,
       .product = "NVIDIA A800 SXM4 80 GB",
       .memory_gib = 80,
       .fp32_tflops = 19.5,
       .fp16_tflops = 312,
       .tensor_cores = true,
       .int8_tops = 624,
       .memory_gb_s = 2039,
       .tdp_w = 400,
       .interconnect = "NVLink 400 GB/s; PCIe 4.0 x16",
       .host_link_gb_s = 32,
       .source = "NVIDIA A800 Tensor Core GPU datasheet (export variant of the A100 80 GB SXM4: "
                 "same tensor rates, memory and power; NVLink cut to 400 GB/s)"},
      {.name = "L4",
       .family = "L4",
       .family_default = true,
       .product = "NVIDIA L4 (PCIe, 72 W)",
       .memory_gib = 24,
       .fp32_tflops = 30.3,
       .fp16_tflops = 121,
       .tensor_cores = true,
       .int8_tops = 242.5,
       .fp8_tflops = 242.5,
       .memory_gb_s = 300,
       .tdp_w = 72,
       .interconnect = "PCIe 4.0 x16",
       .host_link_gb_s = 32,
       .source = "NVIDIA L4 Tensor Core GPU datasheet, "
                 "https://resources.nvidia.com/en-us-data-center-overview/l4-gpu-datasheet",
       .note = "Dense = half the datasheet's sparse 242 FP16 / 485 INT8 and FP8. The old audit "
               "and CLI tables rounded INT8 to 242."},
      {.name = "L40S",
       .family = "L40S",
       .family_default = true,
       .product = "NVIDIA L40S (PCIe, 350 W)",
       .memory_gib = 48,
       .fp32_tflops = 91.6,
       .fp16_tflops = 362.05,
       .tensor_cores = true,
       .int8_tops = 733,
       .fp8_tflops = 733,
       .memory_gb_s = 864,
       .tdp_w = 350,
       .interconnect = "PCIe 4.0 x16",
       .host_link_gb_s = 32,
       .source = "NVIDIA L40S GPU datasheet, "
                 "https://resources.nvidia.com/en-us-l40s/l40s-datasheet-28413"},
      {.name = "A10G",
       .family = "A10G",
       .family_default = true,
       .product = "NVIDIA A10G (AWS G5 instances)",
       .memory_gib = 24,
       .fp32_tflops = 31.5,
       .fp16_tflops = 70,
       .tensor_cores = true,
       .int8_tops = 140,
       .memory_gb_s = 600,
       .tdp_w = 300,
       .interconnect = "PCIe 4.0 x16",
       .host_link_gb_s = 32,
       .source = "No NVIDIA datasheet (an AWS-only part): AWS EC2 G5 instance page (24 GB per "
                 "GPU); rates as tabulated by "
                 "https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/",
       .note = "A secondary source; figures less certain than the datasheet rows."},
      {.name = "RTX6000",
       .family = "RTX6000",
       .family_default = true,
       .product = "NVIDIA Quadro RTX 6000 (Turing)",
       .memory_gib = 24,
       .fp32_tflops = 16.3,
       .fp16_tflops = 130.5,
       .tensor_cores = true,
       .int8_tops = 261,
       .memory_gb_s = 672,
       .tdp_w = 295,
       .interconnect = "NVLink 100 GB/s (2-way bridge); PCIe 3.0 x16",
       .host_link_gb_s = 16,
       .source = "NVIDIA Quadro RTX 6000 datasheet, https://www.nvidia.com/content/dam/en-zz/"
                 "Solutions/design-visualization/quadro-product-literature/"
                 "quadro-rtx-6000-us-nvidia-704093-r4-web.pdf",
       .note = "Not the 'RTX 6000 Ada Generation' (48 GB), which the parser refuses."},
      {.name = "2080Ti",
       .aliases = "RTX2080Ti",
       .family = "2080TI",
       .family_default = true,
       .product = "NVIDIA GeForce RTX 2080 Ti (reference board)",
       .memory_gib = 11,
       .fp32_tflops = 13.4,
       .fp16_tflops = 107.6,
       .tensor_cores = true,
       .int8_tops = 215.2,
       .memory_gb_s = 616,
       .tdp_w = 250,
       .interconnect = "NVLink 50 GB/s (2-way bridge); PCIe 3.0 x16",
       .host_link_gb_s = 16,
       .source = "NVIDIA Turing GPU Architecture whitepaper (WP-09183-001), Appendix A, "
                 "GeForce RTX 2080 Ti reference board",
       .note = "GeForce: FP16 tensor rate with FP16 accumulate (53.8 with FP32 accumulate)."},
      {.name = "H200",
       .family = "H200",
       .family_default = true,
       .product = "NVIDIA H200 SXM 141 GB",
       .memory_gib = 141,
       .fp32_tflops = 67,
       .fp16_tflops = 989,
       .tensor_cores = true,
       .int8_tops = 1979,
       .fp8_tflops = 1979,
       .memory_gb_s = 4800,
       .tdp_w = 700,
       .interconnect = "NVLink 900 GB/s; PCIe 5.0 x16",
       .host_link_gb_s = 64,
       .source = "NVIDIA H200 Tensor Core GPU datasheet, "
                 "https://www.nvidia.com/en-us/data-center/h200/",
       .note = "Same compute as the H100 SXM5; 141 GB HBM3e at 4.8 TB/s.",
       .purchase_usd = 39600,
       .purchase_source = "estimate: priced as the H100, USD 39,600 per GPU of a Thinkmate 8-GPU HGX "
                          "H100 server quote (Aug 2024); no public H200 server quote was found, and "
                          "its HBM3e likely makes it dearer"},
  };
}

// The rows: built in, then those catalog files add (AddGpuType). Capacity kMaxGpuTypes is
// reserved, so a reference to a row stays valid while rows are added.
std::vector<GpuFacts>& MutableRows() {
  static std::vector<GpuFacts> rows = [] {
    std::vector<GpuFacts> v;
    v.reserve(kMaxGpuTypes);
    for (GpuFacts& f : BuiltInRows()) v.push_back(f);
    return v;
  }();
  return rows;
}

const std::vector<GpuFacts>& Rows() { return MutableRows(); }

std::vector<std::string>& MutableNames() {
  static std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const GpuFacts& row : Rows()) v.emplace_back(row.name);
    return v;
  }();
  return names;
}

// Owns the strings of added rows (a deque: its elements never move).
std::string_view Intern(std::string_view s) {
  static std::deque<std::string> arena;
  if (s.empty()) return {};
  return arena.emplace_back(s);
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && Upper(a) == Upper(b);
}

// Calls `f` with each '|'-separated alias of `row`.
template <typename F>
void ForEachAlias(const GpuFacts& row, F&& f) {
  std::string_view rest = row.aliases;
  while (!rest.empty()) {
    std::size_t bar = rest.find('|');
    f(rest.substr(0, bar));
    if (bar == std::string_view::npos) break;
    rest.remove_prefix(bar + 1);
  }
}

// Upper-cased alphanumeric runs of `text`.
std::vector<std::string> Tokens(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      cur.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    } else if (!cur.empty()) {
      out.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

// "80GB" or "80G" -> 80; anything else -> 0.
int SizeGb(std::string_view token) {
  int gb = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), gb);
  if (ec != std::errc() || end == token.data()) return 0;
  std::string_view unit(end, static_cast<std::size_t>(token.data() + token.size() - end));
  return unit == "G" || unit == "GB" ? gb : 0;
}

Status UnknownName(std::string_view text) {
  std::string known;
  for (const auto& n : KnownGpuNames()) known += (known.empty() ? "" : ", ") + n;
  return InvalidArgumentError("unknown GPU model '" + std::string(text) + "' (known: " + known +
                              ")");
}

// Words that mark a product the catalog does not hold although its name contains a family
// token ("NVIDIA RTX 6000 Ada Generation" is not the Quadro RTX 6000).
constexpr std::string_view kOtherGeneration[] = {"ADA", "BLACKWELL"};

Result<GpuIndex> ParseProduct(std::string_view text) {
  const std::vector<std::string> tokens = Tokens(text);
  std::vector<std::string> words = tokens;  // tokens and adjacent pairs ("RTX" "6000")
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) words.push_back(tokens[i] + tokens[i + 1]);
  int size_gb = 0;
  for (const auto& t : tokens) size_gb = std::max(size_gb, SizeGb(t));
  std::string_view family;
  for (const GpuFacts& row : Rows()) {
    if (row.family.empty() || row.family == family) continue;
    if (std::find(words.begin(), words.end(), row.family) == words.end()) continue;
    if (!family.empty()) {
      return InvalidArgumentError("GPU model '" + std::string(text) + "' names two GPU families (" +
                                  std::string(family) + ", " + std::string(row.family) + ")");
    }
    family = row.family;
  }
  if (family.empty()) return UnknownName(text);
  bool built_in_family = false;
  for (const GpuFacts& row : Rows()) built_in_family = built_in_family || (row.family == family && row.defined_in.empty());
  for (std::string_view other : kOtherGeneration) {
    if (built_in_family && std::find(tokens.begin(), tokens.end(), other) != tokens.end()) return UnknownName(text);
  }
  std::size_t pick = Rows().size();
  for (std::size_t i = 0; i < Rows().size(); ++i) {
    const GpuFacts& row = Rows()[i];
    if (row.family != family) continue;
    if (size_gb > 0 && row.selector_gb == size_gb) return static_cast<GpuIndex>(i);
    if (row.family_default) pick = i;
  }
  SEEDANCE_CHECK(pick < Rows().size()) << "GPU family " << family << " has no default row";
  return static_cast<GpuIndex>(pick);
}

}  // namespace

const std::vector<GpuFacts>& Catalog() { return Rows(); }

const GpuFacts& GpuAt(GpuIndex index) { return Rows().at(index); }

const std::vector<std::string>& KnownGpuNames() { return MutableNames(); }

Result<GpuIndex> ParseGpuName(std::string_view text, NameMatch match) {
  const auto& rows = Rows();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].name == text) return static_cast<GpuIndex>(i);
  }
  if (match == NameMatch::kCanonical) return UnknownName(text);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    bool hit = EqualsIgnoreCase(rows[i].name, text);
    ForEachAlias(rows[i], [&](std::string_view a) { hit = hit || EqualsIgnoreCase(a, text); });
    if (hit) return static_cast<GpuIndex>(i);
  }
  if (match == NameMatch::kName) return UnknownName(text);
  return ParseProduct(text);
}

namespace {

bool SameFacts(const GpuFacts& a, const GpuFacts& b) {
  return a.name == b.name && a.aliases == b.aliases && a.family == b.family && a.selector_gb == b.selector_gb &&
         a.family_default == b.family_default && a.disclosed == b.disclosed && a.product == b.product &&
         a.memory_gib == b.memory_gib && a.fp32_tflops == b.fp32_tflops && a.fp16_tflops == b.fp16_tflops &&
         a.bf16_tflops == b.bf16_tflops && a.tensor_cores == b.tensor_cores && a.int8_tops == b.int8_tops &&
         a.fp8_tflops == b.fp8_tflops && a.memory_gb_s == b.memory_gb_s && a.tdp_w == b.tdp_w &&
         a.interconnect == b.interconnect && a.host_link_gb_s == b.host_link_gb_s &&
         a.speed_vs_v100 == b.speed_vs_v100 && a.source == b.source;
}

std::string Where(const GpuFacts& row) {
  return row.defined_in.empty() ? std::string("built in") : "defined at " + std::string(row.defined_in);
}

// The row (other than `self`) that has `spelling` as its name or an alias, in any case.
const GpuFacts* Spelled(std::string_view spelling, const GpuFacts* self) {
  for (const GpuFacts& row : Rows()) {
    if (&row == self) continue;
    bool hit = EqualsIgnoreCase(row.name, spelling);
    ForEachAlias(row, [&](std::string_view a) { hit = hit || EqualsIgnoreCase(a, spelling); });
    if (hit) return &row;
  }
  return nullptr;
}

}  // namespace

Result<GpuIndex> AddGpuType(const GpuFacts& facts) {
  std::vector<GpuFacts>& rows = MutableRows();
  if (facts.name.empty()) return InvalidArgumentError("a GPU type needs a name");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!EqualsIgnoreCase(rows[i].name, facts.name)) continue;
    if (SameFacts(rows[i], facts)) {  // the same type again: its prices may differ (the buyer's)
      if (facts.purchase_usd > 0) SetPurchasePrice(static_cast<GpuIndex>(i), facts.purchase_usd, facts.purchase_source);
      if (facts.list_usd_per_gpu_hour > 0) {
        SetListPrice(static_cast<GpuIndex>(i), facts.list_usd_per_gpu_hour, facts.list_price_source);
      }
      return static_cast<GpuIndex>(i);
    }
    return InvalidArgumentError("GPU type '" + std::string(facts.name) + "' is already in the catalog (" +
                                Where(rows[i]) + ") with other facts");
  }
  if (!(facts.fp16_tflops > 0) || !(facts.memory_gib > 0) || !(facts.tdp_w > 0)) {
    return InvalidArgumentError("GPU type '" + std::string(facts.name) +
                                "': memory, FP16 peak and TDP must be given and positive");
  }
  std::string bad;
  if (const GpuFacts* other = Spelled(facts.name, nullptr); other != nullptr) bad = std::string(facts.name);
  ForEachAlias(facts, [&](std::string_view a) {
    if (bad.empty() && Spelled(a, nullptr) != nullptr) bad = std::string(a);
  });
  if (!bad.empty()) {
    const GpuFacts* other = Spelled(bad, nullptr);
    return InvalidArgumentError("GPU type '" + std::string(facts.name) + "': the spelling '" + bad +
                                "' already names " + std::string(other->name) + " (" + Where(*other) + ")");
  }
  const std::string family = Upper(facts.family);
  for (const GpuFacts& row : rows) {
    if (!family.empty() && row.family == family) {
      return InvalidArgumentError("GPU type '" + std::string(facts.name) + "': family '" + family +
                                  "' is " + std::string(row.name) + "'s (" + Where(row) + ")");
    }
  }
  if (rows.size() >= kMaxGpuTypes) {
    return InvalidArgumentError("GPU type '" + std::string(facts.name) + "': the catalog holds at most " +
                                std::to_string(kMaxGpuTypes) + " GPU types (a set of types is a 32-bit mask)");
  }
  GpuFacts row = facts;
  for (std::string_view* s : {&row.name, &row.aliases, &row.product, &row.interconnect, &row.speed_basis,
                              &row.speed_source, &row.source, &row.note, &row.purchase_source,
                              &row.list_price_source, &row.defined_in}) {
    *s = Intern(*s);
  }
  row.family = Intern(family);
  row.family_default = !family.empty();
  rows.push_back(row);
  MutableNames().emplace_back(row.name);
  return static_cast<GpuIndex>(rows.size() - 1);
}

void SetPurchasePrice(GpuIndex index, double usd, std::string_view source) {
  GpuFacts& row = MutableRows().at(index);
  row.purchase_usd = usd;
  row.purchase_source = Intern(source);
}

void SetListPrice(GpuIndex index, double usd_per_gpu_hour, std::string_view source) {
  GpuFacts& row = MutableRows().at(index);
  row.list_usd_per_gpu_hour = usd_per_gpu_hour;
  row.list_price_source = Intern(source);
}

Status AddGpuAliases(GpuIndex index, const std::vector<std::string>& aliases) {
  GpuFacts& row = MutableRows().at(index);
  std::string joined(row.aliases);
  for (const std::string& a : aliases) {
    if (a.empty()) continue;
    if (const GpuFacts* other = Spelled(a, &row); other != nullptr) {
      return InvalidArgumentError("the spelling '" + a + "' already names " + std::string(other->name) + " (" +
                                  Where(*other) + ")");
    }
    bool known = EqualsIgnoreCase(row.name, a);
    ForEachAlias(row, [&](std::string_view x) { known = known || EqualsIgnoreCase(x, a); });
    if (!known) joined += (joined.empty() ? "" : "|") + a;
  }
  row.aliases = Intern(joined);
  return Status::Ok();
}

const std::vector<MigProfile>& MigProfiles() {
  // NVIDIA MIG user guide, "Supported MIG Profiles" (A100-SXM4-40GB table; the 80 GB A100 and the
  // H100 80 GB carry the same fractions with twice the memory): 1g = 1/7 of the SMs with 1/8 of
  // the memory, 7 instances; 1g with 2/8 of the memory, 4 instances; 2g = 2/7 SMs, 2/8 memory,
  // 3 instances; 3g = 3/7 SMs, 4/8 memory, 2 instances.
  static const std::vector<MigProfile> kProfiles = {
      {"A100", "1g.5gb", 1, 1, 5, 7},       {"A100", "1g.10gb", 1, 2, 10, 4},
      {"A100", "2g.10gb", 2, 2, 10, 3},     {"A100", "3g.20gb", 3, 4, 20, 2},
      {"A100-80G", "1g.10gb", 1, 1, 10, 7}, {"A100-80G", "1g.20gb", 1, 2, 20, 4},
      {"A100-80G", "2g.20gb", 2, 2, 20, 3}, {"A100-80G", "3g.40gb", 3, 4, 40, 2},
      {"H100", "1g.10gb", 1, 1, 10, 7},     {"H100", "1g.20gb", 1, 2, 20, 4},
      {"H100", "2g.20gb", 2, 2, 20, 3},     {"H100", "3g.40gb", 3, 4, 40, 2},
  };
  return kProfiles;
}

}  // namespace seedance::gpu
