#include "seedance/gpu/catalog.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>
#include <string>

#include "seedance/core/csv.h"

namespace seedance::gpu {
namespace {

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string_view NameOf(const Result<GpuIndex>& r) {
  return r.has_value() ? GpuAt(*r).name : std::string_view("<error>");
}

const GpuFacts& Row(std::string_view name) {
  return GpuAt(*ParseGpuName(name, NameMatch::kCanonical));
}

TEST(GpuCatalogTest, IndicesAreStable) {
  // Append only: cluster::GpuModelIndex is the row index and packing results depend on it.
  const std::vector<std::string> first = {"G2",  "G3",       "T4",   "P100", "V100M16",
                                          "V100M32", "A10",  "K80",  "V100", "A100",
                                          "A100-80G", "H100", "H800", "A800", "L4",
                                          "L40S", "A10G",     "RTX6000", "2080Ti", "H200"};
  ASSERT_GE(KnownGpuNames().size(), first.size());
  EXPECT_TRUE(std::equal(first.begin(), first.end(), KnownGpuNames().begin()));
  EXPECT_LE(Catalog().size(), 32u) << "GpuModelSet is a 32-bit mask";
}

TEST(GpuCatalogTest, EveryRowHasASourceAndItsFacts) {
  for (const GpuFacts& g : Catalog()) {
    SCOPED_TRACE(std::string(g.name));
    EXPECT_FALSE(g.source.empty());
    EXPECT_FALSE(g.product.empty());
    if (!g.disclosed) {
      EXPECT_EQ(g.memory_gib, 0);
      EXPECT_EQ(g.fp16_tflops, 0);
      EXPECT_EQ(g.tdp_w, 0);
      EXPECT_TRUE(g.family.empty()) << "undisclosed types are recognized by name only";
      continue;
    }
    EXPECT_GT(g.memory_gib, 0);
    EXPECT_GT(g.fp32_tflops, 0);
    EXPECT_GE(g.fp16_tflops, g.fp32_tflops);
    EXPECT_GT(g.memory_gb_s, 0);
    EXPECT_GT(g.tdp_w, 0);
    EXPECT_FALSE(g.interconnect.empty());
    EXPECT_TRUE(g.host_link_gb_s == 16 || g.host_link_gb_s == 32 || g.host_link_gb_s == 64);
    if (!g.tensor_cores) {
      EXPECT_EQ(g.int8_tops, 0);
    }
    EXPECT_TRUE(g.source.find("NVIDIA") != std::string_view::npos ||
                g.source.find("http") != std::string_view::npos)
        << "cite the datasheet by name or URL";
    if (g.speed_vs_v100 > 0) {
      EXPECT_FALSE(g.speed_source.empty());
    }
  }
}

TEST(GpuCatalogTest, NamesAndAliasesAreUnique) {
  std::set<std::string> seen;
  for (const GpuFacts& g : Catalog()) {
    EXPECT_TRUE(seen.insert(Upper(g.name)).second) << g.name;
    std::string_view rest = g.aliases;
    while (!rest.empty()) {
      std::size_t bar = rest.find('|');
      std::string_view a = rest.substr(0, bar);
      EXPECT_FALSE(a.empty()) << g.name;
      EXPECT_TRUE(seen.insert(Upper(a)).second) << a;
      if (bar == std::string_view::npos) break;
      rest.remove_prefix(bar + 1);
    }
  }
}

TEST(GpuCatalogTest, EachFamilyHasOneDefaultRow) {
  std::set<std::string_view> families;
  for (const GpuFacts& g : Catalog()) {
    if (!g.family.empty()) families.insert(g.family);
  }
  for (std::string_view f : families) {
    int defaults = 0;
    for (const GpuFacts& g : Catalog()) defaults += g.family == f && g.family_default ? 1 : 0;
    EXPECT_EQ(defaults, 1) << f;
  }
}

TEST(GpuCatalogTest, DecisionsWhereOldTablesDisagreed) {
  // K80: one GPU of the dual-GPU board (the CLI table had the board's 24 GB and 8.7 TFLOPS).
  EXPECT_EQ(Row("K80").memory_gib, 12);
  EXPECT_DOUBLE_EQ(Row("K80").fp32_tflops, 4.37);
  EXPECT_EQ(Row("K80").tdp_w, 150);
  EXPECT_EQ(Row("V100").memory_gib, 16);
  EXPECT_EQ(Row("V100M32").memory_gib, 32);
  EXPECT_EQ(Row("A100").memory_gib, 40);
  EXPECT_EQ(Row("A100-80G").memory_gb_s, 2039);
  EXPECT_EQ(Row("H100").fp16_tflops, 989);
  EXPECT_EQ(Row("T4").int8_tops, 130);
  EXPECT_EQ(Row("V100").int8_tops, 0);  // no INT8 tensor cores
  EXPECT_GT(Row("H100").fp8_tflops, 0);
  EXPECT_EQ(Row("A100-80G").fp8_tflops, 0);
}

TEST(GpuNameParserTest, CanonicalIsExact) {
  EXPECT_EQ(NameOf(ParseGpuName("V100M32", NameMatch::kCanonical)), "V100M32");
  EXPECT_FALSE(ParseGpuName("v100", NameMatch::kCanonical).has_value());
  EXPECT_FALSE(ParseGpuName("Tesla K80", NameMatch::kCanonical).has_value());
  auto bad = ParseGpuName("B200", NameMatch::kCanonical);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.error().message().find("unknown GPU model 'B200' (known: G2, G3, T4, P100"),
            std::string::npos)
      << bad.error().message();
}

TEST(GpuNameParserTest, NamesAndAliasesInAnyCase) {
  EXPECT_EQ(NameOf(ParseGpuName("v100", NameMatch::kName)), "V100");
  EXPECT_EQ(NameOf(ParseGpuName("k80", NameMatch::kName)), "K80");
  EXPECT_EQ(NameOf(ParseGpuName("a100-80gb", NameMatch::kName)), "A100-80G");
  EXPECT_EQ(NameOf(ParseGpuName("2080ti", NameMatch::kName)), "2080Ti");
  EXPECT_FALSE(ParseGpuName("NVIDIA L4", NameMatch::kName).has_value());
}

TEST(GpuNameParserTest, ProductStrings) {
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA A100-SXM4-80GB", "A100-80G"},  {"NVIDIA A100-SXM4-40GB", "A100"},
      {"NVIDIA A100 80GB PCIe", "A100-80G"},  {"NVIDIA A100-PCIE-40GB", "A100"},
      {"Tesla V100-SXM2-32GB", "V100M32"},    {"Tesla V100-SXM2-16GB", "V100M16"},
      {"Tesla V100-PCIE-16GB", "V100M16"},    {"Tesla V100", "V100"},
      {"NVIDIA H100 80GB HBM3", "H100"},      {"NVIDIA H100 PCIe", "H100"},
      {"NVIDIA H200", "H200"},                {"NVIDIA H800", "H800"},
      {"NVIDIA A800-SXM4-80GB", "A800"},      {"Tesla K80", "K80"},
      {"Tesla T4", "T4"},                     {"Tesla P100-PCIE-16GB", "P100"},
      {"NVIDIA L4", "L4"},                    {"NVIDIA L40S", "L40S"},
      {"NVIDIA A10G", "A10G"},                {"NVIDIA A10", "A10"},
      {"Quadro RTX 6000", "RTX6000"},         {"NVIDIA GeForce RTX 2080 Ti", "2080Ti"},
      {"nvidia a100-sxm4-80gb", "A100-80G"},  {"A100-80G", "A100-80G"},
      {"G2", "G2"},                           {"NVIDIA A100-SXM4-80GB MIG 1g.10gb", "A100-80G"},
  };
  for (const auto& [text, want] : cases) {
    EXPECT_EQ(NameOf(ParseGpuName(text, NameMatch::kProduct)), want) << text;
  }
}

TEST(GpuNameParserTest, UnknownAndAmbiguousProducts) {
  for (const char* text : {"NVIDIA TITAN V", "Tesla V100S-PCIE-32GB",
                           "NVIDIA RTX 6000 Ada Generation", "NVIDIA B200", "",
                           "AMD Instinct MI300X"}) {
    auto r = ParseGpuName(text, NameMatch::kProduct);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_NE(r.error().message().find("unknown GPU model '" + std::string(text) + "' (known: G2"),
              std::string::npos)
        << r.error().message();
  }
  auto two = ParseGpuName("NVIDIA H100 or A100", NameMatch::kProduct);
  ASSERT_FALSE(two.has_value());
  EXPECT_NE(two.error().message().find("names two GPU families (A100, H100)"), std::string::npos)
      << two.error().message();
}

// The openb speeds (docs/WORKLOADS.md) follow from their stated sources.
TEST(GpuCatalogTest, SpeedsFollowTheirSources) {
  auto t = CsvTable::ReadFile(std::string(SEEDANCE_TEST_DATA_DIR) +
                              "/gavel/gavel_isolated_throughputs.csv");
  ASSERT_TRUE(t.has_value()) << t.error().ToString();
  const std::size_t c_n = *t->ColumnIndex("num_gpus");
  const std::size_t c_v = *t->ColumnIndex("sim_v100_steps_per_s");
  for (const char* type : {"p100", "k80"}) {
    const std::size_t c = *t->ColumnIndex(std::string("sim_") + type + "_steps_per_s");
    double log_sum = 0;
    int n = 0;
    for (const auto& row : t->rows()) {
      if (*t->Int(row, c_n) != 1) continue;
      log_sum += std::log(*t->Double(row, c) / *t->Double(row, c_v));
      ++n;
    }
    EXPECT_EQ(n, 26);
    const GpuFacts& g = GpuAt(*ParseGpuName(type, NameMatch::kName));
    EXPECT_NEAR(g.speed_vs_v100, std::exp(log_sum / n), 5e-4) << type;
  }
  const double v100 = Row("V100").fp16_tflops;
  for (const char* type : {"T4", "A10"}) {
    EXPECT_NEAR(Row(type).speed_vs_v100, Row(type).fp16_tflops / v100, 5e-4) << type;
  }
  std::vector<double> disclosed;
  for (const char* type : {"T4", "P100", "V100M16", "V100M32", "A10"}) {
    disclosed.push_back(Row(type).speed_vs_v100);
  }
  std::sort(disclosed.begin(), disclosed.end());
  EXPECT_EQ(Row("G2").speed_vs_v100, disclosed[2]);
  EXPECT_EQ(Row("G3").speed_vs_v100, disclosed[2]);
}


// Issue 38: a type from a catalog file joins the one parser: canonical name, aliases in any case,
// and product strings naming its family; the same facts again return its row, other facts fail.
TEST(GpuCatalogTest, AddedTypesAreParsedLikeBuiltInOnes) {
  GpuFacts f;
  std::string name = "Z100", aliases = "Z100-SXM|ACME Z100 SXM", product = "ACME Z100 SXM 96 GB";
  f.name = name;
  f.aliases = aliases;
  f.family = "Z100";
  f.product = product;
  f.memory_gib = 96;
  f.fp16_tflops = 1000;
  f.memory_gb_s = 4000;
  f.tdp_w = 800;
  f.defined_in = "test:1";
  const std::size_t before = Catalog().size();
  auto idx = AddGpuType(f);
  ASSERT_TRUE(idx.has_value()) << idx.error().message();
  EXPECT_EQ(*idx, before);
  name = "overwritten";  // the catalog copied its strings
  EXPECT_EQ(GpuAt(*idx).name, "Z100");
  EXPECT_EQ(KnownGpuNames().back(), "Z100");
  EXPECT_EQ(NameOf(ParseGpuName("Z100", NameMatch::kCanonical)), "Z100");
  EXPECT_EQ(NameOf(ParseGpuName("z100-sxm", NameMatch::kName)), "Z100");
  EXPECT_EQ(NameOf(ParseGpuName("ACME Z100 96GB HBM3e", NameMatch::kProduct)), "Z100");
  EXPECT_FALSE(ParseGpuName("z100-sxm", NameMatch::kCanonical).has_value());
  // Again with the same facts and another purchase price: the same row, the new price.
  GpuFacts again = GpuAt(*idx);
  again.purchase_usd = 20000;
  again.purchase_source = "invoice";
  auto same = AddGpuType(again);
  ASSERT_TRUE(same.has_value()) << same.error().message();
  EXPECT_EQ(*same, *idx);
  EXPECT_EQ(GpuAt(*idx).purchase_usd, 20000);
  EXPECT_EQ(Catalog().size(), before + 1);
  GpuFacts other = GpuAt(*idx);
  other.memory_gib = 80;
  auto clash = AddGpuType(other);
  ASSERT_FALSE(clash.has_value());
  EXPECT_EQ(clash.error().message(), "GPU type 'Z100' is already in the catalog (defined at test:1) with other facts");
  // Another type may not take a built-in spelling or family.
  GpuFacts thief = f;
  thief.name = "Y1";
  thief.aliases = "H100-SXM";
  thief.family = "";
  EXPECT_EQ(AddGpuType(thief).error().message(),
            "GPU type 'Y1': the spelling 'H100-SXM' already names H100 (built in)");
  thief.aliases = "";
  thief.family = "a100";
  EXPECT_EQ(AddGpuType(thief).error().message(), "GPU type 'Y1': family 'A100' is A100's (built in)");
  thief.family = "";
  thief.fp16_tflops = 0;
  EXPECT_NE(AddGpuType(thief).error().message().find("FP16 peak"), std::string::npos);
}

}  // namespace
}  // namespace seedance::gpu
