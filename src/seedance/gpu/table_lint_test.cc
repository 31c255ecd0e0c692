// Fails when a table of GPU facts appears outside the catalog (src/seedance/gpu/catalog.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/gpu/catalog.h"

namespace seedance::gpu {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Canonical names and aliases, upper-cased.
std::vector<std::string> GpuNames() {
  std::vector<std::string> names;
  for (const GpuFacts& row : Catalog()) {
    names.push_back(Upper(row.name));
    std::string_view rest = row.aliases;
    while (!rest.empty()) {
      std::size_t bar = rest.find('|');
      names.push_back(Upper(rest.substr(0, bar)));
      if (bar == std::string_view::npos) break;
      rest.remove_prefix(bar + 1);
    }
  }
  return names;
}

// True when `line` holds the entry of a GPU-fact table: an opening brace or parenthesis, a
// quoted GPU name (canonical or alias, any case), then a numeric literal outside quotes before
// the entry closes. Flags {"K80", 12}, Row("V100", "fp16", 125, 300) and
// {"a100", "A100-80G", 80 * kGiB}; leaves lists of names ({"G2", "T4"}), names inside longer
// strings ("8x A100 40GB") and comment lines (examples of a config format) alone.
bool LooksLikeFactEntry(std::string_view line, const std::vector<std::string>& names) {
  const std::size_t first = line.find_first_not_of(" \t");
  if (first != std::string_view::npos && line.substr(first).starts_with("//")) return false;
  for (std::size_t open = 0; open < line.size(); ++open) {
    if (line[open] != '{' && line[open] != '(') continue;
    std::size_t i = open + 1;
    while (i < line.size() && line[i] == ' ') ++i;
    if (i >= line.size() || line[i] != '"') continue;
    const std::size_t close_quote = line.find('"', i + 1);
    if (close_quote == std::string_view::npos) return false;
    const std::string quoted = Upper(line.substr(i + 1, close_quote - i - 1));
    if (std::find(names.begin(), names.end(), quoted) == names.end()) continue;
    bool in_string = false;
    for (std::size_t k = close_quote + 1; k < line.size(); ++k) {
      const char c = line[k];
      if (c == '"' && line[k - 1] != '\\') in_string = !in_string;
      if (in_string) continue;
      if (c == '}' || c == ')') break;
      if (std::isdigit(static_cast<unsigned char>(c)) != 0 && !IsWordChar(line[k - 1])) return true;
    }
  }
  return false;
}

TEST(GpuTableLintTest, DetectorFlagsFactEntriesOnly) {
  const auto names = GpuNames();
  EXPECT_TRUE(LooksLikeFactEntry(R"(      {"K80", 12},   {"2080Ti", 11},)", names));
  EXPECT_TRUE(LooksLikeFactEntry(R"(Row("V100", "fp16", 125, 300),)", names));
  EXPECT_TRUE(LooksLikeFactEntry(R"({"a100", "A100-80G", 80 * kGiB, 2.039e12},)", names));
  EXPECT_TRUE(LooksLikeFactEntry(R"(  { "h100" , 989 })", names));
  EXPECT_TRUE(LooksLikeFactEntry(R"({"prices", {{"V100", 2.85}}})", names));
  EXPECT_FALSE(LooksLikeFactEntry(R"(std::vector<std::string> types{"G2", "T4", "P100"};)", names));
  EXPECT_FALSE(LooksLikeFactEntry(R"({"p4d.24xlarge", "8x A100 40GB", 235, 32.77},)", names));
  EXPECT_FALSE(LooksLikeFactEntry(R"(ParseGpuModel("V100M32"))", names));
  EXPECT_FALSE(LooksLikeFactEntry(R"(add_spot("V100", {"aws_v100_8.json"}, 8))", names));
  EXPECT_FALSE(LooksLikeFactEntry(R"(Find("K80", kLimit))", names));
  EXPECT_FALSE(LooksLikeFactEntry(R"(  //   "prices": {"H100": 2.99})", names));
}

TEST(GpuTableLintTest, NoGpuFactTableOutsideTheCatalog) {
  namespace fs = std::filesystem;
  const fs::path root(SEEDANCE_SOURCE_DIR);
  const fs::path catalog = root / "src/seedance/gpu/catalog.cc";
  const auto names = GpuNames();
  std::vector<std::string> hits;
  std::size_t files = 0;
  for (const char* dir : {"src", "apps"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      if (!entry.is_regular_file()) continue;
      const fs::path& p = entry.path();
      const std::string name = p.filename().string();
      if (p.extension() != ".cc" && p.extension() != ".h") continue;
      // Tests may spell facts out (they check the catalog); the catalog itself is the table.
      if (name.ends_with("_test.cc") || fs::equivalent(p, catalog)) continue;
      ++files;
      std::ifstream in(p);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        if (LooksLikeFactEntry(line, names)) {
          hits.push_back(fs::relative(p, root).string() + ":" + std::to_string(n) + ": " + line);
        }
      }
    }
  }
  EXPECT_GT(files, 100u) << "scanned too few files under " << root;
  std::string report;
  for (const auto& h : hits) report += "\n  " + h;
  EXPECT_TRUE(hits.empty())
      << "GPU facts belong in src/seedance/gpu/catalog.cc (read them with gpu::Catalog(); prices "
         "in data/prices/gpu_prices.csv). Tables found:"
      << report;
}

}  // namespace
}  // namespace seedance::gpu
