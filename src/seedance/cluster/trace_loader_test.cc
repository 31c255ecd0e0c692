#include "seedance/cluster/trace_loader.h"

#include <gtest/gtest.h>

namespace seedance::cluster {
namespace {

const char kHeader[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\n";

Result<std::vector<PodSpec>> Pods(const std::string& rows) {
  auto t = CsvTable::Parse("pods.csv", std::string(kHeader) + rows);
  if (!t.has_value()) return t.error();
  return ParsePods(*t);
}

TEST(TraceLoaderTest, LoadsTheBundledDefaultTrace) {
  auto nodes = LoadNodes(std::string(SEEDANCE_TEST_DATA_DIR) + "/openb/openb_node_list_gpu_node.csv");
  ASSERT_TRUE(nodes.has_value()) << nodes.error().ToString();
  EXPECT_EQ(nodes->size(), 1213u);
  int gpus = 0;
  for (const auto& n : *nodes) gpus += n.gpu_count;
  EXPECT_EQ(gpus, 6212);
  auto pods = LoadPods(std::string(SEEDANCE_TEST_DATA_DIR) + "/openb/openb_pod_list_default.csv");
  ASSERT_TRUE(pods.has_value()) << pods.error().ToString();
  EXPECT_EQ(pods->size(), 8152u);
  std::int64_t milli = 0;
  for (const auto& p : *pods) milli += p.total_gpu_milli();
  EXPECT_EQ(milli, 6086800);
}

TEST(TraceLoaderTest, ParsesAGoodRow) {
  auto p = Pods("a,6000,12288,1,460,V100M16|V100M32,LS\n");
  ASSERT_TRUE(p.has_value()) << p.error().ToString();
  EXPECT_EQ((*p)[0].gpu_milli, 460);
  EXPECT_TRUE((*p)[0].is_share());
  EXPECT_EQ((*p)[0].qos, Qos::kLatencySensitive);
}

struct BadRow {
  std::string row;
  std::string expected;  // substring of the error
};

void PrintTo(const BadRow& r, std::ostream* os) { *os << r.expected; }

class TraceLoaderBadInputTest : public ::testing::TestWithParam<BadRow> {};

TEST_P(TraceLoaderBadInputTest, NamesFileLineColumnAndField) {
  auto p = Pods(GetParam().row);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.error().message().find(GetParam().expected), std::string::npos)
      << p.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Rows, TraceLoaderBadInputTest,
    ::testing::Values(
        BadRow{"a,x,1,1,100,,LS\n", "pods.csv:2:3: field 'cpu_milli': expected an integer"},
        BadRow{"a,-5,1,1,100,,LS\n", "pods.csv:2:3: field 'cpu_milli': must be >= 0"},
        BadRow{"a,1,1,1,0,,LS\n", "pods.csv:2:9: field 'gpu_milli': must be in 1..1000"},
        BadRow{"a,1,1,1,1001,,LS\n", "field 'gpu_milli': must be in 1..1000"},
        BadRow{"a,1,1,9,1000,,LS\n", "pods.csv:2:7: field 'num_gpu': must be in 0..8"},
        BadRow{"a,1,1,1,100,Z80,LS\n", "field 'gpu_spec': unknown GPU model 'Z80'"},
        BadRow{"a,1,1,1,100,,XX\n", "field 'qos': unknown QoS"},
        BadRow{"a,1,1,1,100,,LS\na,1,1,1,100,,LS\n", "pods.csv:3:1: field 'name': duplicate"},
        BadRow{"a,1,1\n", "pods.csv:2: expected 7 fields, got 3"},
        BadRow{"", "pods.csv: no pods"}));

TEST(TraceLoaderTest, MissingColumnAndEmptyFile) {
  auto t = CsvTable::Parse("pods.csv", "name,cpu_milli,memory_mib,num_gpu\na,1,1,0\n");
  ASSERT_TRUE(t.has_value());
  auto p = ParsePods(*t);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().message(), "pods.csv:1: missing column 'gpu_milli'");
  EXPECT_FALSE(CsvTable::Parse("pods.csv", "").has_value());
}

TEST(TraceLoaderTest, NodeErrors) {
  auto parse = [](const std::string& rows) {
    auto t = CsvTable::Parse("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\n" + rows);
    return ParseNodes(*t);
  };
  EXPECT_TRUE(parse("n0,1000,1024,2,T4\nn1,1000,1024,0,\n").has_value());
  auto unknown = parse("n0,1000,1024,2,Q1\n");
  ASSERT_FALSE(unknown.has_value());
  EXPECT_NE(unknown.error().message().find("nodes.csv:2:16: field 'model': unknown GPU model"),
            std::string::npos)
      << unknown.error().message();
  EXPECT_FALSE(parse("n0,1000,1024,2,\n").has_value());
  EXPECT_FALSE(parse("n0,1000,1024,17,T4\n").has_value());
}

}  // namespace
}  // namespace seedance::cluster
