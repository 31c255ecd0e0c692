// Runs the upstream parser suites' cases (tests/data/conformance/manifest.tsv, see SOURCE.md
// there) through ExpositionParser: an accepted case must parse with zero rejections and the
// expected sample count, a rejected one with at least one rejection. Cases where Seedance
// deliberately follows another suite are listed in deviations.tsv with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "seedance/telemetry/parse.h"

namespace seedance::telemetry {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(SEEDANCE_SOURCE_DIR) / "tests" / "data" / "conformance";

struct Case {
  std::string origin;
  std::string name;
  InputFormat format = InputFormat::kPrometheus;
  bool accept = false;
  std::uint64_t samples = 0;
  std::string file;
};

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string field;
  while (std::getline(ss, field, '\t')) out.push_back(field);
  return out;
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// case name -> reason, from deviations.tsv ("case<TAB>reason").
std::map<std::string, std::string> LoadDeviations() {
  std::map<std::string, std::string> out;
  std::ifstream in(kDir / "deviations.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto f = SplitTabs(line);
    if (f.size() >= 2) out[f[0]] = f[1];
  }
  return out;
}

std::vector<Case> LoadCases() {
  std::vector<Case> out;
  std::ifstream in(kDir / "manifest.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto f = SplitTabs(line);
    if (f.size() != 6) {
      ADD_FAILURE() << "bad manifest line: " << line;
      continue;
    }
    Case c;
    c.origin = f[0];
    c.name = f[1];
    c.format = *ParseInputFormat(f[2]);
    c.accept = f[3] == "accept";
    c.samples = c.accept ? std::stoull(f[4]) : 0;
    c.file = f[5];
    out.push_back(std::move(c));
  }
  return out;
}

TEST(ConformanceTest, UpstreamSuites) {
  const auto cases = LoadCases();
  const auto deviations = LoadDeviations();
  ASSERT_GT(cases.size(), 300u);
  // [format][expect accept] -> {passed, total}
  std::map<std::pair<std::string, bool>, std::pair<int, int>> tally;
  std::size_t deviations_used = 0;
  for (const Case& c : cases) {
    std::string text = ReadAll(kDir / c.file);
    CollectingSink sink;
    ParseStats stats;
    ParseOptions opt;
    opt.source = c.name;
    ParseText(c.format, text, opt, sink, stats);
    bool accepted = stats.rejected == 0;
    auto dev = deviations.find(c.name);
    bool expect = c.accept;
    if (dev != deviations.end()) {
      expect = !expect;
      ++deviations_used;
    }
    bool ok = accepted == expect && (!expect || dev != deviations.end() || stats.samples == c.samples);
    auto& t = tally[{c.origin.substr(0, c.origin.find('@')) + " (" +
                         std::string(InputFormatName(c.format)) + ")",
                     c.accept}];
    ++t.second;
    if (accepted == c.accept && (!c.accept || stats.samples == c.samples)) ++t.first;
    std::string why = stats.rejections.empty() ? std::string("no rejection")
                                               : stats.rejections.front().ToString();
    EXPECT_TRUE(ok) << c.origin << " " << c.name << ": upstream " << (c.accept ? "accepts" : "rejects")
                    << (dev != deviations.end() ? " (deviation: " + dev->second + ")" : "")
                    << ", we " << (accepted ? "accept" : "reject") << " with " << stats.samples
                    << " samples (expected " << c.samples << "); " << why;
  }
  EXPECT_EQ(deviations_used, deviations.size()) << "deviations.tsv names a case not in the manifest";
  for (const auto& [key, t] : tally) {
    std::printf("conformance %s %s: %d/%d as upstream\n", key.first.c_str(),
                key.second ? "valid accepted" : "invalid rejected", t.first, t.second);
  }
}

}  // namespace
}  // namespace seedance::telemetry
